"""The cluster as the log says it is: the one fold of the log that decisions read.

`ClusterView.apply` is the only code that turns an event into a change of
the view (nodes in the NodeTable, observed pods, assumed and bound
placements, recorded plugin inputs, profiles by digest). The live scheduler
applies each event as it adds it to the batch it appends; replay, `explain
--full` and `db prune` apply the events they read; a pruned log's base is
the view's saved form (`to_state` / `from_state`). A new observed kind is
added here once and every one of them sees it.
"""

from eventsched.view.cluster import FOLDED_KINDS, ClusterView, Fact

__all__ = ["FOLDED_KINDS", "ClusterView", "Fact"]
