"""The Dockerfile, built for real with buildah and run with podman as deploy/ runs it.

No container registry is reachable from the machines this suite runs on, so
`python:3.11-slim` cannot be pulled. The Dockerfile takes its base as a build
argument (`ARG BASE=python:3.11-slim`); this test passes a local stand-in:
Debian bookworm's minbase root filesystem made with debootstrap from the apt
mirror the machine already uses, plus `python3` and a virtualenv at
/opt/python whose `bin/` is first on PATH (what python:3.11-slim offers: Python
3.11 and `pip` on PATH, `groupadd`, `useradd`). It is imported into podman's
storage as `localhost/eventsched-test-base:bookworm-<hash of the recipe>` once
per machine (about a minute) and reused by every later run; `podman rmi` it to
make it again.

pip inside the build installs the wheel's dependencies from PyPI. The
stand-in's pip trusts the system CA bundle (`PIP_CERT`), and the build
bind-mounts the host's bundle over it, so a TLS-intercepting egress proxy the
host trusts is trusted during the build and not baked into any image.

The built image then runs as the Deployment in deploy/base runs it: the
Deployment's runAsUser/runAsGroup, a read-only root filesystem with a tmpfs at
/tmp only, no capabilities, no privilege escalation, no network.

What this sandbox needs (found by trying, kept here rather than in global
config): `buildah bud --isolation chroot` (the default OCI isolation runs crun,
which refuses the machine's hybrid cgroup v1/v2 layout: "cgroups in hybrid mode
not supported, drop all controllers from cgroupv2"); `podman --runtime runc`
for the same reason when runc is installed; and explicit `--ulimit` values at
or below the host's, because without CAP_SYS_RESOURCE the runtime cannot set
podman's default RLIMIT_NOFILE/RLIMIT_NPROC ("setrlimit `RLIMIT_NOFILE`:
Operation not permitted").

Needs root and Debian's `buildah`, `podman`, `runc` and `debootstrap`
(`bash .ci/run` installs them); skipped only when buildah or podman is absent.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import secrets
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

import eventsched

ROOT = Path(__file__).resolve().parents[2]
DEPLOYMENT = ROOT / "deploy" / "base" / "deployment.yaml"

pytestmark = pytest.mark.skipif(
    not (shutil.which("buildah") and shutil.which("podman")),
    reason="buildah and podman are needed to build and run the image: "
    "apt-get install buildah podman runc debootstrap",
)

#: The stand-in base: packages debootstrap adds to minbase, and what is done in the chroot.
BASE_SUITE = "bookworm"
BASE_PACKAGES = ("python3", "python3-venv", "ca-certificates")
BASE_VENV = "/opt/python"
BASE_CHANGES = (
    f"ENV PATH={BASE_VENV}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "ENV LANG=C.UTF-8",
    "ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt",
    'CMD ["python3"]',
)
#: Removed from the root filesystem before it is imported.
BASE_PRUNE = (
    "var/cache/apt/archives",
    "var/lib/apt/lists",
    "usr/share/doc",
    "usr/share/man",
    "usr/share/info",
)
DEFAULT_MIRROR = "http://deb.debian.org/debian"
HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")

#: Below the host's hard limits: the runtime cannot raise them (no CAP_SYS_RESOURCE).
ULIMITS = ("--ulimit", "nofile=4096:4096", "--ulimit", "nproc=4096:4096")


def run(*cmd: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, (
        f"{' '.join(cmd)} exited {proc.returncode}\n"
        f"stdout:\n{proc.stdout[-4000:]}\nstderr:\n{proc.stderr[-4000:]}"
    )
    return proc


def podman(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    runtime = ("--runtime", "runc") if shutil.which("runc") else ()
    return run("podman", *runtime, *args, timeout=timeout)


def image_exists(name: str) -> bool:
    return subprocess.run(["podman", "image", "exists", name], capture_output=True).returncode == 0


def apt_mirror(suite: str = BASE_SUITE) -> str:
    """The Debian mirror apt already uses for `suite`, from /etc/apt/sources.list*."""
    files = [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]
    for path in files:
        if not path.is_file():
            continue
        text = path.read_text(errors="replace")
        if path.suffix == ".sources":
            for stanza in re.split(r"\n\s*\n", text):
                fields = dict(
                    (k.strip().lower(), v.strip())
                    for k, _, v in (
                        ln.partition(":")
                        for ln in stanza.splitlines()
                        if ":" in ln and not ln.startswith("#")
                    )
                )
                if (
                    "deb" in fields.get("types", "").split()
                    and suite in fields.get("suites", "").split()
                ):
                    return fields["uris"].split()[0]
        else:
            for line in text.splitlines():
                words = re.sub(r"\[[^]]*\]", "", line.split("#", 1)[0]).split()
                if len(words) >= 3 and words[0] == "deb" and words[2] == suite:
                    return words[1]
    return DEFAULT_MIRROR


def base_tag() -> str:
    recipe = json.dumps([BASE_SUITE, BASE_PACKAGES, BASE_VENV, BASE_CHANGES, BASE_PRUNE])
    return f"localhost/eventsched-test-base:{BASE_SUITE}-{hashlib.sha256(recipe.encode()).hexdigest()[:12]}"


def make_base(tag: str, workdir: Path) -> None:
    """Debootstrap the stand-in for python:3.11-slim and import it as `tag`."""
    assert os.geteuid() == 0, "building the base root filesystem needs root (debootstrap)"
    assert shutil.which("debootstrap"), "debootstrap is needed: apt-get install debootstrap"
    rootfs = workdir / "rootfs"
    run(
        "debootstrap",
        "--variant=minbase",
        f"--include={','.join(BASE_PACKAGES)}",
        BASE_SUITE,
        str(rootfs),
        apt_mirror(),
        timeout=1200,
    )
    run("chroot", str(rootfs), "python3", "-m", "venv", BASE_VENV)
    for sub in BASE_PRUNE:
        for child in (rootfs / sub).glob("*"):
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()
    archive = workdir / "rootfs.tar"
    run("tar", "--numeric-owner", "-C", str(rootfs), "-cf", str(archive), ".")
    changes = [arg for change in BASE_CHANGES for arg in ("--change", change)]
    run("podman", "import", *changes, str(archive), tag)


@pytest.fixture(scope="module")
def base_image(tmp_path_factory: pytest.TempPathFactory) -> str:
    tag = base_tag()
    if not image_exists(tag):
        make_base(tag, tmp_path_factory.mktemp("base"))
    return tag


@pytest.fixture(scope="module")
def image(base_image: str) -> Iterator[str]:
    """The Dockerfile built on the stand-in base, removed again at the end."""
    tag = f"localhost/eventsched-test:{secrets.token_hex(4)}"
    mounts = (
        ("--volume", f"{HOST_CA_BUNDLE}:{HOST_CA_BUNDLE}:ro") if HOST_CA_BUNDLE.is_file() else ()
    )
    try:
        run(
            "buildah",
            "bud",
            "--isolation",
            "chroot",
            "--network",
            "host",
            "--pull=never",
            "--no-cache",
            "--force-rm",
            *mounts,
            "--build-arg",
            f"BASE={base_image}",
            "--tag",
            tag,
            "--file",
            str(ROOT / "Dockerfile"),
            str(ROOT),
            timeout=900,
        )
        yield tag
    finally:
        subprocess.run(["podman", "rmi", "--force", tag], capture_output=True)


def deployment_security() -> dict[str, object]:
    """The scheduler container's securityContext in deploy/base/deployment.yaml."""
    (deployment,) = [d for d in yaml.safe_load_all(DEPLOYMENT.read_text()) if d]
    (container,) = [
        c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == "eventsched"
    ]
    return container["securityContext"]


def run_as_deployed(image: str, *args: str, entrypoint: str | None = None) -> str:
    sec = deployment_security()
    assert sec["readOnlyRootFilesystem"] is True
    assert sec["allowPrivilegeEscalation"] is False
    assert sec["capabilities"] == {"drop": ["ALL"]}
    proc = podman(
        "run",
        "--rm",
        "--network",
        "none",
        "--read-only",
        "--read-only-tmpfs=false",
        "--tmpfs",
        "/tmp",
        "--user",
        f"{sec['runAsUser']}:{sec['runAsGroup']}",
        "--cap-drop",
        "ALL",
        "--security-opt",
        "no-new-privileges",
        *ULIMITS,
        *(("--entrypoint", entrypoint) if entrypoint else ()),
        image,
        *args,
        timeout=120,
    )
    return proc.stdout


def test_image_runs_eventsched_non_root_on_a_read_only_root(image: str) -> None:
    sec = deployment_security()
    config = json.loads(podman("image", "inspect", image).stdout)[0]["Config"]
    assert config["User"] == f"{sec['runAsUser']}:{sec['runAsGroup']}"
    assert config["Entrypoint"] == ["eventsched"]

    assert run_as_deployed(image, "--version").strip() == f"eventsched {eventsched.__version__}"

    probe = (
        "import errno, json, os\n"
        "try:\n"
        "    open('/probe', 'w')\n"
        "    err = 0\n"
        "except OSError as e:\n"
        "    err = e.errno\n"
        "print(json.dumps({'uid': os.getuid(), 'gid': os.getgid(), 'write_root': err,\n"
        "    'root_ro': bool(os.statvfs('/').f_flag & os.ST_RDONLY)}))\n"
    )
    seen = json.loads(run_as_deployed(image, "-c", probe, entrypoint="python3"))
    assert seen["uid"] != 0
    assert (seen["uid"], seen["gid"]) == (sec["runAsUser"], sec["runAsGroup"])
    assert seen["root_ro"] is True
    assert seen["write_root"] == errno.EROFS

    # The methods of `run`'s dataclasses were compiled when the image was built: none is
    # compiled at a start (and nothing could be written to keep one).
    kept = (
        "from eventsched.cli.main import build_parser\n"
        "build_parser('run')\n"
        "import eventsched.cli.runner, eventsched._dataclasscache as cache\n"
        "installed = cache.install()\n"
        "print(installed.compiled, len(installed.kept))\n"
    )
    compiled, kept_methods = map(
        int, run_as_deployed(image, "-c", kept, entrypoint="python3").split()
    )
    assert compiled == 0
    assert kept_methods > 900

    # What the schema upgrade Job does, in the one writable place: the migrations are in the
    # image and nothing else needs to be written.
    out = run_as_deployed(image, "--db", "sqlite:////tmp/log.db", "db", "upgrade")
    assert re.search(r"is at revision \d+", out), out
