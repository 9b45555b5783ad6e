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
 * should speed up). With -t 1 the one thread does both in turn. Every item
 * is consumed exactly once: the consumers' checksum must equal that of a
 * serial replay, made after the region of interest, outside every thread's
 * clock (a producer that checked as it went would do the consumers' work
 * again and be the pipeline's slowest stage).
 */
#include <pthread.h>
#include <stdio.h>

#include "ampkit_workload.h"

#define QUEUE_LEN 16
#define WORK_PER_ITEM 300	/* mixing rounds per item, consumer */
#define PRODUCE_WORK 150	/* mixing rounds per item, producer */

static struct ampkit_queue q;

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

static void *consume(void *arg)
{
	struct worker *w = arg;
	uint64_t item;

	ampkit_thread_begin(&w->clock);
	while (ampkit_queue_get(&q, &item)) {
		w->checksum += work(item);
		w->items++;
	}
	ampkit_thread_end(&w->clock);
	return NULL;
}

int main(int argc, char **argv)
{
	struct ampkit_args args;
	struct worker *w;
	pthread_t *tids;
	uint64_t produced = 0, consumed = 0;
	long n, items = 0;
	int i;

	ampkit_parse_args(argc, argv, "producer-consumer pipeline over a bounded queue", 3, 5000,
			  &args);
	w = ampkit_xcalloc((size_t)args.threads, sizeof(*w));
	ampkit_queue_init(&q, QUEUE_LEN, 1);
	tids = ampkit_xcalloc((size_t)args.threads, sizeof(*tids));

	ampkit_roi_begin();
	for (i = 1; i < args.threads; i++)
		if (pthread_create(&tids[i], NULL, consume, &w[i]))
			ampkit_fail("pipeline: cannot create thread %d", i);

	ampkit_thread_begin(&w[0].clock);
	for (n = 0; n < args.size; n++) {
		uint64_t item = produce(n);

		if (args.threads == 1) {	/* no consumer: do its part here */
			w[0].checksum += work(item);
			w[0].items++;
		} else {
			ampkit_queue_put(&q, item);
		}
	}
	ampkit_queue_producer_done(&q);
	ampkit_thread_end(&w[0].clock);

	for (i = 1; i < args.threads; i++)
		pthread_join(tids[i], NULL);
	ampkit_roi_end();
	if (ampkit_wrong_result())
		w[0].checksum ^= 1;

	for (n = 0; n < args.size; n++)
		produced += work(produce(n));
	for (i = 0; i < args.threads; i++) {
		consumed += w[i].checksum;
		items += w[i].items;
	}
	if (items != args.size || consumed != produced)
		ampkit_fail("pipeline: %ld of %ld items consumed, checksum %s",
			    items, args.size, consumed == produced ? "matches" : "differs");
	printf("pipeline: %ld items through %d consumer(s), checksum %016llx\n", args.size,
	       args.threads > 1 ? args.threads - 1 : 1, (unsigned long long)consumed);
	ampkit_report_workers(&w[0].clock, sizeof(*w), args.threads);
	return 0;
}
