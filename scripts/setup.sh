#!/usr/bin/env bash
# Set up stickyproof in a project-local virtualenv (.venv) and make sure Java is there for Spark.
# Idempotent: re-installs only when pyproject.toml, setup.py or a compiled port changed. Sourced by scripts/main.sh and scripts/test.sh.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

py="${PYTHON:-python3}"
if ! "$py" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
  echo "stickyproof needs Python >= 3.11 ($py is $("$py" --version 2>&1)); set PYTHON=/path/to/python3.11" >&2
  exit 1
fi
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $("$py" --version)" >&2
  "$py" -m venv .venv
fi
# re-install when the dependencies change, or the KIP-848 ports setup.py compiles (a compiled port
# whose source changed is not used: assignors/consumer/compiled.py)
stamp=".venv/.stamp-$(cat pyproject.toml setup.py src/stickyproof/assignors/consumer/range.py \
  src/stickyproof/assignors/consumer/uniform_h*.py src/stickyproof/assignors/consumer/ports.pxd | sha256sum | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  echo "setup: installing stickyproof and its dependencies into .venv (first run takes a minute)" >&2
  .venv/bin/python -m pip install -q --upgrade pip >&2
  .venv/bin/python -m pip install -q -e '.[dev,peers]' >&2
  # setup.py compiles the KIP-848 ports when it can; say once if they will run as pure Python
  .venv/bin/python -c 'from stickyproof.assignors.consumer.compiled import ports_summary as s; t = s(); t == "compiled" or print("setup: KIP-848 ports:", t)' >&2 || true
  rm -f .venv/.stamp-*
  touch "$stamp"
fi

# Spark needs a Java runtime (17 or 21).
if ! command -v java >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing Java for Spark (openjdk-17-jre-headless)" >&2
    apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >&2
  else
    echo "setup: Spark needs Java: install a JRE 17 (Debian: sudo apt-get install openjdk-17-jre-headless) and re-run" >&2
    exit 1
  fi
fi
