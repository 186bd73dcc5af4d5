"""How `eventsched ui` listens: HTTPS with kube-scheduler's delegated authentication
(the default), or plain HTTP on loopback to anyone (`--insecure-local`).

Over HTTPS the page needs the API server, to review bearer tokens (TokenReview) and
to ask which namespaces' pods each reader may get (SubjectAccessReview): from
`--kubeconfig`, $KUBECONFIG or the pod's service account. Without any, and without
`--insecure-local`, it refuses to start rather than serve the log to anyone.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import socket
from dataclasses import dataclass

from eventsched.cli import secureserving
from eventsched.cli.secureserving import SecureServing, ServingFlagError

#: Where `--insecure-local` listens unless told otherwise.
DEFAULT_LISTEN = "127.0.0.1:8090"
#: The HTTPS port unless told otherwise.
DEFAULT_SECURE_PORT = 8443
#: Served to anyone: the probe and the stylesheet and scripts (no data).
ALWAYS_ALLOW_PATHS = ("/healthz", "/static/*")


def add_arguments(p: argparse.ArgumentParser) -> None:
    secureserving.add_arguments(p, DEFAULT_SECURE_PORT, ALWAYS_ALLOW_PATHS)
    p.add_argument(
        "--kubeconfig",
        metavar="FILE",
        help="kubeconfig of the API server that reviews tokens and access (default: "
        "$KUBECONFIG, else the in-cluster service account)",
    )
    p.add_argument(
        "--insecure-local",
        action="store_true",
        help="serve plain HTTP on a loopback address to anyone, every namespace visible, "
        "with no API server (a laptop's log)",
    )
    p.add_argument(
        "--listen",
        metavar="HOST:PORT",
        help=f"with --insecure-local: the loopback address to serve on (default "
        f"{DEFAULT_LISTEN}; port 0 picks a free one)",
    )


@dataclass(frozen=True, slots=True)
class Plain:
    """`--insecure-local`: plain HTTP on a loopback address."""

    host: str
    port: int
    flag: str


@dataclass(frozen=True, slots=True)
class Secure:
    """HTTPS, readers reviewed by the API server of `kubeconfig` ('': in-cluster)."""

    serving: SecureServing
    kubeconfig: str


def check(args: argparse.Namespace) -> Plain | Secure:
    """The listener the flags ask for, checked before anything starts (one line each)."""
    if args.insecure_local:
        address = args.listen or DEFAULT_LISTEN
        host, port = parse_listen(address)
        if not is_loopback(host):
            raise ServingFlagError(
                f"--listen {address}: --insecure-local serves loopback addresses only "
                "(127.0.0.1, ::1, localhost); serve anything else over HTTPS (drop "
                "--insecure-local, give --kubeconfig)"
            )
        return Plain(host, port, f"--listen {address}")
    if args.listen is not None:
        raise ServingFlagError(
            f"--listen {args.listen}: plain HTTP needs --insecure-local (loopback only); "
            "HTTPS listens on --bind-address and --secure-port"
        )
    kubeconfig = args.kubeconfig or os.environ.get("KUBECONFIG", "")
    if not kubeconfig and not os.environ.get("KUBERNETES_SERVICE_HOST"):
        raise ServingFlagError(
            "the page serves HTTPS and asks the API server who may read which namespace: "
            "give --kubeconfig FILE (or run it in a cluster), or --insecure-local to serve "
            "plain HTTP on loopback to anyone"
        )
    serving = secureserving.secure_serving(args)
    if serving is None:
        raise ServingFlagError(
            "--secure-port 0: the page has no other port; for plain HTTP on loopback give "
            "--insecure-local"
        )
    return Secure(serving, kubeconfig)


def parse_listen(address: str) -> tuple[str, int]:
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ServingFlagError(f"--listen {address!r}: expected HOST:PORT, e.g. 127.0.0.1:8090")
    return host.strip("[]") or "0.0.0.0", int(port)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int, flag: str) -> socket.socket:
    """A listening socket (connections wait in its backlog until uvicorn accepts them)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ServingFlagError(f"{flag}: {exc.strerror or exc}") from None
    sock.listen(2048)
    return sock
