"""On a real pool of three hosts (``pool/hosts.py``): a central manager running the advisor and two
execute points of one two-core partitionable slot each, in their own network namespaces, all
configured from ``deploy/`` and ``examples/advisor.yaml`` as shipped plus one local override.

Advice crosses the network to the execute points' hooks, only they may read it, and nobody but
the central manager reads ``/explain``; jobs go where the advice ranks highest, two share one
partitionable slot, a held machine starts nothing, the owner's return evicts both and the daemon
sees both evictions as the owner's; once the daemon stops, its advice expires and the pool runs
as without it. With ``pool.edit_jobs``, a queue-ordering advice sets ``JobPrio`` and the jobs
start in that order, a schedd back from a restart gets its edits, a cycle's edits on 2,000 idle
jobs are timed, and a schedd or collector that refuses is one log line naming the fix. With a
control group, each job starts only on its arm's execute point.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from condor.test_deploy_expressions import deploy_macros, expand
from conftest import require

from advisor.daemon.config import merge
from advisor.lab.daemon_process import DaemonProcess
from integration.conftest import SETTLES_S, TEST_POLICIES, listening, stop_all, wait_for
from integration.pool import network
from integration.pool.hosts import (
    ACCESS_POINT,
    ADDRESSES,
    ADVISOR_PORT,
    CM,
    COLLECTOR,
    CONTROL_OFF,
    CORES,
    LOCAL,
    HostsPool,
)
from integration.pool.pool import DEFAULT_CHROOT, DOMAIN, PROJECT, build_chroot
from integration.test_real_pool_events import job, policy_ended
from plugins.contract.control import CONTROL, TREATED, arm_of
from plugins.contract.job_ids import on_schedd, split_schedd
from plugins.contract.machine_split import MachineSplit

pytestmark = pytest.mark.hosts

EP1, EP2 = f"ep1.{DOMAIN}", f"ep2.{DOMAIN}"
ADVISOR = f"http://{ADDRESSES[CM]}:{ADVISOR_PORT}"
LIFETIME_S = 20


class HostedDaemon(DaemonProcess):
    """``htcondor-advisor run`` on the central manager: in its namespace, on the listen address
    of its configuration (the shipped ``0.0.0.0:9681``)."""

    def __init__(self, args: list[str]) -> None:
        self.started = time.time()
        """Advice at a hook made before this is another advisor's (``hook_published``)."""
        super().__init__(args)

    def command(self, args: list[str]) -> list[str]:
        return [*network.inside(CM), sys.executable, "-m", "advisor.cli", "run", *args]


def local_override(state: Path, options: dict[str, str]) -> dict[str, Any]:
    """What an administrator writes over ``examples/advisor.yaml`` for this pool (its collector,
    schedd and execute points), plus a test's patience (short intervals and lifetime)."""
    return {
        "pool": {
            "collector": ADDRESSES[CM],  # a bare host: the collector's port 9618
            "schedds": [f"{CM}.{DOMAIN}"],
            "token_file": None,  # no merge: what the execute points get came through the hook
            "edit_jobs": False,  # no WRITE token made yet (the tests that edit jobs make one)
            "active_idle_s": 0,
            "collector_settles_s": SETTLES_S,
        },
        "policy": {"name": "fixed-advice", "options": options},
        "publish": {
            "allow": [ADDRESSES["ep1"], ADDRESSES["ep2"]],
            "advice_lifetime": f"{LIFETIME_S}s",
            "interval": "2s",
            "stale_after": "6s",
        },
        "learning": {"observe_interval": "2s"},
        "state": {"directory": str(state), "snapshot_interval": "2s"},
        "control": {"percent": 0},  # as the hosts' ADVISOR_CONTROL_PERCENT (pool/hosts.py)
    }


@contextlib.contextmanager
def running_hosts_pool(shared: Sequence[Path] = ()) -> Iterator[HostsPool]:
    """The three hosts from nothing, torn down after (``shared``: see ``HostsPool.shared``)."""
    require(os.geteuid() == 0, "the multi-host pool needs root (namespaces, chroot, mounts)")
    pool = HostsPool(build_chroot(DEFAULT_CHROOT), shared=shared)
    pool.stop()  # leftovers of an interrupted run
    pool.start()
    try:
        wait_for(lambda: len(slot_ads(["Name"])) == 2, 90, "two execute points")
        yield pool
    finally:
        pool.stop()
    assert pool.mounted() == [], "mounts left behind in the chroot"


@pytest.fixture(scope="module")
def hosts_pool() -> Iterator[HostsPool]:
    with running_hosts_pool() as pool:
        yield pool


@pytest.fixture
def start_advisor(
    hosts_pool: HostsPool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Any]:
    monkeypatch.setenv("PYTHONPATH", str(TEST_POLICIES))
    started: list[HostedDaemon] = []

    def start(
        options: dict[str, str],
        pool: dict[str, Any] | None = None,
        policy: str = "fixed-advice",
        control: dict[str, Any] | None = None,
        publish: dict[str, Any] | None = None,
    ) -> HostedDaemon:
        shipped = yaml.safe_load((PROJECT / "examples/advisor.yaml").read_text())
        local = local_override(tmp_path / "state", options)
        local["policy"]["name"] = policy
        local["pool"].update(pool or {})
        local["control"].update(control or {})
        local["publish"].update(publish or {})
        path = tmp_path / "advisor.yaml"
        path.write_text(yaml.safe_dump(merge(shipped, local)))
        return listening(HostedDaemon(["--config", str(path)]), started)

    yield start
    stop_all(started)
    hosts_pool.run(CM, "condor_rm", "-all", check=False)
    for name in hosts_pool.names:
        hosts_pool.set_owner_schedule(name, [])


def owners_everywhere(hosts_pool: HostsPool) -> None:
    """Every execute point's owner logged in for the next hour, as every slot ad says in an update
    made after the cron applied it. An older ad could pass for it: the test before may have left
    an owner that its teardown then sent away, and a job submitted while that slot is briefly
    free would start (a test once saw its idle job running)."""
    now = time.time()
    for ep in hosts_pool.names:
        hosts_pool.set_owner_schedule(ep, [(now, now + 3600)])
    applied = now + hosts_pool.cron_period + 1

    def owned() -> bool:
        ads = slot_ads(["State", "MyCurrentTime"])
        fresh = [ad for ad in ads if ad.get("MyCurrentTime", 0) >= applied]
        machines = {ad["Machine"].split(".")[0] for ad in fresh}
        every = machines >= set(hosts_pool.names) and len(fresh) == len(ads)
        return every and all(ad.get("State") == "Owner" for ad in fresh)

    wait_for(owned, 30, "every execute point's owner, in slot ads made after the cron read it")


def slot_ads(projection: list[str]) -> list[Any]:
    """The collector's startd ads (partitionable and dynamic slots), read across the bridge."""
    import htcondor2

    try:
        ads = htcondor2.Collector(COLLECTOR).query(
            htcondor2.AdTypes.Startd, projection=["Name", "Machine", *projection]
        )
    except Exception:  # still starting
        return []
    return list(ads)


def running_on(pool: HostsPool) -> dict[str, str]:
    """Running jobs by id -> machine, from the central manager's schedd."""
    out = pool.run(CM, "condor_q", "-allusers", "-run", "-af", "ClusterId", "ProcId", "RemoteHost")
    jobs = {}
    for line in out.splitlines():
        cluster, proc, host = line.split()
        if host != "undefined":
            jobs[f"{cluster}.{proc}"] = host.split("@")[-1]
    return jobs


def cm_schedd(pool: HostsPool) -> str:
    """The central manager's schedd's ``Name``, on which the daemon names its jobs."""
    return pool.run(CM, "condor_status", "-schedd", "-af", "Name").strip()


def http_get(prefix: list[str], python: str, url: str) -> tuple[int, str]:
    """Status and body of a GET of ``url`` by ``python`` run under ``prefix`` (a host)."""
    script = (
        "import sys, urllib.request, urllib.error\n"
        "try:\n"
        "    r = urllib.request.urlopen(sys.argv[1], timeout=10)\n"
        "    print(r.status); print(r.read().decode(), end='')\n"
        "except urllib.error.HTTPError as e:\n"
        "    print(e.code); print(e.read().decode(), end='')\n"
    )
    out = subprocess.run(
        [*prefix, python, "-c", script, url], capture_output=True, text=True, timeout=30
    )
    status, _, body = out.stdout.partition("\n")
    assert status.isdigit(), out.stderr
    return int(status), body


def private_token(pool: HostsPool, directory: Path, *authz: str) -> Path:
    """The advisor's token with ``authz`` in a private ``tokens.d`` (deploy/TOKENS.md)."""
    tokens = directory / "tokens.d"
    tokens.mkdir(mode=0o700)
    token = tokens / "advisor.token"
    token.write_text(pool.token("htcondor-advisor", *authz))
    token.chmod(0o600)
    return token


def editing_token(pool: HostsPool, directory: Path) -> Path:
    """The advisor's token with WRITE, and its user record at the schedd, as deploy/TOKENS.md
    has an administrator make them for ``pool.edit_jobs``."""
    token = private_token(pool, directory, "READ", "WRITE")
    pool.run(CM, "condor_qusers", "-add", f"htcondor-advisor@{DOMAIN}", check=False)  # once
    return token


def said_once_with_the_fix(daemon: HostedDaemon, said: str, fix: str) -> None:
    """A sink refused each cycle: one log line that names ``fix``, no traceback, and the hooks
    still publish the advice."""
    wait_for(lambda: said in daemon.log(), 30, "the refusal in the advisor's log")
    fresh = {EP1: 1.0, EP2: 1.0}
    wait_for(lambda: hook_published(fresh, daemon.started), 30, "the advice at both hooks")
    time.sleep(6)  # three more cycles, each refused again
    log = daemon.log()
    assert log.count(said) == 1 and "Traceback" not in log
    assert fix in log


def hook_published(ranks: dict[str, float], since: float) -> bool:
    """Whether each machine's slot ads carry ``ranks`` from advice made at ``since`` or later:
    the last test's advisor left its own, lapsed or still fresh, which may have the same ranks."""
    projection = ["AdvisorRank", "AdvisorPolicy", "AdvisorUpdated"]
    by_machine = {ad["Machine"]: ad for ad in slot_ads(projection)}
    return all(
        by_machine.get(m, {}).get("AdvisorRank") == r
        and by_machine[m].get("AdvisorPolicy") == "fixed-advice/1"
        and by_machine[m].get("AdvisorUpdated", 0) >= int(since)
        for m, r in ranks.items()
    )


def test_advice_crosses_the_network_to_the_hooks_and_only_to_them(
    hosts_pool: HostsPool, start_advisor: Any
) -> None:
    # before the advisor runs, each hook says in its startd's log why it has no advice
    line = f"htcondor-advisor-hook: no advice from {ADVISOR}: "
    for ep in hosts_pool.names:

        def logged(ep: str = ep) -> bool:
            return line in hosts_pool.log(ep, "StartLog")

        wait_for(logged, 30, f"{ep}'s log line")
    daemon = start_advisor({"ranks": f"{EP1}=9,{EP2}=1"})
    # no token and no merge: the ranks in the collector came through each execute point's hook,
    # each as its place in the advice's order
    places = {EP1: 2.0, EP2: 1.0}
    wait_for(lambda: hook_published(places, daemon.started), 60, "both hooks' advice")
    ep1 = hosts_pool.command("ep1", [])
    status, body = http_get(ep1, "python3", f"{ADVISOR}/advice/{EP1}")
    assert status == 200 and "AdvisorRank = 2.0" in body
    for private in (f"/explain/{EP1}", "/advice", "/metrics"):
        assert http_get(ep1, "python3", ADVISOR + private)[0] == 403, private
    # a host of the network that is no execute point gets nothing, its hook says why
    outside = network.OUTSIDE
    status, body = http_get([], sys.executable, f"{ADVISOR}/advice/{EP1}")
    assert (status, body) == (403, f"forbidden: {outside} is not in publish.allow\n")
    hook = PROJECT / "deploy/hook/htcondor-advisor-hook"
    out = subprocess.run(
        [sys.executable, str(hook), ADVISOR, EP1, "5"], capture_output=True, text=True
    )
    assert (out.returncode, out.stdout) == (1, "") and "no advice" in out.stderr
    # the central manager itself (loopback, publish.admin's default) reads why
    cm = network.inside(CM)
    status, body = http_get(cm, sys.executable, f"http://127.0.0.1:{ADVISOR_PORT}/explain/{EP1}")
    assert status == 200 and json.loads(body)["machine"] == EP1


def test_jobs_follow_the_advice_share_a_slot_and_leave_together_with_the_owner(
    hosts_pool: HostsPool, start_advisor: Any, tmp_path: Path
) -> None:
    daemon = start_advisor({"ranks": f"{EP1}=9,{EP2}=1", "hold": EP2})
    places = {EP1: 2.0, EP2: 1.0}
    wait_for(lambda: hook_published(places, daemon.started), 60, "both hooks' advice")
    hosts_pool.submit(job(600, 3, "request_cpus = 1"))
    # two one-core jobs at once on ep1's two-core partitionable slot, the highest ranked
    two = wait_for(lambda: len(jobs := running_on(hosts_pool)) == 2 and jobs, 60, "two jobs")
    assert sorted(two.values()) == [EP1, EP1]

    def dynamic_slots() -> list[str]:
        return sorted(ad["Machine"] for ad in slot_ads(["DynamicSlot"]) if ad.get("DynamicSlot"))

    assert wait_for(lambda: len(found := dynamic_slots()) == 2 and found, 15, "two dynamic slots")
    assert dynamic_slots() == [EP1, EP1]
    # the daemon counts each machine as the jobs it runs at once, its partitionable slot's cores
    machines = json.loads((tmp_path / "state/condor-journal/machines.json").read_text())
    assert {m: machines[m]["jobs_at_once"] for m in (EP1, EP2)} == {EP1: CORES, EP2: CORES}
    time.sleep(8)  # several negotiation cycles: the third job waits, ep2 is held
    assert running_on(hosts_pool) == two
    # the owner comes back to ep1: both jobs are evicted, and the daemon sees both as the owner's
    login = time.time()
    hosts_pool.set_owner_schedule("ep1", [(login, login + 3600)])
    wait_for(lambda: not running_on(hosts_pool), 30, "both jobs evicted")
    state = tmp_path / "state"
    ids = {on_schedd(j, cm_schedd(hosts_pool)): m for j, m in two.items()}
    expected = sorted([job_id, EP1, "evicted-owner"] for job_id in ids)
    wait_for(lambda: policy_ended(state, ids) == expected, 30, "the two owner evictions")
    # the daemon stops: its advice expires and the jobs run on ep2, as without the advisor
    daemon.proc.send_signal(signal.SIGTERM)
    assert daemon.finish(30) == 0
    placed = wait_for(lambda: running_on(hosts_pool), LIFETIME_S + 60, "jobs on ep2")
    assert set(placed.values()) == {EP2}
    (held,) = [ad for ad in slot_ads(["AdvisorExpires"]) if ad["Name"] == f"slot1@{EP2}"]
    out = hosts_pool.run(CM, "condor_q", "-allusers", "-run", "-af", "JobCurrentStartDate")
    assert all(int(t) >= int(held["AdvisorExpires"]) for t in out.split())  # not before expiry


def queued_jobs(hosts_pool: HostsPool, description: str) -> str:
    """Submit while both execute points are taken by their owners (the jobs queue, oldest first
    by default); the cluster id."""
    owners_everywhere(hosts_pool)
    out = hosts_pool.submit(description)
    return out.split("submitted to cluster ")[1].split(".")[0]


def start_editing_advisor(
    hosts_pool: HostsPool, start_advisor: Any, tmp_path: Path, options: dict[str, str], *policy: str
) -> HostedDaemon:
    """The advisor with ``pool.edit_jobs``, as the identity an administrator makes for it (WRITE
    for its edits, a queue super user: deploy/access-point)."""
    token = editing_token(hosts_pool, tmp_path)
    return start_advisor(
        options, {"token_file": str(token), "merge": False, "edit_jobs": True}, *policy
    )


def job_attribute(hosts_pool: HostsPool, cluster: str, name: str) -> dict[str, str]:
    """``name`` of each queued job of ``cluster``, as condor_q prints it."""
    rows = hosts_pool.run(CM, "condor_q", "-allusers", "-af", "ProcId", name).split("\n")
    return {f"{cluster}.{p}": v for p, v in (r.split() for r in rows if r.strip())}


def test_job_advice_sets_jobprio_and_changes_the_start_order(
    hosts_pool: HostsPool, start_advisor: Any, tmp_path: Path
) -> None:
    cluster = queued_jobs(hosts_pool, job(600, 4, "request_cpus = 1"))
    ranks = f"{EP1}=1,{EP2}=1"
    prios = f"{cluster}.3=9,{cluster}.2=8"
    start_editing_advisor(hosts_pool, start_advisor, tmp_path, {"ranks": ranks, "prios": prios})
    expected = {f"{cluster}.0": "0", f"{cluster}.1": "0", f"{cluster}.2": "8", f"{cluster}.3": "9"}
    wait_for(
        lambda: job_attribute(hosts_pool, cluster, "JobPrio") == expected,
        30,
        "the advised JobPrio in condor_q",
    )
    # ep1's owner leaves: its two cores take the two jobs the advice put first, not the oldest
    hosts_pool.set_owner_schedule("ep1", [])
    started = wait_for(lambda: len(jobs := running_on(hosts_pool)) == 2 and jobs, 60, "two jobs")
    assert sorted(started) == [f"{cluster}.2", f"{cluster}.3"]


def test_a_schedd_that_refuses_the_edits_is_one_line_in_the_log_with_the_fix(
    hosts_pool: HostsPool, start_advisor: Any, tmp_path: Path
) -> None:
    # the example configuration edits jobs; an administrator who made the token without WRITE
    # reads what to do, once, not a traceback every cycle, and the advice still reaches the hooks
    cluster = queued_jobs(hosts_pool, job(600, 1, "request_cpus = 1"))
    token = private_token(hosts_pool, tmp_path, "READ")
    options = {"ranks": f"{EP1}=1,{EP2}=1", "prios": f"{cluster}.0=9"}
    pool = {"token_file": str(token), "merge": False, "edit_jobs": True}
    daemon = start_advisor(options, pool)
    said = "publishing to schedd-jobprio failed: the schedd did not set JobPrio"
    said_once_with_the_fix(daemon, said, "deploy/access-point")
    assert job_attribute(hosts_pool, cluster, "JobPrio") == {f"{cluster}.0": "0"}


def test_the_daemon_reads_the_cores_a_queued_job_requests(
    hosts_pool: HostsPool, start_advisor: Any, tmp_path: Path
) -> None:
    # a job that asks for both cores of a partitionable slot counts as two one-core jobs for
    # frugal's queue and the power advice (docs/slots.md): the daemon reads RequestCpus
    cluster = queued_jobs(hosts_pool, job(600, 1, "request_cpus = 2"))
    start_advisor({"ranks": f"{EP1}=1,{EP2}=1"})
    journal = tmp_path / "state/condor-journal/events.jsonl"

    def queued() -> dict[str, int] | None:
        lines = journal.read_text().splitlines() if journal.exists() else []
        found = {
            split_schedd(e["job_id"])[0]: e["cpus"]
            for e in map(json.loads, lines)
            if e["kind"] == "JobQueued" and e["job_id"].startswith(f"{cluster}.")
        }
        return found or None

    assert wait_for(queued, 60, "the job queued in the journal") == {f"{cluster}.0": 2}


def test_a_collector_that_refuses_the_merge_is_one_line_in_the_log_with_the_fix(
    hosts_pool: HostsPool, start_advisor: Any, tmp_path: Path
) -> None:
    # a token without NEGOTIATOR: the collector refuses MERGE_STARTD_AD; the administrator reads
    # what to do, once, not a traceback every cycle, and the hooks still publish the advice
    token = private_token(hosts_pool, tmp_path, "READ")
    pool = {"token_file": str(token), "merge": True, "edit_jobs": False}
    daemon = start_advisor({"ranks": f"{EP1}=1,{EP2}=1"}, pool)
    said = "publishing to collector-merge failed: the collector did not merge"
    said_once_with_the_fix(daemon, said, "-authz NEGOTIATOR")


def test_a_schedd_that_was_down_gets_the_edit_once_it_is_back_and_no_traceback_meanwhile(
    hosts_pool: HostsPool, start_advisor: Any, tmp_path: Path
) -> None:
    # the schedd restarts (an upgrade, a crash) while the advisor edits jobs: the daemon says
    # once that it did not answer, lets its advice lapse rather than renew it blind, and the
    # advised JobPrio is set once the schedd is back
    cluster = queued_jobs(hosts_pool, job(600, 1, "request_cpus = 1"))
    token = editing_token(hosts_pool, tmp_path)
    hosts_pool.run(CM, "condor_off", "-schedd")
    try:
        options = {"ranks": f"{EP1}=1,{EP2}=1", "prios": f"{cluster}.0=9"}
        pool = {"token_file": str(token), "merge": False, "edit_jobs": True}
        daemon = start_advisor(options, pool)
        said = f"schedd {CM}.{DOMAIN} did not answer"
        wait_for(lambda: said in daemon.log(), 30, "the schedd's silence in the advisor's log")
        time.sleep(6)  # three more cycles without it
    finally:
        hosts_pool.run(CM, "condor_on", "-schedd")

    def advised() -> bool:
        try:
            return job_attribute(hosts_pool, cluster, "JobPrio") == {f"{cluster}.0": "9"}
        except RuntimeError:  # condor_q before the schedd has advertised itself again
            return False

    wait_for(advised, 60, "the advised JobPrio once the schedd is back")
    log = daemon.log()
    assert "Traceback" not in log and log.count("advice not renewed, it lapses") == 1
    assert log.count("pool did not answer at") == 1 and "pool answers again at" in log


def schedd_pid() -> int:
    """The central manager's condor_schedd (the namespaces share the process table)."""
    (pid,) = [
        p.name for p in Path("/proc").iterdir() if p.name.isdigit() and comm(p) == "condor_schedd"
    ]
    return int(pid)


def comm(process: Path) -> str:
    with contextlib.suppress(OSError):
        return (process / "comm").read_text().strip()
    return ""


def test_a_schedd_that_hangs_costs_a_deadline_and_the_hooks_are_answered_meanwhile(
    hosts_pool: HostsPool, start_advisor: Any
) -> None:
    # a stopped schedd accepts connections and never answers; the bindings would wait 20 s a
    # query holding the GIL, the endpoint frozen with them (docs/live-daemon.md). Each call ends
    # at pool.call_timeout_s instead, and ep1's hook is answered throughout
    daemon = start_advisor({"ranks": f"{EP1}=1,{EP2}=1"}, {"call_timeout_s": 3})
    fresh = {EP1: 1.0, EP2: 1.0}
    wait_for(lambda: hook_published(fresh, daemon.started), 30, "the advice at both hooks")
    before = hosts_pool.log("ep1", "StartLog").count("htcondor-advisor-hook:")
    ep1 = hosts_pool.command("ep1", [])
    pid = schedd_pid()
    os.kill(pid, signal.SIGSTOP)
    stopped = time.monotonic()
    try:
        said = f"schedd {CM}.{DOMAIN} did not answer (no answer within 3 s, pool.call_timeout_s)"
        answers = []
        # 12 s: several cycles each waiting on the schedd, and less than the advice's lifetime
        # (LIFETIME_S), so the advice has not lapsed yet and the hook has no reason to fail
        while time.monotonic() - stopped < LIFETIME_S - 8:
            answers.append(http_get(ep1, "python3", f"{ADVISOR}/advice/{EP1}")[0])
            time.sleep(2)
        failures = hosts_pool.log("ep1", "StartLog").count("htcondor-advisor-hook:") - before
        log = daemon.log()
    finally:
        os.kill(pid, signal.SIGCONT)
    assert said in log, log
    assert len(answers) >= 4 and set(answers) == {200}, answers
    assert failures == 0
    wait_for(lambda: "pool answers again" in daemon.log(), 60, "the schedd answering again")
    assert "Traceback" not in daemon.log()


def test_a_hung_schedd_delays_the_job_edits_until_it_answers(
    hosts_pool: HostsPool, start_advisor: Any, tmp_path: Path
) -> None:
    # with pool.edit_jobs, as the example configuration has it, the sink's calls to a schedd
    # that hangs once ended in a traceback every cycle, each waiting the deadline again: now one
    # warning a try, with backoff, the hooks answered meanwhile, and the edits made once it
    # answers. One edit a cycle (max_job_edits) keeps edits pending when the schedd stops, and
    # advice outlives the unconfirmed view (stale_after) so that the sink is still called
    cluster = queued_jobs(hosts_pool, job(600, 5, "request_cpus = 1"))
    prios = {f"{cluster}.{p}": str(5 + p) for p in range(5)}
    token = editing_token(hosts_pool, tmp_path)
    daemon = start_advisor(
        {"ranks": f"{EP1}=1,{EP2}=1", "prios": ",".join(f"{j}={p}" for j, p in prios.items())},
        {"token_file": str(token), "merge": False, "edit_jobs": True, "call_timeout_s": 3}
        | {"max_job_edits": 1},
        publish={"stale_after": "120s"},
    )
    wait_for(
        lambda: (
            "undefined" not in job_attribute(hosts_pool, cluster, "JobPrio").values()
            and set(job_attribute(hosts_pool, cluster, "JobPrio").values()) != {"0"}
        ),
        30,
        "the first edit",
    )
    pid = schedd_pid()
    os.kill(pid, signal.SIGSTOP)
    try:
        said = f"schedd {CM}.{DOMAIN} (job edits) did not answer"
        wait_for(lambda: said in daemon.log(), 30, "the job edits' warning", explain=daemon.log)
        fresh = {EP1: 1.0, EP2: 1.0}
        wait_for(lambda: hook_published(fresh, daemon.started), 30, "the advice at both hooks")
    finally:
        os.kill(pid, signal.SIGCONT)
    wait_for(
        lambda: job_attribute(hosts_pool, cluster, "JobPrio") == prios,
        120,
        "every advised JobPrio once the schedd answers",
        explain=lambda: daemon.log()[-3000:],
    )
    log = daemon.log()
    assert "Traceback" not in log and "publishing to schedd-jobprio failed" not in log


def test_a_job_held_until_later_stays_idle_while_the_others_start(
    hosts_pool: HostsPool, start_advisor: Any, tmp_path: Path
) -> None:
    # frugal's keep-off of a suspected never-finisher, through the schedd sink: the job ad gets
    # AdvisorHoldUntil and ADVISOR_ALLOWS keeps it off a free machine while the advice is fresh
    cluster = queued_jobs(hosts_pool, job(600, 2, "request_cpus = 1"))
    options = {"ranks": f"{EP1}=1,{EP2}=1", "holds": f"{cluster}.0=3600"}
    daemon = start_editing_advisor(hosts_pool, start_advisor, tmp_path, options)
    fresh = {EP1: 1.0, EP2: 1.0}  # the hold counts while the machine's advice is fresh
    wait_for(
        lambda: hook_published(fresh, daemon.started), 30, "this advisor's advice at both hooks"
    )

    def held() -> dict[str, str] | None:
        until = job_attribute(hosts_pool, cluster, "AdvisorHoldUntil")
        return until if until[f"{cluster}.0"] != "undefined" else None

    until = wait_for(held, 30, "AdvisorHoldUntil in condor_q")
    assert until[f"{cluster}.1"] == "undefined"
    assert int(until[f"{cluster}.0"]) > time.time() + 3000
    hosts_pool.set_owner_schedule("ep1", [])  # two free cores: only the job not held starts
    started = wait_for(lambda: running_on(hosts_pool), 60, "a job")
    assert list(started) == [f"{cluster}.1"]
    time.sleep(10)  # five more negotiation cycles with a core free: the held job stays idle
    ads = slot_ads(["AdvisorExpires", "AdvisorUpdated"])
    why = f"slot ads {ads}; the advisor's log:\n{daemon.log()}"
    assert list(running_on(hosts_pool)) == [f"{cluster}.1"], why


def test_edf_orders_the_live_queue_by_the_jobs_runtime_bounds(
    hosts_pool: HostsPool, start_advisor: Any, tmp_path: Path
) -> None:
    # four jobs of one cluster, longest bound first: EDF (deadline = arrival + runtime + sigma,
    # paper 002 eq. 1) puts the two shortest first, which FIFO would start last
    description = job(600, 1, "request_cpus = 1\nallowed_execute_duration = $(bound)")
    description = description.replace("queue 1", "queue bound in (3000, 2000, 1000, 700)")
    cluster = queued_jobs(hosts_pool, description)
    start_editing_advisor(hosts_pool, start_advisor, tmp_path, {}, "edf")

    def job_prios() -> list[str]:
        prio = {j: int(v) for j, v in job_attribute(hosts_pool, cluster, "JobPrio").items()}
        return sorted(prio, key=lambda j: -prio[j]) if len(set(prio.values())) == 4 else []

    shortest_first = [f"{cluster}.{p}" for p in (3, 2, 1, 0)]
    assert wait_for(job_prios, 60, "EDF's JobPrio in condor_q") == shortest_first
    hosts_pool.set_owner_schedule("ep1", [])
    started = wait_for(lambda: len(jobs := running_on(hosts_pool)) == 2 and jobs, 60, "two jobs")
    assert sorted(started) == [f"{cluster}.2", f"{cluster}.3"]


PRIOR_HOURS_EDIT = """
import sys, time
from advisor.condor.factory import build_condor_pool
from plugins.contract.advice import Advice, JobAdvice
job, collector, schedd, token = sys.argv[1:]
sibling = job.split(".")[0] + ".1"
source, (sink,) = build_condor_pool({"collector": collector, "schedds": [schedd],
    "token_file": token, "merge": False, "edit_jobs": True})
source.poll(time.time())
source.schedds[0].queue.record_attempt(job, 2 * 3600 + 5)  # its epoch history: a 2-hour attempt
source.poll(time.time())
print(source.understated())
sink.publish(Advice(jobs={sibling: JobAdvice(needs_hours=5)}), time.time())
source.poll(time.time())
print(source.understated())
"""


def test_the_daemon_tells_the_pool_a_jobs_longest_attempt_as_advisor_prior_hours(
    hosts_pool: HostsPool, start_advisor: Any, tmp_path: Path
) -> None:
    # the pool's expression reads the last attempt, the daemon knows the longest: an hour-long
    # attempt cannot be waited for here, so the script records one as the epoch history would
    # (start_advisor only for its teardown: the jobs removed, the owners gone); the other job is
    # advised to need 5 hours (frugal's class for a cut-short batch), which is no fact to undo
    owners_everywhere(hosts_pool)
    out = hosts_pool.submit(job(600, 2, "request_cpus = 1"))
    cluster = out.split("submitted to cluster ")[1].split(".")[0]
    token = editing_token(hosts_pool, tmp_path)
    collector, schedd = f"{ADDRESSES[CM]}:9618", f"{CM}.{DOMAIN}"
    script = [*network.inside(CM), sys.executable, "-c", PRIOR_HOURS_EDIT]
    run = subprocess.run(
        [*script, f"{cluster}.0", collector, schedd, str(token)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.stdout.splitlines() == [
        f"{{'{schedd}': {{'{cluster}.0': 2}}}}",
        f"{{'{schedd}': {{}}}}",
    ], run.stderr
    macros = deploy_macros()
    rows = hosts_pool.run(
        CM,
        "condor_q",
        "-allusers",
        "-af",
        "ProcId",
        "AdvisorPriorHours",
        "AdvisorNeedsHours",
        expand("ADVISOR_CLASS", macros),
    )
    assert rows.splitlines() == ["0 2 undefined 2", "1 undefined 5 5"]


@contextlib.contextmanager
def control_group(pool: HostsPool, percent: int) -> Iterator[None]:
    """Every host's ``ADVISOR_CONTROL_PERCENT`` set to ``percent`` (as an administrator turns the
    control group on), and back to none after."""

    def configure(value: int) -> None:
        for host in pool.hosts:
            local = f"/etc/advisor-hosts/{host}/config.d/60-htcondor-advisor-local.conf"
            text = (CONTROL_OFF if host == CM else LOCAL).replace(
                CONTROL_OFF, f"ADVISOR_CONTROL_PERCENT = {value}\n"
            )
            pool.host_path(local).write_text(text)
            pool.run(host, "condor_reconfig")

    configure(percent)
    try:
        yield
    finally:
        configure(0)


def test_control_jobs_start_only_on_the_control_arm_s_machine(
    hosts_pool: HostsPool, start_advisor: Any
) -> None:
    """Half the jobs and one execute point of two are the control arm's: each job starts only on
    its arm's machine while the advice is fresh (docs/control-group.md)."""
    split = MachineSplit(50, [EP1, EP2])
    (control_ep,) = split.control
    (treated_ep,) = {EP1, EP2} - split.control
    with control_group(hosts_pool, 50):
        # the policy would rank the control machine highest: it is not asked, jobs keep off it
        start_advisor(
            {"ranks": f"{control_ep}=9,{treated_ep}=1"},
            control={"percent": 50, "guard": False},
        )

        def arms_published() -> bool:
            ads = {ad["Machine"]: ad for ad in slot_ads(["AdvisorControl"])}
            return (
                ads.get(control_ep, {}).get("AdvisorControl") is True
                and ads.get(treated_ep, {}).get("AdvisorControl") is False
            )

        wait_for(arms_published, 60, "each machine's arm through its hook")
        hosts_pool.submit(job(600, 16, "request_cpus = 1"))  # both arms, surely
        arm_of_machine = {control_ep: CONTROL, treated_ep: TREATED}

        def both_arms_running() -> dict[str, str] | bool:
            jobs = running_on(hosts_pool)
            return len({arm_of(j, 50) for j in jobs}) == 2 and jobs

        placed = wait_for(both_arms_running, 90, "jobs of both arms running")
        time.sleep(6)  # more negotiation cycles: free cores of the other arm stay free
        placed.update(running_on(hosts_pool))
        assert {j: arm_of_machine[m] for j, m in placed.items()} == {
            j: arm_of(j, 50) for j in placed
        }
        hosts_pool.run(CM, "condor_rm", "-all", check=False)


EDIT_LOAD = """
import sys, time
from advisor.condor.factory import build_condor_pool
from plugins.contract.advice import Advice, JobAdvice
cluster, collector, schedd, token = sys.argv[1:]
_, (sink,) = build_condor_pool({"collector": collector, "schedds": [schedd],
    "token_file": token, "merge": False, "edit_jobs": True})
((_, handle),) = sink.schedds()
began = time.perf_counter()
idle = handle.query("JobStatus == 1", ["ClusterId", "ProcId"])
query_s = time.perf_counter() - began
now = time.time()
holds = {f"{cluster}.{p}": JobAdvice(hold_until=now + 3600 + p) for p in range(100)}
began = time.perf_counter()
sink.publish(Advice(jobs=holds), now)
holds_s = time.perf_counter() - began
classes = {f"{cluster}.{p}": JobAdvice(needs_hours=5) for p in range(100, 200)}
began = time.perf_counter()
sink.publish(Advice(jobs=classes), now)
print(len(idle), int(now), query_s, holds_s, time.perf_counter() - began)
"""
EDIT_LOAD_JOBS = 2000


def test_a_cycle_of_frugals_job_edits_on_a_real_schedd_and_what_it_takes(
    hosts_pool: HostsPool, start_advisor: Any, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    # the daemon's edit budget (pool.max_job_edits, 100 a cycle) at its dearest: 100 suspects
    # kept off until as many different times (a query and an edit each), then 100 jobs classed
    # alike (one of each), on a queue of 2,000 idle jobs; the figures are printed, not asserted
    # (start_advisor only for its teardown: the jobs removed)
    out = hosts_pool.submit(job(600, EDIT_LOAD_JOBS, "requirements = false"))
    cluster = out.split("submitted to cluster ")[1].split(".")[0]
    token = editing_token(hosts_pool, tmp_path)
    collector, schedd = f"{ADDRESSES[CM]}:9618", f"{CM}.{DOMAIN}"
    script = [*network.inside(CM), sys.executable, "-c", EDIT_LOAD]
    run = subprocess.run(
        [*script, cluster, collector, schedd, str(token)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    idle, now, query_s, holds_s, classes_s = run.stdout.split()
    assert int(idle) == EDIT_LOAD_JOBS
    rows = hosts_pool.run(CM, "condor_q", cluster, "-af", "ProcId", "AdvisorHoldUntil")
    held = dict(row.split() for row in rows.splitlines())
    assert [held[str(p)] for p in range(101)] == [
        *(str(int(now) + 3600 + p) for p in range(100)),
        "undefined",
    ]
    rows = hosts_pool.run(CM, "condor_q", cluster, "-af", "ProcId", "AdvisorNeedsHours")
    needs = dict(row.split() for row in rows.splitlines())
    assert {needs[str(p)] for p in range(100, 200)} == {"5"} and needs["200"] == "undefined"
    with capsys.disabled():
        print(
            f"\nedit load, {idle} idle jobs on the real schedd: one query of them "
            f"{float(query_s):.3f} s; a cycle of 100 holds to 100 times {float(holds_s):.3f} s "
            f"({float(holds_s) / float(query_s):.1f} x the query); 100 jobs classed alike "
            f"{float(classes_s):.3f} s ({float(classes_s) / float(query_s):.1f} x)"
        )


def test_a_schedd_on_its_own_host_is_read_and_edited_across_the_network(
    hosts_pool: HostsPool, start_advisor: Any, tmp_path: Path
) -> None:
    """An access point of its own, as most sites have one: the daemon on the central manager
    finds its schedd, reads its queue and its history across the network, names its jobs on it
    and edits them there (deploy/access-point as shipped, the advisor's user record added)."""
    import htcondor2

    schedd = hosts_pool.machine(ACCESS_POINT)
    hosts_pool.start_host(ACCESS_POINT)
    try:

        def schedds() -> list[str]:
            ads = htcondor2.Collector(COLLECTOR).query(
                htcondor2.AdTypes.Schedd, projection=["Name"]
            )
            return sorted(str(ad["Name"]) for ad in ads)

        wait_for(lambda: schedd in schedds(), 60, "the access point's schedd")
        waiting = job(600, 1, "request_cpus = 1\nrequirements = false")  # idle: edited
        out = hosts_pool.submit_at(ACCESS_POINT, waiting)
        cluster = out.split("submitted to cluster ")[1].split(".")[0]
        token = editing_token(hosts_pool, tmp_path)
        hosts_pool.run(ACCESS_POINT, "condor_qusers", "-add", f"htcondor-advisor@{DOMAIN}")
        ap_job = on_schedd(f"{cluster}.0", schedd)
        pool = {"token_file": str(token), "merge": False, "edit_jobs": True}
        pool["schedds"] = [f"{CM}.{DOMAIN}", schedd]  # as its administrator lists them
        daemon = start_advisor({"ranks": f"{EP1}=1,{EP2}=1", "prios": f"{ap_job}=9"}, pool)

        def prio() -> str:
            out = hosts_pool.run(ACCESS_POINT, "condor_q", "-allusers", cluster, "-af", "JobPrio")
            return out.strip()

        wait_for(lambda: prio() == "9", 60, "the edit on the access point", explain=daemon.log)
        journal = tmp_path / "state/condor-journal/events.jsonl"

        def reported(kind: str) -> bool:
            lines = journal.read_text().splitlines() if journal.exists() else []
            return any(e["kind"] == kind and e["job_id"] == ap_job for e in map(json.loads, lines))

        assert wait_for(lambda: reported("JobQueued"), 30, "the job queued, named on its schedd")
        hosts_pool.run(ACCESS_POINT, "condor_rm", cluster, user="tester")
        wait_for(lambda: reported("JobRemoved"), 60, "its removal, from the access point's history")
    finally:
        hosts_pool.stop_host(ACCESS_POINT)
