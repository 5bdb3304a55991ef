/*
 * pr_cpu_pool.c — the CPU engine's thread pool: n_threads - 1 workers that run each task the
 * engine hands out (pr_cpu_run) beside the calling thread, spinning a little between tasks before
 * they sleep.  Workers block every signal, so a host process's signal handlers (PostgreSQL's) only
 * ever run on the calling thread.
 */
#include "pr_cpu_engine.h"

#include <signal.h>

/*
 * Polls of a waiting thread before it sleeps on a condition variable (about 0.1 ms).  Plain loads,
 * no pause instruction: under KVM a pause loop makes the hypervisor deschedule the vCPU.
 */
#define PR_CPU_SPIN 100000

/* A short pause inside a spin loop. */
static inline void
cpu_relax(void)
{
	__asm__ __volatile__("":::"memory");
}

/*
 * Body of a worker thread: wait for a new generation (spinning a little, then sleeping on the
 * condition variable), run its task, report, repeat until quit.
 */
static void *
cpu_worker_main(void *arg)
{
	CpuWorker  *w = (CpuWorker *) arg;
	CpuEngine  *e = w->engine;
	uint64_t	seen = w->start_generation;

	for (;;)
	{
		uint64_t	gen = atomic_load(&e->generation);

		for (int spin = 0; gen == seen && spin < PR_CPU_SPIN; spin++)
		{
			cpu_relax();
			gen = atomic_load(&e->generation);
		}
		if (gen == seen)
		{
			pthread_mutex_lock(&e->mutex);
			atomic_fetch_add(&e->sleepers, 1);
			while ((gen = atomic_load(&e->generation)) == seen)
				pthread_cond_wait(&e->go, &e->mutex);
			atomic_fetch_sub(&e->sleepers, 1);
			pthread_mutex_unlock(&e->mutex);
		}
		seen = gen;
		if (atomic_load(&e->quit))
			break;
		e->task(e, w->id, e->task_arg);
		if (atomic_fetch_sub(&e->pending, 1) == 1 && atomic_load(&e->main_waiting))
		{
			pthread_mutex_lock(&e->mutex);
			pthread_cond_signal(&e->done);
			pthread_mutex_unlock(&e->mutex);
		}
	}
	return NULL;
}

/* Starts a new generation: workers spinning see it, sleeping ones are woken. */
static void
cpu_pool_announce(CpuEngine *e)
{
	atomic_fetch_add(&e->generation, 1);
	if (atomic_load(&e->sleepers) > 0)
	{
		pthread_mutex_lock(&e->mutex);
		pthread_cond_broadcast(&e->go);
		pthread_mutex_unlock(&e->mutex);
	}
}

/* Runs task on every thread (the caller is thread 0) and waits for all of them. */
void
pr_cpu_run(CpuEngine *e, CpuTask task, const void *arg)
{
	if (e->n_workers == 0)
	{
		atomic_store(&e->next_item, 0);
		task(e, 0, arg);
		return;
	}
	e->task = task;
	e->task_arg = arg;
	atomic_store(&e->next_item, 0);
	atomic_store(&e->pending, e->n_workers);
	cpu_pool_announce(e);
	task(e, 0, arg);
	for (int spin = 0; atomic_load(&e->pending) > 0 && spin < PR_CPU_SPIN; spin++)
		cpu_relax();
	if (atomic_load(&e->pending) > 0)
	{
		pthread_mutex_lock(&e->mutex);
		atomic_store(&e->main_waiting, true);
		while (atomic_load(&e->pending) > 0)
			pthread_cond_wait(&e->done, &e->mutex);
		atomic_store(&e->main_waiting, false);
		pthread_mutex_unlock(&e->mutex);
	}
}

/* Stops and joins every worker thread. */
void
pr_cpu_pool_stop(CpuEngine *e)
{
	if (e->n_workers > 0)
	{
		atomic_store(&e->quit, true);
		pthread_mutex_lock(&e->mutex);
		atomic_fetch_add(&e->generation, 1);
		pthread_cond_broadcast(&e->go);
		pthread_mutex_unlock(&e->mutex);
		for (int i = 0; i < e->n_workers; i++)
			pthread_join(e->threads[i], NULL);
	}
	e->n_workers = 0;
	atomic_store(&e->quit, false);
	pr_free(&e->alloc, e->threads);
	pr_free(&e->alloc, e->workers);
	e->threads = NULL;
	e->workers = NULL;
}

/*
 * Starts n_threads - 1 workers with every signal blocked.  If the system refuses a thread, the
 * engine goes on with those it has (results do not depend on the thread count).
 */
PrStatus
pr_cpu_pool_start(CpuEngine *e, PrError *err)
{
	int			wanted = e->n_threads - 1;
	sigset_t	all,
				old;

	e->n_workers = 0;
	if (wanted <= 0)
		return PR_OK;
	e->threads = ENGINE_ALLOC(e, pthread_t, wanted);
	e->workers = ENGINE_ALLOC(e, CpuWorker, wanted);
	if (e->threads == NULL || e->workers == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory starting CPU threads");
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (int i = 0; i < wanted; i++)
	{
		e->workers[i].engine = e;
		e->workers[i].id = i + 1;
		e->workers[i].start_generation = atomic_load(&e->generation);
		if (pthread_create(&e->threads[i], NULL, cpu_worker_main, &e->workers[i]) != 0)
			break;
		e->n_workers++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	e->n_threads = e->n_workers + 1;
	return PR_OK;
}

/* Makes the pool's mutex and condition variables; false when the system refuses one. */
bool
pr_cpu_pool_init(CpuEngine *e)
{
	if (pthread_mutex_init(&e->mutex, NULL) != 0)
		return false;
	if (pthread_cond_init(&e->go, NULL) != 0)
	{
		pthread_mutex_destroy(&e->mutex);
		return false;
	}
	if (pthread_cond_init(&e->done, NULL) != 0)
	{
		pthread_cond_destroy(&e->go);
		pthread_mutex_destroy(&e->mutex);
		return false;
	}
	e->sync_ready = true;
	return true;
}

/* Destroys what pr_cpu_pool_init made (the threads stopped). */
void
pr_cpu_pool_destroy(CpuEngine *e)
{
	if (e->sync_ready)
	{
		pthread_cond_destroy(&e->go);
		pthread_cond_destroy(&e->done);
		pthread_mutex_destroy(&e->mutex);
	}
	e->sync_ready = false;
}
