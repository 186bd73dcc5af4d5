"""Reading a configuration document's fields: typed access that names the field's path
(`FieldReader`), Go's duration syntax, and the errors (`ConfigError`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, overload

from eventsched.config.types import ConfigError
from eventsched.framework.registry import field_name

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(h|ms|m|s)")
_UNIT_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def parse_duration(text: str) -> float:
    """Go's time.Duration syntax as metav1.Duration accepts it ("15s", "1m30s", "500ms")."""
    text = text.strip()
    if not text:
        raise ValueError("empty duration")
    pos, total = 0, 0.0
    for match in _DURATION.finditer(text):
        if match.start() != pos:
            break
        total += float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
        pos = match.end()
    if pos != len(text):
        raise ValueError(f"{text!r} is not a duration like 15s, 1m30s or 500ms")
    return total


class FieldReader:
    """Typed access to one document's fields, raising ConfigError with the field's path."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, path: str, problem: str) -> ConfigError:
        return ConfigError(self.source, path, problem)

    def mapping(self, value: Any, path: str) -> Mapping[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise self.fail(path, f"must be a mapping (got {type(value).__name__})")
        return value

    def refuse(
        self,
        obj: Mapping[str, Any],
        path: str,
        known: set[str],
        not_yet: Mapping[str, str] | None = None,
    ) -> None:
        for key in obj:
            where = field_path(path, field_name(key))
            if not_yet and key in not_yet:
                raise self.fail(where, f"{not_yet[key]}; remove the field")
            if key not in known:
                raise self.fail(
                    where, f"unknown field; known fields here: {', '.join(sorted(known))}"
                )

    def number(
        self, obj: Mapping[str, Any], key: str, default: float, path: str = "", minimum: float = 0
    ) -> float:
        value = obj.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or value < minimum:
            raise self.fail(
                field_path(path, key), f"must be a number >= {minimum:g} (got {value!r})"
            )
        return value

    @overload
    def whole(
        self,
        obj: Mapping[str, Any],
        key: str,
        default: int,
        path: str,
        valid: Callable[[int], bool] = ...,
        expect: str = ...,
    ) -> int: ...

    @overload
    def whole(
        self,
        obj: Mapping[str, Any],
        key: str,
        default: None,
        path: str,
        valid: Callable[[int], bool] = ...,
        expect: str = ...,
    ) -> int | None: ...

    def whole(
        self,
        obj: Mapping[str, Any],
        key: str,
        default: int | None,
        path: str,
        valid: Callable[[int], bool] = lambda n: True,
        expect: str = "",
    ) -> int | None:
        """An integer field (not a bool), `default` when absent; `expect` says what `valid` wants."""
        value = obj.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int) or not valid(value):
            wanted = f"a whole number {expect}".rstrip()
            raise self.fail(field_path(path, key), f"must be {wanted} (got {value!r})")
        return value

    def flag(self, obj: Mapping[str, Any], key: str, default: bool, path: str) -> bool:
        value = obj.get(key, default)
        if not isinstance(value, bool):
            raise self.fail(field_path(path, key), f"must be true or false (got {value!r})")
        return value

    def string(self, obj: Mapping[str, Any], key: str, default: str, path: str) -> str:
        value = obj.get(key, default)
        if not isinstance(value, str):
            raise self.fail(f"{path}.{key}", f"must be a string (got {value!r})")
        return value

    def seconds(self, obj: Mapping[str, Any], key: str, default: int, path: str) -> int:
        where = f"{path}.{key}"
        value = obj.get(key)
        if value is None:
            return default
        try:
            seconds = parse_duration(value) if isinstance(value, str) else float("nan")
        except ValueError as exc:
            raise self.fail(where, str(exc)) from exc
        if seconds != seconds or seconds < 1 or seconds != int(seconds):
            raise self.fail(
                where, f"must be whole seconds of at least 1s, like 15s (got {value!r})"
            )
        return int(seconds)

    def items(self, value: Any, path: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(path, f"must be a list (got {type(value).__name__})")
        return value


def field_path(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def percent(value: int) -> bool:
    return 0 <= value <= 100
