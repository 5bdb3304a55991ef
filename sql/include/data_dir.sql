-- Where the test graphs are (the tests that read them include this): data_dir is
-- $POWERRANK_DATA_DIR when set, else test/data of the source tree.
\getenv abs_srcdir PG_ABS_SRCDIR
\getenv data_dir POWERRANK_DATA_DIR
\if :{?data_dir}
\else
\set data_dir :abs_srcdir '/test/data'
\endif
