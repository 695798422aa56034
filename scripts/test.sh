#!/usr/bin/env bash
# The whole test suite, with its own setup. GPU tests skip with a visible "skipped: no GPU"
# line on machines without one; `just gpu-bundle` packs them for a GPU machine.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec just test
