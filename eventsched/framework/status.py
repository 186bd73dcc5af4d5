"""Status codes with kube-scheduler's names and meaning."""

from __future__ import annotations

from dataclasses import field
from enum import IntEnum

from eventsched.model.valueclass import value_class


class Code(IntEnum):
    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6

    @property
    def label(self) -> str:
        """The name kube-scheduler prints (and we log): "UnschedulableAndUnresolvable"."""
        return _LABELS[self]

    @classmethod
    def from_label(cls, label: str) -> Code:
        return _BY_LABEL[label]


_LABELS = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}
_BY_LABEL = {v: k for k, v in _LABELS.items()}
# The members as plain module names: an IntEnum member looked up on its class costs
# more than the comparison, and these are asked several times per plugin call.
_SUCCESS, _SKIP, _WAIT = Code.SUCCESS, Code.SKIP, Code.WAIT
_REJECTED = frozenset((Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING))


@value_class
class Status:
    """The result of one plugin at one extension point. `None` stands for Success in returns."""

    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""
    error: BaseException | None = field(default=None, compare=False)
    #: What explains a rejection beyond its reasons (e.g. which NUMA zones a container
    #: fits): logged with the rejected nodes and shown by `eventsched explain`, but not
    #: part of the message, so FitError's text stays kube-scheduler's.
    detail: tuple[str, ...] = field(default=(), compare=False)

    @classmethod
    def unschedulable(cls, *reasons: str, plugin: str = "") -> Status:
        return cls(Code.UNSCHEDULABLE, reasons, plugin)

    @classmethod
    def unresolvable(cls, *reasons: str, plugin: str = "") -> Status:
        return cls(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons, plugin)

    @classmethod
    def as_error(cls, error: BaseException | str, plugin: str = "") -> Status:
        if isinstance(error, str):
            return cls(Code.ERROR, (error,), plugin, RuntimeError(error))
        return cls(Code.ERROR, (str(error),), plugin, error)

    @property
    def is_success(self) -> bool:
        return self.code == _SUCCESS

    @property
    def is_skip(self) -> bool:
        return self.code == _SKIP

    @property
    def is_wait(self) -> bool:
        return self.code == _WAIT

    @property
    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending: the pod, not the scheduler, is at fault."""
        return self.code in _REJECTED

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        if self.plugin == plugin:
            return self
        if self.reasons or self.error is not None or self.detail:
            return Status(self.code, self.reasons, plugin, self.error, self.detail)
        return _bare(self.code, plugin)

    def to_record(self) -> dict[str, object]:
        record: dict[str, object] = {"code": self.code.label, "reasons": list(self.reasons)}
        if self.plugin:
            record["plugin"] = self.plugin
        if self.detail:
            record["detail"] = list(self.detail)
        return record


SUCCESS = Status()
#: Skip, as a PreFilter or PreScore plugin answers when it has nothing to do.
SKIP = Status(Code.SKIP)

#: A code alone, named for a plugin: most answers are one of these (made once each).
_BARE: dict[tuple[Code, str], Status] = {}


def _bare(code: Code, plugin: str) -> Status:
    status = _BARE.get((code, plugin))
    if status is None:
        status = _BARE[(code, plugin)] = Status(code, (), plugin)
    return status


def ok(status: Status | None) -> bool:
    return status is None or status.is_success
