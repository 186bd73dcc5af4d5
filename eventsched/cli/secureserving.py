"""kube-scheduler's secure serving flags: the HTTPS port, its certificate, the client CA.

As k8s.io/apiserver's SecureServingOptions in kube-scheduler: `--secure-port` (10259;
0 serves no HTTPS), `--bind-address` (0.0.0.0), `--tls-cert-file` and
`--tls-private-key-file`, else a self-signed certificate made at start for localhost
and 127.0.0.1 (kept in memory, or in `--cert-dir` as eventsched.crt and eventsched.key,
and read from there on the next start, as upstream's PairName files). `--client-ca-file`:
client certificates signed by it authenticate as their CN (DelegatingAuthenticationOptions).

Each file is checked before anything starts: one line naming the flag, exit 2.
"""

from __future__ import annotations

import argparse
import datetime
import os
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path

from eventsched._httpguard import ALWAYS_ALLOW_PATHS

#: kube-scheduler's secure port (DefaultKubeSchedulerPort).
DEFAULT_SECURE_PORT = 10259
#: The pair's file names in --cert-dir (upstream's PairName is kube-scheduler).
PAIR_NAME = "eventsched"


class ServingFlagError(ValueError):
    """A serving flag whose value cannot be used; the message names the flag."""


@dataclass(frozen=True, slots=True)
class SecureServing:
    bind_address: str
    port: int
    context: ssl.SSLContext
    always_allow_paths: tuple[str, ...]

    @property
    def address(self) -> str:
        host = self.bind_address
        return f"[{host}]:{self.port}" if ":" in host else f"{host}:{self.port}"


def add_arguments(
    p: argparse.ArgumentParser,
    default_port: int = DEFAULT_SECURE_PORT,
    always_allow_paths: tuple[str, ...] = ALWAYS_ALLOW_PATHS,
) -> None:
    g = p.add_argument_group("secure serving (as kube-scheduler's)")
    g.add_argument(
        "--secure-port",
        type=int,
        default=default_port,
        metavar="PORT",
        help=f"serve HTTPS with authentication and authorization on this port "
        f"(default {default_port}; 0: no HTTPS)",
    )
    g.add_argument(
        "--bind-address",
        default="0.0.0.0",
        metavar="IP",
        help="the address to listen on for --secure-port (default 0.0.0.0)",
    )
    g.add_argument(
        "--tls-cert-file",
        metavar="FILE",
        help="the serving certificate (PEM, the chain after it); without it, a self-signed "
        "certificate is made at start",
    )
    g.add_argument("--tls-private-key-file", metavar="FILE", help="its private key (PEM)")
    g.add_argument(
        "--cert-dir",
        metavar="DIR",
        default="",
        help=f"keep the self-signed certificate here ({PAIR_NAME}.crt, {PAIR_NAME}.key) and "
        "reuse it; ignored with --tls-cert-file (default: kept in memory)",
    )
    g.add_argument(
        "--client-ca-file",
        metavar="FILE",
        help="accept client certificates signed by these authorities, as the user of their "
        "CN in the groups of their O",
    )
    g.add_argument(
        "--authorization-always-allow-paths",
        default=",".join(always_allow_paths),
        metavar="PATHS",
        help="comma-separated paths served without authorization, anonymous requests "
        f"included; PATH* a prefix (default {','.join(always_allow_paths)})",
    )


def add_serving_arguments(p: argparse.ArgumentParser) -> None:
    """The secure serving flags and the plain-HTTP `--http-address` (cli/listeners.py)."""
    add_arguments(p)
    p.add_argument(
        "--http-address",
        default=None,
        metavar="HOST:PORT",
        help="also serve /healthz, /readyz and /metrics here over plain HTTP, to anyone "
        "(off unless given; kube-scheduler has no such port)",
    )


def secure_serving(args: argparse.Namespace) -> SecureServing | None:
    """The HTTPS listener the flags ask for (None for --secure-port 0), its TLS context
    loaded: the files' problems are raised here, before anything starts."""
    port = args.secure_port
    if not 0 <= port <= 65535:
        raise ServingFlagError(f"--secure-port {port}: must be between 0 and 65535")
    if port == 0:
        return None
    context = server_context(args.tls_cert_file, args.tls_private_key_file, args.cert_dir)
    if args.client_ca_file:
        load_client_ca(context, args.client_ca_file)
    paths = tuple(p.strip() for p in args.authorization_always_allow_paths.split(",") if p.strip())
    return SecureServing(args.bind_address.strip("[]") or "0.0.0.0", port, context, paths)


def server_context(cert_file: str | None, key_file: str | None, cert_dir: str) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2  # upstream's default minimum
    if bool(cert_file) != bool(key_file):
        given, missing = (
            ("--tls-cert-file", "--tls-private-key-file")
            if cert_file
            else ("--tls-private-key-file", "--tls-cert-file")
        )
        raise ServingFlagError(f"{given} needs {missing} too")
    if cert_file and key_file:
        check_certificate(cert_file, "--tls-cert-file")
        _load_pair(context, cert_file, key_file)
    elif cert_dir:
        crt, key = Path(cert_dir) / f"{PAIR_NAME}.crt", Path(cert_dir) / f"{PAIR_NAME}.key"
        if not (crt.is_file() and key.is_file()):
            try:
                Path(cert_dir).mkdir(parents=True, exist_ok=True)
                _write_self_signed(crt, key)
            except OSError as exc:
                raise ServingFlagError(f"--cert-dir {cert_dir}: {exc.strerror or exc}") from None
        check_certificate(str(crt), "--cert-dir")
        _load_pair(context, str(crt), str(key), flag="--cert-dir")
    else:
        with tempfile.TemporaryDirectory(prefix="eventsched-cert-") as tmp:
            crt, key = Path(tmp) / "tls.crt", Path(tmp) / "tls.key"
            _write_self_signed(crt, key)
            context.load_cert_chain(crt, key)
    return context


def load_client_ca(context: ssl.SSLContext, path: str) -> None:
    if not os.path.isfile(path):
        raise ServingFlagError(f"--client-ca-file {path}: no such file")
    try:
        context.load_verify_locations(cafile=path)
    except (ssl.SSLError, OSError, ValueError) as exc:
        raise ServingFlagError(
            f"--client-ca-file {path}: not a PEM certificate authority ({_ssl_reason(exc)})"
        ) from None
    context.verify_mode = ssl.CERT_OPTIONAL  # a client without a certificate may bring a token


def check_certificate(path: str, flag: str) -> None:
    """A readable PEM certificate valid now, else one line naming `flag`."""
    from cryptography import x509

    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ServingFlagError(f"{flag} {path}: {exc.strerror or exc}") from None
    try:
        certificate = x509.load_pem_x509_certificates(data)[0]
    except ValueError:
        raise ServingFlagError(f"{flag} {path}: not a PEM certificate") from None
    now = datetime.datetime.now(datetime.UTC)
    if certificate.not_valid_after_utc < now:
        expired = certificate.not_valid_after_utc.strftime("%Y-%m-%dT%H:%M:%SZ")
        raise ServingFlagError(f"{flag} {path}: the certificate expired at {expired}")
    if certificate.not_valid_before_utc > now:
        start = certificate.not_valid_before_utc.strftime("%Y-%m-%dT%H:%M:%SZ")
        raise ServingFlagError(f"{flag} {path}: the certificate is not valid before {start}")


def _load_pair(
    context: ssl.SSLContext, cert_file: str, key_file: str, flag: str = "--tls-private-key-file"
) -> None:
    if not os.path.isfile(key_file):
        raise ServingFlagError(f"{flag} {key_file}: no such file")
    try:
        context.load_cert_chain(cert_file, key_file)
    except (ssl.SSLError, OSError, ValueError) as exc:
        raise ServingFlagError(
            f"{flag} {key_file}: not the private key of {cert_file} ({_ssl_reason(exc)})"
        ) from None


def _ssl_reason(exc: BaseException) -> str:
    if isinstance(exc, ssl.SSLError) and exc.reason:
        return str(exc.reason).lower().replace("_", " ")
    return str(exc)


def _write_self_signed(crt: Path, key: Path) -> None:
    """A certificate for localhost and 127.0.0.1, valid a year, as upstream's
    MaybeDefaultWithSelfSignedCerts("localhost", nil, [127.0.0.1]) makes (upstream signs
    it with a CA made beside it; here it signs itself)."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    private = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"localhost@{int(now.timestamp())}")])
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(private.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(days=365))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(private, hashes.SHA256())
    )
    key.touch(mode=0o600)
    key.write_bytes(
        private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    crt.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
