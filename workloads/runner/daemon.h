/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the kit's guest daemons share (ampkit-online, ampkit-contention):
 * the lines the runner writes on their standard input, read as they
 * come, and the wait for them or for the next period (ampkit-init.c,
 * "daemons beside the run"); and CPU lists, which the runner reads and
 * writes too. Its includer defines _GNU_SOURCE (cpu_set_t).
 */
#ifndef AMPKIT_DAEMON_H
#define AMPKIT_DAEMON_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>

struct line_reader {
	char buf[4096];
	size_t len;	/* the part of a line read so far */
};

/*
 * Reads what is there on @fd and calls @each with every whole line, its
 * newline dropped. Returns 1 while the pipe is open, 0 at its end, -1
 * for a line longer than the reader holds.
 */
int read_lines(struct line_reader *r, int fd, void (*each)(char *line, void *arg), void *arg);

/*
 * Waits until @fd has input or the clock (ampkit_now_ns) reaches
 * @deadline_ns; 1 when there is input.
 */
int wait_input(int fd, uint64_t deadline_ns);

/* The CPU time, user and system, @usage counts, in ns. */
uint64_t cpu_ns_of(const struct rusage *usage);

/* CPU @cpu's capacity as the kernel gives it (cpu_capacity); 1024 where it gives none. */
unsigned long cpu_capacity(int cpu);

/*
 * A CPU list, "0,2,3" (digits between single commas), into @set: 0, or -1
 * when @s is not one or names no CPU below CPU_SETSIZE.
 */
int parse_cpu_list(const char *s, cpu_set_t *set);

struct sbuf;

/* @set as a JSON array of its CPU numbers, appended to @sb. */
void sb_cpu_list(struct sbuf *sb, const cpu_set_t *set);

#endif
