"""Campus scenario generator: published statistics, physical consistency, seasonality, config."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
import yaml

from simulator.campus.plots import plot_scenario
from simulator.campus.scenario import ConfigError, generate_campus, load_campus_config
from simulator.trace_model import DAY, Trace, weekday


@pytest.fixture(scope="module")
def config():
    return load_campus_config(None)


@pytest.fixture(scope="module")
def year(config) -> Trace:
    """The full published year at scale 1 (about 2 s), shared by the statistics tests."""
    return generate_campus(config, days=365, scale=1.0, seed=1)


def _per_day(times: np.ndarray, trace: Trace) -> np.ndarray:
    ndays = round((trace.end - trace.start) / DAY)
    return np.bincount(((times - trace.start) // DAY).astype(int), minlength=ndays)


def _arrays(trace: Trace) -> list:
    o, j = trace.owners, trace.jobs
    watts = [(m.name, m.active_watts, m.idle_watts) for m in trace.inventory.machines]
    return [o.login, o.machine, o.logout, j.submit, j.runtime, j.remove, j.job_id, j.user, watts]


def test_same_seed_same_trace_and_other_seed_differs(config) -> None:
    a, b = (generate_campus(config, days=21, scale=0.1, seed=7) for _ in range(2))
    for x, y in zip(_arrays(a), _arrays(b), strict=True):
        assert np.array_equal(np.asarray(x), np.asarray(y))
    c = generate_campus(config, days=21, scale=0.1, seed=8)
    assert len(c.owners) != len(a.owners) or not np.array_equal(c.owners.login, a.owners.login)
    assert len(c.jobs) != len(a.jobs) or not np.array_equal(c.jobs.submit, a.jobs.submit)


def test_full_year_matches_published_statistics(year: Trace) -> None:
    inv = year.inventory
    assert 1300 <= len(inv.machines) <= 1450
    assert len(inv.clusters) == 37
    assert 1_100_000 <= len(year.owners) <= 1_350_000
    jobs = year.jobs
    assert 480_000 <= len(jobs) <= 580_000
    never = jobs.never_finishes()
    assert 0.2 <= never.mean() <= 0.3
    assert 80_000 <= _per_day(jobs.submit, year).max() <= 105_000
    runtime = jobs.runtime[~never]
    assert np.mean(runtime < 3 * 3600) > 0.5
    assert runtime.max() <= 24 * 3600 and runtime.min() > 0
    assert year.start == 1262304000.0  # 2010-01-01 00:00 UTC
    assert year.end == year.start + 365 * DAY
    assert len(year.terms) == 3 and all(a < b for a, b in year.terms)


def test_jobs_are_well_formed(year: Trace) -> None:
    jobs = year.jobs
    assert np.all(np.diff(jobs.submit) >= 0)
    assert year.start <= jobs.submit[0] and jobs.submit[-1] < year.end
    assert len(set(jobs.job_id)) == len(jobs)
    assert all(re.fullmatch(r"\d+\.\d+", j) for j in jobs.job_id[:1000])
    users = set(jobs.user)
    assert 5 <= len(users) <= 20 and all(re.fullmatch(r"user\d\d", u) for u in users)
    never = jobs.never_finishes()
    assert np.all(np.isfinite(jobs.remove[never])) and np.all(
        jobs.remove[never] > jobs.submit[never]
    )
    assert np.all(np.isinf(jobs.remove[~never]))


def test_calibration_leaves_room_for_learning_schedulers(year: Trace) -> None:
    """The shape behind the energy calibration (campus.yaml comments on the jobs section)."""
    jobs = year.jobs
    never = jobs.never_finishes()
    life = (jobs.remove[never] - jobs.submit[never]) / 3600.0
    # Most broken batches are removed by their user within the hour, but nine tenths of the
    # never-finishing job-hours are in the few unwatched batches that run for days until the
    # administrator kills them: re-run after every eviction, they are the waste that schedulers
    # learning from a job's prior attempts can avoid.
    assert np.median(life) < 1
    assert life[life > 24].sum() / life.sum() >= 0.8
    assert 0.01 <= np.mean(life > 24) <= 0.05
    # Random placement re-runs a never-finishing job until it is removed, so the job-hours set the
    # wasted energy: about 1.1 M hours at about 80 W gives the published 84-88 MWh.
    assert 0.9e6 <= life.sum() <= 1.3e6
    # A good job must fit between two 03:00 reboots, or random placement re-runs it for ever.
    runtime = jobs.runtime[~never]
    assert runtime.max() <= 20 * 3600
    # Good jobs are long enough for the published 32 MWh of a clairvoyant scheduler.
    assert 45 * 60 <= runtime.mean() <= 90 * 60
    # No single broken batch can fill the 1,386-machine pool and starve everybody else for days.
    batch = np.array([j.split(".")[0] for j in jobs.job_id])
    assert np.unique(batch[never], return_counts=True)[1].max() <= 500


def test_inventory_is_homogeneous_per_cluster(year: Trace, config) -> None:
    by_cluster: dict[str, set] = {}
    for m in year.inventory.machines:
        assert re.fullmatch(rf"{re.escape(m.cluster)}-\d{{3}}", m.name)
        by_cluster.setdefault(m.cluster, set()).add(
            (m.mtype, m.cores, m.active_watts, m.idle_watts)
        )
        if m.mtype == "legacy":
            assert 100 <= m.active_watts <= 180 and 50 <= m.idle_watts <= 80 and m.sleep_watts == 4
        if m.mtype == "normal":
            assert (m.cores, m.active_watts, m.idle_watts, m.sleep_watts) == (2, 57, 40, 2)
    assert all(len(specs) == 1 for specs in by_cluster.values())
    assert len(year.inventory.index()) == len(year.inventory.machines)


def test_sessions_are_physically_consistent(year: Trace) -> None:
    o, inv = year.owners, year.inventory
    assert np.all(np.diff(o.login) >= 0)
    assert np.all(o.logout > o.login)
    assert o.machine.min() >= 0 and o.machine.max() < len(inv.machines)
    order = np.lexsort((o.login, o.machine))
    same = o.machine[order][1:] == o.machine[order][:-1]
    assert np.all(o.login[order][1:][same] >= o.logout[order][:-1][same]), "sessions overlap"
    cluster_of = [inv.clusters[m.cluster].hours.days for m in inv.machines]
    spans = np.array([[s if s else (np.nan, np.nan) for s in days] for days in cluster_of])
    wd = ((o.login // DAY + 3) % 7).astype(int)
    assert all(weekday(t) == w for t, w in zip(o.login[::9973], wd[::9973], strict=True))
    span = spans[o.machine, wd]
    sod = o.login % DAY
    assert np.all((span[:, 0] <= sod) & (sod < span[:, 1])), "login while the room is closed"
    closes_same_day = span[:, 1] < DAY
    day_start = o.login - sod
    ok = o.logout[closes_same_day] <= day_start[closes_same_day] + span[closes_same_day, 1]
    assert np.all(ok), "session runs past closing time"


def test_seasonality_terms_weekdays_and_rooms(year: Trace, config) -> None:
    per_day = _per_day(year.owners.login, year)
    day_t = year.start + np.arange(len(per_day)) * DAY + DAY / 2
    in_term = np.zeros(len(per_day), dtype=bool)
    for a, b in year.terms:
        in_term |= (day_t >= a) & (day_t < b)
    wd = np.array([weekday(t) for t in day_t])
    term_weekday = per_day[in_term & (wd < 5)].mean()
    vacation_weekend = per_day[~in_term & (wd >= 5)].mean()
    assert term_weekday > 5 * vacation_weekend
    assert per_day[in_term & (wd < 5)].mean() > 2 * per_day[~in_term & (wd < 5)].mean()
    # Popular rooms see more sessions per machine (per-room structure an idle model can learn).
    index = {c.name: i for i, c in enumerate(config.clusters)}
    room = np.array([index[m.cluster] for m in year.inventory.machines])[year.owners.machine]
    per_pc = np.bincount(room) / np.array([c.machines for c in config.clusters])
    popularity = np.array([c.popularity for c in config.clusters])
    ranks = [np.argsort(np.argsort(x)).astype(float) for x in (per_pc, popularity)]
    assert np.corrcoef(ranks[0], ranks[1])[0, 1] > 0.8


def test_short_run_follows_the_year(config, year: Trace) -> None:
    january = generate_campus(config, days=28, scale=1.0, seed=3)
    assert january.end == january.start + 28 * DAY
    got, want = len(january.owners), np.count_nonzero(year.owners.login < january.end)
    assert abs(got - want) < 0.1 * want
    background = config.jobs.per_year - sum(b.jobs for b in config.jobs.bursts)
    assert abs(len(january.jobs) - background * 28 / 365) <= 1  # no burst in January


def test_scale_shrinks_everything(config, year: Trace) -> None:
    small = generate_campus(config, days=365, scale=0.1, seed=1)
    assert len(small.inventory.clusters) == 37
    assert 0.09 <= len(small.inventory.machines) / len(year.inventory.machines) <= 0.12
    assert 0.07 <= len(small.owners) / len(year.owners) <= 0.12
    assert 0.095 <= len(small.jobs) / len(year.jobs) <= 0.105
    assert 0.2 <= small.jobs.never_finishes().mean() <= 0.3
    tiny = generate_campus(config, days=7, scale=0.001, seed=1)
    assert len(tiny.inventory.machines) == 37  # every room keeps a PC


def _write(tmp_path: Path, edit) -> Path:
    raw = yaml.safe_load(resources.files("simulator.campus").joinpath("campus.yaml").read_text())
    edit(raw)
    path = tmp_path / "campus.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda r: r["owners"].update(colour="blue"), r"owners\.colour: unknown key"),
        (lambda r: r["owners"]["session_minutes"].update(sigma="wide"), r"session_minutes\.sigma"),
        (lambda r: r["clusters"][2].update(type="quantum"), r"clusters\[2\]\.type: must be one of"),
        (lambda r: r["clusters"][0].update(hours="never"), r"clusters\[0\]\.hours"),
        (lambda r: r["jobs"].pop("per_year"), r"jobs\.per_year: missing"),
        (lambda r: r["jobs"]["runtime_minutes"].update(max=2000), r"runtime_minutes\.max.*24 h"),
        (lambda r: r["opening_hours"]["teaching"].update(mon="17:00-09:00"), r"teaching\.mon"),
        (lambda r: r["calendar"]["terms"][0].update(start="2010-13-40"), r"terms\[0\]\.start"),
        (lambda r: r["jobs"]["bursts"][0].update(user="bob"), r"bursts\[0\]\.user"),
        (lambda r: r["jobs"]["admin_remove"].update(share=1.5), r"admin_remove\.share"),
        (lambda r: r["jobs"]["admin_remove"].pop("hours"), r"admin_remove\.hours: missing"),
    ],
)
def test_config_errors_name_the_key(tmp_path: Path, edit, expected: str) -> None:
    with pytest.raises(ConfigError, match=expected):
        load_campus_config(_write(tmp_path, edit))


def test_config_round_trips_through_a_file(tmp_path: Path, config) -> None:
    assert load_campus_config(_write(tmp_path, lambda r: None)) == config
    assert sum(c.machines for c in config.clusters) == 1386


def test_plot_scenario_writes_pngs(tmp_path: Path, config) -> None:
    paths = plot_scenario(generate_campus(config, days=14, scale=0.05), tmp_path)
    assert [p.name for p in paths] == ["owner_sessions_per_day.png", "jobs_per_day.png"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in paths)
