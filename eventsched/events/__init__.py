"""The event log: every input and decision of the scheduler, append-only, hash-chained.

Import from here; the submodules are the implementation. This package may
import only `eventsched.model` and third-party libraries (the import-linter
contracts in pyproject.toml), so everything above it can depend on it.

This module imports the store, which appends. The read paths (audit, ui, and
what they import) import from the submodules instead: `reader` (EventReader),
`logreader` (the log opened only to read), `record`, `retention`, `vocabulary`,
... (an import-linter contract keeps them from the appending modules).
"""

from eventsched.events.canonical import (
    Encoded,
    canonical_json,
    digest,
    encode,
    normalize,
    plain_digest,
)
from eventsched.events.chain import ChainPoint, ChainReport
from eventsched.events.engine import create_engine, display_url
from eventsched.events.errors import (
    AppendInDoubtError,
    DatabaseUnavailableError,
    EventStoreError,
    LogTailLostError,
    SchemaOutdatedError,
)
from eventsched.events.logreader import PAGE_SIZE, LogReader
from eventsched.events.migrate import (
    check_schema,
    current_revision,
    downgrade,
    head_revision,
    migrations_dir,
    upgrade,
)
from eventsched.events.projections import (
    SNAPSHOT_NAME,
    Backoff,
    Placement,
    Projections,
    Reservation,
    identity_of,
    placement_change,
    rebuild,
    rebuild_counted,
)
from eventsched.events.reader import ChosenVictim, EventReader
from eventsched.events.record import EventRecord, StoredEvent
from eventsched.events.retention import LogBase, PrunePlan, read_base
from eventsched.events.store import EventStore, save_snapshot
from eventsched.events.vocabulary import (
    DECISION_KINDS,
    INPUT_KINDS,
    KINDS,
    LISTED,
    check_kind,
    is_listed,
    is_process_start,
    scheduler_started,
    starts_empty_view,
    starts_relist,
)

__all__ = [
    "DECISION_KINDS",
    "INPUT_KINDS",
    "KINDS",
    "LISTED",
    "PAGE_SIZE",
    "SNAPSHOT_NAME",
    "AppendInDoubtError",
    "Backoff",
    "ChainPoint",
    "ChainReport",
    "ChosenVictim",
    "DatabaseUnavailableError",
    "Encoded",
    "EventReader",
    "EventRecord",
    "EventStore",
    "EventStoreError",
    "LogBase",
    "LogReader",
    "LogTailLostError",
    "Placement",
    "Projections",
    "PrunePlan",
    "Reservation",
    "SchemaOutdatedError",
    "StoredEvent",
    "canonical_json",
    "check_kind",
    "check_schema",
    "create_engine",
    "current_revision",
    "digest",
    "display_url",
    "downgrade",
    "encode",
    "head_revision",
    "identity_of",
    "is_listed",
    "is_process_start",
    "migrations_dir",
    "normalize",
    "placement_change",
    "plain_digest",
    "read_base",
    "rebuild",
    "rebuild_counted",
    "save_snapshot",
    "scheduler_started",
    "starts_empty_view",
    "starts_relist",
    "upgrade",
]
