"""The scheduler extenders eventsched calls, as kube-scheduler v1.28 calls them: the
configuration's `extenders[]` (config.py), the HTTP client (client.py), and where the
scheduling and binding cycles call them (cycle.py).

Not to be confused with eventsched serving as kube-scheduler's extender
(`eventsched.extenderserver`).
"""
