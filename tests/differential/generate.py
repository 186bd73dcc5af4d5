"""The seeded scenario generator: every family's scenarios, the same on every run.

Each scenario's rng is seeded with "family/index" (Python seeds a str through SHA-512), so
adding scenarios to one family or reordering families changes no other scenario.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from tests.differential import families_basic as basic
from tests.differential import families_intree as intree
from tests.differential import families_mixed as mixed
from tests.differential import families_pods as pods

Family = Callable[[random.Random, int], dict[str, Any]]

#: family name -> (generator, number of scenarios)
FAMILIES: dict[str, tuple[Family, int]] = {
    "resources": (basic.resources, 48),
    "taints": (basic.taints, 40),
    "nodeaffinity": (basic.node_affinity, 44),
    "nodename": (basic.node_name, 25),
    "unschedulable": (basic.unschedulable, 25),
    "balanced": (basic.balanced, 30),
    "images": (basic.images, 30),
    "priority": (basic.priorities, 20),
    "ports": (pods.ports, 35),
    "spread": (pods.spread, 49),
    "affinity": (pods.affinity, 48),
    "volumes": (mixed.volumes, 28),
    "mixed": (mixed.mixed, 48),
    "intree": (intree.intree, 28),
}


def generate(family: str) -> list[dict[str, Any]]:
    """The family's scenarios, each with its `id` ("family/index") first."""
    make, count = FAMILIES[family]
    out = []
    for index in range(count):
        body = make(random.Random(f"{family}/{index}"), index)
        out.append({"id": f"{family}/{index}", **body})
    return out
