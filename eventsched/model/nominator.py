"""Pods nominated to a node by preemption: kube-scheduler v1.28's `nominator`.

A preemptor waits for its victims to go; meanwhile its nominated node is
held for it. Every Filter pass treats the pods nominated to a node with
equal or higher priority as already running there (`RunFilterPluginsWithNominatedPods`),
so a lower-priority pod does not take the room preemption made.

The nominations are folded from the log (the view's `preempted`, `post_filtered`,
`reserved`, `pod_observed` and `pod_removed`), so replay sees the very same ones:

- a pending pod observed with `status.nominatedNodeName` is nominated there, and
  one observed without it is not, unless neither its previous observation nor this
  one names a node and it is nominated in memory (the status patch is not back yet:
  upstream's `UpdateNominatedPod` keeps the nomination then);
- a PostFilter result overrides the nomination (an empty name clears it); without a
  result, the pod's own `status.nominatedNodeName` stands (`AddNominatedPod`, ModeNoop);
- an assigned, assumed or deleted pod is nominated nowhere.
"""

from __future__ import annotations

from collections.abc import Iterator

from eventsched.model.pod import Pod


class Nominator:
    """Node name -> the pods nominated to it, in nomination order; and each pod's node."""

    __slots__ = ("_by_node", "_node_of")

    def __init__(self) -> None:
        self._by_node: dict[str, dict[str, Pod]] = {}
        self._node_of: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self._node_of)

    def __bool__(self) -> bool:
        return bool(self._node_of)

    def __iter__(self) -> Iterator[tuple[Pod, str]]:
        """(pod, node) of every nomination, nodes in first-nomination order."""
        for node, pods in self._by_node.items():
            for pod in pods.values():
                yield pod, node

    def node_of(self, uid: str) -> str | None:
        return self._node_of.get(uid)

    def pods_on(self, node: str) -> list[Pod]:
        """The pods nominated to `node`, in the order they were nominated."""
        pods = self._by_node.get(node)
        return list(pods.values()) if pods else []

    def nodes(self) -> list[str]:
        """The nodes some pod is nominated to."""
        return list(self._by_node)

    def nominate(self, pod: Pod, node: str) -> None:
        """`pod` nominated to `node` ("" clears its nomination)."""
        self.delete(pod.uid)
        if not node:
            return
        self._node_of[pod.uid] = node
        self._by_node.setdefault(node, {})[pod.uid] = pod

    def delete(self, uid: str) -> None:
        node = self._node_of.pop(uid, None)
        if node is None:
            return
        pods = self._by_node[node]
        del pods[uid]
        if not pods:
            del self._by_node[node]

    def observed(self, old: Pod | None, new: Pod) -> None:
        """A pod as the cluster reports it (`UpdateNominatedPod` / `AddNominatedPod`, ModeNoop)."""
        if new.node_name:
            self.delete(new.uid)
            return
        held = self._node_of.get(new.uid)
        if (
            held is not None
            and not new.nominated_node_name
            and (old is None or not old.nominated_node_name)
        ):
            self.nominate(new, held)  # the patch is not back yet: keep it, with the new pod
            return
        self.nominate(new, new.nominated_node_name)

    def post_filtered(self, pod: Pod, override: str | None) -> None:
        """A failed attempt's PostFilter result: a name (or "") overrides; None keeps the
        pod's own status.nominatedNodeName (`handleSchedulingFailure`'s AddNominatedPod)."""
        self.nominate(pod, pod.nominated_node_name if override is None else override)

    def clear(self) -> None:
        self._by_node.clear()
        self._node_of.clear()
