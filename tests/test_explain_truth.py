"""``explain`` tells an administrator the truth (issue 25): the ranks as published and the job
classes they keep off, a cluster bandit's values for the machine's cluster, human times, owner
sessions apart from power changes, and an unknown machine refused. A real daemon in-process,
its real endpoint, and the real command over it (or over the daemon's snapshot)."""

from __future__ import annotations

import contextlib
import json
import re
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from advisor.cli import main
from advisor.condor.attributes import attribute_lines
from advisor.daemon.config import check_config
from advisor.daemon.explain_text import show
from advisor.daemon.runtime import Daemon, make_policy
from advisor.ports import Observation
from plugins.contract.advice import Advice, MachineAdvice
from plugins.contract.events import (
    AttemptEnded,
    AttemptOutcome,
    AttemptStarted,
    MachinePowerChanged,
    OwnerSessionEnded,
    OwnerSessionStarted,
    PowerState,
)
from plugins.contract.policy import MachineInfo, MachineView, Policy, PolicyContext, PoolView

NOW = 1795602600.0  # 2026-11-25T10:30:00Z: the bandit's states are of hour 10
HOUR = 3600.0
OFF = (-1.0,) * 23
RAW_TIME = re.compile(r"\b1[78]\d{8}(\.\d+)?\b")  # seconds since the epoch, as the JSON has them


class ClusterPool:
    """A pool source of prepared events; its machines are free, in clusters c1 and c2."""

    def __init__(self, machines: Mapping[str, str], idle: list[int] | None = None) -> None:
        self.infos = {m: MachineInfo(m, c, "normal", 57.0, 40.0, 2.0) for m, c in machines.items()}
        views = [MachineView(m, "idle", 0.0) for m in machines]
        self.view = PoolView(views, idle or [0] * 24)
        self.pending: list[Any] = []

    def poll(self, now: float) -> Observation:
        events, self.pending = self.pending, []
        return Observation(events, self.view, self.infos)

    def cursor(self) -> dict[str, Any]:
        return {}

    def restore(self, cursor: Mapping[str, Any]) -> None:
        pass


class Classes(Policy):
    """Advice with per-class ranks: open to class 0 only, kept off by its ranks, held."""

    NAME = "classes"

    def advise(self, view: PoolView, now: float) -> Advice:
        return Advice(
            {
                "open0": MachineAdvice(rank=5.0, rank_by_prior_hours=(1.0, *OFF)),
                "ranked-off": MachineAdvice(rank=5.0, rank_by_prior_hours=(-0.5, *OFF)),
                "held": MachineAdvice(rank_by_prior_hours=(2.0,) * 24, hold=True),
                "plain": MachineAdvice(rank=-3.0, predicted_idle_s=11520.0),
            }
        )


def config(tmp_path: Path, policy: dict[str, Any] | None = None) -> Any:
    raw = {
        "pool": {"kind": "condor", "collector": "cm:9618"},
        "publish": {"listen": "127.0.0.1:0", "advice_lifetime": 3 * HOUR},
        "state": {"directory": str(tmp_path / "state")},
    }
    return check_config({**raw, "policy": policy} if policy else raw)


@contextlib.contextmanager
def serving(daemon: Daemon) -> Iterator[str]:
    base = f"http://{daemon.start_endpoint()}"
    try:
        yield base
    finally:
        daemon.stop_endpoint()


def get(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=10) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode()


def explain(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["explain", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def classes_daemon(tmp_path: Path) -> tuple[Daemon, ClusterPool]:
    pool = ClusterPool(dict.fromkeys(("open0", "ranked-off", "held", "plain"), "lab"))
    daemon = Daemon(config(tmp_path), Classes(PolicyContext({})), pool, [], lambda: NOW)
    daemon.host.cycle(NOW)
    return daemon, pool


def test_explain_shows_the_published_ranks_and_which_job_classes_they_keep_off(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    daemon, _ = classes_daemon(tmp_path)
    with serving(daemon) as base:
        for machine in ("open0", "ranked-off", "held", "plain"):
            data = json.loads(get(f"{base}/explain/{machine}")[1])
            hook = get(f"{base}/advice/{machine}")[1]
            assert attribute_lines(data["published"]) == hook  # what the hook serves, exactly
        texts = {m: explain(capsys, m, "--url", base)[1] for m in ("open0", "ranked-off", "held")}
        plain = explain(capsys, "plain", "--url", base)[1]
    assert "AdvisorRankByPriorHours  0: 1.0 | 1-23: -2.0" in texts["open0"]  # places
    assert "job classes              open to 0; kept off 1-23" in texts["open0"]
    assert "AdvisorRank              3.0 (not read:" in texts["open0"]
    assert "kept off every job class (every rank is negative)" in texts["ranked-off"]
    assert "kept off every job class (AdvisorHold is true)" in texts["held"]
    assert "kept off every job class (every rank is negative)" in plain  # AdvisorRank -3 for all
    assert "AdvisorRankByPriorHours  0-23: -3.0" in plain  # published whole, so a job's own
    assert "AdvisorPredictedIdle     11520.0 s (3 h 12 min)" in plain  # is never read instead


def test_times_are_iso_or_durations_in_the_text_and_numbers_with_iso_twins_in_the_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    daemon, pool = classes_daemon(tmp_path)
    pool.pending = [
        AttemptStarted(NOW - 3 * HOUR, "7.0", "open0"),
        AttemptEnded(NOW - HOUR - 720, "7.0", "open0", AttemptOutcome.COMPLETED, NOW - 3 * HOUR),
    ]
    daemon.host.cycle(NOW)
    with serving(daemon) as base:
        code, text, _ = explain(capsys, "open0", "--url", base)
        data = json.loads(get(f"{base}/explain/open0")[1])
    assert code == 0 and not RAW_TIME.search(text), text
    assert "as of    2026-11-25T10:30:00Z" in text
    assert "AdvisorUpdated           2026-11-25T10:30:00Z (now)" in text
    assert "AdvisorExpires           2026-11-25T13:30:00Z (in 3 h)" in text
    assert "2026-11-25T09:18:00Z  ended job 7.0 completed after 1 h 48 min" in text
    assert "(1 h 12 min ago)" in text
    ended = data["job_attempts"][-1]
    assert ended["time"] == NOW - HOUR - 720 and ended["time_iso"] == "2026-11-25T09:18:00Z"
    assert ended["started_iso"] == "2026-11-25T07:30:00Z"
    assert data["now"] == NOW and data["advice"]["expires_iso"] == "2026-11-25T13:30:00Z"


def test_owner_sessions_are_shown_apart_from_power_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    daemon, pool = classes_daemon(tmp_path)
    pool.pending = [
        MachinePowerChanged(NOW - 5 * HOUR, "held", PowerState.SLEEP),
        OwnerSessionStarted(NOW - 4 * HOUR, "held"),
        MachinePowerChanged(NOW - 4 * HOUR, "held", PowerState.ON),
        OwnerSessionEnded(NOW - 2 * HOUR - 600, "held"),
        OwnerSessionStarted(NOW - 1800, "held"),
    ]
    daemon.host.cycle(NOW)
    with serving(daemon) as base:
        data = json.loads(get(f"{base}/explain/held")[1])
        text = explain(capsys, "held", "--url", base)[1]
    assert [e["kind"] for e in data["owner_sessions"]] == [
        "OwnerSessionStarted",
        "OwnerSessionEnded",
        "OwnerSessionStarted",
    ]
    assert [e["state"] for e in data["power_changes"]] == ["sleep", "on"]
    owner = text.split("owner sessions (3 recent events)\n")[1].split("\n\n")[0].splitlines()
    assert owner == [
        "  2026-11-25T06:30:00Z to 2026-11-25T08:20:00Z  1 h 50 min, ended 2 h 10 min ago",
        "  2026-11-25T10:00:00Z to now                   30 min so far",
    ]
    power = text.split("power changes (2 recent)\n")[1].split("\n\n")[0].splitlines()
    assert power == [
        "  2026-11-25T05:30:00Z  sleep (5 h ago)",
        "  2026-11-25T06:30:00Z  on (4 h ago)",
    ]


def test_an_unknown_machine_is_a_404_and_exit_2_with_one_line_naming_known_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    daemon, _ = classes_daemon(tmp_path)
    daemon.snapshot(NOW)
    with serving(daemon) as base:
        status, body = get(f"{base}/explain/helt")
        from_daemon = explain(capsys, "helt", "--url", base)
        listed = explain(capsys, "helt", "--url", base, "--json")
    from_state = explain(capsys, "helt", "--state-dir", str(tmp_path / "state"))
    assert status == 404
    refusal = json.loads(body)
    assert refusal["machine"] == "helt"
    assert refusal["known"] == ["held", "open0", "plain", "ranked-off"]
    for code, out, err in (from_daemon, from_state):
        assert code == 2 and out == ""
        (line,) = err.splitlines()
        assert "no machine 'helt' in the " in line
        assert "known: held, open0, plain, ranked-off (4 machines); --json lists them all" in line
    assert "the daemon's view" in from_daemon[2] and "snapshot-00000001.json" in from_state[2]
    assert listed[0] == 2 and json.loads(listed[1])["known"] == refusal["known"]


# -- a cluster bandit ----------------------------------------------------------------------------
def bandit_daemon(tmp_path: Path) -> tuple[Daemon, ClusterPool]:
    """bandit-cluster with no exploring, estimates of the last two rewards (not all of them: a
    snapshot read with the default options would show other values), three rewards for c1 in
    state (hour 10, class 0), and two class-0 jobs waiting."""
    cfg = config(
        tmp_path, {"name": "bandit-cluster", "options": {"epsilon": 0, "history": "last:2"}}
    )
    machines = {"c1-1": "c1", "c1-2": "c1", "c2-1": "c2"}
    pool = ClusterPool(machines, [2] + [0] * 23)
    daemon = Daemon(cfg, make_policy(cfg, {}), pool, [], lambda: NOW)
    t0 = NOW - 1500
    pool.pending = [
        AttemptStarted(t0, "1.0", "c1-1"),
        AttemptEnded(t0 + 60, "1.0", "c1-1", AttemptOutcome.EVICTED_OWNER, t0),
        AttemptStarted(t0 + 120, "2.0", "c1-2"),
        AttemptEnded(t0 + 600, "2.0", "c1-2", AttemptOutcome.COMPLETED, t0 + 120),
        AttemptStarted(t0 + 660, "3.0", "c1-1"),
        AttemptEnded(t0 + 900, "3.0", "c1-1", AttemptOutcome.COMPLETED, t0 + 660),
    ]
    daemon.host.cycle(NOW)
    return daemon, pool


def test_a_cluster_bandit_shows_the_values_of_the_machines_cluster(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    daemon, _ = bandit_daemon(tmp_path)
    with serving(daemon) as base:
        c1 = json.loads(get(f"{base}/explain/c1-2")[1])
        c2 = json.loads(get(f"{base}/explain/c2-1")[1])
        code, text, _ = explain(capsys, "c1-2", "--url", base)
    cluster = c1["policy_says"]["cluster c1"]
    places = c1["published"]["AdvisorRankByPriorHours"]  # the ranks' places, in their order
    assert [r > 0 for r in cluster["ranks by class"]] == [p > 0 for p in places]
    assert places[0] == 1.0 and places[1:] == [-1.0] * 23
    assert cluster["ranks by class"][0] > 0 and c1["job_classes"]["open"] == [0]
    assert cluster["q' by class"] == {"0": 1.0}  # the last two of -0.2, 1.0, 1.0
    assert cluster["rewards by class"] == {"0": 3} and cluster["free machines"] == 2
    assert c1["policy_says"]["decision hour"] == "10 of the day"
    assert set(c2["policy_says"]) == {"decision hour", "cluster c2", "stay queued"}
    assert c2["policy_says"]["cluster c2"]["q' by class"] == {}
    assert c2["job_classes"]["kept_off_every_class"]
    assert code == 0
    said = text.split("what bandit-cluster/1 says of it\n")[1].split("\n\n")[0].splitlines()
    assert said == [
        "  decision hour  10 of the day",
        "  cluster c1",
        "    ranks by class    0: 4.0 | 1-23: -1.0",
        "    free machines     2",
        "    q' by class       0: 1.0",
        "    rewards by class  0: 3",
        "  stay queued",
        "    q' by class       none",
        "    rewards by class  none",
    ]


def test_a_snapshot_explains_a_cluster_bandit_machine_as_the_daemon_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    daemon, _ = bandit_daemon(tmp_path)
    daemon.snapshot(NOW)
    with serving(daemon) as base:
        live = json.loads(get(f"{base}/explain/c1-1")[1])
        live_text = explain(capsys, "c1-1", "--url", base)[1]
    code, saved_text, _ = explain(capsys, "c1-1", "--state-dir", str(tmp_path / "state"))
    saved = json.loads(explain(capsys, "c1-1", "--state-dir", str(tmp_path / "state"), "--json")[1])
    assert code == 0
    assert saved["policy_says"] == live["policy_says"]
    assert saved["policy_says"]["cluster c1"]["q' by class"] == {"0": 1.0}
    assert saved["published"] == live["published"] and saved["job_classes"] == live["job_classes"]
    assert saved_text == live_text


def test_explain_says_which_arm_a_machine_of_the_control_group_serves(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a control machine's AdvisorHold was shown as keeping every job off, though control jobs
    # ignore it, and AdvisorControl was left out of what explain says is published
    raw = {
        "pool": {"kind": "condor", "collector": "cm:9618"},
        "publish": {"listen": "127.0.0.1:0", "advice_lifetime": 3 * HOUR},
        "state": {"directory": str(tmp_path / "state")},
        "control": {"percent": 50},
    }
    pool = ClusterPool(dict.fromkeys(("open0", "ranked-off", "held", "plain"), "lab"))
    daemon = Daemon(check_config(raw), Classes(PolicyContext({})), pool, [], lambda: NOW)
    daemon.host.cycle(NOW)
    arms = {}
    with serving(daemon) as base:
        for machine in ("open0", "ranked-off", "held", "plain"):
            data = json.loads(get(f"{base}/explain/{machine}")[1])
            assert attribute_lines(data["published"]) == get(f"{base}/advice/{machine}")[1]
            arms[machine] = (data["published"]["AdvisorControl"], data["job_classes"]["arm"])
            text = explain(capsys, machine, "--url", base)[1]
            said = "takes control jobs only" if arms[machine][0] else "treated jobs only"
            assert said in text and "AdvisorControl" in text
    assert sorted(control for control, _ in arms.values()) == [False, False, True, True]
    assert all(control == (arm == "control") for control, arm in arms.values())


def test_a_value_rounded_to_zero_shows_no_sign() -> None:
    # a rank rounded from below zero (round(-0.0004, 3)) showed as "1-23: -0.0"
    assert show([round(-0.0004, 3)] * 24) == "0-23: 0.0" and show(-0.0) == "0.0"
