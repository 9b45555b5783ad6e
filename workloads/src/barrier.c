// SPDX-License-Identifier: GPL-2.0
/*
 * barrier: barrier-phased data-parallel work with a deliberate imbalance
 * (the behaviour of PARSEC streamcluster and fluidanimate, whose threads
 * meet at a barrier after every phase).
 *
 * PHASES phases over SIZE cells split evenly between the threads. In each
 * phase every thread updates its cells from the previous phase's values of
 * its neighbours (a 1-D stencil, double-buffered), and one thread, a
 * different one each phase, does IMBALANCE times the work per cell, so
 * the others wait for it at the barrier. Integer arithmetic makes the
 * result exact: it is checked against a serial run of the same phases.
 */
#include <pthread.h>
#include <stdio.h>

#include "ampkit_workload.h"

#define PHASES 16
#define IMBALANCE 4
#define ROUNDS 8	/* mixing rounds per cell per unit of work */

static uint64_t *grid[2];
static long cells;
static int nthreads;
static pthread_barrier_t phase_end;

struct worker {
	int index;
	long first, count;
	struct ampkit_thread_clock clock;
};

static uint64_t update(const uint64_t *in, long i, int phase, int heavy)
{
	uint64_t v = in[i] + in[(i + cells - 1) % cells] + in[(i + 1) % cells];
	int r, rounds = heavy ? ROUNDS * IMBALANCE : ROUNDS;

	for (r = 0; r < rounds; r++)
		v = ampkit_mix64(v + (uint64_t)phase);
	return v;
}

static int heavy_thread(int phase)
{
	return phase % nthreads;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	int phase;
	long i;

	ampkit_thread_begin(&w->clock);
	for (phase = 0; phase < PHASES; phase++) {
		const uint64_t *in = grid[phase & 1];
		uint64_t *out = grid[!(phase & 1)];
		int heavy = heavy_thread(phase) == w->index;

		for (i = w->first; i < w->first + w->count; i++)
			out[i] = update(in, i, phase, heavy);
		pthread_barrier_wait(&phase_end);
	}
	ampkit_thread_end(&w->clock);
	return NULL;
}

int main(int argc, char **argv)
{
	struct ampkit_args args;
	struct worker *w;
	uint64_t *check[2], sum = 0;
	long i, per, rest;
	int t, phase;

	ampkit_parse_args(argc, argv, "barrier-phased stencil with one slow thread per phase", 4,
			  1L << 14, &args);
	if (args.size < args.threads)
		ampkit_fail("barrier: SIZE must be at least THREADS");
	cells = args.size;
	nthreads = args.threads;
	for (i = 0; i < 2; i++) {
		grid[i] = ampkit_xcalloc((size_t)cells, sizeof(uint64_t));
		check[i] = ampkit_xcalloc((size_t)cells, sizeof(uint64_t));
	}
	for (i = 0; i < cells; i++)
		grid[0][i] = check[0][i] = ampkit_mix64((uint64_t)i);
	w = ampkit_xcalloc((size_t)args.threads, sizeof(*w));
	if (pthread_barrier_init(&phase_end, NULL, (unsigned int)args.threads))
		ampkit_fail("barrier: cannot create the barrier");

	per = cells / args.threads;
	rest = cells % args.threads;
	for (t = 0; t < args.threads; t++) {
		w[t].index = t;
		w[t].first = t * per + (t < rest ? t : rest);
		w[t].count = per + (t < rest);
	}
	ampkit_run_workers(work, w, sizeof(*w), args.threads);
	if (ampkit_wrong_result())
		grid[PHASES & 1][0] ^= 1;
	for (phase = 0; phase < PHASES; phase++)
		for (t = 0; t < args.threads; t++)
			for (i = w[t].first; i < w[t].first + w[t].count; i++)
				check[!(phase & 1)][i] = update(check[phase & 1], i, phase,
								heavy_thread(phase) == t);
	for (i = 0; i < cells; i++) {
		if (grid[PHASES & 1][i] != check[PHASES & 1][i])
			ampkit_fail("barrier: cell %ld differs from the serial run", i);
		sum += grid[PHASES & 1][i];
	}
	printf("barrier: %ld cells x %d phases, sum %016llx\n", cells, PHASES,
	       (unsigned long long)sum);
	ampkit_report_workers(&w[0].clock, sizeof(*w), args.threads);
	return 0;
}
