// SPDX-License-Identifier: GPL-2.0
/*
 * contend: fine-grained lock contention on shared cells (the behaviour of
 * lock-heavy parts of PARSEC fluidanimate and SPLASH-2 radiosity).
 *
 * Each thread performs SIZE updates. An update does some private work,
 * takes one mutex, mixes a value into one of a few shared cells, and lets
 * go. Every update adds a known amount to a cell, so the final sum of the
 * cells is known in advance and checked.
 *
 * Half of an update's work is done holding the lock, and a hold lasts
 * several microseconds: longer than a futex system call takes to put a
 * waiter to sleep. With a short hold a thread that finds the lock taken
 * is refused by the kernel (the word changed before it got there) and
 * never sleeps, so a lock-bound program showed almost no waiting; with
 * this one, threads that meet on the lock sleep on it, whether they meet
 * on two CPUs or share one and the holder is preempted.
 *
 * Whether the mutex is ever contended, and so ever enters the kernel,
 * depends on how the threads happen to overlap. With -b it certainly is:
 * the first thread to take the lock keeps it until every other thread is
 * asleep on it in a futex wait, and a little longer (ampkit_convoy_hold),
 * and the program fails if they were not all seen asleep.
 */
#include <pthread.h>
#include <stdio.h>

#include "ampkit_workload.h"

#define CELLS 8
#define WORK_OUTSIDE 1000	/* mixing rounds outside the lock */
#define WORK_INSIDE 1000	/* mixing rounds while holding it */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t cells[CELLS];
static uint64_t noise[CELLS];
static int convoy;		/* -b */
static int convoy_asleep = -1;	/* how many the first holder saw asleep on the lock */

static const struct ampkit_flag flags[] = {
	{ 'b', "the first holder keeps the lock until every other thread sleeps on it",
	  &convoy },
	{ 0, NULL, NULL },
};

struct worker {
	int index;
	long updates;
	uint64_t sink;
	struct ampkit_thread_clock clock;
};

static void *update(void *arg)
{
	struct worker *w = arg;
	long k;

	ampkit_thread_begin(&w->clock);
	if (convoy)
		ampkit_convoy_join(w->index);
	for (k = 0; k < w->updates; k++) {
		uint64_t v = ampkit_mix64_rounds((uint64_t)w->index << 32 | (uint64_t)k, WORK_OUTSIDE);
		int cell = (int)(v % CELLS);

		pthread_mutex_lock(&lock);
		if (convoy) {
			int asleep = ampkit_convoy_hold(w->index, AMPKIT_CONVOY_HOLD_NS);

			if (asleep >= 0)
				convoy_asleep = asleep;
		}
		cells[cell] += (uint64_t)w->index + 1;
		noise[cell] = ampkit_mix64_rounds(noise[cell] ^ v, WORK_INSIDE);
		pthread_mutex_unlock(&lock);
		w->sink ^= v;
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
	uint64_t sum = 0, expected = 0;
	int i;

	ampkit_parse_args_flags(argc, argv, "fine-grained mutex contention on shared cells", 4,
				250, flags, &args);
	if (convoy && args.threads < 2) {
		fprintf(stderr, "contend: -b needs at least 2 threads\n");
		return 2;
	}
	w = ampkit_xcalloc((size_t)args.threads, sizeof(*w));

	for (i = 0; i < args.threads; i++) {
		w[i].index = i;
		w[i].updates = args.size;
		expected += (uint64_t)(i + 1) * (uint64_t)args.size;
	}
	if (convoy)
		ampkit_convoy_init(args.threads);
	ampkit_run_workers(update, w, sizeof(*w), args.threads);
	if (ampkit_wrong_result())
		cells[0]++;
	/* every other thread needs the lock for its first update: all must have slept */
	if (convoy && convoy_asleep != args.threads - 1)
		ampkit_fail("contend: -b: %d of the other %d threads were seen asleep on the lock",
			    convoy_asleep, args.threads - 1);
	for (i = 0; i < CELLS; i++)
		sum += cells[i];
	if (sum != expected)
		ampkit_fail("contend: cells sum to %llu, expected %llu (lost updates)",
			    (unsigned long long)sum, (unsigned long long)expected);
	printf("contend: %d threads x %ld locked updates, sum %llu", args.threads, args.size,
	       (unsigned long long)sum);
	if (convoy)
		printf(", %d slept on the first holder", convoy_asleep);
	printf("\n");
	ampkit_report_workers(&w[0].clock, sizeof(*w), args.threads);
	return 0;
}
