#!/usr/bin/env bash
# Build the reference Kubernetes binaries (kube-apiserver, kube-scheduler,
# kube-controller-manager) of one version from the k8s.io/kubernetes Go module, as
# scheduler-plugins builds its kube-scheduler: a module of our own (./vX.Y/go.mod) that
# requires k8s.io/kubernetes at that version and replaces each staging module with its
# published tag.
#
#   tests/reference/build.sh 1.37          # or 1.34; prints the directory of the binaries
#
# The binaries go to $EVENTSCHED_REFERENCE_CACHE (default: $XDG_CACHE_HOME or ~/.cache,
# then eventsched/reference) /vX.Y.Z/, with featuregates.json (kube-scheduler's gates and
# their versioned defaults) and a stamp of what built them (the go.mod, the go.sum, this
# script, featuregates/main.go and `go version`). When the stamp matches, nothing is built.
# The binaries are test material: eventsched never runs them on a user's machine.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
minor="${1:?usage: build.sh MINOR (one of: $(cd "$here" && ls -d v1.* | tr -d v | tr '\n' ' '))}"
minor="${minor#v}"
module="$here/v$minor"
if [[ ! -f "$module/go.mod" ]]; then
  echo "build.sh: no reference module for Kubernetes $minor (have: $(cd "$here" && ls -d v1.* | tr '\n' ' '))" >&2
  exit 2
fi
# The exact version is the one go.mod requires.
version="$(cd "$module" && go list -mod=readonly -m -f '{{.Version}}' k8s.io/kubernetes)"

cache="${EVENTSCHED_REFERENCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/eventsched/reference}"
out="$cache/$version"
commands=(kube-apiserver kube-scheduler kube-controller-manager)

stamp="$( { cat "$module/go.mod" "$module/go.sum" "$here/build.sh" "$here/featuregates/main.go"; go version; } \
  | sha256sum | cut -c1-64)"
built=1
for command in "${commands[@]}"; do [[ -x "$out/$command" ]] || built=0; done
[[ -s "$out/featuregates.json" ]] || built=0
if [[ $built == 1 && -f "$out/STAMP" && "$(cat "$out/STAMP")" == "$stamp" ]]; then
  echo "$out"
  exit 0
fi

# What kube's own build stamps into a release (hack/lib/version.sh): /version answers with
# it, and eventsched reads the cluster's minor version from there.
major="${version#v}"; major="${major%%.*}"
minor_number="${version#v*.}"; minor_number="${minor_number%%.*}"
pkg=k8s.io/component-base/version
ldflags="-s -w \
  -X $pkg.gitVersion=$version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor_number \
  -X $pkg.gitTreeState=clean -X $pkg.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ) \
  -X k8s.io/client-go/pkg/version.gitVersion=$version \
  -X k8s.io/client-go/pkg/version.gitMajor=$major -X k8s.io/client-go/pkg/version.gitMinor=$minor_number"

mkdir -p "$out"
rm -f "$out/STAMP"
start=$(date +%s)
for command in "${commands[@]}"; do
  echo "build.sh: building $command $version into $out" >&2
  (cd "$module" && CGO_ENABLED=0 go build -mod=readonly -trimpath -tags providerless \
    -ldflags "$ldflags" -o "$out/$command.tmp" "k8s.io/kubernetes/cmd/$command")
  mv -f "$out/$command.tmp" "$out/$command"
done
# kube-scheduler's gate table (featuregates/main.go), for tests/reference/make_gate_table.py.
(cd "$module" && CGO_ENABLED=0 go build -mod=readonly -trimpath -o "$out/featuregates" ./featuregates)
"$out/featuregates" >"$out/featuregates.json.tmp"
mv -f "$out/featuregates.json.tmp" "$out/featuregates.json"
echo "$stamp" >"$out/STAMP"
echo "build.sh: built $version in $(( $(date +%s) - start )) s" >&2
echo "$out"
