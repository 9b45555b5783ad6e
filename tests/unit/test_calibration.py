"""The capacity calibration: arithmetic, the record, and how the platform
and every run use it (ampkit/calibration.py)."""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from ampkit import calibration, paths, platform
from ampkit.calibration import Calibration, derive, load, model_sha256, stale_reasons
from ampkit.errors import AmpkitError
from ampkit.rundir import RunDir

RECORD = Calibration(
    little_dmips_per_mhz=697,
    benchmark="intmark",
    size=2000,
    big_ns=5_000_000,
    little_ns=12_250_000,
    big_mhz=2000,
    little_mhz=1200,
    big_ipc=1.5,
    little_ipc=0.625,
    gem5_sha256="a" * 64,
    model_sha256="b" * 64,
    benchmark_sha256="c" * 64,
    date="2026-11-24",
    runs=("1B0L-cfs-alone-intmark-t1-n2000-r0", "0B1L-cfs-alone-intmark-t1-n2000-r0"),
)


def test_the_little_core_is_measured_in_cycles_against_the_big_one() -> None:
    # 5 ms at 2000 MHz is 10 M cycles; 12.25 ms at 1200 MHz is 14.7 M:
    # 1024 * 10 / 14.7 = 696.6 per MHz; the capacity at these clocks is
    # 696.6 * 1200 / 2000 = 418, i.e. 1024 * 5 / 12.25
    assert derive(5_000_000, 12_250_000, 2000, 1200) == 697
    # the same core at the same clock is the reference
    assert derive(7, 7, 1000, 1000) == 1024
    with pytest.raises(AmpkitError, match="faster per MHz"):
        derive(10, 5, 1000, 1000)
    with pytest.raises(AmpkitError, match="positive times and clocks"):
        derive(0, 5, 1000, 1000)


def test_a_record_reads_back_as_written(tmp_path: Path) -> None:
    path = tmp_path / "calibration.toml"
    path.write_text(RECORD.render())
    assert load(path) == replace(RECORD, source=path)
    assert load(tmp_path / "absent.toml") is None


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (("kind", '"something-else"'), "'kind' must be \"ampkit-capacity-calibration\""),
        (("little_dmips_per_mhz", "2000"), "must be an integer from 1 to 1024, not 2000"),
        (("colour", '"red"'), "'colour' is not a calibration key"),
        (("big_ipc", "0"), "'big_ipc' must be an IPC between 0 and 16, not 0"),
        (("little_ipc", '"fast"'), "'little_ipc' must be an IPC between 0 and 16, not 'fast'"),
        (("version", "1"), "'version' must be 2: older records measured the IPCs over a wider"),
    ],
)
def test_a_broken_record_names_file_line_and_key(
    tmp_path: Path, edit: tuple[str, str], expected: str
) -> None:
    key, value = edit
    lines = RECORD.render().splitlines()
    kept = [line for line in lines if not line.startswith(f"{key} =")]
    path = tmp_path / "calibration.toml"
    path.write_text("\n".join([*kept, f"{key} = {value}"]) + "\n")
    with pytest.raises(AmpkitError) as e:
        load(path)
    assert f"{path}:" in e.value.what and expected in e.value.what


def _platforms_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "platforms.toml"
    copy.write_text(platform.PLATFORMS_FILE.read_text())
    return copy


def test_a_calibration_beside_the_platforms_replaces_the_little_figure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(platform, "PLATFORMS_FILE", _platforms_copy(tmp_path))
    before = platform.get_platform("2B2L")
    assert before.little_core.dmips_source == "platforms.toml"
    (tmp_path / "calibration.toml").write_text(RECORD.render())
    after = platform.get_platform("2B2L")
    assert after.little_core.dmips_per_mhz == 697
    assert after.little_core.dmips_source.startswith("calibration: intmark on gem5 aaaaaaaaaaaa")
    # capacity = 1024 * 697 * 1200 / (1024 * 2000), the big CPUs stay 1024
    assert [c.capacity for c in after.cpus] == [1024, 1024, 418, 418]
    assert after.describe()["cores"]["little"]["dmips_source"] == after.little_core.dmips_source


def test_a_record_of_another_machine_or_binary_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    current = replace(RECORD, model_sha256=model_sha256())
    assert stale_reasons(current, gem5_sha256="a" * 64) == []
    assert stale_reasons(current, gem5_sha256=None) == []  # QEMU: no binary to compare
    other_binary = stale_reasons(current, gem5_sha256="d" * 64)
    assert len(other_binary) == 1 and "another gem5 binary (aaaaaaaaaaaa" in other_binary[0]
    other_model = stale_reasons(RECORD, gem5_sha256=None)
    assert len(other_model) == 1 and "another machine model" in other_model[0]
    # the capacities the kernel is told are not part of the model: writing
    # a calibration does not stale it, changing a core's caches does
    copy = _platforms_copy(tmp_path)
    text = copy.read_text()
    copy.write_text(text.replace("dmips_per_mhz = 578", "dmips_per_mhz = 500"))
    assert model_sha256(copy) == model_sha256()
    copy.write_text(text.replace("size_kib = 512", "size_kib = 1024"))
    assert model_sha256(copy) != model_sha256()


def test_the_power_models_are_not_part_of_the_machine_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the power models take their reference IPC from the record, so
    # editing them must not stale it; editing a core model must
    configs = tmp_path / "configs"
    (configs / "ampkit_gem5").mkdir(parents=True)
    for name in ("ampkit_gem5/power.py", "ampkit_gem5/cores.py", "platforms.toml"):
        (configs / name).write_text((paths.CONFIGS / name).read_text())
    monkeypatch.setattr(calibration, "CONFIGS", configs)
    before = model_sha256()
    (configs / "ampkit_gem5/power.py").write_text("# other coefficients\n")
    assert model_sha256() == before
    (configs / "ampkit_gem5/cores.py").write_text("# another core\n")
    assert model_sha256() != before


def test_the_reference_ipc_is_the_one_cpu_s_instructions_over_cycles() -> None:
    summary = {"cpus": [{"cpu": 0, "cluster": "bigCluster", "insts": 3e6, "cycles": 2e6}]}
    assert calibration.core_ipc(summary, "r") == 1.5
    assert RECORD.ipc("big") == 1.5 and RECORD.ipc("little") == 0.625
    two = {"cpus": summary["cpus"] * 2}
    with pytest.raises(AmpkitError, match="has 2 CPUs in its statistics, not 1"):
        calibration.core_ipc(two, "r")
    with pytest.raises(AmpkitError, match="no instruction or cycle count"):
        calibration.core_ipc({"cpus": [{"insts": 1.0, "cycles": 0}]}, "r")


def test_the_manifest_carries_the_staleness_to_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "calibration.toml"
    path.write_text(RECORD.render())
    monkeypatch.setattr(calibration, "CALIBRATION_FILE", path)
    entry = calibration.manifest_entry(gem5_sha256="d" * 64)
    assert entry is not None and entry["record"]["little_dmips_per_mhz"] == 697
    assert len(entry["stale"]) == 2  # another model (the test record's) and binary
    run = tmp_path / "run"
    run.mkdir()
    manifest = {
        "kind": "ampkit-run",
        "version": 2,
        "run_id": "r",
        "engine": {"name": "gem5"},
        "platform": {"name": "2B2L", "big": 2, "little": 2, "calibration": entry},
        "policy": "cfs",
        "mix": {"name": "m", "apps": [{"program": "compute"}]},
        "repetition": 0,
    }
    (run / "manifest.json").write_text(json.dumps(manifest))
    assert RunDir(run).info().calibration_stale == tuple(entry["stale"])
    monkeypatch.setattr(calibration, "CALIBRATION_FILE", tmp_path / "absent.toml")
    assert calibration.manifest_entry(gem5_sha256=None) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[core.big]\nmodel = \n", ":2: not valid TOML: Invalid value (column 9)"),
        ('[core.big]\nmodel = "a"\nmodel = "b"\n', ":3: not valid TOML: Cannot overwrite a value"),
        ('core = "a57"\n', ":1: 'core' must be a table ([core.big] and [core.little])"),
    ],
)
def test_the_machine_model_reads_the_platforms_with_file_line_and_key(
    tmp_path: Path, text: str, expected: str
) -> None:
    broken = tmp_path / "platforms.toml"
    broken.write_text(text)
    with pytest.raises(AmpkitError) as e:
        model_sha256(broken)
    assert e.value.what.startswith(f"{broken}{expected}")


def test_the_shipped_record_was_measured_on_the_shipped_machine_model() -> None:
    """Every run, QEMU's too, takes the little core's capacity from the
    shipped record and reports it stale once the gem5 configuration or a
    core type changes: a change to configs/ needs the calibration measured
    again, in the same change."""
    shipped = load()
    assert shipped is not None, "configs/calibration.toml is gone"
    assert stale_reasons(shipped, gem5_sha256=None) == [], (
        "configs/ changed since configs/calibration.toml was measured: run "
        "'ampkit platform calibrate' (gem5) and commit the record with the change"
    )
