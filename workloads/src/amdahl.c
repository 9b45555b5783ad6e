// SPDX-License-Identifier: GPL-2.0
/*
 * amdahl: fork-join with a serial section (the shape Amdahl's law is
 * about, and of the serial phases between parallel loops in most
 * PARSEC and SPLASH-2 programs).
 *
 * ROUNDS rounds. In each, thread 0 alone runs the serial section (a chain
 * of SERIAL_SHARE percent of the round's work in which every step depends
 * on the one before) while the others wait at a barrier; then all threads
 * share the parallel section, SIZE independent items, and meet again.
 * A big core shortens the serial section for everyone, which is what a
 * scheduler that finds it should exploit. The result is checked against a
 * serial run.
 */
#include <pthread.h>
#include <stdio.h>

#include "ampkit_workload.h"

#define ROUNDS 8
#define SERIAL_SHARE 20		/* percent of each round's work that is serial */
#define ITEM_ROUNDS 16		/* mixing rounds per parallel item */

static pthread_barrier_t fork_point, join_point;
static uint64_t seed_of_round[ROUNDS + 1];
static uint64_t *partial;
static long items;
static int nthreads;

struct worker {
	int index;
	struct ampkit_thread_clock clock;
};

/* The serial chain: as long as SERIAL_SHARE percent of the round. */
static uint64_t serial_section(uint64_t x)
{
	return ampkit_mix64_rounds(x, items * ITEM_ROUNDS * SERIAL_SHARE / (100 - SERIAL_SHARE));
}

static uint64_t item(uint64_t seed, long i)
{
	return ampkit_mix64_rounds(seed ^ (uint64_t)i, ITEM_ROUNDS);
}

static void *work(void *arg)
{
	struct worker *w = arg;
	int round;
	long i;

	ampkit_thread_begin(&w->clock);
	for (round = 0; round < ROUNDS; round++) {
		uint64_t sum = 0;

		if (w->index == 0)
			seed_of_round[round + 1] = serial_section(seed_of_round[round]);
		pthread_barrier_wait(&fork_point);
		for (i = w->index; i < items; i += nthreads)
			sum += item(seed_of_round[round + 1], i);
		partial[w->index] += sum;
		pthread_barrier_wait(&join_point);
	}
	ampkit_thread_end(&w->clock);
	return NULL;
}

int main(int argc, char **argv)
{
	struct ampkit_args args;
	struct worker *w;
	uint64_t total = 0, expected = 0, seed = 1;
	int t, round;
	long i;

	ampkit_parse_args(argc, argv, "fork-join rounds with a serial section on one thread", 4,
			  4096, &args);
	items = args.size;
	nthreads = args.threads;
	seed_of_round[0] = seed;
	partial = ampkit_xcalloc((size_t)args.threads, sizeof(*partial));
	w = ampkit_xcalloc((size_t)args.threads, sizeof(*w));
	if (pthread_barrier_init(&fork_point, NULL, (unsigned int)args.threads) ||
	    pthread_barrier_init(&join_point, NULL, (unsigned int)args.threads))
		ampkit_fail("amdahl: cannot create the barriers");
	for (t = 0; t < args.threads; t++)
		w[t].index = t;
	ampkit_run_workers(work, w, sizeof(*w), args.threads);
	if (ampkit_wrong_result())
		partial[0] ^= 1;
	for (t = 0; t < args.threads; t++)
		total += partial[t];
	for (round = 0; round < ROUNDS; round++) {
		seed = serial_section(seed);
		for (i = 0; i < items; i++)
			expected += item(seed, i);
	}
	if (total != expected)
		ampkit_fail("amdahl: the parallel sections sum to %llx, expected %llx",
			    (unsigned long long)total, (unsigned long long)expected);
	printf("amdahl: %d rounds of %ld items, %d%% serial, sum %016llx\n", ROUNDS, items,
	       SERIAL_SHARE, (unsigned long long)total);
	ampkit_report_workers(&w[0].clock, sizeof(*w), args.threads);
	return 0;
}
