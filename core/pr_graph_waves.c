/*
 * pr_graph_waves.c — the steps of a graph build: a step splits its input into contiguous chunks,
 * one per thread, and runs them in waves so that the calling thread can poll should_stop between
 * waves; each chunk visits its range in order, so the results depend on neither the waves nor the
 * threads.
 */
#include "pr_graph_build.h"

/* Start of chunk t of count elements split into n_chunks. */
static inline size_t
chunk_start(size_t count, int t, int n_chunks)
{
	size_t		q = count / (size_t) n_chunks,
				r = count % (size_t) n_chunks;

	return q * (size_t) t + r * (size_t) t / (size_t) n_chunks;
}

/* Chunks for count elements: at most n_threads, each at least 64k elements. */
int
pr_build_chunks_for(size_t count, int n_threads)
{
	size_t		most = count / 65536 + 1;

	if (n_threads < 1)
		n_threads = 1;
	if (n_threads > MAX_BUILD_THREADS)
		n_threads = MAX_BUILD_THREADS;
	return (size_t) n_threads < most ? n_threads : (int) most;
}

/*
 * True when the caller asked the build to stop: options->should_stop, polled on the calling thread
 * between steps (never from the chunk threads).
 */
bool
pr_build_stop_requested(const PrBuildOptions *options)
{
	return options != NULL && options->should_stop != NULL &&
		options->should_stop(options->stop_arg);
}

/*
 * Elements a chunk handles in one wave: a step over many elements runs as several waves, every
 * chunk taking the next part of its range in each, so that the calling thread can poll
 * should_stop between waves (about every 10 ms of work) and not only between steps.  Each chunk
 * still visits its range in order, so the results do not depend on the waves.
 */
#define WAVE_ELEMENTS ((size_t) 1 << 20)

/* A step run by pr_build_run_waves: its task, the elements and the current wave. */
typedef struct ChunkRun
{
	ChunkFn		fn;
	void	   *ctx;
	size_t		count;
	int			wave;
	int			n_waves;
} ChunkRun;

/* pr_parallel_run's task: chunk `t`'s part of the current wave. */
static void
chunk_part(void *arg, int t, int n_chunks)
{
	ChunkRun   *run = (ChunkRun *) arg;
	size_t		b = chunk_start(run->count, t, n_chunks),
				e = chunk_start(run->count, t + 1, n_chunks);
	ChunkPart	part;

	part.t = t;
	part.lo = b + chunk_start(e - b, run->wave, run->n_waves);
	part.hi = b + chunk_start(e - b, run->wave + 1, run->n_waves);
	part.first_wave = run->wave == 0;
	run->fn(run->ctx, part);
}

/*
 * Runs fn over n_chunks chunks of count elements in waves (see WAVE_ELEMENTS), chunk 0 on the
 * caller and the others on threads (pr_parallel_run), polling options->should_stop (options may
 * be NULL) between waves: false when it asked to stop.
 */
bool
pr_build_run_waves(ChunkFn fn, void *ctx, int n_chunks, size_t count, const PrBuildOptions *options)
{
	size_t		per_chunk = count / (size_t) n_chunks + 1;
	ChunkRun	run = {fn, ctx, count, 0, (int) ((per_chunk + WAVE_ELEMENTS - 1) / WAVE_ELEMENTS)};

	for (run.wave = 0; run.wave < run.n_waves; run.wave++)
	{
		if (run.wave > 0 && pr_build_stop_requested(options))
			return false;
		pr_parallel_run(chunk_part, &run, n_chunks);
	}
	return true;
}

/* Fails a build step with PR_ERR_INTERRUPTED. */
PrStatus
pr_build_interrupted(PrError *err)
{
	return pr_error_set(err, PR_ERR_INTERRUPTED, "graph build interrupted");
}

/* Fails a build whose graph has n nodes, more than PR_MAX_NODES, with PR_ERR_TOO_LARGE. */
PrStatus
pr_build_too_many_nodes(int64_t n, PrError *err)
{
	return pr_error_set(err, PR_ERR_TOO_LARGE, "graph has %lld nodes; at most %lld are supported",
						(long long) n, (long long) PR_MAX_NODES);
}
