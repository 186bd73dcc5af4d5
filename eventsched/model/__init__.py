"""Pods, nodes, quantities and the columnar NodeTable: plain data, no I/O."""

from eventsched.model.cache import Cache
from eventsched.model.errors import ManifestError
from eventsched.model.labels import is_dns1123_subdomain, label_key_problem, label_value_problem
from eventsched.model.node import Node
from eventsched.model.nodetable import BoolArray, Indexes, IntArray, NodeTable
from eventsched.model.pod import DEFAULT_SCHEDULER_NAME, OwnerRef, Pod
from eventsched.model.quantity import QuantityError, parse_milli, parse_quantity
from eventsched.model.taints import Taint, Toleration

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
