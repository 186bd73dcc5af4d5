"""Plugins, one per module; `in_tree_registry()` names them as kube-scheduler does."""

from eventsched.plugins.registry import in_tree_registry

__all__ = ["in_tree_registry"]
