// SPDX-License-Identifier: GPL-2.0
/*
 * ampkit-probe: asks the guest kernel what it believes, for tests and for
 * people poking at a booted guest. Prints one JSON object on stdout.
 *
 *   ampkit-probe sysinfo             topology, capacities, sched domains, AMP policy
 *   ampkit-probe set-policy NAME     tries to switch policy; reports errno and the result
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "sbuf.h"
#include "sysinfo.h"

int main(int argc, char **argv)
{
	struct sbuf sb;

	sb_init(&sb);
	if (argc == 2 && !strcmp(argv[1], "sysinfo")) {
		sysinfo_json(&sb);
		sb_printf(&sb, "}\n");
	} else if (argc == 3 && !strcmp(argv[1], "set-policy")) {
		char in_force[64] = "";
		int err = set_amp_policy(argv[2], in_force, sizeof(in_force));

		sb_printf(&sb, "{\"requested\":");
		sb_json_str(&sb, argv[2]);
		sb_printf(&sb, ",\"errno\":%d,\"error\":", err);
		sb_json_str(&sb, err ? strerror(err) : NULL);
		sb_printf(&sb, ",\"in_force\":");
		sb_json_str(&sb, in_force);
		sb_printf(&sb, "}\n");
	} else {
		fprintf(stderr, "usage: %s sysinfo | set-policy NAME\n", argv[0]);
		return 2;
	}
	fputs(sb.data, stdout);
	sb_free(&sb);
	return 0;
}
