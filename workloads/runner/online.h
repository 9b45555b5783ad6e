/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The online speedup model: a thread's big-over-little speedup predicted
 * each period from the PMU events it counted on each core type, with the
 * offline model's coefficients (ampkit/speedupmodel.py), smoothed with the
 * phase handling of Saez et al. (section 4.3 of the EEF-Driven paper).
 *
 * Pure arithmetic, no system calls: ampkit-online (the guest daemon) and
 * its replay mode, which the host-side tests drive with hand-made counts,
 * share it.
 */
#ifndef AMPKIT_ONLINE_H
#define AMPKIT_ONLINE_H

#include <stdint.h>

/*
 * Events a model reads beside INST_RETIRED, which every rate is per: the
 * cycle counter and the event counters left once INST_RETIRED has one
 * (ampkit/pmu.py, COUNTERS: five on the gem5 a user has).
 */
#define ONLINE_MAX_EVENTS 5

enum online_core { ONLINE_BIG, ONLINE_LITTLE, ONLINE_CORES };

/* One core type's model: speedup = intercept + sum(coef[i] * events[i] / INST_RETIRED). */
struct online_model {
	int present;
	double intercept;
	int n;
	char events[ONLINE_MAX_EVENTS][24];	/* as ampkit/pmu.py names them */
	double coef[ONLINE_MAX_EVENTS];
};

/* One core type's counts over one period, events in the model's order. */
struct online_counts {
	uint64_t instructions;
	uint64_t events[ONLINE_MAX_EVENTS];
};

/* The range the kernel takes for a speedup (COLAB_SPEEDUP_MIN/MAX, 1024 = 1.0). */
#define ONLINE_SPEEDUP_MIN 0.25
#define ONLINE_SPEEDUP_MAX 8.0

/*
 * The running average's weight for the newest estimate, and the relative
 * change of the average that marks a phase transition.
 */
#define ONLINE_AVERAGE_WEIGHT 0.5
#define ONLINE_PHASE_THRESHOLD 0.10
/* Periods without a transition before a phase is stable. */
#define ONLINE_STABLE_PERIODS 2

/*
 * Parses "<intercept> <EVENT>=<coef> ..." (words, as split) into @m.
 * Returns 0, or -1 with @bad pointing at the word that is wrong: not a
 * number, an event the model cannot read (INST_RETIRED, which every rate
 * is per, or an unknown name), an event twice, or too many.
 */
int online_model_parse(struct online_model *m, char **words, int n, const char **bad);

/*
 * The speedup @m predicts for @c (at least one instruction), before
 * clamping.
 */
double online_predict(const struct online_model *m, const struct online_counts *c);

/* @s within [ONLINE_SPEEDUP_MIN, ONLINE_SPEEDUP_MAX]; sets *clamped if it was not. */
double online_clamp(double s, int *clamped);

/*
 * A period's estimate: each core type's prediction where the thread
 * retired at least @min_instructions there and that type has a model,
 * weighted by the instructions it retired on each. Returns 0 when no core
 * type qualifies (the thread keeps what it had), else 1 with *estimate
 * and per_type[] (NaN where a type did not qualify) set.
 */
int online_period_estimate(const struct online_model models[ONLINE_CORES],
			   const struct online_counts counts[ONLINE_CORES],
			   uint64_t min_instructions, double *estimate,
			   double per_type[ONLINE_CORES]);

/*
 * Adds a thread's counts held back from earlier periods (@pending) to this
 * period's (@counts), per core type, and holds back again (moves to
 * @pending) each type whose instructions are still under
 * @min_instructions: a thread that runs a
 * little in every period (one that mostly waits) still gets an estimate
 * once its counts add up, rather than never.
 */
void online_carry(struct online_counts pending[ONLINE_CORES],
		  struct online_counts counts[ONLINE_CORES], uint64_t min_instructions);

/*
 * Saez et al.'s phase handling: a running average of the estimates; a
 * change of the average beyond ONLINE_PHASE_THRESHOLD marks a transition;
 * after ONLINE_STABLE_PERIODS periods without one the phase is stable and
 * the latest estimate is used, otherwise the running average, so that
 * spikes do not move threads.
 */
struct online_phase {
	int have;		/* an estimate has been seen */
	double average;
	int quiet;		/* periods since the last transition */
};

/* Takes a period's estimate; returns the speedup to use and sets *stable. */
double online_phase_update(struct online_phase *p, double estimate, int *stable);

/* A speedup as the kernel takes it, 1024 = 1.0, rounded to the nearest. */
unsigned int online_q10(double speedup);

#endif
