// SPDX-License-Identifier: GPL-2.0
/*
 * The PARSEC hooks interface, implemented for the kit (``ampkit parsec
 * build`` links it as libhooks.a in place of the suite's own library).
 *
 * A benchmark built with ENABLE_PARSEC_HOOKS calls four functions: bench
 * begin and end around the program, ROI begin and end around the part that
 * is measured. Here the region of interest becomes what the kit measures:
 *
 *  - its bounds go to the runner's report file (AMPKIT_REPORT_FD) as
 *    "roi_begin <ns>" and "roi_end <ns>" (CLOCK_MONOTONIC, the runner's
 *    clock), so the application's record carries its ROI;
 *  - on gem5 (AMPKIT_M5OPS=1) it is a work item: work_begin / work_end with
 *    the application's index in the mix (AMPKIT_APP_ID) as work id and 1 as
 *    thread id, the runner itself using thread id 0 for the whole program;
 *  - where the runner asks for it (AMPKIT_ROI_STATS=1, a run of one
 *    application on gem5), gem5's statistics are dumped at its bounds, as
 *    the kit's own workloads do (ampkit_workload.c), so that the counts a
 *    speedup profile takes are the region's.
 *
 * It is compiled against the suite's own hooks.h, so the benchmark
 * identifiers are the suite's; nothing of the suite's library is used.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hooks.h"
#include "m5ops.h"

/* The runner's id for the whole program is 0; the ROI is item 1 of it. */
#define ROI_THREAD_ID 1

static int ready;
static int report_fd = -1;
static int use_m5ops;
static int roi_stats;
static uint64_t app_id;

static void read_environment(void)
{
	const char *fd = getenv("AMPKIT_REPORT_FD");
	const char *id = getenv("AMPKIT_APP_ID");
	const char *m5 = getenv("AMPKIT_M5OPS");
	const char *stats = getenv("AMPKIT_ROI_STATS");

	report_fd = fd ? atoi(fd) : -1;
	app_id = id ? strtoull(id, NULL, 10) : 0;
	use_m5ops = m5 && !strcmp(m5, "1");
	/* only with m5ops: elsewhere the instruction would raise SIGILL */
	roi_stats = use_m5ops && stats && !strcmp(stats, "1");
	ready = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void note(const char *what, uint64_t ns)
{
	char line[64];
	int n;

	if (report_fd < 0)
		return;
	n = snprintf(line, sizeof(line), "%s %llu\n", what, (unsigned long long)ns);
	/* One write per line: the runner reads whole lines, even after a crash. */
	if (write(report_fd, line, (size_t)n) != n)
		report_fd = -1;
}

void __parsec_bench_begin(enum __parsec_benchmark bench)
{
	(void)bench;
	read_environment();
}

void __parsec_bench_end(void)
{
}

void __parsec_roi_begin(void)
{
	/* Some programs enter their ROI without announcing the benchmark. */
	if (!ready)
		read_environment();
	/*
	 * The statistics' bounds hug the region's timestamps: dumped just
	 * before the first and just after the second is read, the report's
	 * write is outside them.
	 */
	if (roi_stats)
		m5_dump_stats();
	note("roi_begin", now_ns());
	if (use_m5ops)
		m5_work_begin(app_id, ROI_THREAD_ID);
}

void __parsec_roi_end(void)
{
	uint64_t end;

	if (use_m5ops)
		m5_work_end(app_id, ROI_THREAD_ID);
	end = now_ns();
	if (roi_stats)
		m5_dump_stats();
	note("roi_end", end);
}
