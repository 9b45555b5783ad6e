// SPDX-License-Identifier: GPL-2.0
/*
 * ampkit-schedtest: scenarios that exercise the kit kernel's scheduling
 * policies, each printing one JSON object with the per-thread counters the
 * kernel keeps (see ampctl.h). The qemu tests and the overhead benchmark
 * run them inside a mix; every scenario lasts about SECONDS.
 *
 *   mutex-bottleneck SECONDS    one thread holds a mutex 20 ms per round,
 *                               three hold it 0.5 ms
 *   condvar-pipeline SECONDS    three stages over two bounded queues, the
 *                               middle one ten times slower
 *   placement SECONDS           two CPU-bound threads with speedup 3.0, two
 *                               with 1.1
 *   vscale SECONDS CPU          two CPU-bound threads on one CPU, speedups
 *                               2.0 and 1.0
 *   bias SECONDS CPU            a lock holder that others wait for, on one
 *                               CPU with two CPU hogs
 *   stress SECONDS              switches the policy every 10 ms under a fork,
 *                               pipe and futex load
 *   speedup                     the speedup interface: what a thread and the
 *                               threads it creates read back, what is refused
 *   trace SECONDS               mutex-bottleneck and placement with the COLAB
 *                               tracepoints enabled; counts what they logged
 *   pipe-pingpong ROUNDS        round trips between two threads over pipes
 *   mutex-pingpong ROUNDS       hand-offs between two threads through a
 *                               mutex and a condition variable
 *   overhead ROUNDS BLOCKS P,Q  both ping-pongs under each policy in turn,
 *                               BLOCKS times, in one guest
 *
 * Like every workload it accepts -t THREADS and -n SIZE first and ignores
 * them. Exit status 0 when the scenario ran, 1 when it could not.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ampctl.h"
#include "ampkit_workload.h"
#include "sbuf.h"
#include "sysinfo.h"

#define MS 1000000ULL
#define US 1000ULL
#define MAX_THREADS 8

/* Busy for ns of wall-clock time. */
static void spin(uint64_t ns)
{
	uint64_t end = ampkit_now_ns() + ns;

	while (ampkit_now_ns() < end)
		;
}

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void die(const char *what, int err)
{
	fprintf(stderr, "ampkit-schedtest: %s: %s\n", what, strerror(err));
	exit(1);
}

static void pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity", errno);
}

static void set_speedup(unsigned int q10)
{
	int err = amp_set_speedup(0, q10);

	if (err)
		die("prctl(PR_SCHED_AMP_SET_SPEEDUP)", err);
}

/* --- threads that report their counters ---------------------------------- */

struct worker {
	pthread_t thread;
	const char *role;
	uint64_t hold_ns, outside_ns;	/* lock scenarios */
	unsigned int speedup;		/* set by the thread itself when nonzero */
	int cpu;			/* pinned there when >= 0 */
	uint64_t deadline;
	uint64_t rounds, cpu_ns;
	struct thread_stats stats;	/* snapshot when its work is done */
};

static struct worker workers[MAX_THREADS];
static int nworkers;

static struct worker *add_worker(const char *role, int cpu, uint64_t deadline)
{
	struct worker *w = &workers[nworkers++];

	memset(w, 0, sizeof(*w));
	w->role = role;
	w->cpu = cpu;
	w->deadline = deadline;
	return w;
}

static void worker_begin(struct worker *w)
{
	if (w->cpu >= 0)
		pin_to(w->cpu);
	if (w->speedup)
		set_speedup(w->speedup);
}

/* The thread's own snapshot, taken before it blocks on anything else. */
static void worker_end(struct worker *w)
{
	w->cpu_ns = ampkit_thread_cpu_ns();
	if (read_thread_stats(gettid_(), &w->stats))
		die("reading /proc/self/task/<tid>/sched", errno ? errno : ENOENT);
}

static void start_workers(void *(*fn)(void *))
{
	int i, err;

	for (i = 0; i < nworkers; i++) {
		err = pthread_create(&workers[i].thread, NULL, fn, &workers[i]);
		if (err)
			die("pthread_create", err);
	}
}

static void join_workers(void)
{
	int i;

	for (i = 0; i < nworkers; i++)
		pthread_join(workers[i].thread, NULL);
}

static void print_workers(struct sbuf *sb, const char *scenario)
{
	int i;

	sb_printf(sb, "{\"scenario\":");
	sb_json_str(sb, scenario);
	sb_printf(sb, ",\"threads\":[");
	for (i = 0; i < nworkers; i++) {
		const struct worker *w = &workers[i];

		sb_printf(sb, "%s{\"role\":", i ? "," : "");
		sb_json_str(sb, w->role);
		sb_printf(sb, ",\"rounds\":%llu,\"cpu_ns\":%llu,\"kernel\":",
			  (unsigned long long)w->rounds, (unsigned long long)w->cpu_ns);
		thread_stats_json(sb, &w->stats);
		sb_printf(sb, "}");
	}
	sb_printf(sb, "]}\n");
}

/* --- mutex-bottleneck ---------------------------------------------------- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *lock_holder(void *arg)
{
	struct worker *w = arg;

	worker_begin(w);
	while (ampkit_now_ns() < w->deadline) {
		pthread_mutex_lock(&lock);
		spin(w->hold_ns);
		pthread_mutex_unlock(&lock);
		spin(w->outside_ns);
		w->rounds++;
	}
	worker_end(w);
	return NULL;
}

static void mutex_bottleneck(double seconds)
{
	uint64_t deadline = ampkit_now_ns() + (uint64_t)(seconds * 1e9);
	struct worker *w;
	int i;

	w = add_worker("long-holder", -1, deadline);
	w->hold_ns = 20 * MS;
	w->outside_ns = 2 * MS;
	for (i = 0; i < 3; i++) {
		w = add_worker("short-holder", -1, deadline);
		w->hold_ns = 500 * US;
		w->outside_ns = 2 * MS;
	}
	start_workers(lock_holder);
	join_workers();
}

/* --- condvar-pipeline ---------------------------------------------------- */

#define QUEUE_CAP 4

struct queue {
	pthread_mutex_t mutex;
	pthread_cond_t not_empty, not_full;
	int count, closed;
};

static struct queue queues[2] = {
	{ PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0 },
	{ PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0 },
};

static void put(struct queue *q)
{
	pthread_mutex_lock(&q->mutex);
	while (q->count == QUEUE_CAP)
		pthread_cond_wait(&q->not_full, &q->mutex);
	q->count++;
	pthread_cond_signal(&q->not_empty);
	pthread_mutex_unlock(&q->mutex);
}

/* 1 with an item, 0 once the queue is closed and empty. */
static int take(struct queue *q)
{
	int got = 0;

	pthread_mutex_lock(&q->mutex);
	while (q->count == 0 && !q->closed)
		pthread_cond_wait(&q->not_empty, &q->mutex);
	if (q->count) {
		q->count--;
		got = 1;
		pthread_cond_signal(&q->not_full);
	}
	pthread_mutex_unlock(&q->mutex);
	return got;
}

static void close_queue(struct queue *q)
{
	pthread_mutex_lock(&q->mutex);
	q->closed = 1;
	pthread_cond_broadcast(&q->not_empty);
	pthread_mutex_unlock(&q->mutex);
}

/* Stage 0 produces until the deadline, stage 1 and 2 until their input ends. */
static void *stage(void *arg)
{
	struct worker *w = arg;
	struct queue *in = w == &workers[0] ? NULL : &queues[w - workers - 1];
	struct queue *out = w == &workers[2] ? NULL : &queues[w - workers];

	worker_begin(w);
	for (;;) {
		if (in ? !take(in) : ampkit_now_ns() >= w->deadline)
			break;
		spin(w->hold_ns);
		if (out)
			put(out);
		w->rounds++;
	}
	worker_end(w);
	if (out)
		close_queue(out);
	return NULL;
}

static void condvar_pipeline(double seconds)
{
	uint64_t deadline = ampkit_now_ns() + (uint64_t)(seconds * 1e9);

	add_worker("producer", -1, deadline)->hold_ns = 500 * US;
	add_worker("slow-stage", -1, deadline)->hold_ns = 5 * MS;
	add_worker("consumer", -1, deadline)->hold_ns = 500 * US;
	start_workers(stage);
	join_workers();
}

/* --- placement and vscale: CPU-bound threads ------------------------------ */

static void *cpu_bound(void *arg)
{
	struct worker *w = arg;

	worker_begin(w);
	while (ampkit_now_ns() < w->deadline) {
		spin(100 * US);
		w->rounds++;
	}
	worker_end(w);
	return NULL;
}

/*
 * The speedups are set before the threads are created, the way the runner
 * sets an application's, so that they are placed by class from their first
 * wake-up.
 */
static void placement(double seconds)
{
	uint64_t deadline = ampkit_now_ns() + (uint64_t)(seconds * 1e9);
	static const struct {
		const char *role;
		unsigned int speedup;
	} kinds[] = { { "speedup-3.0", 3072 }, { "speedup-1.1", 1126 } };
	int i, k, err;

	for (k = 0; k < 2; k++) {
		set_speedup(kinds[k].speedup);
		for (i = 0; i < 2; i++) {
			struct worker *w = add_worker(kinds[k].role, -1, deadline);

			err = pthread_create(&w->thread, NULL, cpu_bound, w);
			if (err)
				die("pthread_create", err);
		}
	}
	set_speedup(0);
	join_workers();
}

static void vscale(double seconds, int cpu)
{
	uint64_t deadline = ampkit_now_ns() + (uint64_t)(seconds * 1e9);

	add_worker("speedup-2.0", cpu, deadline)->speedup = 2048;
	add_worker("speedup-1.0", cpu, deadline)->speedup = 1024;
	start_workers(cpu_bound);
	join_workers();
}

/* --- bias ------------------------------------------------------------------ */

/*
 * The bottleneck holds the lock 1 ms at a time and lets go for 0.2 ms; two
 * waiters on other CPUs take it briefly and often, so they mostly wait for
 * it. It shares its CPU with two CPU hogs.
 */
static void bias(double seconds, int cpu)
{
	uint64_t deadline = ampkit_now_ns() + (uint64_t)(seconds * 1e9);
	int ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN), i;
	struct worker *w;

	w = add_worker("bottleneck", cpu, deadline);
	w->hold_ns = 1 * MS;
	w->outside_ns = 200 * US;
	add_worker("hog", cpu, deadline);
	add_worker("hog", cpu, deadline);
	for (i = 0; i < 2; i++) {
		w = add_worker("waiter", (cpu + 1 + i) % ncpus, deadline);
		w->hold_ns = 50 * US;
		w->outside_ns = 300 * US;
	}
	for (i = 0; i < nworkers; i++) {
		int err = pthread_create(&workers[i].thread, NULL,
					 strcmp(workers[i].role, "hog") ? lock_holder : cpu_bound,
					 &workers[i]);
		if (err)
			die("pthread_create", err);
	}
	join_workers();
}

/* --- stress ---------------------------------------------------------------- */

static atomic_int stop;
static atomic_ullong flips, forks, messages, handoffs;

static void *flipper(void *arg)
{
	static const char *const names[] = { "colab", "cfs" };
	struct timespec ten_ms = { 0, 10 * 1000 * 1000 };
	unsigned int i = 0;
	int err;

	(void)arg;
	while (!atomic_load(&stop)) {
		err = set_amp_policy(names[i++ % 2], NULL, 0);
		if (err)
			die("switching the policy", err);
		atomic_fetch_add(&flips, 1);
		nanosleep(&ten_ms, NULL);
	}
	return NULL;
}

static void *forker(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		if (pid < 0)
			die("fork", errno);
		waitpid(pid, NULL, 0);
		atomic_fetch_add(&forks, 1);
	}
	return NULL;
}

static int pipes[2][2];

/* Sends back every byte from pipes[0] on pipes[1] until a zero byte. */
static void *echo(void *arg)
{
	char c;

	(void)arg;
	while (read(pipes[0][0], &c, 1) == 1 && c)
		if (write(pipes[1][1], &c, 1) != 1)
			break;
	return NULL;
}

static pthread_cond_t turn_cond = PTHREAD_COND_INITIALIZER;
static int turn;

static void *futex_load(void *arg)
{
	int me = (int)(intptr_t)arg;

	pthread_mutex_lock(&lock);
	while (!atomic_load(&stop)) {
		while (turn % 4 != me && !atomic_load(&stop))
			pthread_cond_wait(&turn_cond, &lock);
		turn++;
		atomic_fetch_add(&handoffs, 1);
		pthread_cond_broadcast(&turn_cond);
	}
	pthread_cond_broadcast(&turn_cond);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void stress(double seconds, struct sbuf *sb)
{
	pthread_t flip, fork_thread, echo_thread, futex_threads[4];
	uint64_t deadline = ampkit_now_ns() + (uint64_t)(seconds * 1e9);
	char c = 1;
	int i;

	if (pipe(pipes[0]) || pipe(pipes[1]))
		die("pipe", errno);
	pthread_create(&flip, NULL, flipper, NULL);
	pthread_create(&fork_thread, NULL, forker, NULL);
	pthread_create(&echo_thread, NULL, echo, NULL);
	for (i = 0; i < 4; i++)
		pthread_create(&futex_threads[i], NULL, futex_load, (void *)(intptr_t)i);
	while (ampkit_now_ns() < deadline) {
		if (write(pipes[0][1], &c, 1) != 1 || read(pipes[1][0], &c, 1) != 1)
			die("pipe round trip", errno);
		atomic_fetch_add(&messages, 1);
	}
	atomic_store(&stop, 1);
	c = 0;
	if (write(pipes[0][1], &c, 1) != 1)
		die("pipe", errno);
	pthread_mutex_lock(&lock);
	pthread_cond_broadcast(&turn_cond);
	pthread_mutex_unlock(&lock);
	pthread_join(flip, NULL);
	pthread_join(fork_thread, NULL);
	pthread_join(echo_thread, NULL);
	for (i = 0; i < 4; i++)
		pthread_join(futex_threads[i], NULL);
	sb_printf(sb,
		  "{\"scenario\":\"stress\",\"flips\":%llu,\"forks\":%llu,\"messages\":%llu,"
		  "\"handoffs\":%llu}\n",
		  (unsigned long long)flips, (unsigned long long)forks,
		  (unsigned long long)messages, (unsigned long long)handoffs);
}

/* --- ping-pong benchmarks ---------------------------------------------------- */

static long rounds_left;

/* ns per round trip between two threads over a pair of pipes. */
static double pipe_pingpong(long rounds)
{
	pthread_t partner;
	uint64_t start, elapsed;
	char c = 1;
	long i;

	if (pipe(pipes[0]) || pipe(pipes[1]))
		die("pipe", errno);
	pthread_create(&partner, NULL, echo, NULL);
	start = ampkit_now_ns();
	for (i = 0; i < rounds; i++)
		if (write(pipes[0][1], &c, 1) != 1 || read(pipes[1][0], &c, 1) != 1)
			die("pipe round trip", errno);
	elapsed = ampkit_now_ns() - start;
	c = 0;
	if (write(pipes[0][1], &c, 1) != 1)
		die("pipe", errno);
	pthread_join(partner, NULL);
	return (double)elapsed / (double)rounds;
}

static void *mutex_partner(void *arg)
{
	int me = (int)(intptr_t)arg;

	pthread_mutex_lock(&lock);
	while (rounds_left > 0) {
		while (turn != me && rounds_left > 0)
			pthread_cond_wait(&turn_cond, &lock);
		if (rounds_left <= 0)
			break;
		rounds_left--;
		turn = !me;
		pthread_cond_signal(&turn_cond);
	}
	pthread_cond_broadcast(&turn_cond);
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* ns per hand-off between two threads through a mutex and a condvar. */
static double mutex_pingpong(long rounds)
{
	pthread_t a, b;
	uint64_t start, elapsed;

	rounds_left = rounds;
	start = ampkit_now_ns();
	pthread_create(&a, NULL, mutex_partner, (void *)0);
	pthread_create(&b, NULL, mutex_partner, (void *)1);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	elapsed = ampkit_now_ns() - start;
	return (double)elapsed / (double)rounds;
}

/*
 * Both ping-pongs under each policy named in @policies (comma-separated),
 * @blocks times over, the order of the policies reversed every other
 * block: paired measurements in one guest, so that what differs between
 * boots (translation caches, host load) does not enter a ratio.
 */
static void overhead(long rounds, long blocks, char *policies, struct sbuf *sb)
{
	static const char *const kinds[] = { "pipe-pingpong", "mutex-pingpong" };
	char *names[8], *save = NULL, *name;
	int nr = 0, i, j, k, err;
	long b;

	for (name = strtok_r(policies, ",", &save); name && nr < 8;
	     name = strtok_r(NULL, ",", &save))
		names[nr++] = name;
	sb_printf(sb, "{\"scenario\":\"overhead\",\"rounds\":%ld,\"samples\":[", rounds);
	for (b = 0; b < blocks; b++) {
		for (k = 0; k < 2; k++) {
			for (i = 0; i < nr; i++) {
				j = b % 2 ? nr - 1 - i : i;
				err = set_amp_policy(names[j], NULL, 0);
				if (err)
					die("switching the policy", err);
				sb_printf(sb, "%s{\"kind\":\"%s\",\"policy\":",
					  b || k || i ? "," : "", kinds[k]);
				sb_json_str(sb, names[j]);
				sb_printf(sb, ",\"ns_per_round\":%.1f}",
					  k ? mutex_pingpong(rounds) : pipe_pingpong(rounds));
			}
		}
	}
	sb_printf(sb, "]}\n");
}

/* --- speedup ----------------------------------------------------------------- */

static void *report_self(void *arg)
{
	struct worker *w = arg;

	worker_end(w);
	return NULL;
}

static int prctl_errno(unsigned long op, unsigned long tid, unsigned long value,
		       unsigned long arg5)
{
	return prctl(PR_SCHED_AMP, op, tid, value, arg5) < 0 ? errno : 0;
}

static void speedup(struct sbuf *sb)
{
	struct worker *w;
	long got;
	int err;

	/* What the runner set before exec, seen by this thread and a new one */
	w = add_worker("main", -1, 0);
	worker_end(w);
	w = add_worker("child", -1, 0);
	err = pthread_create(&w->thread, NULL, report_self, w);
	if (err)
		die("pthread_create", err);
	pthread_join(w->thread, NULL);
	got = prctl(PR_SCHED_AMP, PR_SCHED_AMP_GET_SPEEDUP, 0UL, 0UL, 0UL);

	print_workers(sb, "speedup");
	/* Reopen the object (drop its "}\n") to add the interface's answers. */
	sb->len -= 2;
	sb->data[sb->len] = '\0';
	sb_printf(sb, ",\"get\":%ld,\"errno\":{", got);
	sb_printf(sb, "\"too_small\":%d,", prctl_errno(PR_SCHED_AMP_SET_SPEEDUP, 0, 255, 0));
	sb_printf(sb, "\"too_large\":%d,", prctl_errno(PR_SCHED_AMP_SET_SPEEDUP, 0, 8193, 0));
	sb_printf(sb, "\"bad_op\":%d,", prctl_errno(99, 0, 1024, 0));
	sb_printf(sb, "\"arg5\":%d,", prctl_errno(PR_SCHED_AMP_SET_SPEEDUP, 0, 1024, 1));
	sb_printf(sb, "\"no_such_thread\":%d,",
		  prctl_errno(PR_SCHED_AMP_SET_SPEEDUP, 4000000, 1024, 0));
	sb_printf(sb, "\"lowest\":%d,", prctl_errno(PR_SCHED_AMP_SET_SPEEDUP, 0, 256, 0));
	sb_printf(sb, "\"highest\":%d,", prctl_errno(PR_SCHED_AMP_SET_SPEEDUP, 0, 8192, 0));
	sb_printf(sb, "\"clear\":%d}", prctl_errno(PR_SCHED_AMP_SET_SPEEDUP, 0, 0, 0));
	sb_printf(sb, ",\"after_clear\":%d}\n",
		  prctl(PR_SCHED_AMP, PR_SCHED_AMP_GET_SPEEDUP, 0UL, 0UL, 0UL));
}

/* --- trace ------------------------------------------------------------------- */

#define TRACEFS "/sys/kernel/tracing"

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f))
		die(path, errno);
}

static void trace(double seconds, struct sbuf *sb)
{
	char *text, *line, *save;
	long place = 0, bottleneck = 0;
	int shown = 0;

	if (access(TRACEFS "/events", F_OK) &&
	    mount("tracefs", TRACEFS, "tracefs", 0, NULL))
		die("mounting tracefs", errno);
	write_file(TRACEFS "/buffer_size_kb", "4096");
	write_file(TRACEFS "/trace", "");
	write_file(TRACEFS "/events/sched/sched_colab_place/enable", "1");
	write_file(TRACEFS "/events/sched/sched_colab_bottleneck/enable", "1");
	write_file(TRACEFS "/tracing_on", "1");
	mutex_bottleneck(seconds / 2);
	nworkers = 0;
	placement(seconds / 2);
	write_file(TRACEFS "/tracing_on", "0");

	text = read_text(TRACEFS "/trace");
	if (!text)
		die("reading " TRACEFS "/trace", errno);
	sb_printf(sb, "{\"scenario\":\"trace\",\"sample\":[");
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int is_place = strstr(line, "sched_colab_place:") != NULL;
		int is_neck = strstr(line, "sched_colab_bottleneck:") != NULL;

		place += is_place;
		bottleneck += is_neck;
		if ((is_place || is_neck) && shown < 8) {
			sb_printf(sb, "%s", shown++ ? "," : "");
			sb_json_str(sb, line);
		}
	}
	free(text);
	sb_printf(sb, "],\"sched_colab_place\":%ld,\"sched_colab_bottleneck\":%ld}\n", place,
		  bottleneck);
}

/* --- main -------------------------------------------------------------------- */

static int usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-t N] [-n N] SCENARIO ARGS...\n"
		"  mutex-bottleneck SECONDS | condvar-pipeline SECONDS | placement SECONDS\n"
		"  vscale SECONDS CPU | bias SECONDS CPU | stress SECONDS\n"
		"  speedup | trace SECONDS | pipe-pingpong ROUNDS | mutex-pingpong ROUNDS\n"
		"  overhead ROUNDS BLOCKS POLICY,POLICY...\n",
		prog);
	return 2;
}

int main(int argc, char **argv)
{
	const char *prog = argv[0], *scenario;
	struct sbuf sb;
	double seconds;
	int opt;

	while ((opt = getopt(argc, argv, "+t:n:")) != -1)
		if (opt == '?')
			return usage(prog);
	argc -= optind;
	argv += optind;
	if (argc < 1)
		return usage(prog);
	scenario = argv[0];
	sb_init(&sb);
	if (argc == 1 && !strcmp(scenario, "speedup")) {
		speedup(&sb);
		fputs(sb.data, stdout);
		return 0;
	}
	if (argc < 2)
		return usage(prog);
	seconds = strtod(argv[1], NULL);
	if (seconds <= 0)
		return usage(prog);

	if (argc == 2 && !strcmp(scenario, "trace")) {
		trace(seconds, &sb);
	} else if (argc == 2 && !strcmp(scenario, "mutex-bottleneck")) {
		mutex_bottleneck(seconds);
		print_workers(&sb, scenario);
	} else if (argc == 2 && !strcmp(scenario, "condvar-pipeline")) {
		condvar_pipeline(seconds);
		print_workers(&sb, scenario);
	} else if (argc == 2 && !strcmp(scenario, "placement")) {
		placement(seconds);
		print_workers(&sb, scenario);
	} else if (argc == 3 && !strcmp(scenario, "vscale")) {
		vscale(seconds, atoi(argv[2]));
		print_workers(&sb, scenario);
	} else if (argc == 3 && !strcmp(scenario, "bias")) {
		bias(seconds, atoi(argv[2]));
		print_workers(&sb, scenario);
	} else if (argc == 2 && !strcmp(scenario, "stress")) {
		stress(seconds, &sb);
	} else if (argc == 2 && !strcmp(scenario, "pipe-pingpong")) {
		sb_printf(&sb, "{\"scenario\":\"%s\",\"rounds\":%ld,\"ns_per_round\":%.1f}\n",
			  scenario, (long)seconds, pipe_pingpong((long)seconds));
	} else if (argc == 2 && !strcmp(scenario, "mutex-pingpong")) {
		sb_printf(&sb, "{\"scenario\":\"%s\",\"rounds\":%ld,\"ns_per_round\":%.1f}\n",
			  scenario, (long)seconds, mutex_pingpong((long)seconds));
	} else if (argc == 4 && !strcmp(scenario, "overhead") && atol(argv[2]) > 0) {
		overhead((long)seconds, atol(argv[2]), argv[3], &sb);
	} else {
		return usage(prog);
	}
	fputs(sb.data, stdout);
	sb_free(&sb);
	return 0;
}
