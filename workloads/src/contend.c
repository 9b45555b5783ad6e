// SPDX-License-Identifier: GPL-2.0
/*
 * contend: fine-grained lock contention on shared cells (the behaviour of
 * lock-heavy parts of PARSEC fluidanimate and SPLASH-2 radiosity).
 *
 * Each thread performs SIZE updates. An update does some private work,
 * takes one mutex, mixes a value into one of a few shared cells, and lets
 * go. Every update adds a known amount to a cell, so the final sum of the
 * cells is known in advance and checked.
 */
#include <pthread.h>
#include <stdio.h>

#include "ampkit_workload.h"

#define CELLS 8
#define WORK_OUTSIDE 200	/* mixing rounds outside the lock */
#define WORK_INSIDE 50		/* mixing rounds while holding it */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t cells[CELLS];
static uint64_t noise[CELLS];

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
	for (k = 0; k < w->updates; k++) {
		uint64_t v = ampkit_mix64_rounds((uint64_t)w->index << 32 | (uint64_t)k, WORK_OUTSIDE);
		int cell = (int)(v % CELLS);

		pthread_mutex_lock(&lock);
		cells[cell] += (uint64_t)w->index + 1;
		noise[cell] = ampkit_mix64_rounds(noise[cell] ^ v, WORK_INSIDE);
		pthread_mutex_unlock(&lock);
		w->sink ^= v;
	}
	ampkit_thread_end(&w->clock);
	return NULL;
}

int main(int argc, char **argv)
{
	struct ampkit_args args;
	struct worker *w;
	uint64_t sum = 0, expected = 0;
	int i;

	ampkit_parse_args(argc, argv, "fine-grained mutex contention on shared cells", 4, 2000,
			  &args);
	w = ampkit_xcalloc((size_t)args.threads, sizeof(*w));

	for (i = 0; i < args.threads; i++) {
		w[i].index = i;
		w[i].updates = args.size;
		expected += (uint64_t)(i + 1) * (uint64_t)args.size;
	}
	ampkit_run_workers(update, w, sizeof(*w), args.threads);
	for (i = 0; i < CELLS; i++)
		sum += cells[i];
	if (sum != expected)
		ampkit_fail("contend: cells sum to %llu, expected %llu (lost updates)",
			    (unsigned long long)sum, (unsigned long long)expected);
	printf("contend: %d threads x %ld locked updates, sum %llu\n", args.threads, args.size,
	       (unsigned long long)sum);
	ampkit_report_workers(&w[0].clock, sizeof(*w), args.threads);
	return 0;
}
