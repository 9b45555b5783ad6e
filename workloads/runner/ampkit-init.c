// SPDX-License-Identifier: GPL-2.0
/*
 * ampkit-init: the guest runner, PID 1 of the kit's initramfs.
 *
 * It mounts the pseudo file systems, reads a run description, records what
 * the kernel believes about the machine, sets the scheduling policy, starts
 * every application of the mix at the same moment, waits for them (killing
 * any that outlive the run's time limit), prints one JSON record per
 * application between fixed markers on the console, and powers off (or,
 * on gem5, leaves the simulation).
 *
 * Under the restart method (the usual way to measure a multi-program mix)
 * an application that finishes while others still run is started again,
 * so that every application meets the same competition until the last
 * one completes; only each application's first completion is recorded as
 * its result, and the restarts still running at the end are killed.
 *
 * The run description (workloads/README.md) is a small line format:
 *
 *   ampkit-run 1
 *   run_id <id>
 *   policy <name>
 *   repetition <n>
 *   timeout_s <seconds>
 *   method once|restart        (default once)
 *   m5ops 0|1                  (gem5: reset the statistics as the
 *                               measured run starts and dump them when its
 *                               last first run ends; mark each first run
 *                               with work_begin/work_end, id = its index;
 *                               end with m5 exit; default 0)
 *   warmup_ms <ms>             (run the mix's programs this long first,
 *                               then kill them; default 0, no warm-up)
 *   app <name> <instance> <threads> <speedup_q10> <argv0> [args...]
 *   inputs <dir>               (the app above runs in a directory of its
 *                               own that links every entry of <dir>)
 *   start_delay_us <us>        (the app above starts its first run this
 *                               long after the others' release: a seeded
 *                               perturbation, ampkit/perturb.py; 0 to
 *                               1000000, default 0)
 *   epi_big_pj <pJ>            (the app above's predicted energy per
 *                               instruction on a big CPU, handed to the
 *                               kernel like the speedup; 1 to 1000000)
 *   until <index>              (the measured run ends when the app of this
 *                               index, 0 for the first, completes its first
 *                               run; the others, load beside it, are
 *                               stopped there, their records "stopped";
 *                               for profiling one application beside
 *                               co-runners, ampkit/corun.py)
 *   cpus <cpu>,<cpu>...        (the app above's instances run on these
 *                               CPUs alone: their allowed CPUs, set before
 *                               the gate opens, so every thread inherits
 *                               them; for profiling one application beside
 *                               others on chosen clusters, ampkit/interference.py)
 *   env <NAME>=<value>         (in every application's environment)
 *   pmu <EVENT>,<EVENT>...     (count these PMU events over each first
 *                               run, INST_RETIRED first: the speedup
 *                               model's training data, pmu.h; none by
 *                               default, since counting costs every
 *                               context switch of the counted threads)
 *   disk <device> <mountpoint> (an ext4 disk, mounted read-only first)
 *   online <period_us> <min_instructions>
 *                              (run ampkit-online, the online speedup
 *                               model, over the measured run: every
 *                               period it predicts each thread's speedup
 *                               from its PMU counts and hands it to the
 *                               kernel; ampkit-online.c)
 *   online_model big|little <intercept> <EVENT>=<coefficient>...
 *                              (the model of each core type it reads)
 *   trace <system>:<event>,...  (enable these kernel tracepoints over the
 *                               measured run, from the release to the last
 *                               first completion, on CLOCK_MONOTONIC; each
 *                               sched_migrate_task with its kernel stack;
 *                               the trace follows the results: on the
 *                               console between markers, or with m5ops
 *                               through the simulator into its output
 *                               directory, TRACE_FILE; at most
 *                               MAX_TRACE_EVENTS)
 *
 * As init it reads it from /ampkit/run.desc, or, booted with ampkit_desc=m5
 * on gem5, from the simulator after a checkpoint (read_desc_from_simulator).
 * Run as an ordinary process (not PID 1) it mounts nothing and does not
 * power off, which is how the host-side tests exercise it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sbuf.h"
#include "ampctl.h"
#include "daemon.h"
#include "m5ops.h"
#include "online.h"
#include "pmu.h"
#include "ampkit_workload.h"
#include "sysinfo.h"

#define DEFAULT_DESC "/ampkit/run.desc"
#define RESULTS_BEGIN "==== AMPKIT RESULTS BEGIN v1 ===="
#define RESULTS_END "==== AMPKIT RESULTS END count=%d ===="
#define RECORD "@ampkit "

#define MAX_APPS 64
#define MAX_ARGS 32
#define MAX_DAEMON_ARGS 16
#define DAEMON_ARGS_TEXT "16"
#define MAX_ENV 16
#define MAX_THREADS 1024
#define OUTPUT_TAIL 16384	/* bytes of each application's output kept */
#define MAX_START_DELAY_US 1000000	/* ampkit/perturb.py: MAX_US */
#define MAX_EPI_BIG_PJ 1000000		/* the kernel's COLAB_EPI_PJ_MAX */
#define MAX_TRACE_EVENTS 16
#define TRACEFS "/sys/kernel/tracing"
/*
 * The ring buffers' whole size, shared among the CPUs: some 350,000
 * scheduler events of about 45 bytes, far more than the runs the kit sizes
 * log (a QEMU run of seven threads handing work on: hundreds to a few
 * thousand), and as text (about 2.5 times as long) well inside what the
 * host keeps of a console (ampkit/engines/qemu.py: MAX_CONSOLE_BYTES).
 * What a run overflows is counted (lost=) and the host refuses the trace.
 */
#define TRACE_BUFFER_TOTAL_KB 16384
#define TRACE_BUFFER_MIN_KB 1024
/* The simulator copies the trace out of guest memory a chunk at a time. */
#define TRACE_CHUNK (1 << 20)
#define TRACE_FILE "ampkit-trace.txt"	/* ampkit/tracing.py: GEM5_FILE */
#define TRACE_BEGIN "==== AMPKIT TRACE BEGIN v1 ===="
#define TRACE_END "==== AMPKIT TRACE END lines=%ld lost=%ld ===="

struct app {
	char *name;
	int instance;
	int threads;
	int speedup_q10;
	char *argv[MAX_ARGS + 1];
	char *inputs;	/* a directory whose entries each instance sees in its own */
	int start_delay_us;	/* the first run's release after the others' */
	/*
	 * errno of applying the speedup hint, 0 if applied or none. A kernel
	 * without the kit's patches (the host, in tests) cannot take it; the
	 * record says so and only a kit kernel's refusal fails the app.
	 */
	int speedup_err;
	/* The energy per instruction hint (pJ, 0: none) and its errno, alike */
	int epi_big_pj;
	int epi_err;
	/* The CPUs its instances run on (a cpus line), if has_cpus */
	cpu_set_t cpus;
	int has_cpus;
	/* The first run's PMU events, where the run counts them */
	struct pmu_counts pmu;

	pid_t pid;			/* the instance running now, or 0 */
	/* The first run: the one that counts. */
	uint64_t start_ns, end_ns;
	int wstatus;
	int done, timed_out;
	int stopped;	/* its first run stopped when the until app completed */
	char out_path[PATH_MAX], report_path[PATH_MAX];
	/* Restarts: how many began, how many completed, the first failure. */
	int restarts, restarts_completed, restart_failed, restart_wstatus;
	char restart_out_path[PATH_MAX], restart_report_path[PATH_MAX];
};

struct run {
	char *run_id;
	char *policy;
	int repetition;
	int timeout_s;
	int restart;	/* the restart method */
	int until;	/* the app whose first run ends the run, or -1: all of them */
	int m5ops;	/* on gem5: work items and m5 exit */
	int warmup_ms;	/* the warm-up before the measured run */
	char *pmu;	/* the PMU events to count over each first run, or NULL */
	char *disk_dev, *disk_mnt;	/* the benchmark disk (PARSEC images) */
	char *env[MAX_ENV];
	int nenv;
	/* the online speedup model: period_us 0 when the run has none */
	int online_period_us, online_min_instructions;
	char *online_model[ONLINE_CORES];	/* "<intercept> <EVENT>=<coef>..." */
	char *trace_events[MAX_TRACE_EVENTS];	/* "system:event", none: no trace */
	int ntrace_events;
	/* a user-level policy's daemon: its program's name, its arguments, NULL */
	char *policy_daemon[MAX_DAEMON_ARGS + 2];
	/* what it is told before anything else, "data <words>\n" lines */
	struct sbuf policy_data;
	int napps;
	struct app apps[MAX_APPS];
};

static int is_init;
static int console_fd = STDOUT_FILENO;

static void emit(struct sbuf *line)
{
	sb_printf(line, "\n");
	sb_write(line, console_fd);
}

static void say(const char *fmt, const char *arg)
{
	struct sbuf sb;

	sb_init(&sb);
	sb_printf(&sb, "ampkit-init: ");
	sb_printf(&sb, fmt, arg);
	emit(&sb);
	sb_free(&sb);
}

/* 'm5ops 1' in a run as init: only then do gem5's instructions run (m5ops.h). */
static int use_m5ops;

static __attribute__((noreturn)) void finish(int code)
{
	if (is_init) {
		sync();
		if (use_m5ops)
			m5_exit(0);
		reboot(RB_POWER_OFF);
		for (;;)
			pause();
	}
	exit(code);
}

/* A runner-level failure: reported as a record the host turns into the run's status. */
static __attribute__((noreturn)) void fail(const char *what, const char *detail)
{
	struct sbuf sb;

	sb_init(&sb);
	sb_printf(&sb, RECORD "{\"type\":\"error\",\"error\":");
	if (detail) {
		struct sbuf msg;

		sb_init(&msg);
		sb_printf(&msg, "%s: %s", what, detail);
		sb_json_str(&sb, msg.data);
		sb_free(&msg);
	} else {
		sb_json_str(&sb, what);
	}
	sb_printf(&sb, "}");
	emit(&sb);
	sb_free(&sb);
	finish(1);
}

static void mount_fs(const char *src, const char *target, const char *type)
{
	mkdir(target, 0755);
	if (mount(src, target, type, 0, NULL) && errno != EBUSY)
		fail("cannot mount", target);
}

/*
 * Info-level kernel messages on the console could land in the middle of a
 * result line. Keep warnings and worse on the console (console loglevel 5
 * prints levels 0-4); everything still reaches the kernel log.
 */
static void quiet_console(void)
{
	int fd = open("/proc/sys/kernel/printk", O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (write(fd, "5", 1) < 0)
			say("cannot lower the console loglevel: %s", strerror(errno));
		close(fd);
	}
}

static void mount_all(void)
{
	mount_fs("proc", "/proc", "proc");
	mount_fs("sysfs", "/sys", "sysfs");
	mount_fs("debugfs", "/sys/kernel/debug", "debugfs");
	mount_fs("devtmpfs", "/dev", "devtmpfs");
	mount_fs("tmpfs", "/tmp", "tmpfs");
}

/*
 * The benchmark disk, read-only: the image file stays as built (and on
 * gem5 the same image serves every run restored from one checkpoint). Run
 * as an ordinary process the mountpoint is taken to be a directory already.
 */
static void mount_disk(const struct run *run)
{
	struct stat st;

	if (!run->disk_dev)
		return;
	if (is_init) {
		mkdir(run->disk_mnt, 0755);
		if (mount(run->disk_dev, run->disk_mnt, "ext4", MS_RDONLY, NULL))
			fail("cannot mount the benchmark disk", strerror(errno));
	} else if (stat(run->disk_mnt, &st) || !S_ISDIR(st.st_mode)) {
		fail("the benchmark disk's mountpoint is not a directory", run->disk_mnt);
	}
}

/* --- the run description ---------------------------------------------- */

/*
 * On gem5 the run description is not in the image: one image, booted
 * once, and one checkpoint serve every run. Booted with ampkit_desc=m5
 * (the kernel hands init that environment variable), the runner asks for
 * a checkpoint here; each run restored from it resumes here and reads the
 * description the simulator was given for it (m5 readfile).
 */
static char *read_desc_from_simulator(void)
{
	size_t cap = 64 << 10, len = 0;
	char *buf = malloc(cap + 1);
	uint64_t got;

	if (!buf)
		fail("out of memory", NULL);
	/* gem5 writes through the guest's page tables: map every page first */
	memset(buf, 0, cap + 1);
	say("%s", "asking the simulator for a checkpoint");
	m5_checkpoint();
	say("%s", "reading the run description from the simulator");
	while ((got = m5_readfile(buf + len, cap - len, len)) > 0) {
		len += (size_t)got;
		if (len == cap)
			fail("run description: over 64 KiB from the simulator", NULL);
	}
	if (!len)
		fail("the simulator gave no run description (m5 readfile)", NULL);
	buf[len] = '\0';
	return buf;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *s == '\0' || *end != '\0' || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

static int split(char *line, char **words, int max)
{
	int n = 0;
	char *save, *w;

	for (w = strtok_r(line, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (n == max)
			return -1;
		words[n++] = w;
	}
	return n;
}

static void parse_app(struct run *run, char **w, int n, int lineno)
{
	struct app *app;
	char where[32];
	int i;

	snprintf(where, sizeof(where), "line %d", lineno);
	if (n < 6)
		fail("run description: app needs name, instance, threads, speedup and a program",
		     where);
	if (run->napps == MAX_APPS)
		fail("run description: too many applications", where);
	if (n - 5 > MAX_ARGS)
		fail("run description: too many arguments", where);
	app = &run->apps[run->napps++];
	app->name = w[1];
	if (parse_int(w[2], 0, 1 << 20, &app->instance) ||
	    parse_int(w[3], 1, MAX_THREADS, &app->threads) ||
	    parse_int(w[4], 0, 1 << 20, &app->speedup_q10))
		fail("run description: bad instance, threads or speedup", where);
	for (i = 5; i < n; i++)
		app->argv[i - 5] = w[i];
	app->argv[n - 5] = NULL;
}

/* "online_model big|little <intercept> <EVENT>=<coef>...", checked as ampkit-online reads it. */
static void parse_online_model(struct run *run, char **w, int n, int lineno)
{
	struct online_model model;
	const char *bad = NULL;
	struct sbuf text;
	char where[32];
	int type, i;

	snprintf(where, sizeof(where), "line %d", lineno);
	type = n > 1 && !strcmp(w[1], "big") ? ONLINE_BIG :
	       n > 1 && !strcmp(w[1], "little") ? ONLINE_LITTLE : -1;
	if (type < 0 || run->online_model[type])
		fail("run description: online_model needs big or little (each once)", where);
	if (online_model_parse(&model, w + 2, n - 2, &bad))
		fail("run description: online_model needs '<intercept> <EVENT>=<coefficient>...' "
		     "(events pmu.c knows but INST_RETIRED, each once, at most 5); not", bad);
	sb_init(&text);
	for (i = 2; i < n; i++)
		sb_printf(&text, "%s%s", i > 2 ? " " : "", w[i]);
	run->online_model[type] = text.data;
}

/* The trace line: system:event names, comma-separated, each a tracefs path. */
static void parse_trace(struct run *run, char *list, int lineno)
{
	char *save, *name;
	char where[32];

	snprintf(where, sizeof(where), "line %d", lineno);
	for (name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		const char *colon = strchr(name, ':');

		if (!colon || colon == name || !colon[1] || strchr(colon + 1, ':') ||
		    strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_:") != strlen(name))
			fail("run description: trace needs system:event names (lower case, digits "
			     "and _), not", name);
		if (run->ntrace_events == MAX_TRACE_EVENTS)
			fail("run description: trace takes at most 16 events", where);
		run->trace_events[run->ntrace_events++] = name;
	}
	if (!run->ntrace_events)
		fail("run description: trace needs at least one system:event", where);
}

/*
 * "policy_daemon <program> [<argument>...]": a user-level policy's daemon,
 * one of the kit's (ampkit-<name> in /bin), beside the run. The runner
 * adds its log and ready arguments (-l, -R) itself.
 */
static void parse_policy_daemon(struct run *run, char **w, int n, int lineno)
{
	const char *name = n >= 2 ? w[1] : "";
	char where[32];
	int i;

	snprintf(where, sizeof(where), "line %d", lineno);
	if (run->policy_daemon[0])
		fail("run description: one policy_daemon line at most", where);
	if (strncmp(name, "ampkit-", 7) || !name[7] ||
	    strspn(name + 7, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(name + 7) ||
	    strstr(name, "--") || name[strlen(name) - 1] == '-' || !strcmp(name, "ampkit-init") ||
	    !strcmp(name, "ampkit-online") || !strcmp(name, "ampkit-probe") ||
	    !strcmp(name, "ampkit-schedtest") || !strcmp(name, "ampkit-selftest"))
		fail("run description: policy_daemon needs the name of a kit daemon, ampkit-<name> "
		     "in lower case (not the runner, the online model's or a test program), then "
		     "its arguments", where);
	if (n - 2 > MAX_DAEMON_ARGS)
		fail("run description: policy_daemon takes at most " DAEMON_ARGS_TEXT " arguments",
		     where);
	for (i = 1; i < n; i++)
		run->policy_daemon[i - 1] = w[i];
	run->policy_daemon[n - 1] = NULL;
}

static void parse_desc(char *text, struct run *run)
{
	char *save, *line;
	char *w[MAX_ARGS + 8];
	char where[32];
	int lineno = 0, n, seen_header = 0;

	run->timeout_s = 600;
	run->until = -1;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		lineno++;
		snprintf(where, sizeof(where), "line %d", lineno);
		n = split(line, w, MAX_ARGS + 8);
		if (n < 0)
			fail("run description: line too long", where);
		if (n == 0 || w[0][0] == '#')
			continue;
		if (!seen_header) {
			if (n != 2 || strcmp(w[0], "ampkit-run") || strcmp(w[1], "1"))
				fail("run description: first line must be 'ampkit-run 1'", where);
			seen_header = 1;
		} else if (!strcmp(w[0], "app")) {
			parse_app(run, w, n, lineno);
		} else if (!strcmp(w[0], "online_model")) {
			parse_online_model(run, w, n, lineno);
		} else if (!strcmp(w[0], "online")) {
			if (n != 3 || parse_int(w[1], 100, 10000000, &run->online_period_us) ||
			    parse_int(w[2], 0, 1 << 30, &run->online_min_instructions))
				fail("run description: online needs a period of 100 to 10000000 us and a "
				     "minimum of instructions", where);
		} else if (!strcmp(w[0], "policy_daemon")) {
			parse_policy_daemon(run, w, n, lineno);
		} else if (!strcmp(w[0], "policy_data")) {
			int i;

			if (n < 2)
				fail("run description: policy_data needs words for the policy daemon",
				     where);
			if (!run->policy_data.data)
				sb_init(&run->policy_data);
			sb_printf(&run->policy_data, "data");
			for (i = 1; i < n; i++)
				sb_printf(&run->policy_data, " %s", w[i]);
			sb_printf(&run->policy_data, "\n");
		} else if (!strcmp(w[0], "disk")) {
			if (n != 3 || w[2][0] != '/')
				fail("run description: disk needs a device and an absolute mountpoint",
				     where);
			run->disk_dev = w[1];
			run->disk_mnt = w[2];
		} else if (n != 2) {
			fail("run description: expected 'key value'", where);
		} else if (!strcmp(w[0], "run_id")) {
			run->run_id = w[1];
		} else if (!strcmp(w[0], "policy")) {
			run->policy = w[1];
		} else if (!strcmp(w[0], "repetition")) {
			if (parse_int(w[1], 0, 1 << 20, &run->repetition))
				fail("run description: bad repetition", where);
		} else if (!strcmp(w[0], "timeout_s")) {
			if (parse_int(w[1], 1, 1 << 24, &run->timeout_s))
				fail("run description: bad timeout_s", where);
		} else if (!strcmp(w[0], "method")) {
			if (strcmp(w[1], "once") && strcmp(w[1], "restart"))
				fail("run description: method must be once or restart", where);
			run->restart = !strcmp(w[1], "restart");
		} else if (!strcmp(w[0], "m5ops")) {
			if (parse_int(w[1], 0, 1, &run->m5ops))
				fail("run description: m5ops must be 0 or 1", where);
		} else if (!strcmp(w[0], "pmu")) {
			run->pmu = w[1];
		} else if (!strcmp(w[0], "trace")) {
			parse_trace(run, w[1], lineno);
		} else if (!strcmp(w[0], "warmup_ms")) {
			if (parse_int(w[1], 0, 600000, &run->warmup_ms))
				fail("run description: warmup_ms must be 0 to 600000", where);
		} else if (!strcmp(w[0], "inputs")) {
			if (!run->napps || w[1][0] != '/')
				fail("run description: inputs needs an app line before it and an absolute directory",
				     where);
			run->apps[run->napps - 1].inputs = w[1];
		} else if (!strcmp(w[0], "start_delay_us")) {
			if (!run->napps ||
			    parse_int(w[1], 0, MAX_START_DELAY_US,
				      &run->apps[run->napps - 1].start_delay_us))
				fail("run description: start_delay_us needs an app line before it and 0 to 1000000",
				     where);
		} else if (!strcmp(w[0], "epi_big_pj")) {
			if (!run->napps ||
			    parse_int(w[1], 1, MAX_EPI_BIG_PJ, &run->apps[run->napps - 1].epi_big_pj))
				fail("run description: epi_big_pj needs an app line before it and 1 to 1000000",
				     where);
		} else if (!strcmp(w[0], "until")) {
			if (run->until >= 0 || parse_int(w[1], 0, MAX_APPS - 1, &run->until))
				fail("run description: until needs an application's index (one line)",
				     where);
		} else if (!strcmp(w[0], "cpus")) {
			if (!run->napps || run->apps[run->napps - 1].has_cpus ||
			    parse_cpu_list(w[1], &run->apps[run->napps - 1].cpus))
				fail("run description: cpus needs an app line before it (one each) and CPU numbers, comma separated",
				     where);
			run->apps[run->napps - 1].has_cpus = 1;
		} else if (!strcmp(w[0], "env")) {
			if (!strchr(w[1], '=') || w[1][0] == '=' || run->nenv == MAX_ENV)
				fail("run description: env needs NAME=value (at most 16)", where);
			run->env[run->nenv++] = w[1];
		} else {
			fail("run description: unknown key", w[0]);
		}
	}
	if (!seen_header)
		fail("run description is empty", NULL);
	if (!run->run_id || run->napps == 0)
		fail("run description needs a run_id and at least one app", NULL);
	if (run->until >= run->napps)
		fail("run description: until names an application the run does not have", NULL);
	if (run->until >= 0 && !run->restart)
		fail("run description: until needs method restart (the others are load while it runs)",
		     NULL);
	if (run->policy_data.data && !run->policy_daemon[0])
		fail("run description: policy_data lines without a policy_daemon to give them to",
		     NULL);
	for (n = 0; run->policy_daemon[0] && n < run->napps; n++)
		if (run->apps[n].has_cpus)
			fail("run description: cpus lines and a policy_daemon would both set the applications' CPUs",
			     NULL);
	if (!run->online_period_us != !(run->online_model[ONLINE_BIG] || run->online_model[ONLINE_LITTLE]))
		fail("run description: online and online_model go together", NULL);
	/* both at once would outnumber the PMU's counters, which gem5 v24 then miscounts */
	if (run->online_period_us && run->pmu)
		fail("run description: pmu and online cannot count at once", NULL);
	for (n = 0; run->pmu && n < run->napps; n++) {
		const char *bad = NULL;
		char *copy = strdup(run->pmu);

		if (!copy)
			fail("out of memory", NULL);
		if (pmu_parse(&run->apps[n].pmu, copy, &bad))
			fail("run description: pmu needs INST_RETIRED first, then at most 7 more of "
			     "the events ampkit/pmu.py names, not", bad);
	}
}

static char *read_file(const char *path)
{
	char *text = read_text(path);

	if (!text)
		fail("cannot read the run description", path);
	return text;
}

/* --- running the mix ----------------------------------------------------- */

static void set_policy(const struct run *run)
{
	char in_force[64];
	int err;

	if (!run->policy)
		return;
	if (access(AMP_POLICY_FILE, F_OK)) {
		/* A kernel without CONFIG_SCHED_AMP runs plain CFS and nothing else. */
		if (strcmp(run->policy, "cfs"))
			fail("this kernel has no AMP policies (no " AMP_POLICY_FILE ")",
			     run->policy);
		return;
	}
	err = set_amp_policy(run->policy, in_force, sizeof(in_force));
	if (err)
		fail("the kernel rejected the policy", run->policy);
	if (strcmp(in_force, run->policy))
		fail("the policy did not take effect; in force", in_force);
	/*
	 * The per-task counters (time on big and little CPUs, futex waiting)
	 * are kept under every policy alike, so that cfs is measured as the
	 * others are: the same instrumentation, and numbers to compare.
	 */
	err = set_amp_stats(1);
	if (err && err != ENOENT)
		fail("could not keep the per-task counters", AMP_STATS_FILE);
}

/* What every application gets beside its own: set once the description is read. */
static const struct run *the_run;
static const char *work_root;

/*
 * A fresh directory for this instance in which every entry of the app's
 * input directory appears as a link: programs read their inputs and write
 * their outputs where they stand (PARSEC's do), instances never share
 * outputs, and the inputs (on a read-only disk) are never copied.
 */
static int enter_inputs(const struct app *app, int index)
{
	char dir[PATH_MAX], from[PATH_MAX], to[PATH_MAX];
	struct dirent *e;
	DIR *d;

	if (snprintf(dir, sizeof(dir), "%s/app%d.%d.d", work_root, index, (int)getpid()) >=
	    (int)sizeof(dir) || mkdir(dir, 0755))
		return -1;
	d = opendir(app->inputs);
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (snprintf(from, sizeof(from), "%s/%s", app->inputs, e->d_name) >=
		    (int)sizeof(from) ||
		    snprintf(to, sizeof(to), "%s/%s", dir, e->d_name) >= (int)sizeof(to) ||
		    symlink(from, to)) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	return chdir(dir);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) ? -1 : 0;
}

/*
 * An instance's directory of inputs (enter_inputs) goes once it has been
 * reaped, with whatever the program wrote there: restarts would otherwise
 * fill the runner's tmpfs, which is the guest's memory, for as long as the
 * mix runs.
 */
static void remove_inputs(const struct app *app, int index, pid_t pid)
{
	char dir[PATH_MAX];

	if (!app->inputs || snprintf(dir, sizeof(dir), "%s/app%d.%d.d", work_root, index,
				     (int)pid) >= (int)sizeof(dir))
		return;
	nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The last @max bytes of the file at @path into @buf; how many (0 if it cannot be read). */
static size_t read_tail(const char *path, char *buf, size_t max)
{
	ssize_t n = 0;
	off_t size;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		size = lseek(fd, 0, SEEK_END);
		lseek(fd, size > (off_t)max ? size - (off_t)max : 0, SEEK_SET);
		n = read(fd, buf, max);
		close(fd);
	}
	return n > 0 ? (size_t)n : 0;
}

/* --- daemons beside the run ---------------------------------------------- */

/*
 * Two guest daemons may run beside the measured run, each when the
 * description asks for it: ampkit-online, the online speedup model
 * ("online" lines), and a user-level policy's daemon ("policy_daemon").
 * Each is started after the warm-up and ready before the gate opens, told
 * on its standard input each instance the runner forks ("app <index>
 * <pid> <threads> <speedup_q10>") and each that ends ("end <index>
 * <pid>"), and stopped once the run is over by closing that pipe. One
 * that ends before then fails the run with its reason, and the run's
 * instances are killed with it: an estimate the kernel holds would stop
 * changing unseen, and no mask a policy daemon set outlives it.
 */
struct daemon {
	const char *what;	/* "the online speedup daemon", for the run's errors */
	const char *stem;	/* its log and error files: <tmpdir>/<stem>.jsonl, .err */
	int acks;		/* it answers each "sync" once it has acted on the batch */
	pid_t pid;
	int to;			/* the pipe it reads instances from; -1 when none */
	int from;		/* the pipe it said it was ready on, and acknowledges on */
	int ended;		/* reaped */
	int wstatus;
	struct rusage usage;	/* its CPU time, once reaped */
	char program[PATH_MAX];
	char log_path[PATH_MAX], err_path[PATH_MAX];
};

static struct daemon online = {
	.what = "the online speedup daemon", .stem = "online", .to = -1, .from = -1
};
static struct daemon policy_daemon = {
	.what = "the policy daemon", .stem = "policy", .acks = 1, .to = -1, .from = -1
};
static struct daemon *const daemons[] = { &online, &policy_daemon };
#define NDAEMONS (int)(sizeof(daemons) / sizeof(daemons[0]))

/* A daemon's path: /bin in the guest, beside the runner elsewhere (host tests). */
static void daemon_program(const char *name, char *path, size_t len)
{
	char self[PATH_MAX];
	ssize_t n;
	char *slash;

	if (is_init) {
		snprintf(path, len, "/bin/%s", name);
		return;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		fail("cannot find the runner's own directory", strerror(errno));
	self[n] = '\0';
	slash = strrchr(self, '/');
	*slash = '\0';
	if (snprintf(path, len, "%s/%s", self, name) >= (int)len)
		fail("the runner's directory is too long a path", self);
}

/* The last lines of what the daemon wrote to its standard error, for the run's error. */
static void daemon_reason(const struct daemon *d, char *out, size_t len)
{
	char buf[512];
	size_t n = read_tail(d->err_path, buf, sizeof(buf) - 1);

	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	if (WIFSIGNALED(d->wstatus))
		snprintf(out, len, "killed by signal %d (%s)%s%s", WTERMSIG(d->wstatus),
			 strsignal(WTERMSIG(d->wstatus)), n > 0 ? "; it said: " : "", buf);
	else
		snprintf(out, len, "exit status %d%s%s", WEXITSTATUS(d->wstatus),
			 n > 0 ? "; it said: " : "", buf);
}

/* Fails the run for @d, after @problem, with what @d said. */
static void daemon_fail(const struct daemon *d, const char *problem)
{
	char what[160], reason[700];

	snprintf(what, sizeof(what), "%s %s", d->what, problem);
	daemon_reason(d, reason, sizeof(reason));
	fail(what, reason);
}

/*
 * Reads one byte from @fd, waiting until the clock (ampkit_now_ns) reaches
 * @deadline_ns: what read() returned (1, or 0 at end of file), or -1 when
 * the time ran out first. The wait is for the time left, not the whole
 * again, so a signal cannot stretch it.
 */
static ssize_t read_byte_by(int fd, uint64_t deadline_ns)
{
	char c;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t now = ampkit_now_ns();
		int n;

		if (now >= deadline_ns)
			return -1;
		n = poll(&p, 1, (int)((deadline_ns - now + 999999) / 1000000));
		if (n < 0 && errno == EINTR)
			continue;
		return n == 1 ? read(fd, &c, 1) : -1;
	}
}

/*
 * Writes all of @len bytes to @d's input; 0, or -1 with errno. A daemon
 * that died unreaped must not kill the runner: SIGPIPE is ignored, EPIPE
 * returned, and its end says why.
 */
static int daemon_write(const struct daemon *d, const char *data, size_t len)
{
	struct sigaction ignore = { .sa_handler = SIG_IGN }, before;
	size_t done = 0;

	sigaction(SIGPIPE, &ignore, &before);
	while (done < len) {
		ssize_t n = write(d->to, data + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	sigaction(SIGPIPE, &before, NULL);
	return done == len ? 0 : -1;
}

/* How long a daemon may take to start (its models, the CPUs, the task hooks). */
#define DAEMON_READY_MS 10000
#define DAEMON_READY_TEXT "10 s"

/*
 * Starts @d: @args (NULL-terminated: the program's name, then its own
 * arguments) followed by "-l <log> -R <ready fd>", and waits until it
 * says it is ready.
 */
static void daemon_start(struct daemon *d, char *const *args, const char *tmpdir)
{
	char ready_arg[16];
	int to[2], ready[2], fd, argc = 0, i;
	ssize_t got;
	char *argv[MAX_DAEMON_ARGS + 8];

	daemon_program(args[0], d->program, sizeof(d->program));
	snprintf(d->log_path, sizeof(d->log_path), "%s/%s.jsonl", tmpdir, d->stem);
	snprintf(d->err_path, sizeof(d->err_path), "%s/%s.err", tmpdir, d->stem);
	if (pipe2(to, O_CLOEXEC) || pipe(ready))
		fail("cannot create a daemon's pipes", strerror(errno));
	/* the runner's end must not reach the applications it forks */
	fcntl(ready[0], F_SETFD, FD_CLOEXEC);
	snprintf(ready_arg, sizeof(ready_arg), "%d", ready[1]);
	argv[argc++] = d->program;
	for (i = 1; args[i] && argc <= MAX_DAEMON_ARGS; i++)
		argv[argc++] = args[i];
	argv[argc++] = "-l";
	argv[argc++] = d->log_path;
	argv[argc++] = "-R";
	argv[argc++] = ready_arg;
	argv[argc] = NULL;
	d->pid = fork();
	if (d->pid < 0)
		fail("cannot fork a daemon", strerror(errno));
	if (d->pid == 0) {
		close(ready[0]);
		dup2(to[0], STDIN_FILENO);
		fd = open(d->err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		execv(d->program, argv);
		fprintf(stderr, "cannot execute %s: %s\n", d->program, strerror(errno));
		_exit(127);
	}
	close(to[0]);
	close(ready[1]);
	d->to = to[1];
	/*
	 * Ready once it has read what it needs and the machine; end of file if
	 * it died first. A daemon stuck before then would hold the run until
	 * the engine's wall limit: it gets DAEMON_READY_MS of guest time.
	 */
	got = read_byte_by(ready[0], ampkit_now_ns() + DAEMON_READY_MS * 1000000ULL);
	if (d->acks)
		d->from = ready[0];
	else
		close(ready[0]);
	if (got != 1) {
		/* one that closed the pipe unready may live on: it must not hold the run */
		kill(d->pid, SIGKILL);
		wait4(d->pid, &d->wstatus, 0, &d->usage);
		d->ended = 1;
		daemon_fail(d, got < 0 ? "did not say it was ready in " DAEMON_READY_TEXT
					 " of guest time" : "did not start");
	}
}

static void start_online(const struct run *run, const char *tmpdir)
{
	char period[16], minimum[16];
	char *args[12];
	int n = 0;

	if (!run->online_period_us)
		return;
	snprintf(period, sizeof(period), "%d", run->online_period_us);
	snprintf(minimum, sizeof(minimum), "%d", run->online_min_instructions);
	args[n++] = "ampkit-online";
	if (run->online_model[ONLINE_BIG]) {
		args[n++] = "-B";
		args[n++] = run->online_model[ONLINE_BIG];
	}
	if (run->online_model[ONLINE_LITTLE]) {
		args[n++] = "-L";
		args[n++] = run->online_model[ONLINE_LITTLE];
	}
	args[n++] = "-p";
	args[n++] = period;
	args[n++] = "-m";
	args[n++] = minimum;
	args[n] = NULL;
	daemon_start(&online, args, tmpdir);
}

static void start_daemons(const struct run *run, const char *tmpdir)
{
	start_online(run, tmpdir);
	if (!run->policy_daemon[0])
		return;
	daemon_start(&policy_daemon, run->policy_daemon, tmpdir);
	/* its data ahead of the first batch, which it acts on with it */
	if (run->policy_data.data &&
	    daemon_write(&policy_daemon, run->policy_data.data, run->policy_data.len))
		say("cannot give the policy daemon its data: %s", strerror(errno));
}

/*
 * What the daemons are told comes in batches: every instance of the
 * gate's first run, or the instances a reap found ended and those it
 * started again. A batch is written at once and ends with "sync", so
 * that a daemon acts on all of it together (an instance's end and its
 * restart are one change, not two); a daemon that acknowledges is waited
 * for before the batch's instances are released.
 */
static struct sbuf batch;

static void batch_add(const char *line)
{
	int i;

	for (i = 0; i < NDAEMONS; i++)
		if (daemons[i]->to >= 0 && !daemons[i]->ended)
			break;
	if (i == NDAEMONS)
		return;	/* none to tell */
	if (!batch.data)
		sb_init(&batch);
	sb_printf(&batch, "%s", line);
}

static void daemons_announce(const struct app *app, int index, pid_t pid)
{
	char line[80];

	snprintf(line, sizeof(line), "app %d %d %d %d\n", index, (int)pid, app->threads,
		 app->speedup_q10);
	batch_add(line);
}

static void daemons_ended(int index, pid_t pid)
{
	char line[48];

	snprintf(line, sizeof(line), "end %d %d\n", index, (int)pid);
	batch_add(line);
}

/* How long a daemon that acknowledges may take to act on a batch, guest time. */
#define DAEMON_ACK_MS 2000

/*
 * Writes the batch to every daemon, then waits for those that acknowledge.
 * One that does not, within DAEMON_ACK_MS of guest time, is killed: the
 * run then fails for it where its end is noticed.
 */
static void daemons_flush(void)
{
	int i;

	if (!batch.data)
		return;
	sb_printf(&batch, "sync\n");
	for (i = 0; i < NDAEMONS; i++) {
		struct daemon *d = daemons[i];

		if (d->to < 0 || d->ended)
			continue;
		if (daemon_write(d, batch.data, batch.len))
			say("cannot tell a daemon about the instances: %s", strerror(errno));
		else if (d->acks &&
			 read_byte_by(d->from, ampkit_now_ns() + DAEMON_ACK_MS * 1000000ULL) != 1)
			kill(d->pid, SIGKILL);
	}
	sb_free(&batch);
}

/* Whether @pid, just reaped, was a daemon: then it ended before its time. */
static int daemon_reaped(pid_t pid, int wstatus, const struct rusage *usage)
{
	int i;

	for (i = 0; i < NDAEMONS; i++) {
		struct daemon *d = daemons[i];

		if (d->pid && pid == d->pid) {
			d->ended = 1;
			d->wstatus = wstatus;
			d->usage = *usage;
			return 1;
		}
	}
	return 0;
}

/* The first daemon that has ended, or NULL while none has. */
static const struct daemon *daemon_gone(void)
{
	int i;

	for (i = 0; i < NDAEMONS; i++)
		if (daemons[i]->pid && daemons[i]->ended)
			return daemons[i];
	return NULL;
}

/*
 * Ends @d once the run is over: end of file on its input, then its last
 * period and its summary. One that does not end within 10 s of guest
 * time, or ends badly, fails the run.
 */
static void daemon_stop(struct daemon *d)
{
	uint64_t deadline;

	if (!d->pid)
		return;
	close(d->to);
	d->to = -1;
	deadline = ampkit_now_ns() + 10000000000ULL;
	while (!d->ended) {
		if (wait4(d->pid, &d->wstatus, WNOHANG, &d->usage) == d->pid) {
			d->ended = 1;
			break;
		}
		if (ampkit_now_ns() >= deadline) {
			kill(d->pid, SIGKILL);
			wait4(d->pid, &d->wstatus, 0, &d->usage);
			daemon_fail(d, "did not end within 10 s of the run's end");
		}
		ampkit_sleep_ns(1000000);
	}
	if (!WIFEXITED(d->wstatus) || WEXITSTATUS(d->wstatus))
		daemon_fail(d, "failed");
}

static void stop_daemons(void)
{
	int i;

	for (i = 0; i < NDAEMONS; i++)
		daemon_stop(daemons[i]);
}

/*
 * Each daemon's log, one record a line, ahead of the applications'
 * records, then what it cost: its CPU time as the kernel counted it.
 */
static void daemon_records(void)
{
	char line[4096];
	struct sbuf sb;
	FILE *f;
	int i;

	for (i = 0; i < NDAEMONS; i++) {
		const struct daemon *d = daemons[i];

		if (!d->pid)
			continue;
		f = fopen(d->log_path, "re");
		if (!f) {
			char what[160];

			snprintf(what, sizeof(what), "%s left no log", d->what);
			fail(what, d->log_path);
		}
		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = '\0';
			if (!line[0])
				continue;
			sb_init(&sb);
			sb_printf(&sb, RECORD "%s", line);
			emit(&sb);
			sb_free(&sb);
		}
		fclose(f);
		sb_init(&sb);
		sb_printf(&sb, RECORD "{\"type\":\"daemon\",\"daemon\":");
		sb_json_str(&sb, strrchr(d->program, '/') ? strrchr(d->program, '/') + 1 :
			    d->program);
		sb_printf(&sb, ",\"cpu_ns\":%" PRIu64 "}", cpu_ns_of(&d->usage));
		emit(&sb);
		sb_free(&sb);
	}
}

static void start_child(struct app *app, int index, int first, const char *out_path,
			const char *report_path, int gate, const sigset_t *mask)
{
	char c, id[16];
	int fd, i;

	setpgid(0, 0);
	sigprocmask(SIG_SETMASK, mask, NULL);
	/* Block until the runner releases every application at once. */
	while (read(gate, &c, 1) < 0 && errno == EINTR)
		;
	close(gate);
	/*
	 * A first run with a start delay (the run's seeded perturbation) is
	 * released that much later: it sleeps, holding no CPU, as if it were
	 * still at the gate, and its gem5 work item begins when it starts.
	 * Restarts and the warm-up's instances start at once.
	 */
	if (first && app->start_delay_us) {
		ampkit_sleep_ns((uint64_t)app->start_delay_us * 1000ULL);
		if (use_m5ops)
			m5_work_begin((uint64_t)index, 0);
	}
	fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		close(fd);
	}
	fd = open(report_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0 && fd != 3) {
		dup2(fd, 3);
		close(fd);
	}
	setenv("AMPKIT_REPORT_FD", "3", 1);
	/* For programs that mark their own region of interest (PARSEC hooks). */
	snprintf(id, sizeof(id), "%d", index);
	setenv("AMPKIT_APP_ID", id, 1);
	/*
	 * Only the first run's region of interest is a gem5 work item: a
	 * restart is load for the others, and its samples would mix into the
	 * application's mean.
	 */
	if (use_m5ops && first)
		setenv("AMPKIT_M5OPS", "1", 1);
	for (i = 0; i < the_run->nenv; i++)
		putenv(the_run->env[i]);
	if (app->inputs && enter_inputs(app, index)) {
		fprintf(stderr, "ampkit-init: cannot prepare the inputs of %s from %s: %s\n",
			app->argv[0], app->inputs, strerror(errno));
		_exit(126);
	}
	execv(app->argv[0], app->argv);
	fprintf(stderr, "ampkit-init: cannot execute %s: %s\n", app->argv[0], strerror(errno));
	_exit(127);
}

static void kill_instances(const struct run *run);

/*
 * Forks an instance of @app held at @gate; applies the speedup hint before
 * the gate opens, so that every thread the program creates inherits it.
 */
static void fork_instance(struct app *app, int index, int first, int gate[2],
			  const sigset_t *mask)
{
	app->pid = fork();
	if (app->pid < 0)
		fail("cannot fork", strerror(errno));
	if (app->pid == 0) {
		close(gate[1]);
		start_child(app, index, first, first ? app->out_path : app->restart_out_path,
			    first ? app->report_path : app->restart_report_path, gate[0], mask);
	}
	/*
	 * The child makes itself a group leader too, but it may not have run
	 * yet: without this a kill of the group right after the fork would
	 * miss it, and the wait for it would block.
	 */
	setpgid(app->pid, app->pid);
	/*
	 * Its CPUs before the gate opens, as the hint: a CPU the machine does
	 * not have is the description's error, and no run of it means what it
	 * says.
	 */
	if (app->has_cpus) {
		const char *why = NULL;
		cpu_set_t got;

		/* the kernel takes a mask some of whose CPUs it lacks, and drops them */
		if (sched_setaffinity(app->pid, sizeof(app->cpus), &app->cpus))
			why = strerror(errno);
		else if (sched_getaffinity(app->pid, sizeof(got), &got) ||
			 !CPU_EQUAL(&got, &app->cpus))
			why = "the machine lacks some of them";
		if (why) {
			/* none held at a gate runs unwatched once this exits */
			kill_instances(the_run);
			fail("cannot run an application on the CPUs its cpus line names", why);
		}
	}
	if (app->speedup_q10) {
		int err = amp_set_speedup(app->pid, (unsigned int)app->speedup_q10);

		if (first)
			app->speedup_err = err;
	}
	if (app->epi_big_pj) {
		int err = amp_set_epi_big(app->pid, (unsigned int)app->epi_big_pj);

		if (first)
			app->epi_err = err;
	}
	/* after the hint: the daemon's estimates replace it, never the other way */
	daemons_announce(app, index, app->pid);
	/* Counting starts at its exec, once the gate has let it go. */
	if (first && the_run->pmu)
		pmu_open(&app->pmu, app->pid);
}

/*
 * Starts @app again: another application has not completed yet. Returns
 * the restart's gate, which the caller closes to release it once the
 * daemons have been told (at once when there are none).
 */
static int restart_app(struct app *app, int index, const sigset_t *mask)
{
	int gate[2];

	if (pipe2(gate, O_CLOEXEC))
		fail("cannot create a restart gate", strerror(errno));
	fork_instance(app, index, 0, gate, mask);
	close(gate[0]);
	app->restarts++;
	return gate[1];
}

/* The index of the application whose running instance is @pid, or -1. */
static int app_of(const struct run *run, pid_t pid)
{
	int i;

	for (i = 0; i < run->napps; i++)
		if (run->apps[i].pid == pid)
			return i;
	return -1;
}

/*
 * What an instance leaves once it has been reaped: the application no
 * longer has a running instance, and the instance's input directory goes.
 * Returns the application's index, or -1 if @pid ran none.
 */
static int instance_reaped(struct run *run, pid_t pid)
{
	int i = app_of(run, pid);

	if (i < 0)
		return -1;
	run->apps[i].pid = 0;
	remove_inputs(&run->apps[i], i, pid);
	return i;
}

/*
 * Whether the measured run is over: every application has completed its
 * first run, or the one an until line names has.
 */
static int run_over(const struct run *run, int remaining)
{
	return remaining == 0 || (run->until >= 0 && run->apps[run->until].done);
}

/*
 * Reaps whatever has exited (orphans reparented to init too) and restarts
 * what the method says; returns how many applications have not completed
 * their first run, 0 once the run is over.
 */
static int reap(struct run *run, int remaining, const sigset_t *mask)
{
	int gates[MAX_APPS], ngates = 0, restarts[MAX_APPS], nrestarts = 0, j, over;
	struct rusage usage;
	struct app *app;
	pid_t pid;
	int st, i;

	while ((pid = wait4(-1, &st, WNOHANG, &usage)) > 0) {
		i = instance_reaped(run, pid);
		if (i < 0) {
			daemon_reaped(pid, st, &usage);
			continue;
		}
		daemons_ended(i, pid);
		app = &run->apps[i];
		if (!app->done) {
			app->end_ns = ampkit_now_ns();
			app->wstatus = st;
			app->done = 1;
			remaining--;
			if (run->pmu)
				pmu_close(&app->pmu);
			if (use_m5ops)
				m5_work_end((uint64_t)i, 0);
		} else if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
			app->restarts_completed++;
		} else if (!app->restart_failed) {
			app->restart_failed = 1;
			app->restart_wstatus = st;
		}
		/*
		 * A program that failed is not run again: it would fail again,
		 * as fast as it can be forked.
		 */
		if (run->restart && WIFEXITED(st) && WEXITSTATUS(st) == 0)
			restarts[nrestarts++] = i;
	}
	/*
	 * Restarted once the batch is reaped, and only if the run goes on: an
	 * instance that ended beside the last first run (or the until app's)
	 * would start only to be killed, its start-up inside the measured
	 * statistics.
	 */
	over = run_over(run, remaining);
	for (j = 0; !over && j < nrestarts; j++)
		gates[ngates++] = restart_app(&run->apps[restarts[j]], restarts[j], mask);
	/*
	 * The ends and the restarts told as one change, then the restarts
	 * released; once every application has completed its first run the
	 * run is over, and the instances left are killed rather than placed.
	 */
	if (!over)
		daemons_flush();
	else
		sb_free(&batch);
	for (i = 0; i < ngates; i++)
		close(gates[i]);
	return over ? 0 : remaining;
}

static void set_paths(struct app *app, int i, const char *tmpdir)
{
	static const char *const names[] = { "out", "report", "restart.out", "restart.report" };
	char *paths[] = { app->out_path, app->report_path, app->restart_out_path,
			  app->restart_report_path };
	unsigned int k;

	for (k = 0; k < sizeof(paths) / sizeof(paths[0]); k++)
		if (snprintf(paths[k], PATH_MAX, "%s/app%d.%s", tmpdir, i, names[k]) >= PATH_MAX)
			fail("temporary directory path too long", tmpdir);
}

/*
 * Blocks SIGCHLD (the previous mask goes to @orig) and forks an instance
 * of every application, each held at @gate until the caller closes it.
 */
static void fork_all_held(struct run *run, const char *tmpdir, int first, int gate[2],
			  sigset_t *chld, sigset_t *orig)
{
	int i;

	sigemptyset(chld);
	sigaddset(chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, chld, orig);
	if (pipe2(gate, O_CLOEXEC))
		fail("cannot create the start gate", strerror(errno));
	for (i = 0; i < run->napps; i++) {
		set_paths(&run->apps[i], i, tmpdir);
		fork_instance(&run->apps[i], i, first, gate, orig);
	}
	close(gate[0]);
}

/*
 * Kills every running instance, with what stayed in its process group,
 * then reaps each: all are signalled before any is waited for, so that
 * none runs on while another is reaped.
 */
static void kill_instances(const struct run *run)
{
	int i;

	for (i = 0; i < run->napps; i++) {
		if (!run->apps[i].pid)
			continue;
		kill(-run->apps[i].pid, SIGKILL);
		/* in case it left its group */
		kill(run->apps[i].pid, SIGKILL);
	}
}

static int reap_instance(struct run *run, int index)
{
	pid_t pid = run->apps[index].pid;
	int st = 0;

	waitpid(pid, &st, 0);
	instance_reaped(run, pid);
	return st;
}

/* Waits for a child's end or until @deadline (ns), whichever comes first. */
static void wait_child_until(const sigset_t *chld, uint64_t now, uint64_t deadline)
{
	struct timespec ts;

	ts.tv_sec = (time_t)((deadline - now) / 1000000000ULL);
	ts.tv_nsec = (long)((deadline - now) % 1000000000ULL);
	sigtimedwait(chld, NULL, &ts);
}

/*
 * The warm-up: the mix's own programs, under the run's policy, for
 * warmup_ms of guest time, each started again when it completes, then
 * killed. The measured run then begins with fresh instances but with the
 * caches, TLBs and branch predictors they leave warm. Nothing of the
 * warm-up is recorded (run_mix resets gem5's statistics after it); a
 * program that fails in it fails again, measured.
 */
static void warm_up(struct run *run, const char *tmpdir)
{
	int gate[2], i, st, instances;
	uint64_t begin, deadline, stopping, end;
	sigset_t chld, orig;
	char line[160];
	pid_t pid;

	if (run->warmup_ms <= 0)
		return;
	snprintf(line, sizeof(line), "%d", run->warmup_ms);
	say("warming up for %s ms", line);
	fork_all_held(run, tmpdir, 0, gate, &chld, &orig);
	close(gate[1]);
	instances = run->napps;
	begin = ampkit_now_ns();
	deadline = begin + (uint64_t)run->warmup_ms * 1000000ULL;
	for (;;) {
		uint64_t now = ampkit_now_ns();

		while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
			i = instance_reaped(run, pid);
			if (i < 0)
				continue;
			if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && now < deadline) {
				if (pipe2(gate, O_CLOEXEC))
					fail("cannot create a warm-up gate", strerror(errno));
				fork_instance(&run->apps[i], i, 0, gate, &orig);
				close(gate[0]);
				close(gate[1]);
				instances++;
			}
		}
		if (now >= deadline)
			break;
		wait_child_until(&chld, now, deadline);
	}
	stopping = ampkit_now_ns();
	kill_instances(run);
	for (i = 0; i < run->napps; i++)
		if (run->apps[i].pid)
			reap_instance(run, i);
	while (waitpid(-1, &st, WNOHANG) > 0)
		;
	sigprocmask(SIG_SETMASK, &orig, NULL);
	/*
	 * What it took, to the end of the kills, and how much of it the kills
	 * and reaps took: tests and users check it.
	 */
	end = ampkit_now_ns();
	snprintf(line, sizeof(line),
		 "warm-up of %d ms done (%llu us of guest time, %llu of them stopping; %d instances);"
		 " the measured run starts",
		 run->warmup_ms, (unsigned long long)((end - begin) / 1000),
		 (unsigned long long)((end - stopping) / 1000), instances);
	say("%s", line);
}

/*
 * On gem5, the statistics of the measured run are one dump: reset as the
 * applications are released, dumped when the last first run completes (or
 * the time limit passes), before the restarts are killed and the results
 * written. gem5's dump at restore comes before it and its dump at exit
 * after it, so it is always the second to last (gem5stats.run_summary).
 */
static void mark_measured_interval(void)
{
	if (use_m5ops)
		m5_dump_reset_stats();
}

/* --- tracing ------------------------------------------------------------- */

/* Writes text to a tracefs control file; the run fails naming it if it cannot. */
static void trace_write(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	ssize_t n = -1;

	if (fd >= 0) {
		n = write(fd, text, strlen(text));
		close(fd);
	}
	if (n != (ssize_t)strlen(text))
		fail("trace: cannot write", path);
}

/*
 * The trace set up, tracing still off: the buffers sized, the clock the
 * runner's own (CLOCK_MONOTONIC, as start_ns and end_ns, so that the trace
 * and the results share one time line), and the events enabled. Before the
 * warm-up, so that allocating the buffers does not disturb the caches it
 * warms; trace_switch() empties them as it starts, at the release. Each
 * sched_migrate_task also logs the kernel stack that made the migration (a
 * stacktrace trigger): what moved the task, read from the code that did
 * (ampkit/analysis/trace.py).
 */
static void trace_prepare(const struct run *run)
{
	char path[PATH_MAX], size[32];
	long cpus = sysconf(_SC_NPROCESSORS_CONF), kb;
	int i;

	if (!run->ntrace_events)
		return;
	if (access(TRACEFS "/events", F_OK) && mount("tracefs", TRACEFS, "tracefs", 0, NULL))
		fail("trace: cannot mount tracefs at " TRACEFS
		     " (a kernel without CONFIG_FTRACE?)", strerror(errno));
	kb = TRACE_BUFFER_TOTAL_KB / (cpus > 0 ? cpus : 1);
	snprintf(size, sizeof(size), "%ld", kb > TRACE_BUFFER_MIN_KB ? kb : TRACE_BUFFER_MIN_KB);
	trace_write(TRACEFS "/tracing_on", "0");
	trace_write(TRACEFS "/buffer_size_kb", size);
	trace_write(TRACEFS "/trace_clock", "mono");
	trace_write(TRACEFS "/set_event", "");
	for (i = 0; i < run->ntrace_events; i++) {
		char *name = run->trace_events[i], *colon = strchr(name, ':');

		snprintf(path, sizeof(path), TRACEFS "/events/%.*s/%s/enable",
			 (int)(colon - name), name, colon + 1);
		if (access(path, F_OK))
			fail("trace: this kernel has no such event", name);
		trace_write(path, "1");
		if (!strcmp(name, "sched:sched_migrate_task"))
			trace_write(TRACEFS "/events/sched/sched_migrate_task/trigger",
				    "stacktrace");
	}
}

/* On: the buffers emptied of the warm-up's events, then tracing. Off: stopped. */
static void trace_switch(const struct run *run, int on)
{
	if (!run->ntrace_events)
		return;
	if (on)
		trace_write(TRACEFS "/trace", "");
	trace_write(TRACEFS "/tracing_on", on ? "1" : "0");
}

/* Events the ring buffers overwrote or dropped, over every CPU. */
static long trace_lost(void)
{
	char path[PATH_MAX], line[128];
	long lost = 0, n;
	int cpu;

	for (cpu = 0;; cpu++) {
		FILE *f;

		snprintf(path, sizeof(path), TRACEFS "/per_cpu/cpu%d/stats", cpu);
		f = fopen(path, "r");
		if (!f)
			break;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "overrun: %ld", &n) == 1 ||
			    sscanf(line, "commit overrun: %ld", &n) == 1 ||
			    sscanf(line, "dropped events: %ld", &n) == 1)
				lost += n;
		fclose(f);
	}
	return lost;
}

/*
 * The trace, after the results (a guest that dies writing it has given
 * them already). On gem5 the simulator copies it out of guest memory
 * (m5 writefile): a few megabytes through the simulated UART would cost
 * minutes of simulated time. Elsewhere it goes to the console between
 * markers, the end marker giving the count of lines and of events lost,
 * so that the host can tell a trace cut short. A trace that cannot be
 * read is said in a record, not a failure: the results stand.
 */
static void trace_output(const struct run *run)
{
	struct sbuf sb;
	char *text, *p;
	long lines = 0, lost;
	size_t len;

	if (!run->ntrace_events)
		return;
	sb_init(&sb);
	lost = trace_lost();
	text = read_text(TRACEFS "/trace");
	if (!text) {
		sb_printf(&sb, RECORD "{\"type\":\"trace\",\"error\":");
		sb_json_str(&sb, strerror(errno));
		sb_printf(&sb, "}");
		emit(&sb);
		sb_free(&sb);
		return;
	}
	len = strlen(text);	/* read_text drops the last newline */
	for (p = text; *p;) {
		char *end = strchrnul(p, '\n');

		lines += end > p && *p != '#';	/* the header's lines are comments */
		p = *end ? end + 1 : end;
	}
	if (use_m5ops) {
		char name[] = TRACE_FILE;
		uint64_t off = 0;

		while (off < len) {
			uint64_t chunk = len - off < TRACE_CHUNK ? len - off : TRACE_CHUNK;

			off += m5_writefile(text + off, chunk, off, name);
		}
		sb_printf(&sb, RECORD "{\"type\":\"trace\",\"file\":\"%s\",\"bytes\":%zu,"
			  "\"lines\":%ld,\"lost\":%ld}", TRACE_FILE, len, lines, lost);
		emit(&sb);
	} else {
		sb_printf(&sb, TRACE_BEGIN);
		emit(&sb);
		sb_free(&sb);
		if (len) {
			struct sbuf whole = { .data = text, .len = len, .cap = len };

			sb_write(&whole, console_fd);
		}
		sb_init(&sb);
		sb_printf(&sb, "%s" TRACE_END, len ? "\n" : "", lines, lost);
		emit(&sb);
	}
	sb_free(&sb);
	free(text);
}

static void run_mix(struct run *run, const char *tmpdir)
{
	const struct daemon *gone;
	sigset_t chld, orig;
	int gate[2], i, remaining = run->napps;
	uint64_t start, deadline;

	start_daemons(run, tmpdir);
	fork_all_held(run, tmpdir, 1, gate, &chld, &orig);
	daemons_flush();	/* placed while held at the gate, before anything is measured */
	trace_switch(run, 1);	/* before the statistics' reset: not measured */
	mark_measured_interval();
	if (use_m5ops)
		for (i = 0; i < run->napps; i++)
			if (!run->apps[i].start_delay_us)
				m5_work_begin((uint64_t)i, 0);
	start = ampkit_now_ns();
	/*
	 * A delayed application's time counts from its own release: it reads
	 * the gate's end after this clock, then sleeps its delay, so it starts
	 * no earlier than this.
	 */
	for (i = 0; i < run->napps; i++)
		run->apps[i].start_ns = start + (uint64_t)run->apps[i].start_delay_us * 1000ULL;
	close(gate[1]);	/* every application sees end-of-file and starts */

	deadline = start + (uint64_t)run->timeout_s * 1000000000ULL;
	while ((remaining = reap(run, remaining, &orig)) > 0) {
		uint64_t now = ampkit_now_ns();

		gone = daemon_gone();
		if (gone) {
			kill_instances(run);
			for (i = 0; i < run->napps; i++)
				if (run->apps[i].pid)
					reap_instance(run, i);
			daemon_fail(gone, "ended during the run");
		}
		if (now >= deadline)
			break;
		wait_child_until(&chld, now, deadline);
	}
	mark_measured_interval();
	trace_switch(run, 0);
	/* First runs past the time limit, and the restarts still running. */
	kill_instances(run);
	for (i = 0; i < run->napps; i++) {
		struct app *app = &run->apps[i];
		int st;

		if (!app->pid)
			continue;
		st = reap_instance(run, i);
		if (!app->done) {
			/*
			 * Load beside the until app, which completed: stopped,
			 * not late, if our kill ended it. One that ended by
			 * itself meanwhile is judged by how it ended.
			 */
			if (run->until >= 0 && run->apps[run->until].done &&
			    !run->apps[run->until].timed_out) {
				if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
					app->stopped = 1;
			} else {
				app->timed_out = 1;
			}
			app->wstatus = st;
			app->end_ns = ampkit_now_ns();
			app->done = 1;
			if (run->pmu)
				pmu_close(&app->pmu);
		}
	}
	sigprocmask(SIG_SETMASK, &orig, NULL);
	stop_daemons();
}

/* --- results ------------------------------------------------------------- */

/* What a workload reported for one thread (workloads/common/ampkit_workload.h). */
struct thread_report {
	unsigned long long wall, cpu;
	int has_kernel, has_moves, has_acfs, has_hot;
	unsigned long long big, little, blocked, caused, flagged, moves;
	unsigned long long amp_vruntime, acfs_weight, failed_hot;
	char sched_class[16];
};

static struct thread_report thread_reports[MAX_THREADS];

/*
 * The per-thread lines of a workload, and the region of interest a
 * program marked through the kit's PARSEC hooks (workloads/parsec), as
 * "roi_ns":[begin,end] (end null if the program never left it).
 */
static void report_json(struct sbuf *sb, const char *report_path)
{
	/* twelve fields of up to 20 digits each */
	char line[512];
	int i, n = 0, idx, fields, kernel = 1;
	unsigned long long roi_begin = 0, roi_end = 0, hot;
	FILE *f = fopen(report_path, "r");

	while (f && fgets(line, sizeof(line), f)) {
		struct thread_report t;

		if (!roi_begin && sscanf(line, "roi_begin %llu", &roi_begin) == 1)
			continue;
		if (!roi_end && sscanf(line, "roi_end %llu", &roi_end) == 1)
			continue;
		/* after its thread's line, while schedstats are on */
		if (sscanf(line, "thread_hot %d %llu", &idx, &hot) == 2) {
			if (idx == n - 1) {
				thread_reports[idx].has_hot = 1;
				thread_reports[idx].failed_hot = hot;
			}
			continue;
		}

		memset(&t, 0, sizeof(t));
		fields = sscanf(line,
				"thread %d %llu %llu %llu %llu %llu %llu %15s %llu %llu %llu %llu",
				&idx, &t.wall, &t.cpu, &t.big, &t.little, &t.blocked, &t.caused,
				t.sched_class, &t.flagged, &t.moves, &t.amp_vruntime,
				&t.acfs_weight);
		if (fields >= 3 && idx == n && n < MAX_THREADS) {
			t.has_kernel = fields >= 8;
			t.has_moves = fields >= 10;
			t.has_acfs = fields == 12;
			kernel = kernel && t.has_kernel;
			thread_reports[n++] = t;
		}
	}
	if (f)
		fclose(f);
	if (roi_begin) {
		sb_printf(sb, ",\"roi_ns\":[%llu,", roi_begin);
		if (roi_end)
			sb_printf(sb, "%llu]", roi_end);
		else
			sb_printf(sb, "null]");
	}
	sb_printf(sb, ",\"thread_times_ns\":");
	if (!n) {
		sb_printf(sb, "null,\"thread_cpu_ns\":null");
		return;
	}
	sb_printf(sb, "[");
	for (i = 0; i < n; i++)
		sb_printf(sb, "%s%llu", i ? "," : "", thread_reports[i].wall);
	sb_printf(sb, "],\"thread_cpu_ns\":[");
	for (i = 0; i < n; i++)
		sb_printf(sb, "%s%llu", i ? "," : "", thread_reports[i].cpu);
	sb_printf(sb, "]");
	if (!kernel)
		return;
	/* The kit kernel's per-task counters, as each thread saw them at its end. */
	sb_printf(sb, ",\"tasks\":[");
	for (i = 0; i < n; i++) {
		const struct thread_report *t = &thread_reports[i];

		sb_printf(sb, "%s{\"thread\":%d,\"class\":", i ? "," : "", i);
		sb_json_str(sb, t->sched_class);
		sb_printf(sb, ",\"big_ns\":%llu,\"little_ns\":%llu,\"futex_blocked_ns\":%llu,"
			  "\"futex_caused_ns\":%llu", t->big, t->little, t->blocked, t->caused);
		if (t->has_moves)
			sb_printf(sb, ",\"flagged_ns\":%llu,\"cluster_moves\":%llu", t->flagged,
				  t->moves);
		if (t->has_acfs)
			sb_printf(sb, ",\"amp_vruntime\":%llu,\"acfs_weight\":%llu",
				  t->amp_vruntime, t->acfs_weight);
		if (t->has_hot)
			sb_printf(sb, ",\"failed_hot\":%llu", t->failed_hot);
		sb_printf(sb, "}");
	}
	sb_printf(sb, "]");
}

/* The last @max (at most OUTPUT_TAIL) bytes of a file, as a JSON string. */
static void output_tail_json(struct sbuf *sb, const char *path, size_t max)
{
	char buf[OUTPUT_TAIL];

	if (max > sizeof(buf))
		max = sizeof(buf);
	sb_json_strn(sb, buf, read_tail(path, buf, max));
}

static void app_record(const struct run *run, const struct app *app)
{
	struct sbuf sb;
	const char *status;
	int i;

	if ((app->speedup_err || app->epi_err) && !access(AMP_POLICY_FILE, F_OK))
		status = "failed";	/* a kit kernel refused a hint */
	else if (app->stopped)
		status = "stopped";
	else if (app->timed_out)
		status = "timeout";
	else if (WIFEXITED(app->wstatus) && WEXITSTATUS(app->wstatus) == 0)
		status = "ok";
	else
		status = "failed";

	sb_init(&sb);
	sb_printf(&sb, RECORD "{\"type\":\"app\",\"run_id\":");
	sb_json_str(&sb, run->run_id);
	sb_printf(&sb, ",\"app\":");
	sb_json_str(&sb, app->name);
	sb_printf(&sb, ",\"instance\":%d,\"threads\":%d,\"speedup_q10\":%d,\"argv\":[",
		  app->instance, app->threads, app->speedup_q10);
	for (i = 0; app->argv[i]; i++) {
		sb_printf(&sb, "%s", i ? "," : "");
		sb_json_str(&sb, app->argv[i]);
	}
	sb_printf(&sb, "],\"start_ns\":%llu,\"end_ns\":%llu,\"status\":\"%s\"",
		  (unsigned long long)app->start_ns, (unsigned long long)app->end_ns, status);
	if (WIFEXITED(app->wstatus))
		sb_printf(&sb, ",\"exit_status\":%d,\"signal\":null", WEXITSTATUS(app->wstatus));
	else
		sb_printf(&sb, ",\"exit_status\":null,\"signal\":%d",
			  WIFSIGNALED(app->wstatus) ? WTERMSIG(app->wstatus) : 0);
	if (app->start_delay_us)
		sb_printf(&sb, ",\"start_delay_us\":%d", app->start_delay_us);
	if (app->speedup_q10) {
		sb_printf(&sb, ",\"speedup_error\":");
		sb_json_str(&sb, app->speedup_err ? strerror(app->speedup_err) : NULL);
	}
	if (app->epi_big_pj) {
		sb_printf(&sb, ",\"epi_big_pj\":%d,\"epi_error\":", app->epi_big_pj);
		sb_json_str(&sb, app->epi_err ? strerror(app->epi_err) : NULL);
	}
	if (app->has_cpus) {
		sb_printf(&sb, ",\"cpus\":");
		sb_cpu_list(&sb, &app->cpus);
	}
	sb_printf(&sb, ",\"method\":\"%s\",\"restarts\":%d,\"restarts_completed\":%d",
		  run->restart ? "restart" : "once", app->restarts, app->restarts_completed);
	if (app->restart_failed) {
		int st = app->restart_wstatus;

		sb_printf(&sb, ",\"restart_failure\":{\"exit_status\":");
		if (WIFEXITED(st))
			sb_printf(&sb, "%d,\"signal\":null", WEXITSTATUS(st));
		else
			sb_printf(&sb, "null,\"signal\":%d", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
		sb_printf(&sb, ",\"output\":");
		output_tail_json(&sb, app->restart_out_path, 2048);
		sb_printf(&sb, "}");
	}
	report_json(&sb, app->report_path);
	if (run->pmu)
		pmu_json(&sb, &app->pmu);
	sb_printf(&sb, ",\"output\":");
	output_tail_json(&sb, app->out_path, OUTPUT_TAIL);
	sb_printf(&sb, "}");
	emit(&sb);
	sb_free(&sb);
}

/*
 * The policies' knobs again once the mix is over: their counters
 * (kernel.sched_colab_work, kernel.sched_wash_stats) against the guest
 * record's, read before the warm-up, give the work each policy's periodic
 * step did over the run (warm-up included).
 */
static void knobs_after_record(const struct run *run)
{
	struct sbuf sb;

	sb_init(&sb);
	sb_printf(&sb, RECORD "{\"type\":\"knobs_after\",\"run_id\":");
	sb_json_str(&sb, run->run_id);
	sb_printf(&sb, ",\"knobs\":");
	policy_knobs_json(&sb);
	sb_printf(&sb, "}");
	emit(&sb);
	sb_free(&sb);
}

static void guest_record(const struct run *run)
{
	struct sbuf sb;

	sb_init(&sb);
	sb_printf(&sb, RECORD "{\"type\":\"guest\",\"run_id\":");
	sb_json_str(&sb, run->run_id);
	sb_printf(&sb, ",\"guest\":");
	sysinfo_json(&sb);
	sb_printf(&sb, "}}");
	emit(&sb);
	sb_free(&sb);
}

int main(int argc, char **argv)
{
	const char *desc_path = DEFAULT_DESC, *desc_source;
	const char *tmpdir = "/tmp";
	static struct run run;
	struct sbuf sb;
	int i, opt;

	is_init = getpid() == 1;
	while (!is_init && (opt = getopt(argc, argv, "d:T:")) != -1) {
		if (opt == 'd') {
			desc_path = optarg;
		} else if (opt == 'T') {
			tmpdir = optarg;
		} else {
			fprintf(stderr, "usage: %s [-d RUN_DESCRIPTION] [-T TMPDIR]\n", argv[0]);
			return 2;
		}
	}
	if (is_init) {
		mount_all();
		console_fd = open("/dev/console", O_WRONLY | O_CLOEXEC);
		if (console_fd < 0)
			console_fd = STDOUT_FILENO;
		quiet_console();
	}
	desc_source = is_init ? getenv("ampkit_desc") : NULL;
	if (desc_source && !strcmp(desc_source, "m5")) {
		parse_desc(read_desc_from_simulator(), &run);
	} else {
		say("reading %s", desc_path);
		parse_desc(read_file(desc_path), &run);
	}
	use_m5ops = run.m5ops && is_init;
	the_run = &run;
	work_root = tmpdir;
	mount_disk(&run);
	/*
	 * The policy before the guest record, so that the record shows the
	 * policy this run is under: on gem5 the kernel booted (and was
	 * checkpointed) under cfs for every run, and only now switches.
	 */
	set_policy(&run);
	guest_record(&run);
	trace_prepare(&run);
	warm_up(&run, tmpdir);
	say("starting run %s", run.run_id);
	run_mix(&run, tmpdir);
	knobs_after_record(&run);
	daemon_records();

	sb_init(&sb);
	sb_printf(&sb, RESULTS_BEGIN);
	emit(&sb);
	sb_free(&sb);
	for (i = 0; i < run.napps; i++)
		app_record(&run, &run.apps[i]);
	sb_init(&sb);
	sb_printf(&sb, RESULTS_END, run.napps);
	emit(&sb);
	sb_free(&sb);
	trace_output(&run);
	finish(0);
}
