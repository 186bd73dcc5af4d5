"""The process' own families, as client_golang's process collector names them.

`process_cpu_seconds_total`, `process_resident_memory_bytes`,
`process_virtual_memory_bytes`, `process_open_fds`, `process_max_fds`,
`process_start_time_seconds`: read from /proc at each scrape by prometheus_client's
collector, which has no `process_virtual_memory_max_bytes` (docs/metrics.md).
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, ProcessCollector


def register_process_collector(registry: CollectorRegistry) -> None:
    ProcessCollector(registry=registry)
