"""Names, uids and timestamps the way Kubernetes controllers make them.

Controllers name their pods `<owner>-<random suffix>` from an alphabet
without vowels (so no words are spelled) and hash the pod template into
`pod-template-hash`. The simulation derives both from hashes instead of
randomness so the same manifests always give the same pod names, which
keeps simulations, logs and tests comparable across runs.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from eventsched.model import ManifestError

#: `k8s.io/apimachinery/pkg/util/rand.SafeEncodeString`'s alphabet.
SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"

TEMPLATE_HASH_LENGTH = 10
SUFFIX_LENGTH = 5

_DNS1123_SUBDOMAIN = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
)
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def stable_token(*parts: str, length: int = SUFFIX_LENGTH) -> str:
    """`length` characters of SAFE_ALPHABET, a pure function of `parts`."""
    # 64 bits are plenty (27**10 < 2**64), and blake2b makes them fastest.
    digest = hashlib.blake2b("\x00".join(parts).encode(), digest_size=8).digest()
    number = int.from_bytes(digest, "big")
    chars = []
    for _ in range(length):
        number, digit = divmod(number, len(SAFE_ALPHABET))
        chars.append(SAFE_ALPHABET[digit])
    return "".join(chars)


def template_hash(template: Mapping[str, Any]) -> str:
    """A `pod-template-hash`: changes when, and only when, the pod template changes."""
    canonical = json.dumps(template, sort_keys=True, separators=(",", ":"), default=str)
    return stable_token(canonical, length=TEMPLATE_HASH_LENGTH)


def rfc3339(moment: datetime) -> str:
    """Second precision in UTC with a `Z`, as the API server writes `creationTimestamp`."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def check_name(where: str, field: str, value: object, *, label: bool = False) -> str:
    """Refuse names the API server would refuse, so a manifest that loads here also applies."""
    if not isinstance(value, str) or not value:
        raise ManifestError(where, field, "is required (a DNS-1123 name)")
    if label:
        pattern, limit, kind, chars = _DNS1123_LABEL, 63, "DNS-1123 label", "'-'"
    else:
        pattern, limit, kind, chars = _DNS1123_SUBDOMAIN, 253, "DNS-1123 subdomain", "'-', '.'"
    if len(value) > limit or not pattern.match(value):
        raise ManifestError(
            where,
            field,
            f"{value!r} is not a valid {kind} (lowercase letters, digits, {chars}; "
            f"at most {limit} characters, starting and ending with a letter or digit)",
        )
    return value
