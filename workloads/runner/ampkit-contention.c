// SPDX-License-Identifier: GPL-2.0
/*
 * ampkit-contention: placement of applications on core types from user
 * space, after Fan, Sui and Xue's contention-aware scheduler for
 * big.LITTLE (Algorithm 1), a guest daemon. It acts on the kernel only
 * through the applications' threads' allowed CPUs (sched_setaffinity);
 * the kernel runs its own policy underneath (cfs for the kit's policies
 * that use it).
 *
 * The runner (ampkit-init) starts it before the measured run's
 * applications are released, when the run description has a
 * "policy_daemon ampkit-contention ..." line, and tells it on standard
 * input, in batches that end with "sync", every application instance it
 * forks, "app <index> <pid> <threads> <speedup_q10>", and every one that
 * ends, "end <index> <pid>"; it holds the batch's new instances at their
 * gate until the daemon has placed them and written a byte back on the
 * ready descriptor (-R). It closes the pipe when the run is over. The
 * daemon then writes its summary and exits; the runner fails the run if
 * it ends before that.
 *
 * The placement: after each batch the running instances are ranked by
 * their big-over-little speedup (the hint each was started with), the
 * highest first, and the big CPUs are dealt out a thread each in that
 * order: an instance whose threads all find one runs on the big CPUs
 * only, the one that takes the last of them runs on both types, and the
 * rest on the little CPUs only. Fan et al. map one single-threaded
 * application to each idle core, taking for a big core the waiting
 * application of highest speedup whose predicted slowdown beside those
 * already running stays under a threshold, so that no core idles while
 * one waits; the kit's applications are multi-threaded and run all at
 * once, more of them than there are cores, so the big CPUs go to whole
 * applications in that order, and none is left idle for want of an
 * application that fits.
 * Without an interference model every prediction is within the threshold
 * and the rule is the speedup-factor-driven placement the paper compares
 * against (the kit's policy "sfd"); the model is the contention-aware
 * policy's part still to come (issue 21).
 *
 * A placement covers every process of the instance's process group (a
 * benchmark that a shell script starts is the script's child), and
 * every period the daemon sets the mask again on any of their threads
 * that does not have it: threads and children inherit their creator's
 * mask, but one created while a placement was being applied may have
 * started from the old one.
 *
 * It writes JSON lines to the log (-l): one per placement (an instance
 * placed, or moved to another type), one per instance that ended, and a
 * summary at the end.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "ampkit_workload.h"
#include "sbuf.h"

#define MAX_PROCS 256
#define MAX_CPUS 64

enum core { BIG, LITTLE, BOTH, UNPLACED };

static const char *const core_name[] = { "big", "little", "both", "none" };

struct proc {
	int app;		/* the application's index in the run description */
	pid_t pid;
	int threads;
	unsigned int speedup_q10;
	int live;
	enum core core;
};

static struct proc procs[MAX_PROCS];
static int nprocs;
static cpu_set_t cpus_of[3];	/* BIG, LITTLE, BOTH */
static int ncpus_of[3];
static FILE *log_file;
static uint64_t epoch_ns;

static struct {
	uint64_t instances, placements, moves, corrections, affinity_errors, untracked;
} totals;

static void die(const char *what, const char *detail)
{
	fprintf(stderr, "ampkit-contention: %s%s%s\n", what, detail ? ": " : "",
		detail ? detail : "");
	exit(1);
}

/* --- the machine ----------------------------------------------------------- */

static unsigned long capacity_of(int cpu)
{
	char path[96];
	unsigned long value = 1024;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpu_capacity", cpu);
	f = fopen(path, "re");
	if (f) {
		if (fscanf(f, "%lu", &value) != 1)
			value = 1024;
		fclose(f);
	}
	return value;
}

/*
 * The big CPUs: those given with -b, or those of the largest
 * cpu_capacity; the little ones are the rest of the CPUs it may use.
 */
static void read_core_types(const char *big_list)
{
	unsigned long capacity[MAX_CPUS], max = 0;
	cpu_set_t online;
	int cpu;

	if (sched_getaffinity(0, sizeof(online), &online))
		die("cannot read its own allowed CPUs", strerror(errno));
	CPU_ZERO(&cpus_of[BIG]);
	CPU_ZERO(&cpus_of[LITTLE]);
	if (big_list) {
		char *copy = strdup(big_list), *save, *word;

		for (word = strtok_r(copy, ",", &save); word; word = strtok_r(NULL, ",", &save)) {
			char *end;
			long n = strtol(word, &end, 10);

			if (!*word || strspn(word, "0123456789") != strlen(word) || *end ||
			    n >= MAX_CPUS || !CPU_ISSET((int)n, &online))
				die("-b needs CPUs this daemon may use, comma separated, not", word);
			CPU_SET((int)n, &cpus_of[BIG]);
		}
		free(copy);
	}
	for (cpu = 0; !big_list && cpu < MAX_CPUS; cpu++) {
		capacity[cpu] = CPU_ISSET(cpu, &online) ? capacity_of(cpu) : 0;
		if (capacity[cpu] > max)
			max = capacity[cpu];
	}
	for (cpu = 0; cpu < MAX_CPUS; cpu++) {
		if (!CPU_ISSET(cpu, &online))
			continue;
		if (!big_list && capacity[cpu] == max)
			CPU_SET(cpu, &cpus_of[BIG]);
		else if (!CPU_ISSET(cpu, &cpus_of[BIG]))
			CPU_SET(cpu, &cpus_of[LITTLE]);
	}
	CPU_OR(&cpus_of[BOTH], &cpus_of[BIG], &cpus_of[LITTLE]);
	ncpus_of[BIG] = CPU_COUNT(&cpus_of[BIG]);
	ncpus_of[LITTLE] = CPU_COUNT(&cpus_of[LITTLE]);
	ncpus_of[BOTH] = CPU_COUNT(&cpus_of[BOTH]);
}

static void cpu_list(struct sbuf *sb, const cpu_set_t *set)
{
	int cpu, first = 1;

	sb_printf(sb, "[");
	for (cpu = 0; cpu < MAX_CPUS; cpu++) {
		if (!CPU_ISSET(cpu, set))
			continue;
		sb_printf(sb, "%s%d", first ? "" : ",", cpu);
		first = 0;
	}
	sb_printf(sb, "]");
}

/* --- masks ------------------------------------------------------------------ */

/* Sets @want on every thread of process @pid (all, or those without it); how many. */
static int apply_process(pid_t pid, const cpu_set_t *want, int all)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int set = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return 0;	/* it has ended */
	while ((d = readdir(dir))) {
		pid_t tid = (pid_t)atoi(d->d_name);
		cpu_set_t now;

		if (tid <= 0)
			continue;
		if (!all && !sched_getaffinity(tid, sizeof(now), &now) && CPU_EQUAL(&now, want))
			continue;
		if (sched_setaffinity(tid, sizeof(*want), want)) {
			if (errno != ESRCH)	/* a thread that has ended meanwhile is no error */
				totals.affinity_errors++;
			continue;
		}
		set++;
	}
	closedir(dir);
	return set;
}

/* The process group of @pid, from /proc/<pid>/stat; -1 when it has ended. */
static pid_t group_of(pid_t pid)
{
	char path[64], buf[512], *close_paren;
	int pgrp = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f) && (close_paren = strrchr(buf, ')')) &&
	    sscanf(close_paren + 1, " %*c %*d %d", &pgrp) != 1)
		pgrp = -1;
	fclose(f);
	return (pid_t)pgrp;
}

/*
 * Sets @p's type's CPUs on the threads of every process of its instance's
 * process group (the runner makes each instance a group leader): all of
 * them when @all, else only those whose mask differs. Returns how many
 * it set.
 */
static int apply(const struct proc *p, int all)
{
	const cpu_set_t *want = &cpus_of[p->core];
	struct dirent *d;
	DIR *dir;
	int set;

	set = apply_process(p->pid, want, all);
	dir = opendir("/proc");
	if (!dir)
		return set;
	while ((d = readdir(dir))) {
		pid_t pid = (pid_t)atoi(d->d_name);

		if (pid > 0 && pid != p->pid && group_of(pid) == p->pid)
			set += apply_process(pid, want, all);
	}
	closedir(dir);
	return set;
}

/* --- the placement ------------------------------------------------------------ */

static int by_speedup(const void *a, const void *b)
{
	const struct proc *x = *(const struct proc *const *)a, *y = *(const struct proc *const *)b;

	if (x->speedup_q10 != y->speedup_q10)
		return x->speedup_q10 > y->speedup_q10 ? -1 : 1;
	return x->app - y->app;
}

static void log_placement(const struct proc *p, enum core from)
{
	struct sbuf sb;

	sb_init(&sb);
	sb_printf(&sb, "{\"type\":\"policy\",\"what\":\"place\",\"t_ns\":%" PRIu64
		  ",\"app\":%d,\"pid\":%d,\"threads\":%d,\"speedup_q10\":%u,\"core\":\"%s\""
		  ",\"from\":\"%s\",\"cpus\":",
		  ampkit_now_ns() - epoch_ns, p->app, (int)p->pid, p->threads, p->speedup_q10,
		  core_name[p->core], core_name[from]);
	cpu_list(&sb, &cpus_of[p->core]);
	sb_printf(&sb, "}");
	fprintf(log_file, "%s\n", sb.data);
	sb_free(&sb);
}

/*
 * The running instances ranked by speedup, the highest first; the big
 * CPUs dealt out a thread each in that order: big only for an instance
 * all of whose threads find one, both types for the one that takes the
 * last, little for the rest (big for all on a machine of one type).
 */
static void place(void)
{
	struct proc *ranked[MAX_PROCS];
	int n = 0, i, big_left = ncpus_of[BIG];

	for (i = 0; i < nprocs; i++)
		if (procs[i].live)
			ranked[n++] = &procs[i];
	qsort(ranked, (size_t)n, sizeof(ranked[0]), by_speedup);
	for (i = 0; i < n; i++) {
		struct proc *p = ranked[i];
		enum core from = p->core, to;

		if (!ncpus_of[LITTLE])
			to = BIG;
		else if (!big_left)
			to = LITTLE;
		else if (p->threads <= big_left)
			to = BIG;
		else
			to = BOTH;
		big_left -= to == LITTLE ? 0 : (p->threads < big_left ? p->threads : big_left);
		if (to == from)
			continue;
		p->core = to;
		apply(p, 1);
		if (from == UNPLACED)
			totals.placements++;
		else
			totals.moves++;
		log_placement(p, from);
	}
}

/* --- the runner's lines --------------------------------------------------------- */

static struct proc *find(int app, pid_t pid)
{
	int i;

	for (i = 0; i < nprocs; i++)
		if (procs[i].live && procs[i].app == app && procs[i].pid == pid)
			return &procs[i];
	return NULL;
}

static int ack_fd = -1;

/* Acts on a batch: places, then tells the runner it may release the batch's instances. */
static void synced(void)
{
	place();
	if (ack_fd >= 0 && write(ack_fd, "p", 1) != 1)
		die("cannot tell the runner the batch is placed", strerror(errno));
}

static void announced(char *line)
{
	int app, pid, threads, speedup, used = 0;
	struct proc *p;

	if (!line[0])
		return;
	if (!strcmp(line, "sync")) {
		synced();
	} else if (sscanf(line, "app %d %d %d %d%n", &app, &pid, &threads, &speedup, &used) == 4 &&
		   !line[used] && app >= 0 && pid > 0 && threads > 0 && speedup >= 0) {
		totals.instances++;
		for (p = procs; p < procs + nprocs && p->live; p++)
			;
		if (p == procs + MAX_PROCS) {
			totals.untracked++;
			return;
		}
		if (p == procs + nprocs)
			nprocs++;
		*p = (struct proc){ .app = app, .pid = (pid_t)pid, .threads = threads,
				    .speedup_q10 = (unsigned int)speedup, .live = 1,
				    .core = UNPLACED };
	} else if (sscanf(line, "end %d %d%n", &app, &pid, &used) == 2 && !line[used]) {
		p = find(app, (pid_t)pid);
		if (p) {
			p->live = 0;
			fprintf(log_file, "{\"type\":\"policy\",\"what\":\"end\",\"t_ns\":%" PRIu64
				",\"app\":%d,\"pid\":%d}\n", ampkit_now_ns() - epoch_ns, app, pid);
		}
	} else {
		die("the runner said what is none of 'app INDEX PID THREADS SPEEDUP_Q10', "
		    "'end INDEX PID' and 'sync'", line);
	}
}

/* Reads what the runner wrote; 0 at end of file. */
static int read_runner(int fd)
{
	static char buf[4096];
	static size_t len;
	char *line, *nl;
	ssize_t got;

	if (len == sizeof(buf) - 1)
		die("the runner wrote a line longer than the daemon reads", NULL);
	got = read(fd, buf + len, sizeof(buf) - 1 - len);
	if (got < 0)
		return errno == EINTR || errno == EAGAIN;
	if (got == 0)
		return 0;
	len += (size_t)got;
	buf[len] = '\0';
	line = buf;
	while ((nl = strchr(line, '\n'))) {
		*nl = '\0';
		announced(line);
		line = nl + 1;
	}
	len = strlen(line);
	memmove(buf, line, len + 1);
	return 1;
}

static void summary(uint64_t period_us)
{
	struct rusage ru;
	struct sbuf sb;

	getrusage(RUSAGE_SELF, &ru);
	sb_init(&sb);
	sb_printf(&sb, "{\"type\":\"policy\",\"what\":\"summary\",\"daemon\":\"ampkit-contention\""
		  ",\"rule\":\"speedup\",\"period_us\":%" PRIu64 ",\"big_cpus\":", period_us);
	cpu_list(&sb, &cpus_of[BIG]);
	sb_printf(&sb, ",\"little_cpus\":");
	cpu_list(&sb, &cpus_of[LITTLE]);
	sb_printf(&sb, ",\"instances\":%" PRIu64 ",\"placements\":%" PRIu64 ",\"moves\":%" PRIu64
		  ",\"corrections\":%" PRIu64 ",\"affinity_errors\":%" PRIu64
		  ",\"instances_untracked\":%" PRIu64 ",\"cpu_ns\":%" PRIu64 "}",
		  totals.instances, totals.placements, totals.moves, totals.corrections,
		  totals.affinity_errors, totals.untracked,
		  (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000u +
		  (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000u);
	fprintf(log_file, "%s\n", sb.data);
	sb_free(&sb);
}

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [-p PERIOD_US] [-b BIG_CPUS] [-l LOG] [-R READY_FD]\n", argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	uint64_t period_us = 10000, next;
	const char *log_path = NULL, *big_list = NULL;
	int opt, ready_fd = -1, open_input = 1, i;

	while ((opt = getopt(argc, argv, "p:b:l:R:")) != -1) {
		switch (opt) {
		case 'p':
			period_us = strtoull(optarg, NULL, 10);
			break;
		case 'b':
			big_list = optarg;
			break;
		case 'l':
			log_path = optarg;
			break;
		case 'R':
			ready_fd = atoi(optarg);
			break;
		default:
			usage(argv[0]);
		}
	}
	if (optind != argc || period_us < 100 || period_us > 10000000)
		usage(argv[0]);
	log_file = stdout;
	if (log_path && !(log_file = fopen(log_path, "we")))
		die("cannot write the log", log_path);
	read_core_types(big_list);
	epoch_ns = ampkit_now_ns();
	if (ready_fd >= 0) {
		if (write(ready_fd, "r", 1) != 1)
			die("cannot tell the runner it is ready", strerror(errno));
		ack_fd = ready_fd;	/* and, after each batch, that it is placed */
	}
	next = epoch_ns + period_us * 1000;
	while (open_input) {
		struct pollfd in = { .fd = STDIN_FILENO, .events = POLLIN };
		uint64_t now = ampkit_now_ns(), left = now >= next ? 0 : next - now;
		struct timespec wait = { (time_t)(left / 1000000000ULL), (long)(left % 1000000000ULL) };

		if (ppoll(&in, 1, &wait, NULL) > 0)
			open_input = read_runner(STDIN_FILENO);
		now = ampkit_now_ns();
		if (now < next)
			continue;
		for (i = 0; i < nprocs; i++)
			if (procs[i].live && procs[i].core != UNPLACED)
				totals.corrections += (uint64_t)apply(&procs[i], 0);
		while (next <= now)
			next += period_us * 1000;
	}
	summary(period_us);
	return fclose(log_file) ? 1 : 0;
}
