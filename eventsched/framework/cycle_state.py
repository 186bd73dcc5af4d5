"""Per-attempt scratch space shared by the plugins of one scheduling and binding cycle."""

from __future__ import annotations

from typing import Any


class CycleState:
    """Keyed data a plugin writes in one extension point and reads in a later one.

    The scheduling cycle and the binding cycle run on different threads but
    one after the other for a given pod, so no lock is needed; `clone` gives
    PostFilter (preemption) its own copy to experiment on.
    """

    __slots__ = ("_data", "attempt", "seed", "skip_filter", "skip_score")

    def __init__(self, attempt: str = "", seed: int = 0) -> None:
        self._data: dict[str, Any] = {}
        self.attempt = attempt
        #: Randomness a plugin may use; recorded in `attempt_started`, so replay draws the same.
        self.seed = seed
        self.skip_filter: set[str] = set()
        self.skip_score: set[str] = set()

    def read(self, key: str) -> Any:
        try:
            return self._data[key]
        except KeyError:
            raise KeyError(f"{key!r} not found in CycleState") from None

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def clone(self) -> CycleState:
        copy = CycleState(self.attempt, self.seed)
        copy._data = {k: v.clone() if hasattr(v, "clone") else v for k, v in self._data.items()}
        copy.skip_filter = set(self.skip_filter)
        copy.skip_score = set(self.skip_score)
        return copy
