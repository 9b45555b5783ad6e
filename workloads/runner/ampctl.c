// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include "ampctl.h"
#include "ampkit_workload.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

/* prctl(PR_SCHED_AMP, op, tid, value): 0 or an errno. */
static int amp_set(unsigned long op, pid_t tid, unsigned int value)
{
	if (prctl(PR_SCHED_AMP, op, (unsigned long)tid, (unsigned long)value, 0UL))
		return errno;
	return 0;
}

/* prctl(PR_SCHED_AMP, op, tid): what the kernel holds, or -errno. */
static int amp_get(unsigned long op, pid_t tid)
{
	int held = prctl(PR_SCHED_AMP, op, (unsigned long)tid, 0UL, 0UL);

	return held < 0 ? -errno : held;
}

int amp_set_speedup(pid_t tid, unsigned int speedup_q10)
{
	return amp_set(PR_SCHED_AMP_SET_SPEEDUP, tid, speedup_q10);
}

int amp_get_speedup(pid_t tid)
{
	return amp_get(PR_SCHED_AMP_GET_SPEEDUP, tid);
}

int amp_set_epi_big(pid_t tid, unsigned int epi_pj)
{
	return amp_set(PR_SCHED_AMP_SET_EPI_BIG, tid, epi_pj);
}

int amp_get_epi_big(pid_t tid)
{
	return amp_get(PR_SCHED_AMP_GET_EPI_BIG, tid);
}

static int64_t field_int(const char *text, const char *name)
{
	char value[64];

	if (!ampkit_sched_field(text, name, value, sizeof(value)))
		return -1;
	return strtoll(value, NULL, 10);
}

/* A field printed in ms with six decimals (se.*), in ns; -1 when absent. */
static int64_t field_ms_ns(const char *text, const char *name)
{
	char value[64];
	const char *dot;

	if (!ampkit_sched_field(text, name, value, sizeof(value)))
		return -1;
	dot = strchr(value, '.');
	return strtoll(value, NULL, 10) * 1000000 + (dot ? strtoll(dot + 1, NULL, 10) : 0);
}

int read_task_stats(pid_t pid, pid_t tid, struct thread_stats *st)
{
	char path[96], value[64];
	char *text;

	memset(st, 0, sizeof(*st));
	st->tid = tid;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/sched", (int)pid, (int)tid);
	text = read_text(path);
	if (!text)
		return -1;
	st->speedup = field_int(text, "colab.speedup");
	if (ampkit_sched_field(text, "colab.class", value, sizeof(value)))
		snprintf(st->class_name, sizeof(st->class_name), "%.15s", value);
	st->big_ns = field_int(text, "colab.big_ns");
	st->little_ns = field_int(text, "colab.little_ns");
	st->futex_blocked_ns = field_int(text, "colab.futex_blocked_ns");
	st->futex_caused_ns = field_int(text, "colab.futex_caused_ns");
	st->caused_recent_ns = field_int(text, "colab.caused_recent_ns");
	st->bottleneck = field_int(text, "colab.bottleneck");
	st->flagged_ns = field_int(text, "colab.flagged_ns");
	st->cluster_moves = field_int(text, "colab.cluster_moves");
	st->wash_bound = field_int(text, "wash.bound");
	st->wash_own_affinity = field_int(text, "wash.own_affinity");
	st->epi_big_pj = field_int(text, "colab.epi_big_pj");
	st->rank_key = field_int(text, "colab.rank_key");
	st->amp_vruntime = field_int(text, "colab.amp_vruntime");
	st->acfs_weight = field_int(text, "colab.acfs_weight");
	st->failed_affine = field_int(text, "nr_failed_migrations_affine");
	st->failed_hot = field_int(text, "nr_failed_migrations_hot");
	st->sum_exec_ns = field_ms_ns(text, "se.sum_exec_runtime");
	free(text);

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
	text = read_text(path);
	if (!text)
		return -1;
	if (sscanf(text, "%" SCNd64 " %" SCNd64 " %" SCNd64, &st->run_ns, &st->wait_ns,
		   &st->slices) != 3)
		st->run_ns = st->wait_ns = st->slices = -1;
	free(text);
	return 0;
}

int read_thread_stats(pid_t tid, struct thread_stats *st)
{
	return read_task_stats(getpid(), tid, st);
}

void thread_stats_json(struct sbuf *sb, const struct thread_stats *st)
{
	sb_printf(sb, "{\"tid\":%d,\"speedup\":%" PRId64 ",\"class\":", (int)st->tid,
		  st->speedup);
	sb_json_str(sb, st->class_name);
	sb_printf(sb,
		  ",\"big_ns\":%" PRId64 ",\"little_ns\":%" PRId64 ",\"futex_blocked_ns\":%" PRId64
		  ",\"futex_caused_ns\":%" PRId64 ",\"caused_recent_ns\":%" PRId64
		  ",\"bottleneck\":%" PRId64 ",\"flagged_ns\":%" PRId64
		  ",\"cluster_moves\":%" PRId64 ",\"run_ns\":%" PRId64 ",\"wait_ns\":%" PRId64
		  ",\"slices\":%" PRId64 ",\"wash_bound\":%" PRId64
		  ",\"wash_own_affinity\":%" PRId64 ",\"failed_affine\":%" PRId64
		  ",\"failed_hot\":%" PRId64 ",\"epi_big_pj\":%" PRId64 ",\"rank_key\":%" PRId64
		  ",\"amp_vruntime\":%" PRId64 ",\"acfs_weight\":%" PRId64 "}",
		  st->big_ns, st->little_ns, st->futex_blocked_ns, st->futex_caused_ns,
		  st->caused_recent_ns, st->bottleneck, st->flagged_ns, st->cluster_moves,
		  st->run_ns, st->wait_ns, st->slices,
		  st->wash_bound, st->wash_own_affinity, st->failed_affine, st->failed_hot,
		  st->epi_big_pj, st->rank_key, st->amp_vruntime, st->acfs_weight);
}
