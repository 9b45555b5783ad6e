// SPDX-License-Identifier: GPL-2.0
/*
 * stages: a three-stage pipeline whose slow middle stage holds a lock (the
 * structure of PARSEC dedup: fragment, then compress and look up in a
 * shared hash table under a lock, then write out; ferret is alike).
 *
 * Thread 0 is the first stage: it makes SIZE items and passes them on.
 * The middle stage, every thread but the first and the last, takes an
 * item, and while holding the table's lock records the item in a shared
 * table and does the stage's slow work on it: the lock serialises the
 * middle stage, and its holder is the pipeline's bottleneck. The last
 * thread sums what arrives. Bounded queues with condition variables join
 * the stages. With fewer than three threads each thread runs all three
 * stages on its share of the items. The sum and the table's counts are
 * checked against the items made.
 */
#include <pthread.h>
#include <stdio.h>

#include "ampkit_workload.h"

#define QUEUE_LEN 8
#define FIRST_WORK 100		/* mixing rounds per item, first stage */
#define LOCKED_WORK 400		/* middle stage, under the table's lock */
#define TABLE 64

struct queue {
	pthread_mutex_t lock;
	pthread_cond_t not_empty, not_full;
	uint64_t items[QUEUE_LEN];
	int head, count;
	int producers;		/* still putting; 0 and empty means done */
};

static struct queue to_middle, to_last;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t table[TABLE];
static long nitems;
static int nthreads;

struct worker {
	int index;
	uint64_t sum;
	struct ampkit_thread_clock clock;
};

static void queue_init(struct queue *q, int producers)
{
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->not_empty, NULL);
	pthread_cond_init(&q->not_full, NULL);
	q->producers = producers;
}

static void put(struct queue *q, uint64_t item)
{
	pthread_mutex_lock(&q->lock);
	while (q->count == QUEUE_LEN)
		pthread_cond_wait(&q->not_full, &q->lock);
	q->items[(q->head + q->count) % QUEUE_LEN] = item;
	q->count++;
	pthread_cond_signal(&q->not_empty);
	pthread_mutex_unlock(&q->lock);
}

/* One producer is done; the last one wakes every consumer. */
static void producer_done(struct queue *q)
{
	pthread_mutex_lock(&q->lock);
	if (--q->producers == 0)
		pthread_cond_broadcast(&q->not_empty);
	pthread_mutex_unlock(&q->lock);
}

/* Returns 0 once every producer is done and the queue is drained. */
static int get(struct queue *q, uint64_t *item)
{
	pthread_mutex_lock(&q->lock);
	while (q->count == 0 && q->producers > 0)
		pthread_cond_wait(&q->not_empty, &q->lock);
	if (q->count == 0) {
		pthread_mutex_unlock(&q->lock);
		return 0;
	}
	*item = q->items[q->head];
	q->head = (q->head + 1) % QUEUE_LEN;
	q->count--;
	pthread_cond_signal(&q->not_full);
	pthread_mutex_unlock(&q->lock);
	return 1;
}

static uint64_t rounds(uint64_t x, int n)
{
	while (n--)
		x = ampkit_mix64(x);
	return x;
}

static uint64_t first_stage(long i)
{
	return rounds((uint64_t)i, FIRST_WORK);
}

static uint64_t middle_stage(uint64_t v)
{
	pthread_mutex_lock(&table_lock);
	table[v % TABLE]++;
	v = rounds(v, LOCKED_WORK);
	pthread_mutex_unlock(&table_lock);
	return v;
}

static void *run(void *arg)
{
	struct worker *w = arg;
	uint64_t v;
	long i;

	ampkit_thread_begin(&w->clock);
	if (nthreads < 3) {			/* every stage, on a share of the items */
		for (i = w->index; i < nitems; i += nthreads)
			w->sum += middle_stage(first_stage(i));
	} else if (w->index == 0) {
		for (i = 0; i < nitems; i++)
			put(&to_middle, first_stage(i));
		producer_done(&to_middle);
	} else if (w->index < nthreads - 1) {
		while (get(&to_middle, &v))
			put(&to_last, middle_stage(v));
		producer_done(&to_last);
	} else {
		while (get(&to_last, &v))
			w->sum += v;
	}
	ampkit_thread_end(&w->clock);
	return NULL;
}

int main(int argc, char **argv)
{
	struct ampkit_args args;
	struct ampkit_thread_clock *clocks;
	struct worker *w;
	pthread_t *tids;
	uint64_t sum = 0, expected = 0, counted = 0;
	long i;
	int t;

	ampkit_parse_args(argc, argv, "three-stage pipeline whose middle stage holds a lock", 4,
			  2000, &args);
	nitems = args.size;
	nthreads = args.threads;
	queue_init(&to_middle, 1);
	queue_init(&to_last, nthreads - 2);
	w = ampkit_xcalloc((size_t)args.threads, sizeof(*w));
	tids = ampkit_xcalloc((size_t)args.threads, sizeof(*tids));
	clocks = ampkit_xcalloc((size_t)args.threads, sizeof(*clocks));
	for (t = 0; t < args.threads; t++) {
		w[t].index = t;
		if (pthread_create(&tids[t], NULL, run, &w[t]))
			ampkit_fail("stages: cannot create thread %d", t);
	}
	for (t = 0; t < args.threads; t++) {
		pthread_join(tids[t], NULL);
		clocks[t] = w[t].clock;
		sum += w[t].sum;
	}
	for (i = 0; i < nitems; i++)
		expected += rounds(first_stage(i), LOCKED_WORK);
	for (i = 0; i < TABLE; i++)
		counted += table[i];
	if (sum != expected || counted != (uint64_t)nitems)
		ampkit_fail("stages: %llu of %ld items recorded, sum %llx, expected %llx",
			    (unsigned long long)counted, nitems, (unsigned long long)sum,
			    (unsigned long long)expected);
	printf("stages: %ld items through 3 stages, sum %016llx\n", nitems,
	       (unsigned long long)sum);
	if (ampkit_report_threads(clocks, args.threads))
		ampkit_fail("stages: cannot write the thread report");
	return 0;
}
