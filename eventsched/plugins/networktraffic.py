"""NetworkTraffic (PreScore + Score): prefer nodes that received less network traffic.

The idea is the scheduler-plugins "NetworkTraffic" tutorial plugin: ask
Prometheus how many bytes each node's network interface received over a
window, score busy nodes lower. Unlike the tutorial (one query per node per
pod), this plugin asks once for the whole vector of nodes, keeps the answer
for `cacheSeconds`, and never lets Prometheus decide whether a pod can be
scheduled:

- PreScore fetches (or reuses) the samples. Prometheus down, answering with
  an error, or slower than `timeoutSeconds` makes PreScore return Skip, so
  the runtime leaves this plugin out of that cycle's scores; after a failure
  it waits `cacheSeconds` before asking again, so a sick Prometheus is not
  hammered once per pod.
- Score's raw value is the node's traffic in bytes/s (rounded down); a node
  without a sample counts as the busiest node that has one (we know nothing
  good about it, so it is not preferred over measured quiet nodes).
- NormalizeScore is min-max, reversed: the quietest node gets 100, the
  busiest 0; when every node has the same traffic they all get 100.

The log is the truth: every answer actually fetched (samples, or the failure)
is written with `state.record_input(name, "traffic", ...)` when it is read,
not on every attempt that reuses it. While replaying, the plugin never calls
Prometheus: it takes the latest recorded value, so replay makes the same
Skip-or-score decision the live run made.
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import structlog

from eventsched.framework import (
    LEGACY_FEATURES,
    MAX_NODE_SCORE,
    Code,
    CycleState,
    Features,
    Handle,
    PluginArgsError,
    Status,
    check_args,
    min_max_normalize,
)
from eventsched.model import Indexes, IntArray, NodeTable, Pod

log = structlog.get_logger(__name__)

NAME = "NetworkTraffic"
INPUT_KEY = "traffic"
_STATE_KEY = "PreScoreNetworkTraffic"

#: `$device` is `deviceName`, `$range` the window as a PromQL duration ("300s"),
#: `$seconds` the window as a bare number of seconds. The result must be an
#: instant vector with one sample per node, labelled with the node's name
#: (label `nodeLabel`) exactly as Kubernetes names the node.
DEFAULT_QUERY = (
    "sum by (nodename) ("
    'rate(node_network_receive_bytes_total{device="$device"}[$range])'
    " * on (instance) group_left (nodename) node_uname_info"
    ")"
)
PLACEHOLDERS = ("device", "range", "seconds")

DEFAULTS: dict[str, Any] = {
    "deviceName": "eth0",
    "timeRange": 300,
    "timeoutSeconds": 2,
    "cacheSeconds": 30,
    "query": DEFAULT_QUERY,
    "nodeLabel": "nodename",
}
KNOWN = (
    "address",
    "deviceName",
    "timeRange",
    "timeoutSeconds",
    "cacheSeconds",
    "query",
    "nodeLabel",
)

#: Warnings about a failing Prometheus are logged at most this often (or once per
#: cacheSeconds, when longer): one per failed fetch would be one per pod at cacheSeconds 0.
WARN_EVERY_SECONDS = 60.0
#: Raw scores are capped here (1 PB/s): far above any NIC, far below int64 / 100.
MAX_BYTES_PER_SECOND = 1e15
#: A failed fetch is not retried sooner than this, even with cacheSeconds 0.
MIN_RETRY_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class Traffic:
    """One answer from Prometheus (or from the log, when replaying)."""

    samples: Mapping[str, float]  # node name -> received bytes/s
    error: str | None = None

    @property
    def usable(self) -> bool:
        return self.error is None and bool(self.samples)

    def why_not(self) -> str:
        return self.error or "the query returned no samples for any node"


def _positive_int(args: Mapping[str, Any], key: str) -> int:
    value = args[key]
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        shown = f'"{value}"' if isinstance(value, str) else repr(value)
        raise PluginArgsError(key, f"must be a positive integer (got {shown})")
    return value


def _seconds(args: Mapping[str, Any], key: str, *, allow_zero: bool) -> float:
    value = args[key]
    bad = isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value)
    if bad or value < 0 or (value == 0 and not allow_zero):
        shown = f'"{value}"' if isinstance(value, str) else repr(value)
        kind = "a non-negative number" if allow_zero else "a positive number"
        raise PluginArgsError(key, f"must be {kind} of seconds (got {shown})")
    return float(value)


def _label_safe(args: Mapping[str, Any], key: str) -> str:
    """A value pasted inside a PromQL string literal or used as a label name."""
    value = args[key]
    if not isinstance(value, str) or not value:
        raise PluginArgsError(key, f"must be a non-empty string (got {value!r})")
    if any(c in value for c in '"\\\n{}'):
        raise PluginArgsError(
            key, f"must not contain quotes, backslashes or braces (got {value!r})"
        )
    return value


def _parse_samples(result: Any, label: str) -> tuple[dict[str, float], int]:
    """The instant vector as {node: bytes/s}; odd entries are dropped and counted, never fatal.

    Dropped: not a {metric, value} pair, no `label`, a value that is not a
    finite non-negative number (Prometheus sends "NaN" and "+Inf" as strings).
    Two series for one node (an overridden query without `sum by`) add up.
    """
    samples: dict[str, float] = {}
    dropped = 0
    for item in result if isinstance(result, list) else ():
        try:
            node = item["metric"][label]
            value = float(item["value"][1])
        except (KeyError, IndexError, TypeError, ValueError):
            dropped += 1
            continue
        if not isinstance(node, str) or not node or not math.isfinite(value) or value < 0:
            dropped += 1
            continue
        samples[node] = samples.get(node, 0.0) + value
    return samples, dropped


class NetworkTraffic:
    """Score nodes lower the more bytes/s they received over `timeRange` seconds."""

    name = NAME

    def __init__(
        self, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> None:
        check_args(self.name, args, KNOWN)
        merged = {**DEFAULTS, **args}
        address = merged.get("address")
        if not isinstance(address, str) or not address.strip():
            raise PluginArgsError(
                "address", "required: the Prometheus URL, e.g. http://prometheus.monitoring:9090"
            )
        if not address.startswith(("http://", "https://")):
            raise PluginArgsError(
                "address", f"must be an http:// or https:// URL (got {address!r})"
            )
        self.address = address.rstrip("/")
        self.device = _label_safe(merged, "deviceName")
        self.node_label = _label_safe(merged, "nodeLabel")
        self.time_range = _positive_int(merged, "timeRange")
        self.timeout = _seconds(merged, "timeoutSeconds", allow_zero=False)
        self.cache_seconds = _seconds(merged, "cacheSeconds", allow_zero=True)
        template = merged["query"]
        if not isinstance(template, str) or not template.strip():
            raise PluginArgsError(
                "query", f"must be a non-empty PromQL template (got {template!r})"
            )
        try:
            self.query = string.Template(template).substitute(
                device=self.device, range=f"{self.time_range}s", seconds=str(self.time_range)
            )
        except (KeyError, ValueError) as exc:
            raise PluginArgsError(
                "query",
                f"unknown or malformed placeholder {exc}; the template may use "
                + ", ".join(f"${p}" for p in PLACEHOLDERS)
                + " (write $$ for a literal $)",
            ) from None
        self.handle = handle
        self._client: Any = None
        self._cached: Traffic | None = None
        self._next_fetch = -math.inf  # handle.monotonic() after which the cache is stale
        self._last_warning = -math.inf
        self._failing = False
        # The traffic column of the last (answer, table, node generation) seen.
        self._column_for: tuple[Traffic, NodeTable, int] | None = None
        self._column: np.ndarray = np.zeros(0)

    # -- fetching ---------------------------------------------------------------

    def _prometheus(self) -> Any:
        """The client, built on first use: no connection is made at configuration time."""
        if self._client is None:
            from prometheus_api_client import PrometheusConnect
            from urllib3.util.retry import Retry

            # The library retries 3 times with backoff by default: that would stall
            # the scheduling cycle far beyond timeoutSeconds. One try, then Skip.
            self._client = PrometheusConnect(
                url=self.address,
                disable_ssl=False,
                retry=Retry(
                    total=0, connect=0, read=0, redirect=0, status=0, raise_on_status=False
                ),
                timeout=self.timeout,
            )
        return self._client

    def _fetch(self) -> Traffic:
        try:
            result = self._prometheus().custom_query(self.query, timeout=self.timeout)
        except Exception as exc:  # connection refused, timeout, HTTP error, bad JSON: all Skip
            return Traffic({}, self._why(exc))
        if not isinstance(result, list):
            return Traffic(
                {}, f"unexpected answer: result is {type(result).__name__}, not a vector"
            )
        samples, dropped = _parse_samples(result, self.node_label)
        if dropped:
            log.info(
                "networktraffic dropped samples",
                plugin=self.name,
                dropped=dropped,
                kept=len(samples),
                hint=f"each sample needs a {self.node_label!r} label and a finite value",
            )
        return Traffic(samples)

    def _why(self, exc: Exception) -> str:
        """One short line for the log and the warning; requests' messages embed the whole URL."""
        text = str(exc)
        if "timed out" in text or "Timeout" in type(exc).__name__:
            return f"Prometheus at {self.address} did not answer within {self.timeout:g}s"
        if "Connection" in type(exc).__name__:
            errno = re.search(r"\[Errno -?\d+\] [^'\")]+", text)
            detail = errno.group(0) if errno else type(exc).__name__
            return f"cannot connect to Prometheus at {self.address}: {detail}"
        return f"Prometheus at {self.address}: {type(exc).__name__}: {text}"[:300]

    def traffic(self, state: CycleState) -> Traffic | None:
        """This cycle's samples: the cache, a fresh fetch, or (replaying) the log's value."""
        if self.handle.replaying:
            value = self.handle.recorded_input(self.name, INPUT_KEY)
            if value is None:
                return None
            return _from_record(value)
        now = self.handle.monotonic()
        if self._cached is not None and now < self._next_fetch:
            return self._cached
        fetched = self._fetch()
        # Stamped after the query returns: a slow answer must not eat into its own cache life.
        now = self.handle.monotonic()
        record: dict[str, Any] = {
            "query": self.query,
            "fetchedAt": self.handle.clock(),
            "samples": dict(fetched.samples),
        }
        if fetched.error is not None:
            record["error"] = fetched.error
        state.record_input(self.name, INPUT_KEY, record)
        self._cached = fetched
        if fetched.usable:
            self._next_fetch = now + self.cache_seconds
            if self._failing:
                log.info("networktraffic: Prometheus answers again", plugin=self.name)
            self._failing = False
        else:
            self._next_fetch = now + max(self.cache_seconds, MIN_RETRY_SECONDS)
            self._failing = True
            if now - self._last_warning >= max(self.cache_seconds, WARN_EVERY_SECONDS):
                self._last_warning = now
                log.warning(
                    "networktraffic: no traffic samples, scoring without this plugin",
                    plugin=self.name,
                    address=self.address,
                    reason=fetched.why_not(),
                    retry_in_seconds=round(self._next_fetch - now, 3),
                )
        return fetched

    # -- PreScore / Score -------------------------------------------------------

    def pre_score(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> Status | None:
        traffic = self.traffic(state)
        if traffic is None:
            return Status(Code.SKIP, ("no traffic samples recorded before this attempt",))
        if not traffic.usable:
            return Status(Code.SKIP, (f"no traffic samples: {traffic.why_not()}",))
        state.write(_STATE_KEY, traffic)
        return None

    def score_batch(self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes) -> IntArray:
        traffic: Traffic | None = state.get(_STATE_KEY)
        if traffic is None:  # enabled at score without preScore: fetch here, neutral if none
            traffic = self.traffic(state)
        if traffic is None or not traffic.usable:
            return np.zeros(len(rows), dtype=np.int64)
        values = self._traffic_column(traffic, table)[rows]
        known = ~np.isnan(values)
        if not known.any():
            return np.zeros(len(rows), dtype=np.int64)
        values = np.where(known, values, values[known].max())
        # "1e300" is a finite number Prometheus may send: cap it so int64 and the
        # normalization's (high - raw) * 100 cannot overflow. Still the busiest.
        return np.floor(np.minimum(values, MAX_BYTES_PER_SECOND)).astype(np.int64)

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: IntArray, rows: Indexes
    ) -> IntArray:
        return min_max_normalize(scores, reverse=True, when_equal=MAX_NODE_SCORE)

    def _traffic_column(self, traffic: Traffic, table: NodeTable) -> np.ndarray:
        """Bytes/s per table row (NaN: no sample), built once per answer and node set."""
        seen = self._column_for
        if (
            seen is None
            or seen[0] is not traffic
            or seen[1] is not table
            or seen[2] != table.node_generation
        ):
            samples = traffic.samples
            self._column = np.fromiter(
                (samples.get(name, math.nan) for name in table.names),
                dtype=np.float64,
                count=len(table.names),
            )
            self._column_for = (traffic, table, table.node_generation)
        return self._column


def _from_record(value: Mapping[str, Any]) -> Traffic:
    """A recorded input back into samples; a malformed record is a failed fetch, not a crash."""
    error = value.get("error")
    raw = value.get("samples")
    samples: dict[str, float] = {}
    if isinstance(raw, Mapping):
        for node, v in raw.items():
            try:
                f = float(v)
            except (TypeError, ValueError):
                continue
            if isinstance(node, str) and math.isfinite(f) and f >= 0:
                samples[node] = f
    return Traffic(samples, str(error) if error is not None else None)
