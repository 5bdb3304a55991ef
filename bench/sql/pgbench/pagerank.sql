-- global ranking, top 100 (device_run.sh replaces @TABLE@)
SELECT * FROM pagerank('@TABLE@', top_k => 100);
