"""Kubernetes label syntax (apimachinery's IsQualifiedName / IsValidLabelValue).

Plugins that take label keys and values in their args or in pod
annotations check them here, so each gives the same reason for the same
mistake.
"""

from __future__ import annotations

import json
import re

_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_SUBDOMAIN = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
)
_NAME_RULE = (
    "alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric character"
)


def is_dns1123_subdomain(text: str) -> bool:
    """A lowercase DNS subdomain of at most 253 characters: a node name, a label key's prefix."""
    return len(text) <= 253 and _DNS1123_SUBDOMAIN.match(text) is not None


def _quote(value: object) -> str:
    return json.dumps(value) if isinstance(value, str) else repr(value)


def label_key_problem(key: str) -> str | None:
    """Why `key` is not a valid label key, or None when it is."""
    if not key:
        return "empty label key"
    prefix, slash, name = key.rpartition("/")
    if slash and not prefix:
        return f"invalid label key {_quote(key)}: the prefix before '/' is empty"
    if prefix and not is_dns1123_subdomain(prefix):
        return (
            f"invalid label key {_quote(key)}: the prefix {_quote(prefix)} must be a lowercase DNS subdomain "
            "of at most 253 characters (e.g. example.com)"
        )
    if not name:
        return f"invalid label key {_quote(key)}: the name after '/' is empty"
    if len(name) > 63 or not _NAME.match(name):
        return f"invalid label key {_quote(key)}: the name must be at most 63 {_NAME_RULE}"
    return None


def label_value_problem(value: str) -> str | None:
    """Why `value` is not a valid label value, or None when it is."""
    if len(value) > 63 or (value and not _NAME.match(value)):
        return f"invalid label value {_quote(value)}: must be at most 63 {_NAME_RULE}"
    return None
