"""NetworkX's scores for the huge_weights regression test (sql/huge_weights.sql).

The weights 1e308 make node 1's out-weight sum overflow in float arithmetic, and NetworkX itself then
treats node 1 as dangling.  Every ranking is unchanged when all weights are multiplied by one
constant, so the references are computed on the same rows with the weights scaled down.
Run with /usr/bin/python3 (NetworkX 2.8, NumPy, SciPy).
"""
import networkx as nx
from networkx.algorithms.link_analysis import hits_alg

ROWS = [(1, 2, 1.0), (2, 3, 2.0), (3, 1, 1.0), (1, 3, 1e308), (1, 4, 1e308)]


def graph(scale):
    g = nx.MultiDiGraph()
    for s, d, w in ROWS:
        g.add_edge(s, d, weight=w * scale)
    return g


def show(label, scores):
    print(label, " ".join("%d:%r" % (k, v) for k, v in sorted(scores.items())))


def pagerank(**kw):
    return nx.pagerank(graph(1e-10), alpha=0.85, tol=1e-15, max_iter=100000, weight="weight", **kw)


show("pagerank", pagerank())
show("ppr{2,4}", pagerank(personalization={2: 1.0, 4: 1.0}))
show("rwr(1)", pagerank(personalization={1: 1.0}))
simple = nx.DiGraph(graph(1e-300))
hubs, authorities = hits_alg._hits_python(simple, max_iter=100000, tol=1e-15)
show("hub", hubs)
show("authority", authorities)

# Two sources of 1e308 into node 5: its in-weight sum overflows (HITS's hub normalisation).
IN_ROWS = [(6, 5, 1e308), (7, 5, 1e308), (5, 6, 1.0)]
into = nx.DiGraph()
for s, d, w in IN_ROWS:
    into.add_edge(s, d, weight=w * 1e-300)
hubs, authorities = hits_alg._hits_python(into, max_iter=100000, tol=1e-15)
show("in hub", hubs)
show("in authority", authorities)
into_pr = nx.pagerank(into, alpha=0.85, tol=1e-15, max_iter=100000, weight="weight")
show("in pagerank", into_pr)

# Subnormal weights (5e-324 = 2^-1074): node 1's out-weight sum is subnormal and its reciprocal
# overflows; the build scales every weight up by one power of two.  NetworkX on the rows scaled by
# 2^60 (exact).
TINY_ROWS = [(1, 2, 5e-324), (1, 3, 1e-323), (2, 1, 1e-310), (3, 2, 1.0)]
tiny = nx.MultiDiGraph()
for s, d, w in TINY_ROWS:
    tiny.add_edge(s, d, weight=w * 2.0 ** 60)
show("tiny pagerank", nx.pagerank(tiny, alpha=0.85, tol=1e-15, max_iter=100000, weight="weight"))
show("tiny rwr(1)", nx.pagerank(tiny, alpha=0.85, tol=1e-15, max_iter=100000, weight="weight",
                                personalization={1: 1.0}))
