"""Where the Kubernetes binaries a control plane runs come from.

They are not part of eventsched: `kube_binaries()` finds them in a directory given as an
argument or in ``$EVENTSCHED_KUBE_BIN`` (``kube-apiserver`` and optionally
``kube-scheduler``, plain executables or ``NAME.xz``), and etcd on ``PATH`` (Debian's
``etcd-server``). Compressed binaries are decompressed once into the user's cache directory.
"""

from __future__ import annotations

import contextlib
import hashlib
import lzma
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

ENV_VAR = "EVENTSCHED_KUBE_BIN"


@dataclass(frozen=True)
class KubeBinaries:
    apiserver: Path
    etcd: Path
    scheduler: Path | None  # kube-scheduler, when present


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "eventsched" / "kube"


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
        apiserver=apiserver, etcd=Path(etcd), scheduler=find_binary(folder, "kube-scheduler")
    )
