import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from ampkit import references
from ampkit.analysis.synthetic import SynthApp, write_run
from ampkit.campaign.plan import MATRIX, KernelPin, Pins, PlannedRun, expand, keys
from ampkit.campaign.runner import _spec_source, dir_spec
from ampkit.campaign.slurm import _expand_ids
from ampkit.campaign.spec import Limits, load_spec, slurm_minutes
from ampkit.campaign.store import ENDED_OK_UNCOUNTED, FAILED, OK, STALE, TODO, CampaignDir
from ampkit.errors import AmpkitError
from ampkit.mix import load_mix, mix_names
from ampkit.run import EngineIdentity, prepare
from ampkit.rundir import QEMU_NOTICE, RunDir, RunKey

ENGINE = EngineIdentity(name="qemu", version="QEMU emulator version 7.2.0", binary_sha256="e" * 64)


def write_spec(tmp_path: Path, body: str, name: str = "c.toml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body).lstrip())
    return path


BASIC = """
    name = "t"
    platforms = ["2B2L", "1B3L"]
    policies = ["cfs", "colab", "wash"]
    mixes = ["sync2-contend-compute", "compute2-compute-chase"]
    repetitions = 2
"""


def pins(kernel: str = "k" * 64, initramfs: str = "i" * 64) -> Pins:
    return Pins(engine=ENGINE, kernel_digest=kernel, initramfs_sha256=initramfs, suite=None)


def fixed_keys(runs: list[PlannedRun], p: Pins) -> dict[str, str]:
    # A fixed device tree per platform: the key's other inputs without QEMU.
    dtbs = {name: name.encode() for name in ("2B2L", "1B3L", "0B2L", "0B3L")}
    return {
        r.run_id: prepare(
            r.request, p.engine, p.kernel_digest, p.initramfs_sha256, dtb_cache=dtbs
        ).key
        for r in runs
    }


def test_matrix_and_references(tmp_path: Path) -> None:
    spec = load_spec(write_spec(tmp_path, BASIC))
    runs = expand(spec)
    matrix = [r for r in runs if r.role == MATRIX]
    assert len(matrix) == 2 * 3 * 2 * 2
    assert len({r.run_id for r in runs}) == len(runs)
    # Every application of every mix has its alone and little-only reference
    # under the baseline, per platform and repetition, once however many mixes share it.
    refs = [r for r in runs if r.role != MATRIX]
    assert {r.request.policy for r in refs} == {"cfs"}
    apps = {(a.program, a.threads, a.size) for m in spec.mixes for a in m.apps}
    assert len(refs) == len(apps) * 2 * 2 * 2
    assert {r.request.platform.name for r in refs if r.role == "little-only"} == {"0B2L", "0B3L"}
    assert all(r.request.mix_limit_s == spec.limits.mix_limit_s for r in runs)

    # on gem5 the default wall limit follows the campaign's largest machine
    big = load_spec(write_spec(tmp_path, BASIC.replace('"1B3L"', '"4B4L"') + 'engine = "gem5"\n'))
    assert big.limits.guest_cpus == 8 and big.limits.wall_s > 2 * spec.limits.wall_s


def test_a_mix_may_have_repetitions_of_its_own(tmp_path: Path) -> None:
    spec = load_spec(
        write_spec(
            tmp_path,
            BASIC.replace("repetitions = 2", "repetitions = 1")
            + "[mix_repetitions]\nsync2-contend-compute = 3\n",
        )
    )
    assert spec.repetitions_of("sync2-contend-compute") == 3
    assert spec.repetitions_of("compute2-compute-chase") == 1
    runs = expand(spec)
    matrix = [r for r in runs if r.role == MATRIX]
    # 2 platforms x 3 policies x (3 + 1) repetitions
    assert len(matrix) == 2 * 3 * (3 + 1)
    reps = {(r.request.mix.name, r.request.repetition) for r in matrix}
    assert reps == {("sync2-contend-compute", n) for n in range(3)} | {
        ("compute2-compute-chase", 0)
    }
    # references follow 'repetitions' alone: each serves every mix of its application
    refs = [r for r in runs if r.role != MATRIX]
    assert {r.request.repetition for r in refs} == {0}
    apps = {(a.program, a.threads, a.size) for m in spec.mixes for a in m.apps}
    assert len(refs) == len(apps) * 2 * 2
    # and a mix run fewer times than 'repetitions' still has every reference
    fewer = load_spec(
        write_spec(tmp_path, BASIC + "[mix_repetitions]\nsync2-contend-compute = 1\n", "f.toml")
    )
    runs = expand(fewer)
    assert len([r for r in runs if r.role == MATRIX]) == 2 * 3 * (1 + 2)
    assert len([r for r in runs if r.role != MATRIX]) == len(apps) * 2 * 2 * 2
    # a mix the campaign does not run is an error at its line
    bad = write_spec(tmp_path, BASIC + "[mix_repetitions]\nsync2-amdahl-chase = 3\n", "b.toml")
    with pytest.raises(AmpkitError, match=r"b.toml:7: 'mix_repetitions.sync2-amdahl-chase' is "
                       r"not a mix of this campaign"):  # fmt: skip
        load_spec(bad)
    zero = write_spec(tmp_path, BASIC + "[mix_repetitions]\nsync2-contend-compute = 0\n", "z.toml")
    with pytest.raises(AmpkitError, match=r"z.toml:7: 'mix_repetitions.sync2-contend-compute' "
                       r"must be an integer from 1"):  # fmt: skip
        load_spec(zero)


def test_categories_and_duplicates(tmp_path: Path) -> None:
    spec = load_spec(
        write_spec(
            tmp_path,
            """
            name = "t"
            platforms = ["2B2L"]
            policies = ["cfs", "cfs"]
            mixes = ["category:compute", "compute2-compute-chase"]
            references = []
            """,
        )
    )
    # the catalogue's compute mixes; Saez et al.'s, which name their own
    # profile, are named by name
    compute = [
        n for n in mix_names() if load_mix(n).category == "compute" and not load_mix(n).profile
    ]
    assert "single4" not in compute and len(compute) >= 8
    assert sorted(m.name for m in spec.mixes) == sorted(compute)
    assert spec.policies == ("cfs",)
    assert len(expand(spec)) == len(compute)


@pytest.mark.parametrize(
    ("body", "where", "says"),
    [
        ('name = "t"\nplatforms = ["2B2L"]\npolicies = ["cfs"]\nmixes = ["demo"]\nrepeat = 2\n',
         ":5:", "'repeat' is not a campaign key"),
        ('name = "t"\nplatforms = ["9Q"]\npolicies = ["cfs"]\nmixes = ["demo"]\n',
         ":2:", "unknown platform '9Q'"),
        ('name = "t"\nplatforms = ["2B2L"]\npolicies = ["eas"]\nmixes = ["demo"]\n',
         ":3:", "unknown policy 'eas'"),
        ('name = "t"\nplatforms = ["2B2L"]\npolicies = ["cfs"]\nmixes = ["nosuch"]\n',
         ":4:", "unknown mix 'nosuch'"),
        ('name = "t"\nplatforms = ["2B2L"]\npolicies = ["cfs"]\nmixes = ["category:io"]\n',
         ":4:", "unknown category 'io'"),
        ('name = "t"\nplatforms = ["2B2L"]\npolicies = ["cfs"]\nmixes = ["demo"]\n'
         "[limits]\nmix_limit_s = 100\nwall_limit_s = 50\n", ":7:",
         "'limits.wall_limit_s' (50 s) must leave time"),
        ('name = "t"\nplatforms = ["2B2L"]\npolicies = ["cfs"]\nmixes = ["demo"]\n'
         "[limits]\nmix_s = 100\nmix_limit_s = 100\n", ":6:",
         "'limits.mix_s' and mix_limit_s are one limit"),
        ('name = "t"\nplatforms = ["2B2L"]\npolicies = ["cfs"]\nmixes = ["demo"]\n'
         '[executor]\nkind = "pbs"\n', ":6:", "'executor.kind' must be one of local, slurm"),
        ('name = "t"\nplatforms = ["2B2L"]\npolicies = ["cfs"]\nmixes = ["demo"]\n'
         "[executor]\njobs = 0\n", ":6:", "'executor.jobs' must be an integer from 1"),
        ('platforms = ["2B2L"]\npolicies = ["cfs"]\nmixes = ["demo"]\n', ":1:",
         "'name' is required but absent"),
        ('name = "a b"\nplatforms = ["2B2L"]\npolicies = ["cfs"]\nmixes = ["demo"]\n',
         ":1:", "'name' must be letters"),
        ('name = "t"\nplatforms = ["2B2L"]\npolicies = ["cfs"]\nmixes = ["demo"]\n'
         'qemu_clock = "tsc"\n', ":5:", "'qemu_clock' must be one of host, icount"),
        ('name = "t"\nplatforms = ["2B2L"]\npolicies = ["cfs"]\nmixes = ["demo"]\n'
         'engine = "gem5"\nqemu_clock = "icount"\n', ":6:",
         "'qemu_clock' asks gem5 for a guest clock it does not offer"),
        # an element of an array is reported at its own line
        ('name = "t"\nplatforms = [\n  "2B2L",\n  "9Q",\n]\npolicies = ["cfs"]\n'
         'mixes = ["demo"]\n', ":4:", "platforms 2: unknown platform '9Q'"),
        ('name = "t"\nplatforms = ["2B2L"]\npolicies = ["cfs"]\nmixes = ["demo"]\n'
         'references = [\n"alone",\n"slow"]\n', ":7:", "references 2: must be one of"),
        # a limit under its old name is reported under that name, at its line
        ('name = "t"\nplatforms = ["2B2L"]\npolicies = ["cfs"]\nmixes = ["demo"]\n'
         "[limits]\nmix_s = 0\n", ":6:", "'limits.mix_s' must be an integer from 1"),
        ('name = "t"\nplatforms = ["2B2L"]\npolicies = ["cfs"]\nmixes = ["demo"]\n'
         "[limits]\nrun_s = 50\nmix_limit_s = 100\n", ":6:",
         "'limits.run_s' (50 s) must leave time beyond mix_limit_s (100 s)"),
    ],
)  # fmt: skip
def test_spec_errors_name_file_line_and_key(
    tmp_path: Path, body: str, where: str, says: str
) -> None:
    path = tmp_path / "c.toml"
    path.write_text(body)
    with pytest.raises(AmpkitError) as e:
        load_spec(path)
    # a top-level key that is absent is reported where the top-level table begins
    assert str(e.value).startswith(f"{path}{where}")
    assert says in str(e.value)


def test_relative_paths_follow_the_spec(tmp_path: Path) -> None:
    (tmp_path / "mixes").mkdir()
    (tmp_path / "mixes" / "mine.toml").write_text(
        (Path(__file__).parents[2] / "workloads/mixes/demo.toml").read_text()
    )
    spec_path = write_spec(
        tmp_path,
        'name = "t"\nplatforms = ["2B2L"]\npolicies = ["cfs"]\nmixes = ["mixes/mine.toml"]\n',
    )
    assert [m.name for m in load_spec(spec_path).mixes] == ["mine"]
    copy = tmp_path / "elsewhere" / "spec.toml"
    copy.parent.mkdir()
    copy.write_text(spec_path.read_text())
    with pytest.raises(AmpkitError, match=r"mixes/mine\.toml"):
        load_spec(copy)
    assert [m.name for m in load_spec(copy, base=tmp_path).mixes] == ["mine"]


def test_a_campaign_run_by_its_directory_keeps_the_original_base(tmp_path: Path) -> None:
    """'campaign run DIR' reads DIR/spec.toml; the metadata it writes must
    still point relative paths at the original spec's directory."""
    (tmp_path / "mixes").mkdir()
    (tmp_path / "mixes" / "mine.toml").write_text(
        (Path(__file__).parents[2] / "workloads/mixes/demo.toml").read_text()
    )
    original = write_spec(
        tmp_path,
        'name = "t"\nplatforms = ["2B2L"]\npolicies = ["cfs"]\nmixes = ["mixes/mine.toml"]\n',
    )
    root = tmp_path / "camp"
    cdir = CampaignDir(root)
    cdir.create()
    (root / "spec.toml").write_text(original.read_text())
    cdir.write_meta({"spec_source": str(original), "spec_base": str(tmp_path)})
    spec = dir_spec(cdir)
    assert spec.base == tmp_path and [m.name for m in spec.mixes] == ["mine"]
    assert _spec_source(spec, root) == original  # not DIR/spec.toml
    assert _spec_source(load_spec(original), root) == original.resolve()


def test_keys_follow_inputs(tmp_path: Path) -> None:
    runs = expand(load_spec(write_spec(tmp_path, BASIC)))
    base = fixed_keys(runs, pins())
    assert len(set(base.values())) == len(runs)  # every run is distinct
    assert fixed_keys(runs, pins()) == base
    assert all(k != base[r] for r, k in fixed_keys(runs, pins(kernel="x" * 64)).items())
    assert all(k != base[r] for r, k in fixed_keys(runs, pins(initramfs="y" * 64)).items())
    # the guest clock is part of the engine's command, so of the key
    icount = expand(
        load_spec(
            write_spec(tmp_path, textwrap.dedent(BASIC) + 'qemu_clock = "icount"\n', "i.toml")
        )
    )
    assert all(r.request.qemu_clock == "icount" for r in icount)
    assert set(fixed_keys(icount, pins()).values()).isdisjoint(base.values())


KEY_SCRIPT = """
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from tests.unit.test_campaign import fixed_keys, pins
from ampkit.campaign.plan import expand
from ampkit.campaign.spec import load_spec
print(json.dumps(fixed_keys(expand(load_spec(Path(sys.argv[1]))), pins())))
"""


def test_keys_are_the_same_on_another_machine(tmp_path: Path) -> None:
    """Keys hold no path, host, user or time: another checkout, home, cache
    and working directory give the same keys."""
    spec = write_spec(tmp_path, BASIC)
    here = fixed_keys(expand(load_spec(spec)), pins())
    repo = Path(__file__).parents[2]
    other = tmp_path / "other-home"
    other.mkdir()
    env = {
        **os.environ,
        "HOME": str(other),
        "XDG_CACHE_HOME": str(other / "cache"),
        "AMPKIT_CACHE": str(other / "ampkit"),
        "TZ": "Asia/Kolkata",
    }
    moved = tmp_path / "moved-spec.toml"
    moved.write_text(spec.read_text())
    out = subprocess.run(
        [sys.executable, "-c", KEY_SCRIPT, str(moved), str(repo)],
        capture_output=True, text=True, cwd=other, env=env, check=True,
    )  # fmt: skip
    assert json.loads(out.stdout) == here


def _finished(cdir: CampaignDir, run_id: str, key: str, status: str, engine: str = "qemu") -> Path:
    """A finished run: one that counts when it ended ok on QEMU; a gem5 one
    has no statistics, so it does not."""
    gem5 = engine == "gem5"
    made = write_run(
        cdir.root.parent / "made",
        platform="2B2L",
        policy="cfs",
        mix=run_id,
        apps=[SynthApp("x", 1, 10**7)],
        key=key,
        status=status,
        engine=engine,
        statistics=gem5,
        timing_notice=None if gem5 else QEMU_NOTICE,
    )
    cdir.runs.mkdir(parents=True, exist_ok=True)
    return made.rename(cdir.run_dir(run_id))


def test_states_from_the_directory(tmp_path: Path) -> None:
    cdir = CampaignDir(tmp_path / "camp")
    cdir.create()
    _finished(cdir, "a", "k1", "ok")
    _finished(cdir, "b", "k1", "failed: app#0 crashed")
    _finished(cdir, "c", "old", "ok")
    (cdir.runs / "d.partial").mkdir()
    cdir.record_failure("e", "SLURM task 7_3 ended CANCELLED", tmp_path / "task-3.out")
    assert cdir.state("a", "k1").state == OK
    assert cdir.state("b", "k1").state == FAILED
    assert cdir.state("b", "k1").detail == "app#0 crashed"
    assert cdir.state("c", "k1").state == STALE
    assert cdir.state("d", "k1").state == TODO and cdir.state("d", "k1").detail == "interrupted"
    assert cdir.state("e", "k1").state == FAILED
    assert cdir.state("e", "k1").log == tmp_path / "task-3.out"
    assert cdir.state("f", "k1").state == TODO


def test_a_run_that_ended_ok_but_does_not_count_is_failed_with_why(tmp_path: Path) -> None:
    """A gem5 run without its statistics ended ok, but the report leaves it
    out: the campaign calls it failed, with the report's reason, rather than
    done (it once was, and was never run again)."""
    cdir = CampaignDir(tmp_path / "camp")
    cdir.create()
    run = _finished(cdir, "g", "k1", "ok", engine="gem5")
    for key in ("k1", None):
        state = cdir.state("g", key)
        assert state.state == FAILED, key
        assert state.detail == (
            f"{ENDED_OK_UNCOUNTED}: incomplete: a gem5 run without its statistics"
        )
        assert state.log == run


def test_the_campaign_and_the_references_agree_on_what_is_done(tmp_path: Path) -> None:
    """One answer to "is this run done?": RunDir.done(), which both ask."""
    cdir = CampaignDir(tmp_path / "camp")
    cdir.create()
    _finished(cdir, "counts", "k", "ok")
    _finished(cdir, "no-stats", "k", "ok", engine="gem5")
    _finished(cdir, "failed", "k", "failed: x#0 crashed")
    _finished(cdir, "other-key", "other", "ok")
    (cdir.runs / "never").mkdir()
    for run_id in ("counts", "no-stats", "failed", "other-key", "never"):
        path = cdir.run_dir(run_id)
        done = references.is_done(path, "k")
        assert done == RunDir(path).done("k") == (cdir.state(run_id, "k").state == OK), run_id
        assert done == (run_id == "counts")


def test_set_aside_keeps_every_attempt(tmp_path: Path) -> None:
    cdir = CampaignDir(tmp_path / "camp")
    cdir.create()
    _finished(cdir, "a", "k", "failed: x")
    first = cdir.set_aside("a", "failed")
    assert first is not None and (first / "run" / "status").read_text() == "failed: x\n"
    cdir.record_failure("a", "cancelled", None)
    (cdir.runs / "a.partial").mkdir()
    second = cdir.set_aside("a", "failed")
    assert second is not None and second.name == "2-failed"
    assert (second / "failure.json").is_file() and (second / "interrupted").is_dir()
    assert cdir.state("a", "k").state == TODO and cdir.attempt_count("a") == 2
    assert cdir.set_aside("a", "failed") is None


def test_one_runner_per_campaign(tmp_path: Path) -> None:
    cdir = CampaignDir(tmp_path / "camp")
    with cdir.locked("first runner"):
        assert cdir.holder() is not None and "first runner" in str(cdir.holder())
        with pytest.raises(AmpkitError, match="already in use: first runner"), cdir.locked("2nd"):
            pass
    assert cdir.holder() is None
    with cdir.locked("again"):
        pass


def test_slurm_task_ids_and_time() -> None:
    assert _expand_ids("3") == [3]
    assert _expand_ids("[0-4%2]") == [0, 1, 2, 3, 4]
    assert _expand_ids("1,5-6") == [1, 5, 6]
    assert _expand_ids("0-6:3") == [0, 3, 6]
    assert slurm_minutes(Limits(mix_limit_s=120)) == 5  # 120 s + 60 s boot + 120 s margin


def test_a_spec_with_the_limits_old_names_still_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A campaign directory made before the rename keeps a spec with mix_s
    and run_s: it must resume, and the user is told the new names (file,
    line, old key, new key)."""
    path = write_spec(
        tmp_path,
        'name = "t"\nplatforms = ["2B2L"]\npolicies = ["cfs"]\nmixes = ["demo"]\n'
        "[limits]\nmix_s = 100\nrun_s = 500\n",
    )
    spec = load_spec(path)
    assert (spec.limits.mix_limit_s, spec.limits.wall_limit_s) == (100, 500)
    told = capsys.readouterr().err
    assert f"{path}:6: 'limits.mix_s' is the old name of limits.mix_limit_s" in told
    assert f"{path}:7: 'limits.run_s' is the old name of limits.wall_limit_s" in told


def _planned(tmp_path: Path) -> list[PlannedRun]:
    spec = write_spec(
        tmp_path, 'name = "t"\nplatforms = ["2B2L"]\npolicies = ["cfs"]\nmixes = ["demo"]\n'
    )
    return expand(load_spec(spec))


def test_a_resumed_campaign_refuses_a_new_kernel_or_engine_while_it_has_finished_runs(
    tmp_path: Path,
) -> None:
    from ampkit.campaign.runner import _refuse_new_inputs

    spec = load_spec(
        write_spec(
            tmp_path, 'name = "t"\nplatforms = ["2B2L"]\npolicies = ["cfs"]\nmixes = ["demo"]\n'
        )
    )
    cdir = CampaignDir(tmp_path / "camp")
    cdir.create()
    old: dict[str, dict[str, Any]] = {
        "kernel": {"variant": "default", "digest": "a" * 64, "directory": "/gone"},
        "engine": {"name": "qemu", "binary_sha256": "b" * 64},
    }
    files = (("image_sha256", "i"), ("vmlinux_sha256", "v"))
    a, c = KernelPin("a" * 64, files), KernelPin("c" * 64, files)
    # nothing finished yet: nothing to mix, so nothing to refuse
    _refuse_new_inputs(cdir, old, spec, c, "d" * 64)
    _finished(cdir, "r", "k1", "ok")
    _refuse_new_inputs(cdir, old, spec, a, "b" * 64)  # the same inputs
    with pytest.raises(AmpkitError) as kernel:
        _refuse_new_inputs(cdir, old, spec, c, "b" * 64)
    assert "1 finished runs" in str(kernel.value) and "kernel default" in str(kernel.value)
    assert "aaaaaaaaaaaaaaaa" in str(kernel.value) and "cccccccccccccccc" in str(kernel.value)
    assert "--new-inputs" in str(kernel.value.hint)
    # a campaign that recorded its kernel's files: another digest of the
    # same files is the same kernel; other files are not
    old["kernel"]["binaries"] = dict(files)
    _refuse_new_inputs(cdir, old, spec, c, "b" * 64)
    other = KernelPin("c" * 64, (("image_sha256", "i2"), ("vmlinux_sha256", "v")))
    with pytest.raises(AmpkitError, match="kernel default"):
        _refuse_new_inputs(cdir, old, spec, other, "b" * 64)
    with pytest.raises(AmpkitError) as engine:
        _refuse_new_inputs(cdir, old, spec, a, "d" * 64)
    assert "qemu: the campaign ran a binary" in str(engine.value)
    assert "kernel default" not in str(engine.value)


def test_runs_of_the_archive_with_the_planned_key_are_taken_not_run_again(
    tmp_path: Path,
) -> None:
    from ampkit.campaign.runner import Entry, take_archived

    runs = _planned(tmp_path)
    assert len(runs) >= 3
    archive = CampaignDir(tmp_path / "archived")
    for i, run in enumerate(runs[:3]):
        # the first as planned, the second of other inputs, the third failed
        _finished(
            archive, run.run_id, "old" if i == 1 else f"k{i}", "failed: x" if i == 2 else "ok"
        )
    cdir = CampaignDir(tmp_path / "camp")
    cdir.create()
    rows = [Entry(r, f"k{i}", cdir.state(r.run_id, f"k{i}")) for i, r in enumerate(runs)]
    lines = take_archived(cdir, rows, archive.runs)
    assert lines == [
        f"  1 run(s) taken from the archive {archive.runs}",
        f"  2 run(s) of the archive {archive.runs} were made with other inputs than planned "
        "(or do not count): run again",
    ]
    assert cdir.state(runs[0].run_id, "k0").state == OK
    assert cdir.state(runs[1].run_id, "k1").state == TODO
    assert cdir.state(runs[2].run_id, "k2").state == TODO
    # a run the campaign has already is left as it is
    assert (
        take_archived(cdir, [Entry(runs[0], "k0", cdir.state(runs[0].run_id, "k0"))], archive.runs)
        == []
    )
    assert not list(cdir.runs.glob(".*"))  # no half-copied run left behind


def test_an_archived_run_of_the_same_kernel_files_under_another_digest_is_taken(
    tmp_path: Path,
) -> None:
    """The planned keys, made by keys() from pins of a kernel whose digest
    changed (a new revision of the source package) and whose files did
    not: the archived run made under the old digest is taken and counts as
    done; with other files, or with no build known, it is run again."""
    from ampkit.campaign.runner import Entry, take_archived

    runs = _planned(tmp_path)[:1]
    files = (("image_sha256", "i" * 64), ("vmlinux_sha256", "v" * 64))

    def key_with(pin: KernelPin) -> RunKey:
        pins = Pins(
            engine=ENGINE,
            kernel_digest=pin.digest,
            initramfs_sha256="f" * 64,
            suite=None,
            kernel_binaries=pin.binaries,
        )
        return next(key for _, key in keys(runs, pins))

    old = key_with(KernelPin("old", files))
    archive = CampaignDir(tmp_path / "archived")
    made = write_run(
        tmp_path / "made", platform="2B2L", policy="cfs", mix="demo",
        apps=[SynthApp("x", 1, 10**7)], key=old.digest, timing_notice=QEMU_NOTICE,
        kernel={"digest": "old", **dict(files)},
    )  # fmt: skip
    archive.runs.mkdir(parents=True)
    made.rename(archive.run_dir(runs[0].run_id))
    for pin, taken in (
        (KernelPin("new", (("image_sha256", "j" * 64), ("vmlinux_sha256", "v" * 64))), False),
        (KernelPin("new"), False),
        (KernelPin("new", files), True),
    ):
        key = key_with(pin)
        assert key.digest != old.digest
        cdir = CampaignDir(tmp_path / f"camp-{len(pin.binaries)}-{taken}")
        cdir.create()
        rows = [Entry(runs[0], key, cdir.state(runs[0].run_id, key))]
        lines = take_archived(cdir, rows, archive.runs)
        assert (cdir.state(runs[0].run_id, key).state == OK) is taken, (pin, lines)


def test_an_archive_must_be_a_folder(tmp_path: Path) -> None:
    (tmp_path / "runs").write_text("")
    spec = write_spec(
        tmp_path,
        'name = "t"\nplatforms = ["2B2L"]\npolicies = ["cfs"]\nmixes = ["demo"]\n'
        'archive = "runs"\n',
    )
    with pytest.raises(AmpkitError, match=r"archive.*not a folder"):
        load_spec(spec)
    (tmp_path / "runs").unlink()
    assert load_spec(spec).archive == tmp_path / "runs"  # not there yet: made when archived


def test_a_campaign_resumes_with_the_kernel_it_pinned_while_that_build_is_whole(
    tmp_path: Path,
) -> None:
    from ampkit.campaign.runner import _pinned_kernel

    build = tmp_path / "kernels" / "default-abc"
    build.mkdir(parents=True)
    for name in ("Image", "vmlinux"):
        (build / name).write_bytes(b"\0")
    (build / "manifest.json").write_text(json.dumps({"digest": "abc"}))
    meta = {"kernel": {"variant": "default", "digest": "abc", "directory": str(build)}}
    found = _pinned_kernel(meta, "default")
    assert found is not None and found.directory == build
    assert _pinned_kernel(meta, "hz1000") is None  # the spec now asks for another variant
    assert _pinned_kernel({"kernel": {**meta["kernel"], "digest": "other"}}, "default") is None
    (build / "vmlinux").unlink()  # a build cleaned away: the checkout's is built instead
    assert _pinned_kernel(meta, "default") is None
    assert _pinned_kernel({}, "default") is None


def test_a_campaign_says_before_it_starts_which_metrics_it_cannot_reference(
    tmp_path: Path,
) -> None:
    from ampkit.campaign.plan import unreferenced

    full = write_spec(tmp_path, BASIC)
    assert unreferenced(load_spec(full)) == []  # alone and little-only by default, cfs in
    lacking = write_spec(
        tmp_path,
        """
        name = "t"
        platforms = ["2B2L", "2B0L"]
        policies = ["colab", "wash"]
        mixes = ["demo"]
        references = ["little-only"]
        """,
        "lacking.toml",
    )
    lines = unreferenced(load_spec(lacking))
    assert len(lines) == 3, lines
    assert lines[0].startswith("no slowdowns (h_antt, h_stp, fairness, unfairness) for any mix")
    assert "lacks 'alone'" in lines[0] and "demo" in lines[0]
    assert lines[1] == "no ASP on 2B0L: it has no little CPUs to run a little-only reference on"
    assert lines[2] == "nothing normalised to cfs (the report's figures): 'policies' lacks it"
    no_little = write_spec(tmp_path, BASIC + 'references = ["alone"]\n', "nolittle.toml")
    assert unreferenced(load_spec(no_little)) == [
        "no ASP for any mix: 'references' lacks 'little-only' for "
        "sync2-contend-compute, compute2-compute-chase"
    ]
    # programs measured alone under cfs, one to a mix: nothing to reference them by
    (tmp_path / "one.toml").write_text(
        'description = "d"\ncategory = "compute"\n\n'
        '[[app]]\nprogram = "compute"\nthreads = 2\nsize = 10\n'
    )
    one = 'name = "t"\nplatforms = ["2B2L"]\nmixes = ["one.toml"]\nreferences = []\n'
    alone = write_spec(tmp_path, one + 'policies = ["cfs"]\n', "alone.toml")
    assert unreferenced(load_spec(alone)) == []
    # under another policy, one program is compared with its run alone under cfs
    other = write_spec(tmp_path, one + 'policies = ["cfs", "colab"]\n', "other.toml")
    lines = unreferenced(load_spec(other))
    assert len(lines) == 2 and "lacks 'alone'" in lines[0] and "one" in lines[0], lines
    assert lines[1].startswith("no ASP for any mix"), lines


def test_a_campaign_says_how_colab_classes_its_apps_and_warns_when_all_share_one(
    tmp_path: Path,
) -> None:
    from ampkit.campaign.plan import colab_classes

    # the catalogue's hints (2.82 to 4.03 in these mixes) on the kernel's
    # defaults (big from 2.0): every app big-class
    lines = colab_classes(load_spec(write_spec(tmp_path, BASIC)))
    assert lines[0] == (
        "colab classes (big from 2.000, little up to 1.500: the kernel's defaults): "
        "big: chase t3, compute t2, compute t3, contend t4"
    )
    assert len(lines) == 2 and lines[1].startswith("warning: under colab every app is big-class")

    def classes(big: int, little: int, sep: str = ".") -> list[str]:
        # the last value of each wins, as the kernel applies them in order;
        # '/' may stand for '.'
        append = (
            f'append = "sysctl.kernel.sched_colab_big_speedup=8000 '
            f"sysctl{sep}kernel{sep}sched_colab_big_speedup={big} "
            f'sysctl{sep}kernel{sep}sched_colab_little_speedup={little}"\n'
        )
        return colab_classes(load_spec(write_spec(tmp_path, BASIC + append, f"s{big}.toml")))

    # on the boundaries: compute's hint 3.469 is 3552 x 1/1024, contend's
    # 2.824 is 2892; at or above big is big, at or below little is little
    assert classes(3552, 2892, sep="/") == [
        "colab classes (big from 3.469, little up to 2.824: the command line's): "
        "big: chase t3, compute t2, compute t3; little: contend t4"
    ]
    assert classes(3553, 2891) == [
        "colab classes (big from 3.470, little up to 2.823: the command line's): "
        "big: chase t3; either: compute t2, compute t3, contend t4"
    ]
    # classes apart, but never within one mix: compute (3.469, 3552) little,
    # stream (3.946, 4041) either, each beside itself
    same = (
        'name = "t"\nplatforms = ["2B2L"]\npolicies = ["cfs", "colab"]\n'
        'mixes = ["compute2-compute-compute", "compute2-stream-stream"]\n'
        'append = "sysctl.kernel.sched_colab_big_speedup=4500 '
        'sysctl.kernel.sched_colab_little_speedup=3600"\n'
    )
    assert colab_classes(load_spec(write_spec(tmp_path, same, "same.toml"))) == [
        "colab classes (big from 4.395, little up to 3.516: the command line's): "
        "either: stream t3; little: compute t3",
        "warning: no mix holds apps of two classes, so COLAB never places one app "
        "of a mix apart from another by its sensitivity",
    ]
    # no colab, nothing to say
    cfs = write_spec(tmp_path, BASIC.replace('"cfs", "colab", "wash"', '"cfs"'), "cfs.toml")
    assert colab_classes(load_spec(cfs)) == []


@pytest.mark.parametrize(
    ("append", "message"),
    [
        ("sysctl.kernel.sched_colab_little_speedup=1.5", "plain decimal numbers"),
        ("sysctl.kernel.sched_colab_big_speedup=9", "would boot on its previous value"),
        ("sysctl.kernel.sched_colab_big_speedup=28910", "from 256 to 8192"),
        # the kernel reads a leading 0 as octal: 03000 would be 1536
        ("sysctl.kernel.sched_colab_big_speedup=03000", "plain decimal numbers"),
        ("sysctl.kernel.sched_colab_big_speedup=0xB4B", "plain decimal numbers"),
        (
            "sysctl.kernel.sched_colab_big_speedup=2000 "
            "sysctl/kernel/sched_colab_little_speedup=2100",
            "thresholds cross",
        ),
    ],
)
def test_colab_thresholds_the_kernel_would_refuse_are_refused_when_the_spec_loads(
    tmp_path: Path, append: str, message: str
) -> None:
    spec = write_spec(tmp_path, BASIC + f'append = "{append}"\n')
    with pytest.raises(AmpkitError, match=message) as raised:
        load_spec(spec)
    assert "append" in raised.value.what


def test_a_kernel_that_does_not_hold_a_knob_its_command_line_set_fails_the_run() -> None:
    from ampkit import policies

    cmdline = (
        "amp_policy=colab sched_timescale=4 sysctl.kernel.sched_colab_big_speedup=2500 "
        "sysctl/kernel/sched_colab_big_speedup=2891 sysctl.kernel.sched_colab_stats=0"
    )
    held = {"sched_colab_big_speedup": 2891, "sched_colab_stats": 1, "sched_timescale": 4}
    assert policies.knob_problems(cmdline, held) == []  # the runner writes the stats knob
    refused = {**held, "sched_colab_big_speedup": 2048}
    assert policies.knob_problems(cmdline, refused) == [
        "the kernel holds sched_colab_big_speedup=2048 where its command line sets 2891 "
        "(a value it refused?)"
    ]
    assert policies.knob_problems(cmdline, None) == []  # a guest that recorded none
    # what follows ' -- ' is init's, not the kernel's: it sets nothing
    assert policies.knob_problems(cmdline + " -- sysctl.kernel.sched_timescale=2", held) == []
    assert policies.colab_thresholds(
        "sysctl.kernel.sched_colab_big_speedup=3000 -- sysctl.kernel.sched_colab_big_speedup=9"
    ) == (3000, 1536)


def finish_run(cdir: CampaignDir, run: PlannedRun, wall_s: float) -> None:
    """A finished run of the campaign, synthetic, that took ``wall_s``."""
    request = run.request
    made = write_run(
        cdir.runs,
        platform=request.platform.name,
        policy=request.policy,
        mix=request.mix.name,
        apps=[SynthApp(a.program, a.threads, 10**7) for a in request.mix.apps],
        wall_s=wall_s,
    )
    assert made.name == run.run_id


def test_status_counts_what_the_finished_runs_cost_and_what_is_left(tmp_path: Path) -> None:
    from ampkit.campaign.runner import Entry, cost_lines
    from ampkit.campaign.store import RunState

    spec = load_spec(write_spec(tmp_path, BASIC + "\n[executor]\njobs = 2\n"))
    cdir = CampaignDir(tmp_path / "camp")
    runs = expand(spec)
    walls = {"cfs": 600.0, "colab": 1200.0}
    rows: list[Entry] = []
    done, failed_one = 0, False
    for r in runs:
        request = r.request
        finished = request.platform.name == "2B2L" and request.repetition == 0 and done < 4
        finished = finished and (r.role != MATRIX or request.mix.name == "sync2-contend-compute")
        if not finished:
            # one run failed: it is neither done nor left to run without 'rerun'
            rows.append(Entry(r, None, RunState(TODO if failed_one else FAILED)))
            failed_one = True
            continue
        done += 1
        finish_run(cdir, r, walls.get(request.policy, 300.0) if r.role == MATRIX else 100.0)
        rows.append(Entry(r, None, RunState(OK)))
    assert sum(1 for e in rows if e.state.state == FAILED) == 1
    lines = cost_lines(spec, cdir, rows)
    assert lines[0].startswith("cost so far")
    # the matrix's three policies of one mix, and one reference, all on 2B2L
    assert "  cfs: 1 runs, 0.2 h (600 s a run)" in lines
    assert "  colab: 1 runs, 0.3 h (1,200 s a run)" in lines
    assert "  wash: 1 runs, 0.1 h (300 s a run)" in lines
    assert "  references: 1 runs, 0.0 h (100 s a run)" in lines
    assert "  on 2B2L: 4 runs, 0.6 h (550 s a run)" in lines
    assert "  total: 4 runs, 0.6 h (550 s a run)" in lines
    # each run left at the mean of its own kind (policy or references, and
    # platform); 1B3L has none yet: the overall mean
    todo = [e for e in rows if e.state.state == TODO]
    mean = {("cfs", "2B2L"): 600.0, ("colab", "2B2L"): 1200.0, ("wash", "2B2L"): 300.0}
    mean[("references", "2B2L")] = 100.0

    def kind(e: Entry) -> tuple[str, str]:
        role = e.run.request.policy if e.run.role == MATRIX else "references"
        return role, e.run.request.platform.name

    guessed = sum(mean.get(kind(e), 550.0) for e in todo)
    unseen = sum(1 for e in todo if kind(e) not in mean)
    assert unseen > 0
    assert lines[-1] == (
        f"  to run: {len(todo)} runs, about {guessed / 3600 / 2:.1f} h with 2 at once at the "
        "mean so far of each one's policy (or references) and platform "
        f"({unseen} of them at the overall mean: none of their kind has run)"
    )
    # nothing finished, nothing to say
    assert cost_lines(spec, cdir, [Entry(r, None, RunState(TODO)) for r in runs]) == []
