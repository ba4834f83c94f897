"""Owner (interactive) sessions of the campus scenario.

Walk-ins are a Poisson process per room, day and hour (room popularity x season x weekday x hour of
day, only while the room is open); timetabled classes add a room-filling crowd at fixed weekly slots
of each term. Both give idle-time models something real to learn. Arrivals then take a random free
PC of their room in time order, so sessions never overlap on a machine and end by closing time.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from plugins.contract.config_checks import ConfigError
from simulator.campus.scenario_config import DAY_KINDS, CampusConfig, ClusterSpec, OwnerModel
from simulator.trace_model import DAY, OwnerSessions

HOUR = 3600.0
TERM, EXAMS = DAY_KINDS.index("term"), DAY_KINDS.index("exams")
CLASS_DAY = (9, 18)
"""Classes are timetabled on weekdays between these hours (and inside opening hours)."""

Span = tuple[float, float] | None


@dataclass(frozen=True, slots=True)
class Room:
    """A cluster as generated: its spec, PCs at this scale and first PC's inventory index."""

    spec: ClusterSpec
    n: int
    first: int
    hours: tuple[Span, ...]


def hour_windows(hours: tuple[Span, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Per weekday and hour, the part ``[lo, hi)`` (seconds of day) of the hour the room is open."""
    lo, hi = np.zeros((7, 24)), np.zeros((7, 24))
    start = np.arange(24) * HOUR
    for d, span in enumerate(hours):
        if span is not None:
            lo[d] = np.clip(start, span[0], span[1])
            hi[d] = np.clip(start + HOUR, span[0], span[1])
    return lo, hi


def close_after(hours: tuple[Span, ...]) -> np.ndarray:
    """Per weekday, seconds from that day's midnight until a room open then closes (inf: never)."""
    out = np.full(7, np.inf)
    for d, span in enumerate(hours):
        if span is None:
            continue
        end, k = span[1], 0
        while end == DAY * (k + 1) and k < 7:
            k += 1
            nxt = hours[(d + k) % 7]
            if nxt is None or nxt[0] > 0:
                break
            end = DAY * k + nxt[1]
        out[d] = end if k < 7 else np.inf
    return out


def _weights(model: OwnerModel, hours: tuple[Span, ...]) -> np.ndarray:
    """Walk-in weight per weekday and hour: shape x open fraction x weekday factor."""
    shape = np.asarray(model.hourly_shape) / np.mean(model.hourly_shape)
    lo, hi = hour_windows(hours)
    return shape[None, :] * (hi - lo) / HOUR * np.asarray(model.weekday_factors)[:, None]


def walkin_base_rate(cfg: CampusConfig, kinds: np.ndarray, wdays: np.ndarray) -> float:
    """Walk-ins per machine-hour at weight 1 that make one year's arrivals ``arrivals_per_year``.

    Calibrated on the full configured campus and year, so a shorter or scaled run keeps the same
    rates (28 days give January's sessions, scale 0.1 a tenth of them).
    """
    m = cfg.owners
    season = np.asarray([m.day_factors[k] for k in DAY_KINDS])[kinds]
    per_wd = np.bincount(wdays, weights=season, minlength=7)
    teaching_weeks = np.count_nonzero((kinds == TERM) & (wdays < 5)) / 5.0
    weight = classes = 0.0
    for c in cfg.clusters:
        w = _weights(m, cfg.opening_hours[c.hours]).sum(axis=1)
        weight += c.machines * c.popularity * float(per_wd @ w)
        classes += c.classes * teaching_weeks * c.machines * m.class_attendance
    walkins = m.arrivals_per_year - classes
    if walkins <= 0 or weight <= 0:
        raise ConfigError("owners.arrivals_per_year: too small for the timetabled classes")
    return walkins / weight


def _walkins(
    model: OwnerModel,
    rooms: list[Room],
    t0: float,
    kinds: np.ndarray,
    wdays: np.ndarray,
    base: float,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Walk-in (room, login, wanted logout) arrays, vectorised over room x day x hour cells."""
    ndays = len(kinds)
    season = np.asarray([model.day_factors[k] for k in DAY_KINDS])[kinds]
    sig = model.daily_noise_sigma
    noise = np.exp(rng.normal(-sig * sig / 2, sig, size=(len(rooms), ndays)))
    lo = np.empty((len(rooms), 7, 24))
    hi = np.empty_like(lo)
    lam = np.empty((len(rooms), ndays, 24))
    for r, room in enumerate(rooms):
        lo[r], hi[r] = hour_windows(room.hours)
        w = _weights(model, room.hours)[wdays]
        lam[r] = base * room.n * room.spec.popularity * (season * noise[r])[:, None] * w
    counts = rng.poisson(lam)
    nz = np.nonzero(counts)
    reps = counts[nz]
    r_i, d_i, h_i = (np.repeat(ix, reps) for ix in nz)
    wd = wdays[d_i]
    a, b = lo[r_i, wd, h_i], hi[r_i, wd, h_i]
    day0 = t0 + d_i * DAY
    login = np.minimum(day0 + a + rng.random(len(a)) * (b - a), day0 + b - 1e-3)
    s = model.session_minutes
    length = np.clip(rng.lognormal(np.log(s.median), s.sigma, len(a)), s.lo, s.hi) * 60.0
    closing = np.stack([close_after(room.hours) for room in rooms])[r_i, wd]
    return r_i, login, np.minimum(login + length, day0 + closing)


def _timetable(
    model: OwnerModel, room: Room, rng: np.random.Generator
) -> list[tuple[int, float, float]]:
    """A term's weekly slots (weekday, start, end seconds of day) that do not overlap."""
    busy = np.zeros((5, 24), dtype=bool)
    slots: list[tuple[int, float, float]] = []
    for cell in rng.permutation(5 * 24):
        if len(slots) >= room.spec.classes:
            break
        wd, h = divmod(int(cell), 24)
        dur = int(rng.choice(model.class_hours))
        span = room.hours[wd]
        if (
            span is None
            or h < CLASS_DAY[0]
            or h + dur > CLASS_DAY[1]
            or busy[wd, h : h + dur].any()
        ):
            continue
        if h * HOUR < span[0] or (h + dur) * HOUR > span[1]:
            continue
        busy[wd, h : h + dur] = True
        slots.append((wd, h * HOUR, (h + dur) * HOUR))
    return slots


def _classes(
    model: OwnerModel,
    rooms: list[Room],
    t0: float,
    kinds: np.ndarray,
    wdays: np.ndarray,
    terms: list[tuple[int, int]],
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Class-goer (room, login, wanted logout) arrays: each term has its own timetable per room."""
    room_i, starts, ends = [], [], []
    for first, last in terms:
        days = np.arange(max(first, 0), min(last + 1, len(kinds)))
        days = days[(kinds[days] == TERM) & (wdays[days] < 5)]
        for r, room in enumerate(rooms):
            for wd, a, b in _timetable(model, room, rng) if room.spec.classes else []:
                on = days[wdays[days] == wd]
                room_i.append(np.full(len(on), r))
                starts.append(t0 + on * DAY + a)
                ends.append(t0 + on * DAY + b)
    if not starts:
        return np.empty(0, dtype=int), np.empty(0), np.empty(0)
    r_c, s_c, e_c = (np.concatenate(x) for x in (room_i, starts, ends))
    room_n = np.asarray([room.n for room in rooms], dtype=np.int64)
    sizes = rng.binomial(room_n[r_c.astype(np.int64)], model.class_attendance)
    r_i, start, end = (np.repeat(x, sizes) for x in (r_c, s_c, e_c))
    login = start + rng.random(len(start)) * model.class_late_minutes * 60.0
    leave = rng.exponential(max(model.class_early_leave_minutes, 1e-9) * 60.0, len(start))
    return r_i, login, np.clip(end - leave, login + 60.0, end)


def _assign(login: list[float], logout: list[float], pick: list[float], n: int) -> list[int]:
    """Give each arrival (in login order) a random free PC of an ``n``-PC room, or -1 if full."""
    free = list(range(n))
    busy: list[tuple[float, int]] = []
    out = [-1] * len(login)
    for i, t in enumerate(login):
        while busy and busy[0][0] <= t:
            free.append(heapq.heappop(busy)[1])
        if free:
            j = int(pick[i] * len(free))
            m = free[j]
            free[j] = free[-1]
            free.pop()
            heapq.heappush(busy, (logout[i], m))
            out[i] = m
    return out


def owner_sessions(
    cfg: CampusConfig,
    rooms: list[Room],
    t0: float,
    kinds: np.ndarray,
    wdays: np.ndarray,
    terms: list[tuple[int, int]],
    base: float,
    rng: np.random.Generator,
) -> tuple[OwnerSessions, int]:
    """All owner sessions sorted by login, and how many arrivals found their room full."""
    walk = _walkins(cfg.owners, rooms, t0, kinds, wdays, base, rng)
    cls = _classes(cfg.owners, rooms, t0, kinds, wdays, terms, rng)
    room_i, login, logout = (np.concatenate([w, c]) for w, c in zip(walk, cls, strict=True))
    order = np.lexsort((login, room_i))
    room_i, login, logout = room_i[order], login[order], logout[order]
    pick = rng.random(len(login))
    machine = np.empty(len(login), dtype=np.int64)
    bounds = np.searchsorted(room_i, np.arange(len(rooms) + 1))
    for r, room in enumerate(rooms):
        a, b = bounds[r], bounds[r + 1]
        local = _assign(login[a:b].tolist(), logout[a:b].tolist(), pick[a:b].tolist(), room.n)
        got = np.asarray(local, dtype=np.int64)
        machine[a:b] = np.where(got >= 0, got + room.first, -1)
    keep = machine >= 0
    login, logout, machine = login[keep], logout[keep], machine[keep]
    order = np.argsort(login, kind="stable")
    sessions = OwnerSessions(login[order], machine[order].astype(np.int32), logout[order])
    return sessions, int(np.count_nonzero(~keep))
