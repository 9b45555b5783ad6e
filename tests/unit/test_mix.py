from pathlib import Path

import pytest

from ampkit.errors import AmpkitError
from ampkit.mix import known_programs, load_mix, mix_names
from ampkit.rundesc import RunDescription


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "m.toml"
    path.write_text(text)
    return str(path)


GOOD = """
description = "two apps"
category = "compute"

[[app]]
program = "compute"
threads = 2
size = 100

[[app]]
program = "compute"
threads = 1
size = 50
speedup = 1.5
"""


def test_every_shipped_mix_loads() -> None:
    assert "demo" in mix_names()
    for name in mix_names():
        mix = load_mix(name)
        assert mix.apps


def test_instances_count_per_program_and_speedup_is_q10(tmp_path: Path) -> None:
    mix = load_mix(write(tmp_path, GOOD))
    desc = RunDescription.for_mix("r1", "cfs", 0, 30, mix)
    assert [(a.name, a.instance) for a in desc.apps] == [("compute", 0), ("compute", 1)]
    assert [a.speedup_q10 for a in desc.apps] == [0, 1536]
    text = desc.render()
    assert text.splitlines()[0] == "ampkit-run 1"
    assert "app compute 1 1 1536 /bin/compute -t 1 -n 50" in text


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (("threads = 2", "threads = 0"), r"m.toml:7: app 1: 'threads' must be an integer"),
        (("size = 50", "size = -5"), r"m.toml:13: app 2: 'size' must be an integer"),
        (
            ('program = "compute"\nthreads = 2', 'program = "nope"\nthreads = 2'),
            r"m.toml:6: app 1: 'program' names no workload: 'nope'",
        ),
        (('category = "compute"', 'category = "misc"'), r"m.toml:3: 'category' must be one of"),
        (("speedup = 1.5", "speedup = 99"), r"m.toml:14: app 2: 'speedup' must be a number"),
        (("speedup = 1.5", "threadz = 3"), r"m.toml:14: app 2: 'threadz' is not an app key"),
    ],
)
def test_errors_name_file_line_and_key(
    tmp_path: Path, edit: tuple[str, str], expected: str
) -> None:
    text = GOOD.replace(*edit, 1)
    with pytest.raises(AmpkitError, match=expected):
        load_mix(write(tmp_path, text))


def test_unknown_program_error_lists_the_workloads(tmp_path: Path) -> None:
    with pytest.raises(AmpkitError) as e:
        load_mix(write(tmp_path, GOOD.replace('program = "compute"', 'program = "nope"', 1)))
    for program in known_programs():
        assert program in str(e.value)


def test_unknown_mix_lists_the_valid_names() -> None:
    with pytest.raises(AmpkitError, match=r"valid names: .*demo"):
        load_mix("no-such-mix")


def test_bad_toml_is_reported(tmp_path: Path) -> None:
    with pytest.raises(AmpkitError, match="not valid TOML"):
        load_mix(write(tmp_path, "[[app]\n"))


def test_words_with_spaces_cannot_reach_the_guest(tmp_path: Path) -> None:
    desc = RunDescription.for_mix("run with space", "cfs", 0, 30, load_mix("demo"))
    with pytest.raises(AmpkitError, match="has spaces"):
        desc.render()


@pytest.mark.parametrize(
    ("apps", "expected"),
    [
        (
            "app = [1, 2]",
            r"m.toml:4: app 1: must be a table \(\[\[app\]\] with keys\), not an integer 1",
        ),
        (
            'app = ["x"]',
            r"m.toml:4: app 1: must be a table \(\[\[app\]\] with keys\), not a string 'x'",
        ),
        ("app = []", r"m.toml:4: 'app' must be a non-empty array of tables"),
        ('app = "compute"', r"m.toml:4: 'app' must be a non-empty array of tables"),
    ],
)
def test_an_app_entry_that_is_not_a_table_is_named_as_such(
    tmp_path: Path, apps: str, expected: str
) -> None:
    text = f'description = "d"\ncategory = "compute"\n\n{apps}\n'
    with pytest.raises(AmpkitError, match=expected):
        load_mix(write(tmp_path, text))


def test_errors_find_the_line_in_any_spelling_of_the_tables(tmp_path: Path) -> None:
    """[[ app ]] with spaces, inline tables, and an array of them over lines."""
    spaced = GOOD.replace("[[app]]", "[[ app ]]").replace("threads = 1", "threads = 0")
    with pytest.raises(AmpkitError, match=r"m.toml:12: app 2: 'threads' must be an integer"):
        load_mix(write(tmp_path, spaced))
    inline = (
        'description = "d"\ncategory = "compute"\napp = [\n'
        '  {program = "compute", threads = 2, size = 100},\n'
        '  {program = "compute", threads = 0, size = 100},\n]\n'
    )
    with pytest.raises(AmpkitError, match=r"m.toml:5: app 2: 'threads' must be an integer"):
        load_mix(write(tmp_path, inline))
    mix = load_mix(write(tmp_path, inline.replace("threads = 0", "threads = 3")))
    assert [a.threads for a in mix.apps] == [2, 3]


def test_an_app_without_a_program_says_the_key_is_missing(tmp_path: Path) -> None:
    with pytest.raises(AmpkitError, match=r"m.toml:5: app 1: 'program' is missing") as e:
        load_mix(write(tmp_path, GOOD.replace('program = "compute"\n', "", 1)))
    assert "None" not in e.value.what
    assert e.value.hint is not None and "compute" in e.value.hint


def test_a_program_that_is_not_a_string_is_named_as_such(tmp_path: Path) -> None:
    with pytest.raises(AmpkitError, match=r"m.toml:6: app 1: 'program' must be a string naming"):
        load_mix(write(tmp_path, GOOD.replace('program = "compute"', "program = 3", 1)))


def test_an_environment_asked_for_reaches_every_app_and_only_then() -> None:
    """RunRequest.env (the tests' AMPKIT_WRONG_RESULT=1) becomes env lines
    of the description; none leaves the description as it was, byte for
    byte, so no run's key moves; the runner's own variables and more
    entries than it takes are refused on the host."""
    mix = load_mix("demo")
    plain = RunDescription.for_mix("r", "cfs", 0, 30, mix).render()
    # the description as the runner reads it, before env existed on requests
    assert plain == (
        "ampkit-run 1\nrun_id r\npolicy cfs\nrepetition 0\ntimeout_s 30\n"
        "method restart\nm5ops 0\n"
        "app compute 0 2 3552 /bin/compute -t 2 -n 20000\n"
        "app contend 0 4 2892 /bin/contend -t 4 -n 250\n"
    )
    spoilt = RunDescription.for_mix("r", "cfs", 0, 30, mix, env=("AMPKIT_WRONG_RESULT=1",))
    assert "env AMPKIT_WRONG_RESULT=1" in spoilt.render().splitlines()
    assert spoilt.render().replace("env AMPKIT_WRONG_RESULT=1\n", "") == plain
    for bad in ("NOEQUALS", "1X=2", "A B=1", "=1"):
        with pytest.raises(AmpkitError, match="is not NAME=value"):
            RunDescription.for_mix("r", "cfs", 0, 30, mix, env=(bad,))
    with pytest.raises(AmpkitError, match="the runner sets AMPKIT_REPORT_FD itself"):
        RunDescription.for_mix("r", "cfs", 0, 30, mix, env=("AMPKIT_REPORT_FD=1",))
    many = tuple(f"V{i}=1" for i in range(17))
    with pytest.raises(AmpkitError, match=r"17 environment entries .* at most 16"):
        RunDescription.for_mix("r", "cfs", 0, 30, mix, env=many)
