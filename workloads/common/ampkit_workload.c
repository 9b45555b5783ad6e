// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include "ampkit_workload.h"
#include "m5ops.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 1024

/* For messages; set by ampkit_parse_args. */
static const char *program = "workload";

static void usage(const char *prog, const char *summary, int threads, long size,
		  const struct ampkit_flag *flags)
{
	const struct ampkit_flag *f;

	fprintf(stderr, "%s: %s\nusage: %s [-t THREADS] [-n SIZE]", prog, summary, prog);
	for (f = flags; f && f->letter; f++)
		fprintf(stderr, " [-%c]", f->letter);
	fprintf(stderr,
		"\n"
		"  -t THREADS  worker threads, 1..%d (default %d)\n"
		"  -n SIZE     problem size, >= 1 (default %ld)\n",
		MAX_THREADS, threads, size);
	for (f = flags; f && f->letter; f++)
		fprintf(stderr, "  -%c          %s\n", f->letter, f->help);
}

static long parse_positive(const char *prog, const char *opt, const char *s, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *s == '\0' || *end != '\0' || v < 1 || v > max) {
		fprintf(stderr, "%s: %s takes an integer from 1 to %ld, not '%s'\n",
			prog, opt, max, s);
		exit(2);
	}
	return v;
}

void ampkit_parse_args(int argc, char **argv, const char *summary,
		       int default_threads, long default_size,
		       struct ampkit_args *args)
{
	ampkit_parse_args_flags(argc, argv, summary, default_threads, default_size, NULL, args);
}

/* The flag of @flags for option letter @opt, or NULL. */
static const struct ampkit_flag *find_flag(const struct ampkit_flag *flags, int opt)
{
	for (; flags && flags->letter; flags++)
		if (flags->letter == opt)
			return flags;
	return NULL;
}

void ampkit_parse_args_flags(int argc, char **argv, const char *summary,
			     int default_threads, long default_size,
			     const struct ampkit_flag *flags, struct ampkit_args *args)
{
	const char *prog = argc > 0 ? argv[0] : program;
	const struct ampkit_flag *f;
	char optstring[64] = "t:n:h";
	size_t len = strlen(optstring);
	int opt;

	program = prog;
	args->threads = default_threads;
	args->size = default_size;
	for (f = flags; f && f->letter && len + 1 < sizeof(optstring); f++)
		optstring[len++] = f->letter;
	optstring[len] = '\0';
	while ((opt = getopt(argc, argv, optstring)) != -1) {
		switch (opt) {
		case 't':
			args->threads = (int)parse_positive(prog, "-t", optarg, MAX_THREADS);
			break;
		case 'n':
			args->size = parse_positive(prog, "-n", optarg, AMPKIT_MAX_SIZE);
			break;
		case 'h':
			usage(prog, summary, default_threads, default_size, flags);
			exit(0);
		default:
			f = find_flag(flags, opt);
			if (!f) {
				usage(prog, summary, default_threads, default_size, flags);
				exit(2);
			}
			*f->set = 1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
		usage(prog, summary, default_threads, default_size, flags);
		exit(2);
	}
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t ampkit_now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t ampkit_thread_cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

void ampkit_thread_begin(struct ampkit_thread_clock *c)
{
	c->wall_start = ampkit_now_ns();
	c->cpu_start = ampkit_thread_cpu_ns();
}

void ampkit_sleep_ns(uint64_t ns)
{
	struct timespec nap = { .tv_sec = (time_t)(ns / 1000000000ULL),
				.tv_nsec = (long)(ns % 1000000000ULL) };

	while (nanosleep(&nap, &nap) && errno == EINTR)
		;
}

const char *ampkit_sched_field(const char *text, const char *name, char *out, size_t len)
{
	const char *p = text;
	size_t n = strlen(name);

	while ((p = strstr(p, name))) {
		const char *colon;

		if ((p == text || p[-1] == '\n') && (p[n] == ' ' || p[n] == ':')) {
			colon = strchr(p, ':');
			if (!colon)
				return NULL;
			colon++;
			while (*colon == ' ')
				colon++;
			snprintf(out, len, "%.*s", (int)strcspn(colon, "\n"), colon);
			return out;
		}
		p += n;
	}
	return NULL;
}

/* A counter of the text into *@out; 0, or -1 without it. */
static int sched_counter(const char *text, const char *name, uint64_t *out)
{
	char value[32];

	if (!ampkit_sched_field(text, name, value, sizeof(value)))
		return -1;
	*out = strtoull(value, NULL, 10);
	return 0;
}

static void read_kernel_counters(struct ampkit_thread_clock *c)
{
	char text[8192];
	ssize_t n = 0, got;
	int fd = open("/proc/thread-self/sched", O_RDONLY | O_CLOEXEC);

	c->has_kernel = 0;
	if (fd < 0)
		return;
	while (n < (ssize_t)sizeof(text) - 1 &&
	       (got = read(fd, text + n, sizeof(text) - 1 - (size_t)n)) > 0)
		n += got;
	close(fd);
	text[n > 0 ? n : 0] = '\0';
	c->has_kernel = !sched_counter(text, "colab.big_ns", &c->big_ns) &&
			!sched_counter(text, "colab.little_ns", &c->little_ns) &&
			!sched_counter(text, "colab.futex_blocked_ns", &c->futex_blocked_ns) &&
			!sched_counter(text, "colab.futex_caused_ns", &c->futex_caused_ns) &&
			ampkit_sched_field(text, "colab.class", c->sched_class,
					   sizeof(c->sched_class));
	c->has_moves = c->has_kernel &&
		       !sched_counter(text, "colab.flagged_ns", &c->flagged_ns) &&
		       !sched_counter(text, "colab.cluster_moves", &c->cluster_moves);
	c->has_acfs = c->has_moves &&
		      !sched_counter(text, "colab.amp_vruntime", &c->amp_vruntime) &&
		      !sched_counter(text, "colab.acfs_weight", &c->acfs_weight);
	/* printed only while schedstats are on */
	c->has_hot = !sched_counter(text, "nr_failed_migrations_hot", &c->failed_hot);
}

void ampkit_thread_end(struct ampkit_thread_clock *c)
{
	c->wall_ns = ampkit_now_ns() - c->wall_start;
	c->cpu_ns = ampkit_thread_cpu_ns() - c->cpu_start;
	read_kernel_counters(c);
}

static uint64_t roi_begin_ns, roi_end_ns;

/*
 * Whether the runner asked for gem5's statistics at the region's bounds:
 * only on gem5 (AMPKIT_M5OPS, the first run of an application) and only
 * for a run of one application (AMPKIT_ROI_STATS, ampkit/rundesc.py), whose
 * two marks then fall between the runner's own dumps. Elsewhere the
 * instruction would raise SIGILL.
 */
static int roi_stats(void)
{
	const char *gem5 = getenv("AMPKIT_M5OPS"), *asked = getenv("AMPKIT_ROI_STATS");

	return gem5 && asked && !strcmp(gem5, "1") && !strcmp(asked, "1");
}

void ampkit_roi_begin(void)
{
	if (roi_stats())
		m5_dump_stats();
	roi_begin_ns = ampkit_now_ns();
}

void ampkit_roi_end(void)
{
	roi_end_ns = ampkit_now_ns();
	if (roi_stats())
		m5_dump_stats();
}

int ampkit_wrong_result(void)
{
	const char *env = getenv("AMPKIT_WRONG_RESULT");

	return env && !strcmp(env, "1");
}

int ampkit_report_threads(const struct ampkit_thread_clock *clocks, int n)
{
	const char *env = getenv("AMPKIT_REPORT_FD");
	FILE *out = stdout;
	int i, fd;

	if (env) {
		fd = atoi(env);
		out = fdopen(dup(fd), "w");
		if (!out)
			return -1;
	}
	if (roi_begin_ns)
		fprintf(out, "roi_begin %llu\n", (unsigned long long)roi_begin_ns);
	if (roi_end_ns)
		fprintf(out, "roi_end %llu\n", (unsigned long long)roi_end_ns);
	for (i = 0; i < n; i++) {
		const struct ampkit_thread_clock *c = &clocks[i];

		fprintf(out, "thread %d %llu %llu", i, (unsigned long long)c->wall_ns,
			(unsigned long long)c->cpu_ns);
		if (c->has_kernel)
			fprintf(out, " %llu %llu %llu %llu %s", (unsigned long long)c->big_ns,
				(unsigned long long)c->little_ns,
				(unsigned long long)c->futex_blocked_ns,
				(unsigned long long)c->futex_caused_ns, c->sched_class);
		if (c->has_kernel && c->has_moves)
			fprintf(out, " %llu %llu", (unsigned long long)c->flagged_ns,
				(unsigned long long)c->cluster_moves);
		if (c->has_kernel && c->has_moves && c->has_acfs)
			fprintf(out, " %llu %llu", (unsigned long long)c->amp_vruntime,
				(unsigned long long)c->acfs_weight);
		fprintf(out, "\n");
		if (c->has_hot)
			fprintf(out, "thread_hot %d %llu\n", i, (unsigned long long)c->failed_hot);
	}
	if (fflush(out) != 0)
		return -1;
	if (out != stdout)
		fclose(out);
	return 0;
}

/* The program's name without its directory, as the workloads' messages give it. */
static const char *name(void)
{
	const char *slash = strrchr(program, '/');

	return slash ? slash + 1 : program;
}

void ampkit_run_workers(void *(*fn)(void *), void *workers, size_t size, int n)
{
	pthread_t *tids = ampkit_xcalloc((size_t)n, sizeof(*tids));
	int i;

	ampkit_roi_begin();
	for (i = 0; i < n; i++)
		if (pthread_create(&tids[i], NULL, fn, (char *)workers + (size_t)i * size))
			ampkit_fail("%s: cannot create thread %d", name(), i);
	for (i = 0; i < n; i++)
		pthread_join(tids[i], NULL);
	ampkit_roi_end();
	free(tids);
}

void ampkit_report_workers(const struct ampkit_thread_clock *first, size_t stride, int n)
{
	struct ampkit_thread_clock *clocks = ampkit_xcalloc((size_t)n, sizeof(*clocks));
	int i;

	for (i = 0; i < n; i++)
		clocks[i] = *(const struct ampkit_thread_clock *)((const char *)first +
								  (size_t)i * stride);
	if (ampkit_report_threads(clocks, n))
		ampkit_fail("%s: cannot write the thread report", name());
	free(clocks);
}

/* --- the convoy (-b of the lock workloads) --- */

#define CONVOY_LEFT (-1)			/* in convoy_tids: the worker has left */
#define CONVOY_TIMEOUT_NS 30000000000ULL	/* the others must be asleep by then */
#define CONVOY_POLL_NS 200000ULL

static atomic_int *convoy_tids;		/* per worker: 0 (not yet joined), tid, LEFT */
static int convoy_workers;
static atomic_int convoy_armed;		/* 1 until a holder is chosen */

void ampkit_convoy_init(int workers)
{
	int i;

	convoy_tids = ampkit_xcalloc((size_t)workers, sizeof(*convoy_tids));
	for (i = 0; i < workers; i++)
		atomic_init(&convoy_tids[i], 0);
	convoy_workers = workers;
	atomic_store(&convoy_armed, 1);
}

void ampkit_convoy_join(int index)
{
	atomic_store(&convoy_tids[index], (int)syscall(SYS_gettid));
}

void ampkit_convoy_leave(int index)
{
	atomic_store(&convoy_tids[index], CONVOY_LEFT);
}

/* Reads a small file into @text (NUL-terminated); its length, or -1 if it cannot be opened. */
static ssize_t read_small_file(const char *path, char *text, size_t size)
{
	ssize_t n = 0, got;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while (n < (ssize_t)size - 1 && (got = read(fd, text + n, size - 1 - (size_t)n)) > 0)
		n += got;
	close(fd);
	text[n] = '\0';
	return n;
}

enum convoy_state { CONVOY_NOT_JOINED, CONVOY_AWAKE, CONVOY_ASLEEP, CONVOY_GONE };

struct convoy_seen {
	enum convoy_state state;
	unsigned long long nvcsw;	/* voluntary context switches: one per sleep */
	char what[64];			/* for the message if it never sleeps */
};

/* Is the system call named by a /proc/<tid>/syscall text a futex call? */
static int futex_syscall(const char *text)
{
	char *end;
	long nr = strtol(text, &end, 10);

	if (end == text)
		return 0;		/* "running" */
#ifdef SYS_futex_time64
	if (nr == SYS_futex_time64)
		return 1;
#endif
	return nr == SYS_futex;
}

/*
 * What worker @index is doing now, as /proc shows it. The system call is
 * read first: the kernel shows it only for a thread off its CPU and off
 * the run queue (asleep, not merely preempted), and "running" otherwise.
 * The status read after it gives the count of voluntary context switches,
 * which a thread woken and put to sleep again in between would have moved
 * on. A kernel without /proc/<tid>/syscall leaves the state alone to judge.
 */
static void convoy_look(int index, struct convoy_seen *seen)
{
	int tid = atomic_load(&convoy_tids[index]);
	char path[64], text[4096], state = '?', call[16] = "not shown";
	const char *p;
	int in_futex = 1, counted = 0;

	seen->nvcsw = 0;
	if (tid == 0 || tid == CONVOY_LEFT) {
		seen->state = tid ? CONVOY_GONE : CONVOY_NOT_JOINED;
		snprintf(seen->what, sizeof(seen->what), tid ? "left" : "not started");
		return;
	}
	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	if (read_small_file(path, text, sizeof(text)) >= 0) {
		in_futex = futex_syscall(text);
		snprintf(call, sizeof(call), "%.*s", (int)strcspn(text, " \n"), text);
	}
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	if (read_small_file(path, text, sizeof(text)) < 0) {
		/* it left and ended since its tid was read */
		seen->state = CONVOY_AWAKE;
		snprintf(seen->what, sizeof(seen->what), "tid %d has no /proc entry", tid);
		return;
	}
	p = strstr(text, "\nState:");
	if (p)
		sscanf(p + strlen("\nState:"), " %c", &state);
	p = strstr(text, "\nvoluntary_ctxt_switches:");
	if (p) {
		seen->nvcsw = strtoull(p + strlen("\nvoluntary_ctxt_switches:"), NULL, 10);
		counted = 1;
	}
	seen->state = state == 'S' && in_futex && counted ? CONVOY_ASLEEP : CONVOY_AWAKE;
	snprintf(seen->what, sizeof(seen->what), "tid %d, state %c, system call %s", tid, state,
		 call);
}

/*
 * Every worker but @self seen twice, @first then @second: all of them were
 * asleep at once, at any moment between the two passes, if each had left
 * already at the first look, or was asleep at both looks with no voluntary
 * context switch between them (a sleep that ended and began again would
 * have made one). The number asleep; or -1, with the first worker that was
 * not in *@awake.
 */
static int convoy_settled(const struct convoy_seen *first, const struct convoy_seen *second,
			  int self, int *awake)
{
	int i, asleep = 0;

	for (i = 0; i < convoy_workers; i++) {
		if (i == self || (first[i].state == CONVOY_GONE && second[i].state == CONVOY_GONE))
			continue;
		if (first[i].state != CONVOY_ASLEEP || second[i].state != CONVOY_ASLEEP ||
		    first[i].nvcsw != second[i].nvcsw) {
			*awake = i;
			return -1;
		}
		asleep++;
	}
	return asleep;
}

int ampkit_convoy_hold(int index, uint64_t hold_ns)
{
	struct convoy_seen *first, *second;
	uint64_t deadline;
	int i, asleep, awake = -1;

	if (!atomic_load_explicit(&convoy_armed, memory_order_relaxed) ||
	    !atomic_exchange(&convoy_armed, 0))
		return -1;
	first = ampkit_xcalloc((size_t)convoy_workers, sizeof(*first));
	second = ampkit_xcalloc((size_t)convoy_workers, sizeof(*second));
	deadline = ampkit_now_ns() + CONVOY_TIMEOUT_NS;
	for (;;) {
		for (i = 0; i < convoy_workers; i++)
			if (i != index)
				convoy_look(i, &first[i]);
		for (i = 0; i < convoy_workers; i++)
			if (i != index)
				convoy_look(i, &second[i]);
		asleep = convoy_settled(first, second, index, &awake);
		if (asleep >= 0)
			break;
		if (ampkit_now_ns() > deadline)
			ampkit_fail("%s: -b: thread %d held the lock for %llu s, and thread %d "
				    "did not stay asleep in a futex wait (%s)",
				    name(), index, CONVOY_TIMEOUT_NS / 1000000000ULL, awake,
				    second[awake].what);
		ampkit_sleep_ns(CONVOY_POLL_NS);
	}
	free(first);
	free(second);
	/* each of their waits lasts at least this long, and only our unlock ends it */
	ampkit_sleep_ns(hold_ns);
	return asleep;
}

void ampkit_queue_init(struct ampkit_queue *q, int capacity, int producers)
{
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->not_empty, NULL);
	pthread_cond_init(&q->not_full, NULL);
	q->items = ampkit_xcalloc((size_t)capacity, sizeof(*q->items));
	q->capacity = capacity;
	q->head = 0;
	q->count = 0;
	q->producers = producers;
}

void ampkit_queue_put(struct ampkit_queue *q, uint64_t item)
{
	pthread_mutex_lock(&q->lock);
	while (q->count == q->capacity)
		pthread_cond_wait(&q->not_full, &q->lock);
	q->items[(q->head + q->count) % q->capacity] = item;
	q->count++;
	pthread_cond_signal(&q->not_empty);
	pthread_mutex_unlock(&q->lock);
}

/* One producer is done; the last one wakes every consumer. */
void ampkit_queue_producer_done(struct ampkit_queue *q)
{
	pthread_mutex_lock(&q->lock);
	if (--q->producers == 0)
		pthread_cond_broadcast(&q->not_empty);
	pthread_mutex_unlock(&q->lock);
}

int ampkit_queue_get(struct ampkit_queue *q, uint64_t *item)
{
	pthread_mutex_lock(&q->lock);
	while (q->count == 0 && q->producers > 0)
		pthread_cond_wait(&q->not_empty, &q->lock);
	if (q->count == 0) {
		pthread_mutex_unlock(&q->lock);
		return 0;
	}
	*item = q->items[q->head];
	q->head = (q->head + 1) % q->capacity;
	q->count--;
	pthread_cond_signal(&q->not_full);
	pthread_mutex_unlock(&q->lock);
	return 1;
}

void *ampkit_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		ampkit_fail("%s: out of memory", program);
	return p;
}

void ampkit_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}
