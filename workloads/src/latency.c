// SPDX-License-Identifier: GPL-2.0
/*
 * latency: dependent loads over a ring larger than any cluster's L2, bound
 * by DRAM latency on every core type (the behaviour of SPEC mcf and of
 * PARSEC canneal at its native input).
 *
 * chase's ring grows with its size, so it fits a cache at some sizes and
 * not at others. Here each thread's ring is fixed at RING_NODES nodes of 8
 * bytes (8 MiB: four times the largest L2 of the kit's platforms, sixteen
 * times the little cluster's), and SIZE counts the thread's steps around
 * it in units of 1024. A big core waits for memory as long as a little
 * one, so the program's speedup is close to 1 plus what the faster clock
 * and wider core gain between the misses: the low end of the speedups an
 * asymmetric machine sees, which the other workloads do not reach.
 *
 * The ring is the full-period linear congruential sequence modulo
 * RING_NODES (a = 1 mod 4, c odd: every node once per lap), so it is
 * written in one sequential pass before the region of interest, and the
 * node a step reaches is known without the ring: the self-check replays
 * each thread's walk by arithmetic. Each thread has its own increment, so
 * no two threads walk the same sequence.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "ampkit_workload.h"

#define RING_NODES (1UL << 20)
#define RING_MASK (RING_NODES - 1)
#define MULTIPLIER 1664525UL
#define STEPS_PER_UNIT 1024L

struct worker {
	uint64_t *next;
	unsigned long increment;
	long steps;
	uint64_t sum;
	struct ampkit_thread_clock clock;
};

static uint64_t successor(uint64_t node, unsigned long increment)
{
	return (MULTIPLIER * node + increment) & RING_MASK;
}

static void *walk(void *arg)
{
	struct worker *w = arg;
	uint64_t node = 0, sum = 0;
	long step;

	ampkit_thread_begin(&w->clock);
	for (step = 0; step < w->steps; step++) {
		node = w->next[node];
		sum += node;
	}
	w->sum = sum;
	ampkit_thread_end(&w->clock);
	return NULL;
}

int main(int argc, char **argv)
{
	struct ampkit_args args;
	struct worker *w;
	uint64_t expected, node;
	unsigned long i;
	long step;
	int t;

	ampkit_parse_args(argc, argv,
			  "dependent loads around a fixed 8 MiB ring per thread (SIZE: steps / 1024)",
			  1, 256, &args);
	if (args.size > AMPKIT_MAX_SIZE / STEPS_PER_UNIT)
		ampkit_fail("latency: SIZE must be at most %ld", AMPKIT_MAX_SIZE / STEPS_PER_UNIT);
	w = ampkit_xcalloc((size_t)args.threads, sizeof(*w));
	for (t = 0; t < args.threads; t++) {
		w[t].increment = 2UL * (unsigned long)t + 1;
		w[t].steps = args.size * STEPS_PER_UNIT;
		w[t].next = ampkit_xcalloc(RING_NODES, sizeof(*w[t].next));
		for (i = 0; i < RING_NODES; i++)
			w[t].next[i] = successor(i, w[t].increment);
	}
	ampkit_run_workers(walk, w, sizeof(*w), args.threads);
	if (ampkit_wrong_result())
		w[0].sum ^= 1;
	for (t = 0; t < args.threads; t++) {
		expected = 0;
		node = 0;
		for (step = 0; step < w[t].steps; step++) {
			node = successor(node, w[t].increment);
			expected += node;
		}
		if (w[t].sum != expected)
			ampkit_fail("latency: thread %d's walk summed %llu, not %llu", t,
				    (unsigned long long)w[t].sum, (unsigned long long)expected);
		free(w[t].next);
	}
	printf("latency: %d rings of %lu nodes, %ld steps each\n", args.threads, RING_NODES,
	       args.size * STEPS_PER_UNIT);
	ampkit_report_workers(&w[0].clock, sizeof(*w), args.threads);
	return 0;
}
