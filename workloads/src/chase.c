// SPDX-License-Identifier: GPL-2.0
/*
 * chase: pointer chasing, bound by memory latency (the behaviour of PARSEC
 * canneal's random walks over its netlist).
 *
 * Each thread builds its own ring of SIZE nodes in a random order
 * (Sattolo's algorithm gives a single cycle through every node) and then
 * follows it for LAPS laps: every load depends on the one before, so the
 * core waits for memory at every step. A single cycle returns to its start
 * after exactly SIZE steps and visits every node once per lap, so the sum
 * of the visited indices is known and checked.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "ampkit_workload.h"

#define LAPS 4

struct worker {
	int index;
	long nodes;
	uint64_t sum;
	long returns;
	struct ampkit_thread_clock clock;
};

static void *walk(void *arg)
{
	struct worker *w = arg;
	long *next = ampkit_xcalloc((size_t)w->nodes, sizeof(*next));
	long *order = ampkit_xcalloc((size_t)w->nodes, sizeof(*order));
	long i, j, tmp, steps, node = 0;

	ampkit_thread_begin(&w->clock);
	for (i = 0; i < w->nodes; i++)
		order[i] = i;
	for (i = w->nodes - 1; i > 0; i--) {	/* Sattolo: j < i, one cycle */
		j = (long)(ampkit_mix64((uint64_t)w->index << 40 ^ (uint64_t)i) % (uint64_t)i);
		tmp = order[i];
		order[i] = order[j];
		order[j] = tmp;
	}
	for (i = 0; i < w->nodes; i++)
		next[order[i]] = order[(i + 1) % w->nodes];
	for (steps = 0; steps < LAPS * w->nodes; steps++) {
		node = next[node];
		w->sum += (uint64_t)node;
		w->returns += node == 0;
	}
	ampkit_thread_end(&w->clock);
	free(next);
	free(order);
	return NULL;
}

int main(int argc, char **argv)
{
	struct ampkit_args args;
	struct worker *w;
	uint64_t total = 0, lap;
	int t;

	ampkit_parse_args(argc, argv, "pointer chasing around a random ring per thread", 4,
			  1L << 16, &args);
	if (args.size < 2)
		ampkit_fail("chase: SIZE must be at least 2");
	w = ampkit_xcalloc((size_t)args.threads, sizeof(*w));
	for (t = 0; t < args.threads; t++) {
		w[t].index = t;
		w[t].nodes = args.size;
	}
	ampkit_run_workers(walk, w, sizeof(*w), args.threads);
	if (ampkit_wrong_result())
		w[0].sum ^= 1;
	lap = (uint64_t)args.size * (uint64_t)(args.size - 1) / 2;
	for (t = 0; t < args.threads; t++) {
		if (w[t].returns != LAPS || w[t].sum != LAPS * lap)
			ampkit_fail("chase: thread %d's ring is not one cycle of %ld nodes", t,
				    args.size);
		total += w[t].sum;
	}
	printf("chase: %d rings of %ld nodes x %d laps, sum %llu\n", args.threads, args.size,
	       LAPS, (unsigned long long)total);
	ampkit_report_workers(&w[0].clock, sizeof(*w), args.threads);
	return 0;
}
