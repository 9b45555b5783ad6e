// SPDX-License-Identifier: GPL-2.0
/* What the kit's guest daemons share: daemon.h. */
#define _GNU_SOURCE
#include "daemon.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ampkit_workload.h"
#include "sbuf.h"

int read_lines(struct line_reader *r, int fd, void (*each)(char *line, void *arg), void *arg)
{
	char *line, *nl;
	ssize_t got;

	if (r->len == sizeof(r->buf) - 1)
		return -1;
	got = read(fd, r->buf + r->len, sizeof(r->buf) - 1 - r->len);
	if (got < 0)
		return errno == EINTR || errno == EAGAIN;
	if (got == 0)
		return 0;
	r->len += (size_t)got;
	r->buf[r->len] = '\0';
	line = r->buf;
	while ((nl = strchr(line, '\n'))) {
		*nl = '\0';
		each(line, arg);
		line = nl + 1;
	}
	r->len = strlen(line);
	memmove(r->buf, line, r->len + 1);
	return 1;
}

int wait_input(int fd, uint64_t deadline_ns)
{
	struct pollfd in = { .fd = fd, .events = POLLIN };
	uint64_t now = ampkit_now_ns(), left = now >= deadline_ns ? 0 : deadline_ns - now;
	struct timespec wait = { (time_t)(left / 1000000000ULL), (long)(left % 1000000000ULL) };

	return ppoll(&in, 1, &wait, NULL) > 0;
}

uint64_t cpu_ns_of(const struct rusage *usage)
{
	return (uint64_t)(usage->ru_utime.tv_sec + usage->ru_stime.tv_sec) * 1000000000ULL +
	       (uint64_t)(usage->ru_utime.tv_usec + usage->ru_stime.tv_usec) * 1000ULL;
}

unsigned long cpu_capacity(int cpu)
{
	char path[96], *text;
	unsigned long value;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpu_capacity", cpu);
	text = read_text(path);
	value = text ? strtoul(text, NULL, 10) : 1024;
	free(text);
	return value;
}

int parse_cpu_list(const char *s, cpu_set_t *set)
{
	size_t len = strlen(s);
	const char *p = s;

	/* digits between single commas: no empty item, no sign, no space */
	if (!len || strspn(s, "0123456789,") != len || s[0] == ',' || s[len - 1] == ',' ||
	    strstr(s, ",,"))
		return -1;
	CPU_ZERO(set);
	while (*p) {
		char *end;
		unsigned long cpu;

		errno = 0;
		cpu = strtoul(p, &end, 10);
		if (errno || cpu >= CPU_SETSIZE)
			return -1;
		CPU_SET((int)cpu, set);
		p = *end ? end + 1 : end;
	}
	return 0;
}

void sb_cpu_list(struct sbuf *sb, const cpu_set_t *set)
{
	int cpu, first = 1;

	sb_printf(sb, "[");
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, set))
			continue;
		sb_printf(sb, "%s%d", first ? "" : ",", cpu);
		first = 0;
	}
	sb_printf(sb, "]");
}
