"""`eventsched extender`: eventsched's profile served to kube-scheduler as a scheduler extender.

`protocol` reads and writes k8s.io/kube-scheduler/extender/v1 JSON, `loop` answers each call
on the scheduler's loop thread and logs it, `server` is the HTTP side.
"""
