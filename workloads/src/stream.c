// SPDX-License-Identifier: GPL-2.0
/*
 * stream: memory streaming, bound by bandwidth rather than by the core
 * (the behaviour of SPLASH-2 ocean's grid sweeps and PARSEC canneal's
 * large working set).
 *
 * Three arrays of SIZE 64-bit integers, far larger than the caches at the
 * default size, are split evenly between the threads. Each of PASSES
 * passes runs the triad a = b + k * c and then c = a ^ b over every
 * element: two loads and one store per element per step and almost no
 * arithmetic. Integer arithmetic is exact, so every element is checked
 * against a serial replay of its own history at the end.
 */
#include <pthread.h>
#include <stdio.h>

#include "ampkit_workload.h"

#define PASSES 8

static uint64_t *a, *b, *c;

struct worker {
	long first, count;
	struct ampkit_thread_clock clock;
};

static uint64_t init_b(long i)
{
	return ampkit_mix64((uint64_t)i) & 0xffffff;
}

static uint64_t init_c(long i)
{
	return (uint64_t)i * 7 + 3;
}

static uint64_t factor(int pass)
{
	return (uint64_t)pass * 2 + 3;
}

static void *sweep(void *arg)
{
	struct worker *w = arg;
	long i, end = w->first + w->count;
	int pass;

	ampkit_thread_begin(&w->clock);
	for (i = w->first; i < end; i++) {	/* first touch: pages near the thread */
		b[i] = init_b(i);
		c[i] = init_c(i);
	}
	for (pass = 0; pass < PASSES; pass++) {
		uint64_t k = factor(pass);

		for (i = w->first; i < end; i++)
			a[i] = b[i] + k * c[i];
		for (i = w->first; i < end; i++)
			c[i] = a[i] ^ b[i];
	}
	ampkit_thread_end(&w->clock);
	return NULL;
}

int main(int argc, char **argv)
{
	struct ampkit_args args;
	struct worker *w;
	uint64_t checksum = 0;
	long i, per, rest;
	int t, pass;

	ampkit_parse_args(argc, argv, "memory streaming: triads over arrays larger than caches",
			  4, 1L << 18, &args);
	if (args.size < args.threads)
		ampkit_fail("stream: SIZE must be at least THREADS");
	a = ampkit_xcalloc((size_t)args.size, sizeof(*a));
	b = ampkit_xcalloc((size_t)args.size, sizeof(*b));
	c = ampkit_xcalloc((size_t)args.size, sizeof(*c));
	w = ampkit_xcalloc((size_t)args.threads, sizeof(*w));

	per = args.size / args.threads;
	rest = args.size % args.threads;
	for (t = 0; t < args.threads; t++) {
		w[t].first = t * per + (t < rest ? t : rest);
		w[t].count = per + (t < rest);
	}
	ampkit_run_workers(sweep, w, sizeof(*w), args.threads);
	if (ampkit_wrong_result())
		a[0] ^= 1;
	for (i = 0; i < args.size; i++) {
		uint64_t bi = init_b(i), ci = init_c(i), ai = 0;

		for (pass = 0; pass < PASSES; pass++) {
			ai = bi + factor(pass) * ci;
			ci = ai ^ bi;
		}
		if (a[i] != ai || c[i] != ci)
			ampkit_fail("stream: element %ld is wrong", i);
		checksum += ai ^ ci;
	}
	printf("stream: %ld elements x %d passes, checksum %016llx\n", args.size, PASSES,
	       (unsigned long long)checksum);
	ampkit_report_workers(&w[0].clock, sizeof(*w), args.threads);
	return 0;
}
