/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Counting an application's PMU events with perf_event_open: the training
 * data of the speedup model (ampkit/speedupmodel.py).
 */
#ifndef AMPKIT_PMU_H
#define AMPKIT_PMU_H

#include <stdint.h>
#include <sys/types.h>

#include "sbuf.h"

/* At most this many events a run: one group, which the PMU must hold at once. */
#define PMU_MAX_EVENTS 8

struct pmu_count {
	const char *name;	/* as ampkit/pmu.py spells it */
	int fd;			/* -1: not counted */
	int err;		/* why not (an errno) */
	int listed;		/* the kernel's PMU lists it in sysfs */
	uint64_t value, enabled_ns, running_ns;
	int read;		/* value and times are final */
};

struct pmu_counts {
	int n;
	struct pmu_count events[PMU_MAX_EVENTS];
};

/* The most CPUs pmu_cpu_types() maps: gem5's GICv2 serves eight. */
#define PMU_MAX_CPUS 64
#define PMU_NO_TYPE 0xffffffffu

/*
 * The perf type of the CPU PMU that serves each CPU (types[cpu], from the
 * PMUs under sysfs that count cpu_cycles and the CPUs each lists; one
 * without a list serves all), PMU_NO_TYPE where none does. Returns how
 * many CPUs have one: 0 on a host that is not arm64.
 */
int pmu_cpu_types(unsigned int *types, int ncpus);

/* The architected number of an event ampkit/pmu.py names, or -1. */
int pmu_event_number(const char *name);

/*
 * Parses "INST_RETIRED,CPU_CYCLES,..." (the run description's pmu line:
 * INST_RETIRED first, the group's leader) into @c. Returns 0, or -1 with
 * @bad pointing at a name it does not know or a list that is too long.
 */
int pmu_parse(struct pmu_counts *c, char *list, const char **bad);

/*
 * Opens the events as one group on @pid and the threads and processes it
 * creates from now on (inherit), counting from its next exec
 * (enable_on_exec), in user and kernel mode, each by its architected
 * number on the CPU PMU. One group, so that the kernel schedules all of
 * them or none and never time-shares the counters: gem5 v24 zeroes a
 * counter each time the PMU is enabled again without the counter having
 * been written (PMU::CounterState::attach), which perf's rotation of
 * shared counters does on every tick. An event the kernel's PMU does not
 * list is still opened, and recorded as unlisted: gem5 boots on atomic
 * CPUs, without the branch predictor whose events the detailed CPUs count
 * after the checkpoint.
 */
void pmu_open(struct pmu_counts *c, pid_t pid);

/*
 * Reads the final counts once @pid and everything it created have exited
 * (their counts fold into the events opened on @pid), and closes them.
 */
void pmu_close(struct pmu_counts *c);

/*
 * Appends ,"pmu":{"INST_RETIRED":{"count":N,"enabled_ns":E,"running_ns":R,
 * "listed":true},...,"BR_PRED":{"error":"..."}}: running_ns 0 when the
 * group never got the counters (more events than the PMU holds).
 */
void pmu_json(struct sbuf *sb, const struct pmu_counts *c);

#endif
