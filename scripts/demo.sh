#!/usr/bin/env bash
# The main demo, with its own setup: builds warpfft and runs a 2D type-1 NUFFT of 1e6 points,
# checked against the exact sum. Without a GPU it builds, then says why it cannot run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec just demo
