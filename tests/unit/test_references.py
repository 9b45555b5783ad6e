"""Which reference runs a mix needs, and how the run description carries the method."""

import pytest

from ampkit import references
from ampkit.errors import AmpkitError
from ampkit.mix import load_mix
from ampkit.platform import get_platform
from ampkit.run import RunRequest
from ampkit.rundesc import RunDescription


def test_each_distinct_application_once_per_kind() -> None:
    mix = load_mix("comm4-pipeline-pipeline-chase-compute")  # two pipelines, 2 and 3 threads
    request = RunRequest(platform=get_platform("2B4L"), policy="colab", mix=mix, repetition=3)
    refs = references.references(request)
    assert {r.kind for r in refs} == set(references.KINDS)
    for kind, platform in (("alone", "2B4L"), ("little-only", "0B4L"), ("big-only", "2B0L")):
        mine = [r.request for r in refs if r.kind == kind]
        assert [len(r.mix.apps) for r in mine] == [1, 1, 1, 1]
        assert {r.platform.name for r in mine} == {platform}
        assert {(r.policy, r.method, r.repetition) for r in mine} == {("cfs", "once", 3)}
    names = [r.request.mix.name for r in refs if r.kind == "alone"]
    assert names == [
        "alone-pipeline-t2-n100",
        "alone-pipeline-t3-n100",
        "alone-chase-t2-n8192",
        "alone-compute-t2-n8000",
    ]


def test_identical_applications_share_a_reference() -> None:
    mix = load_mix("compute4-compute-compute-compute-compute")
    request = RunRequest(platform=get_platform("2B2L"), policy="wash", mix=mix)
    assert len(references.references(request, ["alone"])) == 1


def test_kinds_a_platform_cannot_give_are_left_out() -> None:
    request = RunRequest(platform=get_platform("2B0L"), policy="cfs", mix=load_mix("demo"))
    assert {r.kind for r in references.references(request)} == {"alone", "big-only"}
    with pytest.raises(AmpkitError, match="unknown reference kind 'slow'"):
        references.references(request, ["slow"])


def test_run_description_carries_method_and_m5ops() -> None:
    mix = load_mix("demo")
    text = RunDescription.for_mix("r", "cfs", 0, 30, mix).render()
    assert "method restart\nm5ops 0\n" in text
    text = RunDescription.for_mix("r", "cfs", 0, 30, mix, method="once", m5ops=True).render()
    assert "method once\nm5ops 1\n" in text
    with pytest.raises(AmpkitError, match="unknown run method 'twice'"):
        RunDescription.for_mix("r", "cfs", 0, 30, mix, method="twice").render()
    # a warm-up is said only where there is one, so runs without keep their keys
    assert "warmup_ms" not in text
    warm = RunDescription.for_mix("r", "cfs", 0, 30, mix, m5ops=True, warmup_ms=2).render()
    assert "m5ops 1\nwarmup_ms 2\n" in warm
    with pytest.raises(AmpkitError, match="a warm-up of -1 ms: it must be 0 to 600000 ms"):
        RunDescription.for_mix("r", "cfs", 0, 30, mix, warmup_ms=-1).render()
