#!/usr/bin/env bash
# The main job: set up, then run the default history sweep on local Spark (32 group histories, one of
# them large: >= 500 members and >= 50,000 partitions; every built-in assignor, historical releases
# on the first 20 small ones), print a verdict and one line per assignor, the failures by kind with replay
# commands, and the report's path (docs/sweep.md). Re-running resumes in sweep-out/; extra
# arguments pass through (e.g. --by cause, --source adversarial, --out other-dir).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/setup.sh"
cd "$root"
exec .venv/bin/stickyproof sweep --out sweep-out "$@"
