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

/*
 * The architected events gem5's ArmPMU implements (addArchEvents in its
 * src/arch/arm/ArmPMU.py), by the names the kernel's armv8 PMU driver
 * gives them in sysfs: every one a gem5 core counts, SW_INCR aside.
 */
#define PMU_NR_EVENTS 10

struct pmu_count {
	int fd;		/* -1: not counted */
	int err;	/* why not: an errno, or 0 with fd -1 if not listed */
	uint64_t value, enabled_ns, running_ns;
	int read;	/* value and times are final */
};

struct pmu_counts {
	struct pmu_count events[PMU_NR_EVENTS];
};

/*
 * Opens every event on @pid and the threads and processes it creates from
 * now on (inherit), counting from its next exec (enable_on_exec), in user
 * and kernel mode. An event the kernel's PMU does not list (none on a
 * host that is not arm64, most of them under QEMU) is recorded as such.
 */
void pmu_open(struct pmu_counts *c, pid_t pid);

/*
 * Reads the final counts once @pid and everything it created have exited
 * (their counts fold into the events opened on @pid), and closes them.
 */
void pmu_close(struct pmu_counts *c);

/*
 * Appends ,"pmu":{"INST_RETIRED":{"count":N,"enabled_ns":E,"running_ns":R},
 * "LD_RETIRED":{"error":"..."},...}. A count is as read: the kernel
 * time-shares the counters when there are more events than counters, and
 * running_ns against enabled_ns says for how much of the time each event
 * was counted (the reader scales).
 */
void pmu_json(struct sbuf *sb, const struct pmu_counts *c);

#endif
