"""Pods, nodes, quantities and the columnar NodeTable: plain data, no I/O.

The names below are imported on first use (`eventsched._lazy`): importing
one module of the model (`eventsched.model.pod`) does not import numpy.
"""

from typing import TYPE_CHECKING

from eventsched._lazy import exports

if TYPE_CHECKING:
    from eventsched.model.cache import Cache
    from eventsched.model.errors import ManifestError
    from eventsched.model.labels import (
        is_dns1123_subdomain,
        label_key_problem,
        label_value_problem,
    )
    from eventsched.model.node import Node
    from eventsched.model.nodetable import BoolArray, Indexes, IntArray, NodeTable
    from eventsched.model.pod import DEFAULT_SCHEDULER_NAME, OwnerRef, Pod
    from eventsched.model.quantity import QuantityError, parse_milli, parse_quantity
    from eventsched.model.taints import Taint, Toleration

__getattr__ = exports(
    __name__,
    {
        "Cache": "cache",
        "ManifestError": "errors",
        "is_dns1123_subdomain": "labels",
        "label_key_problem": "labels",
        "label_value_problem": "labels",
        "Node": "node",
        "BoolArray": "nodetable",
        "Indexes": "nodetable",
        "IntArray": "nodetable",
        "NodeTable": "nodetable",
        "DEFAULT_SCHEDULER_NAME": "pod",
        "OwnerRef": "pod",
        "Pod": "pod",
        "QuantityError": "quantity",
        "parse_milli": "quantity",
        "parse_quantity": "quantity",
        "Taint": "taints",
        "Toleration": "taints",
    },
)

__all__ = [
    "DEFAULT_SCHEDULER_NAME",
    "BoolArray",
    "Cache",
    "Indexes",
    "IntArray",
    "ManifestError",
    "Node",
    "NodeTable",
    "OwnerRef",
    "Pod",
    "QuantityError",
    "Taint",
    "Toleration",
    "is_dns1123_subdomain",
    "label_key_problem",
    "label_value_problem",
    "parse_milli",
    "parse_quantity",
]
