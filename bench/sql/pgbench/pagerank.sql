-- global ranking, top 100 (bench/sql/run.sh replaces @TABLE@)
SELECT * FROM pagerank('@TABLE@', top_k => 100);
