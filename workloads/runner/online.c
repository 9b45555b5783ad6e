// SPDX-License-Identifier: GPL-2.0
#include "online.h"
#include "pmu.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_double(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return errno || end == s || *end != '\0' || !isfinite(*out) ? -1 : 0;
}

int online_model_parse(struct online_model *m, char **words, int n, const char **bad)
{
	int i, j;

	memset(m, 0, sizeof(*m));
	if (n < 1 || parse_double(words[0], &m->intercept)) {
		*bad = n ? words[0] : "(nothing)";
		return -1;
	}
	for (i = 1; i < n; i++) {
		char *eq = strchr(words[i], '=');
		size_t len = eq ? (size_t)(eq - words[i]) : 0;

		*bad = words[i];
		if (!eq || !len || len >= sizeof(m->events[0]) || m->n == ONLINE_MAX_EVENTS)
			return -1;
		memcpy(m->events[m->n], words[i], len);
		m->events[m->n][len] = '\0';
		if (pmu_event_number(m->events[m->n]) < 0 ||
		    !strcmp(m->events[m->n], "INST_RETIRED") || parse_double(eq + 1, &m->coef[m->n]))
			return -1;
		for (j = 0; j < m->n; j++)
			if (!strcmp(m->events[j], m->events[m->n]))
				return -1;
		m->n++;
	}
	m->present = 1;
	return 0;
}

double online_predict(const struct online_model *m, const struct online_counts *c)
{
	double s = m->intercept;
	int i;

	for (i = 0; i < m->n; i++)
		s += m->coef[i] * (double)c->events[i] / (double)c->instructions;
	return s;
}

double online_clamp(double s, int *clamped)
{
	*clamped = !(s >= ONLINE_SPEEDUP_MIN && s <= ONLINE_SPEEDUP_MAX);
	if (!(s >= ONLINE_SPEEDUP_MIN))
		return ONLINE_SPEEDUP_MIN;	/* NaN too: the model said nothing usable */
	return s > ONLINE_SPEEDUP_MAX ? ONLINE_SPEEDUP_MAX : s;
}

int online_period_estimate(const struct online_model models[ONLINE_CORES],
			   const struct online_counts counts[ONLINE_CORES],
			   uint64_t min_instructions, double *estimate,
			   double per_type[ONLINE_CORES])
{
	double sum = 0, weight = 0;
	int t, clamped;

	for (t = 0; t < ONLINE_CORES; t++) {
		per_type[t] = NAN;
		if (!models[t].present || !counts[t].instructions ||
		    counts[t].instructions < min_instructions)
			continue;
		/* clamped per type: one type's wild prediction must not swamp the other's */
		per_type[t] = online_clamp(online_predict(&models[t], &counts[t]), &clamped);
		sum += per_type[t] * (double)counts[t].instructions;
		weight += (double)counts[t].instructions;
	}
	if (weight == 0)
		return 0;
	*estimate = sum / weight;
	return 1;
}

void online_carry(struct online_counts pending[ONLINE_CORES],
		  struct online_counts counts[ONLINE_CORES], uint64_t min_instructions)
{
	int t, i;

	for (t = 0; t < ONLINE_CORES; t++) {
		counts[t].instructions += pending[t].instructions;
		for (i = 0; i < ONLINE_MAX_EVENTS; i++)
			counts[t].events[i] += pending[t].events[i];
		if (counts[t].instructions < min_instructions) {
			pending[t] = counts[t];
			memset(&counts[t], 0, sizeof(counts[t]));
		} else {
			memset(&pending[t], 0, sizeof(pending[t]));
		}
	}
}

double online_phase_update(struct online_phase *p, double estimate, int *stable)
{
	double previous = p->average;

	if (!p->have) {
		p->have = 1;
		p->average = estimate;
		p->quiet = 0;
		*stable = 0;
		return estimate;
	}
	p->average += ONLINE_AVERAGE_WEIGHT * (estimate - p->average);
	if (fabs(p->average - previous) > ONLINE_PHASE_THRESHOLD * previous)
		p->quiet = 0;
	else
		p->quiet++;
	*stable = p->quiet >= ONLINE_STABLE_PERIODS;
	return *stable ? estimate : p->average;
}

unsigned int online_q10(double speedup)
{
	return (unsigned int)lround(speedup * 1024.0);
}
