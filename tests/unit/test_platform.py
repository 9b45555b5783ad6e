from pathlib import Path

import pytest

from ampkit import platform
from ampkit.errors import AmpkitError
from ampkit.platform import get_platform, make_platform, preset_names


def test_presets_are_the_colab_configurations() -> None:
    assert preset_names() == ["2B2L", "2B4L", "4B2L", "4B4L"]


@pytest.mark.parametrize(
    ("name", "big", "little"), [("2B2L", 2, 2), ("4B2L", 4, 2), ("1B3L", 1, 3), ("3B5L", 3, 5)]
)
def test_big_cpus_come_first_in_cluster_0(name: str, big: int, little: int) -> None:
    p = get_platform(name)
    assert (p.big, p.little, p.ncpus) == (big, little, big + little)
    assert [c.cluster for c in p.cpus] == [0] * big + [1] * little
    assert [c.index for c in p.cpus] == list(range(big + little))


def test_little_capacity_carries_per_mhz_and_clock_ratio(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cpus = get_platform("2B2L").cpus
    # Juno figures: A57 1024, A53 578 per MHz; 2.0 GHz against 1.2 GHz:
    # round(578 * 1200 / 2000) = 347
    assert [c.capacity for c in cpus] == [1024, 1024, 347, 347]
    # other cores: per MHz 800 against 400, clocks 1.5 against 1.0 GHz ->
    # 1024 * (400 * 1000) / (800 * 1500) = 341.33, and the big CPUs 1024
    other = tmp_path / "platforms.toml"
    other.write_text(
        '[core.big]\nmodel = "b"\nclock_mhz = 1500\ndmips_per_mhz = 800\n'
        '[core.little]\nmodel = "l"\nclock_mhz = 1000\ndmips_per_mhz = 400\n'
    )
    monkeypatch.setattr(platform, "PLATFORMS_FILE", other)
    assert [c.capacity for c in make_platform(1, 2).cpus] == [1024, 341, 341]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[core.big]\nmodel = "b"\n', "'core.big.clock_mhz' must be an integer"),
        ("[core]\nmedium = {}\n", ":2: 'core.medium' is not a core type"),
        (
            '[core.big]\nmodel = "b"\nclock_mhz = 1\ndmips_per_mhz = 1\n'
            '[core.little]\nmodel = "l"\nclock_mhz = 1\ndmips_per_mhz = 1\n'
            "[preset]\nX = { big = 2, little = -1 }\n",
            ":10: 'preset.X.little' must be an integer from 0 to 16",
        ),
        ("[core.big\n", "not valid TOML"),
    ],
)
def test_a_broken_platforms_file_is_named_with_line_and_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, expected: str
) -> None:
    broken = tmp_path / "platforms.toml"
    broken.write_text(text)
    monkeypatch.setattr(platform, "PLATFORMS_FILE", broken)
    with pytest.raises(AmpkitError) as e:
        get_platform("2B2L")
    assert str(broken) in e.value.what and expected in e.value.what


def test_unknown_platform_lists_the_valid_ones() -> None:
    with pytest.raises(AmpkitError) as e:
        get_platform("big-little")
    assert "unknown platform 'big-little'" in str(e.value)
    assert "2B2L, 2B4L, 4B2L, 4B4L" in str(e.value)
    assert "1B3L" in str(e.value)


@pytest.mark.parametrize(
    ("big", "little", "msg"),
    [(0, 0, "at least one CPU"), (-1, 2, "no negative"), (10, 8, "at most 16")],
)
def test_impossible_platforms_are_refused(big: int, little: int, msg: str) -> None:
    with pytest.raises(AmpkitError, match=msg):
        make_platform(big, little)


def test_single_type_references_keep_the_mixed_capacities() -> None:
    plat = get_platform("2B4L")
    little, big = plat.little_only, plat.big_only
    assert (little.name, big.name) == ("0B4L", "2B0L")
    # the same little cores as on the mixed machine, in cluster 0 (Linux
    # reads cpu-map clusters from cluster0 up and stops at a gap)
    assert [(c.capacity, c.cluster) for c in little.cpus] == [(347, 0)] * 4
    assert [(c.capacity, c.cluster) for c in big.cpus] == [(1024, 0)] * 2
    assert get_platform("0B2L").little == 2
    with pytest.raises(AmpkitError, match="at least one CPU"):
        _ = big.little_only


def test_describe_records_capacities() -> None:
    d = get_platform("2B4L").describe()
    assert d["capacities"] == [1024, 1024, 347, 347, 347, 347]
    assert d["big"] == 2 and d["little"] == 4
