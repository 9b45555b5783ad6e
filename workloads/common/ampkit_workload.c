// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include "ampkit_workload.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 1024

/* For messages; set by ampkit_parse_args. */
static const char *program = "workload";

static void usage(const char *prog, const char *summary, int threads, long size)
{
	fprintf(stderr,
		"%s: %s\n"
		"usage: %s [-t THREADS] [-n SIZE]\n"
		"  -t THREADS  worker threads, 1..%d (default %d)\n"
		"  -n SIZE     problem size, >= 1 (default %ld)\n",
		prog, summary, prog, MAX_THREADS, threads, size);
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
	const char *prog = argc > 0 ? argv[0] : program;
	int opt;

	program = prog;
	args->threads = default_threads;
	args->size = default_size;
	while ((opt = getopt(argc, argv, "t:n:h")) != -1) {
		switch (opt) {
		case 't':
			args->threads = (int)parse_positive(prog, "-t", optarg, MAX_THREADS);
			break;
		case 'n':
			args->size = parse_positive(prog, "-n", optarg, 1L << 40);
			break;
		case 'h':
			usage(prog, summary, default_threads, default_size);
			exit(0);
		default:
			usage(prog, summary, default_threads, default_size);
			exit(2);
		}
	}
	if (optind != argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
		usage(prog, summary, default_threads, default_size);
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
}

void ampkit_thread_end(struct ampkit_thread_clock *c)
{
	c->wall_ns = ampkit_now_ns() - c->wall_start;
	c->cpu_ns = ampkit_thread_cpu_ns() - c->cpu_start;
	read_kernel_counters(c);
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
	for (i = 0; i < n; i++) {
		const struct ampkit_thread_clock *c = &clocks[i];

		fprintf(out, "thread %d %llu %llu", i, (unsigned long long)c->wall_ns,
			(unsigned long long)c->cpu_ns);
		if (c->has_kernel)
			fprintf(out, " %llu %llu %llu %llu %s", (unsigned long long)c->big_ns,
				(unsigned long long)c->little_ns,
				(unsigned long long)c->futex_blocked_ns,
				(unsigned long long)c->futex_caused_ns, c->sched_class);
		fprintf(out, "\n");
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

	for (i = 0; i < n; i++)
		if (pthread_create(&tids[i], NULL, fn, (char *)workers + (size_t)i * size))
			ampkit_fail("%s: cannot create thread %d", name(), i);
	for (i = 0; i < n; i++)
		pthread_join(tids[i], NULL);
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
