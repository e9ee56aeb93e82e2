/* The built-in job system: a persistent pthread pool.
 * SPDX-License-Identifier: MIT
 *
 * Threads are created once per world and wait for work; spawning threads per frame costs more
 * than skinning a character. After a job, workers spin briefly before sleeping, because a game
 * submits the next job within microseconds (the next skin, the next frame) and a condition
 * variable wake-up costs tens of microseconds, as long as skinning one character takes.
 * The calling thread works on the job too. A parallel_for issued from inside a job runs inline
 * on the calling worker: the outer level already keeps every thread busy. */
#define _POSIX_C_SOURCE 200809L /* posix_memalign, sysconf, dlopen */
#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#  include <immintrin.h>
#  define CPU_RELAX() _mm_pause()
#else
#  define CPU_RELAX() ((void)0)
#endif

#define SPIN_ITERATIONS 20000

struct sinew_pool {
    uint32_t thread_count;       /* including the caller */
    pthread_t* threads;          /* thread_count - 1 workers */
    pthread_mutex_t mutex;       /* guards sleeping and the job fields' publication */
    pthread_cond_t wake;
    pthread_cond_t done;
    pthread_mutex_t submit;      /* one parallel_for at a time per pool */
    atomic_uint epoch;           /* incremented for each job */
    atomic_int quit;
    int sleepers;                /* workers waiting on `wake` */
    /* The current job. */
    sinew_job_fn fn;
    void* data;
    uint32_t count;
    uint32_t chunk_size;
    uint32_t chunk_count;
    atomic_uint next_chunk;
    atomic_uint chunks_left;
    atomic_uint busy;            /* workers inside run_chunks */
};

static _Thread_local int t_in_job;

static void run_chunks(sinew_pool* pool)
{
    for (;;) {
        uint32_t c = atomic_fetch_add_explicit(&pool->next_chunk, 1, memory_order_relaxed);
        if (c >= pool->chunk_count) break;
        uint32_t begin = c * pool->chunk_size;
        uint32_t end = begin + pool->chunk_size;
        if (end > pool->count) end = pool->count;
        pool->fn(pool->data, begin, end);
        if (atomic_fetch_sub_explicit(&pool->chunks_left, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&pool->mutex);
            pthread_cond_broadcast(&pool->done);
            pthread_mutex_unlock(&pool->mutex);
        }
    }
}

static void* worker_main(void* arg)
{
    sinew_pool* pool = (sinew_pool*)arg;
    unsigned seen = atomic_load(&pool->epoch);
    t_in_job = 1;
    for (;;) {
        unsigned now = atomic_load_explicit(&pool->epoch, memory_order_acquire);
        for (int spin = 0; now == seen && spin < SPIN_ITERATIONS && !atomic_load(&pool->quit);
             ++spin) {
            CPU_RELAX();
            now = atomic_load_explicit(&pool->epoch, memory_order_acquire);
        }
        pthread_mutex_lock(&pool->mutex);
        while ((now = atomic_load(&pool->epoch)) == seen && !atomic_load(&pool->quit)) {
            pool->sleepers++;
            pthread_cond_wait(&pool->wake, &pool->mutex);
            pool->sleepers--;
        }
        if (atomic_load(&pool->quit)) {
            pthread_mutex_unlock(&pool->mutex);
            break;
        }
        seen = now;
        /* Registered as busy under the mutex, so the submitter cannot return (and overwrite
         * the job) while this worker still reads it. */
        atomic_fetch_add(&pool->busy, 1);
        pthread_mutex_unlock(&pool->mutex);
        run_chunks(pool);
        if (atomic_fetch_sub(&pool->busy, 1) == 1) {
            pthread_mutex_lock(&pool->mutex);
            pthread_cond_broadcast(&pool->done);
            pthread_mutex_unlock(&pool->mutex);
        }
    }
    return NULL;
}

static void pool_parallel_for(sinew_job_fn fn, void* data, uint32_t count, uint32_t grain,
                              void* user)
{
    sinew_pool* pool = (sinew_pool*)user;
    if (count == 0) return;
    if (grain == 0) grain = 1;
    /* Inline when nested, when single-threaded, or when the range is one chunk. */
    if (t_in_job || pool->thread_count <= 1 || count <= grain) {
        fn(data, 0, count);
        return;
    }
    /* A few chunks per thread balance uneven work without much scheduling overhead. */
    uint32_t max_chunks = pool->thread_count * 4u;
    uint32_t chunks = (count + grain - 1) / grain;
    if (chunks > max_chunks) chunks = max_chunks;
    uint32_t chunk_size = (count + chunks - 1) / chunks;
    chunks = (count + chunk_size - 1) / chunk_size;

    pthread_mutex_lock(&pool->submit);
    pthread_mutex_lock(&pool->mutex);
    /* A worker that woke for the previous job may still be leaving it: the job fields are
     * only written while no worker reads them. */
    while (atomic_load(&pool->busy) != 0) pthread_cond_wait(&pool->done, &pool->mutex);
    pool->fn = fn;
    pool->data = data;
    pool->count = count;
    pool->chunk_size = chunk_size;
    pool->chunk_count = chunks;
    atomic_store(&pool->next_chunk, 0);
    atomic_store(&pool->chunks_left, chunks);
    atomic_fetch_add_explicit(&pool->epoch, 1, memory_order_release);
    if (pool->sleepers > 0) pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->mutex);

    t_in_job = 1;
    run_chunks(pool);
    t_in_job = 0;

    /* Spin a little for the last chunks, then sleep. */
    for (int spin = 0; spin < SPIN_ITERATIONS; ++spin) {
        if (atomic_load(&pool->chunks_left) == 0 && atomic_load(&pool->busy) == 0) break;
        CPU_RELAX();
    }
    pthread_mutex_lock(&pool->mutex);
    while (atomic_load(&pool->chunks_left) != 0 || atomic_load(&pool->busy) != 0) {
        pthread_cond_wait(&pool->done, &pool->mutex);
    }
    pthread_mutex_unlock(&pool->mutex);
    pthread_mutex_unlock(&pool->submit);
}

uint32_t sinew_pool_default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
    if (n > 256) n = 256;
    return (uint32_t)n;
}

sinew_result sinew_pool_create(const sinew_host_api* host, uint32_t threads,
                               sinew_pool** out_pool)
{
    *out_pool = NULL;
    if (threads == 0) threads = sinew_pool_default_threads();
    sinew_pool* pool = (sinew_pool*)sinew_host_calloc(host, 1, sizeof *pool);
    if (!pool) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "thread pool: out of memory");
    pool->thread_count = threads;
    pthread_mutex_init(&pool->mutex, NULL);
    pthread_mutex_init(&pool->submit, NULL);
    pthread_cond_init(&pool->wake, NULL);
    pthread_cond_init(&pool->done, NULL);
    atomic_init(&pool->epoch, 0);
    atomic_init(&pool->quit, 0);
    atomic_init(&pool->next_chunk, 0);
    atomic_init(&pool->chunks_left, 0);
    atomic_init(&pool->busy, 0);
    if (threads > 1) {
        pool->threads = (pthread_t*)sinew_host_calloc(host, threads - 1, sizeof(pthread_t));
        if (!pool->threads) {
            sinew_pool_destroy(host, pool);
            return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "thread pool: out of memory");
        }
        for (uint32_t i = 0; i + 1 < threads; ++i) {
            int err = pthread_create(&pool->threads[i], NULL, worker_main, pool);
            if (err != 0) {
                /* Run with the threads that did start. */
                sinew_host_log(host, SINEW_LOG_WARNING,
                               "thread pool: could not start thread %u of %u (error %d); "
                               "continuing with %u", i + 2, threads, err, i + 1);
                pool->thread_count = i + 1;
                break;
            }
        }
    }
    *out_pool = pool;
    return SINEW_OK;
}

void sinew_pool_destroy(const sinew_host_api* host, sinew_pool* pool)
{
    if (!pool) return;
    if (pool->threads) {
        pthread_mutex_lock(&pool->mutex);
        atomic_store(&pool->quit, 1);
        pthread_cond_broadcast(&pool->wake);
        pthread_mutex_unlock(&pool->mutex);
        for (uint32_t i = 0; i + 1 < pool->thread_count; ++i) pthread_join(pool->threads[i], NULL);
        sinew_host_free(host, pool->threads);
    }
    pthread_mutex_destroy(&pool->mutex);
    pthread_mutex_destroy(&pool->submit);
    pthread_cond_destroy(&pool->wake);
    pthread_cond_destroy(&pool->done);
    sinew_host_free(host, pool);
}

sinew_job_system sinew_pool_job_system(sinew_pool* pool)
{
    sinew_job_system jobs;
    jobs.parallel_for = pool_parallel_for;
    jobs.thread_count = pool->thread_count;
    jobs.user = pool;
    return jobs;
}
