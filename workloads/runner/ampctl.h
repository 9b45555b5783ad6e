/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kit kernel's per-thread scheduling interface: the predicted speedup
 * and energy per instruction (prctl PR_SCHED_AMP) and the colab.* and wash.* lines of
 * /proc/<pid>/task/<tid>/sched.
 * See kernel-patches/README.md.
 */
#ifndef AMPKIT_AMPCTL_H
#define AMPKIT_AMPCTL_H

#include <stdint.h>
#include <sys/types.h>

#include "sbuf.h"

/* From the kit's include/uapi/linux/prctl.h; libc headers do not have them. */
#ifndef PR_SCHED_AMP
#define PR_SCHED_AMP 0x414d5053
#define PR_SCHED_AMP_SET_SPEEDUP 1
#define PR_SCHED_AMP_GET_SPEEDUP 2
#endif
#ifndef PR_SCHED_AMP_SET_EPI_BIG
#define PR_SCHED_AMP_SET_EPI_BIG 3
#define PR_SCHED_AMP_GET_EPI_BIG 4
#endif

/* Sets thread tid's (0: the caller's) predicted speedup, 1024 = 1.0. 0 or an errno. */
int amp_set_speedup(pid_t tid, unsigned int speedup_q10);

/* Thread tid's predicted speedup as the kernel holds it (1024 = 1.0, 0: none), or -errno. */
int amp_get_speedup(pid_t tid);

/* Sets thread tid's predicted energy per instruction on a big CPU, in pJ. 0 or an errno. */
int amp_set_epi_big(pid_t tid, unsigned int epi_pj);

/* Thread tid's energy per instruction as the kernel holds it (pJ, 0: none), or -errno. */
int amp_get_epi_big(pid_t tid);

/* A thread's counters: the colab.* lines of its sched file and its schedstat. */
struct thread_stats {
	pid_t tid;
	int64_t speedup;
	char class_name[16];
	int64_t big_ns, little_ns;
	int64_t futex_blocked_ns, futex_caused_ns, caused_recent_ns;
	int64_t bottleneck;
	int64_t flagged_ns, cluster_moves;	/* -1 on a kernel without them */
	int64_t wash_bound, wash_own_affinity;	/* wash.* lines; -1 without WASH */
	int64_t epi_big_pj;		/* -1 on a kernel without it */
	int64_t rank_key;		/* hsp, eef: the value ranked by; -1 without them */
	int64_t amp_vruntime;		/* acfs: its progress; -1 without acfs */
	int64_t acfs_weight;		/* acfs: its last (dynamic) weight; -1 without */
	int64_t sum_exec_ns;		/* se.sum_exec_runtime, read with the colab.* lines */
	int64_t run_ns, wait_ns, slices;	/* /proc/<pid>/task/<tid>/schedstat */
	int64_t failed_affine;		/* moves the balancer gave up for affinity; -1 without SCHEDSTATS */
	int64_t failed_hot;		/* and for cache hotness; -1 without SCHEDSTATS */
};

/* Reads them for thread tid of process pid. 0, or -1 if the files are missing. */
int read_task_stats(pid_t pid, pid_t tid, struct thread_stats *st);

/* Reads them for thread tid of this process. 0, or -1 if the files are missing. */
int read_thread_stats(pid_t tid, struct thread_stats *st);

/* Appends them as a JSON object. */
void thread_stats_json(struct sbuf *sb, const struct thread_stats *st);

#endif
