// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include "pmu.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PMU_DEVICES "/sys/bus/event_source/devices"

/*
 * The architected events gem5's ArmPMU implements (addArchEvents in its
 * src/arch/arm/ArmPMU.py), SW_INCR aside: ampkit/pmu.py names the same.
 */
static const struct {
	const char *name;
	unsigned int number;
} pmu_events[] = {
	{ "INST_RETIRED", 0x08 },
	{ "CPU_CYCLES", 0x11 },
	{ "LD_RETIRED", 0x06 },
	{ "ST_RETIRED", 0x07 },
	{ "MEM_ACCESS", 0x13 },
	{ "BR_RETIRED", 0x21 },
	{ "BR_PRED", 0x12 },
	{ "BR_MIS_PRED", 0x10 },
	{ "L1I_TLB_REFILL", 0x02 },
	{ "L1D_TLB_REFILL", 0x05 },
};

#define NR_KNOWN (sizeof(pmu_events) / sizeof(pmu_events[0]))

int pmu_event_number(const char *name)
{
	unsigned int i;

	for (i = 0; i < NR_KNOWN; i++)
		if (!strcmp(pmu_events[i].name, name))
			return (int)pmu_events[i].number;
	return -1;
}

int pmu_parse(struct pmu_counts *c, char *list, const char **bad)
{
	char *save, *name;

	memset(c, 0, sizeof(*c));
	for (name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		if (c->n == PMU_MAX_EVENTS || pmu_event_number(name) < 0) {
			*bad = name;
			return -1;
		}
		c->events[c->n++].name = name;
	}
	if (!c->n || strcmp(c->events[0].name, "INST_RETIRED")) {
		*bad = c->n ? c->events[0].name : list;
		return -1;
	}
	return 0;
}

/*
 * Whether the device @name under PMU_DEVICES is a CPU PMU (it lists
 * cpu_cycles, which every armv8 PMU counts), and its perf type if so.
 */
static int cpu_pmu_type(const char *name, unsigned int *type)
{
	char path[512], *text;
	int ok;

	if (name[0] == '.')
		return 0;
	snprintf(path, sizeof(path), PMU_DEVICES "/%s/events/cpu_cycles", name);
	if (access(path, R_OK))
		return 0;
	snprintf(path, sizeof(path), PMU_DEVICES "/%s/type", name);
	text = read_text(path);
	ok = text && sscanf(text, "%u", type) == 1;
	free(text);
	return ok;
}

/*
 * The CPU PMU's directory under PMU_DEVICES (the first that lists
 * cpu_cycles, which every armv8 PMU counts) and its perf type; 0 if there
 * is none (a host that is not arm64).
 */
static int find_pmu(char *dir, size_t len, unsigned int *type)
{
	struct dirent *d;
	DIR *devices = opendir(PMU_DEVICES);
	int found = 0;

	while (devices && !found && (d = readdir(devices))) {
		if (cpu_pmu_type(d->d_name, type)) {
			snprintf(dir, len, PMU_DEVICES "/%s", d->d_name);
			found = 1;
		}
	}
	if (devices)
		closedir(devices);
	return found;
}

/* Marks in @in[] the CPUs of a cpulist ("0-3,6"); -1 if it is not one. */
static int parse_cpulist(const char *list, char *in, int ncpus)
{
	const char *p = list;

	while (*p) {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;

		if (end == p)
			return -1;
		p = end;
		if (*p == '-') {
			hi = strtol(p + 1, &end, 10);
			if (end == p + 1)
				return -1;
			p = end;
		}
		for (; lo <= hi; lo++)
			if (lo >= 0 && lo < ncpus)
				in[lo] = 1;
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -1;
		else
			break;
	}
	return 0;
}

int pmu_cpu_types(unsigned int *types, int ncpus)
{
	char path[512], in[PMU_MAX_CPUS];
	struct dirent *d;
	DIR *devices = opendir(PMU_DEVICES);
	int cpu, found = 0;

	if (ncpus > PMU_MAX_CPUS)
		ncpus = PMU_MAX_CPUS;
	for (cpu = 0; cpu < ncpus; cpu++)
		types[cpu] = PMU_NO_TYPE;
	while (devices && (d = readdir(devices))) {
		unsigned int type;
		char *text;

		if (!cpu_pmu_type(d->d_name, &type))
			continue;
		/* a PMU without a cpus file serves every CPU */
		memset(in, 1, sizeof(in));
		snprintf(path, sizeof(path), PMU_DEVICES "/%s/cpus", d->d_name);
		text = read_text(path);
		if (text) {
			memset(in, 0, sizeof(in));
			if (parse_cpulist(text, in, ncpus))
				memset(in, 0, sizeof(in));
		}
		free(text);
		for (cpu = 0; cpu < ncpus; cpu++)
			if (in[cpu] && types[cpu] == PMU_NO_TYPE) {
				types[cpu] = type;
				found++;
			}
	}
	if (devices)
		closedir(devices);
	return found;
}

/* Whether the driver lists @name: the events the PMU says it implements. */
static int listed(const char *dir, const char *name)
{
	char path[600], lower[32];
	size_t i;

	for (i = 0; name[i] && i < sizeof(lower) - 1; i++)
		lower[i] = (char)tolower((unsigned char)name[i]);
	lower[i] = '\0';
	snprintf(path, sizeof(path), "%s/events/%s", dir, lower);
	return !access(path, R_OK);
}

void pmu_open(struct pmu_counts *c, pid_t pid)
{
	struct perf_event_attr attr;
	unsigned int type = 0;
	char dir[512];
	int have_pmu = find_pmu(dir, sizeof(dir), &type);
	int i, leader = -1;

	for (i = 0; i < c->n; i++) {
		struct pmu_count *e = &c->events[i];

		e->fd = -1;
		e->read = 0;
		if (!have_pmu) {
			e->err = ENODEV;
			continue;
		}
		e->listed = listed(dir, e->name);
		if (i && leader < 0) {
			e->err = c->events[0].err;	/* no leader, no group */
			continue;
		}
		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.type = type;
		attr.config = (uint64_t)pmu_event_number(e->name);
		/* the leader starts the group at exec; members follow it */
		attr.disabled = !i;
		attr.enable_on_exec = !i;
		attr.inherit = 1;
		attr.exclude_hv = 1;
		attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		e->fd = (int)syscall(SYS_perf_event_open, &attr, pid, -1, leader,
				     PERF_FLAG_FD_CLOEXEC);
		if (e->fd < 0)
			e->err = errno;
		else if (!i)
			leader = e->fd;
	}
}

void pmu_close(struct pmu_counts *c)
{
	int i;

	for (i = 0; i < c->n; i++) {
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
	}
	/* members before their leader */
	for (i = c->n - 1; i >= 0; i--) {
		if (c->events[i].fd >= 0)
			close(c->events[i].fd);
		c->events[i].fd = -1;
	}
}

void pmu_json(struct sbuf *sb, const struct pmu_counts *c)
{
	int i;

	sb_printf(sb, ",\"pmu\":{");
	for (i = 0; i < c->n; i++) {
		const struct pmu_count *e = &c->events[i];

		sb_printf(sb, "%s\"%s\":{", i ? "," : "", e->name);
		if (e->read)
			sb_printf(sb, "\"count\":%llu,\"enabled_ns\":%llu,\"running_ns\":%llu,"
				  "\"listed\":%s", (unsigned long long)e->value,
				  (unsigned long long)e->enabled_ns,
				  (unsigned long long)e->running_ns, e->listed ? "true" : "false");
		else if (e->err == ENODEV)
			sb_printf(sb, "\"error\":\"no CPU PMU in sysfs\"");
		else
			sb_printf(sb, "\"error\":\"%s\"", strerror(e->err ? e->err : EIO));
		sb_printf(sb, "}");
	}
	sb_printf(sb, "}");
}
