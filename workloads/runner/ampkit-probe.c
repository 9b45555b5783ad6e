// SPDX-License-Identifier: GPL-2.0
/*
 * ampkit-probe: asks the guest kernel what it believes, for tests and for
 * people poking at a booted guest. Prints one JSON object on stdout.
 *
 *   ampkit-probe sysinfo             topology, capacities, sched domains, AMP policy
 *   ampkit-probe set-policy NAME...  tries each policy in turn; reports errno and the
 *                                    policy in force after each
 *   ampkit-probe sleep SECONDS       sleeps (fractions too), then reports; an
 *                                    application that hangs
 *   ampkit-probe perf                counts instructions and cycles of a known loop
 *                                    with perf_event_open; reports each count or errno
 *
 * Like every workload it accepts -t THREADS and -n SIZE first, so that it can
 * be a member of a mix; it ignores them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ampkit_workload.h"
#include "sbuf.h"
#include "sysinfo.h"

static int usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-t N] [-n N] sysinfo | set-policy NAME... | sleep SECONDS | perf\n",
		prog);
	return 2;
}

/* Iterations of the loop the counters watch: a count well above the noise
 * of starting and stopping them, and quick on every engine. */
#define PERF_LOOP 200000

static volatile uint64_t perf_sink;

/*
 * One hardware counter over PERF_LOOP iterations, user space only: the
 * count, or the errno of the step that failed (no PMU in the device tree,
 * a kernel without perf events: ENOENT, EOPNOTSUPP, ENODEV).
 */
static void perf_count(struct sbuf *sb, const char *name, uint64_t config)
{
	struct perf_event_attr attr;
	uint64_t count = 0, i;
	int fd, err = 0;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_HARDWARE;
	attr.config = config;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		err = errno;
	} else {
		ioctl(fd, PERF_EVENT_IOC_RESET, 0);
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		for (i = 0; i < PERF_LOOP; i++)
			perf_sink += i;
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		if (read(fd, &count, sizeof(count)) != (ssize_t)sizeof(count))
			err = errno ? errno : EIO;
		close(fd);
	}
	sb_printf(sb, "{\"event\":");
	sb_json_str(sb, name);
	sb_printf(sb, ",\"errno\":%d,\"error\":", err);
	sb_json_str(sb, err ? strerror(err) : NULL);
	sb_printf(sb, ",\"count\":%llu}", (unsigned long long)count);
}

int main(int argc, char **argv)
{
	struct sbuf sb;
	int opt;

	while ((opt = getopt(argc, argv, "+t:n:")) != -1)
		if (opt == '?')
			return usage(argv[0]);
	argc -= optind;
	argv += optind;

	sb_init(&sb);
	if (argc == 1 && !strcmp(argv[0], "sysinfo")) {
		sysinfo_json(&sb);
		sb_printf(&sb, "}\n");
	} else if (argc >= 2 && !strcmp(argv[0], "set-policy")) {
		int i;

		sb_printf(&sb, "{\"steps\":[");
		for (i = 1; i < argc; i++) {
			char in_force[64] = "";
			int err = set_amp_policy(argv[i], in_force, sizeof(in_force));

			sb_printf(&sb, "%s{\"requested\":", i > 1 ? "," : "");
			sb_json_str(&sb, argv[i]);
			sb_printf(&sb, ",\"errno\":%d,\"error\":", err);
			sb_json_str(&sb, err ? strerror(err) : NULL);
			sb_printf(&sb, ",\"in_force\":");
			sb_json_str(&sb, in_force);
			sb_printf(&sb, "}");
		}
		sb_printf(&sb, "]}\n");
	} else if (argc == 2 && !strcmp(argv[0], "sleep")) {
		double seconds = strtod(argv[1], NULL);

		if (!(seconds >= 0 && seconds < 1e9))
			return usage(argv[-optind]);
		ampkit_sleep_ns((uint64_t)(seconds * 1e9));
		sb_printf(&sb, "{\"slept\":%s}\n", argv[1]);
	} else if (argc == 1 && !strcmp(argv[0], "perf")) {
		sb_printf(&sb, "{\"loop\":%d,\"counters\":[", PERF_LOOP);
		perf_count(&sb, "instructions", PERF_COUNT_HW_INSTRUCTIONS);
		sb_printf(&sb, ",");
		perf_count(&sb, "cycles", PERF_COUNT_HW_CPU_CYCLES);
		sb_printf(&sb, "]}\n");
	} else {
		return usage(argv[-optind]);
	}
	fputs(sb.data, stdout);
	sb_free(&sb);
	return 0;
}
