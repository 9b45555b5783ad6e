// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include "ampkit_workload.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 1024

/* For messages; set by ampkit_parse_args. */
static const char *program = "workload";

static void usage(const char *prog, const char *summary, int threads, long size)
{
	fprintf(stderr,
		"%s: %s\n"
		"usage: %s [-t THREADS] [-n SIZE]\n"
		"  -t THREADS  worker threads, 1..%d (default %d)\n"
		"  -n SIZE     problem size, >= 1 (default %ld)\n",
		prog, summary, prog, MAX_THREADS, threads, size);
}

static long parse_positive(const char *prog, const char *opt, const char *s, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *s == '\0' || *end != '\0' || v < 1 || v > max) {
		fprintf(stderr, "%s: %s takes an integer from 1 to %ld, not '%s'\n",
			prog, opt, max, s);
		exit(2);
	}
	return v;
}

void ampkit_parse_args(int argc, char **argv, const char *summary,
		       int default_threads, long default_size,
		       struct ampkit_args *args)
{
	const char *prog = argc > 0 ? argv[0] : program;
	int opt;

	program = prog;
	args->threads = default_threads;
	args->size = default_size;
	while ((opt = getopt(argc, argv, "t:n:h")) != -1) {
		switch (opt) {
		case 't':
			args->threads = (int)parse_positive(prog, "-t", optarg, MAX_THREADS);
			break;
		case 'n':
			args->size = parse_positive(prog, "-n", optarg, 1L << 40);
			break;
		case 'h':
			usage(prog, summary, default_threads, default_size);
			exit(0);
		default:
			usage(prog, summary, default_threads, default_size);
			exit(2);
		}
	}
	if (optind != argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
		usage(prog, summary, default_threads, default_size);
		exit(2);
	}
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t ampkit_now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t ampkit_thread_cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

void ampkit_thread_begin(struct ampkit_thread_clock *c)
{
	c->wall_start = ampkit_now_ns();
	c->cpu_start = ampkit_thread_cpu_ns();
}

void ampkit_thread_end(struct ampkit_thread_clock *c)
{
	c->wall_ns = ampkit_now_ns() - c->wall_start;
	c->cpu_ns = ampkit_thread_cpu_ns() - c->cpu_start;
}

int ampkit_report_threads(const struct ampkit_thread_clock *clocks, int n)
{
	const char *env = getenv("AMPKIT_REPORT_FD");
	FILE *out = stdout;
	int i, fd;

	if (env) {
		fd = atoi(env);
		out = fdopen(dup(fd), "w");
		if (!out)
			return -1;
	}
	for (i = 0; i < n; i++)
		fprintf(out, "thread %d %llu %llu\n", i,
			(unsigned long long)clocks[i].wall_ns,
			(unsigned long long)clocks[i].cpu_ns);
	if (fflush(out) != 0)
		return -1;
	if (out != stdout)
		fclose(out);
	return 0;
}

void *ampkit_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		ampkit_fail("%s: out of memory", program);
	return p;
}

void ampkit_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}
