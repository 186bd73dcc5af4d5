"""A plain kubeconfig, or the pod's service account, read without the official client.

`import kubernetes` costs 0.09-0.14 s of CPU at every start: the package imports
every API group, pydantic and the OAuth libraries. That is a tenth of what a start
spends before its first Binding at 500 nodes. The scheduler's own requests
(`rest.py`) need only the server, the CA that verifies it, a client certificate
and a bearer token.

`plain_kubeconfig` and `plain_in_cluster` read those when that is all the
source holds, as the official loader reads them. Anything else returns None,
and the official client's loader reads the source and words any error, as
before. That covers exec plugins, auth providers, proxies, usernames and
passwords, token files, inline client certificates, several files in
$KUBECONFIG, and a missing or malformed entry.
"""

from __future__ import annotations

import base64
import binascii
import os
import threading
from dataclasses import dataclass, field
from typing import Any, Protocol

import structlog
import yaml

log = structlog.get_logger(__name__)

#: What a plain kubeconfig's entries may hold (every other key is the official loader's).
CONTEXT_KEYS = frozenset({"cluster", "user", "namespace", "extensions"})
CLUSTER_KEYS = frozenset(
    {
        "server",
        "certificate-authority",
        "certificate-authority-data",
        "insecure-skip-tls-verify",
        "tls-server-name",
        "extensions",
    }
)
USER_KEYS = frozenset({"token", "client-certificate", "client-key", "extensions"})

SERVICE_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token"
SERVICE_CA = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"


class ApiConfiguration(Protocol):
    """What `rest.py` reads of a configuration: the official client's `Configuration`,
    or a `PlainConfiguration`."""

    host: str
    verify_ssl: bool
    connection_pool_maxsize: int

    def auth_settings(self) -> Any: ...


@dataclass(slots=True)
class PlainConfiguration:
    """The official `Configuration`'s fields that a plain source sets, and its
    `auth_settings()` answer."""

    host: str
    verify_ssl: bool = True
    #: The CA as a file, or as PEM text (a kubeconfig's certificate-authority-data).
    ssl_ca_cert: str | None = None
    ca_cert_data: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    tls_server_name: str | None = None
    connection_pool_maxsize: int = 32
    token: str | None = None
    #: Read again at each `auth_settings()`: a service account's token rotates (rest.py
    #: asks at most once a minute, as the official client refreshes it).
    token_file: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def auth_settings(self) -> dict[str, dict[str, str]]:
        token = self._current_token()
        if not token:
            return {}
        value = f"Bearer {token}"
        return {
            "BearerToken": {
                "type": "api_key",
                "in": "header",
                "key": "authorization",
                "value": value,
            }
        }

    def _current_token(self) -> str | None:
        if self.token_file is None:
            return self.token
        with self._lock:
            try:
                with open(self.token_file, encoding="utf-8") as f:
                    read = f.read().strip()
            except OSError as exc:
                if self.token is not None:  # at the first read, the official loader says why
                    log.warning("cannot read the service account token again", error=str(exc))
                return self.token
            if read:
                self.token = read
            return self.token


def plain_kubeconfig(path: str, context: str = "") -> PlainConfiguration | None:
    """The configuration `path` gives for `context` (else its current context), when it is
    one file with a server, a CA, a client certificate and a token at most; else None."""
    if not path or os.pathsep in path:
        return None
    try:
        with open(path, "rb") as f:
            doc = yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (OSError, yaml.YAMLError):
        return None
    if not isinstance(doc, dict):
        return None
    contexts = _entry(doc, "contexts", context or doc.get("current-context"), "context")
    if contexts is None or not set(contexts) <= CONTEXT_KEYS:
        return None
    cluster = _entry(doc, "clusters", contexts.get("cluster"), "cluster")
    user = _entry(doc, "users", contexts["user"], "user") if "user" in contexts else {}
    if cluster is None or user is None:
        return None
    if not set(cluster) <= CLUSTER_KEYS or not set(user) <= USER_KEYS:
        return None
    return _configuration(cluster, user, os.path.abspath(os.path.dirname(path)))


def plain_in_cluster(environ: dict[str, str] | None = None) -> PlainConfiguration | None:
    """The pod's service account, as the official in-cluster loader reads it; None when
    anything is missing (the official loader then says what)."""
    env = os.environ if environ is None else environ
    host, port = env.get("KUBERNETES_SERVICE_HOST", ""), env.get("KUBERNETES_SERVICE_PORT", "")
    if not host or not port or not os.path.isfile(SERVICE_CA):
        return None
    configuration = PlainConfiguration(
        host=f"https://{_join_host_port(host, port)}",
        ssl_ca_cert=SERVICE_CA,
        token_file=SERVICE_TOKEN,
    )
    return configuration if configuration._current_token() else None


def _entry(doc: dict[str, Any], key: str, name: object, inner: str) -> dict[str, Any] | None:
    """The `inner` map of the one entry of list `key` named `name`; None if not exactly one."""
    entries = doc.get(key)
    if not isinstance(name, str) or not name or not isinstance(entries, list):
        return None
    found = [e for e in entries if isinstance(e, dict) and e.get("name") == name]
    if len(found) != 1:
        return None
    value = found[0].get(inner)
    return value if isinstance(value, dict) else None


def _configuration(
    cluster: dict[str, Any], user: dict[str, Any], base: str
) -> PlainConfiguration | None:
    server, token = cluster.get("server"), user.get("token")
    if not isinstance(server, str) or not server.startswith(("https://", "http://")):
        return None
    if token is not None and (not isinstance(token, str) or not token):
        return None
    configuration = PlainConfiguration(host=server.rstrip("/"), token=token)
    if "insecure-skip-tls-verify" in cluster:
        insecure = cluster["insecure-skip-tls-verify"]
        if not isinstance(insecure, bool):
            return None
        configuration.verify_ssl = not insecure
    if "tls-server-name" in cluster:
        if not isinstance(cluster["tls-server-name"], str):
            return None
        configuration.tls_server_name = cluster["tls-server-name"]
    if not configuration.host.startswith("https"):
        return configuration  # the official loader reads no certificate for plain HTTP
    return _with_certificates(configuration, cluster, user, base)


def _with_certificates(
    configuration: PlainConfiguration, cluster: dict[str, Any], user: dict[str, Any], base: str
) -> PlainConfiguration | None:
    """The CA (its data preferred to its file, as the official loader has it) and the
    client certificate's files, which must exist."""
    if "certificate-authority-data" in cluster:
        pem = _decoded(cluster["certificate-authority-data"])
        if pem is None:
            return None
        configuration.ca_cert_data = pem
    elif "certificate-authority" in cluster:
        configuration.ssl_ca_cert = _existing(cluster["certificate-authority"], base)
        if configuration.ssl_ca_cert is None:
            return None
    for key, attribute in (("client-certificate", "cert_file"), ("client-key", "key_file")):
        if key in user:
            found = _existing(user[key], base)
            if found is None:
                return None
            setattr(configuration, attribute, found)
    return configuration


def _decoded(data: object) -> str | None:
    if not isinstance(data, str) or not data:
        return None
    try:
        pem = base64.b64decode(data, validate=True).decode("ascii")
    except (binascii.Error, ValueError):
        return None
    return pem or None


def _existing(name: object, base: str) -> str | None:
    if not isinstance(name, str) or not name:
        return None
    path = os.path.normpath(os.path.join(base, name))
    return path if os.path.isfile(path) else None


def _join_host_port(host: str, port: str) -> str:
    """Go's net.JoinHostPort: an IPv6 address in brackets."""
    return f"[{host}]:{port}" if ":" in host or "%" in host else f"{host}:{port}"
