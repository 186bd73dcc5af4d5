"""ImageLocality's images by version, after v1.37.2's image_locality_test.go cases "include
InitContainers: ...", "pod with ImageVolume" and "same images as ImageVolume pod but as regular
container images" (scores on NewSnapshot's summaries, as test_imagelocality.py's table)."""

from __future__ import annotations

import numpy as np
import pytest

from eventsched.config.featuregates import features_for
from eventsched.framework import CycleState
from eventsched.model import Pod
from tests.plugins.conftest import plugin
from tests.plugins.test_imagelocality import (
    NODE_20_30_40,
    NODE_40_300_2000,
    NODE_300_600_900,
    NODE_4000_30,
    image_node,
    image_pod,
    new_snapshot_table,
)


def image_volume_pod(container: str, reference: str) -> Pod:
    spec = {
        "containers": [{"name": "c", "image": container}],
        "volumes": [{"name": "imageVolume", "image": {"reference": reference}}],
    }
    return Pod.from_manifest({"metadata": {"name": "p", "uid": "u"}, "spec": spec})


def scores(pod: Pod, nodes: list, version: str) -> list[int]:
    table = new_snapshot_table(nodes)
    p = plugin("ImageLocality", table=table, features=features_for(version))
    return [int(s) for s in p.score_batch(CycleState(), pod, table, np.arange(len(table)))]


@pytest.mark.parametrize(("version", "expected"), [("1.29", [0, 0]), ("1.30", [6, 0])])
def test_init_container_images_count_from_1_30(version: str, expected: list[int]) -> None:
    # Pod gcr.io/30, init gcr.io/300: node1 100 * (300M/2 - 23M) / (2000M - 23M) = 6.
    pod = image_pod("gcr.io/30", init=("gcr.io/300",))
    nodes = [image_node("node1", *NODE_40_300_2000), image_node("node2", *NODE_20_30_40)]
    assert scores(pod, nodes, version) == expected
    assert scores(pod, nodes, "1.37") == [6, 0]


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("1.35", [0, 0]),  # image volumes not read
        ("1.36", [12, 0]),  # summed, not counted: 100 * (150M - 23M) / (1000M - 23M)
        ("1.37", [6, 0]),  # summed and counted, as the same images in two containers
    ],
)
def test_image_volumes_by_version(version: str, expected: list[int]) -> None:
    pod = image_volume_pod("gcr.io/30", "gcr.io/300")
    nodes = [image_node("node1", *NODE_300_600_900), image_node("node2", *NODE_4000_30)]
    assert scores(pod, nodes, version) == expected
    as_containers = image_pod("gcr.io/30", "gcr.io/300")
    assert scores(as_containers, nodes, version) == [6, 0]


def test_a_pod_record_keeps_init_images_and_image_volumes() -> None:
    pod = image_volume_pod("gcr.io/30", "gcr.io/300")
    assert pod.image_volumes == ("gcr.io/300",)
    assert Pod.from_record(pod.to_record()) == pod
    with_init = image_pod("gcr.io/30", init=("gcr.io/300",))
    assert with_init.init_images == ("gcr.io/300",)
    assert Pod.from_record(with_init.to_record()) == with_init
