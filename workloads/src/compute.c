// SPDX-License-Identifier: GPL-2.0
/*
 * compute: compute-bound option pricing with high instruction-level
 * parallelism (the behaviour of PARSEC blackscholes and swaptions).
 *
 * SIZE options are generated deterministically and split evenly between
 * the threads, which share nothing. Each thread prices a call and a put for
 * each of its options with the Black-Scholes formula and checks put-call
 * parity, C - P = S - K exp(-rT), which holds for any correct evaluation.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>

#include "ampkit_workload.h"

struct worker {
	long first, count;
	double call_sum;
	long parity_errors;
	struct ampkit_thread_clock clock;
};

static double uniform(uint64_t seed, double lo, double hi)
{
	return lo + (hi - lo) * (double)(ampkit_mix64(seed) >> 11) / 9007199254740992.0;
}

static double cndf(double x)
{
	return 0.5 * erfc(-x / sqrt(2.0));
}

static void *price(void *arg)
{
	struct worker *w = arg;
	long i;

	ampkit_thread_begin(&w->clock);
	for (i = w->first; i < w->first + w->count; i++) {
		uint64_t s = (uint64_t)i * 5;
		double spot = uniform(s, 10.0, 200.0);
		double strike = uniform(s + 1, 10.0, 200.0);
		double rate = uniform(s + 2, 0.0, 0.1);
		double vol = uniform(s + 3, 0.05, 0.9);
		double t = uniform(s + 4, 0.1, 5.0);
		double sqrt_t = sqrt(t);
		double d1 = (log(spot / strike) + (rate + 0.5 * vol * vol) * t) / (vol * sqrt_t);
		double d2 = d1 - vol * sqrt_t;
		double disc = strike * exp(-rate * t);
		double call = spot * cndf(d1) - disc * cndf(d2);
		double put = disc * cndf(-d2) - spot * cndf(-d1);

		if (fabs((call - put) - (spot - disc)) > 1e-9 * (spot + strike))
			w->parity_errors++;
		w->call_sum += call;
	}
	ampkit_thread_end(&w->clock);
	return NULL;
}

int main(int argc, char **argv)
{
	struct ampkit_args args;
	struct worker *w;
	double total = 0.0;
	long errors = 0;
	int i;

	ampkit_parse_args(argc, argv, "compute-bound Black-Scholes pricing", 1, 20000, &args);
	w = ampkit_xcalloc((size_t)args.threads, sizeof(*w));

	for (i = 0; i < args.threads; i++) {
		w[i].first = args.size * i / args.threads;
		w[i].count = args.size * (i + 1) / args.threads - w[i].first;
	}
	ampkit_run_workers(price, w, sizeof(*w), args.threads);
	if (ampkit_wrong_result())
		w[0].parity_errors++;
	for (i = 0; i < args.threads; i++) {
		total += w[i].call_sum;
		errors += w[i].parity_errors;
	}
	if (errors)
		ampkit_fail("compute: %ld of %ld options violate put-call parity", errors, args.size);
	printf("compute: %ld options priced, mean call %.6f\n", args.size, total / (double)args.size);
	ampkit_report_workers(&w[0].clock, sizeof(*w), args.threads);
	return 0;
}
