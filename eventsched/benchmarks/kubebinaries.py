"""Where the Kubernetes binaries a control plane runs come from.

They are not part of eventsched: `kube_binaries()` finds them in a directory given as an
argument or in ``$EVENTSCHED_KUBE_BIN`` (``kube-apiserver`` and optionally
``kube-scheduler`` and ``kube-controller-manager``, plain executables or ``NAME.xz``), and
etcd on ``PATH`` (Debian's ``etcd-server``). Compressed binaries are decompressed once into
the user's cache directory.

`reference_binaries(minor)` finds those of one Kubernetes minor version: v1.28 in
``$EVENTSCHED_KUBE_BIN``, the newer ones where ``tests/reference/build.sh`` builds them
(``$EVENTSCHED_REFERENCE_CACHE``, else the user's cache, ``eventsched/reference/vX.Y.Z``).
"""

from __future__ import annotations

import contextlib
import hashlib
import lzma
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ENV_VAR = "EVENTSCHED_KUBE_BIN"
REFERENCE_ENV_VAR = "EVENTSCHED_REFERENCE_CACHE"
#: The version of the binaries in $EVENTSCHED_KUBE_BIN (../shared/kube in CI).
ENV_VAR_MINOR = "1.28"
_VERSION = re.compile(r"Kubernetes v(\d+)\.(\d+)\.(\d+)")


@dataclass(frozen=True)
class KubeBinaries:
    apiserver: Path
    etcd: Path
    scheduler: Path | None  # kube-scheduler, when present
    #: kube-controller-manager, when present (the reference builds have one).
    controller_manager: Path | None = None

    @property
    def version(self) -> str:
        """kube-apiserver's own version ("v1.37.2"), as `--version` prints it."""
        return binary_version(self.apiserver)

    @property
    def minor(self) -> str:
        """The minor version ("1.37")."""
        return ".".join(self.version.lstrip("v").split(".")[:2])


@cache
def binary_version(binary: Path) -> str:
    """What a Kubernetes binary says of itself with `--version` ("v1.37.2")."""
    done = subprocess.run(
        [str(binary), "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    match = _VERSION.search(done.stdout + done.stderr)
    if match is None:
        raise RuntimeError(f"{binary} --version did not name a Kubernetes version")
    return "v" + ".".join(match.groups())


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "eventsched" / "kube"


def reference_cache() -> Path:
    """Where tests/reference/build.sh puts the binaries it builds."""
    explicit = os.environ.get(REFERENCE_ENV_VAR)
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "eventsched" / "reference"


def _decompressed(xz: Path) -> Path:
    """NAME.xz decompressed into the cache (once per content), executable."""
    digest = hashlib.sha256()
    with xz.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    name = xz.name[: -len(".xz")]
    target = _cache_root() / digest.hexdigest()[:12] / name
    if target.is_file() and os.access(target, os.X_OK):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out, lzma.open(xz, "rb") as src:
            shutil.copyfileobj(src, out, 1 << 20)
        os.chmod(tmp, 0o755)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return target


def find_binary(directory: Path, name: str) -> Path | None:
    """NAME in `directory`: the executable itself, or NAME.xz decompressed into the cache."""
    plain = directory / name
    if plain.is_file() and os.access(plain, os.X_OK):
        return plain
    xz = directory / f"{name}.xz"
    if xz.is_file():
        return _decompressed(xz)
    return None


def kube_binaries(directory: str | Path | None = None) -> KubeBinaries | None:
    """directory, else $EVENTSCHED_KUBE_BIN; None when unset, missing, or etcd is not on PATH.

    Plain executables are used as they are; NAME.xz is decompressed once (lzma, to a temp
    file then rename) into $XDG_CACHE_HOME or ~/.cache /eventsched/kube/<first 12 hex of the
    .xz's sha256>/NAME, chmod +x.
    """
    if directory is None:
        directory = os.environ.get(ENV_VAR) or None
    if directory is None:
        return None
    folder = Path(directory).expanduser()
    if not folder.is_dir():
        return None
    etcd = shutil.which("etcd")
    if etcd is None:
        return None
    apiserver = find_binary(folder, "kube-apiserver")
    if apiserver is None:
        return None
    return KubeBinaries(
        apiserver=apiserver,
        etcd=Path(etcd),
        scheduler=find_binary(folder, "kube-scheduler"),
        controller_manager=find_binary(folder, "kube-controller-manager"),
    )


def reference_binaries(minor: str) -> KubeBinaries | None:
    """The binaries of Kubernetes `minor` ("1.28", "1.34", "1.37"): v1.28's in
    $EVENTSCHED_KUBE_BIN, a newer one's where tests/reference/build.sh built it (the
    newest patch there, only once its build finished); None where they are not."""
    if minor == ENV_VAR_MINOR:
        return kube_binaries()
    built = [
        folder for folder in reference_cache().glob(f"v{minor}.*") if (folder / "STAMP").is_file()
    ]
    if not built:
        return None
    newest = max(built, key=lambda f: tuple(int(p) for p in re.findall(r"\d+", f.name)))
    return kube_binaries(newest)
