"""A stable fingerprint of a profile, so every attempt names the configuration that made it."""

from __future__ import annotations

import hashlib
import json

from eventsched.framework import Profile


def profile_digest(profile: Profile) -> str:
    canonical = json.dumps(profile.to_record(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]
