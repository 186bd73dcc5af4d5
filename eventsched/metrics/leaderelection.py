"""client-go's leader election family, for the lease (cluster/kube/election.py)."""

from __future__ import annotations

from prometheus_client import Gauge

from eventsched.metrics.family import Family

LEADER_ELECTION_MASTER_STATUS = Family(
    Gauge,
    "leader_election_master_status",
    "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 "
    "indicates master. 'name' is the string used to identify the lease. Please make sure to "
    "group by name.",
    ("name",),
    stability="ALPHA",
)

TABLE = (LEADER_ELECTION_MASTER_STATUS,)
