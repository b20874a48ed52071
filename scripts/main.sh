#!/usr/bin/env bash
# The main job: set up, then run the default sweep (about 2,000 groups, every built-in assignor,
# local Spark) and print its summary and the report's path. Re-running resumes in sweep-out/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/setup.sh"
cd "$root"
exec .venv/bin/stickyproof sweep --out sweep-out "$@"
