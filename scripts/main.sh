#!/usr/bin/env bash
# The main job: set up, then run the demonstration job and print its summary.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/setup.sh"
cd "$root"
exec .venv/bin/stickyproof demo "$@"
