import json

from ampkit.console import RESULTS_BEGIN, parse_console


def app(name: str = "compute", instance: int = 0, **extra: object) -> str:
    record = {
        "type": "app",
        "run_id": "r",
        "app": name,
        "instance": instance,
        "threads": 2,
        "start_ns": 10,
        "end_ns": 20,
        "exit_status": 0,
        "signal": None,
        "status": "ok",
        "thread_times_ns": [5, 6],
        **extra,
    }
    return "@ampkit " + json.dumps(record)


GUEST = '@ampkit {"type":"guest","run_id":"r","guest":{"cpus":[{"cpu":0,"capacity":1024}]}}'
BOOT = "[    0.566552] Run /init as init process"


def console(*lines: str) -> str:
    return "\r\n".join(lines) + "\r\n"


def test_complete_console() -> None:
    text = console(
        BOOT,
        GUEST,
        RESULTS_BEGIN,
        app(),
        app("contend"),
        "==== AMPKIT RESULTS END count=2 ====",
        "[    0.8] reboot: Power down",
    )
    r = parse_console(text)
    assert r.complete and r.problems() == []
    assert [a["app"] for a in r.apps] == ["compute", "contend"]
    assert r.guest == {"cpus": [{"cpu": 0, "capacity": 1024}]}


def test_truncated_before_the_end_marker() -> None:
    text = console(BOOT, GUEST, RESULTS_BEGIN, app()) + app("contend")[:40]
    r = parse_console(text)
    assert not r.complete
    problems = " ".join(r.problems())
    assert "garbled" in problems and "truncated after 1 record" in problems


def test_guest_that_never_reached_the_results() -> None:
    r = parse_console(console(BOOT, GUEST))
    assert not r.complete
    assert r.problems() == ["no results: the guest never reached the end of its run"]


def test_kernel_message_inside_a_record_is_untangled() -> None:
    record = app()
    spliced = record[:30] + "[    1.2] random: crng init done\n" + record[30:]
    text = console(RESULTS_BEGIN, spliced, "==== AMPKIT RESULTS END count=1 ====")
    r = parse_console(text)
    assert r.complete and r.problems() == []
    assert r.apps == [json.loads(record[len("@ampkit ") :])]


def test_kernel_message_after_a_whole_record() -> None:
    # Seen in CI: the record was complete, the kernel's line came before its newline.
    warning = "[    1.254973] hrtimer: interrupt took 12146080 ns"
    end = "==== AMPKIT RESULTS END count=1 ===="
    text = console(GUEST + warning, "", RESULTS_BEGIN, app(), end)
    r = parse_console(text)
    assert r.complete and r.guest == {"cpus": [{"cpu": 0, "capacity": 1024}]}


def test_kernel_messages_in_the_prefix_and_twice_in_one_record() -> None:
    record = app()
    spliced = (
        record[:4]
        + "[    1.1] one\n"
        + record[4:50]
        + "[    1.2] WARNING: CPU: 1 PID: 9 at kernel/sched/core.c:1 x\n"
        + "[    1.3] three\n"
        + record[50:]
    )
    end = "==== AMPK" + "[    1.4] four\n" + "IT RESULTS END count=1 ===="
    r = parse_console(console(RESULTS_BEGIN, spliced, end))
    assert len(r.apps) == 1 and r.end_count == 1 and not r.garbled
    assert r.kernel_problems == ["[    1.2] WARNING: CPU: 1 PID: 9 at kernel/sched/core.c:1 x"]


def test_a_stamp_inside_a_well_formed_record_is_left_alone() -> None:
    record = app(note="[    1.2] looks like the kernel")
    r = parse_console(console(RESULTS_BEGIN, record, "==== AMPKIT RESULTS END count=1 ===="))
    assert r.complete and r.apps[0]["note"] == "[    1.2] looks like the kernel"


def test_a_record_cut_short_is_garbled_not_misread() -> None:
    record = app()
    cut = record[:30] + "[    1.2] random: crng init done"
    text = console(RESULTS_BEGIN, cut, app("contend"), "==== AMPKIT RESULTS END count=2 ====")
    r = parse_console(text)
    assert not r.complete and len(r.garbled) == 1
    assert [a["app"] for a in r.apps] == []  # the next record was swallowed, never invented


def test_count_mismatch_is_reported() -> None:
    r = parse_console(console(RESULTS_BEGIN, app(), "==== AMPKIT RESULTS END count=2 ===="))
    assert not r.complete
    assert "announces 2 record(s) but holds 1" in r.problems()[0]


def test_record_missing_contract_fields_is_garbled() -> None:
    bad = '@ampkit {"type":"app","app":"x"}'
    r = parse_console(console(RESULTS_BEGIN, bad, "==== AMPKIT RESULTS END count=1 ===="))
    assert not r.complete and "missing instance" in r.garbled[0]


def test_runner_error_comes_first() -> None:
    err = '@ampkit {"type":"error","error":"the kernel rejected the policy: colab"}'
    r = parse_console(console(BOOT, GUEST, err))
    assert r.problems()[0] == "runner error: the kernel rejected the policy: colab"


def test_kernel_problems_are_collected() -> None:
    lines = [
        "[    2.0] WARNING: CPU: 1 PID: 1 at kernel/sched/fair.c:100 foo+0x1/0x2",
        "[    2.1] BUG: sleeping function called from invalid context at x.c:1",
        "[    2.2] Kernel panic - not syncing: No working init found.",
        "[    0.1] cpu_capacity: partial information: fallback to 1024 for all CPUs",
        # a sysctl.* boot parameter the kernel did not apply (proc_sysctl.c's words)
        "[    0.3] Failed to set sysctl parameter 'kernel.sched_colab_rank_perod_ms=20': "
        "parameter not found",
        "[    0.3] Failed to set sysctl parameter 'kernel.sched_colab_big_speedup=9': "
        "invalid value",
    ]
    r = parse_console(console(*lines))
    assert r.kernel_problems == [line.strip() for line in lines]
    assert r.problems()[0].startswith("kernel reported a problem: [    2.0] WARNING")


def test_nul_bytes_and_records_outside_the_block() -> None:
    text = console(
        "\0\0" + BOOT, app(), RESULTS_BEGIN, "\0" + app(), "==== AMPKIT RESULTS END count=1 ===="
    )
    r = parse_console(text)
    assert len(r.apps) == 1
    assert len(r.garbled) == 1  # the app record printed outside the block


def test_the_knobs_read_after_the_mix_join_the_guest_record() -> None:
    guest = {"cpus": [], "amp": {"policy": "colab", "knobs": {"sched_colab_work": "periods 1"}}}
    after = {"type": "knobs_after", "run_id": "r", "knobs": {"sched_colab_work": "periods 9"}}
    text = console(
        "@ampkit " + json.dumps({"type": "guest", "run_id": "r", "guest": guest}),
        "@ampkit " + json.dumps(after),
        RESULTS_BEGIN,
        app(),
        "==== AMPKIT RESULTS END count=1 ====",
    )
    r = parse_console(text)
    assert r.complete and r.problems() == []
    assert r.knobs_after == {"sched_colab_work": "periods 9"}
    written = r.guest_json()
    assert written is not None
    assert written["amp"]["knobs"] == {"sched_colab_work": "periods 1"}
    assert written["amp"]["knobs_after"] == {"sched_colab_work": "periods 9"}
    assert r.guest == guest  # the record as the guest gave it, untouched
    # a guest without the policies (amp null) keeps its record as it was
    bare = parse_console(console(GUEST, "@ampkit " + json.dumps(after)))
    assert bare.guest_json() == {"cpus": [{"cpu": 0, "capacity": 1024}]}
    # inside the results block it is not a result: garbled, said
    inside = parse_console(
        console(GUEST, RESULTS_BEGIN, "@ampkit " + json.dumps(after), app(), RESULTS_BEGIN)
    )
    assert inside.garbled and inside.knobs_after is None
