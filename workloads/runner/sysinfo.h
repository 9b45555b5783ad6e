/* SPDX-License-Identifier: GPL-2.0 */
/* What the guest kernel believes about the machine, as one JSON object. */
#ifndef AMPKIT_SYSINFO_H
#define AMPKIT_SYSINFO_H

#include "sbuf.h"

#define AMP_POLICY_FILE "/proc/sys/kernel/sched_amp_policy"
/* 1: the per-task counters are kept under every policy, cfs included */
#define AMP_STATS_FILE "/proc/sys/kernel/sched_colab_stats"
#define AMP_AVAILABLE_FILE "/proc/sys/kernel/sched_amp_available_policies"

/*
 * Appends {"kernel": ..., "cmdline": ..., "cpus": [...], "sched_domains": {...},
 * "amp": {...}} without the closing brace, so callers can add fields.
 */
void sysinfo_json(struct sbuf *sb);

/*
 * Appends the policies' readable sysctls (kernel.sched_colab_*,
 * sched_wash_*, sched_eef_*, sched_acfs_*, sched_timescale) as one JSON
 * object, or null when the sysctl directory cannot be listed.
 */
void policy_knobs_json(struct sbuf *sb);

/*
 * Writes a policy name to the AMP policy knob. Returns 0 or an errno;
 * in_force (may be NULL) receives the policy read back afterwards.
 */
int set_amp_policy(const char *name, char *in_force, size_t len);

/*
 * Keeps the per-task counters under every policy (on) or only under the
 * policies that use them. 0, ENOENT on a kernel without them, or an errno.
 */
int set_amp_stats(int on);

#endif
