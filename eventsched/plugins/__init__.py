"""Plugins, one per module; the registries name them as kube-scheduler does."""

from eventsched.plugins.registry import full_registry, in_tree_registry

__all__ = ["full_registry", "in_tree_registry"]
