"""deploy/crds/: the CRDs of the custom kinds our plugins declare (model/customkinds.py).

What is checked:

- every kind a plugin reads is declared (eventsched.plugins.registry) and loads as the
  CustomKind of that name from its plugin's package;
- each declaration is its CRD file's: group, served version, plural, kind and scope, so
  the informer lists what the CRD serves; the file is one file, listed by
  deploy/crds/kustomization.yaml and linked from the chart's crds/;
- the RBAC rules (REQUIRED_ACCESS, which the ClusterRoles mirror: test_manifests.py) let
  the informer list and watch each kind;
- the schema is scheduler-plugins v0.28.9's, descriptions aside, so objects written for
  scheduler-plugins apply unchanged (when its CRDs are at ../shared/scheduler-plugins).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from eventsched.cluster.kube.access import REQUIRED_ACCESS
from eventsched.model.customkinds import CUSTOM_KINDS, CustomKind
from eventsched.plugins import full_registry
from eventsched.plugins.registry import CUSTOM_KIND_DECLARATIONS
from tests.deploy.test_manifests import DEPLOY, KUSTOMIZATION, ROOT

CRDS = DEPLOY / "crds"
CHART_CRDS = DEPLOY / "charts" / "eventsched" / "crds"
#: scheduler-plugins v0.28.9's CRDs, as tests/differential/schedplugins/record.py finds them.
UPSTREAM_CRDS = ROOT.parent / "shared" / "scheduler-plugins" / "crds"


def declared() -> list[CustomKind[Any]]:
    return [CUSTOM_KINDS[kind] for kind in CUSTOM_KIND_DECLARATIONS]


def crd(kind: CustomKind[Any]) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((ROOT / kind.crd_file).read_text())
    return loaded


def test_every_kind_a_plugin_reads_is_declared_and_loads_as_named() -> None:
    registry = full_registry()
    read = registry.custom_kinds(list(registry))
    assert read == set(CUSTOM_KIND_DECLARATIONS) == set(CUSTOM_KINDS)
    for kind in CUSTOM_KIND_DECLARATIONS:
        assert CUSTOM_KINDS[kind].kind == kind


@pytest.mark.parametrize("kind", list(CUSTOM_KIND_DECLARATIONS))
def test_a_declaration_is_its_crd_files(kind: str) -> None:
    custom = CUSTOM_KINDS[kind]
    spec = crd(custom)["spec"]
    assert spec["group"] == custom.group
    assert spec["names"]["plural"] == custom.plural
    assert spec["names"]["kind"] == custom.kind
    assert spec["scope"] == ("Namespaced" if custom.namespaced else "Cluster")
    served = [v["name"] for v in spec["versions"] if v.get("served")]
    assert custom.version in served


@pytest.mark.parametrize("kind", list(CUSTOM_KIND_DECLARATIONS))
def test_a_crd_is_one_file_for_kustomize_and_the_chart(kind: str) -> None:
    file = ROOT / CUSTOM_KINDS[kind].crd_file
    assert file.parent == CRDS and file.is_file() and not file.is_symlink()
    assert file.name in yaml.safe_load((CRDS / KUSTOMIZATION).read_text())["resources"]
    linked = CHART_CRDS / file.name
    assert linked.is_symlink() and linked.resolve() == file.resolve()


def test_the_chart_ships_only_declared_crds() -> None:
    assert sorted(p.name for p in CHART_CRDS.iterdir()) == sorted(
        Path(k.crd_file).name for k in declared()
    )


@pytest.mark.parametrize("kind", list(CUSTOM_KIND_DECLARATIONS))
def test_rbac_lets_the_informer_list_and_watch(kind: str) -> None:
    custom = CUSTOM_KINDS[kind]
    granted = {
        (a.api_group, a.resource, verb)
        for a in REQUIRED_ACCESS
        if not a.own_namespace
        for verb in a.verbs
    }
    assert {
        (custom.group, custom.plural, "list"),
        (custom.group, custom.plural, "watch"),
    } <= granted


def without_descriptions(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_descriptions(v) for k, v in value.items() if k != "description"}
    if isinstance(value, list):
        return [without_descriptions(v) for v in value]
    return value


@pytest.mark.skipif(not UPSTREAM_CRDS.is_dir(), reason=f"no {UPSTREAM_CRDS}")
@pytest.mark.parametrize("kind", list(CUSTOM_KIND_DECLARATIONS))
def test_the_schema_is_scheduler_plugins(kind: str) -> None:
    custom = CUSTOM_KINDS[kind]
    upstream = yaml.safe_load((UPSTREAM_CRDS / f"{custom.group}_{custom.plural}.yaml").read_text())
    ours = crd(custom)
    assert ours["metadata"]["name"] == upstream["metadata"]["name"]
    assert ours["spec"]["names"] == upstream["spec"]["names"]
    assert without_descriptions(ours["spec"]["versions"]) == without_descriptions(
        upstream["spec"]["versions"]
    )
