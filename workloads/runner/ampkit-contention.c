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
 * With an interference model for the applications (policy_data lines,
 * which the runner hands on as "data" lines before the first batch) and
 * a threshold S (-S, percent), the big CPUs go in that order to the
 * first application with which no predicted slowdown exceeds S, or to
 * the one of least total predicted slowdown when none is within it: the
 * paper's Algorithm 1 (choose()). Without a model every prediction is
 * within the threshold and the rule is the speedup-factor-driven
 * placement the paper compares against (the kit's policy "sfd"). The
 * threshold is checked when the big CPUs are given, not for the little
 * ones: every application not given big CPUs runs on the little ones,
 * so there is no choice left there. Each application adds its whole
 * pressure alone (an application's, all its threads', measured alone on
 * that type) to the clusters it runs on, split by its threads, also
 * where more applications than CPUs share a cluster and could not all
 * press at once: beyond the paper's one application a core, where its
 * functions were fitted, and so an extrapolation.
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
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "ampkit_workload.h"
#include "daemon.h"
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
	double predicted;	/* its predicted slowdown where placed, %; NAN: no model */
};

/*
 * The interference model of an application (Fan et al., eq. 1-4), given
 * by the run description's policy_data lines: its pressure on each
 * shared resource when alone on each core type (access rates, C in
 * eq. 1), and, for each core type it may run on, the coefficients of its
 * degradation function (eq. 4: the pressures on its own cluster's cache,
 * bus and memory, on the other cluster's bus and memory, and a constant),
 * which predict its slowdown in percent.
 */
enum resource { CACHE, BUS, MEM, NRESOURCES };
#define NCOEFS 6	/* own cache, bus, mem; other bus, mem; constant */
#define MAX_MODELS 64

struct model {
	int present;
	double pressure[2][NRESOURCES];	/* [BIG or LITTLE][resource] */
	double coef[2][NCOEFS];
};

static struct model models[MAX_MODELS];
static double threshold = INFINITY;	/* S, %: -S; none, every prediction is within it */
static int modelled;	/* a model was given: predictions are made */

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
	if (big_list && parse_cpu_list(big_list, &cpus_of[BIG]))
		die("-b needs CPUs this daemon may use, comma separated, not", big_list);
	for (cpu = 0; big_list && cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &cpus_of[BIG]) && (cpu >= MAX_CPUS || !CPU_ISSET(cpu, &online)))
			die("-b needs CPUs this daemon may use, comma separated, not", big_list);
	for (cpu = 0; !big_list && cpu < MAX_CPUS; cpu++) {
		capacity[cpu] = CPU_ISSET(cpu, &online) ? cpu_capacity(cpu) : 0;
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
	sb_cpu_list(&sb, &cpus_of[p->core]);
	if (!isnan(p->predicted))
		sb_printf(&sb, ",\"predicted_pct\":%.6g", p->predicted);
	sb_printf(&sb, "}");
	fprintf(log_file, "%s\n", sb.data);
	sb_free(&sb);
}

/* How much of @p's threads run on @type (BIG or LITTLE), where it is placed. */
static double share_on(const struct proc *p, enum core where, int big_taken, enum core type)
{
	double big;

	if (where == UNPLACED)
		return 0;
	big = where == BIG ? 1.0 : where == LITTLE ? 0.0 : (double)big_taken / p->threads;
	return type == BIG ? big : 1.0 - big;
}

/*
 * Eq. 1: the pressure on each resource of each cluster, the sum of the
 * pressures of the applications on it (an application on both types in
 * proportion to its threads there). Then eq. 4 for each placed
 * application with a model: its slowdown in percent, the prediction of
 * its type's function (on both types, the two weighted by its threads).
 * Returns the largest prediction; the total goes to @total.
 */
static double predict(struct proc **ps, const enum core *where, const int *big_taken, int n,
		      double *total)
{
	double pressure[2][NRESOURCES] = { { 0 } }, worst = -INFINITY;
	int i, r, t;

	for (i = 0; i < n; i++) {
		const struct model *m = &models[ps[i]->app];

		if (!m->present)
			continue;
		for (t = BIG; t <= LITTLE; t++)
			for (r = 0; r < NRESOURCES; r++)
				pressure[t][r] += share_on(ps[i], where[i], big_taken[i], (enum core)t) *
						  m->pressure[t][r];
	}
	*total = 0;
	for (i = 0; i < n; i++) {
		const struct model *m = &models[ps[i]->app];
		double sd = 0;

		if (!m->present || where[i] == UNPLACED)
			continue;
		for (t = BIG; t <= LITTLE; t++) {
			double share = share_on(ps[i], where[i], big_taken[i], (enum core)t);
			const double *c = m->coef[t], *own = pressure[t], *other = pressure[1 - t];

			if (share > 0)
				sd += share * (c[0] * own[CACHE] + c[1] * own[BUS] + c[2] * own[MEM] +
					       c[3] * other[BUS] + c[4] * other[MEM] + c[5]);
		}
		ps[i]->predicted = sd;
		*total += sd;
		if (sd > worst)
			worst = sd;
	}
	return worst;
}

/*
 * Algorithm 1 for the big CPUs, the applications ranked by speedup, the
 * highest first. While big CPUs are left: the first candidate (not yet
 * given any) with which, on the big CPUs and every other application
 * where it is (those not yet given any on the little ones), no predicted
 * slowdown exceeds the threshold S; if none, the candidate of the least
 * total predicted slowdown. It takes a big CPU for each of its threads,
 * as many as are left (on both types when they run out). The rest run
 * on the little CPUs. Without a model every prediction is 0 and the first
 * candidate is taken: the speedup-factor-driven placement.
 */
static void choose(struct proc **ranked, int n, enum core *where, int *big_taken)
{
	int big_left = ncpus_of[BIG], i, given[MAX_PROCS] = { 0 };

	for (i = 0; i < n; i++) {
		where[i] = ncpus_of[LITTLE] ? LITTLE : BIG;
		big_taken[i] = 0;
	}
	if (!ncpus_of[LITTLE] || !ncpus_of[BIG])
		return;
	while (big_left > 0) {
		int chosen = -1, best = -1, c;
		double best_total = INFINITY;

		for (c = 0; c < n && chosen < 0; c++) {
			enum core before = where[c];
			double total, worst;

			if (given[c])
				continue;
			where[c] = ranked[c]->threads <= big_left ? BIG : BOTH;
			big_taken[c] = ranked[c]->threads <= big_left ? ranked[c]->threads : big_left;
			worst = modelled ? predict(ranked, where, big_taken, n, &total) : 0;
			if (!modelled)
				total = 0;
			if (worst <= threshold)
				chosen = c;
			else if (best < 0 || total < best_total)
				best = c, best_total = total;
			if (chosen < 0) {
				where[c] = before;
				big_taken[c] = 0;
			}
		}
		if (chosen < 0)
			chosen = best;
		if (chosen < 0)
			break;	/* every application has its big CPUs */
		if (where[chosen] != BIG && where[chosen] != BOTH) {
			where[chosen] = ranked[chosen]->threads <= big_left ? BIG : BOTH;
			big_taken[chosen] = ranked[chosen]->threads <= big_left ?
					    ranked[chosen]->threads : big_left;
		}
		given[chosen] = 1;
		big_left -= big_taken[chosen];
	}
}

/* After a batch: the placement chosen, applied where it changed. */
static void place(void)
{
	struct proc *ranked[MAX_PROCS];
	enum core where[MAX_PROCS] = { BIG };	/* all set by choose() */
	int big_taken[MAX_PROCS] = { 0 }, n = 0, i;
	double total;

	for (i = 0; i < nprocs; i++)
		if (procs[i].live)
			ranked[n++] = &procs[i];
	/* eq. 1 sums every co-runner's pressure: one without a model would vanish from it */
	for (i = 0; modelled && i < n; i++) {
		if (!models[ranked[i]->app].present) {
			char which[16];

			snprintf(which, sizeof(which), "%d", ranked[i]->app);
			die("models were given, but none for the application of index", which);
		}
	}
	qsort(ranked, (size_t)n, sizeof(ranked[0]), by_speedup);
	choose(ranked, n, where, big_taken);
	for (i = 0; i < n; i++)
		ranked[i]->predicted = NAN;
	if (modelled)
		predict(ranked, where, big_taken, n, &total);
	for (i = 0; i < n; i++) {
		struct proc *p = ranked[i];
		enum core from = p->core;

		if (where[i] == from)
			continue;
		p->core = where[i];
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

/*
 * "data app <index> pressure <6 numbers> big <6 numbers> little <6 numbers>":
 * an application's model; its pressures on cache, bus and memory alone on
 * a big and on a little CPU, then its degradation function's coefficients
 * on each type (NCOEFS each).
 */
static void model_line(char *line)
{
	char *w[32], *save, *end;
	double v[2 * NRESOURCES + 2 * NCOEFS];
	struct model *m;
	int n = 0, k = 0, i, app;

	for (w[n] = strtok_r(line, " ", &save); w[n] && n < 31; w[n] = strtok_r(NULL, " ", &save))
		n++;
	char count[16];
	long index;

	snprintf(count, sizeof(count), "%d words", n);
	if (n != 24 || strcmp(w[1], "app") || strcmp(w[3], "pressure") || strcmp(w[10], "big") ||
	    strcmp(w[17], "little"))
		die("a model line needs 'data app INDEX pressure C_BIG_CACHE C_BIG_BUS C_BIG_MEM "
		    "C_LITTLE_CACHE C_LITTLE_BUS C_LITTLE_MEM big 6 COEFFICIENTS little 6 "
		    "COEFFICIENTS', 24 words; this has", count);
	errno = 0;
	index = strtol(w[2], &end, 10);
	if (errno || end == w[2] || *end || index < 0 || index >= MAX_MODELS)
		die("a model line for an application index out of 0-63", w[2]);
	app = (int)index;
	if (models[app].present)
		die("a model line for an application given one already", w[2]);
	for (i = 4; i < n; i++) {
		if (i == 10 || i == 17)
			continue;
		v[k] = strtod(w[i], &end);
		if (end == w[i] || *end || !isfinite(v[k]))
			die("a model line with a value that is not a finite number", w[i]);
		if (k < 2 * NRESOURCES && v[k] < 0)
			die("a model line with a negative pressure (an access rate)", w[i]);
		k++;
	}
	m = &models[app];
	for (i = 0; i < NRESOURCES; i++) {
		m->pressure[BIG][i] = v[i];
		m->pressure[LITTLE][i] = v[NRESOURCES + i];
	}
	for (i = 0; i < NCOEFS; i++) {
		m->coef[BIG][i] = v[2 * NRESOURCES + i];
		m->coef[LITTLE][i] = v[2 * NRESOURCES + NCOEFS + i];
	}
	m->present = 1;
	modelled = 1;
}

static void announced(char *line)
{
	int app, pid, threads, speedup, used = 0;
	struct proc *p;

	if (!line[0])
		return;
	if (!strncmp(line, "data ", 5)) {
		model_line(line);
	} else if (!strcmp(line, "sync")) {
		synced();
	} else if (sscanf(line, "app %d %d %d %d%n", &app, &pid, &threads, &speedup, &used) == 4 &&
		   !line[used] && app >= 0 && app < MAX_MODELS && pid > 0 && threads > 0 &&
		   speedup >= 0) {
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
		die("the runner said what is none of 'app INDEX PID THREADS SPEEDUP_Q10' (an index "
		    "below 64), 'end INDEX PID', 'sync' and 'data ...'", line);
	}
}

static void each_line(char *line, void *unused)
{
	(void)unused;
	announced(line);
}

/* Reads what the runner wrote; 0 at end of file. */
static int read_runner(int fd)
{
	static struct line_reader reader;
	int open = read_lines(&reader, fd, each_line, NULL);

	if (open < 0)
		die("the runner wrote a line longer than the daemon reads", NULL);
	return open;
}

static void summary(uint64_t period_us)
{
	struct rusage ru;
	struct sbuf sb;

	getrusage(RUSAGE_SELF, &ru);
	sb_init(&sb);
	sb_printf(&sb, "{\"type\":\"policy\",\"what\":\"summary\",\"daemon\":\"ampkit-contention\""
		  ",\"rule\":\"%s\",\"threshold_pct\":", modelled && isfinite(threshold) ? "contention" : "speedup");
	if (isinf(threshold))
		sb_printf(&sb, "null");
	else
		sb_printf(&sb, "%.6g", threshold);
	sb_printf(&sb, ",\"period_us\":%" PRIu64 ",\"big_cpus\":", period_us);
	sb_cpu_list(&sb, &cpus_of[BIG]);
	sb_printf(&sb, ",\"little_cpus\":");
	sb_cpu_list(&sb, &cpus_of[LITTLE]);
	sb_printf(&sb, ",\"instances\":%" PRIu64 ",\"placements\":%" PRIu64 ",\"moves\":%" PRIu64
		  ",\"corrections\":%" PRIu64 ",\"affinity_errors\":%" PRIu64
		  ",\"instances_untracked\":%" PRIu64 ",\"cpu_ns\":%" PRIu64 "}",
		  totals.instances, totals.placements, totals.moves, totals.corrections,
		  totals.affinity_errors, totals.untracked, cpu_ns_of(&ru));
	fprintf(log_file, "%s\n", sb.data);
	sb_free(&sb);
}

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [-p PERIOD_US] [-b BIG_CPUS] [-S THRESHOLD_PCT] [-l LOG] "
		"[-R READY_FD]\n", argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	uint64_t period_us = 10000, next;
	const char *log_path = NULL, *big_list = NULL;
	int opt, ready_fd = -1, open_input = 1, i;

	while ((opt = getopt(argc, argv, "p:b:S:l:R:")) != -1) {
		char *end;

		switch (opt) {
		case 'S':
			threshold = strtod(optarg, &end);
			if (end == optarg || *end || !isfinite(threshold))
				die("-S needs a slowdown threshold in percent, not", optarg);
			break;
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
		uint64_t now;

		if (wait_input(STDIN_FILENO, next))
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
