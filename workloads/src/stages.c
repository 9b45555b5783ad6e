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
 *
 * With -b the threads certainly wait on each other in the kernel, however
 * they happen to overlap: the first thread to take the table's lock keeps
 * it until every other thread is asleep in a futex wait or done, and a
 * little longer (ampkit_convoy_hold). Other middle-stage threads sleep on
 * the lock, the last stage on its empty queue, the first stage on its full
 * one (unless it made every item already).
 */
#include <pthread.h>
#include <stdio.h>

#include "ampkit_workload.h"

#define QUEUE_LEN 8
/*
 * A middle-stage hold lasts several microseconds, longer than a futex
 * system call takes to put a waiter to sleep: with holds of 400 rounds a
 * thread that found the lock taken was refused by the kernel (the word had
 * changed before it got there) and tried again, so on gem5 the program
 * showed threads busy rather than waiting (9% to 22% of their lives
 * blocked, its time set by where its threads happened to run).
 */
#define FIRST_WORK 1000		/* mixing rounds per item, first stage */
#define LOCKED_WORK 4000	/* middle stage, under the table's lock */
#define TABLE 64

static struct ampkit_queue to_middle, to_last;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t table[TABLE];
static long nitems;
static int nthreads;
static int convoy;		/* -b */
static int convoy_asleep = -1;	/* how many the first holder saw asleep */

static const struct ampkit_flag flags[] = {
	{ 'b', "the first holder of the table's lock keeps it until every other thread sleeps",
	  &convoy },
	{ 0, NULL, NULL },
};

struct worker {
	int index;
	uint64_t sum;
	struct ampkit_thread_clock clock;
};

static uint64_t first_stage(long i)
{
	return ampkit_mix64_rounds((uint64_t)i, FIRST_WORK);
}

static uint64_t middle_stage(uint64_t v, int index)
{
	pthread_mutex_lock(&table_lock);
	if (convoy) {
		int asleep = ampkit_convoy_hold(index, AMPKIT_CONVOY_HOLD_NS);

		if (asleep >= 0)
			convoy_asleep = asleep;
	}
	table[v % TABLE]++;
	v = ampkit_mix64_rounds(v, LOCKED_WORK);
	pthread_mutex_unlock(&table_lock);
	return v;
}

static void *run(void *arg)
{
	struct worker *w = arg;
	uint64_t v;
	long i;

	ampkit_thread_begin(&w->clock);
	if (convoy)
		ampkit_convoy_join(w->index);
	if (nthreads < 3) {			/* every stage, on a share of the items */
		for (i = w->index; i < nitems; i += nthreads)
			w->sum += middle_stage(first_stage(i), w->index);
	} else if (w->index == 0) {
		for (i = 0; i < nitems; i++)
			ampkit_queue_put(&to_middle, first_stage(i));
		ampkit_queue_producer_done(&to_middle);
	} else if (w->index < nthreads - 1) {
		while (ampkit_queue_get(&to_middle, &v))
			ampkit_queue_put(&to_last, middle_stage(v, w->index));
		ampkit_queue_producer_done(&to_last);
	} else {
		while (ampkit_queue_get(&to_last, &v))
			w->sum += v;
	}
	if (convoy)
		ampkit_convoy_leave(w->index);
	ampkit_thread_end(&w->clock);
	return NULL;
}

int main(int argc, char **argv)
{
	struct ampkit_args args;
	struct worker *w;
	uint64_t sum = 0, expected = 0, counted = 0;
	long i;
	int t;

	ampkit_parse_args_flags(argc, argv, "three-stage pipeline whose middle stage holds a lock",
				4, 200, flags, &args);
	nitems = args.size;
	nthreads = args.threads;
	/* the last stage sleeps behind the holder; with two threads, the other's item */
	if (convoy && (nthreads < 2 || (nthreads == 2 && nitems < 2))) {
		fprintf(stderr, "stages: -b needs at least 2 threads (and 2 items with 2)\n");
		return 2;
	}
	ampkit_queue_init(&to_middle, QUEUE_LEN, 1);
	ampkit_queue_init(&to_last, QUEUE_LEN, nthreads - 2);
	w = ampkit_xcalloc((size_t)args.threads, sizeof(*w));
	for (t = 0; t < args.threads; t++)
		w[t].index = t;
	if (convoy)
		ampkit_convoy_init(args.threads);
	ampkit_run_workers(run, w, sizeof(*w), args.threads);
	if (ampkit_wrong_result())
		w[0].sum ^= 1;
	if (convoy && convoy_asleep < 1)
		ampkit_fail("stages: -b: no other thread was seen asleep behind the first holder");
	for (t = 0; t < args.threads; t++)
		sum += w[t].sum;
	for (i = 0; i < nitems; i++)
		expected += ampkit_mix64_rounds(first_stage(i), LOCKED_WORK);
	for (i = 0; i < TABLE; i++)
		counted += table[i];
	if (sum != expected || counted != (uint64_t)nitems)
		ampkit_fail("stages: %llu of %ld items recorded, sum %llx, expected %llx",
			    (unsigned long long)counted, nitems, (unsigned long long)sum,
			    (unsigned long long)expected);
	printf("stages: %ld items through 3 stages, sum %016llx", nitems, (unsigned long long)sum);
	if (convoy)
		printf(", %d slept on the first holder", convoy_asleep);
	printf("\n");
	ampkit_report_workers(&w[0].clock, sizeof(*w), args.threads);
	return 0;
}
