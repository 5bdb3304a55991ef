/*
 * run_stats.c — statistics of this backend's last ranking run, shown by powerrank_last_run().
 */
#include "powerrank.h"

#include <math.h>

#include "funcapi.h"
#include "utils/builtins.h"

#include "cache/graph_cache.h"
#include "functions/run_stats.h"

PG_FUNCTION_INFO_V1(powerrank_last_run);

static RankRunStats last_run;
static bool last_run_valid = false;

/* Remembers the statistics of a finished run (replacing the previous ones). */
void
run_stats_record(const RankRunStats *stats)
{
	last_run = *stats;
	last_run_valid = true;
}

/* Copies the statistics of this backend's last run into stats; false before the first run. */
bool
run_stats_last(RankRunStats *stats)
{
	if (last_run_valid)
		*stats = last_run;
	return last_run_valid;
}

/*
 * powerrank_last_run(): one row describing this backend's last run, or no row before the first.
 */
Datum
powerrank_last_run(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	static const char *const warm_start_names[] = {"none", "explicit", "previous"};
	static const char *const graph_source_names[] = {"read", "cache", "delta", "rankgraph"};
	Datum		values[28];
	bool		nulls[28] = {0};

	InitMaterializedSRF(fcinfo, 0);
	if (!last_run_valid)
		return (Datum) 0;

	values[0] = CStringGetTextDatum(last_run.algorithm);
	values[1] = CStringGetTextDatum(last_run.engine);
	values[2] = Int64GetDatum(last_run.nodes);
	values[3] = Int64GetDatum(last_run.edges);
	values[4] = Int64GetDatum(last_run.skipped_rows);
	values[5] = Int32GetDatum(last_run.iterations);
	values[6] = Float8GetDatum(last_run.residual);
	values[7] = CStringGetTextDatum(pr_norm_name(last_run.norm));
	values[8] = BoolGetDatum(last_run.converged);
	values[9] = Float8GetDatum(last_run.build_ms);
	values[10] = Float8GetDatum(last_run.iterate_ms);
	values[11] = Float8GetDatum(last_run.total_ms);
	values[12] = BoolGetDatum(last_run.cache_hit);
	if (last_run.fallback[0] != '\0')
		values[13] = CStringGetTextDatum(last_run.fallback);
	else
		nulls[13] = true;
	values[14] = Float8GetDatum(last_run.read_ms);
	values[15] = Float8GetDatum(last_run.prepare_ms);
	values[16] = Int32GetDatum(last_run.batch_size);
	values[17] = CStringGetTextDatum(warm_start_names[last_run.warm_start]);
	if (last_run.residency[0] != '\0')
		values[18] = CStringGetTextDatum(last_run.residency);
	else
		nulls[18] = true;
	values[19] = Float8GetDatum(last_run.error_bound);
	nulls[19] = isnan(last_run.error_bound);
	values[20] = Int32GetDatum(last_run.mixed_steps);
	values[21] = BoolGetDatum(last_run.top_k_certified == PR_CERTIFIED_YES);
	nulls[21] = last_run.top_k_certified == PR_CERTIFIED_NOT_ASKED;
	values[22] = Int64GetDatum(last_run.top_k_ties);
	nulls[22] = last_run.top_k_certified == PR_CERTIFIED_NOT_ASKED;
	values[23] = CStringGetTextDatum(graph_source_names[last_run.graph_source]);
	values[24] = Int64GetDatum(last_run.delta_rows);
	nulls[24] = last_run.graph_source != GRAPH_SOURCE_DELTA;
	if (last_run.exchange_bytes >= 0)
	{
		values[25] = Int64GetDatum(last_run.exchange_bytes);
		values[26] = Float8GetDatum(last_run.exchange_ms);
	}
	else
		nulls[25] = nulls[26] = true;
	values[27] = Int64GetDatum(last_run.peer_bytes);
	nulls[27] = last_run.peer_bytes < 0;
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	return (Datum) 0;
}
