// SPDX-License-Identifier: GPL-2.0
/*
 * pipeline: producer-consumer over a bounded queue with condition variables
 * (the hand-off pattern of PARSEC dedup and ferret).
 *
 * Thread 0 produces SIZE items; the other threads consume them. The two
 * stages run at unequal speeds, as the stages of a real pipeline do: an
 * item costs its producer half of what it costs a consumer. With one
 * consumer the producer waits for room in the queue; with three or more
 * the consumers wait for items, and the producer is the pipeline's
 * bottleneck (the thread a scheduler that sees who ends others' waiting
 * should speed up). With -t 1 the one thread does both in turn.
 *
 * An item is coarse, as a chunk of dedup or an image of ferret is: tens of
 * microseconds of work on a big core, so that a hand-off (a futex wake and
 * a context switch, a few microseconds, several times more on an in-order
 * little core) is a small part of it. With items of a few microseconds the
 * hand-offs were the work: four threads on two little CPUs took nine times
 * as long as on two big ones, whose cores are two to three times as fast.
 *
 * Every item is consumed exactly once, and right: the producer keeps each
 * item it makes and queues its index; a consumer keeps its result and
 * counts the index as taken. After the region of interest, outside every
 * thread's clock, each index must have been taken once, the results must
 * add up to the consumers' checksums, and CHECKED_ITEMS items spread over
 * the run are made and worked again on one thread. Replaying every item
 * would be the whole pipeline's work on one CPU after its region: three
 * times the region's length, which a mix would run beside its other
 * programs.
 */
#include <pthread.h>
#include <stdio.h>

#include "ampkit_workload.h"

#define QUEUE_LEN 16
#define CHECKED_ITEMS 16	/* items made and worked again to check */
#define WORK_PER_ITEM 6000	/* mixing rounds per item, consumer */
#define PRODUCE_WORK 3000	/* mixing rounds per item, producer */

static struct ampkit_queue q;
static uint64_t *made;		/* made[n]: item n as the producer made it */
static uint64_t *result;	/* result[n]: what a consumer made of it */
static unsigned int *taken;	/* taken[n]: how many times it was taken */

struct worker {
	long items;
	uint64_t checksum;
	struct ampkit_thread_clock clock;
};

static uint64_t work(uint64_t x)
{
	return ampkit_mix64_rounds(x, WORK_PER_ITEM);
}

static uint64_t produce(long n)
{
	return ampkit_mix64_rounds((uint64_t)n, PRODUCE_WORK);
}

static void take(struct worker *w, uint64_t n)
{
	uint64_t r = work(made[n]);

	result[n] = r;
	__atomic_fetch_add(&taken[n], 1, __ATOMIC_RELAXED);
	w->checksum += r;
	w->items++;
}

static void *consume(void *arg)
{
	struct worker *w = arg;
	uint64_t n;

	ampkit_thread_begin(&w->clock);
	while (ampkit_queue_get(&q, &n))
		take(w, n);
	ampkit_thread_end(&w->clock);
	return NULL;
}

/* Each item taken once, results that add up, and a sample made again. */
static void check(const struct worker *w, int threads, long size)
{
	uint64_t results = 0, consumed = 0;
	long n, items = 0;
	int i;

	for (i = 0; i < threads; i++) {
		consumed += w[i].checksum;
		items += w[i].items;
	}
	for (n = 0; n < size; n++) {
		if (taken[n] != 1)
			ampkit_fail("pipeline: item %ld taken %u times", n, taken[n]);
		results += result[n];
	}
	if (items != size || consumed != results)
		ampkit_fail("pipeline: %ld of %ld items consumed, checksum %s", items, size,
			    consumed == results ? "matches" : "differs");
	for (i = 0; i < CHECKED_ITEMS; i++) {
		uint64_t item;

		n = size > 1 ? (long)((size - 1) * i / (CHECKED_ITEMS - 1)) : 0;
		item = produce(n);
		if (made[n] != item || result[n] != work(item))
			ampkit_fail("pipeline: item %ld was made or worked wrong", n);
	}
}

int main(int argc, char **argv)
{
	struct ampkit_args args;
	struct worker *w;
	pthread_t *tids;
	uint64_t consumed = 0;
	long n;
	int i;

	ampkit_parse_args(argc, argv, "producer-consumer pipeline over a bounded queue", 3, 250,
			  &args);
	w = ampkit_xcalloc((size_t)args.threads, sizeof(*w));
	made = ampkit_xcalloc((size_t)args.size, sizeof(*made));
	result = ampkit_xcalloc((size_t)args.size, sizeof(*result));
	taken = ampkit_xcalloc((size_t)args.size, sizeof(*taken));
	ampkit_queue_init(&q, QUEUE_LEN, 1);
	tids = ampkit_xcalloc((size_t)args.threads, sizeof(*tids));

	ampkit_roi_begin();
	for (i = 1; i < args.threads; i++)
		if (pthread_create(&tids[i], NULL, consume, &w[i]))
			ampkit_fail("pipeline: cannot create thread %d", i);

	ampkit_thread_begin(&w[0].clock);
	for (n = 0; n < args.size; n++) {
		made[n] = produce(n);
		if (args.threads == 1)	/* no consumer: do its part here */
			take(&w[0], (uint64_t)n);
		else
			ampkit_queue_put(&q, (uint64_t)n);
	}
	ampkit_queue_producer_done(&q);
	ampkit_thread_end(&w[0].clock);

	for (i = 1; i < args.threads; i++)
		pthread_join(tids[i], NULL);
	ampkit_roi_end();
	if (ampkit_wrong_result())
		w[0].checksum ^= 1;

	check(w, args.threads, args.size);
	for (i = 0; i < args.threads; i++)
		consumed += w[i].checksum;
	printf("pipeline: %ld items through %d consumer(s), checksum %016llx\n", args.size,
	       args.threads > 1 ? args.threads - 1 : 1, (unsigned long long)consumed);
	ampkit_report_workers(&w[0].clock, sizeof(*w), args.threads);
	return 0;
}
