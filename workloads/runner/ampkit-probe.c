// SPDX-License-Identifier: GPL-2.0
/*
 * ampkit-probe: asks the guest kernel what it believes, for tests and for
 * people poking at a booted guest. Prints one JSON object on stdout.
 *
 *   ampkit-probe sysinfo             topology, capacities, sched domains, AMP policy
 *   ampkit-probe set-policy NAME...  tries each policy in turn; reports errno and the
 *                                    policy in force after each
 *   ampkit-probe set-knob K=V...     writes each value to /proc/sys/kernel/K in turn;
 *                                    reports errno and the value in force after each
 *   ampkit-probe sleep SECONDS       sleeps (fractions too), then reports; an
 *                                    application that hangs
 *   ampkit-probe perf                counts instructions and cycles of a known loop
 *                                    with perf_event_open; reports each count or errno
 *   ampkit-probe snapshot SECONDS... at each time (seconds after it starts, rising) the
 *                                    colab.* counters the ranked policies weigh, of
 *                                    every thread with a speedup hint, read together
 *                                    as a real-time thread, to compare threads
 *   ampkit-probe latency             cycles per op of chains of dependent instructions
 *                                    (ALU, shifted ALU, CSEL, MUL, MADD's accumulator,
 *                                    a load's pointer chase, FADD): what the core model
 *                                    makes of a result's latency (arm64 only)
 *
 * Like every workload it accepts -t THREADS and -n SIZE first, so that it can
 * be a member of a mix; it ignores them.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ampctl.h"
#include "ampkit_workload.h"
#include "sbuf.h"
#include "sysinfo.h"

static int usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-t N] [-n N] sysinfo | set-policy NAME... | set-knob KNOB=VALUE..."
		" | sleep SECONDS | snapshot SECONDS... | perf | latency\n",
		prog);
	return 2;
}

/* Iterations of the loop the counters watch: a count well above the noise
 * of starting and stopping them, and quick on every engine. */
#define PERF_LOOP 200000

static volatile uint64_t perf_sink;

/*
 * A hardware counter of the calling thread in user space, stopped; -1
 * with errno set if there is none.
 */
static int counter_open(uint64_t config)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_HARDWARE;
	attr.config = config;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/*
 * One hardware counter over PERF_LOOP iterations, user space only: the
 * count, or the errno of the step that failed (no PMU in the device tree,
 * a kernel without perf events: ENOENT, EOPNOTSUPP, ENODEV).
 */
static void perf_count(struct sbuf *sb, const char *name, uint64_t config)
{
	uint64_t count = 0, i;
	int fd = counter_open(config), err = 0;

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

#if defined(__aarch64__)

#define LATENCY_ROUNDS 2000
#define REP4(x) x x x x
#define REP32(x) REP4(REP4(x)) REP4(REP4(x))

static volatile uint64_t latency_sink;
static volatile double latency_fsink;
/* The pointer chase's one cell: it holds its own address. */
static void *chase_cell = &chase_cell;

/*
 * One chain: LATENCY_ROUNDS rounds of 32 (short) or 64 (long) copies of an
 * instruction that takes the previous copy's result. The difference of
 * the two, per extra copy, is the chain's cycles per op without the
 * loop's own instructions and the counter's start and stop. (With 16 and
 * 32, every chain came out 2 cycles a round short on gem5's Minor: the
 * shorter chain paid for the loop's branch, the longer hid it.)
 */
#define CHAIN(name, setup, insn)                                                      \
	static void chain_##name(int long_chain)                                      \
	{                                                                            \
		uint64_t x = 1, y = 3, z = 5;                                         \
		double f = 1.0, g = 0.5;                                              \
		uint64_t *self = &x;                                                  \
		int i;                                                                \
                                                                                     \
		(void)y, (void)z, (void)f, (void)g, (void)self;                       \
		setup;                                                                \
		for (i = 0; i < LATENCY_ROUNDS; i++) {                                \
			if (long_chain)                                               \
				__asm__ volatile(REP32(insn) REP32(insn) CHAIN_OPERANDS); \
			else                                                          \
				__asm__ volatile(REP32(insn) CHAIN_OPERANDS);             \
		}                                                                     \
		latency_sink = x + (uint64_t)self;                                    \
		latency_fsink = f;                                                    \
	}

#define CHAIN_OPERANDS : "+r"(x), "+r"(self), "+w"(f) : "r"(y), "r"(z), "w"(g) : "cc", "memory"

/* %0 x, %1 self, %2 f; %3 y, %4 z, %5 g */
/*
 * %0 x, %1 self, %2 f; %3 y, %4 z, %5 g. A CSEL waits for both its
 * registers whatever the flags say, so the loop's own compare does not
 * break its chain.
 */
CHAIN(alu, (void)0, "add %0, %0, #1\n\t")
CHAIN(alu_reg, (void)0, "add %0, %0, %3\n\t")
CHAIN(alu_shifted, (void)0, "add %0, %3, %0, lsl #1\n\t")
CHAIN(csel, (void)0, "csel %0, %0, %3, eq\n\t")
CHAIN(mul, (void)0, "mul %0, %0, %3\n\t")
CHAIN(madd_acc, (void)0, "madd %0, %3, %4, %0\n\t")
CHAIN(load, self = (uint64_t *)&chase_cell, "ldr %1, [%1]\n\t")
CHAIN(fadd, (void)0, "fadd %d2, %d2, %d5\n\t")

static const struct {
	const char *name;
	void (*run)(int long_chain);
} chains[] = {
	{ "alu", chain_alu },
	{ "alu_reg", chain_alu_reg },
	{ "alu_shifted", chain_alu_shifted },
	{ "csel", chain_csel },
	{ "mul", chain_mul },
	{ "madd_acc", chain_madd_acc },
	{ "load", chain_load },
	{ "fadd", chain_fadd },
};

/* Cycles of one run of a chain, or 0 (errno set) if they cannot be counted. */
static uint64_t chain_cycles(int fd, void (*run)(int), int long_chain)
{
	uint64_t count = 0;

	run(long_chain); /* its code and data in the caches, its branches learnt */
	ioctl(fd, PERF_EVENT_IOC_RESET, 0);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	run(long_chain);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	if (read(fd, &count, sizeof(count)) != (ssize_t)sizeof(count))
		return 0;
	return count;
}

static void latency(struct sbuf *sb)
{
	int fd = counter_open(PERF_COUNT_HW_CPU_CYCLES), err = fd < 0 ? errno : 0;
	unsigned int i;

	sb_printf(sb, "{\"rounds\":%d,\"errno\":%d,\"cycles_per_op\":{", LATENCY_ROUNDS, err);
	for (i = 0; !err && i < sizeof(chains) / sizeof(chains[0]); i++) {
		uint64_t short_c = chain_cycles(fd, chains[i].run, 0);
		uint64_t long_c = chain_cycles(fd, chains[i].run, 1);

		if (!short_c || !long_c) {
			err = errno ? errno : EIO;
			break;
		}
		sb_printf(sb, "%s\"%s\":%.3f", i ? "," : "", chains[i].name,
			  ((double)long_c - (double)short_c) / (32.0 * LATENCY_ROUNDS));
	}
	sb_printf(sb, "},\"error\":");
	sb_json_str(sb, err ? strerror(err) : NULL);
	sb_printf(sb, "}\n");
	if (fd >= 0)
		close(fd);
}

#else

static void latency(struct sbuf *sb)
{
	sb_printf(sb, "{\"errno\":%d,\"error\":\"the chains are arm64 code\"}\n", ENOSYS);
}

#endif

/*
 * Write @value to the kernel sysctl @name; 0 or the errno of the write.
 * @in_force gets what the knob reads afterwards, without the newline.
 */
static int set_knob(const char *name, const char *value, char *in_force, size_t len)
{
	char path[128];
	char *now;
	int err;

	snprintf(path, sizeof(path), "/proc/sys/kernel/%s", name);
	err = write_text(path, value);
	now = read_text(path);
	snprintf(in_force, len, "%s", now ? now : "");
	in_force[strcspn(in_force, "\n")] = '\0';
	free(now);
	return err;
}

/* The end of a step's JSON object: what the write gave and what is in force. */
static void step_result_json(struct sbuf *sb, int err, const char *in_force)
{
	sb_printf(sb, ",\"errno\":%d,\"error\":", err);
	sb_json_str(sb, err ? strerror(err) : NULL);
	sb_printf(sb, ",\"in_force\":");
	sb_json_str(sb, in_force);
	sb_printf(sb, "}");
}

/* A directory entry that names a process or a thread: digits only. */
static pid_t numeric_name(const char *name)
{
	long n;

	if (!*name || strspn(name, "0123456789") != strlen(name))
		return 0;
	n = strtol(name, NULL, 10);
	return (n > 0 && n <= 0x3fffffff) ? (pid_t)n : 0;
}

/* Every hinted thread of process @pid into @sb; @first: none written yet. */
static void snapshot_process(struct sbuf *sb, pid_t pid, int *first)
{
	char path[64];
	DIR *dir;
	struct dirent *e;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return;	/* it ended since /proc was listed */
	while ((e = readdir(dir))) {
		pid_t tid = numeric_name(e->d_name);
		struct thread_stats st;
		char comm_path[96], *comm;

		/* the hint first, by prctl: reading and parsing the sched file
		 * of every thread there is costs a TCG guest tens of ms */
		if (!tid || amp_get_speedup(tid) <= 0 || read_task_stats(pid, tid, &st))
			continue;
		snprintf(comm_path, sizeof(comm_path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
		comm = read_text(comm_path);
		if (comm)
			comm[strcspn(comm, "\n")] = '\0';
		/* what the ranked policies weigh, kept short: the runner keeps
		 * the last 16 KiB of an application's output */
		sb_printf(sb, "%s{\"pid\":%d,\"tid\":%d,\"comm\":", *first ? "" : ",", (int)pid,
			  (int)tid);
		sb_json_str(sb, comm ? comm : "");
		sb_printf(sb, ",\"speedup\":%" PRId64 ",\"class\":", st.speedup);
		sb_json_str(sb, st.class_name);
		sb_printf(sb,
			  ",\"big_ns\":%" PRId64 ",\"little_ns\":%" PRId64 ",\"run_ns\":%" PRId64
			  ",\"wait_ns\":%" PRId64 ",\"amp_vruntime\":%" PRId64
			  ",\"acfs_weight\":%" PRId64 "}",
			  st.big_ns, st.little_ns, st.run_ns, st.wait_ns, st.amp_vruntime,
			  st.acfs_weight);
		free(comm);
		*first = 0;
	}
	closedir(dir);
}

/* What the runner keeps of an application's output (ampkit-init.c, OUTPUT_TAIL). */
#define SNAPSHOT_ROOM 16384

/*
 * The counters of every hinted thread at @n times, @at seconds after
 * @start_ns (strictly rising). It runs as a real-time thread where it may,
 * so that nothing runs on its own CPU while it reads, and so that the
 * ranked policies, which steer the fair class only, leave it out (it would
 * otherwise take part in their rankings with its own hint). The other
 * CPUs run on: the reads of one moment, a few milliseconds apart under
 * TCG (at_ns to done_ns), are one moment against a ranking period, though
 * a ranking may fall between two of them. A process that ends meanwhile
 * drops out. 0; -EINVAL for bad times; -E2BIG when the output would not
 * fit what the runner keeps; another -errno if /proc cannot be read.
 */
static int snapshot(struct sbuf *sb, uint64_t start_ns, char **at, int n)
{
	struct sched_param fifo = { .sched_priority = 1 };
	double seconds[64];
	int i, realtime;

	if (n > (int)(sizeof(seconds) / sizeof(seconds[0])))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		char *end;

		seconds[i] = strtod(at[i], &end);
		if (end == at[i] || *end || !(seconds[i] >= 0 && seconds[i] < 1e6) ||
		    (i && !(seconds[i] > seconds[i - 1])))
			return -EINVAL;
	}
	realtime = !sched_setscheduler(0, SCHED_FIFO, &fifo);
	sb_printf(sb, "{\"realtime\":%s,\"snapshots\":[", realtime ? "true" : "false");
	for (i = 0; i < n; i++) {
		uint64_t due = start_ns + (uint64_t)(seconds[i] * 1e9), now;
		int first = 1;
		DIR *proc;
		struct dirent *e;

		now = ampkit_now_ns();
		if (due > now)
			ampkit_sleep_ns(due - now);
		sb_printf(sb, "%s{\"at\":%.9g,\"at_ns\":%" PRIu64 ",\"threads\":[", i ? "," : "",
			  seconds[i], ampkit_now_ns() - start_ns);
		proc = opendir("/proc");
		if (!proc)
			return -errno;
		while ((e = readdir(proc))) {
			pid_t pid = numeric_name(e->d_name);

			if (pid)
				snapshot_process(sb, pid, &first);
		}
		closedir(proc);
		sb_printf(sb, "],\"done_ns\":%" PRIu64 "}", ampkit_now_ns() - start_ns);
		/* the runner keeps the tail: a cut would lose the opening */
		if (sb->len + 8 > SNAPSHOT_ROOM)
			return -E2BIG;
	}
	sb_printf(sb, "]}\n");
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t start_ns = ampkit_now_ns();
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
			step_result_json(&sb, err, in_force);
		}
		sb_printf(&sb, "]}\n");
	} else if (argc >= 2 && !strcmp(argv[0], "set-knob")) {
		int i;

		/* every step well formed before any is written: a name of
		 * /proc/sys/kernel, no path, and a value */
		for (i = 1; i < argc; i++) {
			const char *eq = strchr(argv[i], '=');

			if (!eq || eq == argv[i] || !eq[1] || (size_t)(eq - argv[i]) >= 64 ||
			    memchr(argv[i], '/', (size_t)(eq - argv[i])))
				return usage(argv[-optind]);
		}
		sb_printf(&sb, "{\"steps\":[");
		for (i = 1; i < argc; i++) {
			char name[64], in_force[64] = "";
			const char *eq = strchr(argv[i], '=');
			int err;

			snprintf(name, sizeof(name), "%.*s", (int)(eq - argv[i]), argv[i]);
			err = set_knob(name, eq + 1, in_force, sizeof(in_force));
			sb_printf(&sb, "%s{\"knob\":", i > 1 ? "," : "");
			sb_json_str(&sb, name);
			sb_printf(&sb, ",\"value\":");
			sb_json_str(&sb, eq + 1);
			step_result_json(&sb, err, in_force);
		}
		sb_printf(&sb, "]}\n");
	} else if (argc == 2 && !strcmp(argv[0], "sleep")) {
		double seconds = strtod(argv[1], NULL);

		if (!(seconds >= 0 && seconds < 1e9))
			return usage(argv[-optind]);
		ampkit_sleep_ns((uint64_t)(seconds * 1e9));
		sb_printf(&sb, "{\"slept\":%s}\n", argv[1]);
	} else if (argc >= 2 && !strcmp(argv[0], "snapshot")) {
		int err = snapshot(&sb, start_ns, argv + 1, argc - 1);

		if (err == -EINVAL)
			return usage(argv[-optind]);
		if (err == -E2BIG) {
			fprintf(stderr, "ampkit-probe: the snapshots take more than the %d bytes the "
				"runner keeps of an application's output: ask for fewer times\n",
				SNAPSHOT_ROOM);
			return 1;
		}
		if (err) {
			fprintf(stderr, "ampkit-probe: reading /proc: %s\n", strerror(-err));
			return 1;
		}
	} else if (argc == 1 && !strcmp(argv[0], "perf")) {
		sb_printf(&sb, "{\"loop\":%d,\"counters\":[", PERF_LOOP);
		perf_count(&sb, "instructions", PERF_COUNT_HW_INSTRUCTIONS);
		sb_printf(&sb, ",");
		perf_count(&sb, "cycles", PERF_COUNT_HW_CPU_CYCLES);
		sb_printf(&sb, "]}\n");
	} else if (argc == 1 && !strcmp(argv[0], "latency")) {
		latency(&sb);
	} else {
		return usage(argv[-optind]);
	}
	fputs(sb.data, stdout);
	sb_free(&sb);
	return 0;
}
