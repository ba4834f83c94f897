"""The policy host, the advice board and the endpoint formats, with a small in-memory pool."""

from __future__ import annotations

import dataclasses
import json
import logging
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from advisor.condor.merge_sink import MergeStartdSink
from advisor.daemon.board import Posted, hook_lines
from advisor.daemon.config import check_config
from advisor.daemon.logs import iso
from advisor.daemon.notify import sd_notify
from advisor.daemon.runtime import Daemon
from advisor.daemon.schedule import run_live
from advisor.daemon.signals import Control
from advisor.daemon.standing import StandingAdvice
from advisor.ports import Observation, SinkRefused
from plugins.contract.advice import Advice, JobAdvice, MachineAdvice, PowerAdvice
from plugins.contract.events import (
    AttemptEnded,
    AttemptOutcome,
    JobQueued,
    MachinePowerChanged,
    OwnerSessionStarted,
    PowerState,
)
from plugins.contract.policy import MachineInfo, MachineView, Policy, PolicyContext, PoolView


class ListPool:
    """A pool source that hands out prepared events; every machine is a free candidate."""

    def __init__(self, machines: list[str]) -> None:
        self.view = PoolView([MachineView(m, "idle", 0.0) for m in machines], [0] * 24)
        self.pending: list[Any] = []
        self.position = 0
        self.answering = True

    def poll(self, now: float) -> Observation:
        if not self.answering:
            return Observation([], self.view, healthy=False)
        events, self.pending = self.pending, []
        self.position += len(events)
        machines = {
            m.name: MachineInfo(m.name, "lab", "Normal", 57, 40, 2) for m in self.view.machines
        }
        return Observation(events, self.view, machines)

    def cursor(self) -> dict[str, Any]:
        return {"position": self.position}

    def restore(self, cursor: Mapping[str, Any]) -> None:
        self.position = cursor["position"]


class Ranker(Policy):
    NAME = "ranker"
    WANTS = frozenset({AttemptEnded})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lost: dict[str, int] = {}

    def observe(self, event: Any) -> None:
        self.lost[event.machine] = self.lost.get(event.machine, 0) + 1

    def advise(self, view: PoolView, now: float) -> Advice:
        return Advice(
            {
                m.name: MachineAdvice(
                    rank=-self.lost.get(m.name, 0),
                    rank_by_prior_hours=(1.0, -2.5),
                    predicted_idle_s=600.0,
                    power=PowerAdvice.MAY_SLEEP,
                    expires=now + 30 if m.name == "short" else None,
                )
                for m in view.machines
            }
        )

    def state_dict(self) -> dict[str, Any]:
        return {"lost": self.lost}

    def load_state(self, state: Any) -> None:
        self.lost = dict(state["lost"])


def make_daemon(
    tmp_path: Path, clock: list[float], sinks: list[Any] | None = None
) -> tuple[Daemon, ListPool]:
    config = check_config(
        {
            "pool": {"kind": "condor", "collector": "cm:9618"},
            "publish": {"listen": "127.0.0.1:0", "advice_lifetime": 300},
            "state": {"directory": str(tmp_path)},
        }
    )
    pool = ListPool(["a", "b", "short"])
    policy = Ranker(PolicyContext(machines={}))
    return Daemon(config, policy, pool, sinks or [], lambda: clock[0]), pool


def test_advice_expires_after_its_lifetime(tmp_path: Path) -> None:
    clock = [1000.0]
    daemon, pool = make_daemon(tmp_path, clock)
    pool.pending = [AttemptEnded(990.0, "1.0", "a", AttemptOutcome.EVICTED_OWNER, 900.0)]
    daemon.host.cycle(clock[0])
    board = daemon.board
    assert board.get("a", 1299.0) is not None and board.get("a", 1300.0) is None
    assert board.get("short", 1029.0) is not None and board.get("short", 1030.0) is None
    assert hook_lines(board.get("b", 1300.0)) == ""
    assert set(board.live(1100.0)) == {"a", "b"}
    assert board.get("a", 1000.0).advice.rank == -1.0  # type: ignore[union-attr]


def reload_with(daemon: Daemon, directory: Path, publish: str, more: str = "") -> bool:
    """``daemon.reload`` from a file of make_daemon's pool and state, ``publish`` and ``more``."""
    config = directory / "advisor.yaml"
    config.write_text(
        "pool: {kind: condor, collector: 'cm:9618'}\n"
        f"publish: {{listen: '127.0.0.1:0', {publish}}}\n"
        f"state: {{directory: '{directory}'}}\n{more}"
    )
    return daemon.reload(config, {}, None)


def test_a_reloaded_advice_lifetime_applies_from_the_next_cycle(tmp_path: Path) -> None:
    clock = [1000.0]
    daemon, _ = make_daemon(tmp_path, clock)
    daemon.host.cycle(clock[0])
    assert daemon.board.get("b", 1299.0) is not None  # 300 s as configured
    assert reload_with(daemon, tmp_path, "advice_lifetime: 60, interval: 30")
    clock[0] = 1100.0
    daemon.host.cycle(clock[0])
    assert daemon.board.get("b", 1159.0) is not None and daemon.board.get("b", 1160.0) is None


def test_a_reload_names_each_change_that_waits_for_a_restart(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # a new control.percent was taken silently and never applied; a new snapshot interval,
    # which applies at once, was said to need a restart
    daemon, _ = make_daemon(tmp_path, [1000.0])
    config = tmp_path / "advisor.yaml"
    config.write_text(
        "pool: {kind: condor, collector: 'cm:9618'}\n"
        "publish: {listen: '127.0.0.1:0', advice_lifetime: 300}\n"
        f"state: {{directory: '{tmp_path}', snapshot_interval: 60, keep: 3}}\n"
        "control: {percent: 20}\nmetrics: {enabled: false}\n"
    )
    with caplog.at_level("WARNING"):
        assert daemon.reload(config, {}, None)
    said = [r.getMessage().split(": ", 1)[1] for r in caplog.records]
    assert said == [
        "a change of state.keep needs a restart",
        "a change of control.percent needs a restart",
        "a change of metrics.enabled needs a restart",
    ]


def _asked(*names: str) -> PoolView:
    return PoolView([MachineView(n, "idle", 0.0) for n in names], ())


def test_standing_advice_lapses_unless_answered_again_and_is_capped_at_the_lifetime() -> None:
    standing = StandingAdvice(60.0)
    advice = Advice(
        {"x": MachineAdvice(rank=1), "y": MachineAdvice(expires=105.0), "z": MachineAdvice()}
    )
    first = standing.update(_asked("x", "y", "z"), advice, 100.0)
    assert first["x"].expires == 160.0 and first["y"].expires == 105.0
    assert "z" not in first  # neutral advice is no advice
    later = standing.update(_asked(), Advice(), 110.0)  # not asked: republished as it stands
    assert later["x"].expires == 160.0  # the lifetime counts from the answer, as in a replay
    assert later["y"] == MachineAdvice()  # its own expiry passed: neutral, so sinks drop it
    renewed = standing.update(_asked("x"), Advice({"x": MachineAdvice(rank=1)}), 120.0)
    assert renewed == {"x": MachineAdvice(rank=1, expires=180.0)}
    named = Advice(shared={"lab": MachineAdvice(rank=2)}, follows={"a": "lab"}, shared_until=9e9)
    assert standing.update(_asked(), named, 130.0)["a"].expires == 190.0  # capped, not 9e9
    assert standing.update(_asked("x"), Advice(), 140.0)["x"] == MachineAdvice()  # asked, silent
    assert "x" not in standing.update(_asked(), Advice(), 200.0)  # dropped once, then no more


def test_hook_lines_are_classad_assignments() -> None:
    posted = Posted(
        MachineAdvice(rank=2.5, rank_by_prior_hours=(1.0, -2.0), hold=True, expires=4600.0),
        1000.0,
        "ranker/1",
    )
    assert hook_lines(posted) == (
        "AdvisorRank = 2.5\n"
        "AdvisorHold = true\n"
        'AdvisorPower = "on"\n'
        "AdvisorUpdated = 1000.0\n"
        "AdvisorExpires = 4600.0\n"
        'AdvisorPolicy = "ranker/1"\n'
        "AdvisorRankByPriorHours = { 1.0" + ", -2.0" * 23 + " }\n"  # the last rank, padded
    )


class RecordingCollector:
    """Stands in for the collector daemon, which only the integration tests run."""

    def __init__(self) -> None:
        self.sent: list[tuple[list[Any], str]] = []

    def advertise(self, ads: list[Any], command: str) -> None:
        self.sent.append((ads, command))


def test_endpoint_and_collector_merge_publish_the_same_attributes() -> None:
    classad2 = pytest.importorskip("classad2")
    advice = MachineAdvice(
        rank=1e12, rank_by_prior_hours=(0.5, -3.0), predicted_idle_s=7200.0, expires=4600.0
    )
    collector = RecordingCollector()
    sink = MergeStartdSink(collector, lambda: {"m": ["slot1@m", "slot2@m"]}, policy="ranker/1")
    sink.publish(Advice({"m": advice}), 1000.0)
    ((ads, command),) = collector.sent
    assert command == "MERGE_STARTD_AD" and [ad["Name"] for ad in ads] == ["slot1@m", "slot2@m"]
    served = classad2.parseOne(hook_lines(Posted(advice, 1000.0, "ranker/1")))
    for ad in ads:
        merged = {k: v for k, v in ad.items() if k.startswith("Advisor")}
        assert merged == dict(served.items())
    assert served["AdvisorRank"] == 1e12 and served["AdvisorPredictedIdle"] == 7200.0


def test_a_reload_that_changes_the_policy_relabels_the_merged_advice(tmp_path: Path) -> None:
    # the hook's ads said the new policy while the collector's merged ones kept the old label
    collector = RecordingCollector()
    merge = MergeStartdSink(collector, lambda: {"a": ["slot1@a"]}, policy="ranker/1")
    daemon, _ = make_daemon(tmp_path, [1000.0], [merge])
    assert reload_with(daemon, tmp_path, "advice_lifetime: 300", "policy: {name: frugal}\n")
    daemon.host.cycle(1000.0)
    ads, _ = collector.sent[-1]
    assert ads[0]["AdvisorPolicy"] == daemon.board.policy_label
    assert daemon.board.policy_label.startswith("frugal/")


def test_endpoint_over_http_is_read_only(tmp_path: Path) -> None:
    clock = [1000.0]
    daemon, pool = make_daemon(tmp_path, clock)
    pool.pending = [OwnerSessionStarted(995.0, "a")]
    daemon.host.cycle(clock[0])
    base = f"http://{daemon.start_endpoint()}"
    try:
        with urllib.request.urlopen(f"{base}/advice") as r:
            data = json.load(r)
        assert r.headers["Content-Type"] == "application/json"
        assert set(data["machines"]) == {"a", "b", "short"}
        assert data["machines"]["a"]["power"] == "may-sleep"
        assert data["machines"]["a"]["expires"] == 1300.0
        with urllib.request.urlopen(f"{base}/advice/a") as r:
            assert b"AdvisorPredictedIdle = 600.0\n" in r.read()
        with urllib.request.urlopen(f"{base}/explain/a") as r:
            explained = json.load(r)
        assert explained["owner_sessions"][0]["kind"] == "OwnerSessionStarted"
        request = urllib.request.Request(f"{base}/advice/a", data=b"x", method="POST")
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(request)
        assert info.value.code == 405
        clock[0] = 1400.0  # everything lapsed: the hook gets nothing, not an error
        with urllib.request.urlopen(f"{base}/advice/a") as r:
            assert r.status == 200 and r.read() == b""
    finally:
        daemon.stop_endpoint()


def test_snapshot_round_trip_restores_policy_and_cursor(tmp_path: Path) -> None:
    clock = [1000.0]
    daemon, pool = make_daemon(tmp_path, clock)
    pool.pending = [AttemptEnded(990.0, "1.0", "b", AttemptOutcome.EVICTED_REBOOT, 900.0)]
    daemon.host.cycle(clock[0])
    daemon.snapshot(clock[0])
    fresh, fresh_pool = make_daemon(tmp_path, clock)
    assert fresh.resume() is not None
    assert fresh.host.policy.lost == {"b": 1}  # type: ignore[attr-defined]
    assert fresh_pool.position == 1


def test_sd_notify_sends_a_datagram(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    assert sd_notify("READY=1") is False
    path = tmp_path / "notify.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as server:
        server.bind(str(path))
        monkeypatch.setenv("NOTIFY_SOCKET", str(path))
        assert sd_notify("READY=1")
        assert server.recv(100) == b"READY=1"


def test_live_scheduler_runs_every_job_and_snapshots_on_stop(tmp_path: Path) -> None:
    clock = [1000.0]
    daemon, pool = make_daemon(tmp_path, clock)
    daemon.config.learning["observe_interval"] = 0.1
    daemon.config.publish["interval"] = 0.1
    daemon.config.state["snapshot_interval"] = 3600.0  # none on the way: the stop's own only
    control = Control()
    runner = threading.Thread(target=run_live, args=(daemon, control, lambda: None, time.time))
    runner.start()
    try:
        pool.pending = [AttemptEnded(990.0, "1.0", "a", AttemptOutcome.EVICTED_OWNER, 900.0)]
        deadline = time.monotonic() + 20
        while daemon.host.cycles < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert daemon.host.cycles >= 3 and daemon.host.events_seen == 1
        before = sorted(tmp_path.glob("snapshot-*.json"))
    finally:
        control.stop.set()
        runner.join(20)
    assert not runner.is_alive()
    after = sorted(tmp_path.glob("snapshot-*.json"))
    assert len(after) == len(before) + 1
    assert daemon.store.load_newest() is not None


class SlowLearner(Ranker):
    """A retraining that takes until it is let go, as a large pool's takes minutes."""

    NAME = "slow-learner"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.training, self.let_go = threading.Event(), threading.Event()

    def retrain(self, now: float) -> None:
        self.training.set()
        self.let_go.wait(30)


def test_a_stop_during_a_retraining_saves_the_snapshot_without_waiting_for_it(
    tmp_path: Path,
) -> None:
    """systemd kills a unit that has not stopped within TimeoutStopSec (60 s), and waiting
    for a retraining of minutes lost the snapshot the stop writes."""
    daemon, _ = make_daemon(tmp_path, [1000.0])
    daemon.config.state["snapshot_interval"] = 3600.0
    learner = daemon.host.policy = SlowLearner(PolicyContext(machines={}))
    control = Control()
    args = (daemon, control, lambda: None, time.time, 1000.0)  # a refit at start: at once
    runner = threading.Thread(target=run_live, args=args)
    runner.start()
    try:
        assert learner.training.wait(20)
        control.stop.set()
        deadline = time.monotonic() + 10
        while daemon.store.load_newest() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert daemon.store.load_newest() is not None and learner.training.is_set()
        assert not learner.let_go.is_set()  # saved while the retraining still ran
    finally:
        control.stop.set()
        learner.let_go.set()
        runner.join(20)


def test_report_on_a_daemon_without_a_control_group_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from advisor.cli import main

    daemon, _ = make_daemon(tmp_path, [1000.0])  # control.percent left out: none
    daemon.host.cycle(1000.0)
    daemon.snapshot(1000.0)
    assert main(["report", "--state-dir", str(tmp_path)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "no control group (set control.percent to the pool's ADVISOR_CONTROL_PERCENT)" in line


def test_log_lines_carry_journal_priorities_under_systemd() -> None:
    from advisor.daemon.logs import JournalFormatter

    record = logging.LogRecord(
        "htcondor_advisor.host", logging.WARNING, "", 0, "pool quiet", (), None
    )
    assert JournalFormatter("%(message)s").format(record) == "<4>htcondor_advisor.host: pool quiet"


def test_advice_is_renewed_only_from_a_view_the_pool_confirmed(tmp_path: Path) -> None:
    clock = [1000.0]
    daemon, pool = make_daemon(tmp_path, clock)  # advice lifetime 300 s, stale after 180 s
    pool.answering = False
    assert daemon.host.cycle(clock[0]).machines == {}  # never confirmed: nothing to stand behind
    assert daemon.health()["status"].startswith("stale")
    pool.answering = True
    daemon.host.cycle(clock[0])
    assert daemon.health()["status"] == "ok"
    assert b"advisor_pool_healthy 1.0" in daemon.metrics.exposition()
    assert daemon.board.get("a", 1299.0) is not None
    pool.answering = False
    clock[0] = 1180.0
    assert daemon.host.cycle(clock[0]).machines  # within the bound: renewed from the last view
    assert daemon.health()["status"] == "pool unreachable"
    assert b"advisor_pool_healthy 0.0" in daemon.metrics.exposition()
    clock[0] = 1181.0
    assert daemon.host.cycle(clock[0]).machines == {}  # past it: nothing renewed
    assert daemon.health()["status"].startswith("stale")
    assert b"advisor_advice_stale 1.0" in daemon.metrics.exposition()
    last = 1180.0 + 300.0
    assert daemon.board.get("a", last - 1) is not None and daemon.board.get("a", last) is None
    pool.answering = True
    daemon.host.cycle(clock[0])
    assert b"advisor_advice_stale 0.0" in daemon.metrics.exposition()
    assert daemon.board.get("a", 1181.0 + 299.0) is not None


def test_machines_join_as_the_pool_shows_them_and_a_bandit_learns_from_the_first_cycle(
    tmp_path: Path,
) -> None:
    """The live start: the policy is built before the first poll, with no machine known."""
    from plugins.bandits.placement import ComputerBandit

    config = check_config(
        {
            "pool": {"kind": "condor", "collector": "cm:9618"},
            "publish": {"listen": "127.0.0.1:0"},
            "state": {"directory": str(tmp_path)},
        }
    )
    machines: dict[str, MachineInfo] = {}
    pool = ListPool(["a", "b"])
    pool.view = PoolView(pool.view.machines, [2] + [0] * 23, ["1.0", "2.0"])
    daemon = Daemon(config, ComputerBandit(PolicyContext(machines)), pool, [], time.time, machines)
    daemon.host.cycle(1000.0)
    assert set(machines) == {"a", "b"} and daemon.host.policy.actions == ["a", "b"]  # type: ignore[attr-defined]
    pool.view = PoolView([*pool.view.machines, MachineView("c", "idle", 0.0)], [1] + [0] * 23)
    pool.pending = [AttemptEnded(1001.0, "1.0", "a", AttemptOutcome.COMPLETED, 900.0)]
    pool.pending.append(AttemptEnded(1001.0, "9.0", "gone", AttemptOutcome.COMPLETED, 900.0))
    daemon.host.cycle(1002.0)
    assert daemon.host.policy.actions == ["a", "b", "c"]  # type: ignore[attr-defined]
    assert daemon.host.unknown_machine_events == 1  # a machine the collector never showed
    assert b'advisor_events_learned_total{kind="AttemptEnded"} 1.0' in daemon.metrics.exposition()
    assert daemon.board.live(1002.0)  # advice served for the machines it knows
    daemon.snapshot(1003.0)
    fresh_machines: dict[str, MachineInfo] = {}
    fresh = Daemon(
        config,
        ComputerBandit(PolicyContext(fresh_machines)),
        ListPool([]),
        [],
        time.time,
        fresh_machines,
    )
    assert fresh.resume() is not None  # the inventory comes back before the learned state
    assert fresh.host.policy.actions == ["a", "b", "c"]  # type: ignore[attr-defined]


def _values(published: dict[str, MachineAdvice]) -> dict[str, MachineAdvice]:
    return {m: dataclasses.replace(a, expires=None) for m, a in published.items()}


def test_followers_of_a_name_carry_its_value_and_a_left_out_follower_goes_on_following() -> None:
    standing = StandingAdvice(3600.0)
    lab, hall = MachineAdvice(rank=1.0), MachineAdvice(rank=-1.0)
    first = Advice(
        shared={"lab": lab, "hall": hall},
        follows={"a": "lab", "b": "lab", "c": "hall"},
        shared_until=7200.0,
    )
    assert _values(standing.update(_asked(), first, 0.0)) == {"a": lab, "b": lab, "c": hall}
    view = standing.ask(_asked("a", "b", "c"))
    assert [mv.follows for mv in view.machines] == ["lab", "lab", "hall"]
    lab2, own = MachineAdvice(rank=2.0), MachineAdvice(rank=5.0)
    moved = standing.update(view, Advice(machines={"b": own}, shared={"lab": lab2}), 60.0)
    assert _values(moved) == {"a": lab2, "b": own, "c": hall}  # b no longer follows
    unknown = Advice(follows={"d": "hall", "e": "nowhere"})  # a name from before a restart
    assert _values(standing.update(_asked(), unknown, 120.0))["d"] == hall
    assert "e" not in standing.update(_asked(), Advice(), 180.0)


def test_a_name_restated_by_class_reaches_its_followers_and_an_unknown_name_is_ignored() -> None:
    standing = StandingAdvice(3600.0)
    lab = MachineAdvice(rank_by_prior_hours=(2.0, -1.0))
    named = Advice(shared={"lab": lab}, follows={"a": "lab", "b": "lab"}, shared_until=7200.0)
    standing.update(_asked(), named, 0.0)
    moved = standing.update(
        _asked(), Advice(shared_ranks={"lab": {1: 3.0}, "hall": {0: 1.0}}), 60.0
    )
    new = MachineAdvice(rank_by_prior_hours=(2.0, 3.0) + (-1.0,) * 22)
    assert _values(moved) == {"a": new, "b": new}
    assert (
        standing.ledger.named("hall") is None
    )  # never stated in full: its followers will state it


def test_renewing_the_names_republishes_every_follower_with_the_new_expiry() -> None:
    standing = StandingAdvice(9000.0)
    lab = MachineAdvice(rank_by_prior_hours=(2.0, -1.0))
    named = Advice(shared={"lab": lab}, follows={"a": "lab", "b": "lab"}, shared_until=7200.0)
    first = standing.update(_asked(), named, 0.0)
    assert {m: a.expires for m, a in first.items()} == {"a": 7200.0, "b": 7200.0}
    renewed = standing.update(_asked(), Advice(shared_until=10800.0), 3600.0)
    assert {m: a.expires for m, a in renewed.items()} == {"a": 10800.0, "b": 10800.0}
    assert renewed["a"].rank_by_prior_hours == (2.0, -1.0)
    assert standing.update(_asked(), Advice(), 10800.0) == {
        "a": MachineAdvice(),
        "b": MachineAdvice(),
    }  # the names lapsed unrenewed: neutral, so sinks drop them


class JobAdvisor(Ranker):
    def advise(self, view: PoolView, now: float) -> Advice:
        return Advice(jobs={"1.0": JobAdvice(prio=2.0), "2.0": JobAdvice(hold=True)})


def unpublished_said(
    directory: Path, caplog: pytest.LogCaptureFixture, policy: type[Policy], sinks: list[Any]
) -> tuple[list[str], bytes]:
    """What two cycles of ``policy`` with ``sinks`` say of advice no sink publishes, and the
    metrics then."""
    daemon, _ = make_daemon(directory, [1000.0], sinks)
    daemon.host.policy = policy(PolicyContext(machines={}))
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        daemon.host.cycle(1000.0)
        daemon.host.cycle(1060.0)
    said = [r.message for r in caplog.records if "sink publishes" in r.message]
    return said, daemon.metrics.exposition()


def test_job_advice_no_sink_publishes_is_counted_and_said_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    said, exposition = unpublished_said(tmp_path, caplog, JobAdvisor, [])
    assert said == [
        "ranker/1 gives job advice, which no configured sink publishes"
        " (pool.edit_jobs: true publishes it)"
    ]
    assert b'advisor_advice_unpublished_total{kind="job"} 4.0' in exposition


class RefusingSink:
    """A schedd that refuses the advisor's edits, as the job sink reports it (SinkRefused; the
    real schedd's refusal: tests/integration/test_hosts_pool.py)."""

    name = "schedd-jobprio"

    def __init__(self) -> None:
        self.why = "no WRITE"

    def publish(self, advice: Advice, now: float) -> None:
        if self.why:
            raise SinkRefused(self.why)


def test_a_refused_publication_is_one_line_said_again_only_when_it_changes_or_hourly(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    clock = [1000.0]
    daemon, _ = make_daemon(tmp_path, clock)
    sink = RefusingSink()
    daemon.host.sinks.append(sink)
    with caplog.at_level(logging.ERROR):
        for now in (1000.0, 1060.0, 1120.0):
            daemon.host.cycle(now)
        sink.why = "no user record"
        daemon.host.cycle(1180.0)
        daemon.host.cycle(1240.0)
        daemon.host.cycle(1180.0 + 3600.0)
    with caplog.at_level(logging.INFO):
        sink.why = ""  # the administrator fixed it
        daemon.host.cycle(1240.0 + 3600.0)
        daemon.host.cycle(1300.0 + 3600.0)
    said = [r for r in caplog.records if "publishing to" in r.message]
    assert [r.message.split(" failed: ", 1)[-1] for r in said] == [
        "no WRITE",
        "no user record",
        "no user record",
        "publishing to schedd-jobprio works again",
    ]
    assert all(r.exc_info is None for r in said)  # a line, no traceback
    exposition = daemon.metrics.exposition()
    assert b'advisor_publish_failures_total{sink="schedd-jobprio"} 6.0' in exposition


def test_an_outage_is_a_few_lines_in_the_log_not_one_a_cycle(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # half an hour without an answer, a cycle a minute: said when it begins, when the advice
    # stops being renewed, and when it ends (the metrics count every cycle)
    daemon, pool = make_daemon(tmp_path, [1000.0])
    daemon.host.cycle(1000.0)
    pool.answering = False
    with caplog.at_level(logging.INFO, logger="htcondor_advisor.host"):
        caplog.clear()  # (the first cycle's lines, where another test left the level at INFO)
        for minute in range(1, 31):
            daemon.host.cycle(1000.0 + 60 * minute)
        pool.answering = True
        daemon.host.cycle(2860.0)
    assert [r.message for r in caplog.records] == [
        f"pool did not answer at {iso(1060.0)}; advice will lapse if this persists",
        f"no confirmed view of the pool since {iso(1000.0)}: advice not renewed, it lapses",
        f"pool answers again at {iso(2860.0)}",
        f"advice renewed again at {iso(2860.0)}",
    ]
    assert b"advisor_advice_stale 0.0" in daemon.metrics.exposition()


def test_a_quiet_twin_is_waiting_not_stale(tmp_path: Path) -> None:
    # /healthz said "stale: no confirmed view of the pool" whenever no job was idle, though a
    # twin cycles only as its simulated negotiator does, and its pool is never lost
    config = check_config(
        {"pool": {"kind": "sim", "days": 1, "scale": 0.05}, "state": {"directory": str(tmp_path)}}
    )
    clock = [1000.0]
    daemon = Daemon(config, Ranker(PolicyContext({})), ListPool(["a"]), [], lambda: clock[0])
    daemon.host.cycle(clock[0])
    assert daemon.health()["status"] == "ok"
    clock[0] += 3600.0
    assert daemon.health()["status"].startswith("waiting: the simulated pool negotiates again")


class Buggy(Ranker):
    """A site's policy with a bug that shows on some cycles, and a typo in a machine name."""

    NAME = "buggy"
    failing = True

    def advise(self, view: PoolView, now: float) -> Advice:
        if self.failing:
            known: dict[str, Advice] = {}
            return known["pc7"]
        advice = super().advise(view, now)
        advice.machines["lab-0001.example.org"] = MachineAdvice(hold=True)
        return advice


def test_a_policy_that_raises_lets_its_advice_lapse_and_the_daemon_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    clock = [1000.0]
    daemon, _ = make_daemon(tmp_path, clock)
    daemon.host.cycle(clock[0])  # advice standing for 300 s
    policy = Buggy(PolicyContext(machines=daemon.host.machines))
    daemon.host.swap_policy(policy)
    with caplog.at_level(logging.DEBUG, logger="htcondor_advisor"):
        for now in (1060.0, 1120.0, 1180.0):
            assert daemon.host.cycle(now).machines == {}
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1  # said once an hour, not once a cycle
    line = errors[0].getMessage()
    assert "buggy/1 failed to advise (KeyError: 'pc7' at " in line and "\n" not in line
    assert f"{__file__}:" in line and "advice not renewed" in line
    assert any(r.exc_info for r in caplog.records if r.levelno == logging.DEBUG)
    assert daemon.health()["status"].startswith(f"policy failing: KeyError: 'pc7' at {__file__}:")
    assert daemon.board.get("a", 1299.0) is not None and daemon.board.get("a", 1300.0) is None

    policy.failing = False  # fixed (a reload, say): advice again, the typo left out and said
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="htcondor_advisor"):
        advice = daemon.host.cycle(1400.0)
    assert set(advice.machines) == {"a", "b", "short"}
    assert "buggy/1 advises again" in caplog.text
    assert "advised 1 machines the pool never showed, e.g. 'lab-0001.example.org'" in caplog.text
    assert daemon.health()["status"] == "ok"


class Unlearned(Ranker):
    """A site's policy whose ``observe`` fails on some events."""

    NAME = "unlearned"

    def observe(self, event: Any) -> None:
        if event.machine == "b":
            raise ZeroDivisionError("no attempts yet")
        super().observe(event)


def test_an_event_a_policy_fails_to_learn_is_skipped_and_said_and_the_rest_learned(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    clock = [1000.0]
    daemon, pool = make_daemon(tmp_path, clock)
    daemon.host.cycle(clock[0])
    policy = Unlearned(PolicyContext(machines=daemon.host.machines))
    daemon.host.swap_policy(policy)
    evicted = AttemptOutcome.EVICTED_OWNER
    pool.pending = [AttemptEnded(1010.0, f"{n}.0", m, evicted, 900.0) for n, m in enumerate("bab")]
    advice = daemon.host.cycle(1060.0)
    assert policy.lost == {"a": 1} and set(advice.machines) == {"a", "b", "short"}
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and "unlearned/1 failed to learn from AttemptEnded" in errors[0]
    assert f"(ZeroDivisionError: no attempts yet at {__file__}:" in errors[0]
    assert daemon.health()["status"] == "ok"  # the pool is seen and advised


def test_a_job_that_ran_in_another_pool_ends_in_its_arm(tmp_path: Path) -> None:
    # a job that flocks ends on a machine this collector never showed: the policies cannot
    # place there and are not told, but the control group's book kept the job open for good,
    # and left its wait out of its arm's overhead
    config = check_config(
        {
            "pool": {"kind": "condor", "collector": "cm:9618"},
            "publish": {"listen": "127.0.0.1:0"},
            "state": {"directory": str(tmp_path)},
            "control": {"percent": 50},
        }
    )
    pool = ListPool(["a"])
    daemon = Daemon(config, Ranker(PolicyContext(machines={})), pool, [], time.time)
    pool.pending = [JobQueued(900.0, "7.0", "alice")]
    daemon.host.cycle(1000.0)
    pool.pending = [AttemptEnded(1600.0, "7.0", "osg-node", AttemptOutcome.COMPLETED, 1000.0, 0.0)]
    daemon.host.cycle(1700.0)
    book = daemon.host.control.book  # type: ignore[union-attr]
    assert book.open == {}
    ((_, arm, completed, overhead, energy, *_),) = book.ended
    assert (completed, overhead, energy) == (True, 100.0, 0.0)
    assert book.totals[arm]["overhead_jobs"] == 1


def test_a_machine_described_otherwise_after_it_joined_is_said_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Given a room (``AdvisorCluster``) after the daemon first saw it, as deploy/execute-point
    invites room by room, a machine stayed in its old room in the policy, restart or not,
    and nothing said so."""
    daemon, _ = make_daemon(tmp_path, [1000.0])
    host = daemon.host
    first = MachineInfo("a", "pool", "default", 57.0, 40.0, 2.0)
    host.join({"a": first})
    roomed = dataclasses.replace(first, cluster="lab-a")
    with caplog.at_level(logging.WARNING, "htcondor_advisor"):
        host.join({"a": roomed})
        host.join({"a": roomed})
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == [
        "1 machine(s) are now described otherwise than the policy learned them (a: cluster "
        "'pool' -> 'lab-a'); the policy goes on with what it learned (the energy counted "
        "follows the pool): to learn them as they are, start the daemon on an empty state "
        "directory"
    ]
    assert host.machines["a"] == first


def test_a_machine_woken_from_sleep_is_kept_up_an_hour_across_a_restart(tmp_path: Path) -> None:
    """HTCondor 25's startd evaluates HIBERNATE again a minute after it woke, whatever its
    manual says: the daemon publishes a woken machine's sleep advice as "on" for the hour the
    replay keeps it up (``WOKEN_UP_S``); its hold and the other machines' advice are as told."""
    clock = [10_000.0]
    daemon, pool = make_daemon(tmp_path, clock)
    pool.pending = [
        MachinePowerChanged(9_000.0, "a", PowerState.SLEEP),
        MachinePowerChanged(9_900.0, "a", PowerState.ON),  # woken by condor_rooster
        MachinePowerChanged(9_000.0, "b", PowerState.OFF),
        MachinePowerChanged(9_900.0, "b", PowerState.ON),  # booted: no sleep to come back from
    ]

    def power(d: Daemon, machine: str) -> PowerAdvice:
        d.host.cycle(clock[0])
        posted = d.board.get(machine, clock[0])
        assert posted is not None
        return posted.advice.power

    assert power(daemon, "a") is PowerAdvice.ON
    assert power(daemon, "b") is PowerAdvice.MAY_SLEEP  # as the policy said
    daemon.snapshot(clock[0])
    fresh, _ = make_daemon(tmp_path, clock)
    assert fresh.resume() is not None
    clock[0] = 9_900.0 + 3_599.0
    assert power(fresh, "a") is PowerAdvice.ON
    clock[0] = 9_900.0 + 3_600.0
    assert power(fresh, "a") is PowerAdvice.MAY_SLEEP


class Waker(Ranker):
    NAME = "waker"

    def advise(self, view: PoolView, now: float) -> Advice:
        return Advice({"a": MachineAdvice(power=PowerAdvice.WAKE)})


def test_wake_advice_without_the_collector_merge_is_counted_and_said_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A sleeping startd runs no hook: only a merge into its offline ad reaches condor_rooster."""
    said, exposition = unpublished_said(tmp_path, caplog, Waker, [])
    assert len(said) == 1 and said[0].startswith("waker/1 gives wake advice")
    assert "pool.merge: true" in said[0]
    assert b'advisor_advice_unpublished_total{kind="wake"} 2.0' in exposition
    merge = MergeStartdSink(None, dict)
    assert unpublished_said(tmp_path / "merged", caplog, Waker, [merge])[0] == []
