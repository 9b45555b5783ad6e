"""The seeded perturbation: each app of a run released after a delay drawn
from the run's identity without its policy (ampkit/perturb.py)."""

import hashlib
import statistics
import textwrap
from pathlib import Path

import pytest

from ampkit import perturb
from ampkit.campaign.plan import MATRIX, expand
from ampkit.campaign.spec import load_spec
from ampkit.errors import AmpkitError
from ampkit.mix import load_mix
from ampkit.platform import get_platform
from ampkit.run import EngineIdentity, PreparedRun, RunRequest, prepare
from ampkit.rundir import EngineEntry, Manifest

QEMU = EngineIdentity(name="qemu", version="QEMU emulator version 7.2.0", binary_sha256="e" * 64)
DTBS = {name: name.encode() for name in ("2B2L", "0B2L", "2B4L", "0B4L")}

MIX = """
description = "two apps, sized"
category = "synchronisation"

[[app]]
program = "contend"
threads = 4
size = 300
speedup = 2.824

[[app]]
program = "compute"
threads = 2
size = 9000
"""

#: The description of that mix as the kit wrote it before perturbations
#: existed: an unperturbed run must keep it to the byte, and with it its key.
UNPERTURBED = """\
ampkit-run 1
run_id 2B2L-colab-m-r1
policy colab
repetition 1
timeout_s 120
method restart
m5ops 0
app contend 0 4 2892 /bin/contend -t 4 -n 300
app compute 0 2 0 /bin/compute -t 2 -n 9000
"""


def mix_file(tmp_path: Path) -> Path:
    path = tmp_path / "m.toml"
    path.write_text(MIX)
    return path


def prepared(tmp_path: Path, **kw: object) -> PreparedRun:
    fields: dict[str, object] = {
        "platform": get_platform("2B2L"),
        "policy": "colab",
        "mix": load_mix(str(mix_file(tmp_path))),
        "repetition": 1,
    }
    fields.update(kw)
    request = RunRequest(**fields)  # type: ignore[arg-type]
    return prepare(request, QEMU, "k" * 64, "i" * 64, dtb_cache=dict(DTBS))


def delays_in(desc: str) -> list[int]:
    return [int(line.split()[1]) for line in desc.splitlines() if line.startswith("start_delay_us")]


def test_off_leaves_the_description_and_key_as_they_were(tmp_path: Path) -> None:
    default = prepared(tmp_path)
    off = prepared(tmp_path, perturb_us=0)
    assert default.desc == off.desc == UNPERTURBED
    assert off.inputs["run_desc_sha256"] == hashlib.sha256(UNPERTURBED.encode()).hexdigest()
    assert off.key == default.key and off.perturbation is None


def test_the_same_run_gets_the_same_delays_and_description(tmp_path: Path) -> None:
    one = prepared(tmp_path, perturb_us=50)
    two = prepared(tmp_path, perturb_us=50)
    assert one.desc == two.desc and one.key == two.key
    assert one.perturbation is not None and one.perturbation == two.perturbation
    delays = delays_in(one.desc)
    assert delays == list(one.perturbation.start_delays_us)
    assert len(delays) == 2 and all(0 <= d <= 50 for d in delays)
    # each delay follows its own app line; the rest is the unperturbed description
    lines = one.desc.splitlines()
    assert lines[lines.index("start_delay_us " + str(delays[0])) - 1].startswith("app contend")
    assert [x for x in lines if not x.startswith("start_delay_us")] == UNPERTURBED.splitlines()
    assert one.key != prepared(tmp_path).key
    # the seed is the mix's, the platform's and the repetition's
    assert one.perturbation.seed == perturb.seed_of("m", "2B2L", 1)


def test_every_policy_meets_the_same_delays_and_each_repetition_its_own(tmp_path: Path) -> None:
    by_policy = {p: prepared(tmp_path, policy=p, perturb_us=50) for p in ("cfs", "colab", "wash")}
    assert len({tuple(delays_in(r.desc)) for r in by_policy.values()}) == 1
    assert len({r.key for r in by_policy.values()}) == 3
    by_rep = [prepared(tmp_path, repetition=r, perturb_us=50).perturbation for r in range(5)]
    assert len({p.seed for p in by_rep if p}) == 5
    assert len({p.start_delays_us for p in by_rep if p}) == 5
    other_platform = prepared(tmp_path, platform=get_platform("2B4L"), perturb_us=50)
    assert other_platform.perturbation != by_policy["colab"].perturbation


def test_delays_are_uniform_over_the_bound() -> None:
    seeds = [perturb.seed_of("m", "p", r) for r in range(400)]
    draws = [d for seed in seeds for d in perturb.start_delays(seed, 4, 50)]
    assert min(draws) == 0 and max(draws) == 50
    assert statistics.mean(draws) == pytest.approx(25, abs=1.5)
    assert len(set(draws)) == 51
    assert perturb.start_delays("0123456789abcdef", 3, 0) == (0, 0, 0)


@pytest.mark.parametrize("bad", [-1, perturb.MAX_US + 1, True])
def test_a_bound_out_of_range_is_refused(tmp_path: Path, bad: int) -> None:
    with pytest.raises(AmpkitError, match="a perturbation of up to"):
        prepared(tmp_path, perturb_us=bad)


def test_the_manifest_records_the_perturbation(tmp_path: Path) -> None:
    run = prepared(tmp_path, perturb_us=50)
    assert run.perturbation is not None
    manifest = Manifest(
        run_id=run.request.run_id,
        engine=EngineEntry(name="qemu", statistics=False),
        platform={"name": "2B2L"},
        policy="colab",
        mix={"name": "m"},
        repetition=1,
        perturbation=run.perturbation.to_json(),
    ).to_json()
    assert manifest["perturbation"] == {
        "max_us": 50,
        "seed": perturb.seed_of("m", "2B2L", 1),
        "start_delays_us": delays_in(run.desc),
    }
    unperturbed = Manifest(
        run_id="r", engine=EngineEntry(name="qemu", statistics=False), platform={},
        policy="cfs", mix={}, repetition=0,
    ).to_json()  # fmt: skip
    assert "perturbation" not in unperturbed


def write_spec(tmp_path: Path, body: str) -> Path:
    mix_file(tmp_path)
    path = tmp_path / "c.toml"
    path.write_text(textwrap.dedent(body).lstrip())
    return path


def test_a_campaign_perturbs_every_run_and_its_references(tmp_path: Path) -> None:
    spec = load_spec(
        write_spec(
            tmp_path,
            """
            name = "p"
            platforms = ["2B2L"]
            policies = ["cfs", "colab"]
            mixes = ["m.toml"]
            repetitions = 2
            perturb_us = 40
            """,
        )
    )
    assert spec.perturb_us == 40
    runs = expand(spec)
    assert runs and all(r.request.perturb_us == 40 for r in runs)
    descs = {
        r.run_id: prepare(r.request, QEMU, "k" * 64, "i" * 64, dtb_cache=dict(DTBS)).desc
        for r in runs
    }
    for rep in (0, 1):
        cfs, colab = (delays_in(descs[f"2B2L-{p}-m-r{rep}"]) for p in ("cfs", "colab"))
        assert cfs == colab and len(cfs) == 2
    assert delays_in(descs["2B2L-cfs-m-r0"]) != delays_in(descs["2B2L-cfs-m-r1"])
    # a reference (one app alone) is released after a delay of its own too
    refs = [r for r in runs if r.role != MATRIX]
    assert refs and all(len(delays_in(descs[r.run_id])) == 1 for r in refs)
    # without the key, nothing is perturbed
    plain = load_spec(write_spec(tmp_path, 'name = "p"\nplatforms = ["2B2L"]\n'
                                 'policies = ["cfs"]\nmixes = ["m.toml"]\n'))  # fmt: skip
    assert plain.perturb_us == 0 and all(r.request.perturb_us == 0 for r in expand(plain))


def test_a_bad_perturbation_in_a_spec_names_its_line(tmp_path: Path) -> None:
    path = write_spec(
        tmp_path,
        'name = "p"\nplatforms = ["2B2L"]\npolicies = ["cfs"]\nmixes = ["m.toml"]\n'
        "perturb_us = -5\n",
    )
    with pytest.raises(AmpkitError, match=r"c.toml:5: 'perturb_us' must be an integer from 0"):
        load_spec(path)
