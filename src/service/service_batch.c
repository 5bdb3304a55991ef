/*
 * service_batch.c — batching of RWR requests in the GPU service's engine process.
 *
 * Interactive callers ask rwr(source => s, top_k => k) on one cached graph, many at once.  Each
 * such request is one column of personalized PageRank; the engine's product takes k columns in
 * one pass over the matrix (SpMM: a node's k values sit side by side, so one gathered row serves
 * every column), so answering queued requests together costs little more than answering one.
 *
 * A request may join a batch when it is a single-column personalized PageRank / RWR on a cached
 * graph (not the uniform restart: plain PageRank has the multi-GPU path and no reason to batch).
 * Requests batch together when they name the same cache entry and ask the same alpha, tolerance,
 * norm, iteration limit and the same kind of result (top_k or all scores; top_k may differ: the
 * run ranks max(top_k) and each request takes its prefix).  Every batch run has
 * powerrank.service_batch_size columns, so that the engine prepares the graph once for batches
 * of any size; the columns no request fills repeat the first request's restart.
 *
 * Waiting for company: after taking a request that may batch, the engine takes every compatible
 * queued request at once; when the previous batch had company (more than one request), it also
 * waits up to powerrank.service_batch_wait for more, until the batch is full.  A lone caller
 * therefore never waits, and concurrent callers, who resubmit right after their answers, meet.
 *
 * Semantics: the run stops when every column has met the tolerance (pr_driver.h), so a request
 * answered in a batch may run more iterations than alone: its answer is at least as accurate and
 * agrees with the lone answer within the tolerance.
 *
 * Runs in the engine process: no palloc, no elog (see service_engine.c).
 */
#include "service/service.h"

/* A quiet period that ends the wait of the 'gather' test fault, in seconds. */
#define GATHER_QUIET 0.2
/* Longest wait of the 'gather' test fault, in seconds. */
#define GATHER_LIMIT 10.0

/* Whether a request may be answered as one column of a batch. */
bool
batch_eligible(const ServiceRequest *req)
{
	return req->algorithm == SERVICE_PAGERANK && req->graph_cached && !req->restart_uniform &&
		req->k == 1 && req->restart_entries > 0;
}

/* Whether two eligible requests can share one run. */
static bool
batch_compatible(const ServiceRequest *a, const ServiceRequest *b)
{
	return a->graph_entry_id == b->graph_entry_id && a->graph_handle == b->graph_handle &&
		a->n_nodes == b->n_nodes && a->n_edges == b->n_edges && a->alpha == b->alpha &&
		a->tolerance == b->tolerance && a->norm == b->norm &&
		a->max_iterations == b->max_iterations && a->warm_start == b->warm_start &&
		(a->top_k > 0) == (b->top_k > 0);
}

/*
 * Takes (QUEUED -> RUNNING) queued requests compatible with the lead's, adding their slot
 * indexes to members (count so far in *n, at most max).  Checks the request before taking it and
 * again after (by its id: ids of a slot only grow), and puts back one that changed in between.
 */
static void
take_companions(int lead, int *members, int *n, int max)
{
	const ServiceRequest *want = &service->slots[lead].request;

	for (int i = 0; i < service->n_slots && *n < max; i++)
	{
		ServiceSlot *slot = &service->slots[i];
		uint32		expected = SLOT_QUEUED;
		uint64		id;
		bool		taken = false;

		if (i == lead || pg_atomic_read_u32(&slot->state) != SLOT_QUEUED)
			continue;
		for (int j = 0; j < *n; j++)
			taken |= members[j] == i;
		if (taken)
			continue;
		pg_read_barrier();
		id = slot->request.request_id;
		if (!batch_eligible(&slot->request) || !batch_compatible(want, &slot->request))
			continue;
		if (!pg_atomic_compare_exchange_u32(&slot->state, &expected, SLOT_RUNNING))
			continue;
		pg_read_barrier();
		if (slot->request.request_id != id || !batch_eligible(&slot->request) ||
			!batch_compatible(want, &slot->request))
		{
			expected = SLOT_RUNNING;
			(void) pg_atomic_compare_exchange_u32(&slot->state, &expected, SLOT_QUEUED);
			continue;
		}
		members[(*n)++] = i;
	}
}

/*
 * Forms a batch around the lead request (slot index lead, already RUNNING): members[0] = lead,
 * then the companions taken.  wait_us > 0 waits that long at most for companions while the batch
 * is not full; gather (the test fault) waits until no companion arrives for 200 ms (10 s at
 * most).  Returns the number of members.
 */
int
batch_gather(int lead, int *members, int max, int wait_us, bool gather)
{
	double		start = pr_clock_seconds();
	double		last_arrival = start;
	int			n = 1;

	members[0] = lead;
	if (max > SERVICE_MAX_BATCH)
		max = SERVICE_MAX_BATCH;
	for (;;)
	{
		uint32		seen = pg_atomic_read_u32(&service->doorbell);
		int			before = n;
		double		now;
		double		left;		/* seconds */

		take_companions(lead, members, &n, max);
		now = pr_clock_seconds();
		if (n > before)
			last_arrival = now;
		if (n >= max)
			break;
		if (gather)
			left = Min(last_arrival + GATHER_QUIET, start + GATHER_LIMIT) - now;
		else
			left = start + wait_us * 1e-6 - now;
		if (left <= 0)
			break;
		service_futex_wait(&service->doorbell, seen, (int) Max(1, Min(left * 1000.0, 1000)));
	}
	return n;
}

/*
 * The restart distribution of a batch of `width` columns: column j is member j's (one column
 * each: ptr, node, weight of its request data), columns past the members repeat member 0's.
 * Arrays are malloc'd into out (free with batch_restart_free); false when out of memory.
 */
bool
batch_restart(int n_members, int width, const PrRestart *member, PrRestart *out)
{
	int64		total = 0;
	int64_t    *ptr;
	int32_t    *node;
	double	   *weight;
	int64		pos = 0;

	for (int j = 0; j < width; j++)
	{
		const PrRestart *r = &member[j < n_members ? j : 0];

		total += r->ptr[1] - r->ptr[0];
	}
	ptr = malloc(sizeof(int64_t) * (width + 1));
	node = malloc(sizeof(int32_t) * Max(total, 1));
	weight = malloc(sizeof(double) * Max(total, 1));
	if (ptr == NULL || node == NULL || weight == NULL)
	{
		free(ptr);
		free(node);
		free(weight);
		return false;
	}
	for (int j = 0; j < width; j++)
	{
		const PrRestart *r = &member[j < n_members ? j : 0];
		int64		count = r->ptr[1] - r->ptr[0];

		ptr[j] = pos;
		memcpy(node + pos, r->node + r->ptr[0], sizeof(int32_t) * count);
		memcpy(weight + pos, r->weight + r->ptr[0], sizeof(double) * count);
		pos += count;
	}
	ptr[width] = pos;
	memset(out, 0, sizeof(*out));
	out->uniform = false;
	out->k = width;
	out->ptr = ptr;
	out->node = node;
	out->weight = weight;
	return true;
}

/* Frees what batch_restart allocated. */
void
batch_restart_free(PrRestart *restart)
{
	free((void *) restart->ptr);
	free((void *) restart->node);
	free((void *) restart->weight);
	memset(restart, 0, sizeof(*restart));
}
