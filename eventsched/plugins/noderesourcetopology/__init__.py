"""NodeResourceTopologyMatch: NUMA-aware Filter and Score (scheduler-plugins v0.28.9).

- args.py: NodeResourceTopologyMatchArgs, defaulted and validated.
- numa.py: NUMA cells from a NodeResourceTopology, the topology manager's config.
- filter.py: the `single-numa-node` admission (container and pod scope).
- score.py: LeastAllocated, MostAllocated, BalancedAllocation.
- leastnuma.py: LeastNUMANodes.
- explain.py: the zone detail a rejection carries (`Status.detail`).
- plugin.py: the plugin.
"""

from eventsched.plugins.noderesourcetopology.plugin import NodeResourceTopologyMatch

__all__ = ["NodeResourceTopologyMatch"]
