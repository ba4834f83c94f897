"""HTC jobs of the campus scenario: bursty batches without a weekly or termly pattern.

A batch is one ``condor_submit`` (ids ``<cluster>.<proc>``) by one of a few users, with a
heavy-tailed size; configured bursts (the published 93,000-job day) are split into many batches.
Runtimes are alike within a batch, as in the real trace. Whole batches, picked at random, never
finish; their user removes the cluster after a delay, which is what the replay needs to know.
"""

from __future__ import annotations

import datetime as dt

import numpy as np

from plugins.contract.config_checks import LogNormal
from simulator.campus.job_config import JobModel
from simulator.trace_model import DAY, DEFAULT_CPUS, Jobs

HOUR = 3600.0


def _lognormal(spec: LogNormal, size: int, rng: np.random.Generator) -> np.ndarray:
    return np.clip(rng.lognormal(np.log(spec.median), spec.sigma, size), spec.lo, spec.hi)


def _batch_sizes(spec: LogNormal, total: int, rng: np.random.Generator) -> np.ndarray:
    """Heavy-tailed batch sizes adding up to exactly ``total``."""
    if total <= 0:
        return np.empty(0, dtype=np.int64)
    mean = spec.median * np.exp(spec.sigma**2 / 2)
    sizes = np.empty(0, dtype=np.int64)
    while sizes.sum() < total:
        more = max(int(1.2 * (total - sizes.sum()) / mean), 16)
        sizes = np.concatenate([sizes, np.ceil(_lognormal(spec, more, rng)).astype(np.int64)])
    cut = int(np.searchsorted(np.cumsum(sizes), total)) + 1
    sizes = sizes[:cut]
    sizes[-1] -= int(sizes.sum()) - total
    return sizes


def _bursts(
    model: JobModel, t0: float, days: int, scale: float, rng: np.random.Generator
) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """Times, sizes and users of the batches of the configured bursts inside the window."""
    start = dt.datetime.fromtimestamp(t0, dt.UTC).date()
    times, sizes, users, medians = [], [], [], []
    for b in model.bursts:
        d = (b.date - start).days
        n = round(b.jobs * scale)
        if not 0 <= d < days or n == 0:
            continue
        k = min(b.batches, n)
        parts = rng.multinomial(n - k, rng.dirichlet(np.ones(k))) + 1
        at = t0 + d * DAY + HOUR * (b.start_hour + rng.random(k) * (b.end_hour - b.start_hour))
        times.append(np.sort(at))
        sizes.append(parts.astype(np.int64))
        users.append(np.full(k, int(b.user[4:]) - 1))
        medians.append(
            np.full(k, np.nan if b.runtime_median_minutes is None else b.runtime_median_minutes)
        )
    return times, sizes, users, medians


def generate_jobs(
    model: JobModel, t0: float, days: int, scale: float, rng: np.random.Generator
) -> Jobs:
    """The window's jobs sorted by submit time (see the module docstring for the model)."""
    year = dt.datetime.fromtimestamp(t0, dt.UTC).year
    in_year = sum(b.jobs for b in model.bursts if b.date.year == year)
    background = round((model.per_year - in_year) * scale * days / 365.0)
    sizes = _batch_sizes(model.batch_size, background, rng)
    nb = len(sizes)
    hourly = np.asarray(model.hourly_shape) / np.sum(model.hourly_shape)
    when = rng.integers(0, days, nb) * DAY + (rng.choice(24, nb, p=hourly) + rng.random(nb)) * HOUR
    zipf = 1.0 / np.arange(1, model.users + 1) ** model.user_zipf
    users = rng.choice(model.users, nb, p=zipf / zipf.sum())
    b_times, b_sizes, b_users, b_medians = _bursts(model, t0, days, scale, rng)
    times = np.concatenate([t0 + when, *b_times])
    sizes = np.concatenate([sizes, *b_sizes]).astype(np.int64)
    users = np.concatenate([users, *b_users]).astype(np.int64)
    in_burst = np.arange(len(sizes)) >= nb

    # Runtime medians: per user, then per batch; jobs of a batch scatter a little around theirs.
    rt = model.runtime_minutes
    user_med = rt.median * np.exp(rng.normal(0.0, model.runtime_user_sigma, model.users))
    batch_med = user_med[users] * np.exp(rng.normal(0.0, rt.sigma, len(sizes)))
    # Big sweeps are made of short jobs: median x (size / typical size)^-exponent above the typical.
    big = np.maximum(sizes / model.batch_size.median, 1.0)
    batch_med = batch_med * big**-model.runtime_size_exponent
    # A burst may set its own median (the published 93,000-job day must have been short jobs).
    burst_med = np.concatenate([np.full(nb, np.nan), *b_medians])
    batch_med = np.where(np.isnan(burst_med), batch_med, burst_med)
    # Whole batches never finish, in random order until the share is reached (bursts finish).
    quota = round(model.never_finish_fraction * int(sizes.sum()))
    cand = rng.permutation(np.flatnonzero(~in_burst))
    before = np.concatenate([[0], np.cumsum(sizes[cand])])[:-1]
    broken_n = np.zeros(len(sizes), dtype=np.int64)
    broken_n[cand] = np.clip(quota - before, 0, sizes[cand])
    delay = _lognormal(model.remove_delay_hours, len(sizes), rng) * HOUR
    if model.admin_remove is not None:  # drawn only when configured: other traces stay as they were
        admin = rng.random(len(sizes)) < model.admin_remove.share
        late = _lognormal(model.admin_remove.hours, len(sizes), rng) * HOUR
        delay = np.where(admin, late, delay)

    n = int(sizes.sum())
    batch = np.repeat(np.arange(len(sizes)), sizes)
    proc = np.arange(n) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    submit = times[batch] + proc * model.submit_spacing_seconds
    job_f = np.exp(rng.normal(0.0, model.runtime_job_sigma, n))
    runtime = np.clip(batch_med[batch] * job_f, rt.lo, rt.hi) * 60.0
    never = proc < broken_n[batch]
    last_submit = times + (sizes - 1) * model.submit_spacing_seconds
    runtime[never] = np.inf
    remove = np.where(never, (last_submit + delay)[batch], np.inf)

    cluster_id = np.empty(len(sizes), dtype=np.int64)
    cluster_id[np.argsort(times, kind="stable")] = np.arange(1, len(sizes) + 1)
    order = np.argsort(submit, kind="stable")
    cid, pid, uid = cluster_id[batch][order].tolist(), proc[order].tolist(), users[batch][order]
    names = [f"user{k:02d}" for k in range(1, model.users + 1)]
    # Drawn last (and only when asked for) so traces without replicas stay as they were.
    fraction = model.replicable_fraction
    replicable = rng.random(n) < fraction if fraction else np.zeros(n, dtype=bool)
    cpus = np.full(n, DEFAULT_CPUS, dtype=np.int64)
    if model.request_cpus:  # per batch: one condor_submit asks alike for all its jobs
        cores, shares = zip(*model.request_cpus, strict=True)
        cpus = np.asarray(cores, dtype=np.int64)[rng.choice(len(cores), len(sizes), p=shares)]
        cpus = cpus[batch][order]
    return Jobs(
        job_id=[f"{c}.{p}" for c, p in zip(cid, pid, strict=True)],
        user=[names[u] for u in uid.tolist()],
        submit=submit[order],
        runtime=runtime[order],
        remove=remove[order],
        replicable=replicable,
        cpus=cpus,
    )
