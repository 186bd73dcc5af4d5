"""Certificates for the HTTPS tests: a certificate authority and what it signs."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class Pair:
    crt: Path
    key: Path


def _name(common: str, organization: str = "") -> x509.Name:
    attributes = [x509.NameAttribute(NameOID.COMMON_NAME, common)]
    if organization:
        attributes.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    return x509.Name(attributes)


def _write(
    directory: Path, stem: str, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey
) -> Pair:
    pair = Pair(directory / f"{stem}.crt", directory / f"{stem}.key")
    pair.crt.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    pair.key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return pair


def make_ca(directory: Path, stem: str = "ca") -> Pair:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(f"{stem}-authority"))
        .issuer_name(_name(f"{stem}-authority"))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(key, hashes.SHA256())
    )
    return _write(directory, stem, cert, key)


def issue(
    ca: Pair,
    directory: Path,
    stem: str,
    common_name: str,
    organization: str = "",
    *,
    client: bool = True,
    expired: bool = False,
    dns_name: str = "",
) -> Pair:
    """A certificate `ca` signs: for a client (`client`) or for a server on 127.0.0.1
    (or, with `dns_name`, for that name only)."""
    ca_key = serialization.load_pem_private_key(ca.key.read_bytes(), None)
    assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
    ca_cert = x509.load_pem_x509_certificate(ca.crt.read_bytes())
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    end = now - datetime.timedelta(days=1) if expired else now + datetime.timedelta(days=1)
    usage = ExtendedKeyUsageOID.CLIENT_AUTH if client else ExtendedKeyUsageOID.SERVER_AUTH
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name, organization))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=2))
        .not_valid_after(end)
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    )
    if not client:
        name: x509.GeneralName = (
            x509.DNSName(dns_name)
            if dns_name
            else x509.IPAddress(ipaddress.ip_address("127.0.0.1"))
        )
        builder = builder.add_extension(x509.SubjectAlternativeName([name]), critical=False)
    return _write(directory, stem, builder.sign(ca_key, hashes.SHA256()), key)
