"""Unpacks the GPU bundle (.gpu/bundle.tar.xz, made by scripts/gpu_bundle.sh) on the GPU machine.

Python's tarfile reads the xz stream with the standard library's lzma, so the GPU machine needs no
xz binary. The bundle is xz -9 because its ~25 test binaries each embed the same kernels: a
64 MiB dictionary folds those repeats (410 MB of binaries -> ~13 MB, under the device tool's
64 MiB carry limit), where gzip's 32 KiB window cannot (~95 MB).

    python3 scripts/unbundle.py BUNDLE DEST [MEMBER...]   (members: top-level folders, e.g. lib)
"""
import sys
import tarfile


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    bundle, dest, wanted = argv[1], argv[2], set(argv[3:])
    with tarfile.open(bundle, "r:*") as tar:
        members = [m for m in tar.getmembers()
                   if not wanted or m.name.split("/")[0] in wanted]
        tar.extractall(dest, members=members, filter="data")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
