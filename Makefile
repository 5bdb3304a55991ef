# powerrank — PGXS build of the PostgreSQL extension.
#
#   make                 build powerrank.so (-Wall -Wextra -Werror)
#   make install         install it into the PostgreSQL found by $(PG_CONFIG)
#   make installcheck    NetworkX reference data, then pg_regress in a temporary instance
#                        (pg_cron and powerrank preloaded), then the isolation tests (two
#                        sessions, specs/) in another one (run as a non-root user: initdb
#                        refuses root)
#   make check-core      C unit tests of the pure-C core (test/core) and of the GPU planners
#                        (test/plan); no GPU needed
#   make cuda            the GPU engine library (cuda/), where nvcc and cuda/Makefile exist;
#                        `make install` then also installs it as $libdir/powerrank_gpu.so, the
#                        library the GPU service loads (powerrank.gpu_library), and, when
#                        nccl.h was found, cuda/build/libpowerrank_multi.so as
#                        $libdir/powerrank_multi.so (powerrank.gpu_multi_library: several
#                        GPUs), with the link libpowerrank_gpu.so -> powerrank_gpu.so it loads
#   make reference       only the NetworkX reference data (test/reference/out)

EXTENSION = powerrank
# The version is written once, as default_version in powerrank.control.
EXTVERSION = $(shell sed -n "s/^default_version *= *'\\([^']*\\)'.*/\\1/p" $(EXTENSION).control)

MODULE_big = powerrank
# The backend links the PostgreSQL glue (src/ and its folders) and the pure-C core (core/); the GPU
# side (cuda/: planners, kernels, engines) is built into the libraries the GPU service loads.
OBJS = $(patsubst %.c,%.o,$(wildcard src/*.c src/*/*.c core/*.c))
# The shard-to-shard exchange of a distributed run (Gloo, C++ behind a pure-C header).
OBJS += src/distributed/peer_exchange.o

# sql/powerrank.sql (hand-edited) is installed as the current version's script; the scripts of
# released versions (sql/powerrank--X.sql, never edited again) and the upgrade scripts between them
# (sql/powerrank--X--Y.sql) are installed as they are.
DATA_built = sql/$(EXTENSION)--$(EXTVERSION).sql
DATA = $(filter-out $(DATA_built), $(wildcard sql/$(EXTENSION)--*.sql))

REGRESS = api basic bad_input arguments networkx_suite precision security aggregate stats cancel scan rwr_multi networkx cron cache cache_tracking cache_subscription service rankgraph_binary rankgraph_dump parallel_read huge_weights monitoring_roles planner_rows warm_start upgrade dump_restore estimate warm_start_auto service_streamed service_multi mixing cache_live service_live cache_delta
REGRESS_OPTS = --inputdir=. --temp-instance=./tmp_check --temp-config=test/regress.conf --load-extension=powerrank

# Isolation tests of the graph cache and the GPU service (specs/*.spec, expected/*.out).
ISOLATION = cache_dml cache_ddl cache_visibility cache_writers read_rewrite service_progress service_concurrent service_batch monitoring_progress progress_read cache_live_snapshots cache_live_base
ISOLATION_OPTS = --temp-instance=./tmp_check_iso \
	--temp-config=test/isolation.conf --load-extension=powerrank

EXTRA_CLEAN = test/reference/out tmp_check tmp_check_iso output_iso results regression.diffs regression.out

# The glue includes its folders' headers by folder (src), those of src/common by name, and sees
# the core and the GPU libraries' C interface (cuda/include).
PG_CPPFLAGS += -I$(srcdir)/src -I$(srcdir)/src/common -I$(srcdir)/core -I$(srcdir)/cuda/include
# -Wextra trips -Wunused-parameter in PostgreSQL's own headers (ilist.h, bufpage.h).
PG_CFLAGS += -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter
SHLIB_LINK += -lpthread -lm -ldl
# The coordinator of a distributed run (src/distributed) talks to the shard servers through libpq,
# the library in pg_config's --libdir ($(libdir), set by PGXS; libpq-fe.h below).
SHLIB_LINK += -L$(libdir) -lpq
# The shards exchange vectors with each other through Gloo's TCP transport (Debian: libgloo-dev),
# from C++ (src/distributed/peer_exchange.cpp), hence the C++ runtime.
PG_CXXFLAGS += -std=c++17 -Wall -Wextra -Werror
SHLIB_LINK += -lgloo -lstdc++

PYTHON = /usr/bin/python3
REFERENCE_OUT = test/reference/out
DATA_DIR ?= test/data

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# libpq-fe.h from pg_config's --includedir, searched after the server's headers.
override CPPFLAGS += -I$(includedir)

# PGXS tracks no header dependencies here: every object depends on every header of the tree
# (coarse, but a changed struct never leaves a stale object behind).
$(OBJS): $(wildcard src/*.h src/*/*.h core/*.h cuda/include/*.h cuda/plan/*.h)

# The current version's install script is a copy of the hand-edited one.
sql/$(EXTENSION)--$(EXTVERSION).sql: sql/$(EXTENSION).sql $(EXTENSION).control
	cp $< $@

# NetworkX results that the networkx regression test compares with.
$(REFERENCE_OUT)/done: test/reference/networkx_reference.py
	$(PYTHON) test/reference/networkx_reference.py --data $(DATA_DIR) --out $(REFERENCE_OUT)
	touch $@

reference: $(REFERENCE_OUT)/done

installcheck: reference

# The rankgraph_dump, upgrade and dump_restore tests run this server's pg_dump, pg_restore, psql
# (and dump_restore its initdb and pg_ctl, for a second cluster).
installcheck: export POWERRANK_BINDIR = $(bindir)

check-core:
	@for d in test/core test/plan; do \
		if [ -f $$d/Makefile ]; then $(MAKE) -C $$d || exit 1; \
		else echo "check-core: $$d has no Makefile, skipped"; fi; \
	done

# The GPU engine library and the multi-GPU library, when they were built (make cuda), go beside
# powerrank.so; the multi-GPU library finds the GPU library beside it by its build name
# (libpowerrank_gpu.so, a link to powerrank_gpu.so).
GPU_LIBRARY = cuda/build/libpowerrank_gpu.so
MULTI_LIBRARY = cuda/build/libpowerrank_multi.so

install: install-gpu

install-gpu:
	@if [ -f $(GPU_LIBRARY) ]; then \
		echo "installing $(GPU_LIBRARY) as $(DESTDIR)$(pkglibdir)/powerrank_gpu.so"; \
		$(INSTALL_SHLIB) $(GPU_LIBRARY) '$(DESTDIR)$(pkglibdir)/powerrank_gpu.so'; \
	else echo "install-gpu: $(GPU_LIBRARY) not built (make cuda), skipped"; fi
	@if [ -f $(MULTI_LIBRARY) ]; then \
		echo "installing $(MULTI_LIBRARY) as $(DESTDIR)$(pkglibdir)/powerrank_multi.so"; \
		$(INSTALL_SHLIB) $(MULTI_LIBRARY) '$(DESTDIR)$(pkglibdir)/powerrank_multi.so'; \
		ln -sf powerrank_gpu.so '$(DESTDIR)$(pkglibdir)/libpowerrank_gpu.so'; \
	else echo "install-gpu: $(MULTI_LIBRARY) not built (make cuda with nccl.h), skipped"; fi

uninstall: uninstall-gpu

uninstall-gpu:
	rm -f '$(DESTDIR)$(pkglibdir)/powerrank_gpu.so' '$(DESTDIR)$(pkglibdir)/powerrank_multi.so' \
		'$(DESTDIR)$(pkglibdir)/libpowerrank_gpu.so'

cuda:
	@if [ -f cuda/Makefile ]; then $(MAKE) -C cuda; \
	else echo "cuda: cuda/Makefile absent, skipped"; fi
	@if [ -f cuda/Makefile.multi ] && [ -f $${NCCL_HOME:-/usr/local/cuda}/include/nccl.h ]; then \
		$(MAKE) -C cuda -f Makefile.multi; \
	else echo "cuda: no nccl.h, the multi-GPU library is skipped"; fi

# The tests installcheck runs, one "pg_regress:NAME" / "isolation:NAME" per line (test/run_all.sh
# counts each).
print-tests:
	@for t in $(REGRESS); do echo "pg_regress:$$t"; done
	@for t in $(ISOLATION); do echo "isolation:$$t"; done

.PHONY: reference check-core cuda print-tests install-gpu uninstall-gpu
