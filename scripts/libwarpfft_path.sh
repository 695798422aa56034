#!/usr/bin/env bash
# Builds libwarpfft.so with `cargo build ARGS...` and prints the path of the library that this
# very build produced (OUT_DIR/lib/libwarpfft.so.0 of the warpfft build script run that cargo
# reports for these features, archs and profile), so recipes never pick up whatever another
# build left in target/<profile>. Cargo's output goes to stderr.
#   bash scripts/libwarpfft_path.sh --release
#   WARPFFT_CUDA_ARCHS="80;90" bash scripts/libwarpfft_path.sh --no-default-features --features aot
set -euo pipefail
cd "$(dirname "$0")/.."
id=$(cargo metadata --no-deps --format-version 1 --offline |
    python3 -c 'import json, sys
ids = [p["id"] for p in json.load(sys.stdin)["packages"] if p["name"] == "warpfft"]
print(ids[0] if len(ids) == 1 else "")')
if [ -z "$id" ]; then
    echo "libwarpfft_path.sh: cargo metadata lists no single package named warpfft" >&2
    exit 1
fi
cargo build --message-format=json-render-diagnostics "$@" |
    WARPFFT_PKG_ID="$id" python3 -c '
import json, os, sys
want = os.environ["WARPFFT_PKG_ID"]
dirs = []
for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    if msg.get("reason") == "build-script-executed" and msg.get("package_id") == want:
        dirs.append(msg["out_dir"])
if len(set(dirs)) != 1:
    sys.exit(f"libwarpfft_path.sh: expected one warpfft build script run, cargo reported {dirs}")
lib = os.path.join(dirs[0], "lib", "libwarpfft.so.0")
if not os.path.isfile(lib):
    sys.exit(f"libwarpfft_path.sh: {lib} does not exist")
print(lib)'
