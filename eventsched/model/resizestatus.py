"""What a pod's status says of its resources, for the accounting of a resized pod.

With InPlacePodVerticalScaling a running pod's requests can change in place: the
kubelet reports, per container, what it admitted (`allocatedResources`) and what the
container runs with (`resources.requests`), and from v1.35 the same for the whole
pod (`status.allocatedResources`, `status.resources`); a resize the node cannot take
is marked Infeasible (the PodResizePending condition, `status.resize` before v1.33).
kube-scheduler counts a pod at the most of these (model/podresources.py).

`resize_key` is the part of the status that can matter, as text (the memo's key: most
pods of one template report the same), None when there is none; `read_resize_status`
parses it. Absent and null fields are told apart from empty ones, as Go's nil maps
are from empty maps in upstream's checks (`cs.Resources != nil`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from eventsched.model.errors import ManifestError
from eventsched.model.quantity import QuantityError
from eventsched.model.resources import Resources, parse_resource_list

POD_RESIZE_PENDING = "PodResizePending"
INFEASIBLE = "Infeasible"
#: The key of a status that says nothing of resources.
_UNMEMOIZABLE = b""


@dataclass(frozen=True, slots=True)
class ContainerResizeStatus:
    """One entry of `status.containerStatuses` or `status.initContainerStatuses`."""

    name: str
    #: `allocatedResources`; None when absent (Go: nil).
    allocated: Resources | None
    #: `resources` is present (Go: `cs.Resources != nil`).
    has_resources: bool
    #: `resources.requests`; None when absent.
    actual: Resources | None


@dataclass(frozen=True, slots=True)
class ResizeStatus:
    containers: tuple[ContainerResizeStatus, ...] = ()
    init_containers: tuple[ContainerResizeStatus, ...] = ()
    #: The first PodResizePending condition has reason Infeasible (`IsPodResizeInfeasible`).
    infeasible: bool = False
    #: `status.resize` (v1.27-v1.32 read it instead of the condition).
    resize: str = ""
    #: `status.allocatedResources`; None when absent.
    pod_allocated: Resources | None = None
    #: `status.resources` is present.
    pod_has_resources: bool = False
    #: `status.resources.requests`; None when absent.
    pod_actual: Resources | None = None

    def find(self, name: str) -> ContainerResizeStatus | None:
        """The first status named `name`, app containers' first (v1.37 `findContainerStatus`)."""
        for status in (*self.containers, *self.init_containers):
            if status.name == name:
                return status
        return None

    def by_name(self, with_init: bool) -> dict[str, ContainerResizeStatus]:
        """The statuses by name as v1.28-v1.36 map them: a later one of a name wins, and
        (`with_init`, v1.33 on) the init containers' after the app containers'."""
        found = {s.name: s for s in self.containers}
        if with_init:
            found.update((s.name, s) for s in self.init_containers)
        return found


#: A status that says nothing of resources.
NO_RESIZE_STATUS = ResizeStatus()


def resize_key(status: Mapping[str, Any]) -> bytes | None:
    """The resource part of `status` as text; None when it has none (a pending pod's);
    b"" when it cannot be written as JSON (read afresh every time, never kept)."""
    get = status.get
    containers = _container_parts(get("containerStatuses"))
    init = _container_parts(get("initContainerStatuses"))
    reason = _resize_pending_reason(status)
    resize = get("resize")
    allocated = get("allocatedResources")
    resources = get("resources")
    if (
        not containers
        and not init
        and reason is None
        and not resize
        and allocated is None
        and resources is None
    ):
        return None
    try:
        return orjson.dumps([containers, init, reason, resize, allocated, resources])
    except (TypeError, orjson.JSONEncodeError):
        return _UNMEMOIZABLE


def _container_parts(statuses: Any) -> list[Any]:
    """Each status's name and resources; [] when none reports resources."""
    if not isinstance(statuses, list):
        return []
    parts = []
    reported = False
    for s in statuses:
        if isinstance(s, Mapping):
            allocated, resources = s.get("allocatedResources"), s.get("resources")
            reported = reported or allocated is not None or resources is not None
            parts.append([s.get("name"), allocated, resources])
    return parts if reported else []


def _resize_pending_reason(status: Mapping[str, Any]) -> str | None:
    for condition in status.get("conditions") or []:
        if isinstance(condition, Mapping) and condition.get("type") == POD_RESIZE_PENDING:
            return str(condition.get("reason") or "")
    return None


def read_resize_status(status: Mapping[str, Any], where: str) -> ResizeStatus:
    """The resource part of `status`, parsed (ManifestError naming the field)."""
    resources = status.get("resources")
    if resources is not None and not isinstance(resources, Mapping):
        raise ManifestError(where, "status.resources", "must be a map")
    return ResizeStatus(
        containers=_statuses(status.get("containerStatuses"), "status.containerStatuses", where),
        init_containers=_statuses(
            status.get("initContainerStatuses"), "status.initContainerStatuses", where
        ),
        infeasible=_resize_pending_reason(status) == INFEASIBLE,
        resize=str(status.get("resize") or ""),
        pod_allocated=_optional_list(
            status.get("allocatedResources"), "status.allocatedResources", where
        ),
        pod_has_resources=resources is not None,
        pod_actual=_optional_list(
            (resources or {}).get("requests"), "status.resources.requests", where
        ),
    )


def _statuses(raw: Any, path: str, where: str) -> tuple[ContainerResizeStatus, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ManifestError(where, path, "must be a list of container statuses")
    found = []
    for i, status in enumerate(raw):
        if not isinstance(status, Mapping):
            raise ManifestError(where, f"{path}[{i}]", "must be a container status")
        resources = status.get("resources")
        if resources is not None and not isinstance(resources, Mapping):
            raise ManifestError(where, f"{path}[{i}].resources", "must be a map")
        found.append(
            ContainerResizeStatus(
                name=str(status.get("name") or ""),
                allocated=_optional_list(
                    status.get("allocatedResources"), f"{path}[{i}].allocatedResources", where
                ),
                has_resources=resources is not None,
                actual=_optional_list(
                    (resources or {}).get("requests"), f"{path}[{i}].resources.requests", where
                ),
            )
        )
    return tuple(found)


def _optional_list(raw: Any, path: str, where: str) -> Resources | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise ManifestError(where, path, "must be a map of resource to quantity")
    try:
        return parse_resource_list(raw)
    except QuantityError as exc:
        raise ManifestError(where, path, str(exc)) from exc
