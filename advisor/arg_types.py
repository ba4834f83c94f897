"""Argument types for the numbers commands take (scales, days, seeds, workers, hours, percents):
a bad value is argparse's one-line usage error naming the option, not a traceback from deep inside
a replay."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def positive_number(text: str) -> float:
    """A number above 0 (``--scale``: a pool shrunk to nothing has nothing to replay)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number above 0, got {text!r}")
    return value


def count(text: str) -> int:
    """A whole number from 1 (``--days``, ``--workers``)."""
    if not (text.isdigit() and int(text) >= 1):
        raise argparse.ArgumentTypeError(f"must be a whole number from 1, got {text!r}")
    return int(text)


def whole_number(text: str) -> int:
    """A whole number, 0 or more (``--seed``)."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}")
    return int(text)


def hours_as_seconds(text: str) -> float:
    """``--wait-bound``: positive hours, as seconds."""
    try:
        return positive_number(text) * 3600.0
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"must be a positive number of hours, got {text!r}"
        ) from None


def whole_percent(text: str) -> int:
    """``--control-percent``: a whole percent 1..99 (the expressions compare whole buckets)."""
    if not (text.isdigit() and 1 <= int(text) <= 99):
        raise argparse.ArgumentTypeError(f"must be a whole percent from 1 to 99, got {text!r}")
    return int(text)


def comma_list(item: Callable[[str], T]) -> Callable[[str], list[T]]:
    """A comma-separated list of ``item`` (``--scales 1,0.25``, ``--seeds 1,2``)."""

    def parse(text: str) -> list[T]:
        try:
            return [item(part.strip()) for part in text.split(",")]
        except argparse.ArgumentTypeError as error:
            raise argparse.ArgumentTypeError(f"{error} (in {text!r})") from None

    parse.__name__ = f"list of {item.__name__}"
    return parse
