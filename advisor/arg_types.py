"""Argument types for the numbers commands take (scales, days, seeds, workers, hours, percents)
and for their output directories, and the check of their input files: a bad value is a one-line
error naming the option, not a traceback from deep inside a replay (or after it, when its
outputs are written)."""

from __future__ import annotations

import argparse
import contextlib
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def number(text: str) -> float:
    """A finite number (``--epsilons``, ``--sigmas``: the policy checks its own range)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}")
    return value


def _number_that(text: str, holds: Callable[[float], bool], said: str) -> float:
    """``text`` as a number for which ``holds`` (a word that is no number never does)."""
    try:
        value = number(text)
    except argparse.ArgumentTypeError:
        value = math.nan
    if not holds(value):
        raise argparse.ArgumentTypeError(f"must be {said}, got {text!r}")
    return value


def positive_number(text: str) -> float:
    """A number above 0 (``--scale``: a pool shrunk to nothing has nothing to replay)."""
    return _number_that(text, lambda v: v > 0, "a number above 0")


def fraction(text: str) -> float:
    """A number from 0 to 1 (``--balance``)."""
    return _number_that(text, lambda v: 0.0 <= v <= 1.0, "a number from 0 to 1")


def non_negative(text: str) -> float:
    """A number, 0 or more (``--target-kl``, ``--entropy``: 0 turns them off)."""
    return _number_that(text, lambda v: v >= 0, "a number from 0")


def duration_text(text: str) -> str:
    """A duration as the configuration writes one (``90s``, ``6h``), passed on as it is."""
    from advisor.daemon.fields import ConfigError, duration

    try:
        duration(text, "it")
    except ConfigError:
        raise argparse.ArgumentTypeError(
            f"must be seconds or a duration like 90s, 5m, 1h, 2d, got {text!r}"
        ) from None
    return text


def count(text: str) -> int:
    """A whole number from 1 (``--days``, ``--workers``)."""
    if not (text.isdigit() and int(text) >= 1):
        raise argparse.ArgumentTypeError(f"must be a whole number from 1, got {text!r}")
    return int(text)


def whole_number(text: str) -> int:
    """A whole number, 0 or more (``--seed``)."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"must be a whole number from 0, got {text!r}")
    return int(text)


def hours_as_seconds(text: str) -> float | None:
    """``--wait-bound``: positive hours, as seconds; 0 or none: no bound (as the config's 0)."""
    if text.strip().lower() in ("none", "0"):
        return None
    try:
        return positive_number(text) * 3600.0
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"must be a positive number of hours, or 0 or none for no bound, got {text!r}"
        ) from None


def hours_from_zero(text: str) -> float:
    """``experiment shapes --wait-bound``: hours, 0 or more (0: no bound, as the papers ran)."""
    try:
        value = number(text)
    except argparse.ArgumentTypeError:
        value = -1.0
    if not value >= 0:
        raise argparse.ArgumentTypeError(
            f"must be a number of hours from 0 (0: no bound), got {text!r}"
        )
    return value


def hour_or_none(text: str) -> float | None:
    """``--reboot-hour``: an hour of the day, 0 to below 24, or none."""
    if text.strip().lower() == "none":
        return None
    try:
        value = number(text)
    except argparse.ArgumentTypeError:
        value = math.nan
    if not 0.0 <= value < 24.0:
        raise argparse.ArgumentTypeError(
            f"must be an hour of the day from 0 to below 24, or none, got {text!r}"
        )
    return value


def whole_percent(text: str) -> int | None:
    """``--control-percent``: a whole percent 1..99 (the expressions compare whole buckets);
    0: no control group (as ``control.percent: 0``)."""
    if text.strip() == "0":
        return None
    if not (text.isdigit() and 1 <= int(text) <= 99):
        raise argparse.ArgumentTypeError(
            f"must be a whole percent from 1 to 99, or 0 for none, got {text!r}"
        )
    return int(text)


def output_directory(text: str) -> Path:
    """``--out``: a directory to be made when missing. A place that cannot be written (a file in
    the way, no permission, a read-only file system) is refused here, before the work whose
    outputs would then be lost; a directory made to try it is removed again, so a command that
    fails later leaves nothing behind."""
    if not text:
        raise argparse.ArgumentTypeError("must name a directory, got ''")
    path = Path(text)
    missing = []
    for part in (path, *path.parents):
        if part.exists():
            if not part.is_dir():
                raise argparse.ArgumentTypeError(
                    f"{part} is a file, not a directory; name a directory (made if missing)"
                )
            break
        missing.append(part)
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".htcondor-advisor-probe-{os.getpid()}"
        probe.touch()
        probe.unlink()
    except OSError as error:
        raise argparse.ArgumentTypeError(
            f"cannot write in {path} ({error.strerror}); name a directory you can write"
        ) from None
    finally:
        for part in missing:  # the deepest first
            with contextlib.suppress(OSError):
                part.rmdir()
    return path


def comma_list(item: Callable[[str], T]) -> Callable[[str], list[T]]:
    """A comma-separated list of ``item`` (``--scales 1,0.25``, ``--seeds 1,2``)."""

    def parse(text: str) -> list[T]:
        try:
            return [item(part.strip()) for part in text.split(",")]
        except argparse.ArgumentTypeError as error:
            raise argparse.ArgumentTypeError(f"{error} (in {text!r})") from None

    parse.__name__ = f"list of {item.__name__}"
    return parse


OPEN_ERRORS = {
    FileNotFoundError: ("no such file", "check the path"),
    IsADirectoryError: ("is a directory", "name a file inside it"),
    PermissionError: ("permission denied", "make it readable for this user"),
}


def unreadable(path: Path) -> str | None:
    """What stops an input file from being read, and the fix (None: it opens). Checked before
    any work: a reader deep inside would raise an ``OSError`` naming neither option nor fix."""
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        what, fix = OPEN_ERRORS.get(type(exc), (exc.strerror or str(exc), "check the file"))
        if isinstance(exc, FileNotFoundError) and not path.is_absolute():
            fix += f" (relative to {Path.cwd()})"
        return f"{what}: {path}; {fix}"
    return None
