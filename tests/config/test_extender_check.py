"""`extenders[]` refused as kube-scheduler v1.28 refuses them: the same field path, the same
message (its validateExtenders, pkg/scheduler/apis/config/validation/validation.go), and
the two things eventsched refuses beyond it.

Each case is also given to the real kube-scheduler v1.28.0 when $EVENTSCHED_KUBE_BIN has it:
its validation runs before it reads the kubeconfig, so a refused file fails with the
validation's errors and an accepted one with the missing kubeconfig.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from eventsched.benchmarks.kubebinaries import ENV_VAR, find_binary
from eventsched.cli.main import main
from eventsched.config.file import ConfigError, parse_config
from eventsched.plugins import full_registry

REGISTRY = full_registry()
HEAD = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
URL = "http://127.0.0.1:8081/extender"
QUALIFIED = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


def resources(*names: str) -> dict[str, Any]:
    return {"urlPrefix": URL, "managedResources": [{"name": n} for n in names]}


#: (extenders, the first error as kube-scheduler prints it). From upstream's
#: validation_test.go (TestValidateKubeSchedulerConfiguration's extender-* scenarios and
#: the extender cases of its policy test) and the qualified-name rules they run.
REFUSED_BY_BOTH = {
    "weight-zero": (
        [{"urlPrefix": URL, "prioritizeVerb": "prioritize"}],
        "extenders[0].weight: Invalid value: 0: must have a positive weight applied to it",
    ),
    "weight-negative": (
        [{"urlPrefix": URL, "prioritizeVerb": "prioritize", "weight": -2}],
        "extenders[0].weight: Invalid value: -2: must have a positive weight applied to it",
    ),
    "two-binders": (
        [{"urlPrefix": URL, "bindVerb": "bind"}, {"urlPrefix": URL + "2", "bindVerb": "bind"}],
        'extenders: Invalid value: "found 2 extenders implementing bind": '
        "only one extender can implement bind",
    ),
    "duplicate-resource": (
        [resources("foo.com/bar"), {**resources("foo.com/bar"), "bindVerb": "bind"}],
        'extenders[1].managedResources[0].name: Invalid value: "foo.com/bar": '
        "duplicate extender managed resource name",
    ),
    "native-prefix": (
        [resources("kubernetes.io/foo")],
        'extenders[0].managedResources[0].name: Invalid value: "kubernetes.io/foo": '
        "is an invalid extended resource name",
    ),
    "native-subdomain": (
        [resources("x.kubernetes.io/y")],
        'extenders[0].managedResources[0].name: Invalid value: "x.kubernetes.io/y": '
        "is an invalid extended resource name",
    ),
    "no-prefix": (
        [resources("cpu")],
        'extenders[0].managedResources[0].name: Invalid value: "cpu": '
        "is an invalid extended resource name",
    ),
    "requests-prefix": (
        [resources("requests.example.com/x")],
        'extenders[0].managedResources[0].name: Invalid value: "requests.example.com/x": '
        "is an invalid extended resource name",
    ),
    "empty-name-part": (
        [resources("example.com/")],
        "extenders[0].managedResources[0].name: Invalid value: example.com/: "
        "name part must be non-empty",
    ),
    "bad-prefix": (
        [resources("Foo_/bar")],
        "extenders[0].managedResources[0].name: Invalid value: Foo_/bar: prefix part a "
        "lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
        "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
        "regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ),
    "two-slashes": (
        [resources("a/b/c")],
        f"extenders[0].managedResources[0].name: Invalid value: a/b/c: a qualified name "
        f"{QUALIFIED} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ),
    "bad-name-part": (
        [resources("example.com/-x")],
        f"extenders[0].managedResources[0].name: Invalid value: example.com/-x: name part "
        f"{QUALIFIED}",
    ),
    "weight-before-resources": (
        [{**resources("cpu"), "prioritizeVerb": "p"}],
        "extenders[0].weight: Invalid value: 0: must have a positive weight applied to it",
    ),
}

#: What kube-scheduler v1.28 accepts and eventsched refuses, with eventsched's line.
REFUSED_BY_EVENTSCHED = {
    "ftp-url": (
        [{"urlPrefix": "ftp://127.0.0.1/extender", "filterVerb": "filter"}],
        'extenders[0].urlPrefix: Invalid value: "ftp://127.0.0.1/extender": must be an '
        "http:// or https:// URL, e.g. http://127.0.0.1:8888/ (kube-scheduler v1.28 accepts it "
        "and fails every call to it)",
    ),
    "no-host": (
        [{"urlPrefix": "http:///extender", "filterVerb": "filter"}],
        'extenders[0].urlPrefix: Invalid value: "http:///extender": must be an http:// or '
        "https:// URL, e.g. http://127.0.0.1:8888/ (kube-scheduler v1.28 accepts it and fails "
        "every call to it)",
    ),
    "negative-timeout": (
        [{"urlPrefix": URL, "filterVerb": "filter", "httpTimeout": "-5s"}],
        'extenders[0].httpTimeout: Invalid value: "-5s": must not be negative; 0 or none is '
        "the default, 5s (kube-scheduler v1.28 calls such an extender without a time limit)",
    ),
}

#: Accepted by both.
ACCEPTED = {
    "zero-timeout-is-the-default": [{"urlPrefix": URL, "filterVerb": "f", "httpTimeout": "0s"}],
    "weight-without-prioritize": [{"urlPrefix": URL, "filterVerb": "f", "weight": -1}],
    "one-binder-and-resources": [
        {**resources("example.com/foo", "foo.com/bar"), "bindVerb": "bind"},
        resources("example.com/baz"),
    ],
}


def parsed(extenders: list[dict[str, Any]]) -> Any:
    return parse_config({**HEAD, "extenders": extenders}, "c.yaml", REGISTRY)


@pytest.mark.parametrize(
    "case",
    sorted({**REFUSED_BY_BOTH, **REFUSED_BY_EVENTSCHED}.items()),
    ids=lambda c: c[0],
)
def test_refused_with_the_path_and_message(case: tuple[str, Any]) -> None:
    """kube-scheduler's line for what it refuses; eventsched's own for the rest."""
    extenders, line = case[1]
    with pytest.raises(ConfigError) as caught:
        parsed(extenders)
    assert str(caught.value) == f"c.yaml: {line}"


@pytest.mark.parametrize("case", sorted(ACCEPTED.items()), ids=lambda c: c[0])
def test_accepted(case: tuple[str, Any]) -> None:
    config = parsed(case[1])
    assert len(config.extenders) == len(case[1])


def test_a_zero_timeout_is_kube_schedulers_default() -> None:
    (extender,) = parsed(ACCEPTED["zero-timeout-is-the-default"]).extenders
    assert extender.http_timeout == 5.0  # DefaultExtenderTimeout


def test_config_check_prints_one_line_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, REFUSED_BY_BOTH["two-binders"][0])
    assert main(["config", "check", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"eventsched: error: {path}: {REFUSED_BY_BOTH['two-binders'][1]}\n"


# -- the real kube-scheduler -------------------------------------------------------------


def _kube_scheduler() -> Path | None:
    folder = os.environ.get(ENV_VAR)
    return find_binary(Path(folder), "kube-scheduler") if folder else None


needs_kube_scheduler = pytest.mark.skipif(
    _kube_scheduler() is None, reason=f"needs kube-scheduler v1.28 (${ENV_VAR})"
)
#: kube-scheduler's error once the configuration is valid: it reads the kubeconfig next.
NO_KUBECONFIG = "stat /nonexistent: no such file or directory"


def _write(where: Path, extenders: list[dict[str, Any]]) -> Path:
    path = where / "config.yaml"
    document = {
        **HEAD,
        "clientConnection": {"kubeconfig": "/nonexistent"},
        "leaderElection": {"leaderElect": False},
        "extenders": extenders,
    }
    path.write_text(yaml.safe_dump(document))
    return path


def kube_scheduler_error(where: Path, extenders: list[dict[str, Any]]) -> str:
    """What the real kube-scheduler says of a configuration: its "command failed" error."""
    binary = _kube_scheduler()
    assert binary is not None
    done = subprocess.run(
        [str(binary), "--config", str(_write(where, extenders))],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    found = re.search(r'"command failed" err="((?:[^"\\]|\\.)*)"', done.stderr)
    assert found, done.stderr[-2000:]
    return str(json.loads(f'"{found.group(1)}"'))


@needs_kube_scheduler
@pytest.mark.parametrize("case", sorted(REFUSED_BY_BOTH.items()), ids=lambda c: c[0])
def test_kube_scheduler_refuses_it_first_with_the_same_line(
    case: tuple[str, Any], tmp_path: Path
) -> None:
    extenders, line = case[1]
    error = kube_scheduler_error(tmp_path, extenders)
    assert error == line or error.startswith(f"[{line}, "), error


@needs_kube_scheduler
@pytest.mark.parametrize(
    "case",
    sorted({**REFUSED_BY_EVENTSCHED, **ACCEPTED}.items()),
    ids=lambda c: c[0],
)
def test_kube_scheduler_accepts_it(case: tuple[str, Any], tmp_path: Path) -> None:
    value = case[1]
    extenders = value[0] if isinstance(value, tuple) else value
    assert kube_scheduler_error(tmp_path, extenders) == NO_KUBECONFIG
