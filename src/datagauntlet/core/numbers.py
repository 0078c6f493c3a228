"""The argparse type of every numeric command-line option (the CLI's and the envs' own
commands): an int, or a finite float, within a range; inf, nan and overflows such as 1e309 are
refused with one line naming the range, never passed on to a timer or setrlimit."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any

# Upper bounds no real use comes near; past them a number is a mistake (or an attack on a
# setrlimit or a timer that would overflow), refused like any other bad value.
MAX_SECONDS = 1e6
MAX_COUNT = 1_000_000


def number(
    kind: type = float,
    low: float | None = None,
    high: float | None = None,
    above: float | None = None,
) -> Callable[[str], Any]:
    """An argparse type for every numeric option: an int or a finite float (never inf, nan or
    an overflow such as 1e309) within [low, high], or > above; the error names the range."""

    def parse(text: str) -> Any:
        value = kind(text)  # a ValueError: argparse says "invalid int value: 'x'"
        if kind is float and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
        if above is not None and not value > above:
            raise argparse.ArgumentTypeError(f"must be > {above:g}, got {text}")
        if low is not None and value < low:
            raise argparse.ArgumentTypeError(f"must be >= {low:g}, got {text}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"must be at most {high:,g}, got {text}")
        return value

    parse.__name__ = kind.__name__
    return parse


def count(low: int = 1, high: int = MAX_COUNT) -> Callable[[str], Any]:
    return number(int, low, high)


def seconds(high: float = MAX_SECONDS) -> Callable[[str], Any]:
    return number(float, high=high, above=0)
