"""Custom resources some plugins read: what a plugin declares of each, and the table of them.

A plugin that reads a kind a CustomResourceDefinition serves (CapacityScheduling's
ElasticQuota, NodeResourceTopologyMatch's NodeResourceTopology) declares it in its own
package as a `CustomKind`: its model type, read from the API (a manifest) and from the log
(a record), where its informer lists it (group, version, plural) and the file that installs
its CRD. `eventsched.plugins.registry`, the one place that sees every plugin, declares each
once in `CUSTOM_KINDS`, by name, with a loader: a kind's plugin package is imported when
the kind is first looked up, so a process none of whose profiles names such a plugin and
which meets none of its objects does not import it.

The cluster adapters, the manifest loader and the fold look a kind up here by name, so none
of them imports a plugin (the layers forbid it), and the model knows no plugin's kind; as
Kubernetes' API groups add their types to a `runtime.Scheme` that clients then read.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar


class CustomObject(Protocol):
    """What the model reads of a custom kind's object: which it is, and its log record."""

    @property
    def kind(self) -> str: ...
    @property
    def namespace(self) -> str:
        """ "" for a kind without namespaces."""
        ...

    @property
    def name(self) -> str: ...
    @property
    def key(self) -> str:
        """KIND/NAMESPACE/NAME, or KIND/NAME for a kind without namespaces."""
        ...

    def to_record(self) -> dict[str, Any]:
        """The `object_observed` record; the kind's `from_record` reads it back."""
        ...


T = TypeVar("T", bound=CustomObject)


@dataclass(frozen=True, slots=True)
class CustomKind(Generic[T]):
    """One custom resource a plugin reads, as its plugin's package declares it."""

    #: The object kind (`ElasticQuota`), the name the log's records and the API carry.
    kind: str
    #: Where its informer lists it: `/apis/GROUP/VERSION/PLURAL`.
    group: str
    version: str
    plural: str
    #: False for a cluster-scoped kind: its objects' key is KIND/NAME.
    namespaced: bool
    #: The model object from the API (or a manifest): raises ManifestError naming the field.
    from_manifest: Callable[[Mapping[str, Any]], T]
    #: The model object from its `object_observed` record (`to_record()`).
    from_record: Callable[[Mapping[str, Any]], T]
    #: The file that installs its CRD, in the repository (the chart's `crds/` links to it).
    crd_file: str

    @property
    def resource(self) -> str:
        """GROUP/VERSION/PLURAL, the informer's resource path."""
        return f"{self.group}/{self.version}/{self.plural}"


class CustomKinds:
    """Kind name -> CustomKind: each declared once with its loader, loaded when first looked up."""

    def __init__(self) -> None:
        self._loaders: dict[str, Callable[[], CustomKind[Any]]] = {}
        self._loaded: dict[str, CustomKind[Any]] = {}

    def declare(self, kind: str, load: Callable[[], CustomKind[Any]]) -> None:
        """Declare `kind`, read by calling `load` (which imports its plugin's package)."""
        if kind in self._loaders:
            raise ValueError(f"the custom kind {kind!r} is declared twice")
        self._loaders[kind] = load

    def __contains__(self, kind: object) -> bool:
        """Whether `kind` is declared (loads nothing)."""
        return kind in self._loaders

    def __iter__(self) -> Iterator[str]:
        """The declared kinds' names, in declaration order (loads nothing)."""
        return iter(self._loaders)

    def __len__(self) -> int:
        return len(self._loaders)

    def get(self, kind: str) -> CustomKind[Any] | None:
        """The declaration of `kind`, None when no plugin declares it."""
        found = self._loaded.get(kind)
        if found is not None:
            return found
        load = self._loaders.get(kind)
        if load is None:
            return None
        found = load()
        if found.kind != kind:
            raise ValueError(f"the custom kind declared as {kind!r} loads as {found.kind!r}")
        self._loaded[kind] = found
        return found

    def __getitem__(self, kind: str) -> CustomKind[Any]:
        found = self.get(kind)
        if found is None:
            declared = ", ".join(self._loaders) or "none"
            raise KeyError(
                f"no plugin declares the custom kind {kind!r} (declared: {declared}; "
                "eventsched.plugins.registry declares them)"
            )
        return found


#: The process's custom kinds, filled once by `eventsched.plugins.registry` when imported.
CUSTOM_KINDS = CustomKinds()


class KindNames(Collection[str]):
    """Kind names: fixed ones, then the declared custom kinds (only those of one scope when
    `namespaced` is given). Read when asked, so a kind declared after this was made is in it."""

    def __init__(
        self, fixed: Iterable[str], custom: CustomKinds, namespaced: bool | None = None
    ) -> None:
        self._fixed = tuple(fixed)
        self._fixed_set = frozenset(self._fixed)
        self._custom = custom
        self._namespaced = namespaced

    def __contains__(self, kind: object) -> bool:
        if kind in self._fixed_set:
            return True
        if not isinstance(kind, str) or kind not in self._custom:
            return False
        return self._namespaced is None or self._custom[kind].namespaced == self._namespaced

    def __iter__(self) -> Iterator[str]:
        yield from self._fixed
        yield from (kind for kind in self._custom if kind in self and kind not in self._fixed_set)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"KindNames({list(self)!r})"
