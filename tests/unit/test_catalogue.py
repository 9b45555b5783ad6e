"""The mix catalogue, the mix generator and speedup profiles."""

from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from ampkit.errors import AmpkitError
from ampkit.mix import (
    CALIBRATION_PROGRAMS,
    CATALOGUE_SIZES,
    CATEGORIES,
    CATEGORY_PROGRAMS,
    MIN_THREADS,
    PRIOR_SPEEDUPS,
    SPEEDUP_MAX,
    App,
    generate_mix,
    known_programs,
    load_mix,
    mix_names,
    rehint_text,
    render_mix,
)
from ampkit.profile import SHIPPED_PROFILE, Entry, Profile, load_profile
from ampkit.sizes import sized_for

CATALOGUE = [n for n in mix_names() if n.split("-")[0].rstrip("24") in {"sync", "comm", "compute"}]


def test_catalogue_has_26_mixes_of_2_and_4_in_three_categories() -> None:
    assert len(CATALOGUE) >= 26
    mixes = [load_mix(n) for n in CATALOGUE]
    per_category = Counter(m.category for m in mixes)
    assert set(per_category) == set(CATEGORIES)
    assert min(per_category.values()) >= 8, per_category
    assert {len(m.apps) for m in mixes} == {2, 4}
    short = {"sync": "synchronisation", "comm": "communication", "compute": "compute"}
    for m in mixes:
        # the name says the category and the programs, in order
        head, *programs = m.name.split("-")
        assert short[head.rstrip("24")] == m.category, m.name
        assert programs == [a.program for a in m.apps], m.name
        # a synchronisation or communication mix has a program of its kind
        assert any(a.program in CATEGORY_PROGRAMS[m.category] for a in m.apps), m.name
        # sizes are the engine's: on QEMU the catalogue's
        assert all(a.engine_sized for a in m.apps), m.name
        for a in sized_for(m, "qemu").apps:
            assert a.size == CATALOGUE_SIZES[a.program], m.name
            assert a.speedup is not None and a.threads >= MIN_THREADS.get(a.program, 1)


def test_every_workload_has_a_catalogue_size_and_a_prior() -> None:
    workloads = [p for p in known_programs() if not p.startswith("ampkit-")]
    assert sorted(CATALOGUE_SIZES) == workloads, "give every workload a CATALOGUE_SIZES entry"
    assert sorted(PRIOR_SPEEDUPS) == workloads, "give every workload a PRIOR_SPEEDUPS entry"
    for programs in CATEGORY_PROGRAMS.values():
        assert set(programs) <= set(workloads)


def test_compute_mixes_have_no_waiting_programs() -> None:
    for m in (load_mix(n) for n in CATALOGUE):
        if m.category == "compute":
            assert {a.program for a in m.apps} <= set(CATEGORY_PROGRAMS["compute"]), m.name


@pytest.mark.parametrize("category", CATEGORIES)
@pytest.mark.parametrize("napps", [2, 4])
def test_generator_is_deterministic_and_round_trips(
    category: str, napps: int, tmp_path: Path
) -> None:
    one, two = generate_mix(category, napps, 7), generate_mix(category, napps, 7)
    assert one == two
    assert len(one.apps) == napps and one.category == category
    own = CATEGORY_PROGRAMS[category]
    assert one.apps[0].program in own
    if category == "compute":
        assert all(a.program in own for a in one.apps)
    path = tmp_path / f"{one.name}.toml"
    path.write_text(render_mix(one))
    back = load_mix(str(path))
    assert back.apps == one.apps and back.category == category


def test_a_mix_naming_its_own_profile_renders_back_to_itself(tmp_path: Path) -> None:
    single4 = load_mix("single4")
    assert single4.profile is not None
    for at, written in (
        (tmp_path / "deeper" / "single4.toml", '"../../'),
        (None, f'"{single4.profile}"'),
    ):
        path = at or tmp_path / "single4.toml"
        path.parent.mkdir(exist_ok=True)
        text = render_mix(single4, at)
        assert f"profile = {written}" in text
        path.write_text(text)
        back = load_mix(str(path))
        assert (back.profile, back.apps) == (single4.profile, single4.apps)


def test_generator_seeds_differ_and_take_profile_hints() -> None:
    mixes = {tuple(a.program for a in generate_mix("synchronisation", 4, s).apps) for s in range(8)}
    assert len(mixes) > 1
    mix = generate_mix("compute", 2, 1, speedups={"compute": 3.0, "chase": 1.1, "stream": 1.2})
    assert {a.speedup for a in mix.apps} <= {3.0, 1.1, 1.2}


def test_generator_refuses_what_it_cannot_make() -> None:
    with pytest.raises(AmpkitError, match="unknown category 'misc'"):
        generate_mix("misc", 2, 0)
    with pytest.raises(AmpkitError, match="1 to 16"):
        generate_mix("compute", 0, 0)


def entry(program: str, big: int, little: int, threads: int = 2) -> Entry:
    app = App(program, threads, CATALOGUE_SIZES[program])
    return Entry(app, (big, big), (little, little))


def test_profile_round_trips_and_gives_hints(tmp_path: Path) -> None:
    prof = Profile(
        engine="gem5",
        cpus=2,
        entries=(entry("compute", 100, 220), entry("compute", 100, 180, 4), entry("chase", 10, 9)),
        provenance=(("engine_sha256", "g" * 64), ("scale", "0.1"), ("date", "2026-11-25")),
    )
    path = tmp_path / "speedups.toml"
    path.write_text(prof.render())
    back = load_profile(path)
    assert back.provenance == prof.provenance
    assert [e.speedup for e in back.entries] == pytest.approx([2.2, 1.8, 0.9])
    # per program: the geometric mean of its entries
    assert back.speedups()["compute"] == pytest.approx((2.2 * 1.8) ** 0.5)
    mix = load_mix("compute2-compute-chase")  # compute with 3 threads, chase with 3
    hinted = back.apply(mix)
    assert [a.speedup for a in hinted.apps] == [round((2.2 * 1.8) ** 0.5, 3), 0.9]


def test_a_profile_hints_an_app_by_its_program_at_its_thread_count() -> None:
    """Measured at other sizes (a quarter of the runs', say), an app takes
    its program's speedup at its own thread count before its program's
    over every thread count."""
    app = App("compute", 3, 12345)  # a size no entry has
    three = [Entry(App("compute", 3, n), (100,), (little,)) for n, little in ((10, 250), (20, 270))]
    prof = Profile("gem5", 2, (*three, Entry(App("compute", 2, 10), (100,), (400,))))
    assert prof.hint_for(app) == round((2.5 * 2.7) ** 0.5, 3)
    assert prof.hint_for(App("compute", 4, 1)) == round((2.5 * 2.7 * 4.0) ** (1 / 3), 3)


def test_profile_exact_application_wins() -> None:
    prof = Profile("gem5", 2, (entry("compute", 100, 220, 3), entry("compute", 100, 100, 4)))
    mix = sized_for(load_mix("compute2-compute-compute"), "qemu")  # two compute apps, 3 threads
    assert [a.speedup for a in prof.apply(mix).apps] == [2.2, 2.2]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('kind = "other"\nversion = 1\n', "not a speedup profile"),
        ('kind = "ampkit-speedup-profile"\nversion = 1\n', "no \\[\\[program\\]\\] entries"),
        (
            'kind = "ampkit-speedup-profile"\nversion = 1\n[[program]]\nprogram = "compute"\n'
            "threads = 2\nsize = 1\nbig_ns = []\nlittle_ns = [1]\n",
            "p.toml:7: program 1: 'big_ns' must be a non-empty list",
        ),
        ("kind = ", "not valid TOML"),
        (
            'kind = "ampkit-speedup-profile"\nversion = 1\nprogram = [1]\n',
            "p.toml:3: program 1: must be a table",
        ),
        (
            'kind = "ampkit-speedup-profile"\nversion = 1\n[[program]]\nprogram = "compute"\n'
            "threads = 2\nsize = 1\nbig_ns = [1]\nlittle_ns = [1]\nthreadz = 3\n",
            "p.toml:9: program 1: 'threadz' is not a program key",
        ),
        (
            'kind = "ampkit-speedup-profile"\nversion = 1\n[provenance]\ndate = 2026\n'
            '[[program]]\nprogram = "compute"\nthreads = 2\nsize = 1\n'
            "big_ns = [1]\nlittle_ns = [1]\n",
            "'provenance' must be a table of strings",
        ),
    ],
)
def test_bad_profiles_are_refused(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "p.toml"
    path.write_text(text)
    with pytest.raises(AmpkitError, match=message):
        load_profile(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("version = 1\n", ":1: 'kind' is required but absent: not a speedup profile's"),
        ('kind = "ampkit-speedup-profile"\nversion = 2\n', ":2: 'version' is 2: not a speedup"),
        (
            'kind = "ampkit-speedup-profile"\nversion = 1\n',
            ":1: 'program' is required but absent: the file has no [[program]] entries",
        ),
    ],
)
def test_a_profile_s_missing_or_wrong_identity_has_a_line(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "p.toml"
    path.write_text(text)
    with pytest.raises(AmpkitError) as e:
        load_profile(path)
    assert e.value.what.startswith(f"{path}{message}")


def test_a_profile_of_a_parsec_program_loads(tmp_path: Path) -> None:
    """A PARSEC program has an input set and size 0, as render() writes it."""
    path = tmp_path / "p.toml"
    path.write_text(
        'kind = "ampkit-speedup-profile"\nversion = 1\n[[program]]\n'
        'program = "parsec.blackscholes"\nthreads = 2\nsize = 0\nbig_ns = [1]\nlittle_ns = [2]\n'
    )
    assert load_profile(path).entries[0].app.size == 0


def test_rehint_sets_each_applications_hint_and_keeps_the_rest() -> None:
    text = (
        'description = "x"  # kept\ncategory = "compute"\n\n'
        '[[app]]\nprogram = "chase"   # a comment\nthreads = 2\nsize = 3\n'
        "speedup = 1.3  # prior\n\n"
        '[[app]]\nprogram = "stream"\nthreads = 1\nsize = 4\n\n'
        '[[app]]\nprogram = "compute"\nthreads = 1\nsize = 5\nspeedup = 2.2\n'
    )
    hinted = rehint_text(text, {"chase": 1.23456, "stream": 20.0})
    lines = hinted.splitlines()
    # the hint replaces the line (its comment kept), clamped and rounded as
    # the kernel takes it; a table without a line gets one; no hint, no change
    assert "speedup = 1.235   # prior" in lines
    assert lines[lines.index('program = "stream"') + 3] == f"speedup = {SPEEDUP_MAX}"
    assert "speedup = 2.2" in lines and 'description = "x"  # kept' in lines
    assert rehint_text(hinted, {"chase": 1.23456, "stream": 20.0}) == hinted


def test_a_mix_that_names_its_own_profile_is_rehinted_from_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """single4 without its hints, beside the profile it names: rehint gives
    each application the hint its own profile measured at its size (stream
    clamped to 8), not the shipped table's per program."""
    from ampkit.cli import main
    from ampkit.errors import EXIT_INPUT

    single4 = load_mix("single4")
    assert single4.profile is not None
    profile = tmp_path / "profile.toml"
    profile.write_text(single4.profile.read_text())
    text = single4.source.read_text().replace(
        'profile = "../../measurements/saez-model/profile.toml"', 'profile = "profile.toml"'
    )
    bare = "".join(line for line in text.splitlines(keepends=True) if "speedup =" not in line)
    mix = tmp_path / "single4.toml"
    mix.write_text(bare)
    assert all(a.speedup is None for a in load_mix(str(mix)).apps)
    assert main(["mix", "rehint", str(mix)]) == 0
    assert "1 of 1 mixes took their hints" in capsys.readouterr().out
    assert mix.read_text() == text
    assert [a.speedup for a in load_mix(str(mix)).apps] == [3.164, 8.0, 5.963, 1.381]
    # a profile it names that is not there: said with the file and line
    mix.write_text(text.replace('"profile.toml"', '"gone.toml"'))
    with pytest.raises(AmpkitError, match=r"single4.toml:6: 'profile' names no file"):
        load_mix(str(mix))
    # one program twice at two sizes the profile measured apart: not written
    twice = text + '\n[[app]]\nprogram = "stream"\nthreads = 1\nsize = 200000\n'
    mix.write_text(twice)
    assert main(["mix", "rehint", str(mix)]) == EXIT_INPUT
    assert "stream appears twice with different hints" in capsys.readouterr().err
    assert mix.read_text() == twice


def test_the_catalogue_carries_the_shipped_gem5_speedups() -> None:
    """The mixes' hints are the shipped table's (ampkit mix rehint), and the
    table says what measured it."""
    shipped = load_profile(SHIPPED_PROFILE)
    assert shipped.engine == "gem5"
    provenance = dict(shipped.provenance)
    assert {"engine_sha256", "model_sha256", "kernel_digest", "scale", "date"} <= set(provenance)
    # every program a catalogue mix or a generated one may hold; latency,
    # which neither does yet, takes its prior (PRIOR_SPEEDUPS) until the
    # table is measured again
    drawn = {p for programs in CATEGORY_PROGRAMS.values() for p in programs}
    mixes = [load_mix(name) for name in mix_names()]
    held = {app.program for mix in mixes if mix.profile is None for app in mix.apps}
    assert drawn | held | set(CALIBRATION_PROGRAMS) <= set(shipped.speedups())
    assert sorted(shipped.speedups()) == sorted(set(CATALOGUE_SIZES) - {"latency"})
    # a mix that names its own profile (Saez et al.'s single-threaded mixes:
    # a CPU each, each application measured at its very size) takes its
    # hints from it, every other from the shipped table
    own = [mix for mix in mixes if mix.profile is not None]
    assert {mix.name for mix in own} >= {"single4", "single4-dram"}
    for mix in mixes:
        profile = load_profile(mix.profile) if mix.profile else shipped
        for app in mix.apps:
            unhinted = replace(app, speedup=None)
            assert app.speedup == profile.hint_for(unhinted), (mix.name, app)
            if mix.profile:  # measured for this very application
                assert any(e.matches(unhinted) for e in profile.entries), (mix.name, app)


def _profile_text(**edits: str) -> str:
    """A rendered profile of one compute entry (speedup 2.2), with lines
    replaced: ``threads="threads = 5000"``; an empty value drops the line."""
    text = Profile("gem5", 2, (entry("compute", 100, 220),)).render()
    lines = text.splitlines()
    for key, line in edits.items():
        at = next(i for i, old in enumerate(lines) if old.startswith(f"{key} ="))
        lines[at : at + 1] = [line] if line else []
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("edits", "message"),
    [
        ({"engine": 'engine = "kvm"'}, "p.toml:5: 'engine' must be one of qemu, gem5, not 'kvm'"),
        (
            {"program": 'program = "nope"'},
            "p.toml:9: program 1: 'program' names no workload: 'nope'",
        ),
        ({"program": ""}, "p.toml:8: program 1: 'program' is missing"),
        (
            {"threads": "threads = 5000"},
            "p.toml:10: program 1: 'threads' must be an integer from 1 to 1024, not 5000",
        ),
        (
            {"speedup": "speedup = 9.0"},
            "p.toml:17: program 1: 'speedup' must be the mean of little_ns over the mean of "
            "big_ns, 2.2000, not 9.0",
        ),
        ({"speedup": 'speedup = "fast"'}, "p.toml:17: program 1: 'speedup' must be a number"),
    ],
)
def test_a_profile_names_a_known_engine_and_program_and_its_own_speedup(
    tmp_path: Path, edits: dict[str, str], message: str
) -> None:
    path = tmp_path / "p.toml"
    path.write_text(_profile_text(**edits))
    with pytest.raises(AmpkitError) as e:
        load_profile(path)
    assert e.value.what.startswith(f"{tmp_path}/{message}")


def test_a_profile_s_speedup_may_be_rounded_or_left_out(tmp_path: Path) -> None:
    """render() writes the speedup with four decimals; the times decide it."""
    path = tmp_path / "p.toml"
    prof = Profile("qemu", 2, (entry("chase", 7, 3), entry("compute", 100, 220)))
    path.write_text(prof.render())
    assert "speedup = 0.4286" in path.read_text()
    assert load_profile(path).entries == prof.entries
    path.write_text(_profile_text(speedup=""))
    assert load_profile(path).entries[0].speedup == pytest.approx(2.2)


@pytest.mark.parametrize(
    ("name", "presser"), [("single4-streams", "stream"), ("single4-chases", "chase")]
)
def test_the_mixes_that_contend_give_the_big_cpus_to_two_pressing_programs_by_speedup(
    name: str, presser: str
) -> None:
    """Fan et al.'s setting: one thread each, a CPU each on 2B2L, and the
    two of highest speedup the same memory-bound program, so that the
    speedup order alone puts both on the big cluster."""
    mix = load_mix(name)
    assert len(mix.apps) == 4 and all(a.threads == 1 for a in mix.apps)
    assert mix.profile is not None  # hints of these very applications, measured
    ranked = sorted(mix.apps, key=lambda a: a.speedup or 0, reverse=True)
    assert [a.program for a in ranked[:2]] == [presser, presser]
    assert ranked[0].size == ranked[1].size and ranked[2].program == "compute"
