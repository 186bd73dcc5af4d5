"""How often the process runs Python's cyclic garbage collector.

CPython collects its youngest generation after every 700 net allocations of
container objects, and the whole heap (every pod, node and event the
scheduler holds) after every 100 young collections once the heap has grown
by a quarter. A scheduler holding tens of thousands of pods allocates
millions of short-lived objects per minute, nearly all freed by reference
counting, so those collections find almost nothing and cost a great deal:
in `eventsched bench --workload PreemptionAsync` (5,000 nodes, 25,000 pods)
the defaults ran 39 full collections, 5.5 s of a 30 s run. Collecting the
young generation after 50,000 allocations instead leaves no full
collection in that run, with the same peak memory: reference counting still
frees everything without cycles at once, and what cycles there are wait a
little longer.

The eventsched process sets this, not the library: a program that embeds
the scheduler keeps its own collector settings.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
from collections.abc import Iterator

from eventsched.cli.arguments import count

#: Allocations between young-generation collections (CPython's default is 700).
DEFAULT_THRESHOLD = 50_000
ENVIRONMENT = "EVENTSCHED_GC_THRESHOLD"


class GCSettingError(ValueError):
    """EVENTSCHED_GC_THRESHOLD is not a whole number of 0 or more."""


def collector_threshold(flag: int | None) -> int:
    """The young-generation threshold: `--gc-threshold`, else the environment, else the default."""
    if flag is not None:
        return flag
    text = os.environ.get(ENVIRONMENT, "").strip()
    if not text:
        return DEFAULT_THRESHOLD
    try:
        return count(0)(text)  # the --gc-threshold flag's own parser
    except argparse.ArgumentTypeError:
        raise GCSettingError(
            f"{ENVIRONMENT}={text!r}: must be a whole number of 0 or more "
            f"(allocations between garbage collections; 700 is CPython's default, "
            f"0 turns automatic collection off; unset it for {DEFAULT_THRESHOLD})"
        ) from None


def set_collector_threshold(threshold: int) -> None:
    """Collect the young generation after `threshold` allocations; the older ones keep their ratios."""
    _, middle, oldest = gc.get_threshold()
    gc.set_threshold(threshold, middle, oldest)


def resume_collection(freeze: bool = False) -> None:
    """Automatic collection on again (the command line pauses it while modules load).

    `freeze`: what exists now lives as long as the process (the modules, the
    configuration, the view a start built), so it is moved out of the collector's
    reach first (`gc.freeze`). Otherwise the first collection after a start walks all
    of it: about 0.12 s at 5,000 nodes and 10,000 pods, just before the first decision,
    and every full collection after that again. Frozen objects are still freed when
    nothing refers to them; only cycles among them would stay.
    """
    if freeze:
        gc.freeze()
    gc.enable()


@contextlib.contextmanager
def collection_paused() -> Iterator[None]:
    """No automatic collection while the block runs, then as before.

    A start builds every listed node and pod, and nearly all of it survives:
    collections during it find nothing (at 5,000 nodes and 10,000 pods, nine of
    them cost about 60 ms of a restart's path to its first decision).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
