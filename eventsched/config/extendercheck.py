"""kube-scheduler v1.28's validation of `extenders[]`, with its field paths and messages,
and the two checks eventsched adds.

Upstream's `validateExtenders` (pkg/scheduler/apis/config/validation/validation.go)
refuses a prioritizing extender without a positive weight, more than one extender
implementing bind, and a managed resource whose name is not a qualified name, not an
extended resource name, or already managed (by any extender). Each error reads as
upstream's `field.Invalid` prints it: `extenders[0].weight: Invalid value: 0: must have
a positive weight applied to it`; the kube-scheduler v1.28.0 binary gives the same
lines for the same file (tests/config/test_extender_check.py).

kube-scheduler accepts a urlPrefix that is no http(s) URL (every call to it then fails)
and a negative httpTimeout (its HTTP client then has no time limit); eventsched refuses
both, saying so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from eventsched.framework.extenders.config import ExtenderConfig

_QUALIFIED_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QUALIFIED_NAME = re.compile(_QUALIFIED_FMT)
_QUALIFIED_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
    "an alphanumeric character"
)
_SUBDOMAIN_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_SUBDOMAIN = re.compile(_SUBDOMAIN_FMT)
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character"
)
#: v1.DefaultResourceRequestsPrefix and v1.ResourceDefaultNamespacePrefix.
_REQUESTS_PREFIX = "requests."
_NATIVE_PREFIX = "kubernetes.io/"


@dataclass(frozen=True, slots=True)
class FieldError:
    """One refused field: its path and what is wrong, as kube-scheduler words it."""

    field: str
    problem: str


def extender_errors(extenders: Sequence[ExtenderConfig]) -> list[FieldError]:
    """Upstream's validateExtenders, in its order; eventsched's own checks first per
    extender (a URL it cannot call, a negative timeout)."""
    errors: list[FieldError] = []
    binders = 0
    managed: set[str] = set()
    for i, extender in enumerate(extenders):
        path = f"extenders[{i}]"
        errors.extend(_own_errors(extender, path))
        if extender.prioritize_verb and extender.weight <= 0:
            errors.append(
                invalid(
                    f"{path}.weight", extender.weight, "must have a positive weight applied to it"
                )
            )
        if extender.bind_verb:
            binders += 1
        for j, resource in enumerate(extender.managed_resources):
            where = f"{path}.managedResources[{j}].name"
            errors.extend(_resource_name_errors(where, resource.name))
            if resource.name in managed:
                errors.append(
                    invalid(where, resource.name, "duplicate extender managed resource name")
                )
            managed.add(resource.name)
    if binders > 1:
        errors.append(
            invalid(
                "extenders",
                f"found {binders} extenders implementing bind",
                "only one extender can implement bind",
            )
        )
    return errors


def _own_errors(extender: ExtenderConfig, path: str) -> list[FieldError]:
    errors = []
    url = urlsplit(extender.url_prefix)
    if url.scheme not in ("http", "https") or not url.netloc:
        errors.append(
            invalid(
                f"{path}.urlPrefix",
                extender.url_prefix,
                "must be an http:// or https:// URL, e.g. http://127.0.0.1:8888/ "
                "(kube-scheduler v1.28 accepts it and fails every call to it)",
            )
        )
    if extender.http_timeout < 0:
        errors.append(
            invalid(
                f"{path}.httpTimeout",
                f"{extender.http_timeout:g}s",
                "must not be negative; 0 or none is the default, 5s "
                "(kube-scheduler v1.28 calls such an extender without a time limit)",
            )
        )
    return errors


def _resource_name_errors(path: str, name: str) -> list[FieldError]:
    """Upstream's validateExtendedResourceName: the name printed as a ResourceName (a
    Stringer: unquoted) for the qualified-name errors, as a string (quoted) for the other."""
    problems = qualified_name_errors(name)
    if problems:
        return [FieldError(path, f"Invalid value: {name}: {p}") for p in problems]
    if not is_extended_resource_name(name):
        return [invalid(path, name, "is an invalid extended resource name")]
    return []


def invalid(path: str, value: object, detail: str) -> FieldError:
    """`field.Invalid(path, value, detail)` as apimachinery prints it."""
    return FieldError(path, f"Invalid value: {go_value(value)}: {detail}")


def go_value(value: object) -> str:
    """A bad value as field.Error prints it: strings quoted (Go's %q), numbers plain."""
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def qualified_name_errors(value: str) -> list[str]:
    """apimachinery's IsQualifiedName: what is wrong with `value`, in its words."""
    parts = value.split("/")
    if len(parts) > 2:
        return [
            "a qualified name "
            + _regex_error(_QUALIFIED_MSG, _QUALIFIED_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    errors = []
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            errors.extend("prefix part " + e for e in _subdomain_errors(prefix))
    if not name:
        errors.append("name part must be non-empty")
    elif len(name) > 63:
        errors.append("name part must be no more than 63 characters")
    if not _QUALIFIED_NAME.fullmatch(name):
        errors.append(
            "name part "
            + _regex_error(_QUALIFIED_MSG, _QUALIFIED_FMT, "MyName", "my.name", "123-abc")
        )
    return errors


def is_extended_resource_name(name: str) -> bool:
    """Upstream's IsExtendedResourceName: not native (has a '/' and no `kubernetes.io/`),
    not `requests.*`, and a qualified name once prefixed with `requests.`."""
    if "/" not in name or _NATIVE_PREFIX in name or name.startswith(_REQUESTS_PREFIX):
        return False
    return not qualified_name_errors(_REQUESTS_PREFIX + name)


def _subdomain_errors(value: str) -> list[str]:
    errors = []
    if len(value) > 253:
        errors.append("must be no more than 253 characters")
    if not _SUBDOMAIN.fullmatch(value):
        errors.append(_regex_error(_SUBDOMAIN_MSG, _SUBDOMAIN_FMT, "example.com"))
    return errors


def _regex_error(message: str, fmt: str, *examples: str) -> str:
    """apimachinery's RegexError, double spaces and all."""
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{fmt}')"
