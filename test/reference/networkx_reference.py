#!/usr/bin/python3
"""NetworkX reference results for powerrank's agreement test (sql/networkx.sql).

Reads the real graphs of test/data, ranks them with Debian's NetworkX (double precision)
and writes one TSV per result into --out:

  <graph>_<result>.tsv     node<TAB>value            (pagerank, ppr, rwr, weighted, default)
  <graph>_hits.tsv         node<TAB>hub<TAB>authority
  <graph>_default_top10.tsv  rank<TAB>node          (nx.pagerank with its default settings)

The parameters (personalization nodes, RWR source, the weighted variant's weight rule) are fixed
here and in sql/networkx.sql; change both together.  Run with /usr/bin/python3.
"""
import argparse
import warnings
import gzip
import os
import sys
import time

import networkx as nx

ALPHA = 0.85
# NetworkX stops when sum |x' - x| < N * tol; ask for a residual of about 1e-13.
TIGHT_L1 = 1e-13
PERSONALIZATION = [1, 100, 1000, 5000, 20000]
RWR_SOURCE = 1


def read_edges(path):
    """The (src, dst) rows of a gzip'd TSV edge list."""
    edges = []
    with gzip.open(path, "rt") as f:
        for line in f:
            a, b = line.split()
            edges.append((int(a), int(b)))
    return edges


def weight_of(src, dst):
    """The weighted variant's weight, as sql/networkx.sql computes it."""
    return float((src + dst) % 5 + 1)


def write_scores(out_dir, name, scores):
    """node<TAB>score lines, nodes ascending, full double precision."""
    with open(os.path.join(out_dir, name + ".tsv"), "w") as f:
        for node in sorted(scores):
            f.write("%d\t%r\n" % (node, float(scores[node])))


def tight_pagerank(g, **kwargs):
    """nx.pagerank run to an L1 residual of about TIGHT_L1."""
    return nx.pagerank(g, alpha=ALPHA, tol=TIGHT_L1 / g.number_of_nodes(), max_iter=100000,
                       **kwargs)


def reference(out_dir, label, g, weighted_g):
    """Every result for one graph."""
    t = time.time()
    for node in PERSONALIZATION + [RWR_SOURCE]:
        if node not in g:
            sys.exit("node %d is not in %s" % (node, label))
    write_scores(out_dir, label + "_pagerank", tight_pagerank(g))
    write_scores(out_dir, label + "_ppr",
                 tight_pagerank(g, personalization={n: 1.0 for n in PERSONALIZATION}))
    write_scores(out_dir, label + "_rwr", tight_pagerank(g, personalization={RWR_SOURCE: 1.0}))
    write_scores(out_dir, label + "_weighted", tight_pagerank(weighted_g, weight="weight"))
    default = nx.pagerank(g)
    top10 = sorted(default, key=lambda n: (-default[n], n))[:10]
    with open(os.path.join(out_dir, label + "_default_top10.tsv"), "w") as f:
        for rank, node in enumerate(top10, 1):
            f.write("%d\t%d\n" % (rank, node))
    hubs, authorities = nx.hits(g, max_iter=100000, tol=0)
    with open(os.path.join(out_dir, label + "_hits.tsv"), "w") as f:
        for node in sorted(hubs):
            f.write("%d\t%r\t%r\n" % (node, hubs[node], authorities[node]))
    print("%s: %d nodes, %d edges, %.1f s" % (label, g.number_of_nodes(), g.number_of_edges(),
                                             time.time() - t))


def build(edges, directed, weighted):
    """A DiGraph (or Graph) of the rows; the data sets have no duplicate rows."""
    g = nx.DiGraph() if directed else nx.Graph()
    if weighted:
        g.add_weighted_edges_from((a, b, weight_of(a, b)) for a, b in edges)
    else:
        g.add_edges_from(edges)
    return g


def main():
    warnings.simplefilter("ignore", FutureWarning)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="directory of the .tsv.gz graphs")
    parser.add_argument("--out", required=True, help="directory for the results")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for label, file, directed in (("slashdot", "soc-slashdot0902.tsv.gz", True),
                                  ("enron", "email-enron.tsv.gz", False)):
        edges = read_edges(os.path.join(args.data, file))
        reference(args.out, label, build(edges, directed, False), build(edges, directed, True))


if __name__ == "__main__":
    main()
