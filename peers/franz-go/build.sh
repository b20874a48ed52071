#!/usr/bin/env bash
# Build stickyproof's franz-go harness against a local franz-go source tree (unreleased code).
#
#   peers/franz-go/build.sh FRANZ_GO_CHECKOUT
#
# Released versions need no script: `--assignor franz-go:NAME@VERSION` builds the harness from the
# Go module proxy on first use and caches it (stickyproof.peers.franz_go). This script builds the
# same harness (main.go, go.mod here) in a temporary copy whose go.mod replaces franz-go and its
# kmsg module with the checkout; the checkout is not touched. franz-go's third-party requirements
# (compression) come from the module proxy, or from the module cache when it holds them.
#
# Output: ${STICKYPROOF_PEERS_DIR:-<repo>/.peers}/franz-go/ with the binary and manifest.json
# (peers/README.md). Use it with `--assignor 'exec:<binary> -balancer sticky'`.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
die() { echo "franz-go build: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: $0 FRANZ_GO_CHECKOUT"
src="$(cd "$1" 2>/dev/null && pwd)" || die "no such directory: $1"
[ -f "$src/go.mod" ] && grep -q '^module github.com/twmb/franz-go$' "$src/go.mod" \
  || die "$src is not a franz-go checkout (no go.mod declaring module github.com/twmb/franz-go)"
[ -f "$src/pkg/kmsg/go.mod" ] || die "$src has no pkg/kmsg/go.mod"
command -v go >/dev/null 2>&1 || die "go is not on PATH"

out="${STICKYPROOF_PEERS_DIR:-$root/.peers}/franz-go"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
started=$(date +%s)

tree="$(mktemp -d "${TMPDIR:-/tmp}/stickyproof-franz-go.XXXXXX")"
trap 'rm -rf "$tree"' EXIT
cp "$here/main.go" "$here/go.mod" "$tree/"
export GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0
binary="$out/stickyproof-franz-go-peer"
(
  cd "$tree"
  go mod edit -replace "github.com/twmb/franz-go=$src" -replace "github.com/twmb/franz-go/pkg/kmsg=$src/pkg/kmsg"
  go mod tidy
  go build -trimpath -o "$binary.tmp" .
) || die "go build failed (above)"
mv "$binary.tmp" "$binary"

commit="" describe=""
if git -C "$src" rev-parse HEAD >/dev/null 2>&1; then
  commit="$(git -C "$src" rev-parse HEAD)"
  describe="$(git -C "$src" describe --tags --match 'v[0-9]*' --always 2>/dev/null || true)"
fi
seconds=$(( $(date +%s) - started ))
python3 - "$out/manifest.json" "$binary" "$src" "$commit" "$describe" "$(go env GOVERSION)" "$seconds" <<'PY'
import json, os, sys, time
path, binary, src, commit, describe, goversion, seconds = sys.argv[1:]
doc = {
    "format": "stickyproof.peer-manifest/1",
    "peer": "franz-go",
    "protocol": "assignor/1",
    "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    "build_seconds": int(seconds),
    "source": {"kind": "checkout", "path": src, "commit": commit or None, "describe": describe or None},
    "toolchain": goversion,
    "binary_bytes": os.path.getsize(binary),
    "assignors": {name: [binary, "-balancer", name] for name in ("sticky", "cooperative-sticky", "range", "roundrobin")},
}
with open(path + ".tmp", "w") as f:
    json.dump(doc, f, indent=2)
    f.write("\n")
os.replace(path + ".tmp", path)
PY
echo "franz-go build: $binary ($(du -h "$binary" | cut -f1)), manifest $out/manifest.json, ${seconds}s" >&2
