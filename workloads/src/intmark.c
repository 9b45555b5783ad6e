// SPDX-License-Identifier: GPL-2.0
/*
 * intmark: the kit's own integer benchmark, in the spirit of Dhrystone and
 * CoreMark (written here, no code of either): what capacity-dmips-mhz is
 * meant to measure, integer and control work out of the L1 caches.
 *
 * Each of SIZE rounds runs four kernels over small, L1-resident data:
 * a record walk through a linked list (pointer chasing, structure copies,
 * a switch on an enumeration), string work (copy, compare, search over
 * short strings), a CRC-16 over a 256-byte buffer (shifts and
 * data-dependent branches) and a 6x6 integer matrix product (multiply-
 * accumulate). Threads share nothing; each computes a checksum of its
 * rounds and notes it after the first CHECKED rounds. After every thread
 * has ended (outside their clocks, and short beside them) the main thread
 * recomputes those first rounds of each thread and compares.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "ampkit_workload.h"

#define RECORDS 16
#define TEXT 32
#define BUF 256
#define DIM 6
#define CHECKED 64L

enum kind { KIND_A, KIND_B, KIND_C, KIND_D };

struct record {
	struct record *next;
	enum kind kind;
	int value;
	char name[TEXT];
};

struct state {
	struct record records[RECORDS];
	unsigned char buf[BUF];
	int a[DIM][DIM], b[DIM][DIM], c[DIM][DIM];
	char text[4][TEXT];
};

struct worker {
	long rounds;
	uint64_t seed;
	uint64_t checksum, checked;	/* after every round, after CHECKED */
	struct ampkit_thread_clock clock;
};

static void init_state(struct state *s, uint64_t seed)
{
	int i, j;

	for (i = 0; i < RECORDS; i++) {
		struct record *r = &s->records[i];

		r->next = &s->records[(i * 7 + 3) % RECORDS];
		r->kind = (enum kind)(ampkit_mix64(seed + (uint64_t)i) % 4);
		r->value = (int)(ampkit_mix64(seed + 100 + (uint64_t)i) % 1000);
		snprintf(r->name, sizeof(r->name), "RECORD-%02d-%s", i, i % 2 ? "ODD" : "EVEN");
	}
	for (i = 0; i < BUF; i++)
		s->buf[i] = (unsigned char)ampkit_mix64(seed + 1000 + (uint64_t)i);
	for (i = 0; i < DIM; i++)
		for (j = 0; j < DIM; j++) {
			s->a[i][j] = (int)(ampkit_mix64(seed + 2000 + (uint64_t)(i * DIM + j)) % 17) - 8;
			s->b[i][j] = (int)(ampkit_mix64(seed + 3000 + (uint64_t)(i * DIM + j)) % 17) - 8;
		}
	for (i = 0; i < 4; i++)
		snprintf(s->text[i], sizeof(s->text[i]), "THE %d STRING OF THE ROUND", i);
}

static int walk(struct state *s, long round)
{
	struct record *r = &s->records[round % RECORDS];
	struct record copy;
	int i, acc = 0;

	for (i = 0; i < RECORDS; i++) {
		copy = *r;
		switch (copy.kind) {
		case KIND_A:
			acc += copy.value;
			break;
		case KIND_B:
			acc -= copy.value / 3;
			break;
		case KIND_C:
			acc ^= copy.value << 2;
			break;
		default:
			acc += (int)copy.name[7];
			break;
		}
		r->value = (r->value + acc) & 1023;
		r->kind = (enum kind)((copy.kind + (acc & 1)) % 4);
		r = copy.next;
	}
	return acc;
}

static int strings(struct state *s, long round)
{
	char work[TEXT];
	int acc = 0, i;

	for (i = 0; i < 4; i++) {
		const char *text = s->text[(round + i) % 4];

		memcpy(work, text, strlen(text) + 1);
		work[4] = (char)('0' + (round + i) % 10);
		acc += strcmp(work, s->text[i]) > 0;
		acc += (int)(strchr(work, 'R') - work);
		acc += (int)strlen(work);
	}
	return acc;
}

static unsigned int crc16(const unsigned char *p, int n, unsigned int crc)
{
	int i, bit;

	for (i = 0; i < n; i++) {
		crc ^= (unsigned int)p[i] << 8;
		for (bit = 0; bit < 8; bit++)
			crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
		crc &= 0xffff;
	}
	return crc;
}

static int matrix(struct state *s, long round)
{
	int i, j, k, acc = 0;

	for (i = 0; i < DIM; i++)
		for (j = 0; j < DIM; j++) {
			int sum = 0;

			for (k = 0; k < DIM; k++)
				sum += s->a[i][k] * s->b[k][j];
			s->c[i][j] = sum;
			acc += sum;
		}
	s->a[round % DIM][(round / DIM) % DIM] = (acc & 15) - 8;
	return acc;
}

/* The checksum of @rounds rounds; *@checked gets it after CHECKED rounds. */
static uint64_t run_rounds(long rounds, uint64_t seed, uint64_t *checked)
{
	struct state s;
	uint64_t checksum = seed;
	unsigned int crc = 0xffff;
	long round;

	init_state(&s, seed);
	for (round = 0; round < rounds; round++) {
		if (round == CHECKED)
			*checked = checksum;
		checksum = ampkit_mix64(checksum ^ (uint64_t)(unsigned int)walk(&s, round));
		checksum = ampkit_mix64(checksum ^ (uint64_t)(unsigned int)strings(&s, round));
		crc = crc16(s.buf, BUF, crc);
		s.buf[round % BUF] ^= (unsigned char)crc;
		checksum = ampkit_mix64(checksum ^ crc);
		checksum = ampkit_mix64(checksum ^ (uint64_t)(unsigned int)matrix(&s, round));
	}
	if (rounds <= CHECKED)
		*checked = checksum;
	return checksum;
}

static void *bench(void *arg)
{
	struct worker *w = arg;

	ampkit_thread_begin(&w->clock);
	w->checksum = run_rounds(w->rounds, w->seed, &w->checked);
	ampkit_thread_end(&w->clock);
	return NULL;
}

int main(int argc, char **argv)
{
	struct ampkit_args args;
	struct worker *w;
	uint64_t total = 0;
	int i;

	ampkit_parse_args(argc, argv, "integer benchmark for capacity calibration", 1, 2000,
			  &args);
	w = ampkit_xcalloc((size_t)args.threads, sizeof(*w));
	for (i = 0; i < args.threads; i++) {
		w[i].rounds = args.size;
		w[i].seed = (uint64_t)i + 1;
	}
	ampkit_run_workers(bench, w, sizeof(*w), args.threads);
	if (ampkit_wrong_result())
		w[0].checked ^= 1;
	for (i = 0; i < args.threads; i++) {
		uint64_t again, unused;
		long rounds = w[i].rounds < CHECKED ? w[i].rounds : CHECKED;

		again = run_rounds(rounds, w[i].seed, &unused);
		if (again != w[i].checked)
			ampkit_fail("intmark: thread %d's first %ld rounds do not reproduce", i,
				    rounds);
		total ^= w[i].checksum;
	}
	printf("intmark: %d threads x %ld rounds, checksum %016llx\n", args.threads, args.size,
	       (unsigned long long)total);
	ampkit_report_workers(&w[0].clock, sizeof(*w), args.threads);
	return 0;
}
