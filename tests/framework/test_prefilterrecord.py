"""`prefiltered` names the PreFilter plugins that returned Skip, or the others when fewer."""

from __future__ import annotations

from eventsched.config import default_profile
from eventsched.framework.prefilterrecord import prefilter_skips, skipped_at_prefilter

PLUGINS = ["NodeAffinity", "NodePorts", "NodeResourcesFit", "VolumeBinding", "InterPodAffinity"]


def test_most_skipped_are_named_by_the_plugins_that_did_not_skip() -> None:
    skipped = {"NodeAffinity", "NodePorts", "VolumeBinding", "InterPodAffinity"}
    data = prefilter_skips(PLUGINS, skipped)
    assert data == {"notSkipped": ["NodeResourcesFit"]}
    assert skipped_at_prefilter(data, PLUGINS) == sorted(skipped)


def test_few_skipped_are_named_themselves() -> None:
    for skipped in (set(), {"NodePorts"}, {"NodePorts", "VolumeBinding"}):
        data = prefilter_skips(PLUGINS, skipped)
        assert data == {"skipped": sorted(skipped)}
        assert skipped_at_prefilter(data, PLUGINS) == sorted(skipped)


def test_a_plain_pod_under_the_default_profile_writes_one_name() -> None:
    """Eleven of the default profile's twelve PreFilter plugins skip a pod that asks for
    nothing they check: the record names the one that did not."""
    plugins = [ref.name for ref in default_profile().at("preFilter")]
    skipped = set(plugins) - {"NodeResourcesFit"}
    assert prefilter_skips(plugins, skipped) == {"notSkipped": ["NodeResourcesFit"]}
