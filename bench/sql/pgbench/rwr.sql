-- interactive RWR from a random existing source (bench/sql/run.sh replaces @TABLE@; -D nsrc=N)
\set i random(1, :nsrc)
SELECT * FROM rwr('@TABLE@', source => (SELECT node FROM bench_sources WHERE tbl = '@TABLE@' AND i = :i), top_k => 10);
