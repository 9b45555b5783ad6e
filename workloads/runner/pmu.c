// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include "pmu.h"

#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PMU_DEVICES "/sys/bus/event_source/devices"

/* The name a record uses, and the one the driver's sysfs directory does. */
static const char *const pmu_names[PMU_NR_EVENTS][2] = {
	{ "INST_RETIRED", "inst_retired" },
	{ "CPU_CYCLES", "cpu_cycles" },
	{ "LD_RETIRED", "ld_retired" },
	{ "ST_RETIRED", "st_retired" },
	{ "MEM_ACCESS", "mem_access" },
	{ "BR_RETIRED", "br_retired" },
	{ "BR_PRED", "br_pred" },
	{ "BR_MIS_PRED", "br_mis_pred" },
	{ "L1I_TLB_REFILL", "l1i_tlb_refill" },
	{ "L1D_TLB_REFILL", "l1d_tlb_refill" },
};

/*
 * The CPU PMU's directory under PMU_DEVICES (the first that lists
 * cpu_cycles, which every armv8 PMU counts; its driver lists only the
 * events the cores implement) and its perf type; 0 if there is none.
 */
static int find_pmu(char *dir, size_t len, unsigned int *type)
{
	char path[512];
	struct dirent *d;
	DIR *devices = opendir(PMU_DEVICES);
	int found = 0;

	while (devices && !found && (d = readdir(devices))) {
		char *text;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), PMU_DEVICES "/%s/events/cpu_cycles", d->d_name);
		if (access(path, R_OK))
			continue;
		snprintf(path, sizeof(path), PMU_DEVICES "/%s/type", d->d_name);
		text = read_text(path);
		if (text && sscanf(text, "%u", type) == 1) {
			snprintf(dir, len, PMU_DEVICES "/%s", d->d_name);
			found = 1;
		}
		free(text);
	}
	if (devices)
		closedir(devices);
	return found;
}

/* The event number sysfs gives for @name ("event=0x0008"); -1 if unlisted. */
static long event_config(const char *dir, const char *name)
{
	char path[600];
	char *text, *term;
	long config = -1;

	snprintf(path, sizeof(path), "%s/events/%s", dir, name);
	text = read_text(path);
	term = text ? strstr(text, "event=") : NULL;
	if (term)
		config = strtol(term + strlen("event="), NULL, 0);
	free(text);
	return config;
}

void pmu_open(struct pmu_counts *c, pid_t pid)
{
	struct perf_event_attr attr;
	unsigned int type = 0;
	char dir[512];
	int have_pmu = find_pmu(dir, sizeof(dir), &type);
	int i;

	for (i = 0; i < PMU_NR_EVENTS; i++) {
		struct pmu_count *e = &c->events[i];
		long config = have_pmu ? event_config(dir, pmu_names[i][1]) : -1;

		memset(e, 0, sizeof(*e));
		e->fd = -1;
		if (config < 0)
			continue;
		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.type = type;
		attr.config = (uint64_t)config;
		attr.disabled = 1;
		attr.enable_on_exec = 1;
		attr.inherit = 1;
		attr.exclude_hv = 1;
		attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		e->fd = (int)syscall(SYS_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
		if (e->fd < 0)
			e->err = errno;
	}
}

void pmu_close(struct pmu_counts *c)
{
	int i;

	for (i = 0; i < PMU_NR_EVENTS; i++) {
		struct pmu_count *e = &c->events[i];
		uint64_t v[3];

		if (e->fd < 0)
			continue;
		if (read(e->fd, v, sizeof(v)) == (ssize_t)sizeof(v)) {
			e->value = v[0];
			e->enabled_ns = v[1];
			e->running_ns = v[2];
			e->read = 1;
		} else {
			e->err = errno ? errno : EIO;
		}
		close(e->fd);
		e->fd = -1;
	}
}

void pmu_json(struct sbuf *sb, const struct pmu_counts *c)
{
	int i;

	sb_printf(sb, ",\"pmu\":{");
	for (i = 0; i < PMU_NR_EVENTS; i++) {
		const struct pmu_count *e = &c->events[i];

		sb_printf(sb, "%s\"%s\":{", i ? "," : "", pmu_names[i][0]);
		if (e->read)
			sb_printf(sb, "\"count\":%llu,\"enabled_ns\":%llu,\"running_ns\":%llu",
				  (unsigned long long)e->value,
				  (unsigned long long)e->enabled_ns,
				  (unsigned long long)e->running_ns);
		else if (e->err)
			sb_printf(sb, "\"error\":\"%s\"", strerror(e->err));
		else
			sb_printf(sb, "\"error\":\"not listed by the kernel's PMU\"");
		sb_printf(sb, "}");
	}
	sb_printf(sb, "}");
}
