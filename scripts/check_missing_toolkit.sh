#!/usr/bin/env bash
# With NVCC pointing nowhere the build must fail, and say what it looked for and how to fix it.
set -uo pipefail
cd "$(dirname "$0")/.."
log=$(NVCC=/nonexistent cargo build --lib 2>&1)
rc=$?
if [ $rc -eq 0 ]; then echo "FAIL: build succeeded with NVCC=/nonexistent"; exit 1; fi
for want in "NVCC=/nonexistent" "CUDA_PATH"; do
    if ! grep -q -- "$want" <<<"$log"; then
        echo "FAIL: message lacks '$want':"; echo "$log" | tail -30; exit 1
    fi
done
echo "ok: missing toolkit reported:"; grep -A8 "kernel build failed" <<<"$log" | head -12
