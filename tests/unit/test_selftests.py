"""The kernel selftests' recipe (ampkit/selftests.py) and ampkit-selftest, the guest's
runner for them, run on the host over stand-in test programs."""

import os
import stat
import subprocess
from pathlib import Path

import pytest

from ampkit import selftests
from ampkit.errors import AmpkitError

MAKEFILE = """\
# SPDX-License-Identifier: GPL-2.0
INCLUDES := -I../include -I../../ $(KHDR_INCLUDES)
TEST_GEN_PROGS := \\
	futex_wait_timeout \\
	futex_requeue \\
	futex_waitv

TEST_PROGS := run.sh
"""

RUN_SH = """\
#!/bin/sh
if [ "$USE_COLOR" -eq 1 ]; then
    COLOR="-c"
fi

echo
# with timeouts
./futex_wait_timeout $COLOR -t 5000
./futex_wait_timeout $COLOR

echo
./futex_requeue $COLOR
./futex_waitv $COLOR -b -l -t 2000000000
"""


def test_cases_follow_run_sh() -> None:
    known = selftests.programs(MAKEFILE)
    assert known == ["futex_wait_timeout", "futex_requeue", "futex_waitv"]
    cases = selftests.parse_run_sh(RUN_SH, known)
    assert [(c.line, c.argv) for c in cases] == [
        (8, ("futex_wait_timeout", "-t", "5000")),
        (9, ("futex_wait_timeout",)),
        (12, ("futex_requeue",)),
        (13, ("futex_waitv", "-b", "-l", "-t", "2000000000")),
    ]
    assert selftests.cases_text(cases).splitlines()[0] == "8 futex_wait_timeout -t 5000"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("./futex_other $COLOR", r"run.sh:2: runs futex_other, which the Makefile does not build"),
        ("./futex_requeue $VERBOSE", r"run.sh:2: cannot pass on \$VERBOSE"),
        ("./futex_requeue > log", r"run.sh:2: cannot pass on >"),
    ],
)
def test_run_sh_surprises_are_errors(line: str, message: str) -> None:
    with pytest.raises(AmpkitError, match=message):
        selftests.parse_run_sh(f"#!/bin/sh\n{line}\n", selftests.programs(MAKEFILE))


def test_a_makefile_without_programs_is_an_error() -> None:
    with pytest.raises(AmpkitError, match="lists no TEST_GEN_PROGS"):
        selftests.programs("TEST_PROGS := run.sh\n")


# Stand-ins for selftest programs: shell scripts printing TAP as kselftest.h does.
PROGRAMS = {
    "passes": 'echo "TAP version 13"; echo "1..2"; echo "ok 1 first $*"; echo "ok 2 second"\n'
    "echo here > here.txt\n",
    "fails": 'echo "ok 1 simple succeeds"; echo "not ok 2 many returned: 5"; '
    'echo "waiter failed errno 110" >&2; exit 1\n',
    "skips": 'echo "ok 1 # SKIP no such feature"; exit 4\n',
    "hangs": "echo started; exec sleep 60\n",
    "crashes": "kill -SEGV $$\n",
    "silent": "exit 0\n",
}


def make_suite(tmp_path: Path, cases: str) -> Path:
    suite = tmp_path / "suite"
    suite.mkdir()
    for name, body in PROGRAMS.items():
        prog = suite / name
        prog.write_text("#!/bin/sh\n" + body)
        prog.chmod(prog.stat().st_mode | stat.S_IXUSR)
    (suite / "cases").write_text(cases)
    return suite


def run_selftest(
    host_bin: Path, tmp_path: Path, suite: Path, *phases: str, timeout: int = 45
) -> subprocess.CompletedProcess[str]:
    work = tmp_path / "tmp"
    work.mkdir(exist_ok=True)
    program = host_bin / "ampkit-selftest"
    return subprocess.run(
        [str(program), "-t", "1", "-n", "1", "-k", str(timeout), str(suite), *phases],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "TMPDIR": str(work)},
    )


def test_every_case_is_run_and_reported(host_bin: Path, tmp_path: Path) -> None:
    suite = make_suite(
        tmp_path,
        "3 passes -a 1\n4 fails\n5 skips\n6 hangs\n7 crashes\n8 silent\n9 missing\n",
    )
    result = run_selftest(host_bin, tmp_path, suite, "-", "-", timeout=1)
    assert result.returncode == 0, result.stdout + result.stderr
    report = selftests.parse_report(result.stdout)
    assert report.done and report.timeout_s == 1 and report.suite == str(suite)
    assert [p.name for p in report.phases] == ["-", "-"]
    for phase in report.phases:
        by = {r.command.split()[0]: r for r in phase.results}
        assert [r.line for r in phase.results] == [3, 4, 5, 6, 7, 8, 9]
        # the arguments arrive; the lines are known in the second phase too,
        # where the output leaves them out as unchanged
        assert by["passes"].passed and by["passes"].tap == "PP"
        assert by["passes"].lines == ("ok 1 first -a 1", "ok 2 second")
        assert by["passes"].tail is None
        fails = by["fails"]
        assert not fails.passed and (fails.exit, fails.tap) == (1, "PF")
        assert fails.tests[1] == ("F", "not ok 2 many returned: 5")
        assert fails.tail is not None and "waiter failed errno 110" in fails.tail
        assert (by["skips"].exit, by["skips"].tap) == (4, "S") and not by["skips"].passed
        hangs = by["hangs"]
        assert hangs.timed_out and hangs.signal == 9 and not hangs.passed
        assert 900 <= hangs.ms < 5000, hangs
        assert (by["crashes"].exit, by["crashes"].signal) == (-1, 11)
        # exit 0 without a single TAP result is no pass
        assert by["silent"].exit == 0 and not by["silent"].passed
        assert by["missing"].exit == 127
    # each case ran in a directory of its own, not in the suite's
    assert not (suite / "here.txt").exists()
    assert len(list((tmp_path / "tmp").glob("ampkit-selftest.*/here.txt"))) == 2
    # unchanged lines are printed once
    assert result.stdout.count("ok 2 second") == 1


def test_flip_without_the_knob_says_so(host_bin: Path, tmp_path: Path) -> None:
    """On the host there is no policy to flip: the flipper's error is reported."""
    suite = make_suite(tmp_path, "1 passes\n")
    result = run_selftest(host_bin, tmp_path, suite, "flip")
    assert result.returncode == 0, result.stderr
    phase = selftests.parse_report(result.stdout).phases[0]
    assert phase.name == "flip" and phase.flips == 0
    assert phase.flip_errno == 2  # ENOENT: no /proc/sys/kernel/sched_amp_available_policies
    assert phase.results[0].passed


def test_a_policy_the_kernel_lacks_stops_the_run(host_bin: Path, tmp_path: Path) -> None:
    suite = make_suite(tmp_path, "1 passes\n")
    result = run_selftest(host_bin, tmp_path, suite, "colab")
    assert result.returncode == 1
    assert "setting the policy" in result.stderr


def test_output_cut_short_is_an_error() -> None:
    with pytest.raises(AmpkitError, match="no header"):
        selftests.parse_report('{"phase":"cfs","results":[]}\n')


def test_a_tail_without_the_first_lines_still_parses(host_bin: Path, tmp_path: Path) -> None:
    """The runner keeps an application's last 16 KiB: the header comes again at the end."""
    suite = make_suite(tmp_path, "1 passes\n2 fails\n")
    output = run_selftest(host_bin, tmp_path, suite, "-", "-").stdout
    second = output.index('{"phase"', output.index('{"phase"') + 1)
    report = selftests.parse_report("cut-off line\n" + output[second:])
    assert [p.name for p in report.phases] == ["-"] and report.done
    # what the lost phase printed is lost; results are not
    assert [r.tap for r in report.results] == ["PP", "PF"]
