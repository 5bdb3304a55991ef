-- pgTAP: the functions run with the caller's rights: SELECT privilege checked before reading,
-- column privileges honoured, row-level security applied.
BEGIN;
SELECT plan(8);

CREATE ROLE pgtap_powerrank_reader;
CREATE TABLE open_edges(src bigint, dst bigint);
INSERT INTO open_edges VALUES (1, 2), (2, 1);
CREATE TABLE closed_edges(src bigint, dst bigint);
INSERT INTO closed_edges VALUES (1, 2), (2, 1);
CREATE TABLE column_edges(src bigint, dst bigint, w float8);
INSERT INTO column_edges VALUES (1, 2, 1), (2, 1, 1);
CREATE TABLE rls_edges(src bigint, dst bigint, visible boolean);
INSERT INTO rls_edges VALUES (1, 2, true), (2, 1, true), (2, 3, false), (3, 4, false);
ALTER TABLE rls_edges ENABLE ROW LEVEL SECURITY;
CREATE POLICY visible_rows ON rls_edges FOR SELECT USING (visible);
GRANT SELECT ON open_edges, rls_edges TO pgtap_powerrank_reader;
GRANT SELECT (src, dst) ON column_edges TO pgtap_powerrank_reader;
GRANT USAGE ON SCHEMA public TO pgtap_powerrank_reader;

SET ROLE pgtap_powerrank_reader;
SELECT lives_ok($$SELECT * FROM pagerank('open_edges')$$, 'granted table: works');
SELECT throws_ok($$SELECT * FROM pagerank('closed_edges')$$, '42501',
                 'permission denied for table closed_edges', 'no SELECT: permission denied');
SELECT throws_ok($$SELECT * FROM hits('closed_edges')$$, '42501',
                 'permission denied for table closed_edges', 'no SELECT: permission denied (hits)');
SELECT lives_ok($$SELECT * FROM pagerank('column_edges')$$, 'column SELECT on src, dst: works');
SELECT throws_ok($$SELECT * FROM pagerank('column_edges', weight_column => 'w')$$, '42501',
                 'permission denied for table column_edges', 'no SELECT on the weight column');
SELECT results_eq($$SELECT node, round(score::numeric, 9) FROM pagerank('rls_edges')$$,
                  $$VALUES (1::bigint, 0.5::numeric), (2, 0.5)$$,
                  'row-level security: only the visible 2-cycle counts');
SELECT is((SELECT nodes FROM powerrank_last_run()), 2::bigint, 'RLS: 2 visible nodes');
RESET ROLE;
SELECT is((SELECT count(*) FROM pagerank('rls_edges')), 4::bigint, 'the owner sees all 4 nodes');

SELECT * FROM finish();
ROLLBACK;
