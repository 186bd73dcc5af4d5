"""argparse pieces every command shares: one-line usage errors, counts that must be whole numbers."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import NoReturn


class Parser(argparse.ArgumentParser):
    """Usage errors as one line that names the problem and where help is, exit code 2."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(2)


def count(minimum: int) -> Callable[[str], int]:
    """An argparse type: a whole number of at least `minimum`."""

    def parse(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be {minimum} or more, got {value}")
        return value

    return parse


def cpu_list(text: str) -> frozenset[int]:
    """An argparse type: CPUs as `taskset -c` takes them ("0", "0,1", "0-3"), each one this
    process may run on."""
    cpus: set[int] = set()
    try:
        for part in text.split(","):
            first, _, last = part.strip().partition("-")
            cpus.update(range(int(first), int(last or first) + 1))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be CPU numbers such as 0 or 0,1 or 0-3, got {text!r}"
        ) from None
    allowed = os.sched_getaffinity(0)
    if not cpus or not cpus <= allowed:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not among the CPUs this machine lets us use "
            f"({','.join(map(str, sorted(allowed)))})"
        )
    return frozenset(cpus)


def seconds(text: str) -> float:
    """An argparse type: a number of seconds, 0 or more."""
    try:
        value = float(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be 0 or a positive number of seconds, got {text}")
    return value
