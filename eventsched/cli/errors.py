"""Turn the errors a user can fix into one line that says what and how."""

from __future__ import annotations

import re

from sqlalchemy.exc import ArgumentError, NoSuchModuleError, OperationalError

from eventsched.audit import PodNotFound
from eventsched.cli.database import DatabaseURLError
from eventsched.cli.gctuning import GCSettingError
from eventsched.cli.secureserving import ServingFlagError
from eventsched.cli.serve import AddressError
from eventsched.cluster.kube import KubeConfigError
from eventsched.cluster.kube.version import ServerVersionError
from eventsched.config.featuregates import VersionError
from eventsched.config.file import ConfigError
from eventsched.events import EventStoreError, SchemaOutdatedError
from eventsched.framework import PluginArgsError, ProfileError, UnknownPluginError
from eventsched.model import ManifestError


def friendly_error(exc: BaseException) -> str | None:
    """The message to print for an error the user can act on, on one line; None for a bug."""
    message = _friendly(exc)
    return None if message is None else one_line(message)


def one_line(text: str) -> str:
    """`text` on one line: line breaks and tabs as spaces, other control characters escaped."""
    if text.isprintable():
        return text
    text = re.sub(r"[\r\n\t]+", " ", text.strip())
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _friendly(exc: BaseException) -> str | None:
    if isinstance(
        exc, ManifestError | SchemaOutdatedError | EventStoreError | PodNotFound | DatabaseURLError
    ):
        return str(exc)
    if isinstance(
        exc,
        ProfileError
        | PluginArgsError
        | UnknownPluginError
        | ConfigError
        | VersionError
        | ServerVersionError
        | KubeConfigError
        | AddressError
        | ServingFlagError
        | GCSettingError,
    ):
        return str(exc)
    if isinstance(exc, ArgumentError | NoSuchModuleError):
        return (
            f"bad database URL: {exc}; use e.g. sqlite:///eventsched.db or "
            "postgresql://USER@HOST:5432/DB (--db or EVENTSCHED_DATABASE_URL)"
        )
    if isinstance(exc, OperationalError):
        return f"database error: {exc.orig}; check --db / EVENTSCHED_DATABASE_URL and that the database is running"
    if isinstance(exc, FileNotFoundError):
        return f"{exc.filename}: {exc.strerror or 'no such file or directory'}"
    return None
