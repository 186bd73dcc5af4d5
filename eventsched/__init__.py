"""eventsched: a Kubernetes scheduler whose every decision is an event in a log."""

__version__ = "0.1.0"
