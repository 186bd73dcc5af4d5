"""What the pages of `eventsched ui` share: their settings, and the log read through a
read-only engine with the chain check, the shared fold and the what-if jobs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import structlog

from eventsched._httpguard import Guard
from eventsched.audit.readonly import read_only_engine
from eventsched.events.errors import EventStoreError
from eventsched.events.logreader import LogReader
from eventsched.events.slices import SliceOrigin, read_origin
from eventsched.ui import whatif
from eventsched.ui.access import PodReviewer
from eventsched.ui.chain import ChainChecker
from eventsched.ui.folds import SharedFold

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class Access:
    """Who may read the pages: requests authenticated by `guard`, each namespace's pods
    shown as `reviewer` allows; both None: anyone, everything (`--insecure-local`)."""

    guard: Guard | None
    reviewer: PodReviewer | None

    @property
    def open(self) -> bool:
        return self.guard is None or self.reviewer is None


#: `--insecure-local`: no authentication, everything visible.
INSECURE_LOCAL = Access(None, None)


@dataclass(frozen=True, slots=True)
class Settings:
    url: str
    configs: Path | None = None
    #: Seconds between checks of what was appended to the hash chain.
    chain_interval: float = 10.0
    #: Who may read what; None is refused by create_app: give INSECURE_LOCAL or a guard.
    access: Access | None = None


class UI:
    """The state the pages share: the log read through a read-only engine, the chain
    check, the what-if jobs."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.engine = read_only_engine(settings.url)
        self.reader = LogReader(self.engine)
        self.chain = ChainChecker(self.reader, settings.chain_interval)
        self.jobs = whatif.Jobs(self.reader, self.engine)
        self.folds = SharedFold(self.reader)
        #: Where the log came from, when it is a slice (`eventsched export`): every page says so.
        self.origin = self._origin()

    def _origin(self) -> SliceOrigin | None:
        try:
            return read_origin(self.reader)
        except EventStoreError as exc:  # the database is down: the pages will say so
            log.warning("could not read whether the log is a slice", error=str(exc))
            return None
