"""Checks that a libwarpfft.so holds the kernels a build asked for (issue 18 item 6):
    python3 scripts/libwarpfft_info.py LIB MODE [ARCHS]
MODE is jit, aot, aot+jit, or one of them (or none) with +nvrtc; ARCHS a comma-separated list (e.g. 80,90) for the aot modes. Reads
warpfft_runtime_info's "build" section (no GPU needed: the report is filled either way) and
exits non-zero naming the difference."""
import ctypes
import json
import sys


def build_info(path):
    lib = ctypes.CDLL(path)
    f = lib.warpfft_runtime_info
    f.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]
    needed = ctypes.c_size_t(0)
    size = 1 << 16
    while True:
        buf = ctypes.create_string_buffer(size)
        f(0, buf, size, ctypes.byref(needed))
        if needed.value < size:
            return json.loads(buf.value.decode())["build"]
        size = needed.value + 1


def main(argv):
    if len(argv) not in (3, 4):
        sys.exit(__doc__)
    path, mode = argv[1], argv[2]
    build = build_info(path)
    manifest = build["manifest"]
    if isinstance(manifest, str):
        manifest = json.loads(manifest)
    errors = []
    if build["mode"] != mode:
        errors.append(f"mode {build['mode']!r}, expected {mode!r}")
    if len(argv) == 4:
        want = [int(a) for a in argv[3].split(",")]
        if manifest.get("archs") != want:
            errors.append(f"archs {manifest.get('archs')}, expected {want}")
    if errors:
        sys.exit(f"{path}: " + "; ".join(errors))
    print(f"{path}: {build['mode']}, archs {manifest.get('archs')}")


if __name__ == "__main__":
    main(sys.argv)
