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
 *   exit-join SECONDS           mutex-bottleneck's pair of holders while a
 *                               thread joins the main thread, which leaves
 *                               after SECONDS (at least 0.5) with
 *                               pthread_exit(); the long holder's bottleneck
 *                               flag sampled before and after
 *   placement SECONDS           two CPU-bound threads with speedup 3.0, two
 *                               with 1.1
 *   crowded SECONDS             two CPU-bound threads with speedup 1.1, then
 *                               four with 3.0: more big-class threads than
 *                               big CPUs, busy little CPUs beside them (with
 *                               schedstats on, for the balancer's counters)
 *   evict SECONDS               two CPU-bound threads with speedup 1.1; two
 *                               with 1.75 held on the big CPUs for 300 ms,
 *                               then free; then two with 3.0, which queue
 *                               beside them (at_release: the 1.75 ones once
 *                               the 3.0 ones run)
 *   vscale SECONDS CPU          two CPU-bound threads on one CPU, speedups
 *                               2.0 and 1.0
 *   bias SECONDS CPU [NICE [spin]]
 *                               a lock holder that others wait for, on one
 *                               CPU with two CPU hogs; the holder at NICE,
 *                               and with spin, spinning to take the lock
 *   pull SECONDS                two lock holders that others wait for and a
 *                               CPU hog, pinned to one little CPU, then
 *                               allowed both, forty times: which of them
 *                               the idle little CPU takes first (at least
 *                               about 5.5 s whatever SECONDS, up to 45 s)
 *   strand SECONDS              a big-class thread pinned to each big CPU,
 *                               running 5 ms and sleeping 10 ms; as many
 *                               little-class CPU-bound threads as there
 *                               are CPUs; every task cache hot to the
 *                               balancer: how much of the big CPUs' free
 *                               time the little class takes, and the big
 *                               CPUs' pulls as they go idle meanwhile
 *   stress SECONDS [FLIPS]      switches the policy every 10 ms under a fork,
 *                               pipe and futex load, through every policy
 *                               the kernel lists, for SECONDS and until it
 *                               has made FLIPS switches (default 1000; up
 *                               to 5 x SECONDS); then back to cfs, lists
 *                               user threads still restricted
 *   wash-few SECONDS            two CPU-bound threads
 *   wash-scalable SECONDS       six CPU-bound threads, no lock
 *   wash-lock SECONDS           a thread holding a mutex 10 ms at a time,
 *                               three that take it briefly, two light ones;
 *                               each notes when its CPUs were first restricted
 *   colab-overhead SECONDS THREADS  wash-overhead's application, its threads
 *                               given speedups 3.0, 1.1 and none in turn;
 *                               prints what COLAB's worker spent meanwhile
 *                               (kernel.sched_colab_work)
 *   wash-own SECONDS            two CPU-bound threads; once WASH binds the
 *                               first, it sets its allowed CPUs itself, to
 *                               the same CPUs, and creates a third (cpus:
 *                               how many it was allowed at the start)
 *   wash-fence SECONDS          a thread spins until WASH binds it (at most
 *                               SECONDS), then blocks in read(); the policy
 *                               goes to cfs; WASH's fork copy is read while
 *                               it is blocked and after it is woken
 *   wash-overhead SECONDS THREADS  THREADS threads of one application that
 *                               WASH must rank (one long lock holder, a
 *                               quarter briefly taking the lock, the rest
 *                               computing in bursts); prints what WASH's
 *                               worker spent meanwhile (kernel.sched_wash_stats)
 *   speedup                     the speedup and energy interface: what a
 *                               thread and the threads it creates read back,
 *                               what is refused
 *   trace SECONDS               mutex-bottleneck and placement with the COLAB
 *                               tracepoints enabled; counts what they logged
 *                               (placements by class, bottleneck flags,
 *                               moves) and shows the first line of each kind
 *   pipe-pingpong ROUNDS        round trips between two threads over pipes
 *   mutex-pingpong ROUNDS       hand-offs between two threads through a
 *                               mutex and a condition variable
 *   futex-scan WAITERS ROUNDS BLOCKS  WAITERS threads wait on one futex; ROUNDS
 *                               releases that wake none of them, BLOCKS
 *                               times, with the futex accounting off and on
 *                               in turn: what it adds to the bucket lock
 *   overhead ROUNDS BLOCKS P,Q  both ping-pongs under each policy in turn,
 *                               BLOCKS times, in one guest; a policy is a
 *                               name (per-task counters off) or NAME+stats
 *   wash-cpuset SECONDS         two CPU-bound threads, bound by WASH, are
 *                               moved into a cpuset of the little CPUs
 *                               (needs CONFIG_CPUSETS): WASH may neither
 *                               bind nor widen them, also when it stops
 *                               (SECONDS bounds each of its waits)
 *   wash-hotplug SECONDS        two CPU-bound threads, bound by WASH to the
 *                               big CPUs, which go offline (needs
 *                               CONFIG_HOTPLUG_CPU): the fallback ends the
 *                               binding (SECONDS as for wash-cpuset)
 *   pin-hotplug SECONDS         wash-hotplug's control, under any policy:
 *                               the two threads bind themselves to the big
 *                               CPUs with sched_setaffinity() instead
 *   timescale SECONDS           the scheduler's clocks as sched_timescale=
 *                               leaves them: the scale, CFS's latency, a
 *                               new thread's misfit ramp on a little CPU,
 *                               COLAB periods and WASH quanta in SECONDS
 *   futex-flip                  a thread waits under colab, again under cfs,
 *                               and colab returns while it is queued: what
 *                               the release that ends the second wait charges
 *   futex-flip-stats            with the counters kept under cfs, a thread
 *                               waits 300 ms there; colab starts after its
 *                               release: is the releaser flagged for it?
 *   futex-release-kinds         two waiters, released by FUTEX_WAKE, WAKE_OP
 *                               and CMP_REQUEUE that each wake one, and two
 *                               waiters of a PI lock its holder unlocks
 *                               (FUTEX_UNLOCK_PI): what each kind charges
 *                               the releasing thread
 *   counters POLICY             with kernel.sched_colab_stats off, a thread
 *                               waits 100 ms on a futex under POLICY while
 *                               its releaser computes: what COLAB's futex
 *                               and run-time counters took of it, and
 *                               whether the run-time ones grow under cfs
 *                               after POLICY stops
 *
 * Like every workload it accepts -t THREADS and -n SIZE first and ignores
 * them. Exit status 0 when the scenario ran, 1 when it could not.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <linux/futex.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
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
#define SEC 1000000000ULL
#define MAX_CPUS 64
#define US 1000ULL
#define MAX_THREADS 64

/*
 * Time a spinning thread saw the clock jump by a millisecond or more
 * between two reads: it was on its CPU, and charged for it, but that CPU
 * did not run.  Under QEMU's icount one host thread runs the vCPUs in
 * turn, and a thread caught mid-spin when its vCPU's turn ends is charged
 * the other vCPUs' turns; under host threads, a preempted vCPU.
 */
#define STALL_NS MS
static __thread uint64_t stalled_ns;

/* Busy for ns of wall-clock time. */
static void spin(uint64_t ns)
{
	uint64_t now = ampkit_now_ns(), end = now + ns, before;

	while (now < end) {
		before = now;
		now = ampkit_now_ns();
		if (now - before >= STALL_NS)
			stalled_ns += now - before;
	}
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

/* Puts policy name in force, or exits saying why not. */
static void switch_policy(const char *name)
{
	int err = set_amp_policy(name, NULL, 0);

	if (err)
		die("switching the policy", err);
}

/* Allows thread @tid (0: the caller) CPU @a, and @b unless it is negative. */
static void allow_cpus(pid_t tid, int a, int b)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(a, &set);
	if (b >= 0)
		CPU_SET(b, &set);
	if (sched_setaffinity(tid, sizeof(set), &set))
		die("sched_setaffinity", errno);
}

static void pin_to(int cpu)
{
	allow_cpus(0, cpu, -1);
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
	pthread_mutex_t *mutex;		/* lock_holder's, when not the shared one */
	int spin_to_lock;		/* lock_holder: never sleeps to take it */
	uint64_t sleep_ns;		/* wash scenarios: asleep per round */
	uint64_t bound_at_ns;		/* when WASH first restricted it, or 0 */
	uint64_t restricted_rounds;	/* rounds that ended restricted (wash-*) */
	uint64_t stalled_ns;		/* its spins' stalls (see spin()), at the end */
	uint64_t stalled_at_bind_ns;	/* and when WASH first restricted it */
	struct thread_stats at_bind;	/* snapshot at that moment */
	unsigned int speedup;		/* set by the thread itself when nonzero */
	unsigned int epi_pj;		/* its energy per instruction, likewise */
	int nice;			/* set by the thread itself when nonzero */
	int cpu;			/* pinned there when >= 0 */
	struct thread_stats at_pin;	/* snapshot once pinned there */
	struct thread_stats at_release;	/* evict: snapshot once the big class runs */
	_Atomic int released;		/* evict: unpinned */
	int cpus;			/* wash-own: CPUs allowed at the start */
	uint64_t widened_rounds;	/* wash-own: rounds found unrestricted */
	_Atomic pid_t tid;		/* set once it runs */
	_Atomic uint64_t deadline;	/* another thread may move it */
	uint64_t rounds, cpu_ns;
	struct thread_stats stats;	/* snapshot when its work is done */
	int snapped;			/* stats taken by snapshot_then_stop() */
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

/*
 * A pinned thread may have run elsewhere before it got here, for as long
 * as a busy host kept its vCPU from running; at_pin is where that ends.
 */
static void worker_begin(struct worker *w)
{
	w->tid = gettid_();
	if (w->cpu >= 0) {
		pin_to(w->cpu);
		if (read_thread_stats(w->tid, &w->at_pin))
			die("reading /proc/self/task/<tid>/sched", errno ? errno : ENOENT);
	}
	if (w->speedup)
		set_speedup(w->speedup);
	if (w->epi_pj) {
		int err = amp_set_epi_big(0, w->epi_pj);

		if (err)
			die("prctl(PR_SCHED_AMP_SET_EPI_BIG)", err);
	}
	/* Linux: PRIO_PROCESS with who 0 sets the calling thread's nice */
	if (w->nice && setpriority(PRIO_PROCESS, 0, w->nice))
		die("setpriority", errno);
}

static void sleep_until(uint64_t t)
{
	uint64_t now = ampkit_now_ns();

	if (t > now)
		ampkit_sleep_ns(t - now);
}

/* Returns once the worker has started and set its tid. */
static pid_t worker_tid(const struct worker *w)
{
	pid_t tid;

	while (!(tid = w->tid))
		ampkit_sleep_ns(1 * MS);
	return tid;
}

/*
 * Samples of one thread's bottleneck flag, every period until a time, and
 * until at least min_taken were tried.  A single read at the end would
 * judge the ranking by one moment, which a vCPU that the host kept waiting
 * can spoil; a share of many cannot be.
 */
struct flag_samples {
	int taken, flagged, unreadable;
};

static void sample_flag(pid_t tid, uint64_t until, uint64_t period, long min_taken,
			struct flag_samples *fs)
{
	struct thread_stats st;

	while (ampkit_now_ns() < until || fs->taken + fs->unreadable < min_taken) {
		if (read_thread_stats(tid, &st)) {
			fs->unreadable++;
		} else {
			fs->taken++;
			fs->flagged += st.bottleneck == 1;
		}
		ampkit_sleep_ns(period);
	}
}

static void flag_samples_json(struct sbuf *sb, const char *name, const struct flag_samples *fs)
{
	sb_printf(sb, ",\"%s\":{\"taken\":%d,\"flagged\":%d,\"unreadable\":%d}", name,
		  fs->taken, fs->flagged, fs->unreadable);
}

/* The thread's own snapshot, taken before it blocks on anything else. */
static void worker_end(struct worker *w)
{
	if (w->snapped)
		return;
	w->cpu_ns = ampkit_thread_cpu_ns();
	w->stalled_ns = stalled_ns;
	if (read_thread_stats(gettid_(), &w->stats))
		die("reading /proc/self/task/<tid>/sched", errno ? errno : ENOENT);
}

static void start_worker(struct worker *w, void *(*fn)(void *))
{
	int err = pthread_create(&w->thread, NULL, fn, w);

	if (err)
		die("pthread_create", err);
}

static void start_workers(void *(*fn)(void *))
{
	int i;

	for (i = 0; i < nworkers; i++)
		start_worker(&workers[i], fn);
}

static void join_workers(void)
{
	int i;

	for (i = 0; i < nworkers; i++)
		pthread_join(workers[i].thread, NULL);
}

/*
 * Snapshots every worker at the deadline, while all of them still run,
 * then stops them.  The scenarios that judge the bottleneck ranking end
 * this way: a thread that snapshots itself as it leaves sees a ranking
 * that already lacks the threads that left before it, and the last ones
 * to leave would look like bottlenecks of what remains.  Their workers
 * get a deadline that never comes; stage 0 of the pipeline is stopped
 * here, the stages after it stop when their input ends.
 */
static void snapshot_then_stop(uint64_t deadline)
{
	struct timespec ts;
	clockid_t clock;
	int i, err;

	sleep_until(deadline);
	for (i = 0; i < nworkers; i++) {
		struct worker *w = &workers[i];

		if (read_thread_stats(worker_tid(w), &w->stats))
			die("reading /proc/self/task/<tid>/sched", errno ? errno : ENOENT);
		err = pthread_getcpuclockid(w->thread, &clock);
		if (err)
			die("pthread_getcpuclockid", err);
		if (clock_gettime(clock, &ts))
			die("clock_gettime", errno);
		w->cpu_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
		w->snapped = 1;
	}
	/* the deadline is atomic: the workers see snapped once they see it */
	for (i = 0; i < nworkers; i++)
		workers[i].deadline = 0;
	join_workers();
}

/* The scenario and its threads, as the start of a JSON object left open. */
static void print_workers_open(struct sbuf *sb, const char *scenario)
{
	int i;

	sb_printf(sb, "{\"scenario\":");
	sb_json_str(sb, scenario);
	sb_printf(sb, ",\"threads\":[");
	for (i = 0; i < nworkers; i++) {
		const struct worker *w = &workers[i];

		sb_printf(sb, "%s{\"role\":", i ? "," : "");
		sb_json_str(sb, w->role);
		sb_printf(sb, ",\"rounds\":%llu,\"restricted_rounds\":%llu,"
			  "\"cpu_ns\":%llu,\"stalled_ms\":%.1f,\"kernel\":",
			  (unsigned long long)w->rounds, (unsigned long long)w->restricted_rounds,
			  (unsigned long long)w->cpu_ns, (double)w->stalled_ns / 1e6);
		thread_stats_json(sb, &w->stats);
		if (w->cpu >= 0) {
			sb_printf(sb, ",\"at_pin\":");
			thread_stats_json(sb, &w->at_pin);
		}
		if (w->cpus)
			sb_printf(sb, ",\"cpus\":%d,\"widened_rounds\":%llu", w->cpus,
				  (unsigned long long)w->widened_rounds);
		if (w->released) {
			sb_printf(sb, ",\"at_release\":");
			thread_stats_json(sb, &w->at_release);
		}
		if (w->bound_at_ns) {
			sb_printf(sb, ",\"bound_at_ms\":%.1f,\"stalled_at_bind_ms\":%.1f,"
				  "\"at_bind\":", (double)w->bound_at_ns / 1e6,
				  (double)w->stalled_at_bind_ns / 1e6);
			thread_stats_json(sb, &w->at_bind);
		}
		sb_printf(sb, "}");
	}
	sb_printf(sb, "]");
}

static void print_workers(struct sbuf *sb, const char *scenario)
{
	print_workers_open(sb, scenario);
	sb_printf(sb, "}\n");
}

/* --- mutex-bottleneck ---------------------------------------------------- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *lock_holder(void *arg)
{
	struct worker *w = arg;
	pthread_mutex_t *m = w->mutex ? w->mutex : &lock;

	worker_begin(w);
	while (ampkit_now_ns() < w->deadline) {
		if (!w->spin_to_lock)
			pthread_mutex_lock(m);
		else
			while (pthread_mutex_trylock(m))
				spin(10 * US);
		spin(w->hold_ns);
		pthread_mutex_unlock(m);
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

	w = add_worker("long-holder", -1, UINT64_MAX);
	w->hold_ns = 20 * MS;
	w->outside_ns = 2 * MS;
	for (i = 0; i < 3; i++) {
		w = add_worker("short-holder", -1, UINT64_MAX);
		w->hold_ns = 500 * US;
		w->outside_ns = 2 * MS;
	}
	start_workers(lock_holder);
	snapshot_then_stop(deadline);
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

	add_worker("producer", -1, UINT64_MAX)->hold_ns = 500 * US;
	add_worker("slow-stage", -1, UINT64_MAX)->hold_ns = 5 * MS;
	add_worker("consumer", -1, UINT64_MAX)->hold_ns = 500 * US;
	start_workers(stage);
	snapshot_then_stop(deadline);
}

/* --- exit-join ------------------------------------------------------------ */

/*
 * A thread's exit wakes the threads joining it, and the kernel charges it
 * with all the time they spent in pthread_join().  An ordinary thread is
 * reaped a moment later; a main thread that leaves with pthread_exit()
 * stays listed, as the zombie leader, until the whole process exits.
 * Here a watcher joins the main thread, which lives SECONDS and leaves,
 * while a long lock holder keeps a short one waiting.  The long holder's
 * bottleneck flag is sampled over the last second (at most half the run)
 * before the main thread leaves and over the EXIT_JOIN_AFTER_MS after: a
 * ranking that counted the dead leader's charge would take the flag away
 * for about that long, until the charge had decayed (and for at least
 * EXIT_JOIN_AFTER_MIN samples).  The holders run until the watcher has its
 * samples.
 */
#define EXIT_JOIN_AFTER_MS 200
#define EXIT_JOIN_PERIOD (10 * MS)
/*
 * The window after runs on until it has this many samples, too: the
 * holders live until the watcher is done, and a busy host may keep the
 * watcher's vCPU from running for much of 200 ms (seen once: 2 samples).
 */
#define EXIT_JOIN_AFTER_MIN 10

static struct {
	pthread_t leader;
	pid_t leader_tid;
	struct thread_stats leader_stats;
	int leader_read;
	struct flag_samples before, after;
	struct sbuf *sb;
} exit_join;

static void *exit_join_watcher(void *arg)
{
	pid_t holder = worker_tid(&workers[0]);
	int i, err;

	(void)arg;
	err = pthread_join(exit_join.leader, NULL);
	if (err)
		die("pthread_join(main thread)", err);
	sample_flag(holder, ampkit_now_ns() + EXIT_JOIN_AFTER_MS * MS, EXIT_JOIN_PERIOD,
		    EXIT_JOIN_AFTER_MIN, &exit_join.after);
	exit_join.leader_read = !read_thread_stats(exit_join.leader_tid,
						   &exit_join.leader_stats);
	for (i = 0; i < nworkers; i++)
		workers[i].deadline = 0;
	join_workers();
	print_workers_open(exit_join.sb, "exit-join");
	flag_samples_json(exit_join.sb, "before", &exit_join.before);
	flag_samples_json(exit_join.sb, "after", &exit_join.after);
	if (exit_join.leader_read) {
		sb_printf(exit_join.sb, ",\"leader\":");
		thread_stats_json(exit_join.sb, &exit_join.leader_stats);
	}
	sb_printf(exit_join.sb, "}\n");
	fputs(exit_join.sb->data, stdout);
	exit(0);
}

static void exit_join_run(double seconds, struct sbuf *sb)
{
	uint64_t start = ampkit_now_ns(), run = (uint64_t)(seconds * 1e9);
	uint64_t window = run / 2 < 1000 * MS ? run / 2 : 1000 * MS;
	pthread_t watcher;
	struct worker *w;
	int err;

	exit_join.leader = pthread_self();
	exit_join.leader_tid = gettid_();
	exit_join.sb = sb;
	w = add_worker("long-holder", -1, UINT64_MAX);
	w->hold_ns = 20 * MS;
	w->outside_ns = 2 * MS;
	w = add_worker("short-holder", -1, UINT64_MAX);
	w->hold_ns = 500 * US;
	w->outside_ns = 2 * MS;
	start_workers(lock_holder);
	err = pthread_create(&watcher, NULL, exit_join_watcher, NULL);
	if (err)
		die("pthread_create", err);
	worker_tid(&workers[0]);
	sleep_until(start + run - window);
	sample_flag(workers[0].tid, start + run, EXIT_JOIN_PERIOD, 0, &exit_join.before);
	pthread_exit(NULL);
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
/*
 * per_class[0] CPU-bound threads of speedup 3.0 (big class) and
 * per_class[1] of 1.1 (little class), created in that order (the little
 * ones first if per_class[1] is negative: its absolute value).
 */
static void placement(double seconds, const int per_class[2])
{
	uint64_t deadline = ampkit_now_ns() + (uint64_t)(seconds * 1e9);
	static const struct {
		const char *role;
		unsigned int speedup;
	} kinds[] = { { "speedup-3.0", 3072 }, { "speedup-1.1", 1126 } };
	int i, k;

	for (int n = 0; n < 2; n++) {
		k = per_class[1] < 0 ? 1 - n : n;
		set_speedup(kinds[k].speedup);
		for (i = 0; i < abs(per_class[k]); i++)
			start_worker(add_worker(kinds[k].role, -1, deadline), cpu_bound);
	}
	set_speedup(0);
	join_workers();
}

/* --- evict: threads of the either class leave big CPUs to the big class -- */

static _Atomic int evict_release;

/* The CPUs of the highest capacity, as the kernel reports them. */
static int big_cpus(int *cpus, int max)
{
	int ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN), i, n = 0;
	long cap, top = -1;
	char path[96], *text;

	for (i = 0; i < ncpus; i++) {
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpu_capacity", i);
		text = read_text(path);
		if (!text)
			die("reading cpu_capacity", errno ? errno : ENOENT);
		cap = strtol(text, NULL, 10);
		free(text);
		if (cap > top) {
			top = cap;
			n = 0;
		}
		if (cap == top && n < max)
			cpus[n++] = i;
	}
	return n;
}

/* Runs pinned until released, then anywhere. */
static void *pinned_then_free(void *arg)
{
	struct worker *w = arg;
	int ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN), i;
	cpu_set_t all;

	worker_begin(w);
	while (!evict_release) {
		spin(100 * US);
		w->rounds++;
	}
	CPU_ZERO(&all);
	for (i = 0; i < ncpus; i++)
		CPU_SET(i, &all);
	if (sched_setaffinity(0, sizeof(all), &all))
		die("sched_setaffinity", errno);
	w->released = 1;
	while (ampkit_now_ns() < w->deadline) {
		spin(100 * US);
		w->rounds++;
	}
	worker_end(w);
	return NULL;
}

/*
 * Two little-class threads; two either-class ones held on the big CPUs for
 * the first 300 ms, then let free; then two big-class threads, which find
 * every CPU busy and queue on big CPUs beside the either-class ones.
 */
static void evict(double seconds)
{
	uint64_t start = ampkit_now_ns(), deadline = start + (uint64_t)(seconds * 1e9);
	int big[2], i;

	if (big_cpus(big, 2) != 2)
		die("evict needs two CPUs of the highest capacity", EINVAL);
	set_speedup(1126);
	for (i = 0; i < 2; i++)
		start_worker(add_worker("speedup-1.1", -1, deadline), cpu_bound);
	set_speedup(1792);
	for (i = 0; i < 2; i++)
		start_worker(add_worker("speedup-1.75", big[i], deadline), pinned_then_free);
	sleep_until(start + 300 * MS);
	evict_release = 1;
	for (i = 2; i < 4; i++)
		while (!workers[i].released)
			ampkit_sleep_ns(1 * MS);
	set_speedup(3072);
	for (i = 0; i < 2; i++)
		start_worker(add_worker("speedup-3.0", -1, deadline), cpu_bound);
	set_speedup(0);
	/*
	 * From the moment the big-class threads run: the time a busy host
	 * takes to run this thread again after the release is not COLAB's.
	 */
	for (i = 4; i < 6; i++)
		worker_tid(&workers[i]);
	for (i = 2; i < 4; i++)
		if (read_thread_stats(workers[i].tid, &workers[i].at_release))
			die("reading /proc/self/task/<tid>/sched", errno ? errno : ENOENT);
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
 * it. It shares its CPU with two CPU hogs. Meanwhile the main thread
 * samples the bottleneck's flag every 20 ms, from 300 ms in (three
 * half-lives of the ranking's decay) to 100 ms before the end.
 *
 * With spin_to_lock the bottleneck never sleeps for the lock, so it leaves
 * the CPU only when preempted, and then most likely holding the lock. A
 * starved one (nice 19 beside nice 0 hogs gets a turn about every half
 * second) that slept whenever a waiter held the lock would wait out most
 * of those half seconds asleep and holding nothing: the waiters would
 * wait on each other instead, and it would not be a bottleneck at all
 * (seen: flagged in 1 of 105 samples, 8 rounds in 3.5 s).
 */
static struct flag_samples bias_flag;

/* The flag samples the bias scenario takes at least (its tests ask for 50). */
#define BIAS_MIN_SAMPLES 60

static void bias(double seconds, int cpu, int nice, int spin_to_lock)
{
	uint64_t start = ampkit_now_ns(), deadline = start + (uint64_t)(seconds * 1e9);
	int ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN), i;
	struct worker *w;

	w = add_worker("bottleneck", cpu, UINT64_MAX);
	w->nice = nice;
	w->hold_ns = 1 * MS;
	w->outside_ns = 200 * US;
	w->spin_to_lock = spin_to_lock;
	add_worker("hog", cpu, UINT64_MAX);
	add_worker("hog", cpu, UINT64_MAX);
	for (i = 0; i < 2; i++) {
		w = add_worker("waiter", (cpu + 1 + i) % ncpus, UINT64_MAX);
		w->hold_ns = 50 * US;
		w->outside_ns = 300 * US;
	}
	for (i = 0; i < nworkers; i++)
		start_worker(&workers[i], strcmp(workers[i].role, "hog") ? lock_holder : cpu_bound);
	sleep_until(start + 300 * MS);
	/*
	 * Enough samples whatever the host: on a clock that skips idle time a
	 * busy host stretches each 20 ms sleep (CI beside a kernel check took
	 * 18 in the run's 3.6 s), so the run goes on until it has them.
	 */
	sample_flag(worker_tid(&workers[0]), deadline - 100 * MS, 20 * MS, BIAS_MIN_SAMPLES,
		    &bias_flag);
	if (ampkit_now_ns() + 100 * MS > deadline)
		deadline = ampkit_now_ns() + 100 * MS;
	snapshot_then_stop(deadline);
}

/* --- wash: threads that note when WASH binds them ---------------------------- */

static uint64_t scenario_start;
static long wash_nr_cpus;	/* set before the threads start: sysconf() scans sysfs */

/* Whether the caller may run on fewer CPUs than the machine has. */
static int restricted_now(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		die("sched_getaffinity", errno);
	return CPU_COUNT(&set) < wash_nr_cpus;
}

/*
 * The wash-* threads start together and read their counters together:
 * WASH judges the threads that were active over its last quanta, so
 * threads created (or leaving) one by one on a busy host would show it an
 * application of one or two threads, which Algorithm 1 (lines 7-8)
 * rightly binds to the big CPUs.
 *
 * The start is not a barrier: the futex wake that releases its waiters
 * charges the last to arrive with all their waiting, which LockRank cannot
 * tell from a lock's (a light thread of wash-lock that happened to arrive
 * last was bound for six quanta while that charge decayed).  The workers
 * poll a flag in nanosleep(), which WASH does not count, and the main
 * thread raises it once all of them are there.  The end, past every
 * deadline, is a barrier.
 */
static _Atomic int wash_arrived, wash_go;
static pthread_barrier_t wash_gate;

/*
 * A round: hold the lock for hold_ns (if any), spin outside_ns, sleep
 * sleep_ns; then note the first round, before the deadline, in which the
 * thread was restricted.
 */
static void *wash_worker(void *arg)
{
	struct worker *w = arg;
	int err;

	worker_begin(w);
	wash_arrived++;
	while (!wash_go)
		ampkit_sleep_ns(200 * US);
	while (ampkit_now_ns() < w->deadline) {
		if (w->hold_ns) {
			pthread_mutex_lock(&lock);
			spin(w->hold_ns);
			pthread_mutex_unlock(&lock);
		}
		spin(w->outside_ns);
		if (w->sleep_ns)
			ampkit_sleep_ns(w->sleep_ns);
		/*
		 * Only while every thread still runs: past the deadline the
		 * others exit, and WASH rightly binds what is left (Algorithm 1
		 * lines 7-8), which says nothing about how it ranked them.
		 */
		if (ampkit_now_ns() < w->deadline && restricted_now()) {
			w->restricted_rounds++;
			if (!w->bound_at_ns) {
				w->bound_at_ns = ampkit_now_ns() - scenario_start;
				w->stalled_at_bind_ns = stalled_ns;
				if (read_thread_stats(gettid_(), &w->at_bind))
					die("reading /proc/self/task/<tid>/sched", ENOENT);
			}
		}
		w->rounds++;
	}
	/*
	 * Every thread reads its counters while all of them are still alive:
	 * once some have exited, WASH rightly binds what is left (lines 7-8
	 * again), and the last to leave would report a binding the run never
	 * had (a CI run saw wash_bound 1 with no restricted round).
	 */
	err = pthread_barrier_wait(&wash_gate);
	if (err && err != PTHREAD_BARRIER_SERIAL_THREAD)
		die("pthread_barrier_wait", err);
	worker_end(w);
	return NULL;
}

/* Starts every worker as a wash_worker behind the gate; returns once all have ended. */
static void run_wash_workers(void)
{
	int err = pthread_barrier_init(&wash_gate, NULL, nworkers);

	if (err)
		die("pthread_barrier_init", err);
	wash_arrived = 0;
	wash_go = 0;
	start_workers(wash_worker);
	while (wash_arrived < nworkers)
		ampkit_sleep_ns(200 * US);
	wash_go = 1;
	join_workers();
	pthread_barrier_destroy(&wash_gate);
}

static struct worker *add_wash_worker(const char *role, uint64_t deadline, uint64_t hold_ns,
				      uint64_t outside_ns, uint64_t sleep_ns)
{
	struct worker *w = add_worker(role, -1, deadline);

	w->hold_ns = hold_ns;
	w->outside_ns = outside_ns;
	w->sleep_ns = sleep_ns;
	return w;
}

/*
 * wash-few: two CPU-bound threads (no more than a 2-big machine has big
 * CPUs); wash-scalable: six, without a lock; wash-lock: one thread holds
 * a mutex 10 ms at a time that three others take briefly, beside two
 * light threads that never touch it.  The light ones do far less work
 * than the holder (50 us every 40 ms): ExecRank binds the most working
 * threads until their work reaches the big CPUs' share of the capacity
 * (61% on 2B4L with the calibrated capacity, 325), and a light thread that shares
 * the holder's big CPU is credited its full work there, so lights doing
 * 200 us every 20 ms pulled the holder under that share now and then and
 * were rightly bound (a CI run saw one restricted for 28 rounds).
 */
static void wash_scenario(const char *name, double seconds)
{
	uint64_t deadline;
	int i;

	wash_nr_cpus = sysconf(_SC_NPROCESSORS_CONF);
	scenario_start = ampkit_now_ns();
	deadline = scenario_start + (uint64_t)(seconds * 1e9);
	if (!strcmp(name, "wash-few")) {
		for (i = 0; i < 2; i++)
			add_wash_worker("cpu-bound", deadline, 0, 1 * MS, 0);
	} else if (!strcmp(name, "wash-scalable")) {
		for (i = 0; i < 6; i++)
			add_wash_worker("cpu-bound", deadline, 0, 1 * MS, 0);
	} else {
		add_wash_worker("holder", deadline, 10 * MS, 200 * US, 0);
		for (i = 0; i < 3; i++)
			add_wash_worker("waiter", deadline, 200 * US, 200 * US, 0);
		for (i = 0; i < 2; i++)
			add_wash_worker("light", deadline, 0, 50 * US, 40 * MS);
	}
	run_wash_workers();
}

/* The worker-cost scenarios take 2 to MAX_THREADS threads. */
static void check_overhead_threads(const char *scenario, int threads)
{
	if (threads < 2 || threads > MAX_THREADS) {
		fprintf(stderr, "ampkit-schedtest: %s: THREADS must be 2 to %d\n", scenario,
			MAX_THREADS);
		exit(2);
	}
}

/*
 * Their application, which a policy must rank every period: one thread
 * holds the mutex 10 ms at a time, a quarter of the others take it
 * briefly, the rest compute in 1 ms bursts.  Returns when it started.
 */
static uint64_t add_ranked_application(double seconds, int threads)
{
	uint64_t start, deadline;
	int i;

	wash_nr_cpus = sysconf(_SC_NPROCESSORS_CONF);
	start = ampkit_now_ns();
	scenario_start = start;
	deadline = start + (uint64_t)(seconds * 1e9);
	add_wash_worker("holder", deadline, 10 * MS, 200 * US, 0);
	for (i = 1; i < threads; i++) {
		if (i <= threads / 4)
			add_wash_worker("waiter", deadline, 200 * US, 200 * US, 0);
		else
			add_wash_worker("burst", deadline, 0, 1 * MS, 1 * MS);
	}
	return start;
}

/*
 * kernel.sched_colab_work: "periods P cpu_ns C swaps S moves M pulls N"
 * (pulls: the big CPUs' going idle, patch 0047; -1 from a kernel without them)
 */
#define COLAB_WORK_FILE "/proc/sys/kernel/sched_colab_work"

struct colab_work {
	unsigned long long periods, cpu_ns, swaps, moves;
	long long pulls;
};

static void read_colab_work(struct colab_work *st)
{
	char *text = read_text(COLAB_WORK_FILE);
	int n = text ? sscanf(text, "periods %llu cpu_ns %llu swaps %llu moves %llu pulls %lld",
			      &st->periods, &st->cpu_ns, &st->swaps, &st->moves,
			      &st->pulls) : 0;

	if (n < 4)
		die("reading " COLAB_WORK_FILE " (a kernel without CONFIG_SCHED_COLAB?)", EINVAL);
	if (n == 4)
		st->pulls = -1;
	free(text);
}

/*
 * colab-overhead: wash-overhead's application, its threads given
 * speedups of every class in turn (3.0, 1.1, none), so that the COLAB
 * worker ranks them and its class balancer has threads to place; what the
 * worker spent on the whole machine meanwhile.  The threads are given
 * energies per instruction too, in a cycle of four, so that under the
 * ranked policies (hsp, eef: the same worker) every thread with a speedup
 * has a rank of its own.
 */
static void colab_overhead(double seconds, int threads, struct sbuf *sb)
{
	static const unsigned int speedups[] = { 3072, 1126, 0 };
	static const unsigned int epis[] = { 600, 300, 1200, 450 };
	struct colab_work before, after;
	uint64_t start, elapsed;
	int i;

	check_overhead_threads("colab-overhead", threads);
	read_colab_work(&before);
	start = add_ranked_application(seconds, threads);
	for (i = 0; i < nworkers; i++) {
		workers[i].speedup = speedups[i % 3];
		workers[i].epi_pj = epis[i % 4];
	}
	run_wash_workers();
	elapsed = ampkit_now_ns() - start;
	read_colab_work(&after);
	sb_printf(sb,
		  "{\"scenario\":\"colab-overhead\",\"threads\":%d,\"cpus\":%ld,"
		  "\"elapsed_ns\":%llu,\"periods\":%llu,\"cpu_ns\":%llu,"
		  "\"swaps\":%llu,\"moves\":%llu}\n",
		  threads, sysconf(_SC_NPROCESSORS_ONLN), (unsigned long long)elapsed,
		  after.periods - before.periods, after.cpu_ns - before.cpu_ns,
		  after.swaps - before.swaps, after.moves - before.moves);
}

/* --- wash-own: a bound thread chooses its CPUs itself ----------------------- */

/*
 * Spins in 1 ms rounds until WASH restricts the thread's CPUs or its
 * deadline passes; notes when it was bound.  Whether it was.
 */
static int spin_until_restricted(struct worker *w)
{
	while (ampkit_now_ns() < w->deadline && !restricted_now()) {
		spin(1 * MS);
		w->rounds++;
	}
	if (!restricted_now())
		return 0;
	w->bound_at_ns = ampkit_now_ns() - scenario_start;
	w->stalled_at_bind_ns = stalled_ns;
	return 1;
}

static int allowed_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		die("sched_getaffinity", errno);
	return CPU_COUNT(&set);
}

static void *wash_own_child(void *arg)
{
	struct worker *w = arg;

	worker_begin(w);
	w->cpus = allowed_cpus();
	while (ampkit_now_ns() < w->deadline) {
		spin(1 * MS);
		w->rounds++;
	}
	worker_end(w);
	return NULL;
}

/*
 * Runs until WASH binds it, then sets its allowed CPUs itself, to the very
 * CPUs WASH chose, and creates a thread (workers[2]); then counts the
 * rounds in which it found its CPUs widened, which WASH may no longer do.
 */
static void *wash_own_chooser(void *arg)
{
	struct worker *w = arg;
	cpu_set_t set;

	worker_begin(w);
	if (spin_until_restricted(w)) {
		if (read_thread_stats(gettid_(), &w->at_bind))
			die("reading /proc/self/task/<tid>/sched", ENOENT);
		if (sched_getaffinity(0, sizeof(set), &set) ||
		    sched_setaffinity(0, sizeof(set), &set))
			die("sched_setaffinity", errno);
		w->cpus = CPU_COUNT(&set);
	}
	start_worker(&workers[2], wash_own_child);
	while (ampkit_now_ns() < w->deadline) {
		spin(1 * MS);
		w->rounds++;
		if (w->cpus && !restricted_now())
			w->widened_rounds++;
	}
	worker_end(w);
	return NULL;
}

static void wash_own(double seconds)
{
	uint64_t deadline;

	wash_nr_cpus = sysconf(_SC_NPROCESSORS_CONF);
	scenario_start = ampkit_now_ns();
	deadline = scenario_start + (uint64_t)(seconds * 1e9);
	add_worker("chooser", -1, deadline);
	add_worker("cpu-bound", -1, deadline);
	add_worker("child", -1, deadline);
	start_worker(&workers[0], wash_own_chooser);
	start_worker(&workers[1], wash_own_child);
	pthread_join(workers[0].thread, NULL);
	pthread_join(workers[1].thread, NULL);
	pthread_join(workers[2].thread, NULL);
}

/*
 * kernel.sched_wash_stats:
 * "quanta Q cpu_ns C wall_ns W binds B unbinds U fork_copy F fences N"
 */
#define WASH_STATS_FILE "/proc/sys/kernel/sched_wash_stats"

struct wash_stats {
	unsigned long long quanta, cpu_ns, wall_ns, binds, unbinds;
	int fork_copy;		/* forks copy the allowed CPUs again */
	int fences;		/* threads WASH bound, not yet back in user space */
};

static void read_wash_stats(struct wash_stats *st)
{
	char *text = read_text(WASH_STATS_FILE);

	if (!text ||
	    sscanf(text,
		   "quanta %llu cpu_ns %llu wall_ns %llu binds %llu unbinds %llu fork_copy %d fences %d",
		   &st->quanta, &st->cpu_ns, &st->wall_ns, &st->binds, &st->unbinds,
		   &st->fork_copy, &st->fences) != 7)
		die("reading " WASH_STATS_FILE " (a kernel without CONFIG_SCHED_WASH?)", EINVAL);
	free(text);
}

/* Polls until WASH's fork copy is off, for up to @limit_ns; how long it took. */
static uint64_t wait_fork_copy_off(struct wash_stats *st, uint64_t limit_ns)
{
	struct timespec ms = { 0, 1000 * 1000 };
	uint64_t start = ampkit_now_ns();

	for (;;) {
		read_wash_stats(st);
		if (!st->fork_copy || ampkit_now_ns() - start >= limit_ns)
			return ampkit_now_ns() - start;
		nanosleep(&ms, NULL);
	}
}

/*
 * wash-overhead: an application WASH must rank every quantum (it is not
 * scalable, as a quarter of its threads wait on the lock), and what the
 * worker spent on all applications meanwhile.
 */
static void wash_overhead(double seconds, int threads, struct sbuf *sb)
{
	struct wash_stats before, after;
	uint64_t start, elapsed;

	check_overhead_threads("wash-overhead", threads);
	read_wash_stats(&before);
	start = add_ranked_application(seconds, threads);
	run_wash_workers();
	elapsed = ampkit_now_ns() - start;
	read_wash_stats(&after);
	sb_printf(sb,
		  "{\"scenario\":\"wash-overhead\",\"threads\":%d,\"cpus\":%ld,"
		  "\"elapsed_ns\":%llu,\"quanta\":%llu,\"cpu_ns\":%llu,\"wall_ns\":%llu,"
		  "\"binds\":%llu,\"unbinds\":%llu}\n",
		  threads, sysconf(_SC_NPROCESSORS_ONLN), (unsigned long long)elapsed,
		  after.quanta - before.quanta, after.cpu_ns - before.cpu_ns,
		  after.wall_ns - before.wall_ns,
		  after.binds - before.binds, after.unbinds - before.unbinds);
}

/* --- wash-fence: the fork copy outlasts WASH until its threads return ----- */

static int fence_pipe[2];
static atomic_int fence_blocked;

/* Spins until WASH binds it, then blocks in read() until released. */
static void *fence_sleeper(void *arg)
{
	struct worker *w = arg;
	char c;

	worker_begin(w);
	spin_until_restricted(w);
	atomic_store(&fence_blocked, 1);
	if (read(fence_pipe[0], &c, 1) != 1)
		die("read", errno);
	worker_end(w);
	return NULL;
}

/*
 * /proc/self/task/<tid>/stat of thread @tid of this process, read into
 * *@text (NULL if it could not be; free it), and where its fields resume
 * past the command, which may hold spaces: at the state, field 3; or NULL.
 */
static const char *thread_stat(pid_t tid, char **text)
{
	char path[64], *paren;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	*text = read_text(path);
	paren = *text ? strrchr(*text, ')') : NULL;
	return paren && paren[1] == ' ' ? paren + 2 : NULL;
}

/* The state letter of thread @tid of this process (R, S, D...), or 0. */
static char thread_state(pid_t tid)
{
	char *text;
	const char *fields = thread_stat(tid, &text);
	char state = fields ? fields[0] : 0;

	free(text);
	return state;
}

/*
 * One thread runs until WASH binds it and then blocks in the kernel; the
 * policy goes to cfs meanwhile. Its fence cannot pass while it is blocked,
 * so forks keep copying their allowed CPUs again; once it is woken and
 * back in user space, the copy stops. The bound thread's CPUs are all of
 * them from the switch on.
 */
static void wash_fence(double seconds, struct sbuf *sb)
{
	struct timespec ms = { 0, 1000 * 1000 };
	struct wash_stats blocked, woken;
	struct worker *w;
	uint64_t deadline, off_ns;
	cpu_set_t set;
	char c = 1;
	int widened;

	wash_nr_cpus = sysconf(_SC_NPROCESSORS_CONF);
	scenario_start = ampkit_now_ns();
	deadline = scenario_start + (uint64_t)(seconds * 1e9);
	if (pipe(fence_pipe))
		die("pipe", errno);
	w = add_worker("sleeper", -1, deadline);
	start_worker(w, fence_sleeper);
	/* blocked for certain: in read(), asleep */
	while (!atomic_load(&fence_blocked) || thread_state(w->tid) != 'S')
		nanosleep(&ms, NULL);
	switch_policy("cfs");
	read_wash_stats(&blocked);
	if (sched_getaffinity(w->tid, sizeof(set), &set))
		die("sched_getaffinity", errno);
	widened = CPU_COUNT(&set) == wash_nr_cpus;
	if (write(fence_pipe[1], &c, 1) != 1)
		die("write", errno);
	pthread_join(w->thread, NULL);
	off_ns = wait_fork_copy_off(&woken, 2 * SEC);
	sb_printf(sb,
		  "{\"scenario\":\"wash-fence\",\"bound_at_ms\":%.1f,\"widened\":%d,"
		  "\"blocked\":{\"fork_copy\":%d,\"fences\":%d,\"binds\":%llu},"
		  "\"woken\":{\"fork_copy\":%d,\"fences\":%d},\"fork_copy_off_ms\":%.1f}\n",
		  (double)w->bound_at_ns / 1e6, widened, blocked.fork_copy, blocked.fences,
		  blocked.binds, woken.fork_copy, woken.fences, (double)off_ns / 1e6);
}

/* --- wash-cpuset, wash-hotplug: a cpuset's and a hotplug's CPUs are theirs -- */

static void write_file(const char *path, const char *text);

static cpu_set_t owned_cpus;		/* what the cpuset or the fallback chose */
static cpu_set_t owned_self_pin;	/* the workers' own binding (pin-hotplug) */
static int owned_pin_self;
static _Atomic int owned_since;		/* set once they chose */
static _Atomic uint32_t owned_bound;	/* workers WASH has bound so far */

/* The scheduler's tunables (CONFIG_SCHED_DEBUG) are in debugfs. */
static void mount_debugfs(void)
{
	if (mkdir("/sys/kernel/debug", 0755) && errno != EEXIST)
		die("mkdir /sys/kernel/debug", errno);
	if (mount("none", "/sys/kernel/debug", "debugfs", 0, NULL) && errno != EBUSY)
		die("mounting debugfs", errno);
}

/* The big CPUs (big_cpus()) and the others, the little ones, as a set. */
static void little_cpus(cpu_set_t *little, int *nr_big, int big[])
{
	int cpu, i;

	if (wash_nr_cpus > MAX_CPUS)
		die("more CPUs than the scenario knows", E2BIG);
	*nr_big = big_cpus(big, MAX_CPUS);
	CPU_ZERO(little);
	for (cpu = 0; cpu < wash_nr_cpus; cpu++)
		CPU_SET(cpu, little);
	for (i = 0; i < *nr_big; i++)
		CPU_CLR(big[i], little);
}

/*
 * Spins until WASH binds it, then, once the cpuset or the hotplug chose
 * its CPUs, counts the rounds in which it found other CPUs allowed than
 * theirs (widened_rounds): WASH no longer owns its mask.  The kernel's
 * counters are read at the first such round (at_release): wash.bound must
 * already be 0 there.
 */
static void *owned_worker(void *arg)
{
	struct worker *w = arg;
	cpu_set_t set;

	worker_begin(w);
	if (owned_pin_self && sched_setaffinity(0, sizeof(owned_self_pin), &owned_self_pin))
		die("sched_setaffinity", errno);
	if (spin_until_restricted(w)) {
		atomic_fetch_add(&owned_bound, 1);
		syscall(SYS_futex, &owned_bound, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
	while (ampkit_now_ns() < w->deadline) {
		spin(1 * MS);
		w->rounds++;
		if (!atomic_load(&owned_since))
			continue;
		if (sched_getaffinity(0, sizeof(set), &set))
			die("sched_getaffinity", errno);
		if (!w->released) {
			if (read_thread_stats(gettid_(), &w->at_release))
				die("reading /proc/self/task/<tid>/sched", errno ? errno : ENOENT);
			w->released = 1;
		}
		w->cpus = CPU_COUNT(&set);
		if (!CPU_EQUAL(&set, &owned_cpus))
			w->widened_rounds++;
	}
	worker_end(w);
	return NULL;
}

/*
 * The start of wash-cpuset and wash-hotplug: the big and little CPUs, and
 * two CPU-bound threads, running until told to stop; waits until both
 * are bound or @budget has passed, blocked on a futex rather than
 * polling: a thread that runs every few ms is an active thread to WASH,
 * and with three of them on two big CPUs it binds none of the two (a
 * polling version saw them bound only once it ended).
 */
static int start_owned_workers(uint64_t budget, cpu_set_t *little, int *nr_big, int big[])
{
	struct timespec left;
	uint64_t now, until;
	uint32_t bound;
	int i;

	wash_nr_cpus = sysconf(_SC_NPROCESSORS_CONF);
	scenario_start = ampkit_now_ns();
	until = scenario_start + budget;
	little_cpus(little, nr_big, big);
	CPU_ZERO(&owned_self_pin);
	for (i = 0; i < *nr_big; i++)
		CPU_SET(big[i], &owned_self_pin);
	start_worker(add_worker("owned", -1, UINT64_MAX), owned_worker);
	start_worker(add_worker("owned", -1, UINT64_MAX), owned_worker);
	while ((bound = atomic_load(&owned_bound)) < 2) {
		now = ampkit_now_ns();
		if (now >= until)
			break;
		left.tv_sec = (until - now) / SEC;
		left.tv_nsec = (until - now) % SEC;
		syscall(SYS_futex, &owned_bound, FUTEX_WAIT_PRIVATE, bound, &left, NULL, 0);
	}
	return atomic_load(&owned_bound) >= 2;
}

/*
 * Until both threads have run a round since the cpuset or the hotplug
 * chose their CPUs, or @until.  Moving them can take seconds of guest
 * time on the debug kernel under QEMU (a cgroup attach waits for RCU;
 * six vCPUs take turns), so no fixed wait is long enough for certain.
 */
static int wait_owned_rounds(uint64_t until)
{
	while (!(atomic_load(&workers[0].released) && atomic_load(&workers[1].released)) &&
	       ampkit_now_ns() < until)
		sleep_until(ampkit_now_ns() + 10 * MS);
	return atomic_load(&workers[0].released) && atomic_load(&workers[1].released);
}

/*
 * Leaves WASH for cfs (it widens what it owns), then ends the threads.
 * Threads that bound themselves (pin-hotplug) need no policy, and run on
 * kernels without one.
 */
static void stop_wash_then_workers(void)
{
	if (!owned_pin_self)
		switch_policy("cfs");
	sleep_until(ampkit_now_ns() + 500 * MS);
	atomic_store(&workers[0].deadline, 0);
	atomic_store(&workers[1].deadline, 0);
	pthread_join(workers[0].thread, NULL);
	pthread_join(workers[1].thread, NULL);
}

/* Moves this process into a cgroup v2 cpuset of @cpus. */
static int cpuset_move(const cpu_set_t *cpus)
{
	char list[4 * MAX_CPUS + 1] = "", pid[24];
	size_t n;
	int cpu;

	if (mkdir("/sys/fs/cgroup", 0755) && errno != EEXIST)
		return errno;
	if (mount("none", "/sys/fs/cgroup", "cgroup2", 0, NULL) && errno != EBUSY)
		return errno;
	if (mkdir("/sys/fs/cgroup/ampkit", 0755) && errno != EEXIST)
		return errno;
	for (cpu = 0; cpu < wash_nr_cpus; cpu++) {
		if (!CPU_ISSET(cpu, cpus))
			continue;
		n = strlen(list);
		snprintf(list + n, sizeof(list) - n, "%s%d", n ? "," : "", cpu);
	}
	write_file("/sys/fs/cgroup/cgroup.subtree_control", "+cpuset");
	write_file("/sys/fs/cgroup/ampkit/cpuset.cpus", list);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	write_file("/sys/fs/cgroup/ampkit/cgroup.procs", pid);
	return 0;
}

/*
 * @seconds bounds each wait: for the binding, and for the threads' first
 * rounds after the move.
 */
static void wash_cpuset(double seconds, struct sbuf *sb)
{
	uint64_t budget = (uint64_t)(seconds * 1e9), moved_at, move_ns = 0;
	int nr_big, big[MAX_CPUS], bound, ran = 0, err = 0;
	cpu_set_t little;

	bound = start_owned_workers(budget, &little, &nr_big, big);
	if (bound) {
		owned_cpus = little;
		moved_at = ampkit_now_ns();
		err = cpuset_move(&little);
		move_ns = ampkit_now_ns() - moved_at;
		if (!err) {
			atomic_store(&owned_since, 1);
			ran = wait_owned_rounds(ampkit_now_ns() + budget);
			/* WASH quanta with the threads in the cpuset */
			sleep_until(ampkit_now_ns() + SEC);
		}
	}
	stop_wash_then_workers();
	print_workers_open(sb, "wash-cpuset");
	sb_printf(sb,
		  ",\"bound_before\":%d,\"move_errno\":%d,\"move_ms\":%.1f,\"ran_after\":%d,"
		  "\"cpuset_cpus\":%d}\n",
		  bound, err, (double)move_ns / 1e6, ran, CPU_COUNT(&little));
}

static int set_online(int cpu, int online)
{
	char path[96];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	f = fopen(path, "w");
	if (!f)
		return errno;
	if (fputs(online ? "1" : "0", f) < 0) {
		fclose(f);
		return errno;
	}
	return fclose(f) ? errno : 0;
}

/*
 * @scenario: wash-hotplug, where WASH binds the threads, or pin-hotplug,
 * where they bind themselves (the same fallback, without WASH).
 */
static void wash_hotplug(const char *scenario, double seconds, struct sbuf *sb)
{
	uint64_t budget = (uint64_t)(seconds * 1e9), offline_at, offline_ns = 0;
	int nr_big, big[MAX_CPUS], bound, i, ran = 0, err = 0;
	cpu_set_t little;

	bound = start_owned_workers(budget, &little, &nr_big, big);
	if (bound) {
		/*
		 * Without a cpuset the fallback allows every possible CPU,
		 * which sched_getaffinity() shows as the active ones: the
		 * little CPUs while the big ones are offline.  Once they are
		 * back, WASH owns the masks again (they are its unbound
		 * ones) and may bind.
		 */
		owned_cpus = little;
		offline_at = ampkit_now_ns();
		for (i = 0; i < nr_big && !err; i++)
			err = set_online(big[i], 0);
		if (!err) {
			atomic_store(&owned_since, 1);
			ran = wait_owned_rounds(ampkit_now_ns() + budget);
			/* WASH quanta with the big CPUs gone */
			sleep_until(ampkit_now_ns() + 200 * MS);
		}
		offline_ns = ampkit_now_ns() - offline_at;
		atomic_store(&owned_since, 0);
		for (i = 0; i < nr_big; i++)
			set_online(big[i], 1);
	}
	stop_wash_then_workers();
	print_workers_open(sb, scenario);
	sb_printf(sb,
		  ",\"bound_before\":%d,\"offline_errno\":%d,\"big_cpus\":%d,\"offline_ms\":%.1f,"
		  "\"ran_after\":%d}\n",
		  bound, err, nr_big, (double)offline_ns / 1e6, ran);
}

/* --- timescale: the scheduler's clocks under sched_timescale= -------------- */

static _Atomic int ramp_cpu = -1;	/* where the ramp thread runs */
static _Atomic uint64_t ramp_widened_at, ramp_big_at;
static _Atomic int ramp_stop;

/*
 * Spins on the little CPU it starts on until the main thread allows it
 * every CPU, then until it first runs on a big one: CFS moves it once
 * PELT calls it a misfit, so the time it takes is PELT's ramp (from a
 * new task's utilisation to 80% of a little CPU's capacity).
 */
static void *ramp_thread(void *arg)
{
	const cpu_set_t *little = arg;
	int cpu;

	while (!atomic_load(&ramp_stop)) {
		spin(50 * US);
		cpu = sched_getcpu();
		atomic_store(&ramp_cpu, cpu);
		if (atomic_load(&ramp_widened_at) && !CPU_ISSET(cpu, little)) {
			atomic_store(&ramp_big_at, ampkit_now_ns());
			break;
		}
	}
	return NULL;
}

static unsigned long read_ulong(const char *path, unsigned long fallback)
{
	char *text = read_text(path);
	unsigned long v;

	if (!text)
		return fallback;
	v = strtoul(text, NULL, 10);
	free(text);
	return v;
}

/* The calling thread's PELT utilisation; -1 without SCHED_DEBUG's file. */
static long own_util_avg(void)
{
	char path[64], value[32], *text;
	long util = -1;

	snprintf(path, sizeof(path), "/proc/self/task/%d/sched", (int)gettid_());
	text = read_text(path);
	if (!text)
		return -1;
	if (ampkit_sched_field(text, "se.avg.util_avg", value, sizeof(value)))
		util = strtol(value, NULL, 10);
	free(text);
	return util;
}

/*
 * The running thread's average is brought up to date by the tick, every
 * jiffy: read it as it changes, and when (@at, run time).  Reading is
 * running too; sleeping would let it decay.  -1 if it did not change
 * within 100 ms.
 */
static long fresh_util_avg(uint64_t *at)
{
	uint64_t end = ampkit_thread_cpu_ns() + 100 * MS;
	long first = own_util_avg(), util;

	do {
		util = own_util_avg();
		*at = ampkit_thread_cpu_ns();
	} while (util == first && first >= 0 && *at < end);
	return util == first ? -1 : util;
}

static double halflife_ms = -1;

static void swap_doubles(double *a, double *b)
{
	double t = *a;

	*a = *b;
	*b = t;
}

/* Busy until the calling thread has run @ns more of CPU time. */
static void run_for(uint64_t ns)
{
	uint64_t end = ampkit_thread_cpu_ns() + ns;

	while (ampkit_thread_cpu_ns() < end)
		;
}

/*
 * PELT's half-life as a CPU-bound thread alone on a big CPU sees it: its
 * utilisation closes on the CPU's capacity @arg by half its distance per
 * half-life, whatever it started at.  Read across 16 ms of its run time
 * and up to a jiffy more.
 */
static void *halflife_thread(void *arg)
{
	double capacity = (double)*(const long *)arg, gap0, gap1;
	uint64_t t0, t1;
	long u0, u1;

	halflife_ms = -1;
	run_for(2 * MS);
	u0 = fresh_util_avg(&t0);
	run_for(16 * MS);
	u1 = fresh_util_avg(&t1);
	gap0 = capacity - (double)u0;
	gap1 = capacity - (double)u1;
	if (u0 >= 0 && u1 >= 0 && gap0 > 0 && gap1 > 0 && gap1 < gap0)
		halflife_ms = (double)(t1 - t0) / 1e6 * log(2.0) / log(gap0 / gap1);
	return NULL;
}

/*
 * Under cfs: the scale the kernel reads back, CFS's latency, and the
 * misfit ramp of a new CPU-bound thread on a little CPU; then COLAB's
 * ranking periods and WASH's quanta in @seconds each.
 */
static void timescale(double seconds, struct sbuf *sb)
{
	struct colab_work cw0, cw1;
	struct wash_stats ws0, ws1;
	int nr_big, big[MAX_CPUS], little;
	uint64_t window = (uint64_t)(seconds * 1e9), t0, ramp_ns = 0;
	unsigned long latency_ns;
	double halflives[3];
	char path[96];
	long capacity;
	pthread_attr_t attr;
	cpu_set_t set;
	pthread_t t;
	cpu_set_t little_set;

	wash_nr_cpus = sysconf(_SC_NPROCESSORS_CONF);
	little_cpus(&little_set, &nr_big, big);
	for (little = 0; little < wash_nr_cpus && !CPU_ISSET(little, &little_set); little++)
		;
	if (little == wash_nr_cpus || !nr_big)
		die("timescale needs big and little CPUs", EINVAL);
	mount_debugfs();
	latency_ns = read_ulong("/sys/kernel/debug/sched/latency_ns", 0);

	switch_policy("cfs");
	CPU_ZERO(&set);
	CPU_SET(little, &set);
	pthread_attr_init(&attr);
	if (pthread_attr_setaffinity_np(&attr, sizeof(set), &set) ||
	    pthread_create(&t, &attr, ramp_thread, &little_set))
		die("starting the ramp thread", errno);
	pthread_attr_destroy(&attr);
	/* on its little CPU, running */
	while (atomic_load(&ramp_cpu) < 0)
		sleep_until(ampkit_now_ns() + MS);
	for (int cpu = 0; cpu < wash_nr_cpus; cpu++)
		CPU_SET(cpu, &set);
	atomic_store(&ramp_widened_at, ampkit_now_ns());
	if (pthread_setaffinity_np(t, sizeof(set), &set))
		die("pthread_setaffinity_np", errno);
	t0 = ampkit_now_ns();
	while (!atomic_load(&ramp_big_at) && ampkit_now_ns() - t0 < 2 * SEC)
		sleep_until(ampkit_now_ns() + MS);
	atomic_store(&ramp_stop, 1);
	pthread_join(t, NULL);
	if (atomic_load(&ramp_big_at))
		ramp_ns = atomic_load(&ramp_big_at) - atomic_load(&ramp_widened_at);

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpu_capacity", big[0]);
	capacity = (long)read_ulong(path, 1024);
	/* the median of three threads', each a single reading a jiffy apart */
	CPU_ZERO(&set);
	CPU_SET(big[0], &set);
	for (int i = 0; i < 3; i++) {
		pthread_attr_init(&attr);
		if (pthread_attr_setaffinity_np(&attr, sizeof(set), &set) ||
		    pthread_create(&t, &attr, halflife_thread, &capacity))
			die("starting the half-life thread", errno);
		pthread_attr_destroy(&attr);
		pthread_join(t, NULL);
		halflives[i] = halflife_ms;
	}
	if (halflives[0] > halflives[1])
		swap_doubles(&halflives[0], &halflives[1]);
	if (halflives[1] > halflives[2])
		swap_doubles(&halflives[1], &halflives[2]);
	if (halflives[0] > halflives[1])
		swap_doubles(&halflives[0], &halflives[1]);

	switch_policy("colab");
	read_colab_work(&cw0);
	sleep_until(ampkit_now_ns() + window);
	read_colab_work(&cw1);
	switch_policy("wash");
	read_wash_stats(&ws0);
	sleep_until(ampkit_now_ns() + window);
	read_wash_stats(&ws1);
	switch_policy("cfs");

	sb_printf(sb,
		  "{\"scenario\":\"timescale\",\"scale\":%lu,\"latency_ns\":%lu,\"ramp_ms\":%.1f,"
		  "\"halflife_ms\":%.2f,\"colab_periods\":%llu,\"wash_quanta\":%llu,"
		  "\"window_ms\":%.1f}\n",
		  read_ulong("/proc/sys/kernel/sched_timescale", 1), latency_ns,
		  (double)ramp_ns / 1e6, halflives[1], cw1.periods - cw0.periods,
		  ws1.quanta - ws0.quanta, (double)window / 1e6);
}

/* --- pull: a waiting bottleneck is what an idle CPU takes ---------------- */

#define PULL_ROUNDS 40
#define MIGRATION_COST_FILE "/sys/kernel/debug/sched/migration_cost_ns"

static pthread_mutex_t pull_locks[2] = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER };

struct pull_round {
	const char *first;	/* the role of the first thread on the idle CPU */
	int flagged;		/* both bottlenecks flagged before and after */
	double after_ms;	/* how long after it was allowed */
};

static struct pull_round pull_rounds[PULL_ROUNDS];
static int pull_little[2];
static char saved_migration_cost[32];	/* migration_cost_ns before the scenario */

/* Puts the migration cost back however the scenario ends. */
static void restore_migration_cost(void)
{
	FILE *f = fopen(MIGRATION_COST_FILE, "w");

	if (f) {
		fputs(saved_migration_cost, f);
		fclose(f);
	}
}

/*
 * Sets the balancer's migration_cost_ns (a task that ran within it is cache
 * hot) to @ns for the scenario, put back however it ends.
 */
static void set_migration_cost(const char *ns)
{
	unsigned long cost;

	mount_debugfs();
	cost = read_ulong(MIGRATION_COST_FILE, ULONG_MAX);
	if (cost == ULONG_MAX)
		die("reading " MIGRATION_COST_FILE, errno ? errno : ENOENT);
	snprintf(saved_migration_cost, sizeof(saved_migration_cost), "%lu", cost);
	if (atexit(restore_migration_cost))
		die("atexit", ENOMEM);
	write_file(MIGRATION_COST_FILE, ns);
}

/* The CPU thread tid of this process is on (task_cpu(): field 39), or -1. */
static int thread_cpu(pid_t tid)
{
	char *text;
	const char *p = thread_stat(tid, &text);
	int field;

	for (field = 3; p && field < 39; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	field = p ? atoi(p) : -1;
	free(text);
	return field;
}

/* Whether the first two threads are both flagged bottlenecks. */
static int both_flagged(const pid_t tids[2])
{
	struct thread_stats a, b;

	return !read_thread_stats(tids[0], &a) && !read_thread_stats(tids[1], &b) &&
	       a.bottleneck == 1 && b.bottleneck == 1;
}

/*
 * Two bottlenecks, each holding its own lock 1 ms at a time while threads
 * on a big CPU take it briefly, and a CPU hog, all on one little CPU while
 * the other little CPU idles. The holders spin to take their lock back, so
 * they never sleep: no wake-up places them, only the balancer. Each round
 * pins the three there again, then allows them both little CPUs, the
 * bottlenecks first, and notes which of them the idle CPU takes first: one
 * of the two that wait there, the balancer's choice. No task counts as
 * cache hot meanwhile (migration_cost_ns 0, restored at exit), so that the
 * task the balancer looks at first is the one it takes.
 */
static void pull(double seconds)
{
	uint64_t deadline = ampkit_now_ns() + (uint64_t)(seconds * 1e9);
	int big[MAX_CPUS], nr_big, cpu, i, r, n = 0;
	cpu_set_t little;
	pid_t tids[3];
	struct worker *w;

	wash_nr_cpus = sysconf(_SC_NPROCESSORS_CONF);
	little_cpus(&little, &nr_big, big);
	for (cpu = 0; cpu < wash_nr_cpus && n < 2; cpu++)
		if (CPU_ISSET(cpu, &little))
			pull_little[n++] = cpu;
	if (n < 2 || !nr_big)
		die("pull needs two little CPUs and a big one", EINVAL);
	set_migration_cost("0");

	for (i = 0; i < 2; i++) {
		w = add_worker("bottleneck", pull_little[0], UINT64_MAX);
		w->hold_ns = 1 * MS;
		w->outside_ns = 200 * US;
		w->mutex = &pull_locks[i];
		w->spin_to_lock = 1;
	}
	add_worker("hog", pull_little[0], UINT64_MAX);
	for (i = 0; i < 4; i++) {
		w = add_worker("waiter", big[i % nr_big], UINT64_MAX);
		w->hold_ns = 50 * US;
		w->outside_ns = 300 * US;
		w->mutex = &pull_locks[i % 2];
	}
	for (i = 0; i < nworkers; i++)
		start_worker(&workers[i], strcmp(workers[i].role, "hog") ? lock_holder : cpu_bound);
	for (i = 0; i < 3; i++)
		tids[i] = worker_tid(&workers[i]);
	/* long enough for the ranking to flag both */
	ampkit_sleep_ns(300 * MS);

	for (r = 0; r < PULL_ROUNDS; r++) {
		struct pull_round *pr = &pull_rounds[r];
		uint64_t allowed;

		uint64_t pinned;

		for (i = 0; i < 3; i++)
			allow_cpus(tids[i], pull_little[0], -1);
		ampkit_sleep_ns(100 * MS);
		/*
		 * A round starts with both flagged where it can (for up to a
		 * second): a flag lapses now and then, when a holder is preempted
		 * outside its lock or a waiter's vCPU stalls holding it, and a
		 * round without both flagged says nothing.
		 */
		pinned = ampkit_now_ns();
		while (!(pr->flagged = both_flagged(tids)) && ampkit_now_ns() - pinned < 1000 * MS)
			ampkit_sleep_ns(10 * MS);
		/*
		 * The bottlenecks first: a balance between the calls could
		 * then take only a bottleneck, which is the lesser harm for a
		 * test of whether one is taken first than failing it.
		 */
		for (i = 0; i < 3; i++)
			allow_cpus(tids[i], pull_little[0], pull_little[1]);
		allowed = ampkit_now_ns();
		pr->first = "none";
		while (ampkit_now_ns() - allowed < 500 * MS) {
			for (i = 0; i < 3 && thread_cpu(tids[i]) != pull_little[1]; i++)
				;
			if (i < 3) {
				pr->first = workers[i].role;
				pr->after_ms = (double)(ampkit_now_ns() - allowed) / 1e6;
				break;
			}
			ampkit_sleep_ns(1 * MS);
		}
		pr->flagged = pr->flagged && both_flagged(tids);
	}
	snapshot_then_stop(deadline);
}

static void pull_rounds_json(struct sbuf *sb)
{
	int r;

	sb_printf(sb, ",\"little\":[%d,%d],\"rounds\":[", pull_little[0], pull_little[1]);
	for (r = 0; r < PULL_ROUNDS; r++) {
		sb_printf(sb, "%s{\"first\":", r ? "," : "");
		sb_json_str(sb, pull_rounds[r].first);
		sb_printf(sb, ",\"flagged\":%s,\"after_ms\":%.1f}",
			  pull_rounds[r].flagged ? "true" : "false", pull_rounds[r].after_ms);
	}
	sb_printf(sb, "]");
}

/* --- strand: an idle big CPU and a thread queued on a little one ---------- */

#define STRAND_ON_NS	(5 * MS)	/* a blinker's run */
#define STRAND_OFF_NS	(10 * MS)	/* and its sleep, its big CPU free */
#define STRAND_SETTLE_NS (300 * MS)	/* before the window opens */
#define STRAND_COST	"1000000000"	/* migration_cost_ns: every task hot */

static struct colab_work strand_work[2];	/* at the window's ends */
static uint64_t strand_window_ns;
static int strand_nr_big;

/* Runs STRAND_ON_NS, sleeps STRAND_OFF_NS, pinned to its big CPU. */
static void *blinker(void *arg)
{
	struct worker *w = arg;

	worker_begin(w);
	while (ampkit_now_ns() < w->deadline) {
		spin(STRAND_ON_NS);
		ampkit_sleep_ns(STRAND_OFF_NS);
		w->rounds++;
	}
	worker_end(w);
	return NULL;
}

/*
 * A big-class blinker pinned to each big CPU, which it leaves idle two
 * thirds of the time, and as many little-class CPU-bound threads as
 * there are CPUs: whenever a blinker sleeps, little-class threads wait on
 * the little CPUs, enough for every big CPU, while its big CPU idles. The
 * fair class's newly idle balance is made to refuse such a thread: every
 * task counts as cache hot (migration_cost_ns 1 s, restored at exit). The window opens
 * once the little-class threads have settled; the counters at its ends
 * (at_release, and the workers' own) and kernel.sched_colab_work's pulls
 * tell how much of the time the blinkers left on the big CPUs the
 * little-class threads took.
 */
static void strand(double seconds)
{
	uint64_t start = ampkit_now_ns(), deadline = start + (uint64_t)(seconds * 1e9);
	int big[MAX_CPUS], nr_little, i;
	cpu_set_t little;
	struct worker *w;

	if (seconds * 1e9 < 2.0 * STRAND_SETTLE_NS)
		die("strand needs at least 0.6 s", EINVAL);
	wash_nr_cpus = sysconf(_SC_NPROCESSORS_CONF);
	little_cpus(&little, &strand_nr_big, big);
	nr_little = CPU_COUNT(&little);
	if (!strand_nr_big || !nr_little)
		die("strand needs big and little CPUs", EINVAL);
	set_migration_cost(STRAND_COST);
	/* the balancer's per-task counters: its refusals of hot tasks */
	write_file("/proc/sys/kernel/sched_schedstats", "1");

	for (i = 0; i < strand_nr_big; i++) {
		w = add_worker("blinker", big[i], UINT64_MAX);
		w->speedup = 3072;
		start_worker(w, blinker);
	}
	for (i = 0; i < strand_nr_big; i++)
		worker_tid(&workers[i]);
	/* created with the speedup set: placed by class from the start */
	set_speedup(1126);
	for (i = 0; i < nr_little + strand_nr_big; i++)
		start_worker(add_worker("little", -1, UINT64_MAX), cpu_bound);
	set_speedup(0);
	for (i = 0; i < nworkers; i++)
		worker_tid(&workers[i]);

	sleep_until(start + STRAND_SETTLE_NS);
	read_colab_work(&strand_work[0]);
	strand_window_ns = ampkit_now_ns();
	for (i = 0; i < nworkers; i++) {
		if (read_thread_stats(workers[i].tid, &workers[i].at_release))
			die("reading /proc/self/task/<tid>/sched", errno ? errno : ENOENT);
		workers[i].released = 1;
	}
	snapshot_then_stop(deadline);
	strand_window_ns = ampkit_now_ns() - strand_window_ns;
	read_colab_work(&strand_work[1]);
}

static void strand_json(struct sbuf *sb)
{
	sb_printf(sb, ",\"nr_big\":%d,\"window_ns\":%llu,\"pulls\":%lld", strand_nr_big,
		  (unsigned long long)strand_window_ns,
		  strand_work[1].pulls < 0 ? -1 : strand_work[1].pulls - strand_work[0].pulls);
}

/* --- stress ---------------------------------------------------------------- */

static atomic_int stop, stop_flips;
static atomic_ullong flips, forks, messages, handoffs;

/*
 * The switches a stress run makes at the least by default: on a host busy
 * enough that the guest's flipper gets few of its 10 ms turns, the run
 * goes on past SECONDS until it has made them, rather than hoping for them.
 */
#define STRESS_MIN_FLIPS 1000

/* Every policy the kernel lists, in turn. */
static void *flipper(void *arg)
{
	struct timespec ten_ms = { 0, 10 * 1000 * 1000 };
	char *available = read_text(AMP_AVAILABLE_FILE);
	char *names[8], *save = NULL, *name;
	unsigned int i = 0, nr = 0;

	(void)arg;
	if (!available)
		die("reading " AMP_AVAILABLE_FILE, errno ? errno : ENOENT);
	for (name = strtok_r(available, " \n", &save); name && nr < 8;
	     name = strtok_r(NULL, " \n", &save))
		names[nr++] = name;
	if (nr < 2)
		die("fewer than two policies to flip between", EINVAL);
	while (!atomic_load(&stop_flips)) {
		switch_policy(names[i++ % nr]);
		atomic_fetch_add(&flips, 1);
		nanosleep(&ten_ms, NULL);
	}
	free(available);
	return NULL;
}

/*
 * Threads of user processes (kernel threads have no command line) whose
 * allowed CPUs are not all of them: after a switch to cfs, any such thread
 * is a mask a policy left behind.  Appends their tids to @sb.
 */
static int restricted_user_threads(struct sbuf *sb)
{
	long ncpus = sysconf(_SC_NPROCESSORS_CONF);
	struct dirent *proc, *task;
	DIR *procs, *tasks;
	char path[64];
	int found = 0;

	procs = opendir("/proc");
	if (!procs)
		die("opendir /proc", errno);
	while ((proc = readdir(procs))) {
		int pid = atoi(proc->d_name);
		char *cmdline;
		int empty;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
		cmdline = read_text(path);
		empty = !cmdline || !cmdline[0];
		free(cmdline);
		if (empty)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task", pid);
		tasks = opendir(path);
		if (!tasks)
			continue;	/* it exited */
		while ((task = readdir(tasks))) {
			cpu_set_t set;
			pid_t tid = (pid_t)atoi(task->d_name);

			if (tid <= 0 || sched_getaffinity(tid, sizeof(set), &set))
				continue;
			if (CPU_COUNT(&set) < ncpus) {
				sb_printf(sb, "%s%d", found ? "," : "", (int)tid);
				found++;
			}
		}
		closedir(tasks);
	}
	closedir(procs);
	return found;
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

static void stress(double seconds, unsigned long long min_flips, struct sbuf *sb)
{
	pthread_t flip, fork_thread, echo_thread, futex_threads[4];
	uint64_t start = ampkit_now_ns(), now;
	uint64_t deadline = start + (uint64_t)(seconds * 1e9);
	uint64_t last_resort = start + (uint64_t)(5 * seconds * 1e9);
	struct wash_stats after_exit;
	struct sbuf restricted;
	int i, nr_restricted;
	uint64_t off_ns;
	char c = 1;

	if (pipe(pipes[0]) || pipe(pipes[1]))
		die("pipe", errno);
	pthread_create(&flip, NULL, flipper, NULL);
	pthread_create(&fork_thread, NULL, forker, NULL);
	pthread_create(&echo_thread, NULL, echo, NULL);
	for (i = 0; i < 4; i++)
		pthread_create(&futex_threads[i], NULL, futex_load, (void *)(intptr_t)i);
	while ((now = ampkit_now_ns()) < deadline ||
	       (atomic_load(&flips) < min_flips && now < last_resort)) {
		if (write(pipes[0][1], &c, 1) != 1 || read(pipes[1][0], &c, 1) != 1)
			die("pipe round trip", errno);
		atomic_fetch_add(&messages, 1);
	}
	/*
	 * Under load still, back to cfs: no policy may leave an allowed-CPU
	 * mask behind on any user thread.
	 */
	atomic_store(&stop_flips, 1);
	pthread_join(flip, NULL);
	switch_policy("cfs");
	sb_init(&restricted);
	nr_restricted = restricted_user_threads(&restricted);
	atomic_store(&stop, 1);
	c = 0;
	if (write(pipes[0][1], &c, 1) != 1)
		die("pipe", errno);
	pthread_mutex_lock(&lock);
	pthread_cond_broadcast(&turn_cond);
	pthread_mutex_unlock(&lock);
	pthread_join(fork_thread, NULL);
	pthread_join(echo_thread, NULL);
	for (i = 0; i < 4; i++)
		pthread_join(futex_threads[i], NULL);
	/* every thread WASH bound has exited or returned to user space */
	off_ns = wait_fork_copy_off(&after_exit, 2 * SEC);
	sb_printf(sb,
		  "{\"scenario\":\"stress\",\"flips\":%llu,\"forks\":%llu,\"messages\":%llu,"
		  "\"handoffs\":%llu,\"restricted_after_cfs\":[%s],\"nr_restricted\":%d,"
		  "\"wash_quanta\":%llu,\"wash_binds\":%llu,\"wash_fork_copy_after_exit\":%d,"
		  "\"wash_fences_after_exit\":%d,\"fork_copy_off_ms\":%.1f,"
		  "\"seconds\":%.1f}\n",
		  (unsigned long long)flips, (unsigned long long)forks,
		  (unsigned long long)messages, (unsigned long long)handoffs,
		  restricted.data, nr_restricted, after_exit.quanta, after_exit.binds,
		  after_exit.fork_copy, after_exit.fences, (double)off_ns / 1e6,
		  (double)(now - start) / 1e9);
	sb_free(&restricted);
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

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f))
		die(path, errno);
}

/*
 * Puts a policy of the overhead scenario in force: a policy name, with the
 * per-task counters off ("cfs" is then the unpatched fair class but for
 * patched-out branches), or NAME+stats with them on. On a kernel without
 * the AMP policies only "cfs" exists, and nothing is written.
 */
static void overhead_policy(const char *token)
{
	char name[32];
	const char *plus = strchr(token, '+');
	int stats = plus && !strcmp(plus, "+stats"), err;

	if (plus && !stats)
		die(token, EINVAL);
	snprintf(name, sizeof(name), "%.*s", (int)(plus ? plus - token : (long)strlen(token)),
		 token);
	if (access(AMP_POLICY_FILE, F_OK)) {
		if (strcmp(name, "cfs") || stats)
			die("this kernel has only cfs, without counters", EINVAL);
		return;
	}
	switch_policy(name);
	err = set_amp_stats(stats);
	if (err)
		die("setting " AMP_STATS_FILE, err);
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
	int nr = 0, i, j, k;
	long b;

	for (name = strtok_r(policies, ",", &save); name && nr < 8;
	     name = strtok_r(NULL, ",", &save))
		names[nr++] = name;
	sb_printf(sb, "{\"scenario\":\"overhead\",\"rounds\":%ld,\"samples\":[", rounds);
	for (b = 0; b < blocks; b++) {
		for (k = 0; k < 2; k++) {
			for (i = 0; i < nr; i++) {
				j = b % 2 ? nr - 1 - i : i;
				overhead_policy(names[j]);
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
	sb_printf(sb, ",\"after_clear\":%d",
		  prctl(PR_SCHED_AMP, PR_SCHED_AMP_GET_SPEEDUP, 0UL, 0UL, 0UL));
	/* The energy per instruction alike: the runner's, then what is refused */
	sb_printf(sb, ",\"epi_get\":%d,\"epi_errno\":{", amp_get_epi_big(0));
	sb_printf(sb, "\"too_large\":%d,",
		  prctl_errno(PR_SCHED_AMP_SET_EPI_BIG, 0, 1000001, 0));
	sb_printf(sb, "\"arg5\":%d,", prctl_errno(PR_SCHED_AMP_SET_EPI_BIG, 0, 450, 1));
	sb_printf(sb, "\"get_with_value\":%d,",
		  prctl_errno(PR_SCHED_AMP_GET_EPI_BIG, 0, 450, 0));
	sb_printf(sb, "\"no_such_thread\":%d,",
		  prctl_errno(PR_SCHED_AMP_SET_EPI_BIG, 4000000, 450, 0));
	sb_printf(sb, "\"lowest\":%d,", prctl_errno(PR_SCHED_AMP_SET_EPI_BIG, 0, 1, 0));
	sb_printf(sb, "\"highest\":%d,",
		  prctl_errno(PR_SCHED_AMP_SET_EPI_BIG, 0, 1000000, 0));
	sb_printf(sb, "\"clear\":%d}", prctl_errno(PR_SCHED_AMP_SET_EPI_BIG, 0, 0, 0));
	sb_printf(sb, ",\"epi_after_clear\":%d}\n", amp_get_epi_big(0));
}

/* --- trace ------------------------------------------------------------------- */

#define TRACEFS "/sys/kernel/tracing"

static void trace(double seconds, struct sbuf *sb)
{
	static const char *const kinds[] = {
		"class=big", "class=little", "class=either", "sched_colab_bottleneck:",
		"sched_colab_move:",
	};
	enum { NKINDS = sizeof(kinds) / sizeof(kinds[0]) };
	long counts[NKINDS] = { 0 };
	char *text, *line, *save;
	int k, listed = 0;

	if (access(TRACEFS "/events", F_OK) &&
	    mount("tracefs", TRACEFS, "tracefs", 0, NULL))
		die("mounting tracefs", errno);
	write_file(TRACEFS "/buffer_size_kb", "4096");
	write_file(TRACEFS "/trace", "");
	write_file(TRACEFS "/events/sched/sched_colab_place/enable", "1");
	write_file(TRACEFS "/events/sched/sched_colab_bottleneck/enable", "1");
	write_file(TRACEFS "/events/sched/sched_colab_move/enable", "1");
	write_file(TRACEFS "/tracing_on", "1");
	mutex_bottleneck(seconds / 2);
	nworkers = 0;
	placement(seconds / 2, (const int[2]){ 2, 2 });
	write_file(TRACEFS "/tracing_on", "0");

	text = read_text(TRACEFS "/trace");
	if (!text)
		die("reading " TRACEFS "/trace", errno);
	/* the first line of each kind, and how many there were */
	sb_printf(sb, "{\"scenario\":\"trace\",\"sample\":{");
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		for (k = 0; k < NKINDS; k++) {
			if (!strstr(line, kinds[k]) ||
			    (k < 3 && !strstr(line, "sched_colab_place:")))
				continue;
			if (!counts[k]++) {
				sb_printf(sb, "%s", listed++ ? "," : "");
				sb_json_str(sb, kinds[k]);
				sb_printf(sb, ":");
				sb_json_str(sb, line);
			}
		}
	}
	free(text);
	sb_printf(sb, "},\"counts\":{");
	for (k = 0; k < NKINDS; k++) {
		sb_printf(sb, "%s", k ? "," : "");
		sb_json_str(sb, kinds[k]);
		sb_printf(sb, ":%ld", counts[k]);
	}
	sb_printf(sb, "}}\n");
}

/* --- futex accounting: stale stamps and every kind of release ---------------- */

static long futex_op(_Atomic uint32_t *uaddr, int op, uint32_t val, uintptr_t val2,
		     _Atomic uint32_t *uaddr2, uint32_t val3)
{
	return syscall(SYS_futex, uaddr, op, val, (void *)val2, uaddr2, val3);
}

/* Waits on word while it reads 0 (a FUTEX_WAIT returns early on any wake). */
static void futex_wait_zero(_Atomic uint32_t *word)
{
	while (!atomic_load(word))
		futex_op(word, FUTEX_WAIT_PRIVATE, 0, 0, NULL, 0);
}

/*
 * kernel.sched_colab_stats as the runner left it, for restore_amp_stats();
 * exits on a kernel without it.
 */
static char *saved_amp_stats(void)
{
	char *was = read_text(AMP_STATS_FILE);

	if (!was)
		die("reading " AMP_STATS_FILE " (a kernel without CONFIG_SCHED_COLAB?)", ENOENT);
	return was;
}

/* Sets kernel.sched_colab_stats to @on, or exits saying why not. */
static void put_amp_stats(int on)
{
	int err = set_amp_stats(on);

	if (err)
		die("setting " AMP_STATS_FILE, err);
}

/* Puts back what saved_amp_stats() read, and frees it. */
static void restore_amp_stats(char *was)
{
	int on = !strcmp(was, "1");

	free(was);
	put_amp_stats(on);
}

/* --- futex-scan: what the accounting adds to a release's bucket lock ------- */

static _Atomic uint32_t scan_word;
static _Atomic int scan_done;

/* Waits on scan_word with bitset 1 until the scenario ends. */
static void *scan_waiter(void *arg)
{
	struct worker *w = arg;

	worker_begin(w);
	while (!atomic_load(&scan_done))
		futex_op(&scan_word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, 0, 0, NULL, 1);
	return NULL;
}

/* Whether thread @tid sleeps ('S' in /proc/self/task/<tid>/stat). */
static int thread_sleeps(pid_t tid)
{
	char *text;
	const char *fields = thread_stat(tid, &text);
	int sleeps;

	if (!text)
		die("reading /proc/self/task/<tid>/stat", errno ? errno : ENOENT);
	sleeps = fields && fields[0] == 'S';
	free(text);
	return sleeps;
}

/* Polls until thread @tid sleeps. */
static void wait_until_asleep(pid_t tid)
{
	while (!thread_sleeps(tid))
		ampkit_sleep_ns(1 * MS);
}

/*
 * ns per FUTEX_WAKE_BITSET with bitset 2 on scan_word: it wakes none of the
 * waiters (bitset 1), but takes the bucket lock and walks them; with the
 * accounting on, the release hook walks them once more.
 */
static double scan_ns_per_call(long rounds)
{
	uint64_t start = ampkit_now_ns();
	long i;

	for (i = 0; i < rounds; i++)
		futex_op(&scan_word, FUTEX_WAKE_BITSET | FUTEX_PRIVATE_FLAG, 1, 0, NULL, 2);
	return (double)(ampkit_now_ns() - start) / (double)rounds;
}

/*
 * WAITERS threads wait on one futex; then, BLOCKS times, ROUNDS releases
 * that wake none of them with the per-task counters (and the futex
 * accounting) off and on in turn, under the policy in force.
 */
static void futex_scan(int waiters, long rounds, long blocks, struct sbuf *sb)
{
	char *was = saved_amp_stats();
	long b;
	int i, k, on;

	if (waiters < 1 || waiters > MAX_THREADS || rounds < 1 || blocks < 1) {
		fprintf(stderr, "ampkit-schedtest: futex-scan: WAITERS 1 to %d, ROUNDS and "
			"BLOCKS at least 1\n", MAX_THREADS);
		exit(2);
	}
	for (i = 0; i < waiters; i++)
		add_worker("waiter", -1, 0);
	start_workers(scan_waiter);
	/* the premise: every waiter is queued on the futex */
	for (i = 0; i < waiters; i++)
		wait_until_asleep(worker_tid(&workers[i]));
	sb_printf(sb, "{\"scenario\":\"futex-scan\",\"waiters\":%d,\"rounds\":%ld,"
		  "\"samples\":[", waiters, rounds);
	for (b = 0; b < blocks; b++) {
		for (k = 0; k < 2; k++) {
			on = b % 2 ? !k : k;
			put_amp_stats(on);
			sb_printf(sb, "%s{\"accounting\":%d,\"ns_per_release\":%.1f}",
				  b || k ? "," : "", on, scan_ns_per_call(rounds));
		}
	}
	sb_printf(sb, "]}\n");
	atomic_store(&scan_done, 1);
	atomic_store(&scan_word, 1);
	futex_op(&scan_word, FUTEX_WAKE_BITSET | FUTEX_PRIVATE_FLAG, INT32_MAX, 0, NULL,
		 FUTEX_BITSET_MATCH_ANY);
	join_workers();
	/* as the runner left it */
	restore_amp_stats(was);
}

static int64_t caused_ns(pid_t tid)
{
	struct thread_stats st;

	if (read_thread_stats(tid, &st))
		die("reading /proc/self/task/<tid>/sched", errno ? errno : ENOENT);
	return st.futex_caused_ns;
}

static struct {
	_Atomic uint32_t first, second, go;
} flip;

static void *flip_waiter(void *arg)
{
	(void)arg;
	futex_wait_zero(&flip.first);
	while (!atomic_load(&flip.go))
		;
	futex_wait_zero(&flip.second);
	return NULL;
}

/*
 * One thread waits on a futex under colab and is woken; it waits again
 * under cfs, whose accounting is off, and colab comes back while it is
 * queued.  The release that ends the second wait may charge nothing from
 * the stamps of the first: the second wait began unstamped.  The stale
 * window is how much an old stamp would charge.
 */
static void futex_flip(struct sbuf *sb)
{
	pid_t self = gettid_();
	int64_t before, after;
	uint64_t first_release;
	struct thread_stats st;
	pthread_t t;
	int err;

	/* Measurement under every policy would keep the accounting on. */
	err = set_amp_stats(0);
	if (err && err != ENOENT)
		die("setting " AMP_STATS_FILE, err);
	switch_policy("colab");
	if (pthread_create(&t, NULL, flip_waiter, NULL))
		die("pthread_create", errno);
	ampkit_sleep_ns(20 * MS);
	atomic_store(&flip.first, 1);
	futex_op(&flip.first, FUTEX_WAKE_PRIVATE, 1, 0, NULL, 0);
	first_release = ampkit_now_ns();

	switch_policy("cfs");
	atomic_store(&flip.go, 1);
	ampkit_sleep_ns(300 * MS);
	switch_policy("colab");
	before = caused_ns(self);
	ampkit_sleep_ns(5 * MS);
	atomic_store(&flip.second, 1);
	futex_op(&flip.second, FUTEX_WAKE_PRIVATE, 1, 0, NULL, 0);
	after = caused_ns(self);
	if (pthread_join(t, NULL))
		die("pthread_join", errno);
	/* Several ranking periods, for a flag a stale charge would raise. */
	ampkit_sleep_ns(100 * MS);
	if (read_thread_stats(self, &st))
		die("reading /proc/self/task/<tid>/sched", errno ? errno : ENOENT);
	sb_printf(sb,
		  "{\"scenario\":\"futex-flip\",\"charged_ns\":%lld,\"stale_window_ns\":%llu,"
		  "\"releaser_flagged\":%lld}\n",
		  (long long)(after - before), (unsigned long long)(ampkit_now_ns() - first_release),
		  (long long)st.bottleneck);
}

static _Atomic uint32_t stats_flip_word;
static _Atomic pid_t stats_flip_tid;

static void *stats_flip_waiter(void *arg)
{
	(void)arg;
	atomic_store(&stats_flip_tid, gettid_());
	futex_wait_zero(&stats_flip_word);
	return NULL;
}

/*
 * With kernel.sched_colab_stats on, waiting is counted under cfs too.  A
 * thread waits 300 ms under cfs and is released; then colab starts.  Its
 * first rankings must count only waiting caused since it started, or the
 * releaser is flagged for what it caused while colab was off.
 */
static void futex_flip_stats(struct sbuf *sb)
{
	char *was = saved_amp_stats();
	pid_t self = gettid_();
	int64_t before, caused;
	struct thread_stats st;
	pthread_t t;

	put_amp_stats(1);
	switch_policy("cfs");
	before = caused_ns(self);
	if (pthread_create(&t, NULL, stats_flip_waiter, NULL))
		die("pthread_create", errno);
	/*
	 * 300 ms from when it is asleep on the word, not from its creation: a
	 * busy host may take a while to start it, and the test needs most of
	 * the 300 ms charged.
	 */
	while (!atomic_load(&stats_flip_tid))
		ampkit_sleep_ns(1 * MS);
	wait_until_asleep(atomic_load(&stats_flip_tid));
	ampkit_sleep_ns(300 * MS);
	atomic_store(&stats_flip_word, 1);
	futex_op(&stats_flip_word, FUTEX_WAKE_PRIVATE, 1, 0, NULL, 0);
	if (pthread_join(t, NULL))
		die("pthread_join", errno);
	caused = caused_ns(self) - before;

	switch_policy("colab");
	/* Several ranking periods: the first ranks right at the start. */
	ampkit_sleep_ns(50 * MS);
	if (read_thread_stats(self, &st))
		die("reading /proc/self/task/<tid>/sched", errno ? errno : ENOENT);
	switch_policy("cfs");
	restore_amp_stats(was);
	sb_printf(sb,
		  "{\"scenario\":\"futex-flip-stats\",\"caused_under_cfs_ns\":%lld,"
		  "\"releaser_flagged\":%lld}\n",
		  (long long)caused, (long long)st.bottleneck);
}

static struct {
	_Atomic uint32_t a, b, queued, pi;
} rel;

/*
 * Takes the PI lock (in the kernel if it is held: FUTEX_LOCK_PI queues
 * the thread and marks the word FUTEX_WAITERS), then hands it on.
 */
static void *pi_waiter(void *arg)
{
	uint32_t me = (uint32_t)gettid_(), expected = 0;

	(void)arg;
	atomic_fetch_add(&rel.queued, 1);
	if (!atomic_compare_exchange_strong(&rel.pi, &expected, me))
		futex_op(&rel.pi, FUTEX_LOCK_PI_PRIVATE, 0, 0, NULL, 0);
	expected = me;
	if (!atomic_compare_exchange_strong(&rel.pi, &expected, 0))
		futex_op(&rel.pi, FUTEX_UNLOCK_PI_PRIVATE, 0, 0, NULL, 0);
	return NULL;
}

static void *release_waiter(void *arg)
{
	(void)arg;
	atomic_fetch_add(&rel.queued, 1);
	/* One wait: after a requeue the thread is queued on b, not a. */
	futex_op(&rel.a, FUTEX_WAIT_PRIVATE, 0, 0, NULL, 0);
	return NULL;
}

/*
 * Two threads wait on a futex; the main thread releases it with one kind
 * of release that wakes only one of them.  Every kind ends a stretch for
 * both, so the main thread is charged with about twice the time they
 * waited, whichever kind it used: waited_ns is that time as this thread
 * measured it, from when both had queued to the release (a sleep of 100
 * ms that a loaded host can stretch).
 */
static void futex_release_kinds(struct sbuf *sb)
{
	static const char *const kinds[] = { "wake", "wake-op", "requeue", "pi-unlock" };
	const uint64_t nap = 100 * MS;
	uint64_t waited[sizeof(kinds) / sizeof(kinds[0])];
	pid_t self = gettid_();
	size_t k;

	switch_policy("colab");
	sb_printf(sb, "{\"scenario\":\"futex-release-kinds\",\"charged_ns\":{");
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		int64_t before, after;
		uint64_t queued;
		pthread_t t[2];
		int i;

		atomic_store(&rel.a, 0);
		atomic_store(&rel.b, 0);
		atomic_store(&rel.queued, 0);
		/* held by this thread, for the PI kind's waiters to queue on */
		atomic_store(&rel.pi, (uint32_t)self);
		for (i = 0; i < 2; i++)
			if (pthread_create(&t[i], NULL, k == 3 ? pi_waiter : release_waiter, NULL))
				die("pthread_create", errno);
		while (atomic_load(&rel.queued) < 2)
			ampkit_sleep_ns(1 * MS);
		queued = ampkit_now_ns();
		ampkit_sleep_ns(nap);
		before = caused_ns(self);
		waited[k] = ampkit_now_ns() - queued;
		if (k == 0)
			futex_op(&rel.a, FUTEX_WAKE_PRIVATE, 1, 0, NULL, 0);
		else if (k == 1)	/* b = 0 if b == 1: false, so b wakes nobody */
			futex_op(&rel.a, FUTEX_WAKE_OP_PRIVATE, 1, 0, &rel.b,
				 FUTEX_OP(FUTEX_OP_SET, 0, FUTEX_OP_CMP_EQ, 1));
		else if (k == 2)	/* wake one, move the other to b */
			futex_op(&rel.a, FUTEX_CMP_REQUEUE_PRIVATE, 1, 1, &rel.b, 0);
		else			/* the lock to the top waiter; the other stays queued */
			futex_op(&rel.pi, FUTEX_UNLOCK_PI_PRIVATE, 0, 0, NULL, 0);
		after = caused_ns(self);
		sb_printf(sb, "%s\"%s\":%lld", k ? "," : "", kinds[k], (long long)(after - before));
		/* The other waiter, wherever it is queued now. */
		for (i = 0; i < 2; i++) {
			while (pthread_tryjoin_np(t[i], NULL) == EBUSY) {
				futex_op(&rel.a, FUTEX_WAKE_PRIVATE, 1, 0, NULL, 0);
				futex_op(&rel.b, FUTEX_WAKE_PRIVATE, 1, 0, NULL, 0);
				ampkit_sleep_ns(1 * MS);
			}
		}
	}
	sb_printf(sb, "},\"waited_ns\":{");
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		sb_printf(sb, "%s\"%s\":%llu", k ? "," : "", kinds[k], (unsigned long long)waited[k]);
	sb_printf(sb, "}}\n");
}

/* --- counters: which of COLAB's counters a policy keeps ------------------ */

static _Atomic uint32_t counted_word, counted_go, counted_done, counted_computed;
static _Atomic pid_t counted_tid, releaser_tid;
static struct thread_stats counted_waiter;
static uint64_t counted_asleep, counted_released;

static void *counted_waiter_fn(void *arg)
{
	(void)arg;
	atomic_store(&counted_tid, gettid_());
	futex_wait_zero(&counted_word);
	/* its own counters, while its /proc entry is still there */
	if (read_thread_stats(gettid_(), &counted_waiter))
		die("reading /proc/self/task/<tid>/sched", errno ? errno : ENOENT);
	return NULL;
}

/*
 * Computes for 100 ms once told to, then releases the waiter, and sleeps
 * until the main thread has read its counters: read while it sleeps, its
 * run time and counters are those of its last update, the same moment.
 */
static void *counted_releaser_fn(void *arg)
{
	uint64_t start;

	(void)arg;
	atomic_store(&releaser_tid, gettid_());
	futex_wait_zero(&counted_go);
	start = ampkit_now_ns();
	while (ampkit_now_ns() - start < 100 * MS)
		;
	/* before the release: what delays this thread after it is not waiting */
	counted_released = ampkit_now_ns();
	atomic_store(&counted_word, 1);
	futex_op(&counted_word, FUTEX_WAKE_PRIVATE, 1, 0, NULL, 0);
	atomic_store(&counted_computed, 1);
	futex_wait_zero(&counted_done);
	return NULL;
}

/*
 * Thread @tid's counters with its run time as the scheduler summed it
 * (se.sum_exec_runtime), from one read of its sched file: the same moment
 * for both.
 */
static void read_run_times(pid_t tid, struct thread_stats *st)
{
	if (read_thread_stats(tid, st))
		die("reading /proc/self/task/<tid>/sched", errno ? errno : ENOENT);
	if (st->sum_exec_ns < 0)
		die("reading se.sum_exec_runtime from /proc/self/task/<tid>/sched", ENOENT);
}

/* Waits for @flag to be set, then for thread @tid to sleep. */
static void wait_asleep_after(_Atomic uint32_t *flag, pid_t tid)
{
	while (!atomic_load(flag))
		ampkit_sleep_ns(1 * MS);
	wait_until_asleep(tid);
}

/*
 * With kernel.sched_colab_stats off, under @policy: a thread waits 100 ms
 * on a futex while its releaser computes, then the releaser releases it.
 * What the waiter's blocked and the releaser's caused counters took of
 * that wait, and what the run-time counters took of the releaser's run
 * time (against se.sum_exec_runtime, both read while it sleeps): the
 * counters and the futex accounting a policy keeps on, read from their
 * effect.  Then, back under cfs, whether the policy's stop gave the
 * run-time counters back: the main thread's must not grow while it
 * computes 20 ms.
 */
static void counters(const char *policy, struct sbuf *sb)
{
	char *was = saved_amp_stats();
	struct thread_stats before, after, cfs_before, cfs_after;
	pid_t self = gettid_(), releaser;
	uint64_t start;
	pthread_t w, r;

	put_amp_stats(0);
	switch_policy(policy);
	if (pthread_create(&w, NULL, counted_waiter_fn, NULL) ||
	    pthread_create(&r, NULL, counted_releaser_fn, NULL))
		die("pthread_create", errno);
	while (!atomic_load(&counted_tid) || !atomic_load(&releaser_tid))
		ampkit_sleep_ns(1 * MS);
	releaser = atomic_load(&releaser_tid);
	wait_until_asleep(atomic_load(&counted_tid));
	wait_until_asleep(releaser);
	read_run_times(releaser, &before);
	counted_asleep = ampkit_now_ns();
	atomic_store(&counted_go, 1);
	futex_op(&counted_go, FUTEX_WAKE_PRIVATE, 1, 0, NULL, 0);
	wait_asleep_after(&counted_computed, releaser);
	read_run_times(releaser, &after);
	atomic_store(&counted_done, 1);
	futex_op(&counted_done, FUTEX_WAKE_PRIVATE, 1, 0, NULL, 0);
	if (pthread_join(w, NULL) || pthread_join(r, NULL))
		die("pthread_join", errno);

	/* the policy's stop gives back what its start took */
	switch_policy("cfs");
	read_run_times(self, &cfs_before);
	start = ampkit_now_ns();
	while (ampkit_now_ns() - start < 20 * MS)
		;
	read_run_times(self, &cfs_after);
	restore_amp_stats(was);
	sb_printf(sb, "{\"scenario\":\"counters\",\"policy\":");
	sb_json_str(sb, policy);
	sb_printf(sb,
		  ",\"waited_ns\":%llu,\"blocked_ns\":%lld,\"caused_ns\":%lld,"
		  "\"counted_run_ns\":%lld,\"run_ns\":%lld,\"counted_after_stop_ns\":%lld}\n",
		  (unsigned long long)(counted_released - counted_asleep),
		  (long long)counted_waiter.futex_blocked_ns,
		  (long long)(after.futex_caused_ns - before.futex_caused_ns),
		  (long long)(after.big_ns + after.little_ns - before.big_ns - before.little_ns),
		  (long long)(after.sum_exec_ns - before.sum_exec_ns),
		  (long long)(cfs_after.big_ns + cfs_after.little_ns - cfs_before.big_ns -
			      cfs_before.little_ns));
}

/* --- main -------------------------------------------------------------------- */

static int usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-t N] [-n N] SCENARIO ARGS...\n"
		"  mutex-bottleneck SECONDS | condvar-pipeline SECONDS | exit-join SECONDS\n"
		"  placement SECONDS | crowded SECONDS | evict SECONDS\n"
		"  vscale SECONDS CPU | bias SECONDS CPU [NICE [spin]] | pull SECONDS\n"
		"  strand SECONDS | stress SECONDS [FLIPS]\n"
		"  wash-few SECONDS | wash-scalable SECONDS | wash-lock SECONDS | wash-own SECONDS\n"
		"  wash-fence SECONDS | wash-cpuset SECONDS | wash-hotplug SECONDS |\n"
		"  pin-hotplug SECONDS | timescale SECONDS\n"
		"  wash-overhead SECONDS THREADS | colab-overhead SECONDS THREADS\n"
		"  speedup | trace SECONDS | pipe-pingpong ROUNDS | mutex-pingpong ROUNDS\n"
		"  overhead ROUNDS BLOCKS POLICY,POLICY... | futex-scan WAITERS ROUNDS BLOCKS\n"
		"  futex-flip | futex-flip-stats | futex-release-kinds | counters POLICY\n",
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
	if (argc == 1 && (!strcmp(scenario, "speedup") || !strcmp(scenario, "futex-flip") ||
			  !strcmp(scenario, "futex-flip-stats") ||
			  !strcmp(scenario, "futex-release-kinds"))) {
		if (!strcmp(scenario, "speedup"))
			speedup(&sb);
		else if (!strcmp(scenario, "futex-flip"))
			futex_flip(&sb);
		else if (!strcmp(scenario, "futex-flip-stats"))
			futex_flip_stats(&sb);
		else
			futex_release_kinds(&sb);
		fputs(sb.data, stdout);
		return 0;
	}
	if (argc == 2 && !strcmp(scenario, "counters")) {
		counters(argv[1], &sb);
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
	} else if (argc == 2 && !strcmp(scenario, "exit-join") && seconds >= 0.5) {
		exit_join_run(seconds, &sb);
	} else if (argc == 2 && !strcmp(scenario, "placement")) {
		placement(seconds, (const int[2]){ 2, 2 });
		print_workers(&sb, scenario);
	} else if (argc == 2 && !strcmp(scenario, "crowded")) {
		/* the balancer's per-task counters (affinity failures) */
		write_file("/proc/sys/kernel/sched_schedstats", "1");
		/* the little ones first: the extra big ones queue on big CPUs */
		placement(seconds, (const int[2]){ 4, -2 });
		print_workers(&sb, scenario);
	} else if (argc == 2 && !strcmp(scenario, "evict")) {
		evict(seconds);
		print_workers(&sb, scenario);
	} else if (argc == 3 && !strcmp(scenario, "vscale")) {
		vscale(seconds, atoi(argv[2]));
		print_workers(&sb, scenario);
	} else if ((argc == 3 || argc == 4 || (argc == 5 && !strcmp(argv[4], "spin"))) &&
		   !strcmp(scenario, "bias")) {
		bias(seconds, atoi(argv[2]), argc >= 4 ? atoi(argv[3]) : 0, argc == 5);
		print_workers_open(&sb, scenario);
		flag_samples_json(&sb, "flag", &bias_flag);
		sb_printf(&sb, "}\n");
	} else if (argc == 2 && !strcmp(scenario, "pull")) {
		pull(seconds);
		print_workers_open(&sb, scenario);
		pull_rounds_json(&sb);
		sb_printf(&sb, "}\n");
	} else if (argc == 2 && !strcmp(scenario, "strand")) {
		strand(seconds);
		print_workers_open(&sb, scenario);
		strand_json(&sb);
		sb_printf(&sb, "}\n");
	} else if (argc == 2 && (!strcmp(scenario, "wash-few") ||
				 !strcmp(scenario, "wash-scalable") ||
				 !strcmp(scenario, "wash-lock"))) {
		wash_scenario(scenario, seconds);
		print_workers(&sb, scenario);
	} else if (argc == 3 && !strcmp(scenario, "colab-overhead")) {
		colab_overhead(seconds, atoi(argv[2]), &sb);
	} else if (argc == 2 && !strcmp(scenario, "wash-own")) {
		wash_own(seconds);
		print_workers(&sb, scenario);
	} else if (argc == 2 && !strcmp(scenario, "wash-fence")) {
		wash_fence(seconds, &sb);
	} else if (argc == 2 && !strcmp(scenario, "wash-cpuset")) {
		wash_cpuset(seconds, &sb);
	} else if (argc == 2 && !strcmp(scenario, "wash-hotplug")) {
		wash_hotplug(scenario, seconds, &sb);
	} else if (argc == 2 && !strcmp(scenario, "pin-hotplug")) {
		owned_pin_self = 1;
		wash_hotplug(scenario, seconds, &sb);
	} else if (argc == 2 && !strcmp(scenario, "timescale")) {
		timescale(seconds, &sb);
	} else if (argc == 3 && !strcmp(scenario, "wash-overhead")) {
		wash_overhead(seconds, atoi(argv[2]), &sb);
	} else if ((argc == 2 || argc == 3) && !strcmp(scenario, "stress")) {
		stress(seconds, argc == 3 ? strtoull(argv[2], NULL, 10) : STRESS_MIN_FLIPS,
		       &sb);
	} else if (argc == 2 && !strcmp(scenario, "pipe-pingpong")) {
		sb_printf(&sb, "{\"scenario\":\"%s\",\"rounds\":%ld,\"ns_per_round\":%.1f}\n",
			  scenario, (long)seconds, pipe_pingpong((long)seconds));
	} else if (argc == 2 && !strcmp(scenario, "mutex-pingpong")) {
		sb_printf(&sb, "{\"scenario\":\"%s\",\"rounds\":%ld,\"ns_per_round\":%.1f}\n",
			  scenario, (long)seconds, mutex_pingpong((long)seconds));
	} else if (argc == 4 && !strcmp(scenario, "futex-scan")) {
		futex_scan((int)seconds, atol(argv[2]), atol(argv[3]), &sb);
	} else if (argc == 4 && !strcmp(scenario, "overhead") && atol(argv[2]) > 0) {
		overhead((long)seconds, atol(argv[2]), argv[3], &sb);
	} else {
		return usage(prog);
	}
	fputs(sb.data, stdout);
	sb_free(&sb);
	return 0;
}
