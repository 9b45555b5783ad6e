import json
from pathlib import Path
from typing import Any

import pytest

from ampkit import platform
from ampkit.errors import AmpkitError
from ampkit.platform import (
    GEM5_MAX_CPUS,
    check_gem5_platform,
    get_platform,
    make_platform,
    preset_names,
)

#: The cache lines every core type needs, for the hand-written files below.
CACHES = (
    "l1i = { size_kib = 32, assoc = 2 }\n"
    "l1d = { size_kib = 32, assoc = 4 }\n"
    "l2 = { size_kib = 512, assoc = 16 }\n"
)


@pytest.fixture
def uncalibrated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """platforms.toml without the calibration record beside it: the
    arithmetic from the file's own (Juno) figures."""
    copy = tmp_path / "uncalibrated" / "platforms.toml"
    copy.parent.mkdir()
    copy.write_text(platform.PLATFORMS_FILE.read_text())
    monkeypatch.setattr(platform, "PLATFORMS_FILE", copy)


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
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, uncalibrated: None
) -> None:
    cpus = get_platform("2B2L").cpus
    # Juno figures: A57 1024, A53 578 per MHz; 2.0 GHz against 1.2 GHz:
    # round(578 * 1200 / 2000) = 347
    assert [c.capacity for c in cpus] == [1024, 1024, 347, 347]
    # other cores: per MHz 800 against 400, clocks 1.5 against 1.0 GHz ->
    # 1024 * (400 * 1000) / (800 * 1500) = 341.33, and the big CPUs 1024
    other = tmp_path / "platforms.toml"
    other.write_text(
        f'[core.big]\nmodel = "b"\nclock_mhz = 1500\ndmips_per_mhz = 800\n{CACHES}'
        f'[core.little]\nmodel = "l"\nclock_mhz = 1000\ndmips_per_mhz = 400\n{CACHES}'
    )
    monkeypatch.setattr(platform, "PLATFORMS_FILE", other)
    assert [c.capacity for c in make_platform(1, 2).cpus] == [1024, 341, 341]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[core.big]\nmodel = "b"\n', "'core.big.clock_mhz' must be an integer"),
        ("[core]\nmedium = {}\n", ":2: 'core.medium' is not a core type"),
        (
            f'[core.big]\nmodel = "b"\nclock_mhz = 1\ndmips_per_mhz = 1\n{CACHES}'
            f'[core.little]\nmodel = "l"\nclock_mhz = 1\ndmips_per_mhz = 1\n{CACHES}'
            "[preset]\nX = { big = 2, little = -1 }\n",
            ":16: 'preset.X.little' must be an integer from 0 to 16",
        ),
        (
            '[core.big]\nmodel = "b"\nclock_mhz = 1\ndmips_per_mhz = 1\n'
            "l1i = { size_kib = 32, assoc = 2 }\n",
            ":1: 'core.big.l1d' is missing",
        ),
        (
            '[core.big]\nmodel = "b"\nclock_mhz = 1\ndmips_per_mhz = 1\n'
            "l1i = { size_kib = 48, assoc = 5 }\n",
            ":5: 'core.big.l1i.assoc' must divide the cache into whole sets",
        ),
        (
            '[core.big]\nmodel = "b"\nclock_mhz = 1\ndmips_per_mhz = 1\n'
            "l1i = { size_kib = 48, ways = 3 }\n",
            ":5: 'core.big.l1i.ways' is not a cache key",
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


def test_single_type_references_keep_the_mixed_capacities(uncalibrated: None) -> None:
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


def test_describe_records_capacities(uncalibrated: None) -> None:
    d = get_platform("2B4L").describe()
    assert d["capacities"] == [1024, 1024, 347, 347, 347, 347]
    assert d["big"] == 2 and d["little"] == 4


def test_the_platforms_domains_follow_its_clusters() -> None:
    """What the kernel must build from the kit's trees: a domain per
    cluster that shares its L2, one above with both core types; domains of
    one CPU dropped; none asymmetric on a single-type platform."""
    doms = get_platform("2B4L").sched_domains()
    assert [(d.name, d.span, d.shares_cache, d.asymmetric) for d in doms[0]] == [
        ("MC", (0, 1), True, False),
        ("DIE", (0, 1, 2, 3, 4, 5), False, True),
    ]
    assert [d.span for d in doms[5]] == [(2, 3, 4, 5), (0, 1, 2, 3, 4, 5)]
    assert [d.name for d in get_platform("1B3L").sched_domains()[0]] == ["DIE"]
    assert [(d.name, d.span, d.asymmetric) for d in get_platform("0B3L").sched_domains()[2]] == [
        ("MC", (0, 1, 2), False)
    ]
    assert get_platform("1B0L").sched_domains() == {0: []}


def test_a_guest_told_another_machine_is_caught() -> None:
    """A gem5 guest booted with a tree without caches: the kernel built
    CLS per cluster and an MC over both, as if big and little shared an
    LLC. The comparison names it; the expected structure itself passes,
    and so does the refreshed real run's guest."""
    plat = get_platform("2B2L")
    tests = Path(__file__).resolve().parents[1]
    data = tests / "unit" / "data" / "gem5-guest-without-caches.json"
    seen = json.loads(data.read_text())["sched_domains"]
    fixed = json.loads((tests / "data" / "gem5-v24-2B2L-run" / "guest.json").read_text())
    assert plat.domain_differences(fixed["sched_domains"]) == []
    wrong = plat.domain_differences(seen)
    assert "CPU 0: domains ['CLS', 'MC'], expected ['MC', 'DIE']" in wrong
    right: dict[str, list[dict[str, Any]]] = {
        str(cpu): [
            {
                "name": d.name,
                "span": list(d.span),
                "flags": ["SD_SHARE_PKG_RESOURCES"] * d.shares_cache
                + ["SD_ASYM_CPUCAPACITY", "SD_ASYM_CPUCAPACITY_FULL"] * d.asymmetric,
            }
            for d in doms
        ]
        for cpu, doms in plat.sched_domains().items()
    }
    assert plat.domain_differences(right) == []
    right["2"][0]["span"] = [0, 1, 2, 3]
    right["3"][1]["flags"].append("SD_SHARE_PKG_RESOURCES")
    assert plat.domain_differences(right) == [
        "CPU 2 MC: span is (0, 1, 2, 3), expected (2, 3)",
        "CPU 3 DIE: SD_SHARE_PKG_RESOURCES is True, expected False",
    ]


@pytest.mark.parametrize("name", ["4B5L", "9B0L", "8B8L"])
def test_gem5_refuses_what_its_interrupt_controller_cannot_serve(name: str) -> None:
    plat = get_platform(name)
    assert plat.ncpus > GEM5_MAX_CPUS
    with pytest.raises(AmpkitError, match=rf"{name} has {plat.ncpus} CPUs.*GICv2.*at most 8"):
        check_gem5_platform(plat)
    check_gem5_platform(get_platform("4B4L"))
    check_gem5_platform(get_platform("0B8L"))


#: Both core types, so that a file of them and [preset] reaches the presets.
CORES = (
    f'[core.big]\nmodel = "b"\nclock_mhz = 1\ndmips_per_mhz = 1\n{CACHES}'
    f'[core.little]\nmodel = "l"\nclock_mhz = 1\ndmips_per_mhz = 1\n{CACHES}'
)


@pytest.mark.parametrize(
    ("preset", "expected"),
    [
        (
            "X = { big = 0, little = 0 }",
            ":16: 'preset.X' must have from 1 to 16 CPUs in all, not 0",
        ),
        (
            "X = { big = 10, little = 8 }",
            ":16: 'preset.X' must have from 1 to 16 CPUs in all, not 18",
        ),
        ("X = { big = -1, little = 2 }", ":16: 'preset.X.big' must be an integer from 0 to 16"),
        ("X = { big = 17, little = 0 }", ":16: 'preset.X.big' must be an integer from 0 to 16"),
        ('"big little" = { big = 2, little = 2 }', ":16: 'preset.big little' cannot name a"),
        ('"2B2L/x" = { big = 2, little = 2 }', ":16: 'preset.2B2L/x' cannot name a platform"),
        ('"-x" = { big = 2, little = 2 }', ":16: 'preset.-x' cannot name a platform"),
        ("2B2L = { big = 4, little = 4 }", ":16: 'preset.2B2L' has big = 4, little = 4"),
        ("X = { big = 2 }", ":16: 'preset.X.little' must be an integer from 0 to 16, not nothing"),
    ],
)
def test_a_preset_no_platform_can_have_is_refused_while_reading_with_line_and_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, preset: str, expected: str
) -> None:
    broken = tmp_path / "platforms.toml"
    broken.write_text(f"{CORES}[preset]\n{preset}\n")
    monkeypatch.setattr(platform, "PLATFORMS_FILE", broken)
    with pytest.raises(AmpkitError) as e:
        preset_names()  # reading the file is enough: no preset is asked for
    assert e.value.what.startswith(f"{broken}{expected}")


def test_presets_any_platform_can_have_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = tmp_path / "platforms.toml"
    good.write_text(
        f"{CORES}[preset]\njuno = {{ big = 2, little = 4 }}\n"
        '"little-only_4.x" = { big = 0, little = 4 }\n16B0L = { big = 16, little = 0 }\n'
    )
    monkeypatch.setattr(platform, "PLATFORMS_FILE", good)
    assert preset_names() == ["16B0L", "juno", "little-only_4.x"]
    assert get_platform("little-only_4.x").ncpus == 4
