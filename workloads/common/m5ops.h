/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gem5's pseudo-instructions for arm64, written from their documented ABI:
 * one reserved instruction word 0xff000110 | (op << 16), arguments in x0
 * to x3. A CPU other than gem5's raises SIGILL on them, so the runner
 * uses them only when the run description says the engine is gem5
 * ("m5ops 1"); built for another architecture they do nothing.
 */
#ifndef AMPKIT_M5OPS_H
#define AMPKIT_M5OPS_H

#include <stdint.h>

#if defined(__aarch64__)
#define M5OP(word, a, b)                                                        \
	do {                                                                    \
		register uint64_t x0_ __asm__("x0") = (a);                      \
		register uint64_t x1_ __asm__("x1") = (b);                      \
		__asm__ volatile(".inst " #word : "+r"(x0_) : "r"(x1_) : "memory"); \
	} while (0)
/* The same with three arguments (x0..x2), giving back x0, the op's result. */
#define M5OP3(word, a, b, c, ret)                                               \
	do {                                                                    \
		register uint64_t x0_ __asm__("x0") = (a);                      \
		register uint64_t x1_ __asm__("x1") = (b);                      \
		register uint64_t x2_ __asm__("x2") = (c);                      \
		__asm__ volatile(".inst " #word : "+r"(x0_) : "r"(x1_), "r"(x2_) \
				 : "memory");                                   \
		(ret) = x0_;                                                    \
	} while (0)
/* The same with four arguments (x0..x3), giving back x0. */
#define M5OP4(word, a, b, c, d, ret)                                            \
	do {                                                                    \
		register uint64_t x0_ __asm__("x0") = (a);                      \
		register uint64_t x1_ __asm__("x1") = (b);                      \
		register uint64_t x2_ __asm__("x2") = (c);                      \
		register uint64_t x3_ __asm__("x3") = (d);                      \
		__asm__ volatile(".inst " #word : "+r"(x0_)                     \
				 : "r"(x1_), "r"(x2_), "r"(x3_) : "memory");    \
		(ret) = x0_;                                                    \
	} while (0)
#else
#define M5OP(word, a, b) ((void)(a), (void)(b))
#define M5OP4(word, a, b, c, d, ret) ((void)(a), (void)(b), (void)(c), (void)(d), (ret) = 0)
#define M5OP3(word, a, b, c, ret) ((void)(a), (void)(b), (void)(c), (ret) = 0)
#endif

/* Ends the simulation (op 0x21; x0: delay in ns). */
static inline void m5_exit(uint64_t delay_ns)
{
	M5OP(0xff210110, delay_ns, 0);
}

/* A region of interest begins and ends (ops 0x5a, 0x5b; work id, thread id). */
static inline void m5_work_begin(uint64_t work_id, uint64_t thread_id)
{
	M5OP(0xff5a0110, work_id, thread_id);
}

static inline void m5_work_end(uint64_t work_id, uint64_t thread_id)
{
	M5OP(0xff5b0110, work_id, thread_id);
}

/*
 * Dumps the statistics without resetting them (op 0x41; x0: delay, x1:
 * period, in ns): a mark inside an interval, which the counts at a later
 * dump still cover.
 */
static inline void m5_dump_stats(void)
{
	M5OP(0xff410110, 0, 0);
}

/*
 * Dumps the statistics and resets them (op 0x42; x0: delay, x1: period, in
 * ns): what follows is measured from here.
 */
static inline void m5_dump_reset_stats(void)
{
	M5OP(0xff420110, 0, 0);
}

/*
 * Asks the simulator for a checkpoint (op 0x43; x0: delay, x1: period, in
 * ns). A run restored from it resumes right after this instruction.
 */
static inline void m5_checkpoint(void)
{
	M5OP(0xff430110, 0, 0);
}

/*
 * Reads up to len bytes of the host file the simulator was given as the
 * system's readfile, from offset, into buf (op 0x50; x0: address, x1:
 * length, x2: offset). Returns the bytes read, 0 at its end.
 */
static inline uint64_t m5_readfile(void *buf, uint64_t len, uint64_t offset)
{
	uint64_t got;

	M5OP3(0xff500110, (uint64_t)(uintptr_t)buf, len, offset, got);
	return got;
}

/*
 * Writes len bytes of buf into the file name of the simulator's output
 * directory, at offset (op 0x4f; x0: address, x1: length, x2: offset, x3:
 * the name's address; 0 creates the file anew). Returns the bytes written.
 * The simulator reads both through the guest's page tables: they must be
 * in memory the caller has touched, not pages never faulted in.
 */
static inline uint64_t m5_writefile(const void *buf, uint64_t len, uint64_t offset,
				    const char *name)
{
	uint64_t wrote;
	M5OP4(0xff4f0110, (uint64_t)(uintptr_t)buf, len, offset, (uint64_t)(uintptr_t)name,
	      wrote);
	return wrote;
}
#endif
