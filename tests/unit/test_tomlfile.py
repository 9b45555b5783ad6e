"""The TOML layer every file of the kit is read through: where a key is."""

from pathlib import Path

import pytest

from ampkit.errors import AmpkitError
from ampkit.tomlfile import TomlFile, locate

pytestmark = pytest.mark.unit

TEXT = """\
# a comment
name = "x"   # trailing comment
"quoted key" = 1

[[ app ]]
program = "a"

[[app]]
program = "b"
args = ["-b",
        "-c"]
text = '''one
two'''
threads = 3

[ limits ]
run.s = 10
inline = {x = 1, y = [1, {z = 3}]}
"""


def test_every_spelling_of_a_key_has_its_line() -> None:
    where = locate(TEXT)
    assert where[("name",)] == 2
    assert where[("quoted key",)] == 3
    assert where[("app", 0)] == 5  # [[ app ]] with spaces
    assert where[("app", 0, "program")] == 6
    assert where[("app", 1, "program")] == 9
    assert where[("app", 1, "args", 1)] == 11  # an array over two lines
    assert where[("app", 1, "threads")] == 14  # after a multi-line string
    assert where[("limits",)] == 16
    assert where[("limits", "run", "s")] == 17  # a dotted key
    assert where[("limits", "inline", "y", 1, "z")] == 18  # inside inline tables


def test_an_error_names_file_line_and_key(tmp_path: Path) -> None:
    path = tmp_path / "f.toml"
    path.write_text(TEXT)
    toml = TomlFile(path)
    with pytest.raises(AmpkitError) as e:
        toml.integer(("app", 1, "threads"), low=1, high=2)
    assert e.value.what == f"{path}:14: app 2: 'threads' must be an integer from 1 to 2, not 3"
    with pytest.raises(AmpkitError) as e:
        toml.only_keys(("limits",), ["run"], "a limit")
    assert e.value.what == f"{path}:18: 'limits.inline' is not a limit"
    assert e.value.hint == "valid keys: run"
    # a key that is not written resolves to its nearest written parent
    assert toml.line(("app", 1, "speedup")) == 8
    with pytest.raises(AmpkitError, match=r"f.toml:2: 'name' must be one of a, b, not 'x'"):
        toml.string(("name",), choices=["a", "b"])


def test_a_required_key_that_is_absent_is_reported_where_its_table_is(tmp_path: Path) -> None:
    path = tmp_path / "f.toml"
    path.write_text(TEXT)
    toml = TomlFile(path)
    assert toml.require(("name",)) == "x"
    with pytest.raises(AmpkitError) as e:
        toml.require(("engine",), hint="the engine")
    assert e.value.what == f"{path}:1: 'engine' is required but absent"  # the top level
    assert e.value.hint == "the engine"
    with pytest.raises(AmpkitError) as e:
        toml.require(("limits", "cpus"))
    assert e.value.what == f"{path}:16: 'limits.cpus' is required but absent"
    with pytest.raises(AmpkitError) as e:
        toml.require(("app", 0, "threads"))
    assert e.value.what == f"{path}:5: app 1: 'threads' is required but absent"


def test_a_boolean_is_not_a_number(tmp_path: Path) -> None:
    path = tmp_path / "f.toml"
    path.write_text("n = true\n")
    with pytest.raises(
        AmpkitError, match=r"f.toml:1: 'n' must be an integer .* not a boolean True"
    ):
        TomlFile(path).integer(("n",), low=0)


def test_bad_toml_and_a_missing_file_are_named(tmp_path: Path) -> None:
    path = tmp_path / "f.toml"
    path.write_text("a = \n")
    with pytest.raises(AmpkitError, match=r"f.toml:1: not valid TOML"):
        TomlFile(path)
    with pytest.raises(AmpkitError, match=r"nope.toml: cannot read it"):
        TomlFile(tmp_path / "nope.toml")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a = 1\nb = \n", ":2: not valid TOML: Invalid value (column 5)"),
        ("a = 1\n[core.big\nx = 1\n", ":2: not valid TOML: Expected ']' at the end of a table"),
        ("a = 1\na = 2\n", ":2: not valid TOML: Cannot overwrite a value (column 6)"),
        ('a = 1\nb = "x', ":2: not valid TOML: Unterminated string (at the end of the file)"),
        ("a = 1\nb = [1,\n\n", ":2: not valid TOML: Invalid value (at the end of the file)"),
    ],
)
def test_a_syntax_error_names_file_and_line_like_every_other_error(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = tmp_path / "f.toml"
    path.write_text(text)
    with pytest.raises(AmpkitError) as e:
        TomlFile(path)
    assert e.value.what.startswith(f"{path}{expected}")
    assert "(at line" not in e.value.what and "toml.io" in str(e.value.hint)


def test_tables_under_arrays_of_tables_are_placed_in_their_element() -> None:
    text = (
        "[[app]]\nprogram = 'a'\n[app.env]\nx = 1\n"
        "[[app]]\nprogram = 'b'\n[app.env]\nx = 2\n"
        "[[app.step]]\nn = 1\n[[app.step]]\nn = 2\n"
        '"\\u00e9t\u00e9" = 3\n'
    )
    where = locate(text)
    assert where[("app", 0, "env", "x")] == 4
    assert where[("app", 1, "env", "x")] == 8
    # [[app.step]] is numbered within the second app, not across the file
    assert where[("app", 1, "step", 0, "n")] == 10
    assert where[("app", 1, "step", 1, "n")] == 12
    assert where[("app", 1, "step", 1, "\u00e9t\u00e9")] == 13
