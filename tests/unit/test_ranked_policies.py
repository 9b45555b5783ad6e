"""The ranked policies (hsp, eef) as the kit hands them their inputs: the
mix's energy hint, the run description's line for it, the profile it comes
from, and the refusal of a run or campaign that lacks what a policy ranks by."""

import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from ampkit import policies
from ampkit.campaign.plan import MATRIX, expand
from ampkit.campaign.spec import load_spec
from ampkit.errors import AmpkitError
from ampkit.mix import App, load_mix, render_mix
from ampkit.profile import apps_of_mixes, load_profile
from ampkit.rundesc import RunDescription

SAEZ = Path(__file__).resolve().parents[2] / "measurements" / "saez-model"

MIX = """
description = "two single-threaded programs"
category = "compute"

[[app]]
program = "compute"
threads = 1
size = 100
speedup = 3.0
epi_big_nj = 1.5

[[app]]
program = "chase"
threads = 1
size = 100
speedup = 2.0
"""


def write(tmp_path: Path, text: str, name: str = "m.toml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def test_the_energy_hint_is_read_rendered_and_described(tmp_path: Path) -> None:
    mix = load_mix(str(write(tmp_path, MIX)))
    assert [a.epi_big_nj for a in mix.apps] == [1.5, None]
    again = load_mix(str(write(tmp_path, render_mix(mix), "again.toml")))
    assert [(a.speedup, a.epi_big_nj) for a in again.apps] == [(3.0, 1.5), (2.0, None)]
    described = mix.describe()["apps"]
    # absent when not given: descriptions of mixes without it are unchanged
    assert described[0]["epi_big_nj"] == 1.5 and "epi_big_nj" not in described[1]


@pytest.mark.parametrize("value", ["0.0", "1001", '"high"'])
def test_an_energy_hint_out_of_range_names_its_key(tmp_path: Path, value: str) -> None:
    text = MIX.replace("epi_big_nj = 1.5", f"epi_big_nj = {value}")
    with pytest.raises(AmpkitError, match=r"app\[0\]\.epi_big_nj|epi_big_nj"):
        load_mix(str(write(tmp_path, text)))


def test_the_run_description_carries_the_hint_in_picojoules(tmp_path: Path) -> None:
    mix = load_mix(str(write(tmp_path, MIX)))
    text = RunDescription.for_mix("r", "eef", 0, 60, mix).render()
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("app compute"))
    assert lines[first].split()[4] == "3072"
    assert lines[first + 1] == "epi_big_pj 1500"
    # only the hinted app has the line: a description without hints is unchanged
    assert text.count("epi_big_pj") == 1


def test_what_each_policy_ranks_by_is_listed_when_missing(tmp_path: Path) -> None:
    mix = load_mix(str(write(tmp_path, MIX)))
    assert policies.missing_inputs("hsp", mix.apps) == []
    assert policies.missing_inputs("eef", mix.apps) == ["app 2 (chase): epi_big_nj"]
    # the online model supplies speedups, never energies
    bare = load_mix(str(write(tmp_path, MIX.replace("speedup = 2.0\n", ""), "bare.toml")))
    assert policies.missing_inputs("hsp", bare.apps) == ["app 2 (chase): speedup"]
    assert policies.missing_inputs("hsp+online", bare.apps) == []
    assert policies.missing_inputs("eef+online", bare.apps) == ["app 2 (chase): epi_big_nj"]
    assert policies.missing_inputs("colab", bare.apps) == []
    assert policies.missing_inputs("cfs", bare.apps) == []
    # round robin's turns are speedup-blind: it needs nothing
    assert policies.missing_inputs("rr", bare.apps) == []
    assert "rr" in policies.POLICIES and "rr" not in policies.REQUIRED_INPUTS
    # ACFS's progress needs speedups; energies only weigh (ACFS-E), where given
    assert policies.missing_inputs("acfs", bare.apps) == ["app 2 (chase): speedup"]
    assert policies.missing_inputs("acfs", mix.apps) == []
    assert policies.needs_energies("eef") and policies.needs_energies("eef+online")
    assert not policies.needs_energies("hsp") and not policies.needs_energies("rr")
    # acfs weighs energies at an EDP factor above 1.0 (ACFS-E) alone
    assert not policies.needs_energies("acfs")
    assert not policies.needs_energies("acfs", "sysctl.kernel.sched_acfs_edp_factor=100")
    assert policies.needs_energies("acfs", "sysctl.kernel.sched_acfs_edp_factor=101")
    with pytest.raises(AmpkitError) as refused:
        policies.check_inputs("eef", bare.apps)
    assert "app 2 (chase): speedup; app 2 (chase): epi_big_nj" in refused.value.what
    assert "ampkit profile" in (refused.value.hint or "")


def test_acfs_e_on_the_command_line_needs_the_energies(tmp_path: Path) -> None:
    # the mix gives every speedup and one energy: acfs runs, ACFS-E would
    # weigh the chase as the least efficient for want of its energy
    mix = load_mix(str(write(tmp_path, MIX)))
    assert policies.missing_inputs("acfs", mix.apps) == []
    e500 = "quiet sysctl.kernel.sched_acfs_edp_factor=500"
    assert policies.acfs_edp_factor(e500) == 500
    assert policies.missing_inputs("acfs", mix.apps, e500) == ["app 2 (chase): epi_big_nj"]
    with pytest.raises(AmpkitError) as refused:
        policies.check_inputs("acfs", mix.apps, e500)
    assert "sched_acfs_edp_factor=500 weighs energies" in refused.value.what
    assert "leave the EDP factor at 100" in (refused.value.hint or "")
    # the kernel's forms of the name ('/' for '.'), and the last value wins
    for cmdline in (
        "sysctl/kernel/sched_acfs_edp_factor=500",
        "sysctl/kernel.sched_acfs_edp_factor=500",
        "sysctl.kernel.sched_acfs_edp_factor=100 sysctl.kernel.sched_acfs_edp_factor=500",
    ):
        assert policies.acfs_edp_factor(cmdline) == 500, cmdline
    # a factor of 1.0 weighs nothing, nor does the unfairness factor, nor
    # a setting after ' --' (init's, not the kernel's)
    for cmdline in (
        f"{e500} sysctl.kernel.sched_acfs_edp_factor=100",
        "sysctl.kernel.sched_acfs_unfairness_factor=300",
        "xsysctl.kernel.sched_acfs_edp_factor=500",
        "quiet -- sysctl.kernel.sched_acfs_edp_factor=500",
    ):
        assert policies.missing_inputs("acfs", mix.apps, cmdline) == [], cmdline
    # nor does it change what the other policies need
    assert policies.missing_inputs("hsp", mix.apps, e500) == []


@pytest.mark.parametrize(
    ("cmdline", "said"),
    [
        # the kernel would refuse each and boot on the value before
        ("sysctl.kernel.sched_acfs_edp_factor=five", "decimal number from 100 to 1000"),
        ("sysctl.kernel.sched_acfs_edp_factor=2000", "decimal number from 100 to 1000"),
        ("sysctl.kernel.sched_acfs_edp_factor=50", "decimal number from 100 to 1000"),
        ('sysctl.kernel.sched_acfs_edp_factor="500"', "decimal number from 100 to 1000"),
        # or read it other than it looks: 0x1f4 is 500, 0500 is 320
        ("sysctl.kernel.sched_acfs_edp_factor=0x1f4", "0x as hex"),
        ("sysctl.kernel.sched_acfs_unfairness_factor=0500", "leading 0 as octal"),
        (
            "sysctl.kernel.sched_acfs_unfairness_factor=200 "
            "sysctl.kernel.sched_acfs_edp_factor=500",
            "one factor above 1.0 at a time",
        ),
    ],
)
def test_an_acfs_factor_the_kernel_would_refuse_is_an_error(cmdline: str, said: str) -> None:
    with pytest.raises(AmpkitError) as refused:
        policies.acfs_factors(cmdline)
    assert said in refused.value.what and "hundredths" in (refused.value.hint or "")
    # a factor back at 1.0 first frees the other
    assert policies.acfs_factors(
        "sysctl.kernel.sched_acfs_unfairness_factor=200 "
        "sysctl.kernel.sched_acfs_unfairness_factor=100 "
        "sysctl.kernel.sched_acfs_edp_factor=500"
    ) == (500, 100)


def test_a_campaign_appending_acfs_e_needs_the_energies(tmp_path: Path) -> None:
    mix = write(tmp_path, MIX, "two.toml")
    spec = f"""
        name = "t"
        platforms = ["2B2L"]
        policies = ["cfs", "acfs"]
        mixes = ["{mix}"]
        append = "sysctl.kernel.sched_acfs_edp_factor=300"
    """
    with pytest.raises(AmpkitError) as refused:
        expand(load_spec(write(tmp_path, spec, "c.toml")))
    assert "policy acfs ranks threads by" in refused.value.what
    assert "app 2 (chase): epi_big_nj" in refused.value.what


def test_a_campaign_that_names_a_policy_without_its_inputs_is_refused(tmp_path: Path) -> None:
    mix = write(tmp_path, MIX, "two.toml")
    spec = f"""
        name = "t"
        platforms = ["2B2L"]
        policies = ["cfs", "hsp", "eef"]
        mixes = ["{mix}"]
    """
    with pytest.raises(AmpkitError) as refused:
        expand(load_spec(write(tmp_path, spec, "c.toml")))
    assert "policy eef ranks threads by" in refused.value.what
    assert "app 2 (chase): epi_big_nj" in refused.value.what
    # with the energy given, it plans; only eef's runs carry energies
    write(tmp_path, MIX.replace("speedup = 2.0\n", "speedup = 2.0\nepi_big_nj = 0.5\n"), "two.toml")
    runs = expand(load_spec(write(tmp_path, spec, "c.toml")))
    assert {r.request.policy for r in runs if r.role == MATRIX} == {"cfs", "hsp", "eef"}


def test_a_campaign_takes_its_energies_from_its_profile_for_eef_alone(tmp_path: Path) -> None:
    """A spec whose mixes name no energy runs eef with its profile's: eef's
    runs carry them, every other run's description stays what it was."""
    # the catalogue's single4 without the profile it names: the spec's gives them
    text = "".join(
        line
        for line in load_mix("single4").source.read_text().splitlines(keepends=True)
        if not line.startswith("profile =")
    )
    mix = write(tmp_path, text, "single4.toml")
    for mixes, speedups in (
        (f'["{mix}"]', f'speedups = "{SAEZ / "profile.toml"}"'),
        # the catalogue's, naming its own profile, and a spec that names none
        ('["single4"]', ""),
    ):
        spec = f"""
            name = "t"
            platforms = ["2B2L"]
            policies = ["cfs", "colab", "eef", "acfs"]
            mixes = {mixes}
            {speedups}
        """
        runs = {
            r.request.policy: r.request
            for r in expand(load_spec(write(tmp_path, spec, "c.toml")))
            if r.role == MATRIX
        }
        assert all(a.epi_big_nj for a in runs["eef"].mix.apps), mixes
        # acfs at an EDP factor of 1.0 never reads them: its key keeps
        # none, so that energies measured again leave its runs done
        for policy in ("cfs", "colab", "acfs"):
            assert all(a.epi_big_nj is None for a in runs[policy].mix.apps), policy
            assert (
                "epi_big_pj"
                not in RunDescription.for_mix("r", policy, 0, 60, runs[policy].mix).render()
            )
        # ACFS-E weighs them: its runs carry the profile's
        e300 = spec + 'append = "sysctl.kernel.sched_acfs_edp_factor=300"\n'
        acfs_e = next(
            r.request
            for r in expand(load_spec(write(tmp_path, e300, "c.toml")))
            if r.request.policy == "acfs"
        )
        assert [a.epi_big_nj for a in acfs_e.mix.apps] == [
            a.epi_big_nj for a in runs["eef"].mix.apps
        ]
    # without a profile anywhere, eef has none to run with
    bare = load_mix(str(mix))
    assert bare.profile is None and all(a.epi_big_nj is None for a in bare.apps)


def test_a_profile_gives_each_app_its_measured_energy() -> None:
    """The profile measured on gem5 gives each program its big cluster's
    energy per instruction next to its speedup, so that an eef run can be
    made from a mix that names neither."""
    profile = load_profile(SAEZ / "profile.toml")
    mix = profile.apply(load_mix("single4"), energies=True)
    for app in mix.apps:
        entry = next(e for e in profile.entries if e.matches(app))
        assert app.epi_big_nj == pytest.approx(entry.big_epi_nj, abs=1e-4)
        # clamped to what the kernel takes (latency's measured 11.8 is 8.0)
        assert app.speedup == pytest.approx(min(entry.speedup, 8.0), abs=1e-3)
    assert policies.missing_inputs("eef", mix.apps) == []
    # a program the profile lacks keeps no hint
    other = load_mix("demo")
    hinted = profile.apply(other, energies=True)
    # without energies asked for, none: a cfs or colab run stays as it was
    plain = profile.apply(load_mix("single4"))
    assert plain.apps and all(a.epi_big_nj is None for a in plain.apps)
    known = {e.app.program for e in profile.entries}
    for app in hinted.apps:
        assert (app.epi_big_nj is None) == (app.program not in known)


def test_both_ranked_policies_are_kit_policies() -> None:
    assert {"hsp", "eef", "hsp+online", "eef+online"} <= set(policies.names())
    # every policy that needs inputs is a kit policy, of the kernel or of a daemon
    assert set(policies.REQUIRED_INPUTS) <= {*policies.POLICIES, *policies.USER_POLICIES}


def test_profiling_mixes_measures_each_application_once_whatever_its_hints() -> None:
    plain = App("compute", threads=1, size=10)
    hinted = [
        replace(plain, speedup=2.0),
        replace(plain, speedup=2.0, epi_big_nj=0.5),
        replace(plain, epi_big_nj=0.7),
        replace(plain, size=20, epi_big_nj=0.5),
    ]
    # the hints describe an application; its size is what makes another one
    assert apps_of_mixes(hinted) == [plain, replace(plain, size=20)]


@pytest.mark.parametrize(
    ("hints", "message"),
    [
        ({"epi_big_nj": 0.0001}, "an energy per instruction of 0.0001 nJ"),
        ({"epi_big_nj": 2000.0}, "an energy per instruction of 2000 nJ"),
        ({"speedup": 9.0}, "a speedup of 9"),
    ],
)
def test_an_application_built_in_code_is_held_to_the_kernel_s_bounds(
    hints: dict[str, float], message: str
) -> None:
    # refused where it is made, not when a run's description is written
    with pytest.raises(AmpkitError) as refused:
        App("compute", threads=1, size=10, **hints)  # type: ignore[arg-type]
    assert message in refused.value.what and "the kernel takes" in refused.value.what


def test_a_run_of_eef_takes_the_energies_of_the_mix_s_own_profile() -> None:
    """'ampkit run --policy eef --mix single4' without --speedups: the mix
    names its profile, whose energies eef takes; a policy that does not
    weigh them gets none, and --speedups still comes first."""
    from ampkit.cli import _with_hints

    mix = load_mix("single4")
    own = load_profile(SAEZ / "profile.toml")
    eef = _with_hints(mix, None, energies=True)
    assert [a.epi_big_nj for a in eef.apps] == [own.epi_hint_for(a) for a in mix.apps]
    assert policies.missing_inputs("eef", eef.apps) == []
    assert all(a.epi_big_nj is None for a in _with_hints(mix, None).apps)
    # its own profile comes first: another given changes neither its hints
    # nor its energies
    shipped = _with_hints(mix, str(SAEZ.parents[1] / "configs" / "speedups.toml"), energies=True)
    assert shipped == eef
    # a speedup set by hand stays: energies come in, nothing else
    by_hand = replace(mix, apps=(replace(mix.apps[0], speedup=2.0), *mix.apps[1:]))
    assert _with_hints(by_hand, None, energies=True).apps[0].speedup == 2.0


def test_a_campaign_keeps_the_hints_of_a_mix_that_names_its_own_profile(tmp_path: Path) -> None:
    """single4 in a campaign whose profile is the shipped table (two-thread
    runs at other sizes): its applications keep their own profile's hints
    under every policy, and eef's runs differ from the others by their
    energies alone."""
    shipped = SAEZ.parents[1] / "configs" / "speedups.toml"
    spec = f"""
        name = "t"
        platforms = ["2B2L"]
        policies = ["cfs", "hsp", "eef"]
        mixes = ["single4"]
        speedups = "{shipped}"
    """
    runs = {
        r.request.policy: r.request.mix
        for r in expand(load_spec(write(tmp_path, spec, "c.toml")))
        if r.role == MATRIX
    }
    own = [a.speedup for a in load_mix("single4").apps]
    assert own == [3.164, 8.0, 5.963, 1.381]
    for policy in ("cfs", "hsp", "eef"):
        assert [a.speedup for a in runs[policy].apps] == own, policy
    assert all(a.epi_big_nj for a in runs["eef"].apps)
    assert [replace(a, epi_big_nj=None) for a in runs["eef"].apps] == list(runs["hsp"].apps)


def single4_campaign(tmp_path: Path, policies: str) -> tuple[Path, Path]:
    """single4 as m.toml beside its own copy of the Saez profile, and a
    campaign spec of it under ``policies``: the profile and the spec."""
    profile = tmp_path / "profile.toml"
    profile.write_text((SAEZ / "profile.toml").read_text())
    mix = load_mix("single4").source.read_text()
    write(tmp_path, mix.replace("../../measurements/saez-model/profile.toml", "profile.toml"))
    spec = f'name = "t"\nplatforms = ["2B2L"]\npolicies = {policies}\nmixes = ["m.toml"]\n'
    return profile, write(tmp_path, spec, "c.toml")


def test_a_campaign_keeps_the_energies_of_the_mix_s_own_profile_as_it_first_read_it(
    tmp_path: Path,
) -> None:
    """The profile a mix names is pinned with the campaign's other tables:
    measured again afterwards, it changes none of the campaign's runs."""
    from ampkit.campaign.runner import pin_tables, with_pins
    from ampkit.campaign.store import CampaignDir

    profile, spec_path = single4_campaign(tmp_path, '["cfs", "eef"]')

    def eef_energies(pinned: bool = True) -> list[float | None]:
        spec = load_spec(spec_path)
        if pinned:
            spec = with_pins(spec, cdir.root)
        eef = next(r.request for r in expand(spec) if r.request.policy == "eef")
        return [a.epi_big_nj for a in eef.mix.apps]

    cdir = CampaignDir(tmp_path / "campaign")
    cdir.create()
    first = [a.epi_big_nj for a in load_spec(spec_path).mixes[0].apps]
    assert first == [None] * 4  # the energies come at planning, from the profile
    pin_tables(load_spec(spec_path), cdir)
    assert cdir.mix_profile("m").read_text() == profile.read_text()
    before = eef_energies()
    assert all(before)
    # the profile measured again: energies 10% up
    profile.write_text(
        "\n".join(
            f"big_epi_nj = {float(line.split('=')[1]) * 1.1}"
            if line.startswith("big_epi_nj")
            else line
            for line in profile.read_text().splitlines()
        )
        + "\n"
    )
    assert eef_energies(pinned=False) != before  # the premise: it would change them
    assert eef_energies() == before
    # pinning again keeps the first copy
    pin_tables(load_spec(spec_path), cdir)
    assert eef_energies() == before


def test_a_campaign_says_when_a_profile_it_pinned_differs_now(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ampkit.campaign.runner import pin_tables
    from ampkit.campaign.store import CampaignDir

    profile, spec_path = single4_campaign(tmp_path, '["eef"]')
    cdir = CampaignDir(tmp_path / "campaign")
    cdir.create()
    pin_tables(load_spec(spec_path), cdir)
    pin_tables(load_spec(spec_path), cdir)
    assert "differs now" not in capsys.readouterr().err
    profile.write_text(profile.read_text() + "\n# measured again\n")
    pin_tables(load_spec(spec_path), cdir)
    said = capsys.readouterr().err
    assert "keeps the copy it pinned of profile.toml" in said and "differs now" in said
