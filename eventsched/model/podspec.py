"""Parts of a pod's spec that only some plugins read: host ports, images, spread, volumes.

Kept as the API gives them (spread constraints and volumes as plain maps,
which the plugins parse and judge) except for host ports, which are
normalized as kube-scheduler's `HostPortInfo` normalizes them, so two
spellings of the same port are one port in the log too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from eventsched.model.errors import ManifestError

DEFAULT_PROTOCOL = "TCP"
#: The host IP a port with no `hostIP` binds: every address.
ANY_IP = "0.0.0.0"

#: Volume sources a scheduling plugin reads (VolumeRestrictions, VolumeZone,
#: NodeVolumeLimits, VolumeBinding); configMap, secret, emptyDir ... are not kept.
SCHEDULING_VOLUME_SOURCES = frozenset(
    {
        "persistentVolumeClaim",
        "ephemeral",
        "csi",
        "gcePersistentDisk",
        "awsElasticBlockStore",
        "rbd",
        "iscsi",
        "azureDisk",
        "cinder",
    }
)


@dataclass(frozen=True, slots=True)
class HostPort:
    """One `containers[].ports[]` entry with a `hostPort`, as NodePorts compares them."""

    port: int
    protocol: str = DEFAULT_PROTOCOL
    host_ip: str = ANY_IP

    def conflicts(self, other: HostPort) -> bool:
        """kube-scheduler's `HostPortInfo.CheckConflict`: 0.0.0.0 conflicts with every IP.

        Symmetric: a wanted 0.0.0.0 port meets the same port/protocol on any IP,
        a wanted specific IP meets it on that IP or on 0.0.0.0. A port <= 0 is
        no host port and conflicts with nothing (upstream's Add and
        CheckConflict ignore it).
        """
        if self.port <= 0 or self.port != other.port or self.protocol != other.protocol:
            return False
        return self.host_ip == other.host_ip or ANY_IP in (self.host_ip, other.host_ip)

    def to_dict(self) -> dict[str, Any]:
        return {"port": self.port, "protocol": self.protocol, "hostIP": self.host_ip}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> HostPort:
        return cls(int(raw["port"]), str(raw["protocol"]), str(raw["hostIP"]))


def host_ports(containers: Sequence[Any], where: str, path: str) -> tuple[HostPort, ...]:
    """The host ports `containers` ask for (ports with `hostPort` > 0)."""
    found: list[HostPort] = []
    for i, container in enumerate(containers):
        if not isinstance(container, Mapping):
            continue
        for j, port in enumerate(container.get("ports") or []):
            if not isinstance(port, Mapping):
                continue
            number = port.get("hostPort") or 0
            if not isinstance(number, int) or not 0 <= number <= 65535:
                raise ManifestError(
                    where, f"{path}[{i}].ports[{j}].hostPort", "must be a port number (1-65535)"
                )
            if number > 0:
                found.append(
                    HostPort(
                        number,
                        str(port.get("protocol") or DEFAULT_PROTOCOL),
                        str(port.get("hostIP") or ANY_IP),
                    )
                )
    return tuple(found)


def images(containers: Sequence[Any]) -> tuple[str, ...]:
    return tuple(str(c["image"]) for c in containers if isinstance(c, Mapping) and c.get("image"))


def image_volumes(raw: Any) -> tuple[str, ...]:
    """`volumes[].image.reference` of the image volumes, in spec order (ImageLocality)."""
    return tuple(
        str(v["image"].get("reference") or "")
        for v in raw or ()
        if isinstance(v, Mapping) and isinstance(v.get("image"), Mapping)
    )


def maps(raw: Any, where: str, field: str) -> tuple[Mapping[str, Any], ...]:
    """A list of objects from the spec, kept as given (None and [] are no entries)."""
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(item, Mapping) for item in raw):
        raise ManifestError(where, field, "must be a list of objects")
    return tuple(dict(item) for item in raw)


def scheduling_volumes(raw: Any, where: str) -> tuple[Mapping[str, Any], ...]:
    """The pod's volumes whose source a scheduling plugin reads."""
    return tuple(
        v for v in maps(raw, where, "spec.volumes") if SCHEDULING_VOLUME_SOURCES.intersection(v)
    )
