#!/bin/bash
# bench/sql/multi.sh — one GPU against G GPUs through SQL, checked: the GPU service with
# powerrank.gpu_devices = 1 and = G (the GPUs CUDA_VISIBLE_DEVICES names, else every GPU nvidia-smi
# lists; G >= 2), on each graph of GRAPHS and each kind of run on a cached graph (PageRank, RWR from
# 8 sources = PageRank with 8 columns, HITS); and a graph larger than one GPU (powerrank.gpu_memory
# capped below its one-GPU size): streamed on one GPU against resident on G.
#
#   [PG_CONFIG=/path/to/bin/pg_config] [GRAPHS="22 local:22:16:0.9:64 bip:22"] [PRECISION=fp32] bench/sql/multi.sh [PHASE ...]
#
# PHASE: runs, larger, checks (default all three; they run in that order whatever the order named).
# build, server and load always run (load: the graphs the phases named need).
#
# 1. build   the extension, the GPU library (make -C cuda) and the multi-GPU library (cuda/Makefile.multi,
#            NCCL found by bench/multi/nccl_env.sh), installed; a throwaway cluster with the service
#            (service_engine gpu, gpu_precision PRECISION, gpu_devices 0 = every GPU, warm_start and
#            warm_start_auto off: every run starts at 1/N, so 1 and G GPUs run the same iterations and
#            the G-GPU rows match the CPU engine's); the service's device must read "G x NAME"
# 2. load    each graph of GRAPHS (runs; checks: the first), and LARGER_GRAPH (larger), an R-MAT scale
#            or a graph_gen.h name, into its own table (load_edges: parallel binary COPY, cached)
# 3. runs    for each table and each of
#              pagerank(t, top_k => 100), rwr(t, sources => 8 existing sources, top_k => 10),
#              hits(t, top_k => 100)
#            a. gpu_devices = 1 (reload): warm-up calls until the engine's name stops changing (plain
#               PageRank's first calls run on the quick layout while the tuned one is planned), then
#               5 timed calls: median ms and iterate_ms, iterations, engine; none may run on G GPUs
#            b. gpu_devices = G (reload): calls until two have run on G GPUs (the exploratory calls: their
#               time per iteration is the G-GPU speed), then 5 timed calls (the steady state after the
#               service's measured choice: median ms, the engines seen)
#            c. the exploratory call's rows against device => 'cpu': the same top-k nodes in the same
#               order (a swap of two nodes whose CPU scores are within the tolerance counts as the same
#               order), max |score diff| <= 1e-9 (fp64) / 1e-5 (fp32) of the top score; HITS: authority
#               and hub
#            d. a and b again, ROUNDS times in all (a reload restarts the engine process: every round
#               starts from nothing, as after a server restart), so that a drift of the machine between
#               the two settings does not pass for a difference between them
#            e. RESULT: ms per iteration on 1 and on G GPUs (iterate_ms less prepare_ms, over the
#               iterations) and their ratio, the speedup; steady-state call ms with G GPUs allowed
#               against 1 (each the median over the rounds of a round's median of 5) and their ratio
#               (the "never slower" goal: <= 1.02); the engine the steady state chose, which must be
#               the faster one where the two differ by over 10 % (on GPUs only)
# 4. larger  on LARGER_GRAPH's table, for pagerank(t, top_k => 100) and rwr(t, 8 sources, top_k => 10),
#            each with its own cap (RWR's 8 columns of vectors make its part on G GPUs larger than
#            PageRank's whole graph on one):
#            a. the cap: powerrank_estimate(t, device => 'gpu') with gpu_devices = G gives the one-GPU
#               engine's resident need without a cap, then (powerrank.gpu_memory the largest whole MB
#               below it, reload) one part's on G GPUs, where it must predict gpu-multi(G), resident;
#               powerrank.gpu_memory is then set midway between the two (whole MB, at least the part's):
#               one GPU must stream, each of G GPUs holds its part resident. FAIL when no whole MB does
#            b. under the cap the estimate predicts gpu-multi(G), resident (gpu_devices = G) and
#               streamed (gpu_devices = 1)
#            c. gpu_devices = 1 (reload): warm-up and 5 timed calls as in runs a; every timed call
#               streamed (powerrank_last_run().residency), none on G GPUs
#            d. gpu_devices = G (reload): calls until two have run on gpu-multi(G) as in runs b (the
#               service measures both sides, then releases the streamed one-GPU engine), the second
#               resident, its rows against device => 'cpu' as in runs c, then 5 timed calls: on GPUs
#               every one on gpu-multi(G), resident
#            e. RESULT: the cap, the two needs, ms per iteration streamed on one GPU and resident on G
#               (the timed calls on gpu-multi(G), else the exploratory ones) and their ratio; on GPUs
#               the goal: ratio >= LARGER_GOAL; then powerrank.gpu_memory reset, gpu_devices back to all
# 5. checks  the oscillating 3-node graph (damping 0.999999): 10 iterations, not converged, residual
#            ~2/3; statement_timeout stops the run with max_iterations 2e9 between iterations; the
#            engine process survives (restarts unchanged) and serves the next call
# 6. summary PASS / FAIL counts, and markdown tables (device, date, command) for doc/RESULTS.md at the
#            end of summary.txt; exit 1 on any FAIL, 2 when it cannot run (one GPU only, no PostgreSQL).
#
# Environment (besides bench/common/cluster.sh's PG_CONFIG, PGBIN, PGUSER_OS, PORT, TMPDIR, KEEP):
#   GRAPHS     the graphs, one table each ("22 local:22:16:0.9:64 bip:22"; no GPU "14 local:14:8:0.9:64
#              bip:14"): R-MAT scales as numbers, graph_gen.h names otherwise (load_edges)
#   LARGER_GRAPH  the larger phase's graph (the first of GRAPHS; no GPU 16: a cap is a whole MB, and
#              the smaller graphs' one-GPU and part needs may lie within one MB)
#   LARGER_GOAL   the larger phase's goal on GPUs: streamed ms/iteration over G-GPU ms/iteration (10)
#   PRECISION  powerrank.gpu_precision (fp32)
#   ROUNDS     rounds of one GPU then G GPUs on each table (2)
#   OUT        output folder (bench-out/multi: summary.txt, the logs, server_log_tail.txt)
#   NCCL_HOME  where nccl.h and libnccl are (found when unset); NCCL's own settings (NCCL_*) pass from
#              the environment to the server.
#
# Without a GPU (or NO_GPU=1): the service's cpu-test engine with powerrank.gpu_devices = 3, whose
# G-GPU runs are the CPU engine split in 3 parts (engine cpu-parts(3)), on small graphs; every
# statement, comparison and check runs — a check of the script, not a measurement. The cpu-test
# engine makes the GPU engine's residency choice under powerrank.gpu_memory (one engine streams under
# the cap; a run on the parts reports part 0's), but runs the CPU engine either way: larger checks the
# steady state's engine and the goal on GPUs only.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
ROOT=$PWD
OUT=${OUT:-$ROOT/bench-out/multi}
phases=()
for arg in "$@"; do
  case $arg in
    runs|larger|checks) phases+=("$arg") ;;
    *) echo "unknown phase '$arg' (runs larger checks)" >&2; exit 2 ;;
  esac
done
[ "${#phases[@]}" -gt 0 ] || phases=(runs larger checks)
. bench/common/phases.sh
. bench/common/cluster.sh
pg_init
GPUS=$(gpu_count)
PRECISION=${PRECISION:-fp32}
ROUNDS=${ROUNDS:-2}
passes=0; fails=0
pass() { passes=$((passes + 1)); note "PASS: $*"; }
failed() { fails=$((fails + 1)); note "FAIL: $*"; }
check() {  # condition-as-awk-expression message
  if awk "BEGIN {exit !($1)}"; then pass "$2"; else failed "$2"; fi
}
finish() {
  note "SUMMARY: $passes passed, $fails failed in $(( $(date +%s) - BENCH_START )) s (engine $ENGINE, G = $G, $PRECISION, graphs $GRAPHS); logs in $OUT"
  [ "$fails" = 0 ]
  exit $?
}

if [ "$GPUS" -gt 0 ]; then
  [ "$GPUS" -ge 2 ] || die "$GPUS GPU visible: one GPU against several needs two or more"
  . bench/multi/nccl_env.sh
  [ -n "$NCCL_HOME" ] || die "no nccl.h found: set NCCL_HOME to the folder holding include/nccl.h and lib/libnccl.so"
  ENGINE=gpu; G=$GPUS; DEVICES_ALL=0; SHBUF=16GB; CACHE=16GB
  GRAPHS=${GRAPHS:-"22 local:22:16:0.9:64 bip:22"}
  read -r first_graph _ <<< "$GRAPHS"
  LARGER_GRAPH=${LARGER_GRAPH:-$first_graph}
  multi_engine="gpu-multi($G)"
else
  ENGINE=cpu-test; G=3; DEVICES_ALL=3; SHBUF=256MB; CACHE=1GB
  GRAPHS=${GRAPHS:-"14 local:14:8:0.9:64 bip:14"}
  LARGER_GRAPH=${LARGER_GRAPH:-16}
  multi_engine="cpu-parts($G)"
fi
LARGER_GOAL=${LARGER_GOAL:-10}
case $PRECISION in fp64) TOL=1e-9 ;; fp32) TOL=1e-5 ;; *) die "PRECISION=$PRECISION: fp32 or fp64" ;; esac
PARTS=$(( $(nproc) < 16 ? $(nproc) : 16 ))
COMMAND="PRECISION=$PRECISION ROUNDS=$ROUNDS GRAPHS=\"$GRAPHS\"$(has larger && echo " LARGER_GRAPH=$LARGER_GRAPH") bench/sql/multi.sh ${phases[*]}"
note "== bench/sql/multi.sh on $(hostname), $(date -u +%FT%TZ): $(gpu_describe); $(nproc) cpus; $("$PG_CONFIG" --version); server as OS user $PGOS; engine $ENGINE, G = $G ($multi_engine), $PRECISION${NCCL_HOME:+; NCCL_HOME=$NCCL_HOME}"
[ "$GPUS" -gt 0 ] || note "no GPU: the service's cpu-test engine, G simulated by CPU parts — a check of the script, not a measurement"

# ---- 1. build, install, server ---------------------------------------------------------------------
t0=$(date +%s)
if [ "$GPUS" -gt 0 ]; then gpu_libs=1; else gpu_libs=0; fi
pg_build_install "$gpu_libs" "$gpu_libs" > "$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; failed "build (see $OUT/build.log)"; finish; }
note "build + install: $(( $(date +%s) - t0 )) s; $(grep -h '^installing' "$OUT/build.log" | tr '\n' ' ')"
settings="-c shared_preload_libraries=powerrank -c shared_buffers=$SHBUF -c powerrank.cache_size=$CACHE
  -c powerrank.service_engine=$ENGINE -c max_worker_processes=32 -c max_parallel_workers=16
  -c max_parallel_workers_per_gather=8 -c max_wal_size=16GB -c fsync=off -c synchronous_commit=off
  -c full_page_writes=off -c maintenance_work_mem=1GB -c max_connections=40"
shm_gb=$(df -BG --output=size /dev/shm 2> /dev/null | tail -1 | tr -dc 0-9)
if [ "$GPUS" -gt 0 ] && [ "${shm_gb:-0}" -lt 16 ]; then   # a small /dev/shm: cache segments as files
  settings="$settings -c dynamic_shared_memory_type=mmap"; note "/dev/shm ${shm_gb}G: mmap DSM"
fi
cluster_start "$settings" > "$OUT/server.log" 2>&1 || { cat "$OUT/server.log"; failed "server start"; finish; }
# precision and GPU count by ALTER SYSTEM, not on the command line (which would override reload_setting);
# every run starts at 1/N (no warm start), so that 1 and G GPUs run the same iterations and the G-GPU
# rows match the CPU engine's to the precision
sql -c "ALTER SYSTEM SET powerrank.gpu_precision = '$PRECISION'" -c "ALTER SYSTEM SET powerrank.gpu_devices = $DEVICES_ALL" \
    -c "ALTER SYSTEM SET powerrank.warm_start = off" -c "ALTER SYSTEM SET powerrank.warm_start_auto = off" \
    -c "SELECT pg_reload_conf()" > /dev/null
sql -c "CREATE EXTENSION powerrank"
sleep 1
wait_ready 600 || { failed "service ready: $(sql -c 'SELECT concat_ws(chr(32), state, last_error) FROM powerrank_service')"; finish; }
device=$(sql -c "SELECT device FROM powerrank_service")
note "service: $(sql -c "SELECT concat_ws(' | ', state, engine, device) FROM powerrank_service")"
if [ "$GPUS" -gt 0 ]; then
  case "$device" in "$G x "*) pass "service device is '$device'" ;; *) failed "service device '$device' is not '$G x NAME'" ;; esac
fi

# ---- 2. load ---------------------------------------------------------------------------------------
# the table of a graph: e_rmat22, e_local_22_16_0_9_64, ...
table_of() { case $1 in *:*) echo "e_$(echo "$1" | tr -c 'a-z0-9\n' '_')" ;; *) echo "e_rmat$1" ;; esac; }
# loads a graph into its table unless loaded already
declare -A loaded
load_graph() {  # graph
  local t
  t=$(table_of "$1")
  [ -z "${loaded[$t]:-}" ] || return 0
  load_edges "$1" "$t" "$PARTS" > "$OUT/load_$t.log" 2>&1 || { cat "$OUT/load_$t.log"; failed "load $1"; finish; }
  note "$(sed -n 's/^RESULT //p' "$OUT/load_$t.log")"
  loaded[$t]=1
}
tables=()
if has runs; then
  for graph in $GRAPHS; do load_graph "$graph"; tables+=("$(table_of "$graph"):$graph"); done
fi
has larger && load_graph "$LARGER_GRAPH"
read -r first_graph _ <<< "$GRAPHS"
has checks && load_graph "$first_graph"

# ---- 3. runs ---------------------------------------------------------------------------------------
KINDS="pagerank rwr hits"
# the call of a kind on a table, on a device, with its top_k (sources: rwr's, "1,2,..")
call_of() {  # kind table sources device top_k
  case $1 in
    pagerank) echo "pagerank('$2', top_k => $5, device => '$4')" ;;
    rwr) echo "rwr('$2', sources => ARRAY[$3]::bigint[], top_k => $5, device => '$4')" ;;
    hits) echo "hits('$2', top_k => $5, device => '$4')" ;;
  esac
}
# the top k of each kind (RWR: of each source) and the rows a call returns
top_of() { case $1 in rwr) echo 10 ;; *) echo 100 ;; esac; }
rows_of() { case $1 in rwr) echo 80 ;; *) echo 100 ;; esac; }
# a SELECT of a call's rows as (grp, node, score, ord, hub): grp the RWR source (else 0), ord the rank
# in grp, score PageRank / RWR score or HITS authority (the ranking), hub HITS's hub (else NULL)
rows_sql() {  # kind call
  case $1 in
    pagerank) echo "SELECT 0::bigint AS grp, node, score, ord, NULL::float8 AS hub FROM $2 WITH ORDINALITY AS r(node, score, ord)" ;;
    rwr) echo "SELECT source AS grp, node, score, row_number() OVER (PARTITION BY source ORDER BY ord) AS ord, NULL::float8 AS hub FROM $2 WITH ORDINALITY AS r(source, node, score, ord)" ;;
    hits) echo "SELECT 0::bigint AS grp, node, authority AS score, ord, hub FROM $2 WITH ORDINALITY AS r(node, hub, authority, ord)" ;;
  esac
}
# whether an engine name may be the quick layout's (plain PageRank's first calls on a large graph)
maybe_quick() { [ "$1" = pagerank ] && case $2 in gpu-binned*) true ;; *) false ;; esac; }
# the fields of timed_calls lines: 1 ms, 2 engine, 3 iterations, 5 iterate_ms, 10 prepare_ms, 11 residency
field_median() { awk -v f="$1" '{print $f}' | median; }
# ms per iteration of the iterations alone: (iterate_ms - prepare_ms) / iterations
per_iteration() { awk "BEGIN {printf \"%.4g\", ($1 - $2) / ($3 > 0 ? $3 : 1)}"; }
# a ratio of two numbers with 3 decimals
ratio_of() { awk "BEGIN {printf \"%.3f\", $1 / ($2 > 0 ? $2 : 1e-9)}"; }

# the log of the calls of runs and larger
RUNLOG=$OUT/runs.log
# 8 distinct sources of RWR on a table (existing nodes), "1,2,.."
sources_of() {  # table
  sql -c "SELECT string_agg(src::text, ',' ORDER BY src) FROM (SELECT src FROM (SELECT DISTINCT src FROM (SELECT src FROM $1 LIMIT 200000) s) d ORDER BY hashint8(src) LIMIT 8) x"
}

# a: warm-up calls of query $2 until the engine's name repeats (at most 6; 2 s between calls while it
# may be the quick layout's), then 5 timed calls; sets one_ms one_it one_iter one_per one_engines and
# one_warm (the timed calls' lines)
one_gpu_runs() {  # kind query
  local prev="" eng seen="" warm
  for _ in 1 2 3 4 5 6; do
    eng=$(timed_calls 1 "$2" | awk '{print $2}')
    seen="$seen $eng"
    if maybe_quick "$1" "$eng"; then sleep 2
    elif [ "$eng" = "$prev" ]; then break; fi
    prev=$eng
  done
  warm=$(timed_calls 5 "$2")
  { echo "  1 GPU, warm-up engines:$seen; timed (ms engine iterations build_ms iterate_ms total_ms cache_hit fallback read_ms prepare_ms residency):"
    echo "$warm" | sed 's/^/    /'; } >> "$RUNLOG"
  one_ms=$(echo "$warm" | field_median 1); one_iter=$(echo "$warm" | field_median 5)
  one_it=$(echo "$warm" | field_median 3)
  one_per=$(per_iteration "$one_iter" "$(echo "$warm" | field_median 10)" "$one_it")
  one_engines=$(echo "$warm" | awk '{print $2}' | sort -u | paste -sd,)
  one_warm=$warm
}

# b: calls of call $2 (rows kept in table mg_rows) until two have run on G GPUs (the service measures
# two calls on each side before it chooses; at most 14 calls; 2 s between calls while the engine may be
# the quick layout's); sets x_it x_per (the faster of the two, as the service keeps) x_res (the
# second's residency, - for none) x_seen; fails when fewer did
explore() {  # kind call
  local line eng it iter prep res per hits=0
  x_seen=""; x_per=""
  for _ in $(seq 14); do
    line=$(sql -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS mg_rows" -c "CREATE TABLE mg_rows AS $(rows_sql "$1" "$2")" \
               -c "SELECT concat_ws(' ', replace(engine, ' ', '_'), iterations, round(iterate_ms::numeric, 3), round(prepare_ms::numeric, 3), coalesce(residency, '-')) FROM powerrank_last_run()") \
      || { x_seen="$x_seen error"; return 1; }
    read -r eng it iter prep res <<< "$line"
    x_seen="$x_seen $eng"
    if [ "$eng" = "$multi_engine" ]; then
      hits=$((hits + 1)); x_it=$it; x_res=$res
      per=$(per_iteration "$iter" "$prep" "$it")
      if [ -z "$x_per" ] || awk "BEGIN {exit !($per < $x_per)}"; then x_per=$per; fi
      echo "  $G GPUs allowed, call $hits on $multi_engine: iterations $it, iterate_ms $iter, prepare_ms $prep, residency $res" >> "$RUNLOG"
      if [ "$hits" = 2 ]; then
        echo "  $G GPUs allowed, calls until the second on $multi_engine:$x_seen" >> "$RUNLOG"
        return 0
      fi
    fi
    if maybe_quick "$1" "$eng"; then sleep 2; fi
  done
  echo "  $G GPUs allowed, fewer than two calls on $multi_engine:$x_seen" >> "$RUNLOG"
  return 1
}

# c: mg_rows against ref_rows (the CPU's top 2k): "rows missing same_rank misordered max_rel hub_rel" —
# rows of mg_rows, those not in the CPU's rows, those at the CPU's rank, those whose CPU score differs
# from the CPU's score at their rank by more than TOL of the top score, the largest score difference
# over the top score, the largest hub difference over the largest hub (or the top score when larger:
# the hubs of a bipartite graph's items are 0)
compare_rows() {
  sql -F ' ' -c "WITH tops AS (SELECT grp, max(score) AS top, max(hub) AS hub_top FROM ref_rows GROUP BY grp),
      j AS (SELECT m.node, m.score, m.hub, c.score AS c_score, c.hub AS c_hub, r.node AS r_node, r.score AS r_score, t.top, t.hub_top
            FROM mg_rows m LEFT JOIN ref_rows c ON c.grp = m.grp AND c.node = m.node
            LEFT JOIN ref_rows r ON r.grp = m.grp AND r.ord = m.ord LEFT JOIN tops t ON t.grp = m.grp)
    SELECT count(*), count(*) FILTER (WHERE c_score IS NULL), count(*) FILTER (WHERE node = r_node),
           count(*) FILTER (WHERE c_score IS NULL OR r_score IS NULL OR abs(c_score - r_score) > $TOL * top),
           coalesce(max(abs(score - c_score) / top), 'NaN'), coalesce(max(abs(hub - c_hub) / greatest(hub_top, top)), 0)
    FROM j"
}
# c: the rows of mg_rows (a call of kind $1 on table $2 with sources $3 and top k $4) against the CPU
# engine's top 2k (ref_rows): a check named by $5; sets verdict (PASS or FAIL)
check_against_cpu() {  # kind table sources k name
  local kind=$1 k=$4 n_rows missing same_rank misordered max_rel hub_rel hub_note=""
  sql -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS ref_rows" \
      -c "CREATE TABLE ref_rows AS $(rows_sql "$kind" "$(call_of "$kind" "$2" "$3" cpu $((2 * k)))")" > /dev/null
  read -r n_rows missing same_rank misordered max_rel hub_rel <<< "$(compare_rows)"
  [ "$kind" = hits ] && hub_note=", hub $hub_rel"
  if [ "$n_rows" = "$(rows_of "$kind")" ] && [ "$missing" = 0 ] && [ "$misordered" = 0 ] \
     && awk "BEGIN {exit !($max_rel <= $TOL && $hub_rel <= $TOL)}"; then
    verdict=PASS
    pass "$5 against the CPU: $n_rows rows, all in the CPU's top, $same_rank at the CPU's rank, 0 out of order; max |diff| $max_rel of the top score$hub_note (<= $TOL)"
  else
    verdict=FAIL
    failed "$5 against the CPU: $n_rows rows (expected $(rows_of "$kind")), $missing not in the CPU's top $((2 * k)), $same_rank at the CPU's rank, $misordered out of order; max |diff| $max_rel of the top score$hub_note (<= $TOL)"
  fi
}

table_rows=()
never_slower=0; compared=0
for entry in "${tables[@]}"; do
  t=${entry%%:*}; graph=${entry#*:}
  sources=$(sources_of "$t")
  echo "== $t ($graph): rwr sources $sources" >> "$RUNLOG"
  if [ "$(echo "$sources" | tr ',' '\n' | grep -c .)" != 8 ]; then failed "$t: 8 distinct sources (got '$sources')"; continue; fi
  declare -A one_ms_of one_per_of one_it_of one_eng_of g_ms_of g_per_of g_eng_of chose_of x_per_of x_it_of verdict_of
  edges=""
  for round in $(seq "$ROUNDS"); do
    echo " round $round of $ROUNDS" >> "$RUNLOG"
    # a. one GPU
    reload_setting powerrank.gpu_devices 1
    for kind in $KINDS; do
      echo " $kind:" >> "$RUNLOG"
      one_gpu_runs "$kind" "SELECT * FROM $(call_of "$kind" "$t" "$sources" gpu "$(top_of "$kind")")"
      one_ms_of[$kind]="${one_ms_of[$kind]:-} $one_ms"; one_per_of[$kind]="${one_per_of[$kind]:-} $one_per"
      one_it_of[$kind]=$one_it; one_eng_of[$kind]=$one_engines
      case ",$one_engines," in
        *",$multi_engine,"*|,,) failed "$t $kind with gpu_devices = 1 (round $round): engines '$one_engines'" ;;
        *) pass "$t $kind with gpu_devices = 1 (round $round) runs on one GPU ($one_engines)" ;;
      esac
    done
    [ -n "$edges" ] || edges=$(sql -c "SELECT concat_ws(' ', nodes, edges) FROM powerrank_cache WHERE source = '$t'::regclass")
    # b, c. G GPUs allowed
    reload_setting powerrank.gpu_devices "$G"
    for kind in $KINDS; do
      k=$(top_of "$kind")
      echo " $kind with $G allowed:" >> "$RUNLOG"
      if ! explore "$kind" "$(call_of "$kind" "$t" "$sources" gpu "$k")"; then
        failed "$t $kind (round $round): no call ran on $multi_engine (engines:$x_seen)"
        verdict_of[$kind]="no $multi_engine call"
        continue
      fi
      x_per_of[$kind]="${x_per_of[$kind]:-} $x_per"; x_it_of[$kind]=$x_it
      if [ "$round" = 1 ]; then
        # c. the first round's exploratory call's rows against the CPU engine's top 2k
        check_against_cpu "$kind" "$t" "$sources" "$k" "$t $kind on $multi_engine"
        verdict_of[$kind]=$verdict
      fi
      # the steady state after the measured choice
      steady=$(timed_calls 5 "SELECT * FROM $(call_of "$kind" "$t" "$sources" gpu "$k")")
      echo "$steady" | sed 's/^/    steady: /' >> "$RUNLOG"
      g_ms_of[$kind]="${g_ms_of[$kind]:-} $(echo "$steady" | field_median 1)"
      g_per_of[$kind]="${g_per_of[$kind]:-} $(per_iteration "$(echo "$steady" | field_median 5)" "$(echo "$steady" | field_median 10)" "$(echo "$steady" | field_median 3)")"
      g_eng_of[$kind]=$(printf '%s\n' $(echo "${g_eng_of[$kind]:-}" | tr ',' ' ') $(echo "$steady" | awk '{print $2}') | sort -u | paste -sd,)
      chose_of[$kind]="${chose_of[$kind]:-} $(echo "$steady" | awk '{print $2}' | sort | uniq -c | sort -rn | awk 'NR == 1 {print $2}')"
    done
  done
  # e. the rounds' medians
  for kind in $KINDS; do
    one_per=$(echo ${one_per_of[$kind]} | tr ' ' '\n' | median); one_ms=$(echo ${one_ms_of[$kind]} | tr ' ' '\n' | median)
    if [ -z "${x_per_of[$kind]:-}" ]; then
      table_rows+=("| $graph | $kind | ${edges#* } | $one_per | — | — | $one_ms | — | — | — | ${verdict_of[$kind]:-} |")
      continue
    fi
    x_per=$(echo ${x_per_of[$kind]} | tr ' ' '\n' | median); x_it=${x_it_of[$kind]}
    g_ms=$(echo ${g_ms_of[$kind]} | tr ' ' '\n' | median); g_per=$(echo ${g_per_of[$kind]} | tr ' ' '\n' | median)
    g_engines=${g_eng_of[$kind]}
    chose=$(echo ${chose_of[$kind]} | tr ' ' '\n' | sort | uniq -c | sort -rn | awk 'NR == 1 {print $2}')
    speedup=$(ratio_of "$one_per" "$x_per")
    ratio=$(ratio_of "$g_ms" "$one_ms")
    compared=$((compared + 1))
    [ "$(goal "$ratio <= 1.02")" = MET ] && never_slower=$((never_slower + 1))
    note "RESULT $t $kind ($graph, ${edges#* } edges, $ROUNDS rounds): 1 GPU $one_per ms/iteration (${one_eng_of[$kind]}, ${one_it_of[$kind]} iterations; rounds:${one_per_of[$kind]}), $G GPUs $x_per ms/iteration (exploratory, $x_it iterations; rounds:${x_per_of[$kind]}): speedup $speedup; steady state $g_ms ms (rounds:${g_ms_of[$kind]}), $g_per ms/iteration with $G allowed (engines $g_engines) vs $one_ms ms with 1 (rounds:${one_ms_of[$kind]}): ratio $ratio — never slower (<= 1.02): $(goal "$ratio <= 1.02")"
    # the measured choice: the faster engine, where the two differ by more than 10 % (on GPUs: CPU
    # parts on a shared machine time too unevenly for a verdict)
    if [ "$GPUS" = 0 ]; then
      note "  $t $kind: the steady state chose $chose (no verdict on simulated parts)"
    elif [ "$(goal "$x_per < 0.9 * $one_per")" = MET ]; then
      if [ "$chose" = "$multi_engine" ]; then pass "$t $kind: the steady state runs on $multi_engine, the faster"
      else failed "$t $kind: the steady state runs on $chose, but $multi_engine was faster ($x_per vs $one_per ms/iteration)"; fi
    elif [ "$(goal "$one_per < 0.9 * $x_per")" = MET ]; then
      if [ "$chose" != "$multi_engine" ]; then pass "$t $kind: the steady state runs on one GPU ($chose), the faster"
      else failed "$t $kind: the steady state runs on $multi_engine, but one GPU was faster ($one_per vs $x_per ms/iteration)"; fi
    else
      note "  $t $kind: 1 and $G GPUs within 10 % a iteration: either choice is right (chose $chose)"
    fi
    table_rows+=("| $graph | $kind | ${edges#* } | $one_per | $x_per | $speedup | $one_ms | $g_ms | $ratio | $chose | ${verdict_of[$kind]:-} |")
  done
  unset one_ms_of one_per_of one_it_of one_eng_of g_ms_of g_per_of g_eng_of chose_of x_per_of x_it_of verdict_of
done

# ---- 4. larger than one GPU ------------------------------------------------------------------------
MIB=1048576
# powerrank_estimate of a kind's call on table $2 (rwr: from sources $3) with device => 'gpu':
# "engine residency gpu_bytes counts_from" (spaces in the engine's name as _, - for NULL)
estimate_of() {  # kind table sources
  local rwr_args=""
  [ "$1" = rwr ] && rwr_args=", algorithm => 'rwr', sources => ARRAY[$3]::bigint[]"
  sql -F ' ' -c "SELECT coalesce(replace(engine, ' ', '_'), '-'), coalesce(residency, '-'), coalesce(gpu_bytes, 0), counts_from
                 FROM powerrank_estimate('$2'$rwr_args, device => 'gpu')"
}
# bytes in MiB, 1 decimal
mib() { awk "BEGIN {printf \"%.1f\", $1 / $MIB}"; }
# a: the cap of a kind's run on table $2 (sources $3), with gpu_devices = G: the one-GPU engine's
# resident need without a cap (one_bytes), one part's on G GPUs under the largest whole MB below it
# (part_bytes: the estimate must predict the G GPUs there), then powerrank.gpu_memory = cap_mb,
# midway between the two (at least the part's); returns 1 with why when no whole MB does
larger_cap() {  # kind table sources
  local eng res from top
  cap_mb=""; one_bytes=""; part_bytes=""
  reset_settings powerrank.gpu_memory
  read -r eng res one_bytes from <<< "$(estimate_of "$@")"
  if [ "$res" != resident ] || [ "$from" != cache ]; then
    why="without a cap the estimate says $eng, residency $res, counts from $from (expected resident, from the cache)"; return 1
  fi
  top=$(awk "BEGIN {c = int($one_bytes / $MIB); if (c * $MIB >= $one_bytes) c--; print c}")
  if [ "$top" -lt 1 ]; then why="one GPU needs $(mib "$one_bytes") MiB resident: no whole MB below it"; return 1; fi
  reload_setting powerrank.gpu_memory "$top"
  read -r eng res part_bytes from <<< "$(estimate_of "$@")"
  if [ "$eng" != "$multi_engine" ] || [ "$res" != resident ]; then
    why="one GPU needs $(mib "$one_bytes") MiB resident; under $top MB the estimate says $eng, residency $res, $(mib "$part_bytes") MiB: no part on $G GPUs fits a whole MB below the one-GPU need"
    return 1
  fi
  cap_mb=$(awk "BEGIN {lo = int($part_bytes / $MIB); if (lo * $MIB < $part_bytes) lo++; mid = int(($part_bytes + $one_bytes) / 2 / $MIB); print (mid > lo ? mid : lo)}")
  [ "$cap_mb" = "$top" ] || reload_setting powerrank.gpu_memory "$cap_mb"
}
# the distinct values of field $1 of timed_calls lines on stdin, comma separated
field_set() { awk -v f="$1" '{print $f}' | sort -u | paste -sd,; }

larger_rows=()
if has larger; then
  RUNLOG=$OUT/larger.log
  t=$(table_of "$LARGER_GRAPH"); graph=$LARGER_GRAPH
  sources=$(sources_of "$t")
  echo "== $t ($graph): rwr sources $sources" >> "$RUNLOG"
  reload_setting powerrank.gpu_devices "$G"
  # the graph in the cache: the estimate's sizes exact
  sql -c "SELECT count(*) FROM pagerank('$t', top_k => 1, device => 'gpu')" > /dev/null
  edges=$(sql -c "SELECT concat_ws(' ', nodes, edges) FROM powerrank_cache WHERE source = '$t'::regclass")
  for kind in pagerank rwr; do
    k=$(top_of "$kind"); call=$(call_of "$kind" "$t" "$sources" gpu "$k")
    row="| $graph | $kind | ${edges#* }"
    echo " $kind:" >> "$RUNLOG"
    reload_setting powerrank.gpu_devices "$G"
    if ! larger_cap "$kind" "$t" "$sources"; then
      failed "$t $kind: no powerrank.gpu_memory streams one GPU and holds a part on $G GPUs resident: $why"
      larger_rows+=("$row | — | — | — | — | — | — | no cap |")
      continue
    fi
    cap_note="powerrank.gpu_memory = $cap_mb MB (one GPU needs $(mib "$one_bytes") MiB resident, a part on $G GPUs $(mib "$part_bytes") MiB)"
    echo "  $cap_note" >> "$RUNLOG"
    # b. the estimate under the cap, with G GPUs and with one
    read -r eng res bytes _ <<< "$(estimate_of "$kind" "$t" "$sources")"
    if [ "$eng" = "$multi_engine" ] && [ "$res" = resident ]; then pass "$t $kind under $cap_mb MB, $G GPUs: powerrank_estimate predicts $eng, $res, $(mib "$bytes") MiB"
    else failed "$t $kind under $cap_mb MB, $G GPUs: powerrank_estimate predicts $eng, $res (expected $multi_engine, resident)"; fi
    reload_setting powerrank.gpu_devices 1
    read -r eng res bytes _ <<< "$(estimate_of "$kind" "$t" "$sources")"
    if [ "$res" = streamed ] && [ "$eng" != "$multi_engine" ]; then pass "$t $kind under $cap_mb MB, 1 GPU: powerrank_estimate predicts $eng, $res, $(mib "$bytes") MiB"
    else failed "$t $kind under $cap_mb MB, 1 GPU: powerrank_estimate predicts $eng, $res (expected streamed)"; fi
    # c. one GPU: streamed
    one_gpu_runs "$kind" "SELECT * FROM $call"
    one_res=$(echo "$one_warm" | field_set 11)
    if [ "$one_res" = streamed ] && [ -n "$one_engines" ] && [[ ",$one_engines," != *",$multi_engine,"* ]]; then
      pass "$t $kind under $cap_mb MB with gpu_devices = 1: streamed ($one_engines), $one_per ms/iteration"
    else failed "$t $kind under $cap_mb MB with gpu_devices = 1: engines '$one_engines', residency '$one_res' (expected streamed on one GPU)"; fi
    # d. G GPUs: the measured choice, the answers, the steady state
    reload_setting powerrank.gpu_devices "$G"
    echo "  $G allowed:" >> "$RUNLOG"
    if ! explore "$kind" "$call"; then
      failed "$t $kind under $cap_mb MB: no call ran on $multi_engine (engines:$x_seen)"
      larger_rows+=("$row | $cap_mb | $(mib "$one_bytes") | $(mib "$part_bytes") | $one_per | — | — | no $multi_engine call |")
      continue
    fi
    check_against_cpu "$kind" "$t" "$sources" "$k" "$t $kind under $cap_mb MB on $multi_engine"
    steady=$(timed_calls 5 "SELECT * FROM $call")
    echo "$steady" | sed 's/^/    steady: /' >> "$RUNLOG"
    s_engines=$(echo "$steady" | field_set 2); s_res=$(echo "$steady" | field_set 11)
    on_multi=$(echo "$steady" | awk -v e="$multi_engine" '$2 == e')
    if [ -n "$on_multi" ]; then
      g_per=$(per_iteration "$(echo "$on_multi" | field_median 5)" "$(echo "$on_multi" | field_median 10)" "$(echo "$on_multi" | field_median 3)")
      g_from="steady state"
    else
      g_per=$x_per; g_from="exploratory calls"
    fi
    ratio=$(ratio_of "$one_per" "$g_per")
    if [ "$x_res" = resident ]; then pass "$t $kind under $cap_mb MB: the exploratory call on $multi_engine ran resident"
    else failed "$t $kind under $cap_mb MB: the exploratory call on $multi_engine ran '$x_res' (expected resident)"; fi
    if [ "$GPUS" -gt 0 ]; then
      if [ "$s_engines" = "$multi_engine" ] && [ "$s_res" = resident ]; then pass "$t $kind under $cap_mb MB: the steady state runs on $multi_engine, resident"
      else failed "$t $kind under $cap_mb MB: the steady state ran on '$s_engines', residency '$s_res' (expected $multi_engine, resident)"; fi
      check "$ratio >= $LARGER_GOAL" "$t $kind under $cap_mb MB: $G GPUs resident $g_per ms/iteration vs one GPU streamed $one_per: ${ratio}x (>= $LARGER_GOAL)"
      goal_note="goal >= $LARGER_GOAL: $(goal "$ratio >= $LARGER_GOAL")"
    else
      note "  $t $kind: the steady state ran on $s_engines ($s_res); no verdict on simulated parts"
      goal_note="no goal on simulated parts"
    fi
    note "RESULT larger $t $kind ($graph, ${edges#* } edges): $cap_note; 1 GPU streamed $one_per ms/iteration ($one_engines, $one_it iterations), $G GPUs $g_per ms/iteration ($g_from; exploratory $x_per, residency $x_res; steady engines $s_engines, $s_res): ratio $ratio — $goal_note"
    larger_rows+=("$row | $cap_mb | $(mib "$one_bytes") | $(mib "$part_bytes") | $one_per ($one_engines) | $g_per | $ratio | $verdict |")
  done
  reset_settings powerrank.gpu_memory
  reload_setting powerrank.gpu_devices "$DEVICES_ALL"
fi

# ---- 5. non-convergence, cancel, the engine process survives --------------------------------------
if has checks; then
  # PageRank with damping 0.999999 on a graph where it oscillates (1->2, 2->1, 3->1: the mass swings
  # between nodes 1 and 2, the L1 change ~2/3 shrinks by 1e-6 an iteration: ~4e7 plain iterations to
  # converge; plain, since the mixed iteration, powerrank.mixing_depth, solves this graph in a few steps)
  sql -c "CREATE TABLE cyc(src bigint, dst bigint)" -c "INSERT INTO cyc VALUES (1, 2), (2, 1), (3, 1)" \
      -c "SELECT powerrank_cache_enable('cyc')" > /dev/null
  osc=$(sql -c "SET powerrank.mixing_depth = 0" -c "SELECT count(*) FROM pagerank('cyc', damping => 0.999999, max_iterations => 10, device => 'gpu')" \
            -c "SELECT concat_ws(' ', replace(engine, ' ', '_'), iterations, converged, round(residual::numeric, 6)) FROM powerrank_last_run()" 2> /dev/null | tr '\n' ' ')
  read -r o_n o_engine o_iter o_conv o_res <<< "$osc"
  if [ "$o_n" = 3 ] && [ "$o_iter" = 10 ] && [ "$o_conv" = f ] && awk "BEGIN {exit !(${o_res:-0} > 0.666 && ${o_res:-0} < 0.667)}"; then
    pass "damping 0.999999 on the 3-node graph ($o_engine): 10 iterations, not converged, residual $o_res"
  else failed "damping 0.999999 on the 3-node graph: '$osc' (expected 3 rows, 10 iterations, f, residual ~2/3)"; fi
  restarts0=$(sql -c "SELECT restarts FROM powerrank_service")
  t0=$(date +%s.%N)
  cancel_out=$(sql -c "SET statement_timeout = '2s'" -c "SET powerrank.mixing_depth = 0" \
      -c "SELECT count(*) FROM pagerank('cyc', damping => 0.999999, max_iterations => 2000000000, device => 'gpu')" 2>&1)
  t1=$(date +%s.%N)
  secs=$(calc "$t1 - $t0")
  if echo "$cancel_out" | grep -q "statement timeout"; then check "$secs < 10" "statement_timeout stopped the run after $secs s"
  else failed "statement_timeout: '$cancel_out' after $secs s"; fi
  first=$(table_of "$first_graph")
  after=$(sql -c "SELECT count(*) FROM pagerank('$first', top_k => 100, device => 'gpu')" -c "SELECT replace(engine, ' ', '_') FROM powerrank_last_run()" | tr '\n' ' ')
  restarts1=$(sql -c "SELECT restarts FROM powerrank_service")
  if [ "$restarts1" = "$restarts0" ] && [ "${after%% *}" = 100 ]; then pass "after the cancel the same engine process serves ($after; restarts $restarts1)"
  else failed "after the cancel: '$after', restarts $restarts0 -> $restarts1"; fi
  grep -iE "multi-GPU|parts" "$PGLOG" | tail -5 | sed 's/^/log: /' | tee -a "$SUMMARY"
fi

# ---- 6. the tables for doc/RESULTS.md --------------------------------------------------------------
device_line="- Device: $( [ "$GPUS" -gt 0 ] && gpu_describe || echo "no GPU: cpu-test engine, $G simulated parts ($(nproc) cpus)"). Date: $(date -u +%F)."
if has runs; then
  note "never slower (steady state with $G allowed <= 1.02 x with 1): $never_slower of $compared"
  note ""
  note "### One GPU against $G through SQL ($PRECISION)"
  note ""
  note "$device_line"
  note "- Command: \`$COMMAND\`."
  note "- $ROUNDS rounds of one GPU then $G allowed (each after a reload, which restarts the engine process); every figure the median over the rounds. ms/it: (iterate_ms - prepare_ms) / iterations; 1 GPU: median of 5 warm calls with \`powerrank.gpu_devices = 1\`; $G GPUs: the faster of the two exploratory calls on $multi_engine. call ms: median of 5 warm calls (psql), with 1 and with $G GPUs allowed (after the measured choice). check: the first round's exploratory call's rows against \`device => 'cpu'\` (tolerance $TOL of the top score)."
  note ""
  note "| graph | run | edges | 1 GPU ms/it | $G GPUs ms/it | speedup | call ms, 1 | call ms, $G allowed | ratio | steady engine | check |"
  note "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |"
  for row in "${table_rows[@]}"; do note "$row"; done
  note ""
fi
if has larger; then
  note "### A graph larger than one GPU through SQL: streamed on one GPU against resident on $G ($PRECISION)"
  note ""
  note "$device_line"
  note "- Command: \`$COMMAND\`."
  note "- \`powerrank.gpu_memory\` (MB, a bound per GPU) set for each run between the one-GPU engine's resident need and one part's on $G GPUs (\`powerrank_estimate\`), so that one GPU streams and $G GPUs hold the graph resident. ms/it: (iterate_ms - prepare_ms) / iterations; 1 GPU: median of 5 warm calls with \`powerrank.gpu_devices = 1\` (streamed); $G GPUs: median of the 5 warm calls on $multi_engine after the measured choice (else the faster exploratory call). ratio: 1 GPU over $G GPUs ms/it$( [ "$GPUS" -gt 0 ] && echo " (goal >= $LARGER_GOAL)"). check: the exploratory call's rows against \`device => 'cpu'\` (tolerance $TOL of the top score)."
  note ""
  note "| graph | run | edges | gpu_memory MB | 1 GPU resident need MiB | part on $G GPUs MiB | 1 GPU ms/it, streamed (engine) | $G GPUs ms/it, resident | ratio | check |"
  note "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
  for row in "${larger_rows[@]}"; do note "$row"; done
  note ""
fi
finish
