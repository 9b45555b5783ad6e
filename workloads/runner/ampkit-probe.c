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
 *
 * Like every workload it accepts -t THREADS and -n SIZE first, so that it can
 * be a member of a mix; it ignores them.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ampkit_workload.h"
#include "sbuf.h"
#include "sysinfo.h"

static int usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-t N] [-n N] sysinfo | set-policy NAME... | sleep SECONDS\n", prog);
	return 2;
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
	} else {
		return usage(argv[-optind]);
	}
	fputs(sb.data, stdout);
	sb_free(&sb);
	return 0;
}
