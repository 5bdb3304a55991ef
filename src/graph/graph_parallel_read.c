/*
 * graph_parallel_read.c — the direct table scan of graph_heapscan.c run by PostgreSQL parallel
 * workers (the cold call's read of a large table).
 *
 * The leader enters parallel mode and creates a ParallelContext whose entry point is
 * powerrank_parallel_read_main; parallel.c hands the workers the leader's snapshots (the scan's is
 * the active one, the read's: see graph_scan.c), transaction state, settings and lock group.  The dynamic shared memory segment holds a ParallelTableScanDesc
 * (each participant gets disjoint blocks from it) and one shm_mq per worker.  Every participant
 * converts its rows with graph_heapscan_convert_row (the same casts, NULL skipping and weight
 * checks as the serial reader) into batches that hold whole heap blocks and say which blocks they
 * hold; workers send their batches to the leader, which appends them to the EdgeList as they come
 * (and, like a Gather node, scans batches of its own when no queue has data, unless
 * parallel_leader_participation is off).  So the rows cross shared memory once, through bounded
 * queues, and the leader's copy overlaps the workers' scan.
 *
 * Order: an unweighted graph is a function of the multiset of edges (pr_graph_build sorts sources
 * within each row and parallel edges are identical), so arrival order is kept.  With weights the
 * order of parallel edges decides the order of their additions, so the leader rearranges the rows
 * in block order (within a block, line-pointer order; a threaded copy): the graph is then the same
 * whatever the number of workers, and equal to the serial scan's when that starts at block 0.
 *
 * When: where the serial direct scan would read the table (graph_scan.c asks), for a heap table
 * of at least min_parallel_table_scan_size blocks, not temporary, outside parallel mode, with
 * powerrank.read_workers != 0.  If no worker starts, the caller reads serially.
 *
 * Errors: an invalid weight stops the participant that meets it, which reports the row; the
 * leader then raises the serial scan's error, for the first such row in block order (the same
 * message whoever found it).  Any other error in a worker (a numeric weight beyond double
 * precision, a cancel) reaches the leader through the ParallelContext, with "parallel worker" as
 * its context; on any error the context and its segment go with the transaction's abort.
 */
#include "powerrank.h"

#include <math.h>
#include <pthread.h>

#include "access/parallel.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_am_d.h"
#include "executor/instrument.h"
#include "miscadmin.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/paths.h"
#include "pgstat.h"
#include "postmaster/bgworker_internals.h"
#include "storage/bufmgr.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/shm_mq.h"
#include "storage/shm_toc.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "graph/graph_heapscan.h"
#include "graph/graph_parallel_read.h"

/* Rows per batch; a batch is sent at a block boundary once a whole page may no longer fit. */
#define READ_BATCH_ROWS 8192

/* Bytes of each worker's queue to the leader. */
#define READ_QUEUE_SIZE ((Size) 1024 * 1024)

/* Keys of the shared state in the parallel segment's table of contents. */
#define READ_KEY_SHARED		UINT64CONST(1)
#define READ_KEY_QUEUES		UINT64CONST(2)
#define READ_KEY_BUFFER_USAGE UINT64CONST(3)
#define READ_KEY_WAL_USAGE	UINT64CONST(4)

int			powerrank_read_workers = -1;

/* What every participant needs to read the table; a ParallelTableScanDescData follows it. */
typedef struct ReadShared
{
	Oid			relid;
	int			n_columns;
	AttrNumber	attnums[3];		/* src, dst, weight */
	Oid			types[3];
	NameData	relname;
} ReadShared;

/* The parallel scan descriptor placed after the ReadShared struct. */
#define READ_SHARED_SCAN(shared) \
	((ParallelTableScanDesc) ((char *) (shared) + MAXALIGN(sizeof(ReadShared))))

/* Rows of one block in a batch. */
typedef struct BlockCount
{
	BlockNumber block;
	uint32		count;
} BlockCount;

/*
 * Head of a message from a worker: a batch (n_blocks BlockCount entries, then n_rows sources,
 * destinations and, when weighted, weights), or the last message, with the worker's totals.
 */
typedef struct BadRow
{
	bool		found;
	BlockNumber block;
	OffsetNumber offset;
	int64		src;
	int64		dst;
	double		weight;
} BadRow;

typedef struct BatchHeader
{
	uint32		last;			/* 1: no rows, rows and skipped are the worker's totals */
	uint32		n_blocks;
	uint64		n_rows;
	uint64		skipped;
	BadRow		bad;			/* last message: the worker's first invalid weight, if any */
} BatchHeader;

/* A participant's batch being filled, and its scan. */
typedef struct BatchScan
{
	EdgeRowReader reader;
	TableScanDesc scan;
	TupleTableSlot *slot;
	MemoryContext row_cxt;
	uint32		until_check;
	bool		weighted;
	bool		finished;		/* the scan returned its last row */
	bool		pending;		/* the slot holds a row not yet taken (it starts a block) */
	uint32		n_rows;
	uint32		n_blocks;
	BlockCount *blocks;			/* READ_BATCH_ROWS entries each */
	int64	   *src;
	int64	   *dst;
	double	   *weight;
	uint64		total_rows;
	uint64		skipped;
	BadRow		bad;			/* first invalid weight: the scan stopped there */
} BatchScan;

/* The leader's receiving side: the edge list and, when weighted, where each block's rows went. */
typedef struct RowGather
{
	EdgeList   *edges;
	BlockNumber nblocks;
	Size	   *block_first;	/* weighted only: position of the block's first row */
	uint32	   *block_count;	/* weighted only: rows of the block (0: none) */
	uint64		worker_rows;	/* totals the workers reported */
	uint64		worker_skipped;
	uint64		received_rows;	/* rows received from workers */
	BadRow		bad;			/* the first invalid weight in block order that was seen */
} RowGather;

PGDLLEXPORT void powerrank_parallel_read_main(dsm_segment *seg, shm_toc *toc);

/* Defines powerrank.read_workers. */
void
graph_parallel_read_guc_init(void)
{
	DefineCustomIntVariable("powerrank.read_workers",
							"Parallel workers that read a table with the direct table scan: -1 = as many as a parallel sequential scan would get (capped by max_parallel_workers_per_gather), 0 = read serially.",
							"Tables smaller than min_parallel_table_scan_size are read serially.",
							&powerrank_read_workers,
							-1, -1, MAX_PARALLEL_WORKER_LIMIT,
							PGC_USERSET, 0, NULL, NULL, NULL);
}

/*
 * Workers to ask for to read rel of nblocks blocks: 0 below min_parallel_table_scan_size or with
 * powerrank.read_workers = 0; the setting when positive; for -1 the planner's rule for a parallel
 * sequential scan (the table's parallel_workers option, else one more worker each time the table
 * triples past the threshold) capped by max_parallel_workers_per_gather.
 */
static int
planned_workers(Relation rel, BlockNumber nblocks)
{
	double		threshold = Max(min_parallel_table_scan_size, 1);
	int			workers;

	if (powerrank_read_workers == 0 || nblocks == 0 ||
		(double) nblocks < (double) min_parallel_table_scan_size)
		return 0;
	if (powerrank_read_workers > 0)
		return powerrank_read_workers;
	workers = RelationGetParallelWorkers(rel, -1);
	if (workers < 0)
	{
		workers = 1;
		while ((double) nblocks >= threshold * 3 && workers < MAX_PARALLEL_WORKER_LIMIT)
		{
			workers++;
			threshold *= 3;
		}
	}
	return Min(workers, max_parallel_workers_per_gather);
}

/* True when workers may read rel for this backend: a heap of shared buffers, outside parallel mode. */
static bool
parallel_read_possible(Relation rel)
{
	return IsUnderPostmaster && !IsInParallelMode() &&
		rel->rd_rel->relam == HEAP_TABLE_AM_OID && !RelationUsesLocalBuffers(rel);
}

/* The row reader of the shared description (the same as the leader's). */
static void
reader_from_shared(const ReadShared *shared, EdgeRowReader *reader)
{
	EdgeScanTarget target;
	int			i;

	memset(&target, 0, sizeof(target));
	target.relid = shared->relid;
	target.relname = NameStr(shared->relname);
	target.n_columns = shared->n_columns;
	for (i = 0; i < shared->n_columns; i++)
	{
		target.columns[i].attnum = shared->attnums[i];
		target.columns[i].type = shared->types[i];
	}
	graph_heapscan_reader_init(reader, &target);
}

/* Begins a participant's share of the parallel scan of rel, with an empty batch. */
static void
batch_scan_begin(BatchScan *bs, const ReadShared *shared, Relation rel)
{
	memset(bs, 0, sizeof(BatchScan));
	reader_from_shared(shared, &bs->reader);
	bs->weighted = shared->n_columns == 3;
	bs->blocks = palloc(sizeof(BlockCount) * READ_BATCH_ROWS);
	bs->src = palloc(sizeof(int64) * READ_BATCH_ROWS);
	bs->dst = palloc(sizeof(int64) * READ_BATCH_ROWS);
	bs->weight = bs->weighted ? palloc(sizeof(double) * READ_BATCH_ROWS) : NULL;
	bs->row_cxt = AllocSetContextCreate(CurrentMemoryContext, "powerrank row conversion",
										ALLOCSET_SMALL_SIZES);
	bs->until_check = HEAPSCAN_CHECK_EVERY;
	bs->slot = table_slot_create(rel, NULL);
	bs->scan = table_beginscan_parallel(rel, READ_SHARED_SCAN(shared));
}

/* Ends the scan and frees what batch_scan_begin made. */
static void
batch_scan_end(BatchScan *bs)
{
	table_endscan(bs->scan);
	ExecDropSingleTupleTableSlot(bs->slot);
	MemoryContextDelete(bs->row_cxt);
	pfree(bs->blocks);
	pfree(bs->src);
	pfree(bs->dst);
	if (bs->weight != NULL)
		pfree(bs->weight);
}

/*
 * Fills the batch (emptied by the caller) with the next rows of the scan, whole blocks only:
 * returns when the row just fetched starts a block that might not fit (it is kept in the slot
 * for the next call) or when the scan is over (bs->finished).  Cancel and worker termination are
 * noticed every few thousand rows.
 */
static void
batch_scan_fill(BatchScan *bs)
{
	MemoryContext old_cxt = MemoryContextSwitchTo(bs->row_cxt);
	int64		src;
	int64		dst;
	double		weight;

	for (;;)
	{
		BlockNumber block;

		if (!bs->pending)
		{
			if (!table_scan_getnextslot(bs->scan, ForwardScanDirection, bs->slot))
			{
				bs->finished = true;
				break;
			}
			if (unlikely(--bs->until_check == 0))
			{
				bs->until_check = HEAPSCAN_CHECK_EVERY;
				CHECK_FOR_INTERRUPTS();
				MemoryContextReset(bs->row_cxt);
			}
		}
		bs->pending = false;
		block = ItemPointerGetBlockNumber(&bs->slot->tts_tid);
		if (bs->n_blocks == 0 || bs->blocks[bs->n_blocks - 1].block != block)
		{
			if (READ_BATCH_ROWS - bs->n_rows < MaxHeapTuplesPerPage)
			{
				bs->pending = true; /* the slot's row goes to the next batch */
				break;
			}
			bs->blocks[bs->n_blocks].block = block;
			bs->blocks[bs->n_blocks].count = 0;
			bs->n_blocks++;
		}
		if (!graph_heapscan_convert_row_unchecked(&bs->reader, bs->slot, &src, &dst, &weight))
		{
			bs->skipped++;
			continue;
		}
		if (bs->weighted && unlikely(!(isfinite(weight) && weight >= 0)))
		{
			/* stop here: the leader raises the error of the first such row in block order */
			bs->bad.found = true;
			bs->bad.block = block;
			bs->bad.offset = ItemPointerGetOffsetNumber(&bs->slot->tts_tid);
			bs->bad.src = src;
			bs->bad.dst = dst;
			bs->bad.weight = weight;
			bs->finished = true;
			break;
		}
		if (unlikely(bs->n_rows == READ_BATCH_ROWS))
			elog(ERROR, "powerrank: block %u has more rows than a heap page holds", block);
		bs->src[bs->n_rows] = src;
		bs->dst[bs->n_rows] = dst;
		if (bs->weighted)
			bs->weight[bs->n_rows] = weight;
		bs->n_rows++;
		bs->blocks[bs->n_blocks - 1].count++;
	}
	MemoryContextSwitchTo(old_cxt);
	bs->total_rows += bs->n_rows;
}

/* Sends the batch to the leader and empties it; false when the leader has detached. */
static bool
batch_send(BatchScan *bs, shm_mq_handle *queue)
{
	BatchHeader header = {0, bs->n_blocks, bs->n_rows, 0, {0}};
	shm_mq_iovec iov[5];
	int			n_iov = 4;

	iov[0].data = (const char *) &header;
	iov[0].len = sizeof(header);
	iov[1].data = (const char *) bs->blocks;
	iov[1].len = sizeof(BlockCount) * bs->n_blocks;
	iov[2].data = (const char *) bs->src;
	iov[2].len = sizeof(int64) * bs->n_rows;
	iov[3].data = (const char *) bs->dst;
	iov[3].len = sizeof(int64) * bs->n_rows;
	if (bs->weighted)
	{
		iov[4].data = (const char *) bs->weight;
		iov[4].len = sizeof(double) * bs->n_rows;
		n_iov = 5;
	}
	bs->n_rows = 0;
	bs->n_blocks = 0;
	return shm_mq_sendv(queue, iov, n_iov, false, false) == SHM_MQ_SUCCESS;
}

/*
 * Entry point of a parallel worker (run by parallel.c with the leader's snapshot, transaction
 * and settings): scans its share of the table into batches sent to the leader, then its totals;
 * reports its buffer usage.
 */
void
powerrank_parallel_read_main(dsm_segment *seg, shm_toc *toc)
{
	ReadShared *shared = shm_toc_lookup(toc, READ_KEY_SHARED, false);
	char	   *queues = shm_toc_lookup(toc, READ_KEY_QUEUES, false);
	BufferUsage *buffer_usage = shm_toc_lookup(toc, READ_KEY_BUFFER_USAGE, false);
	WalUsage   *wal_usage = shm_toc_lookup(toc, READ_KEY_WAL_USAGE, false);
	shm_mq	   *mq = (shm_mq *) (queues + ParallelWorkerNumber * READ_QUEUE_SIZE);
	shm_mq_handle *queue;
	Relation	rel;
	BatchScan	bs;
	bool		leader_attached = true;

	shm_mq_set_sender(mq, MyProc);
	queue = shm_mq_attach(mq, seg, NULL);
	InstrStartParallelQuery();
	rel = table_open(shared->relid, AccessShareLock);
	batch_scan_begin(&bs, shared, rel);
	while (leader_attached && !bs.finished)
	{
		batch_scan_fill(&bs);
		if (bs.n_rows > 0)
			leader_attached = batch_send(&bs, queue);
		else
			bs.n_blocks = 0;
	}
	if (leader_attached)
	{
		BatchHeader last = {1, 0, bs.total_rows, bs.skipped, bs.bad};

		(void) shm_mq_send(queue, sizeof(last), &last, false, true);
	}
	batch_scan_end(&bs);
	table_close(rel, AccessShareLock);
	InstrEndParallelQuery(&buffer_usage[ParallelWorkerNumber], &wal_usage[ParallelWorkerNumber]);
	shm_mq_detach(queue);
}

/*
 * Appends a batch to the edge list (and tells powerrank_progress the rows read so far); with
 * weights, records where each of its blocks went.
 */
static void
gather_append(RowGather *g, const BlockCount *blocks, uint32 n_blocks, const int64 *src,
			  const int64 *dst, const double *weight, Size n_rows)
{
	EdgeList   *edges = g->edges;
	Size		at = edges->count;
	uint32		i;

	edge_list_reserve(edges, at + n_rows);
	memcpy(edges->src + at, src, n_rows * sizeof(int64));
	memcpy(edges->dst + at, dst, n_rows * sizeof(int64));
	if (edges->weighted)
	{
		memcpy(edges->weight + at, weight, n_rows * sizeof(double));
		for (i = 0; i < n_blocks; i++)
		{
			BlockNumber block = blocks[i].block;

			if (block >= g->nblocks || g->block_count[block] != 0)
				elog(ERROR, "powerrank: parallel read returned block %u twice or out of range",
					 block);
			g->block_first[block] = at;
			g->block_count[block] = blocks[i].count;
			at += blocks[i].count;
		}
	}
	edges->count += n_rows;
	progress_set_rows_read((int64) (edges->count + edges->skipped));
}

/* Keeps bad if it comes before the invalid weight already seen (block, then line pointer). */
static void
gather_note_bad(RowGather *g, const BadRow *bad)
{
	if (!bad->found)
		return;
	if (!g->bad.found || bad->block < g->bad.block ||
		(bad->block == g->bad.block && bad->offset < g->bad.offset))
		g->bad = *bad;
}

/* Appends one message of a worker (a batch, or its totals). */
static void
gather_message(RowGather *g, const char *data, Size nbytes)
{
	BatchHeader header;
	Size		expected;
	const char *p = data + sizeof(BatchHeader);

	if (nbytes < sizeof(BatchHeader))
		elog(ERROR, "powerrank: parallel read message of %zu bytes", nbytes);
	memcpy(&header, data, sizeof(BatchHeader));
	if (header.last)
	{
		g->worker_rows += header.n_rows;
		g->worker_skipped += header.skipped;
		gather_note_bad(g, &header.bad);
		return;
	}
	expected = sizeof(BatchHeader) + sizeof(BlockCount) * header.n_blocks +
		(Size) header.n_rows * sizeof(int64) * (g->edges->weighted ? 3 : 2);
	if (nbytes != expected)
		elog(ERROR, "powerrank: parallel read message of %zu bytes, expected %zu", nbytes, expected);
	{
		const BlockCount *blocks = (const BlockCount *) p;
		const int64 *src = (const int64 *) (p + sizeof(BlockCount) * header.n_blocks);
		const int64 *dst = src + header.n_rows;
		const double *weight = g->edges->weighted ? (const double *) (dst + header.n_rows) : NULL;

		gather_append(g, blocks, header.n_blocks, src, dst, weight, header.n_rows);
	}
	g->received_rows += header.n_rows;
}

/* Rows to move from position from of the arrival order to position to of the block order. */
typedef struct CopyRun
{
	Size		from;
	Size		to;
	Size		count;
} CopyRun;

/* One thread's share of the rearrangement: runs [first, end) (plain memcpy, no PostgreSQL call). */
typedef struct ReorderJob
{
	const EdgeList *edges;		/* arrival order */
	int64	   *src;			/* block order */
	int64	   *dst;
	double	   *weight;
	const CopyRun *runs;
	Size		first;
	Size		end;
} ReorderJob;

/* Most threads the rearrangement uses. */
#define REORDER_MAX_THREADS 64

/* Copies a job's runs. */
static void *
reorder_job_main(void *arg)
{
	ReorderJob *job = (ReorderJob *) arg;
	Size		r;

	for (r = job->first; r < job->end; r++)
	{
		const CopyRun *run = &job->runs[r];

		memcpy(job->src + run->to, job->edges->src + run->from, run->count * sizeof(int64));
		memcpy(job->dst + run->to, job->edges->dst + run->from, run->count * sizeof(int64));
		memcpy(job->weight + run->to, job->edges->weight + run->from,
			   run->count * sizeof(double));
	}
	return NULL;
}

/*
 * The copy runs that put the rows in block order (the rows of each block were appended together;
 * consecutive blocks already adjacent make one run); *n_runs gets their number.
 */
static CopyRun *
block_order_runs(const RowGather *g, Size *n_runs)
{
	Size		n = g->edges->count;
	Size		capacity = 1024;
	CopyRun    *runs = palloc(sizeof(CopyRun) * capacity);
	Size		at = 0;
	BlockNumber b = 0;

	*n_runs = 0;
	while (b < g->nblocks)
	{
		Size		first = g->block_first[b];
		Size		count = g->block_count[b];

		b++;
		if (count == 0)
			continue;
		while (b < g->nblocks &&
			   (g->block_count[b] == 0 || g->block_first[b] == first + count))
			count += g->block_count[b++];
		if (at + count > n)
			elog(ERROR, "powerrank: parallel read placed more rows than it received");
		if (*n_runs == capacity)
		{
			capacity *= 2;
			runs = repalloc_huge(runs, sizeof(CopyRun) * capacity);
		}
		runs[*n_runs].from = first;
		runs[*n_runs].to = at;
		runs[*n_runs].count = count;
		(*n_runs)++;
		at += count;
	}
	if (at != n)
		elog(ERROR, "powerrank: parallel read placed %zu rows of %zu", at, n);
	return runs;
}

/*
 * Rearranges a weighted edge list in block order, so that parallel edges add their weights in the
 * same order whatever the number of workers.  The copy is split over powerrank.cpu_threads
 * threads (balanced by rows); a thread that cannot be started leaves its share to this one.
 */
static void
gather_block_order(RowGather *g)
{
	EdgeList   *edges = g->edges;
	Size		n = edges->count;
	Size		n_runs;
	CopyRun    *runs = block_order_runs(g, &n_runs);
	ReorderJob	jobs[REORDER_MAX_THREADS];
	pthread_t	threads[REORDER_MAX_THREADS];
	bool		started[REORDER_MAX_THREADS];
	int			n_threads = Min(Max(powerrank_thread_count(), 1), REORDER_MAX_THREADS);
	int64	   *src;
	int64	   *dst;
	double	   *weight;
	Size		r = 0;
	int			t;

	if ((Size) n_threads > n_runs)
		n_threads = Max((int) n_runs, 1);
	for (t = 0; t < n_threads; t++)
	{
		Size		limit = (Size) ((double) n * (t + 1) / n_threads);

		jobs[t].edges = edges;
		jobs[t].runs = runs;
		jobs[t].first = r;
		while (r < n_runs && (t == n_threads - 1 || runs[r].to < limit))
			r++;
		jobs[t].end = r;
	}
	src = MemoryContextAllocHuge(edges->cxt, Max(n, 1) * sizeof(int64));
	dst = MemoryContextAllocHuge(edges->cxt, Max(n, 1) * sizeof(int64));
	weight = MemoryContextAllocHuge(edges->cxt, Max(n, 1) * sizeof(double));
	for (t = 0; t < n_threads; t++)
	{
		jobs[t].src = src;
		jobs[t].dst = dst;
		jobs[t].weight = weight;
	}
	for (t = 1; t < n_threads; t++)
		started[t] = pthread_create(&threads[t], NULL, reorder_job_main, &jobs[t]) == 0;
	reorder_job_main(&jobs[0]);
	for (t = 1; t < n_threads; t++)
	{
		if (started[t])
			pthread_join(threads[t], NULL);
		else
			reorder_job_main(&jobs[t]);
	}

	pfree(edges->src);
	pfree(edges->dst);
	pfree(edges->weight);
	edges->src = src;
	edges->dst = dst;
	edges->weight = weight;
	edges->capacity = Max(n, 1);
	pfree(runs);
}

/*
 * The leader's loop: takes the workers' batches as they come; when no queue has one, scans a
 * batch of its own (leader participation) or sleeps on its latch.  Ends when every worker has
 * detached and the leader's scan (if any) is over.
 */
static void
gather_rows(RowGather *g, shm_mq_handle **queues, int n_queues, BatchScan *leader)
{
	bool	   *open = palloc(sizeof(bool) * n_queues);
	int			n_open = n_queues;
	bool		leader_scanning = leader != NULL;
	int			i;

	for (i = 0; i < n_queues; i++)
		open[i] = true;
	while (n_open > 0 || leader_scanning)
	{
		bool		received = false;

		CHECK_FOR_INTERRUPTS();
		for (i = 0; i < n_queues; i++)
		{
			Size		nbytes;
			void	   *data;
			shm_mq_result result;

			if (!open[i])
				continue;
			result = shm_mq_receive(queues[i], &nbytes, &data, true);
			if (result == SHM_MQ_SUCCESS)
			{
				gather_message(g, data, nbytes);
				received = true;
			}
			else if (result == SHM_MQ_DETACHED)
			{
				open[i] = false;
				n_open--;
			}
		}
		if (received)
			continue;
		if (leader_scanning)
		{
			batch_scan_fill(leader);
			gather_append(g, leader->blocks, leader->n_blocks, leader->src, leader->dst,
						  leader->weight, leader->n_rows);
			leader->n_rows = 0;
			leader->n_blocks = 0;
			leader_scanning = !leader->finished;
		}
		else if (n_open > 0)
		{
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_EXIT_ON_PM_DEATH, -1,
							 WAIT_EVENT_EXECUTE_GATHER);
			ResetLatch(MyLatch);
		}
	}
	pfree(open);
}

/* Fills the shared description of the read (the scan descriptor is initialised by the caller). */
static void
fill_shared(ReadShared *shared, const EdgeScanTarget *target)
{
	int			i;

	memset(shared, 0, sizeof(ReadShared));
	shared->relid = target->relid;
	shared->n_columns = target->n_columns;
	for (i = 0; i < target->n_columns; i++)
	{
		shared->attnums[i] = target->columns[i].attnum;
		shared->types[i] = target->columns[i].type;
	}
	namestrcpy(&shared->relname, target->relname);
}

/* The parts of a parallel read's segment the leader uses. */
typedef struct ReadSegment
{
	ReadShared *shared;			/* the read's description and its parallel scan */
	shm_mq_handle **queues;		/* [nworkers] the workers' queues, the leader receiving */
	BufferUsage *buffer_usage;	/* [nworkers] the workers' buffer usage */
	WalUsage   *wal_usage;		/* [nworkers] the workers' WAL usage */
} ReadSegment;

/*
 * Sizes the segment of a parallel read: the shared description with the scan (scan_size bytes),
 * a queue, a buffer usage and a WAL usage per worker.
 */
static void
estimate_read_segment(ParallelContext *pcxt, Size scan_size)
{
	shm_toc_estimate_chunk(&pcxt->estimator, add_size(MAXALIGN(sizeof(ReadShared)), scan_size));
	shm_toc_estimate_chunk(&pcxt->estimator, mul_size(READ_QUEUE_SIZE, pcxt->nworkers));
	shm_toc_estimate_chunk(&pcxt->estimator, mul_size(sizeof(BufferUsage), pcxt->nworkers));
	shm_toc_estimate_chunk(&pcxt->estimator, mul_size(sizeof(WalUsage), pcxt->nworkers));
	shm_toc_estimate_keys(&pcxt->estimator, 4);
}

/*
 * Lays out the segment estimate_read_segment sized: the shared description of target with the
 * parallel scan of rel under snapshot, the workers' queues (the leader their receiver) and usage
 * counters.
 */
static void
fill_read_segment(ParallelContext *pcxt, Relation rel, Snapshot snapshot, Size scan_size,
				  const EdgeScanTarget *target, ReadSegment *seg)
{
	char	   *queue_space;
	int			i;

	seg->shared = shm_toc_allocate(pcxt->toc, add_size(MAXALIGN(sizeof(ReadShared)), scan_size));
	fill_shared(seg->shared, target);
	table_parallelscan_initialize(rel, READ_SHARED_SCAN(seg->shared), snapshot);
	shm_toc_insert(pcxt->toc, READ_KEY_SHARED, seg->shared);
	queue_space = shm_toc_allocate(pcxt->toc, mul_size(READ_QUEUE_SIZE, pcxt->nworkers));
	shm_toc_insert(pcxt->toc, READ_KEY_QUEUES, queue_space);
	seg->queues = palloc(sizeof(shm_mq_handle *) * pcxt->nworkers);
	for (i = 0; i < pcxt->nworkers; i++)
	{
		shm_mq	   *mq = shm_mq_create(queue_space + i * READ_QUEUE_SIZE, READ_QUEUE_SIZE);

		shm_mq_set_receiver(mq, MyProc);
		seg->queues[i] = shm_mq_attach(mq, pcxt->seg, NULL);
	}
	seg->buffer_usage = shm_toc_allocate(pcxt->toc, mul_size(sizeof(BufferUsage), pcxt->nworkers));
	memset(seg->buffer_usage, 0, mul_size(sizeof(BufferUsage), pcxt->nworkers));
	shm_toc_insert(pcxt->toc, READ_KEY_BUFFER_USAGE, seg->buffer_usage);
	seg->wal_usage = shm_toc_allocate(pcxt->toc, mul_size(sizeof(WalUsage), pcxt->nworkers));
	memset(seg->wal_usage, 0, mul_size(sizeof(WalUsage), pcxt->nworkers));
	shm_toc_insert(pcxt->toc, READ_KEY_WAL_USAGE, seg->wal_usage);
}

/*
 * Gathers the rows of the launched workers, and the leader's own when it participates, into edges
 * in block order (rel's nblocks blocks), waits for the workers and adds up their usage; raises
 * the serial scan's error for an invalid weight.  info gets the scan and gather seconds since
 * started.
 */
static void
gather_parallel_read(ParallelContext *pcxt, Relation rel, BlockNumber nblocks,
					 const ReadSegment *seg, const EdgeScanTarget *target, EdgeList *edges,
					 ParallelReadInfo *info, double started)
{
	BatchScan	leader;
	RowGather	g;
	int			i;

	memset(&g, 0, sizeof(RowGather));
	g.edges = edges;
	g.nblocks = nblocks;
	if (edges->weighted)
	{
		g.block_first = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(Size) * nblocks);
		g.block_count = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(uint32) * nblocks);
		memset(g.block_count, 0, sizeof(uint32) * nblocks);
	}
	graph_heapscan_reserve(rel, edges);
	if (parallel_leader_participation)
		batch_scan_begin(&leader, seg->shared, rel);
	gather_rows(&g, seg->queues, pcxt->nworkers_launched,
				parallel_leader_participation ? &leader : NULL);
	WaitForParallelWorkersToFinish(pcxt);
	for (i = 0; i < pcxt->nworkers_launched; i++)
		InstrAccumParallelQuery(&seg->buffer_usage[i], &seg->wal_usage[i]);
	if (g.worker_rows != g.received_rows)
		elog(ERROR, "powerrank: parallel read received " UINT64_FORMAT " rows of the workers' " UINT64_FORMAT,
			 g.received_rows, g.worker_rows);
	edges->skipped += (int64) g.worker_skipped;
	if (parallel_leader_participation)
	{
		edges->skipped += (int64) leader.skipped;
		gather_note_bad(&g, &leader.bad);
		batch_scan_end(&leader);
	}
	/* the serial scan's error: the first invalid weight in block order */
	if (g.bad.found)
		edge_list_check_weight(g.bad.weight, g.bad.src, g.bad.dst, target->relname);
	info->scan_seconds = pr_clock_seconds() - started;
	if (edges->weighted)
	{
		gather_block_order(&g);
		pfree(g.block_first);
		pfree(g.block_count);
	}
	info->gather_seconds = pr_clock_seconds() - started - info->scan_seconds;
}

/*
 * Reads target's rows into edges with parallel workers and returns true, or returns false
 * (nothing read) when the table is not read in parallel: too small, the setting, parallel mode
 * not possible, or no worker could be started — the caller then reads serially.  info says what
 * was planned and launched.
 */
bool
graph_parallel_read_fetch(const EdgeScanTarget *target, EdgeList *edges, ParallelReadInfo *info)
{
	Relation	rel;
	BlockNumber nblocks;
	Snapshot	snapshot = GetActiveSnapshot();
	ParallelContext *pcxt;
	Size		scan_size;
	ReadSegment seg;
	int			i;
	double		started = pr_clock_seconds();

	memset(info, 0, sizeof(ParallelReadInfo));
	rel = table_open(target->relid, AccessShareLock);
	nblocks = RelationGetNumberOfBlocks(rel);
	info->planned = parallel_read_possible(rel) ? planned_workers(rel, nblocks) : 0;
	if (info->planned <= 0)
	{
		table_close(rel, AccessShareLock);
		return false;
	}

	EnterParallelMode();
	pcxt = CreateParallelContext("powerrank", "powerrank_parallel_read_main", info->planned);
	scan_size = table_parallelscan_estimate(rel, snapshot);
	estimate_read_segment(pcxt, scan_size);
	InitializeParallelDSM(pcxt);
	if (pcxt->seg == NULL)
	{
		/* no segment could be made (too many): read serially */
		DestroyParallelContext(pcxt);
		ExitParallelMode();
		table_close(rel, AccessShareLock);
		return false;
	}
	fill_read_segment(pcxt, rel, snapshot, scan_size, target, &seg);

	LaunchParallelWorkers(pcxt);
	info->launched = pcxt->nworkers_launched;
	if (info->launched == 0)
	{
		/* no background worker slot: the serial scan is the same read without the queues */
		DestroyParallelContext(pcxt);
		ExitParallelMode();
		table_close(rel, AccessShareLock);
		return false;
	}
	for (i = 0; i < pcxt->nworkers_launched; i++)
		shm_mq_set_handle(seg.queues[i], pcxt->worker[i].bgwhandle);
	gather_parallel_read(pcxt, rel, nblocks, &seg, target, edges, info, started);

	DestroyParallelContext(pcxt);
	ExitParallelMode();
	table_close(rel, AccessShareLock);
	return true;
}
