// SPDX-License-Identifier: GPL-2.0
/*
 * ampkit-online: the online speedup model, a guest daemon.
 *
 * The runner (ampkit-init) starts it once the warm-up is over, before the
 * measured run's applications are released, when the run description
 * asks for it ("online" and "online_model" lines, workloads/README.md).
 * The runner tells it on standard input each application instance it
 * forks, one line "app <index> <pid> ..." (it reads the first two
 * numbers; "end" lines, which say an instance ended, it leaves to
 * /proc), and closes the pipe when the run is over; the daemon then
 * finishes its last period and exits.
 *
 * Every period it looks for the instances' threads (/proc/<pid>/task),
 * opens counters for each new one, and for each thread that retired
 * enough instructions predicts its big-over-little speedup from the rates
 * per instruction of the events it counted on each core type, with that
 * type's model (online.h), smooths the prediction (Saez et al.'s phase
 * handling) and hands it to the kernel through the speedup interface
 * (prctl PR_SCHED_AMP, ampctl.h) when it changes. A thread keeps the
 * hint it started with until its first estimate, and for good if its
 * counters cannot be opened (said in the log).
 *
 * Why a daemon and not the kernel: the counters are the kernel's own
 * perf events, opened per thread and per CPU, so the scheduler's fast
 * paths stay as they are and no PMU code enters the series; the cost is
 * one process that wakes once a period, whose CPU time the runner
 * reports. Why per CPU: a thread's counts on big and on little CPUs must
 * stay apart (each type has its model), and an event bound to a thread
 * and a CPU counts only while the thread runs there. The events are not
 * inherited: gem5 v24 zeroes a counter the PMU enables again without the
 * kernel having written it, which a switch between threads that share
 * inherited counters does (pmu.h); a thread's own events are written at
 * every switch in.
 *
 * It writes JSON lines to the log (-l): one per thread when first seen,
 * one per thread and period with an estimate, and a summary at the end
 * (with the instructions threads still held back, too few to estimate
 * by, when they ended: never estimated). Replay mode (-r FILE) reads
 * counts from FILE instead of the PMU, writes nothing to the kernel and
 * logs to standard output: the host-side tests check the arithmetic
 * through it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ampctl.h"
#include "ampkit_workload.h"
#include "daemon.h"
#include "online.h"
#include "pmu.h"
#include "sbuf.h"

#define MAX_PROCS 256
#define MAX_TRACKED 1024
#define MAX_LOG_LINES 4000
#define GROUP_SIZE (1 + ONLINE_MAX_EVENTS)

struct group {
	int fd[GROUP_SIZE];	/* [0] INST_RETIRED, the leader; -1 where none */
	int n;
	uint64_t last[GROUP_SIZE];
};

struct thread {
	pid_t tid, pid;
	int app;
	int counted;		/* its counters are open */
	int gone;
	struct group *groups;	/* one per CPU */
	struct online_phase phase;
	unsigned int q10;	/* what it was last given; 0: nothing yet */
	uint64_t since_ns[ONLINE_CORES];	/* when each type's counts not yet used began */
	struct online_counts pending[ONLINE_CORES];	/* too few to estimate by, yet */
};

struct proc {
	pid_t pid;
	int app;
	int gone;
};

static struct online_model models[ONLINE_CORES];
static int ncpus;
static int core_of[PMU_MAX_CPUS];
static unsigned int pmu_type[PMU_MAX_CPUS];
static struct thread threads[MAX_TRACKED];
static int nthreads;
static struct proc procs[MAX_PROCS];
static int nprocs;
static FILE *log_file;
static int replaying;	/* -r: counts from a file, nothing written to the kernel */
static uint64_t epoch_ns;	/* when it told the runner it was ready; replay: 0 */

static struct {
	uint64_t periods, estimates, writes, write_errors;
	uint64_t without_counters, untracked, instances_untracked, log_dropped, log_lines;
	uint64_t unestimated_instructions;	/* held back when their thread ended */
	uint64_t period_cpu_ns, period_cpu_max_ns, period_wall_max_ns;
} totals;

static const char *const core_name[ONLINE_CORES] = { "big", "little" };

static void log_line(struct sbuf *sb)
{
	if (totals.log_lines >= MAX_LOG_LINES) {
		totals.log_dropped++;
		return;
	}
	totals.log_lines++;
	fprintf(log_file, "%s\n", sb->data);
}

static void die(const char *what, const char *detail)
{
	fprintf(stderr, "ampkit-online: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	exit(1);
}

/* --- the machine ----------------------------------------------------------- */

/*
 * Each CPU's core type: big where cpu_capacity is the largest, little
 * elsewhere (the kit's platforms have two types); a machine whose CPUs
 * are all alike is all big.
 */
static void read_core_types(void)
{
	unsigned long capacity[PMU_MAX_CPUS], max = 0;
	int cpu;

	ncpus = (int)sysconf(_SC_NPROCESSORS_CONF);
	if (ncpus < 1)
		die("cannot count the CPUs", strerror(errno));
	if (ncpus > PMU_MAX_CPUS)
		ncpus = PMU_MAX_CPUS;
	for (cpu = 0; cpu < ncpus; cpu++) {
		capacity[cpu] = cpu_capacity(cpu);
		if (capacity[cpu] > max)
			max = capacity[cpu];
	}
	for (cpu = 0; cpu < ncpus; cpu++)
		core_of[cpu] = capacity[cpu] == max ? ONLINE_BIG : ONLINE_LITTLE;
}

/* --- counters ------------------------------------------------------------- */

static int open_event(unsigned int type, int number, pid_t tid, int cpu, int leader,
		      int disabled)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config = (uint64_t)number;
	attr.disabled = disabled;
	attr.exclude_hv = 1;
	attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
			   PERF_FORMAT_TOTAL_TIME_RUNNING;
	return (int)syscall(SYS_perf_event_open, &attr, tid, cpu, leader, PERF_FLAG_FD_CLOEXEC);
}

static void close_groups(struct thread *t)
{
	int cpu, i;

	if (!t->groups)
		return;
	for (cpu = 0; cpu < ncpus; cpu++)
		for (i = t->groups[cpu].n - 1; i >= 0; i--)
			if (t->groups[cpu].fd[i] >= 0)
				close(t->groups[cpu].fd[i]);
	free(t->groups);
	t->groups = NULL;
	t->counted = 0;
}

/* The CPU of @t's first group: the one opened enabled. */
static int first_cpu(const struct thread *t)
{
	int cpu;

	for (cpu = 0; cpu < ncpus && !t->groups[cpu].n; cpu++)
		;
	return cpu;
}

/* Where open_groups() failed: the CPU and the event. */
static int failed_cpu;
static const char *failed_event;

/* open_groups()'s own failures, apart from any errno a system call gives */
#define NO_CPU_PMU (-1)		/* a CPU whose core type has a model has no PMU in sysfs */
#define NO_MODEL (-2)		/* no CPU's core type has a model: nothing to count */

/*
 * One group per CPU whose core type has a model: INST_RETIRED and that
 * model's events. Returns 0, NO_CPU_PMU, NO_MODEL or the errno of the
 * first that failed (then none stay open, and failed_cpu and failed_event
 * say which).
 *
 * Cost: installing an enabled event in a running thread's context takes
 * an interrupt to the thread's CPU and a wait for it; a disabled one
 * joins a context that has events already without either. So the first
 * group opens enabled, the others disabled and are enabled afterwards:
 * one interrupt per group, not one per event.
 */
static int open_groups(struct thread *t)
{
	int cpu, i, first = 1;

	t->groups = calloc((size_t)ncpus, sizeof(*t->groups));
	if (!t->groups)
		return ENOMEM;
	for (cpu = 0; cpu < ncpus; cpu++) {
		const struct online_model *m = &models[core_of[cpu]];
		struct group *g = &t->groups[cpu];

		for (i = 0; i < GROUP_SIZE; i++)
			g->fd[i] = -1;
		if (!m->present)
			continue;
		failed_cpu = cpu;
		if (pmu_type[cpu] == PMU_NO_TYPE) {
			failed_event = "INST_RETIRED";
			close_groups(t);
			return NO_CPU_PMU;
		}
		g->n = 1 + m->n;
		for (i = 0; i < g->n; i++) {
			int number;

			failed_event = i ? m->events[i - 1] : "INST_RETIRED";
			number = pmu_event_number(failed_event);

			g->fd[i] = open_event(pmu_type[cpu], number, t->tid, cpu,
					      i ? g->fd[0] : -1, !i && !first);
			if (g->fd[i] < 0) {
				int err = errno;

				close_groups(t);
				return err;
			}
		}
		first = 0;
	}
	if (first) {
		close_groups(t);
		return NO_MODEL;
	}
	for (cpu = 0; cpu < ncpus; cpu++) {
		struct group *g = &t->groups[cpu];

		if (g->n && cpu != first_cpu(t) &&
		    ioctl(g->fd[0], PERF_EVENT_IOC_ENABLE, 0)) {
			int err = errno;

			failed_cpu = cpu;
			failed_event = "INST_RETIRED";
			close_groups(t);
			return err;
		}
	}
	t->counted = 1;
	return 0;
}

/* Adds the counts since the last read of @t's groups into @c, by core type. */
static void read_groups(struct thread *t, struct online_counts c[ONLINE_CORES])
{
	uint64_t buf[3 + GROUP_SIZE];
	int cpu, i;

	for (cpu = 0; cpu < ncpus; cpu++) {
		struct group *g = &t->groups[cpu];
		struct online_counts *sum = &c[core_of[cpu]];
		ssize_t want = (ssize_t)((3 + (size_t)g->n) * sizeof(uint64_t));

		if (!g->n || read(g->fd[0], buf, (size_t)want) != want || buf[0] != (uint64_t)g->n)
			continue;
		for (i = 0; i < g->n; i++) {
			uint64_t delta = buf[3 + i] - g->last[i];

			g->last[i] = buf[3 + i];
			if (i)
				sum->events[i - 1] += delta;
			else
				sum->instructions += delta;
		}
	}
}

/*
 * The kernel switches its per-task perf hooks on with the first per-task
 * event in the system, and waits for an RCU grace period while it does
 * (account_event(): static_branch_enable() then synchronize_rcu()): ticks
 * of waiting, measured at over 10 ms of a gem5 run, in which a short
 * program's threads can end before their counters open. A software event
 * on the daemon itself, opened before the runner is told it is ready and
 * held to the end, pays that once, before the applications start.
 */
static int hold_task_hooks(void)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	return (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* --- threads and processes ----------------------------------------------- */

static struct thread *find_thread(pid_t tid)
{
	int i;

	for (i = 0; i < nthreads; i++)
		if (threads[i].tid == tid && !threads[i].gone)
			return &threads[i];
	return NULL;
}

/* The state letter of a thread in /proc (R, S, Z...), '?' if it cannot be read. */
static char thread_state(pid_t pid, pid_t tid)
{
	char path[64], *text, *close_paren;
	char state = '?';

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	text = read_text(path);
	if (text && (close_paren = strrchr(text, ')')) && close_paren[1] == ' ')
		state = close_paren[2];
	free(text);
	return state;
}

static struct thread *track(pid_t tid, pid_t pid, int app, int replay)
{
	uint64_t begin = ampkit_now_ns();
	struct sbuf sb;
	struct thread *t;
	int err = 0;

	for (t = threads; t < threads + nthreads && !t->gone; t++)
		;
	if (t == threads + MAX_TRACKED) {
		totals.untracked++;	/* each period it is seen again: sightings, not threads */
		return NULL;
	}
	if (t == threads + nthreads)
		nthreads++;
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->pid = pid;
	t->app = app;
	t->since_ns[ONLINE_BIG] = t->since_ns[ONLINE_LITTLE] = replay ? epoch_ns : begin;
	if (!replay)
		err = open_groups(t);
	else
		t->counted = 1;
	if (err)
		totals.without_counters++;
	sb_init(&sb);
	sb_printf(&sb, "{\"type\":\"online\",\"what\":\"thread\",\"t_ns\":%" PRIu64
		  ",\"tid\":%d,\"pid\":%d,\"app\":%d,\"open_ns\":%" PRIu64 ",\"state\":\"%c\","
		  "\"counters\":", begin, (int)tid, (int)pid, app,
		  ampkit_now_ns() - begin, replay ? '-' : thread_state(pid, tid));
	if (err == NO_CPU_PMU)
		sb_json_str(&sb, "no CPU PMU in sysfs for its CPUs: it keeps its hint");
	else if (err == NO_MODEL)
		sb_json_str(&sb, "no model for its CPUs' core types: it keeps its hint");
	else if (err) {
		struct sbuf msg;

		sb_init(&msg);
		sb_printf(&msg, "cannot be opened (%s, %s on CPU %d): it keeps its hint",
			  strerror(err), failed_event, failed_cpu);
		sb_json_str(&sb, msg.data);
		sb_free(&msg);
	} else {
		sb_json_str(&sb, "open");
	}
	sb_printf(&sb, "}");
	log_line(&sb);
	sb_free(&sb);
	return t;
}

/* New threads of the known instances; marks the instances that have ended. */
static void discover(void)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int i;

	for (i = 0; i < nprocs; i++) {
		if (procs[i].gone)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task", (int)procs[i].pid);
		dir = opendir(path);
		if (!dir) {
			procs[i].gone = 1;
			continue;
		}
		while ((d = readdir(dir))) {
			pid_t tid = (pid_t)atoi(d->d_name);

			if (tid > 0 && !find_thread(tid))
				track(tid, procs[i].pid, procs[i].app, 0);
		}
		closedir(dir);
	}
}

/* --- a period ------------------------------------------------------------ */

static void json_double(struct sbuf *sb, double v)
{
	if (isnan(v))
		sb_printf(sb, "null");
	else
		sb_printf(sb, "%.4f", v);
}

/* Takes a thread's counts of one period: estimates, smooths, hands it on. */
static void take(struct thread *t, struct online_counts c[ONLINE_CORES],
		 uint64_t min_instructions, uint64_t now_ns, int ended)
{
	double estimate, per_type[ONLINE_CORES], use;
	uint64_t since_ns = now_ns;
	unsigned int q10;
	int stable, err = 0, written = 0, type;
	struct sbuf sb;

	online_carry(t->pending, c, min_instructions);
	/* what a thread that ended still held back is never estimated: say how much */
	if (ended)
		for (type = 0; type < ONLINE_CORES; type++)
			totals.unestimated_instructions += t->pending[type].instructions;
	/* the estimate spans from the earliest counts it uses */
	for (type = 0; type < ONLINE_CORES; type++)
		if (c[type].instructions && t->since_ns[type] < since_ns)
			since_ns = t->since_ns[type];
	/* a type with nothing held back starts afresh; one held back keeps its start */
	for (type = 0; type < ONLINE_CORES; type++)
		if (!t->pending[type].instructions)
			t->since_ns[type] = now_ns;
	if (!online_period_estimate(models, c, min_instructions, &estimate, per_type))
		return;
	totals.estimates++;
	use = online_phase_update(&t->phase, estimate, &stable);
	q10 = online_q10(use);
	/* a thread that ended gets nothing: its tid may be another's by now */
	if (q10 != t->q10 && !ended) {
		err = replaying ? 0 : amp_set_speedup(t->tid, q10);
		/* ESRCH: it ended after its last counts, nothing to give and nothing wrong */
		if (err && err != ESRCH) {
			totals.write_errors++;
		} else if (!err) {
			t->q10 = q10;
			written = 1;
			totals.writes++;
		}
	}
	sb_init(&sb);
	/* times on the runner's clock (CLOCK_MONOTONIC), as its records' start_ns and roi_ns */
	sb_printf(&sb, "{\"type\":\"online\",\"what\":\"estimate\",\"from_ns\":%" PRIu64
		  ",\"t_ns\":%" PRIu64 ",\"tid\":%d,\"app\":%d,\"instructions\":[%" PRIu64
		  ",%" PRIu64 "],\"per_type\":[", since_ns, now_ns, (int)t->tid, t->app,
		  c[ONLINE_BIG].instructions, c[ONLINE_LITTLE].instructions);
	json_double(&sb, per_type[ONLINE_BIG]);
	sb_printf(&sb, ",");
	json_double(&sb, per_type[ONLINE_LITTLE]);
	sb_printf(&sb, "],\"estimate\":");
	json_double(&sb, estimate);
	sb_printf(&sb, ",\"average\":");
	json_double(&sb, t->phase.average);
	sb_printf(&sb, ",\"stable\":%s,\"speedup_q10\":%u,\"written\":%s",
		  stable ? "true" : "false", q10, written ? "true" : "false");
	if (ended || err == ESRCH)
		sb_printf(&sb, ",\"ended\":true");
	/* what the kernel holds now: the per-task state the policies read */
	if (!replaying && !ended && err != ESRCH) {
		int held = amp_get_speedup(t->tid);

		if (held >= 0)
			sb_printf(&sb, ",\"kernel_q10\":%d", held);
		else
			sb_printf(&sb, ",\"kernel_q10\":null");
	}
	if (err && err != ESRCH) {
		sb_printf(&sb, ",\"error\":");
		sb_json_str(&sb, strerror(err));
	}
	sb_printf(&sb, "}");
	log_line(&sb);
	sb_free(&sb);
}

static void period(uint64_t min_instructions)
{
	uint64_t cpu0 = ampkit_thread_cpu_ns(), wall0 = ampkit_now_ns(), now, spent;
	int i;

	discover();
	now = ampkit_now_ns();
	for (i = 0; i < nthreads; i++) {
		struct online_counts c[ONLINE_CORES];
		struct thread *t = &threads[i];
		char path[64];
		int alive;

		if (t->gone)
			continue;
		/* whether it still lives, before its last counts: its tid could be another's later */
		snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)t->pid, (int)t->tid);
		alive = !access(path, F_OK);
		if (t->counted) {
			memset(c, 0, sizeof(c));
			read_groups(t, c);
			/* an exited thread's events keep its last counts: taken, not written */
			take(t, c, min_instructions, now, !alive);
		}
		if (!alive) {
			close_groups(t);
			t->gone = 1;
		}
	}
	totals.periods++;
	spent = ampkit_thread_cpu_ns() - cpu0;
	totals.period_cpu_ns += spent;
	if (spent > totals.period_cpu_max_ns)
		totals.period_cpu_max_ns = spent;
	spent = ampkit_now_ns() - wall0;
	if (spent > totals.period_wall_max_ns)
		totals.period_wall_max_ns = spent;
}

/* --- input from the runner ------------------------------------------------ */

/* An instance the runner announced ("app <index> <pid> ..."); other lines are not its. */
static void announced(char *line, void *added)
{
	struct proc *p;
	int app, pid;

	if (sscanf(line, "app %d %d", &app, &pid) != 2)
		return;
	for (p = procs; p < procs + nprocs && !p->gone; p++)
		;
	if (p == procs + MAX_PROCS) {
		totals.instances_untracked++;
		return;
	}
	if (p == procs + nprocs)
		nprocs++;
	p->pid = (pid_t)pid;
	p->app = app;
	p->gone = 0;
	*(int *)added = 1;
}

/* Reads what the runner wrote; returns 0 at end of file (the run is over). */
static int read_runner(int fd)
{
	static struct line_reader reader;
	int added = 0, open = read_lines(&reader, fd, announced, &added);

	if (open < 0)
		die("the runner wrote a line longer than the daemon reads", NULL);
	/*
	 * An instance is announced while the gate holds it: its main thread's
	 * counters open before it runs, not a period later.
	 */
	if (added)
		discover();
	return open;
}

static void summary(uint64_t period_us, uint64_t min_instructions)
{
	struct sbuf sb;
	struct rusage ru;
	uint64_t cpu_ns;
	int t;

	getrusage(RUSAGE_SELF, &ru);
	sb_init(&sb);
	sb_printf(&sb, "{\"type\":\"online\",\"what\":\"summary\",\"ready_ns\":%" PRIu64
		  ",\"period_us\":%" PRIu64 ",\"min_instructions\":%" PRIu64 ",\"models\":{",
		  epoch_ns, period_us, min_instructions);
	for (t = 0; t < ONLINE_CORES; t++) {
		int i;

		sb_printf(&sb, "%s\"%s\":", t ? "," : "", core_name[t]);
		if (!models[t].present) {
			sb_printf(&sb, "null");
			continue;
		}
		sb_printf(&sb, "{\"intercept\":%.17g,\"events\":{", models[t].intercept);
		for (i = 0; i < models[t].n; i++)
			sb_printf(&sb, "%s\"%s\":%.17g", i ? "," : "", models[t].events[i],
				  models[t].coef[i]);
		sb_printf(&sb, "}}");
	}
	cpu_ns = cpu_ns_of(&ru);
	sb_printf(&sb, "},\"periods\":%" PRIu64 ",\"threads\":%d", totals.periods, nthreads);
	sb_printf(&sb, ",\"threads_without_counters\":%" PRIu64 ",\"untracked_sightings\":%" PRIu64
		  ",\"instances_untracked\":%" PRIu64, totals.without_counters, totals.untracked,
		  totals.instances_untracked);
	sb_printf(&sb, ",\"estimates\":%" PRIu64 ",\"writes\":%" PRIu64 ",\"write_errors\":%" PRIu64,
		  totals.estimates, totals.writes, totals.write_errors);
	sb_printf(&sb, ",\"unestimated_instructions\":%" PRIu64, totals.unestimated_instructions);
	sb_printf(&sb, ",\"period_cpu_ns_mean\":%" PRIu64 ",\"period_cpu_ns_max\":%" PRIu64,
		  totals.periods ? totals.period_cpu_ns / totals.periods : 0,
		  totals.period_cpu_max_ns);
	sb_printf(&sb, ",\"period_wall_ns_max\":%" PRIu64, totals.period_wall_max_ns);
	sb_printf(&sb, ",\"cpu_ns\":%" PRIu64 ",\"log_lines_dropped\":%" PRIu64 "}", cpu_ns,
		  totals.log_dropped);
	/* the summary is never dropped */
	fprintf(log_file, "%s\n", sb.data);
	sb_free(&sb);
}

/* --- replay ------------------------------------------------------------- */

/*
 * "count <tid> <big|little> <instructions> <event>..." lines, events in
 * that type's model order, gather one period's counts; "period" ends it.
 * "end <tid>" says that thread ended in this period: its counts are its last.
 */
static void replay(const char *path, uint64_t min_instructions)
{
	static struct online_counts counts[MAX_TRACKED][ONLINE_CORES];
	static int ended[MAX_TRACKED];
	char line[512], *w[3 + GROUP_SIZE], *save;
	FILE *f = fopen(path, "r");
	uint64_t tick = 0;
	int lineno = 0, i, n;

	if (!f)
		die("cannot read the replay file", path);
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		n = 0;
		for (w[n] = strtok_r(line, " \t\n", &save); w[n];
		     w[n] = strtok_r(NULL, " \t\n", &save)) {
			if (++n < 3 + GROUP_SIZE)
				continue;
			if (strtok_r(NULL, " \t\n", &save))
				die("replay: a line with more words than a count line has", line);
			break;
		}
		if (!n || w[0][0] == '#')
			continue;
		if (!strcmp(w[0], "period")) {
			tick += 1000000;
			for (i = 0; i < nthreads; i++) {
				if (threads[i].gone)
					continue;
				take(&threads[i], counts[i], min_instructions, epoch_ns + tick,
				     ended[i]);
				threads[i].gone = ended[i];
			}
			memset(counts, 0, sizeof(counts));
			totals.periods++;
		} else if (!strcmp(w[0], "end") && n == 2) {
			struct thread *t = find_thread((pid_t)atoi(w[1]));

			if (!t)
				die("replay: an end line for a thread with no counts", w[1]);
			ended[t - threads] = 1;
		} else if (!strcmp(w[0], "count") && n >= 4) {
			pid_t tid = (pid_t)atoi(w[1]);
			int type = !strcmp(w[2], "big") ? ONLINE_BIG : ONLINE_LITTLE;
			struct thread *t = find_thread(tid);
			struct online_counts *c;
			int k;

			if (!t)
				t = track(tid, tid, 0, 1);
			if (!t || n - 4 != models[type].n)
				die("replay: a count line with the wrong number of events", w[1]);
			c = &counts[t - threads][type];
			c->instructions += strtoull(w[3], NULL, 10);
			for (k = 0; k < models[type].n; k++)
				c->events[k] += strtoull(w[4 + k], NULL, 10);
		} else {
			char where[32];

			snprintf(where, sizeof(where), "line %d", lineno);
			die("replay: expected 'count TID big|little INSTRUCTIONS EVENTS...', "
			    "'end TID' or 'period'", where);
		}
	}
	fclose(f);
}

/* --- main --------------------------------------------------------------- */

static void parse_model(int type, char *text)
{
	char *w[1 + ONLINE_MAX_EVENTS + 1], *save;
	const char *bad = NULL;
	int n = 0;

	for (w[n] = strtok_r(text, " ", &save); w[n]; w[n] = strtok_r(NULL, " ", &save))
		if (++n == (int)(sizeof(w) / sizeof(w[0])))
			die("a model with too many events", core_name[type]);
	if (online_model_parse(&models[type], w, n, &bad))
		die("a model needs '<intercept> <EVENT>=<coefficient>...', of the events pmu.c "
		    "knows but INST_RETIRED, each once and at most 5; not", bad);
}

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s -B 'INTERCEPT EVENT=COEF...' -L 'INTERCEPT EVENT=COEF...' "
		"[-p PERIOD_US] [-m MIN_INSTRUCTIONS] [-l LOG] [-R READY_FD] [-r REPLAY_FILE]\n",
		argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	uint64_t period_us = 10000, min_instructions = 100000, next;
	const char *log_path = NULL, *replay_path = NULL;
	int opt, ready_fd = -1, open_input = 1;
	struct rlimit files = { 65536, 65536 };

	while ((opt = getopt(argc, argv, "B:L:p:m:l:R:r:")) != -1) {
		switch (opt) {
		case 'B':
			parse_model(ONLINE_BIG, optarg);
			break;
		case 'L':
			parse_model(ONLINE_LITTLE, optarg);
			break;
		case 'p':
			period_us = strtoull(optarg, NULL, 10);
			break;
		case 'm':
			min_instructions = strtoull(optarg, NULL, 10);
			break;
		case 'l':
			log_path = optarg;
			break;
		case 'R':
			ready_fd = atoi(optarg);
			break;
		case 'r':
			replay_path = optarg;
			break;
		default:
			usage(argv[0]);
		}
	}
	if (optind != argc || (!models[ONLINE_BIG].present && !models[ONLINE_LITTLE].present) ||
	    period_us < 100 || period_us > 10000000)
		usage(argv[0]);
	log_file = stdout;
	if (log_path && !(log_file = fopen(log_path, "we")))
		die("cannot write the log", log_path);
	setvbuf(log_file, NULL, _IOFBF, 1 << 16);
	if (replay_path) {	/* replayed periods are 1 ms apart from 0 */
		replaying = 1;
		replay(replay_path, min_instructions);
		summary(period_us, min_instructions);
		return fclose(log_file) ? 1 : 0;
	}

	/* a descriptor per thread, CPU and event: more than the default limit allows */
	setrlimit(RLIMIT_NOFILE, &files);
	read_core_types();
	if (hold_task_hooks() < 0)
		fprintf(stderr, "ampkit-online: no per-task event on itself (%s): the first thread's "
			"counters will wait for the kernel to switch its hooks on\n", strerror(errno));
	if (!pmu_cpu_types(pmu_type, ncpus))
		for (opt = 0; opt < ncpus; opt++)
			pmu_type[opt] = PMU_NO_TYPE;
	/* the summary's ready_ns: the runner opens the gate next */
	epoch_ns = ampkit_now_ns();
	if (ready_fd >= 0) {
		if (write(ready_fd, "r", 1) != 1)
			die("cannot tell the runner it is ready", strerror(errno));
		close(ready_fd);
	}
	next = ampkit_now_ns() + period_us * 1000;
	while (open_input) {
		uint64_t now;

		if (wait_input(STDIN_FILENO, next))
			open_input = read_runner(STDIN_FILENO);
		now = ampkit_now_ns();
		if (now >= next) {
			period(min_instructions);
			while (next <= now)
				next += period_us * 1000;
		}
	}
	period(min_instructions);	/* what the threads counted since the last */
	summary(period_us, min_instructions);
	return fclose(log_file) ? 1 : 0;
}
