#!/usr/bin/env bash
# Set up, then run the whole test suite with the CI Hypothesis profile.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/setup.sh"
cd "$root"
export HYPOTHESIS_PROFILE="${HYPOTHESIS_PROFILE:-ci}"
exec .venv/bin/python -m pytest -q "$@"
