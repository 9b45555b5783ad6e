"""The series' KUnit suites, run inside the kit kernel (booted with kunit.enable=1)."""

import re
from pathlib import Path

from ampkit.kernel import KernelBuild
from ampkit.mix import App, Mix
from ampkit.platform import get_platform
from ampkit.run import RunRequest, execute

#: KUnit suites of the series (CONFIG_*_KUNIT_TEST in ampkit.fragment).
SUITES = (
    "sched_colab",
    "sched_colab_pick",
    "sched_colab_balance",
    "sched_wash",
    "sched_amp_rank",
)

#: A KTAP result line, after printk's timestamp: "[    0.84] ok 1 sched_colab"
_RESULT = re.compile(r"^(?:\[[\s\d.]+\])?\s*(not ok|ok) \d+ (?:- )?(\S+)", re.MULTILINE)


def test_kunit_suites_pass(tmp_path: Path, kernel_build: KernelBuild, initramfs: Path) -> None:
    mix = Mix(
        name="kunit",
        description="boot only",
        category="compute",
        apps=(App(program="ampkit-probe", threads=1, size=1, args=("sleep", "0")),),
        source=Path("kunit"),
    )
    request = RunRequest(
        platform=get_platform("2B2L"),
        policy="cfs",
        mix=mix,
        # one glob: 6.1's kunit.filter_glob takes no list
        extra_cmdline="kunit.enable=1 kunit.filter_glob=sched_*",
    )
    outcome = execute(request, tmp_path / "run", kernel_build, initramfs)
    assert outcome.ok, outcome.status
    console = (outcome.directory / "console.log").read_text()
    results = dict((name, verdict) for verdict, name in _RESULT.findall(console))
    for suite in SUITES:
        assert results.get(suite) == "ok", f"suite {suite}: {results.get(suite)}\n{console}"
    failed = [name for name, verdict in results.items() if verdict != "ok"]
    assert failed == [], failed
    # the cases ran, not just the suite header
    assert sum(1 for name in results if name.startswith("colab_test_")) >= 6, results
    assert sum(1 for name in results if name.startswith("colab_test_pick_")) >= 6, results
    assert sum(1 for name in results if name.startswith("colab_test_balance_")) >= 2, results
    assert sum(1 for name in results if name.startswith("wash_test_")) >= 6, results
    assert sum(1 for name in results if name.startswith("amp_rank_test_")) >= 8, results
