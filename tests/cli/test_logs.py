"""Logging follows sys.stderr as it is when a line is written, not when it was configured."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import structlog
import urllib3
import yaml

from eventsched.cluster.kube import ClientConnection, api_client
from eventsched.logs import configure_logging


def test_a_swapped_and_closed_stderr_does_not_break_later_logging(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = io.StringIO()
    monkeypatch.setattr(sys, "stderr", first)
    configure_logging("json", "info")
    first.close()  # what pytest does to a test's captured stream
    second = io.StringIO()
    monkeypatch.setattr(sys, "stderr", second)
    structlog.get_logger("t").warning("still here", n=1)
    assert '"event": "still here"' in second.getvalue()


def test_python_warnings_are_structured_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    configure_logging("json", "info")
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn("a library says so", UserWarning, stacklevel=1)
    lines = stream.getvalue().splitlines()
    assert lines, "the warning was not logged"
    record = json.loads(lines[-1])
    assert record["level"] == "warning" and record["logger"] == "py.warnings"
    assert "a library says so" in record["event"]


def test_an_insecure_kubeconfig_is_said_once_and_urllib3_stays_quiet(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Every unverified request would print urllib3's InsecureRequestWarning between the
    JSON lines; the client says it once, structured, and urllib3 says nothing more."""
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    configure_logging("json", "info")
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {
                        "name": "c",
                        "cluster": {
                            "server": "https://127.0.0.1:6443",
                            "insecure-skip-tls-verify": True,
                        },
                    }
                ],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        api_client(ClientConnection(kubeconfig=str(kubeconfig)))
        api_client(ClientConnection(kubeconfig=str(kubeconfig)))
        warnings.warn("unverified", urllib3.exceptions.InsecureRequestWarning, stacklevel=1)
    said = [json.loads(line) for line in stream.getvalue().splitlines()]
    insecure = [r for r in said if "TLS verification" in r["event"]]
    assert len(insecure) <= 1  # once per process: an earlier test may have said it
    assert not [
        w for w in caught if issubclass(w.category, urllib3.exceptions.InsecureRequestWarning)
    ]


def test_lines_logged_from_many_threads_stay_whole_json_lines() -> None:
    """print() wrote the message and the newline in two writes: under eight threads a few
    lines in a thousand came out as two records on one line followed by an empty one."""
    program = """
import threading, structlog
from eventsched.logs import configure_logging
configure_logging("json", "info")
log = structlog.get_logger("t")
def work(i):
    for n in range(3000):
        log.warning("concurrent line", thread=i, n=n)
threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
for t in threads: t.start()
for t in threads: t.join()
"""
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=True
    )
    lines = done.stderr.split("\n")
    assert lines[-1] == ""
    records = [json.loads(line) for line in lines[:-1]]  # every line one whole record
    assert len(records) == 8 * 3000
