// SPDX-License-Identifier: GPL-2.0
/*
 * ampkit-selftest: runs a suite of the kernel's own selftests in the guest,
 * case by case, under one scheduling policy after another, and prints
 * what every case reported.
 *
 *   ampkit-selftest [-t N] [-n N] [-k SECONDS] DIR PHASE...
 *
 * DIR holds the suite's programs and "cases", which the build writes from
 * the suite's run.sh: one line per invocation there, "<line> <program>
 * <args...>", <line> being where run.sh has it. Every PHASE runs every case
 * once, in order, as run.sh does:
 *
 *   <policy>   under that policy, written to sched_amp_policy first
 *   flip       while a child process writes every policy the kernel lists
 *              to sched_amp_policy in turn, one every 10 ms (its first
 *              switch is done before the first case starts)
 *   -          under whatever policy is in force (kernels without the knob)
 *
 * A case runs as its own process group in a fresh directory under $TMPDIR
 * (default /tmp; tests leave files there), stdout and stderr to a file,
 * and is killed after -k SECONDS of guest time (default 45, the default
 * timeout of the kselftest runner). Its TAP result lines ("ok N ...", "not ok N ...")
 * become one letter each: P ok, F not ok, S skip, X xfail, E error.
 *
 * Output, one JSON object per line, each as soon as it is known:
 *   {"suite":DIR,"timeout_s":K,"cases":[{"line":L,"argv":"prog args"},...]}
 *   {"phase":P,"policy":..,"results":[{"exit":E,"ms":M,"tap":"PP"[,"signal":S]
 *    [,"timed_out":true][,"lines":".."][,"tail":".."]},...],"ms":..[,"flips":N,
 *    "flip_errno":0],"policy_after":..}  one per phase
 *   the first line again (the runner keeps the output's last 16 KiB only)
 *   {"done":true}
 * "exit" is -1 for a case killed by a signal. "lines" (a case's TAP result
 * lines, newline-separated) appear when they differ from the ones last
 * printed for that case, so the first phase names every test and later
 * phases only what changed; "tail" (the end of the case's output) when the
 * case did not pass outright, while the tails printed stay under 4 KiB.
 *
 * Like every workload it accepts -t THREADS and -n SIZE first and ignores
 * them. Exit status 0 when every phase ran (whatever the cases said), 1
 * when it could not run them, 2 for bad arguments.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ampkit_workload.h"
#include "sbuf.h"
#include "sysinfo.h"

#define MAX_CASES 128
#define MAX_ARGS 32
#define MAX_TESTS 64
/*
 * The runner keeps the last 16 KiB of an application's output; every
 * phase must fit in it with the header. Output tails stop at this many
 * bytes over the whole run (null from then on).
 */
#define TAIL_BYTES 512
#define TAIL_BUDGET 4096
#define FLIP_NS (10 * 1000 * 1000)

struct selftest_case {
	int line;
	char *argv[MAX_ARGS + 1];
	char *shown;	/* the TAP lines last printed, joined by newlines */
};

static struct selftest_case cases[MAX_CASES];
static int nr_cases;
static const char *suite_dir;
static int timeout_s = 45;
static size_t tails;	/* bytes of output tails printed so far */

static void die(const char *what, int err)
{
	fprintf(stderr, "ampkit-selftest: %s: %s\n", what, strerror(err));
	exit(1);
}

static void read_cases(void)
{
	char path[PATH_MAX], *text, *line, *save = NULL;

	snprintf(path, sizeof(path), "%s/cases", suite_dir);
	text = read_text(path);
	if (!text)
		die(path, errno ? errno : ENOENT);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct selftest_case *c;
		char *word, *wsave = NULL;
		int n = 0;

		if (nr_cases == MAX_CASES)
			die("too many cases", E2BIG);
		c = &cases[nr_cases];
		word = strtok_r(line, " \t", &wsave);
		if (!word)
			continue;
		c->line = atoi(word);
		while ((word = strtok_r(NULL, " \t", &wsave))) {
			if (n == MAX_ARGS)
				die("a case with too many arguments", E2BIG);
			c->argv[n++] = word;
		}
		if (!n)
			die("a case without a program", EINVAL);
		nr_cases++;
	}
	/* text stays allocated: the cases point into it */
}

/* The case's command line as run.sh has it: "prog args". */
static void argv_json(struct sbuf *sb, const struct selftest_case *c)
{
	struct sbuf cmd;
	int i;

	sb_init(&cmd);
	for (i = 0; c->argv[i]; i++)
		sb_printf(&cmd, "%s%s", i ? " " : "", c->argv[i]);
	sb_json_str(sb, cmd.data);
	sb_free(&cmd);
}

/* --- the flipper -------------------------------------------------------- */

struct flip_state {
	unsigned long long flips;
	int err;
};

static struct flip_state *flip_state;

/* Tells the phase, through @ready, once the first switch is done (or failed). */
static __attribute__((noreturn)) void flipper(int ready)
{
	struct timespec ten_ms = { 0, FLIP_NS };
	char *available = read_text(AMP_AVAILABLE_FILE);
	char *names[8], *save = NULL, *name;
	unsigned int i = 0, nr = 0;

	if (!available) {
		flip_state->err = errno ? errno : ENOENT;
		_exit(1);
	}
	for (name = strtok_r(available, " \n", &save); name && nr < 8;
	     name = strtok_r(NULL, " \n", &save))
		names[nr++] = name;
	if (nr < 2) {
		flip_state->err = EINVAL;
		_exit(1);
	}
	for (;;) {
		int err = set_amp_policy(names[i++ % nr], NULL, 0);

		if (err) {
			flip_state->err = err;
			_exit(1);
		}
		__atomic_add_fetch(&flip_state->flips, 1, __ATOMIC_RELAXED);
		if (ready >= 0) {
			close(ready);
			ready = -1;
		}
		nanosleep(&ten_ms, NULL);
	}
}

/* Starts the flipper; returns once it has switched the policy once (or failed). */
static pid_t start_flipper(void)
{
	int ready[2];
	char c;
	pid_t pid;

	if (!flip_state) {
		flip_state = mmap(NULL, sizeof(*flip_state), PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (flip_state == MAP_FAILED)
			die("mmap", errno);
	}
	memset(flip_state, 0, sizeof(*flip_state));
	if (pipe2(ready, O_CLOEXEC))
		die("pipe", errno);
	pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (pid == 0) {
		close(ready[0]);
		flipper(ready[1]);
	}
	close(ready[1]);
	/* end of file when the flipper has closed its end: switched, or gone */
	while (read(ready[0], &c, 1) < 0 && errno == EINTR)
		;
	close(ready[0]);
	return pid;
}

static void stop_flipper(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* --- one case ------------------------------------------------------------- */

struct outcome {
	int exited, exit_status, signal, timed_out;
	uint64_t ns;
	char tap[MAX_TESTS + 1];
	struct sbuf lines;
	char out_path[PATH_MAX];
};

static void start_case(const struct selftest_case *c, const char *dir, const char *out_path)
{
	char prog[PATH_MAX];
	char *argv[MAX_ARGS + 1];
	int fd, i;

	setpgid(0, 0);
	if (chdir(dir))
		_exit(126);
	fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		_exit(126);
	dup2(fd, STDOUT_FILENO);
	dup2(fd, STDERR_FILENO);
	close(fd);
	close(3);	/* the runner's report descriptor: not the selftest's */
	unsetenv("AMPKIT_REPORT_FD");
	snprintf(prog, sizeof(prog), "%s/%s", suite_dir, c->argv[0]);
	argv[0] = prog;
	for (i = 1; c->argv[i]; i++)
		argv[i] = c->argv[i];
	argv[i] = NULL;
	execv(prog, argv);
	fprintf(stderr, "ampkit-selftest: cannot execute %s: %s\n", prog, strerror(errno));
	_exit(127);
}

/* TAP result lines of the output: one letter each in o->tap, the lines in o->lines. */
static void read_tap(struct outcome *o)
{
	FILE *f = fopen(o->out_path, "r");
	char line[512];
	size_t n = 0;

	o->tap[0] = '\0';
	while (f && fgets(line, sizeof(line), f)) {
		char letter;
		int num, off = 0;

		if (sscanf(line, "ok %d %n", &num, &off) == 1 && off)
			letter = strstr(line, "# SKIP") ? 'S' : strstr(line, "# XFAIL") ? 'X' : 'P';
		else if (sscanf(line, "not ok %d %n", &num, &off) == 1 && off)
			letter = strstr(line, "# SKIP") ? 'S' : strstr(line, "# error") ? 'E' : 'F';
		else
			continue;
		if (n < MAX_TESTS)
			o->tap[n++] = letter;
		line[strcspn(line, "\n")] = '\0';
		sb_printf(&o->lines, "%s%s", o->lines.len ? "\n" : "", line);
	}
	o->tap[n] = '\0';
	if (f)
		fclose(f);
}

static void run_case(const struct selftest_case *c, struct outcome *o)
{
	const char *tmp = getenv("TMPDIR");
	char dir[PATH_MAX - 16];
	uint64_t start, deadline;
	int pidfd, st = 0;
	pid_t pid;

	snprintf(dir, sizeof(dir), "%s/ampkit-selftest.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		die("mkdtemp", errno);
	snprintf(o->out_path, sizeof(o->out_path), "%s/.output", dir);
	start = ampkit_now_ns();
	deadline = start + (uint64_t)timeout_s * 1000000000ULL;
	pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (pid == 0)
		start_case(c, dir, o->out_path);
	setpgid(pid, pid);	/* as the child does: no race with the kill below */
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		die("pidfd_open", errno);
	for (;;) {
		struct pollfd p = { .fd = pidfd, .events = POLLIN };
		uint64_t now = ampkit_now_ns();
		int ms;

		if (now >= deadline) {
			o->timed_out = 1;
			kill(-pid, SIGKILL);
			break;
		}
		ms = (int)((deadline - now + 999999) / 1000000);
		if (poll(&p, 1, ms) > 0)
			break;
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	o->ns = ampkit_now_ns() - start;
	close(pidfd);
	/* whatever the case left running in its group (threads die with it) */
	kill(-pid, SIGKILL);
	o->exited = WIFEXITED(st);
	o->exit_status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	o->signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
	read_tap(o);
}

static int passed(const struct outcome *o)
{
	return o->exited && o->exit_status == 0 && !o->timed_out && o->tap[0] &&
	       strspn(o->tap, "P") == strlen(o->tap);
}

/* The last TAIL_BYTES of the case's output, as a JSON string. */
static size_t tail_json(struct sbuf *sb, const char *path)
{
	char buf[TAIL_BYTES];
	ssize_t n = 0;
	off_t size;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		size = lseek(fd, 0, SEEK_END);
		if (size > TAIL_BYTES)
			lseek(fd, size - TAIL_BYTES, SEEK_SET);
		else
			lseek(fd, 0, SEEK_SET);
		n = read(fd, buf, sizeof(buf));
		close(fd);
	}
	sb_json_strn(sb, buf, n > 0 ? (size_t)n : 0);
	return n > 0 ? (size_t)n : 0;
}

/* --- phases --------------------------------------------------------------- */

static void policy_json(struct sbuf *sb, const char *key)
{
	char *now = read_text(AMP_POLICY_FILE);

	sb_printf(sb, ",\"%s\":", key);
	sb_json_str(sb, now);
	free(now);
}

static void run_phase(const char *phase)
{
	int flip = !strcmp(phase, "flip"), keep = !strcmp(phase, "-");
	uint64_t start;
	pid_t flipper_pid = 0;
	struct sbuf sb;
	int i;

	sb_init(&sb);
	sb_printf(&sb, "{\"phase\":");
	sb_json_str(&sb, phase);
	if (!flip && !keep) {
		char in_force[64] = "";
		int err = set_amp_policy(phase, in_force, sizeof(in_force));

		if (err)
			die("setting the policy", err);
		if (strcmp(in_force, phase))
			die("the policy did not take effect", EINVAL);
	}
	policy_json(&sb, "policy");
	if (flip)
		flipper_pid = start_flipper();
	start = ampkit_now_ns();
	sb_printf(&sb, ",\"results\":[");
	for (i = 0; i < nr_cases; i++) {
		struct selftest_case *c = &cases[i];
		struct outcome o;

		memset(&o, 0, sizeof(o));
		sb_init(&o.lines);
		run_case(c, &o);
		sb_printf(&sb, "%s{\"exit\":%d,\"ms\":%.1f,\"tap\":", i ? "," : "",
			  o.exit_status, (double)o.ns / 1e6);
		sb_json_str(&sb, o.tap);
		if (o.signal)
			sb_printf(&sb, ",\"signal\":%d", o.signal);
		if (o.timed_out)
			sb_printf(&sb, ",\"timed_out\":true");
		if (!c->shown || strcmp(c->shown, o.lines.data)) {
			sb_printf(&sb, ",\"lines\":");
			sb_json_str(&sb, o.lines.data);
			free(c->shown);
			c->shown = strdup(o.lines.data);
		}
		if (!passed(&o)) {
			if (tails < TAIL_BUDGET) {
				sb_printf(&sb, ",\"tail\":");
				tails += tail_json(&sb, o.out_path);
			} else {
				sb_printf(&sb, ",\"tail\":null");
			}
		}
		sb_printf(&sb, "}");
		sb_free(&o.lines);
	}
	sb_printf(&sb, "],\"ms\":%.1f", (double)(ampkit_now_ns() - start) / 1e6);
	if (flip) {
		stop_flipper(flipper_pid);
		sb_printf(&sb, ",\"flips\":%llu,\"flip_errno\":%d", flip_state->flips,
			  flip_state->err);
	}
	policy_json(&sb, "policy_after");
	sb_printf(&sb, "}\n");
	fputs(sb.data, stdout);
	fflush(stdout);
	sb_free(&sb);
}

static void print_header(void)
{
	struct sbuf sb;
	int i;

	sb_init(&sb);
	sb_printf(&sb, "{\"suite\":");
	sb_json_str(&sb, suite_dir);
	sb_printf(&sb, ",\"timeout_s\":%d,\"cases\":[", timeout_s);
	for (i = 0; i < nr_cases; i++) {
		sb_printf(&sb, "%s{\"line\":%d,\"argv\":", i ? "," : "", cases[i].line);
		argv_json(&sb, &cases[i]);
		sb_printf(&sb, "}");
	}
	sb_printf(&sb, "]}\n");
	fputs(sb.data, stdout);
	fflush(stdout);
	sb_free(&sb);
}

static int usage(const char *prog)
{
	fprintf(stderr, "usage: %s [-t N] [-n N] [-k SECONDS] DIR PHASE...\n"
		"  PHASE: a policy name, flip (every policy in turn every 10 ms), or -\n", prog);
	return 2;
}

int main(int argc, char **argv)
{
	const char *prog = argv[0];
	int opt, i;

	while ((opt = getopt(argc, argv, "+t:n:k:")) != -1) {
		if (opt == 'k') {
			timeout_s = atoi(optarg);
			if (timeout_s <= 0)
				return usage(prog);
		} else if (opt == '?') {
			return usage(prog);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 2)
		return usage(prog);
	suite_dir = argv[0];
	read_cases();

	print_header();
	for (i = 1; i < argc; i++)
		run_phase(argv[i]);
	/* again: the runner keeps the output's tail, which may have lost the first */
	print_header();
	printf("{\"done\":true}\n");
	return 0;
}
