"""Every version of a claim the API server's watch delivers: how often a field was written."""

from __future__ import annotations

import threading

from kubernetes import client, watch

SELECTED_NODE = "volume.kubernetes.io/selected-node"


class ClaimWatch:
    """The selected node of every version of one claim, as a watch delivers them (a watch
    skips no version): how many times the annotation was written."""

    def __init__(self, api_client: client.ApiClient, name: str) -> None:
        self.name = name
        self.selected: list[str] = []
        self._api = client.CoreV1Api(api_client)
        self._watch = watch.Watch()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="claim-watch", daemon=True)

    def __enter__(self) -> ClaimWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopped.set()
        self._watch.stop()

    def _run(self) -> None:
        try:
            for event in self._watch.stream(
                self._api.list_persistent_volume_claim_for_all_namespaces
            ):
                meta = event["raw_object"]["metadata"]
                if meta["name"] == self.name:
                    self.selected.append((meta.get("annotations") or {}).get(SELECTED_NODE, ""))
        except Exception:
            if not self._stopped.is_set():  # the server going away at teardown is no news
                raise

    def writes(self, node_name: str) -> int:
        """How many times the annotation was set to `node_name` (from another value)."""
        previous = ""
        count = 0
        for value in self.selected:
            count += value == node_name and previous != node_name
            previous = value
        return count
