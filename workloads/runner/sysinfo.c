// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include "sysinfo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#define CPU_DIR "/sys/devices/system/cpu"
#define DOMAINS_DIR "/sys/kernel/debug/sched/domains"
#define SYSCTL_DIR "/proc/sys/kernel"

/* A file's text as a JSON integer where it reads as one, else as a string. */
static void sb_text_int(struct sbuf *sb, const char *text)
{
	char *end;
	long v = strtol(text, &end, 10);

	if (end == text)
		sb_json_str(sb, text);
	else
		sb_printf(sb, "%ld", v);
}

/* A sysfs integer, or the literal null when the file is absent. */
static void sb_file_int(struct sbuf *sb, const char *path)
{
	char *text = read_text(path);

	if (!text) {
		sb_printf(sb, "null");
		return;
	}
	sb_text_int(sb, text);
	free(text);
}

/* "A B C" -> ["A","B","C"] */
static void sb_words(struct sbuf *sb, const char *text)
{
	const char *p = text;
	int first = 1;

	sb_printf(sb, "[");
	while (*p) {
		size_t n;

		while (*p == ' ' || *p == '\n')
			p++;
		n = strcspn(p, " \n");
		if (!n)
			break;
		sb_printf(sb, "%s", first ? "" : ",");
		sb_json_strn(sb, p, n);
		first = 0;
		p += n;
	}
	sb_printf(sb, "]");
}

static void sb_file_str(struct sbuf *sb, const char *path)
{
	char *text = read_text(path);

	sb_json_str(sb, text);
	free(text);
}

static void cpus_json(struct sbuf *sb)
{
	static const struct {
		const char *key, *file;
	} attrs[] = {
		{ "capacity", "cpu_capacity" },
		{ "cluster_id", "topology/cluster_id" },
		{ "core_id", "topology/core_id" },
		{ "package_id", "topology/physical_package_id" },
	};
	char path[256];
	size_t i;
	int cpu;

	sb_printf(sb, "\"cpus\":[");
	for (cpu = 0;; cpu++) {
		snprintf(path, sizeof(path), CPU_DIR "/cpu%d", cpu);
		if (access(path, F_OK))
			break;
		sb_printf(sb, "%s{\"cpu\":%d,\"online\":", cpu ? "," : "", cpu);
		snprintf(path, sizeof(path), CPU_DIR "/cpu%d/online", cpu);
		if (access(path, F_OK))
			sb_printf(sb, "1");	/* no CPU hotplug (or the boot CPU): always online */
		else
			sb_file_int(sb, path);
		for (i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
			sb_printf(sb, ",\"%s\":", attrs[i].key);
			snprintf(path, sizeof(path), CPU_DIR "/cpu%d/%s", cpu, attrs[i].file);
			sb_file_int(sb, path);
		}
		sb_printf(sb, "}");
	}
	sb_printf(sb, "]");
}

/*
 * The CPUs domain @level of @cpu spans, from /proc/schedstat
 * (CONFIG_SCHEDSTATS: "cpuN ..." lines, each followed by "domainM <mask> ..."
 * lines, the mask in hex with a comma every 32 bits), as a JSON array;
 * null when the file or the line is missing. debugfs has no span file.
 */
static void sb_domain_span(struct sbuf *sb, const char *schedstat, int cpu, int level)
{
	const char *line = schedstat;
	unsigned long long mask = 0;
	int in_cpu = 0, bit, first = 1;
	char word[16];

	while (line && *line) {
		int n, m;

		if (sscanf(line, "cpu%d ", &n) == 1)
			in_cpu = n == cpu;
		else if (in_cpu && sscanf(line, "domain%d ", &m) == 1 && m == level)
			break;
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	if (!line || !*line) {
		sb_printf(sb, "null");
		return;
	}
	line = strchr(line, ' ');
	for (line++; *line && *line != ' ' && *line != '\n'; line++) {
		if (*line == ',')
			continue;
		snprintf(word, sizeof(word), "%c", *line);
		mask = mask << 4 | strtoull(word, NULL, 16);
	}
	sb_printf(sb, "[");
	for (bit = 0; bit < 64; bit++) {
		if (mask & 1ULL << bit) {
			sb_printf(sb, "%s%d", first ? "" : ",", bit);
			first = 0;
		}
	}
	sb_printf(sb, "]");
}

/* Scheduling domains from debugfs (CONFIG_SCHED_DEBUG), lowest level first. */
static void domains_json(struct sbuf *sb)
{
	char *schedstat = read_text("/proc/schedstat");
	char path[256];
	int cpu, level;

	sb_printf(sb, "\"sched_domains\":");
	if (access(DOMAINS_DIR, F_OK)) {
		sb_printf(sb, "null");
		free(schedstat);
		return;
	}
	sb_printf(sb, "{");
	for (cpu = 0;; cpu++) {
		snprintf(path, sizeof(path), DOMAINS_DIR "/cpu%d", cpu);
		if (access(path, F_OK))
			break;
		sb_printf(sb, "%s\"%d\":[", cpu ? "," : "", cpu);
		for (level = 0;; level++) {
			char *flags;

			snprintf(path, sizeof(path), DOMAINS_DIR "/cpu%d/domain%d", cpu, level);
			if (access(path, F_OK))
				break;
			sb_printf(sb, "%s{\"name\":", level ? "," : "");
			snprintf(path, sizeof(path), DOMAINS_DIR "/cpu%d/domain%d/name", cpu, level);
			sb_file_str(sb, path);
			sb_printf(sb, ",\"flags\":");
			snprintf(path, sizeof(path), DOMAINS_DIR "/cpu%d/domain%d/flags", cpu, level);
			flags = read_text(path);
			if (flags)
				sb_words(sb, flags);
			else
				sb_printf(sb, "null");
			free(flags);
			sb_printf(sb, ",\"span\":");
			sb_domain_span(sb, schedstat, cpu, level);
			sb_printf(sb, "}");
		}
		sb_printf(sb, "]");
	}
	sb_printf(sb, "}");
	free(schedstat);
}

/*
 * The policies' own knobs: their periods, bounds and the time scale, as
 * the kernel holds them when the applications start. A report counts the
 * ranking periods and quanta a run spans from these, not from defaults.
 * Read again after the mix (policy_knobs_json), the read-only counters
 * among them (kernel.sched_colab_work, kernel.sched_wash_stats) say what
 * each policy's periodic work did over the run.
 */
static int policy_knob(const struct dirent *d)
{
	return !strncmp(d->d_name, "sched_colab_", strlen("sched_colab_")) ||
	       !strncmp(d->d_name, "sched_wash_", strlen("sched_wash_")) ||
	       !strncmp(d->d_name, "sched_eef_", strlen("sched_eef_")) ||
	       !strncmp(d->d_name, "sched_acfs_", strlen("sched_acfs_")) ||
	       !strcmp(d->d_name, "sched_timescale");
}

void policy_knobs_json(struct sbuf *sb)
{
	struct dirent **names;
	/* room for any d_name: glibc's holds 256 bytes */
	char path[sizeof(SYSCTL_DIR "/") + sizeof(((struct dirent *)0)->d_name)];
	int n, i, first = 1;

	n = scandir(SYSCTL_DIR, &names, policy_knob, alphasort);
	if (n < 0) {
		sb_printf(sb, "null");	/* not "no knobs": none could be listed */
		return;
	}
	sb_printf(sb, "{");
	for (i = 0; i < n; i++) {
		char *text;

		snprintf(path, sizeof(path), SYSCTL_DIR "/%s", names[i]->d_name);
		/* write-only knobs (triggers) have nothing to read */
		text = read_text(path);
		if (text) {
			sb_printf(sb, "%s", first ? "" : ",");
			sb_json_str(sb, names[i]->d_name);
			sb_printf(sb, ":");
			sb_text_int(sb, text);
			first = 0;
		}
		free(text);
		free(names[i]);
	}
	free(names);
	sb_printf(sb, "}");
}

static void amp_json(struct sbuf *sb)
{
	char *available;

	sb_printf(sb, "\"amp\":");
	if (access(AMP_POLICY_FILE, F_OK)) {
		sb_printf(sb, "null");	/* a kernel without CONFIG_SCHED_AMP */
		return;
	}
	sb_printf(sb, "{\"policy\":");
	sb_file_str(sb, AMP_POLICY_FILE);
	sb_printf(sb, ",\"available\":");
	available = read_text(AMP_AVAILABLE_FILE);
	if (available)
		sb_words(sb, available);
	else
		sb_printf(sb, "null");
	free(available);
	sb_printf(sb, ",\"stats\":");
	sb_file_str(sb, AMP_STATS_FILE);
	sb_printf(sb, ",\"knobs\":");
	policy_knobs_json(sb);
	sb_printf(sb, "}");
}

void sysinfo_json(struct sbuf *sb)
{
	struct utsname u;

	sb_printf(sb, "{\"kernel\":");
	if (uname(&u) == 0) {
		sb_printf(sb, "{\"release\":");
		sb_json_str(sb, u.release);
		sb_printf(sb, ",\"version\":");
		sb_json_str(sb, u.version);
		sb_printf(sb, ",\"machine\":");
		sb_json_str(sb, u.machine);
		sb_printf(sb, "}");
	} else {
		sb_printf(sb, "null");
	}
	sb_printf(sb, ",\"cmdline\":");
	sb_file_str(sb, "/proc/cmdline");
	/* what sched_clock and the scheduler's time stamps follow */
	sb_printf(sb, ",\"clocksource\":");
	sb_file_str(sb, "/sys/devices/system/clocksource/clocksource0/current_clocksource");
	sb_printf(sb, ",");
	cpus_json(sb);
	sb_printf(sb, ",");
	domains_json(sb);
	sb_printf(sb, ",");
	amp_json(sb);
}

int set_amp_stats(int on)
{
	int fd, err = 0;

	fd = open(AMP_STATS_FILE, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if (write(fd, on ? "1" : "0", 1) != 1)
		err = errno ? errno : EIO;
	close(fd);
	return err;
}

int set_amp_policy(const char *name, char *in_force, size_t len)
{
	int err = write_text(AMP_POLICY_FILE, name);
	char *now;

	if (in_force && len) {
		now = read_text(AMP_POLICY_FILE);
		snprintf(in_force, len, "%s", now ? now : "");
		free(now);
	}
	return err;
}
