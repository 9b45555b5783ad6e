"""The contention-aware policy's inputs (ampkit.interference.Contention):
a run of ``contention`` hands its daemon the models of its mix's
applications and the threshold S, and a run, a command line or a campaign
whose models do not fit (none, another platform's, an application
missing, a threshold out of range, models for a policy that takes none)
is refused before any boot, saying what to do; and the pinned
applications of the profiling that fits the models."""

import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from ampkit import policies
from ampkit.campaign.plan import MATRIX, expand
from ampkit.campaign.spec import load_spec
from ampkit.cli import main
from ampkit.errors import EXIT_INPUT, EXIT_USAGE, AmpkitError, UsageError
from ampkit.interference import (
    DEFAULT_THRESHOLD_PCT,
    AppModel,
    Contention,
    Degradation,
    InterferenceModels,
    load_models,
)
from ampkit.mix import load_mix
from ampkit.platform import get_platform
from ampkit.run import EngineIdentity, RunRequest, policy_details, prepare
from ampkit.sizes import sized_for

pytestmark = pytest.mark.unit

ENGINE = EngineIdentity(name="qemu", version="QEMU emulator version 7.2.0", binary_sha256="e" * 64)
DTBS = {"2B2L": b"2B2L", "2B4L": b"2B4L"}
MIX = "sync2-contend-compute"  # contend t4, compute t2
#: each program's threads and size as a QEMU run of the mix has them
SIZED = {a.program: a for a in sized_for(load_mix(MIX), "qemu").apps}


def app_model(program: str, slope: float) -> AppModel:
    d = Degradation((slope, 0.0, 0.0, 0.0, 0.0), 1.0)
    return AppModel(
        program,
        SIZED[program].threads,
        SIZED[program].workload_size,
        {"big": (5.0, 1.0, 0.5), "little": (4.0, 1.0, 0.5)},
        {"big": d, "little": d},
    )


def model_file(
    tmp_path: Path,
    *,
    platform: str | None = "2B2L",
    engine: str = "qemu",
    programs: tuple[str, ...] = ("contend", "compute"),
) -> Path:
    provenance: dict[str, object] = {"engine": engine, "co_runs": 80}
    if platform is not None:
        provenance["platform"] = platform
    models = InterferenceModels(
        tuple(app_model(p, 0.5 + i) for i, p in enumerate(programs)), provenance
    )
    path = tmp_path / "models.toml"
    path.write_text(models.to_toml())
    return path


def request(tmp_path: Path, **changes: object) -> RunRequest:
    base = RunRequest(
        platform=get_platform("2B2L"),
        policy="contention",
        mix=load_mix(MIX),
        contention=Contention(load_models(model_file(tmp_path))),
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def test_a_run_hands_the_daemon_its_mix_s_models_and_the_threshold(tmp_path: Path) -> None:
    assert "contention" in policies.names() and policies.needs_models("contention")
    assert not policies.needs_models("sfd") and policies.kernel_policy("contention") == "cfs"
    run = request(tmp_path)
    prepared = prepare(run, ENGINE, "k" * 64, "i" * 64, dtb_cache=DTBS)
    lines = prepared.desc.splitlines()
    assert "policy cfs" in lines
    assert f"policy_daemon ampkit-contention -S {DEFAULT_THRESHOLD_PCT:g}" in lines
    data = [line.split() for line in lines if line.startswith("policy_data ")]
    # one line per application, by mix index, each its program's model
    assert [d[:3] for d in data] == [["policy_data", "app", "0"], ["policy_data", "app", "1"]]
    assert [float(d[11]) for d in data] == [0.5, 1.5]  # contend's slope, then compute's
    # the threshold and the models are part of what the run is
    other_s = replace(run, contention=Contention(run.contention.models, 12.5))  # type: ignore[union-attr]
    again = prepare(other_s, ENGINE, "k" * 64, "i" * 64, dtb_cache=DTBS)
    assert "policy_daemon ampkit-contention -S 12.5" in again.desc.splitlines()
    assert again.key != prepared.key
    details = policy_details(run)
    assert details["daemon"] == "ampkit-contention -S 30" and details["kernel_policy"] == "cfs"
    assert details["interference"]["models_sha256"] == run.contention.models.sha256  # type: ignore[union-attr]
    assert details["interference"]["provenance"]["platform"] == "2B2L"
    assert details["interference"]["threshold_pct"] == 30.0


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"contention": None}, "policy contention needs interference models"),
        ({"policy": "sfd"}, "policy sfd takes no interference models"),
        ({"platform": get_platform("2B4L")}, "were profiled on 2B2L, the run is on 2B4L"),
        ({"mix": load_mix("compute2-compute-chase")}, r"none for app 1 \(compute, 3 threads, n"),
    ],
)
def test_a_run_whose_models_do_not_fit_is_refused_before_boot(
    tmp_path: Path, changes: dict[str, object], said: str
) -> None:
    with pytest.raises(AmpkitError, match=said):
        prepare(request(tmp_path, **changes), ENGINE, "k" * 64, "i" * 64, dtb_cache=DTBS)


def test_models_of_another_engine_are_refused(tmp_path: Path) -> None:
    gem5s = Contention(load_models(model_file(tmp_path, engine="gem5")))
    with pytest.raises(AmpkitError, match="profiled on engine 'gem5', the run is on qemu"):
        prepare(request(tmp_path, contention=gem5s), ENGINE, "k" * 64, "i" * 64, dtb_cache=DTBS)


def test_models_that_do_not_say_their_platform_are_refused(tmp_path: Path) -> None:
    unsaid = Contention(load_models(model_file(tmp_path, platform=None)))
    with pytest.raises(AmpkitError, match=r"do not say which platform .*provenance.platform"):
        prepare(request(tmp_path, contention=unsaid), ENGINE, "k" * 64, "i" * 64, dtb_cache=DTBS)


@pytest.mark.parametrize("threshold", [-1.0, 1000.5, float("nan"), float("inf")])
def test_a_threshold_out_of_range_is_refused(tmp_path: Path, threshold: float) -> None:
    with pytest.raises(UsageError, match="a contention threshold of"):
        Contention(load_models(model_file(tmp_path)), threshold)


def test_the_command_line_says_what_a_contention_run_lacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    models = str(model_file(tmp_path))
    cases = (
        (["--policy", "contention"], "give --interference-models FILE", EXIT_USAGE),
        (["--policy", "sfd", "--interference-models", models], "not sfd", EXIT_USAGE),
        (["--policy", "cfs", "--contention-threshold", "20"], "not cfs", EXIT_USAGE),
        (
            ["--policy", "contention", "--interference-models", str(tmp_path / "none.toml")],
            "cannot read the interference models",
            EXIT_INPUT,
        ),
        (
            [
                "--policy",
                "contention",
                "--interference-models",
                models,
                "--contention-threshold",
                "-5",
            ],
            "a contention threshold of -5.0%",
            EXIT_USAGE,
        ),
    )
    for args, said, code in cases:
        assert main(["run", "--mix", MIX, "--no-build", *args]) == code, args
        assert said in capsys.readouterr().err, args


def write_spec(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "spec.toml"
    path.write_text(
        'name = "c"\nplatforms = ["2B2L"]\n' + f'mixes = ["{MIX}"]\n' + textwrap.dedent(body)
    )
    return path


def test_a_campaign_runs_contention_with_its_models_and_the_others_without(tmp_path: Path) -> None:
    model_file(tmp_path)
    spec = load_spec(
        write_spec(
            tmp_path,
            'policies = ["cfs", "sfd", "contention"]\n'
            'interference_models = "models.toml"\ncontention_threshold_pct = 45\n',
        )
    )
    matrix = {r.request.policy: r.request for r in expand(spec) if r.role == MATRIX}
    assert sorted(matrix) == ["cfs", "contention", "sfd"]
    assert matrix["cfs"].contention is None and matrix["sfd"].contention is None
    contention = matrix["contention"].contention
    assert contention is not None and contention.threshold_pct == 45.0
    assert contention.models.sha256 == load_models(tmp_path / "models.toml").sha256


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ('policies = ["contention"]\n', "no interference_models says which"),
        ('policies = ["sfd"]\ninterference_models = "models.toml"\n', "no policy takes it"),
        ('policies = ["cfs"]\ncontention_threshold_pct = 10\n', "no policy takes it"),
        ('policies = ["contention"]\ninterference_models = "nowhere.toml"\n', "does not exist"),
        (
            'policies = ["contention"]\ninterference_models = "models.toml"\n'
            "contention_threshold_pct = 2000\n",
            "contention_threshold_pct",
        ),
    ],
)
def test_a_spec_says_what_its_contention_policy_lacks(tmp_path: Path, body: str, said: str) -> None:
    model_file(tmp_path)
    with pytest.raises(AmpkitError, match=said):
        load_spec(write_spec(tmp_path, body))


def test_a_spec_whose_models_miss_an_application_is_refused_before_any_run(tmp_path: Path) -> None:
    model_file(tmp_path, programs=("contend",))
    spec = load_spec(
        write_spec(tmp_path, 'policies = ["contention"]\ninterference_models = "models.toml"\n')
    )
    with pytest.raises(AmpkitError, match=r"none for app 2 \(compute, 2 threads, n"):
        expand(spec)


def test_a_profiling_run_pins_each_application_to_the_cpus_it_names(tmp_path: Path) -> None:
    """RunRequest.app_cpus, for the profiling that fits the models: a cpus
    line after each pinned app, none after the others; pinned CPUs are
    part of the run's key; and refused when they do not fit."""
    run = RunRequest(platform=get_platform("2B2L"), policy="cfs", mix=load_mix(MIX))
    plain = prepare(run, ENGINE, "k" * 64, "i" * 64, dtb_cache=DTBS)
    assert "\ncpus " not in plain.desc
    pinned = prepare(
        replace(run, app_cpus=((3,), None)), ENGINE, "k" * 64, "i" * 64, dtb_cache=DTBS
    )
    lines = pinned.desc.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("app "))
    assert lines[first + 1] == "cpus 3" and not lines[-1].startswith("cpus")
    assert pinned.key != plain.key
    for changes, said in (
        ({"app_cpus": ((0,),)}, "CPUs given for 1 applications of a mix of 2"),
        ({"app_cpus": ((4,), None)}, r"pinned to CPUs \[4\]: 2B2L has CPUs 0-3"),
        ({"app_cpus": ((), None)}, r"pinned to CPUs \[\]"),
        ({"app_cpus": ((0,), None), "policy": "sfd"}, "places the applications itself"),
    ):
        with pytest.raises(UsageError, match=said):
            prepare(replace(run, **changes), ENGINE, "k" * 64, "i" * 64, dtb_cache=DTBS)


def test_a_profiling_run_can_end_with_its_first_application() -> None:
    """RunRequest.until: an until line names the app whose first run ends
    the run (the profile's target); part of the key; an index the mix
    lacks is refused."""
    run = RunRequest(platform=get_platform("2B2L"), policy="cfs", mix=load_mix(MIX))
    plain = prepare(run, ENGINE, "k" * 64, "i" * 64, dtb_cache=DTBS)
    ended = prepare(replace(run, until=0), ENGINE, "k" * 64, "i" * 64, dtb_cache=DTBS)
    assert "until 0" in ended.desc.splitlines() and "until" not in plain.desc
    assert ended.key != plain.key
    with pytest.raises(AmpkitError, match="until 2: the run has applications 0-1"):
        prepare(replace(run, until=2), ENGINE, "k" * 64, "i" * 64, dtb_cache=DTBS)
