"""ImageLocality: favour nodes that already hold the pod's container images (v1.28).

Each image of the pod's regular containers found on a node (by its name as
`status.images` lists it, the pod's name normalized with a default `:latest`
tag) adds `int64(size * numNodes / totalNumNodes)`: an image present
everywhere counts fully, a rare one little, so image locality does not pile
pods onto the few nodes that pulled an image first. The sum is clamped to
[23MB, 1000MB x images] and scaled to 0..100 with integer arithmetic.
No PreScore or NormalizeScore. Which images (`sumImageScores`, by version):
- v1.28, 1.29: `spec.containers`, counted as the images;
- from 1.30: init containers too, before the containers, all counted;
- 1.36: image volumes (`volumes[].image.reference`) add their score, not counted;
- from 1.37: image volumes counted too (kubernetes#138951: 1.36 could score an image
  volume above the same image in a container).

`size` and `numNodes` are the node's own `ImageStateSummary` (upstream
`sumImageScores` reads `nodeInfo.ImageStates`): kube-scheduler's cache made it
when the node was last added or updated, so `numNodes` is the number of nodes
holding the image then, not now (model/imagestates.py keeps those snapshots
per row); `totalNumNodes` is the snapshot's node count now.

The summaries are indexed by image name, rebuilt only when nodes change
(`table.node_generation`). Image names are integer codes and a summary is
encoded once (a re-added node gets a new summary object), so a rebuild is a few
array operations over the codes; scoring a pod is one dictionary look-up and
one array addition per container image.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from eventsched.framework import (
    LEGACY_FEATURES,
    MAX_NODE_SCORE,
    CycleState,
    Features,
    Handle,
    check_args,
)
from eventsched.model import Indexes, IntArray, NodeTable, Pod
from eventsched.model.imagestates import ImageSummary

NAME = "ImageLocality"
MB = 1024 * 1024
#: Bounds of the image score range: 90% of images on Docker Hub fall in it, per container.
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB
DEFAULT_IMAGE_TAG = "latest"


@dataclass(frozen=True, slots=True)
class EncodedSummary:
    """One node's image summary as a (3, names) block: name codes, sizes, NumNodes."""

    summary: ImageSummary
    block: IntArray


@dataclass(frozen=True, slots=True)
class ImageIndex:
    """Every node's `ImageStateSummary` entries, grouped by image name code.

    The rows listing code `c` are `rows[starts[c] : starts[c] + counts[c]]`, in row
    order; `scaled[i]` is what the image adds on `rows[i]`:
    `int64(float64(size) * numNodes / totalNumNodes)` with that row's summary.
    """

    node_generation: int
    codes: Mapping[str, int]
    starts: IntArray
    counts: IntArray
    rows: Indexes
    scaled: IntArray

    def holders(self, name: str) -> tuple[Indexes, IntArray] | None:
        """The rows listing image `name` and what it adds on each; None when none does."""
        code = self.codes.get(name)
        if code is None or code >= len(self.counts) or self.counts[code] == 0:
            return None
        span = slice(int(self.starts[code]), int(self.starts[code] + self.counts[code]))
        return self.rows[span], self.scaled[span]


def normalized_image_name(name: str) -> str:
    """upstream `normalizedImageName`: add `:latest` when the reference has no tag.

    A tag is a `:` after the last `/` (`gcr.io:5000/root` has none); a digest
    reference (`root@sha256:...`) keeps its own colon and is left as is.
    """
    if name.rfind(":") <= name.rfind("/"):
        return f"{name}:{DEFAULT_IMAGE_TAG}"
    return name


def scaled_image_scores(sizes: IntArray, num_nodes: IntArray, total_num_nodes: int) -> IntArray:
    """upstream `scaledImageScore` for many images: float64 as in Go, truncated toward zero."""
    spread = num_nodes.astype(np.float64) / float(total_num_nodes)
    return (sizes.astype(np.float64) * spread).astype(np.int64)


class ImageCodes:
    """Image names as integer codes, and each node's summary encoded once.

    Summaries are immutable and a node added or updated again gets a new one,
    so a summary encoded for an earlier index is reused as is.
    """

    def __init__(self) -> None:
        self.codes: dict[str, int] = {}
        self._encoded: dict[int, EncodedSummary] = {}

    def encode(self, summary: ImageSummary) -> EncodedSummary:
        entry = self._encoded.get(id(summary))
        if entry is not None and entry.summary is summary:
            return entry
        codes = self.codes
        block = np.empty((3, len(summary)), dtype=np.int64)
        block[0] = [codes.setdefault(name, len(codes)) for name in summary.names]
        block[1] = summary.sizes
        block[2] = summary.num_nodes
        entry = self._encoded[id(summary)] = EncodedSummary(summary, block)
        return entry

    def build(self, table: NodeTable) -> ImageIndex:
        """The index of `table`'s rows' image summaries."""
        summaries = table.image_summaries
        if len(self._encoded) > 2 * len(summaries) + 1024:
            self._encoded = {}  # mostly summaries of nodes since updated or removed
        blocks = [self.encode(summary).block for summary in summaries]
        lengths = np.fromiter(map(len, summaries), dtype=np.int64, count=len(summaries))
        if len(self.codes) > 4 * int(lengths.sum()) + 1024:
            self.codes = {}  # mostly names no node lists any more: start afresh
            self._encoded = {}
            return self.build(table)
        codes, sizes, num_nodes = np.concatenate([np.zeros((3, 0), np.int64), *blocks], axis=1)
        scaled = scaled_image_scores(sizes, num_nodes, max(len(table), 1))
        rows = np.repeat(np.arange(len(summaries), dtype=np.intp), lengths)
        # A stable sort keeps each image's rows in row order; small codes sort by radix.
        narrow = codes.astype(np.uint16) if len(self.codes) <= 1 << 16 else codes
        order = np.argsort(narrow, kind="stable")
        counts = np.bincount(codes, minlength=len(self.codes)).astype(np.int64)
        starts = np.cumsum(counts) - counts
        return ImageIndex(
            table.node_generation, self.codes, starts, counts, rows[order], scaled[order]
        )


def calculate_priority(sum_scores: IntArray, num_containers: int) -> IntArray:
    """upstream `calculatePriority`: clamp to [min, max threshold], scale to 0..MaxNodeScore.

    `num_containers` is the image count the version's threshold multiplies. With none (max
    threshold 0) every sum clamps to the minimum and
    scores 0, as in Go; otherwise both operands are >= 0 and Go's truncating
    division is floor division.
    """
    if num_containers <= 0:
        return np.zeros(len(sum_scores), dtype=np.int64)
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    clamped = np.clip(sum_scores, MIN_THRESHOLD, max_threshold).astype(np.int64)
    return MAX_NODE_SCORE * (clamped - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


class ImageLocality:
    name = NAME

    def __init__(
        self, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> None:
        check_args(self.name, args)
        self.init_containers = features.since("1.30")
        self.image_volumes = features.since("1.36")
        self.counts_image_volumes = features.since("1.37")
        self._codes = ImageCodes()
        self._index: ImageIndex | None = None
        self._indexed: NodeTable | None = None

    def image_index(self, table: NodeTable) -> ImageIndex:
        """The image index of `table`, rebuilt when its nodes changed since the last build."""
        index = self._index
        if (
            index is None
            or self._indexed is not table
            or index.node_generation != table.node_generation
        ):
            index = self._index = self._codes.build(table)
            self._indexed = table
        return index

    def images(self, pod: Pod) -> tuple[tuple[str, ...], int]:
        """The images whose scores add up, and how many images the threshold counts."""
        images = (*pod.init_images, *pod.images) if self.init_containers else pod.images
        count = len(images)
        if self.image_volumes:
            images = (*images, *pod.image_volumes)
            if self.counts_image_volumes:
                count += len(pod.image_volumes)
        return images, count

    def score_batch(self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes) -> IntArray:
        index = self.image_index(table)
        sums: IntArray | None = None
        images, count = self.images(pod)
        for image in images:
            found = index.holders(normalized_image_name(image))
            if found is not None:
                holders, scaled = found
                if sums is None:
                    sums = np.zeros(len(table), dtype=np.int64)
                sums[holders] += scaled
        if sums is None:
            # No node has any of the images: every sum clamps to the minimum, which scores 0.
            return np.zeros(len(rows), dtype=np.int64)
        return calculate_priority(sums[rows], count)
