/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every ampkit workload shares: its command line, clocks, and the
 * per-thread report the guest runner reads for the fairness metric.
 *
 * A workload is started as "prog -t THREADS -n SIZE". It verifies its own
 * result and exits 0 only when the result is right. For each of its threads
 * it reports one line, "thread <index> <wall_ns> <cpu_ns>", followed on the
 * kit kernel by "<big_ns> <little_ns> <futex_blocked_ns> <futex_caused_ns>
 * <class>", to the file descriptor named by AMPKIT_REPORT_FD (set by the
 * runner), or to stdout when the variable is unset (a run by hand).
 *
 * Before those lines it reports its region of interest, "roi_begin <ns>"
 * and "roi_end <ns>" (CLOCK_MONOTONIC, as the runner's clock and the kit's
 * PARSEC hooks): its threads' work, without its start-up (inputs made,
 * memory allocated) and without the self-check that follows. The analysis
 * times the program by it; on gem5, asked by the runner, its bounds are
 * also dumps of the simulator's statistics (ampkit_workload.c, roi_stats).
 */
#ifndef AMPKIT_WORKLOAD_H
#define AMPKIT_WORKLOAD_H

#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* The largest SIZE (-n) a workload accepts: 2^40, or what a long holds. */
#if LONG_MAX > 0x7fffffffL
#define AMPKIT_MAX_SIZE (1L << 40)
#else
#define AMPKIT_MAX_SIZE LONG_MAX
#endif

struct ampkit_args {
	int threads;
	long size;
};

/* Parses -t and -n (defaults given); prints usage and exits 2 on bad input. */
void ampkit_parse_args(int argc, char **argv, const char *summary,
		       int default_threads, long default_size,
		       struct ampkit_args *args);

/* A workload's own option without a value: -<letter> sets *set to 1. */
struct ampkit_flag {
	char letter;
	const char *help;	/* one line for the usage */
	int *set;
};

/* ampkit_parse_args that also takes @flags, an array ended by letter 0. */
void ampkit_parse_args_flags(int argc, char **argv, const char *summary,
			     int default_threads, long default_size,
			     const struct ampkit_flag *flags, struct ampkit_args *args);

uint64_t ampkit_now_ns(void);		/* CLOCK_MONOTONIC */
uint64_t ampkit_thread_cpu_ns(void);	/* CLOCK_THREAD_CPUTIME_ID */
void ampkit_sleep_ns(uint64_t ns);	/* the whole of it, across signals */

/*
 * The value of a "name : value" line of a /proc/<pid>/sched text, copied
 * into @out (at most @len bytes with the NUL); @out, or NULL without it.
 */
const char *ampkit_sched_field(const char *text, const char *name, char *out, size_t len);

/* Per-thread timing: call begin at the thread's start, end at its finish. */
struct ampkit_thread_clock {
	uint64_t wall_start, cpu_start;
	uint64_t wall_ns, cpu_ns;
	/*
	 * The kit kernel's counters for the thread at its end (colab.* lines
	 * of /proc/thread-self/sched): run time on big and little CPUs, time
	 * blocked on futexes and time others were blocked on futexes it
	 * released, and its sensitivity class. has_kernel is 0 on a kernel
	 * without them. Read here because a thread's counters vanish with it.
	 */
	int has_kernel;
	uint64_t big_ns, little_ns, futex_blocked_ns, futex_caused_ns;
	char sched_class[12];
	/*
	 * Run time flagged a bottleneck and moves between big and little
	 * CPUs; has_moves is 0 on a kit kernel older than these counters.
	 */
	int has_moves;
	uint64_t flagged_ns, cluster_moves;
	/*
	 * ACFS's progress and the weight it was last divided by; has_acfs is
	 * 0 on a kernel built without acfs.
	 */
	int has_acfs;
	uint64_t amp_vruntime, acfs_weight;
	/*
	 * How many times the load balancer refused to move it as cache hot;
	 * has_hot is 0 unless the kernel's schedstats are on
	 * (kernel.sched_schedstats=1).
	 */
	int has_hot;
	uint64_t failed_hot;
};

void ampkit_thread_begin(struct ampkit_thread_clock *c);
void ampkit_thread_end(struct ampkit_thread_clock *c);

/* Writes the per-thread report lines; returns 0, or -1 if they could not be written. */
int ampkit_report_threads(const struct ampkit_thread_clock *clocks, int n);

/*
 * The region of interest: from just before the first worker is created to
 * just after the last has been joined. ampkit_run_workers() marks it; a
 * workload that starts its threads itself calls these around them, once.
 * A self-check belongs after ampkit_roi_end() and outside every thread's
 * clock, so that it costs the same under every scheduler and is not
 * counted as the program's work.
 */
void ampkit_roi_begin(void);
void ampkit_roi_end(void);

/*
 * For the tests: whether AMPKIT_WRONG_RESULT=1 asks the workload to spoil
 * its result after its region of interest, so that its self-check must
 * fail the program (exit 1) as a real error would.
 */
int ampkit_wrong_result(void);

/*
 * The workers of a workload are an array of its own structs, each holding a
 * struct ampkit_thread_clock. Run @fn on @n threads, the i-th given
 * (char *)@workers + i * @size, and wait for all of them, as the region of
 * interest; exits 1 if a thread cannot be created.
 */
void ampkit_run_workers(void *(*fn)(void *), void *workers, size_t size, int n);

/*
 * Report the clocks of @n workers, the i-th at (char *)@first + i * @stride
 * (call with &w[0].clock, sizeof(*w)); exits 1 if the report cannot be written.
 */
void ampkit_report_workers(const struct ampkit_thread_clock *first, size_t stride, int n);

/*
 * A bounded FIFO of items between threads, with condition variables. It is
 * done once every producer has called ampkit_queue_producer_done() and it
 * is drained.
 */
struct ampkit_queue {
	pthread_mutex_t lock;
	pthread_cond_t not_empty, not_full;
	uint64_t *items;
	int capacity, head, count;
	int producers;		/* still putting */
};

void ampkit_queue_init(struct ampkit_queue *q, int capacity, int producers);
void ampkit_queue_put(struct ampkit_queue *q, uint64_t item);
void ampkit_queue_producer_done(struct ampkit_queue *q);
/* Takes the oldest item into *item; returns 0 instead once the queue is done. */
int ampkit_queue_get(struct ampkit_queue *q, uint64_t *item);

/*
 * Contention for certain (the lock workloads' -b). Whether threads that
 * share a mutex ever meet on it in the kernel depends on how they happen to
 * overlap: an uncontended mutex never leaves user space. A convoy removes
 * the chance: the first worker to call ampkit_convoy_hold(), holding its
 * lock, keeps it until every other worker is asleep in a futex wait (or has
 * finished), and then @hold_ns longer, so each of those waits lasts at
 * least that long and ends only when the holder lets go.
 *
 * "Asleep" is read from /proc/self/task/<tid>/: in the futex system call
 * (which the kernel shows only for a thread off its CPU and run queue, where
 * it shows system calls at all), state S, and a count of voluntary context
 * switches unchanged across two passes over all of them: so every one was
 * asleep at one moment between the passes, and from then on nobody is left
 * awake to wake them but the holder. A worker that does not get there
 * within a bound (30 s) fails the program, naming what it was doing.
 *
 * ampkit_convoy_init(n) before the workers start; each worker calls
 * ampkit_convoy_join(index) first thing and ampkit_convoy_leave(index) once
 * it will take no lock and wake nobody any more. ampkit_convoy_hold()
 * returns how many other workers were asleep to the holder, and -1 at once
 * to every later caller.
 */
void ampkit_convoy_init(int workers);
void ampkit_convoy_join(int index);
void ampkit_convoy_leave(int index);
int ampkit_convoy_hold(int index, uint64_t hold_ns);

/* How long the holder of a convoy keeps its lock once the others sleep. */
#define AMPKIT_CONVOY_HOLD_NS 2000000ULL

/* calloc that exits with a message naming the program when memory runs out. */
void *ampkit_xcalloc(size_t n, size_t size);

/* Exits 1 with a message on stderr; for failed verifications and setup errors. */
void ampkit_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* Small deterministic generator (splitmix64) so runs are reproducible. */
static inline uint64_t ampkit_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* @x through ampkit_mix64 @n times: the workloads' unit of busy work. */
static inline uint64_t ampkit_mix64_rounds(uint64_t x, long n)
{
	while (n-- > 0)
		x = ampkit_mix64(x);
	return x;
}

#endif
