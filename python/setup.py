"""Makes the wheel platform-specific: it carries libwarpfft.so (copied into warpfft/ first, by
`just wheel`), which ctypes loads, so it is tagged py3-none-<platform>: any CPython 3, no Python
extension ABI, one OS/architecture. Files go to the wheel's root (platlib), not .data/purelib.

WARPFFT_WHEEL_PLAT overrides the platform tag (e.g. manylinux_2_28_x86_64 once checked with
auditwheel); the default is this machine's, e.g. linux_x86_64.
"""

import os

from setuptools import setup

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1
    from wheel.bdist_wheel import bdist_wheel

LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "warpfft", "libwarpfft.so")


class PlatformWheel(bdist_wheel):
    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False  # platform-specific although it has no extension module

    def get_tag(self):
        _, _, plat = super().get_tag()
        return "py3", "none", os.environ.get("WARPFFT_WHEEL_PLAT", plat)

    def run(self):
        if not os.path.exists(LIB):
            raise SystemExit(f"{LIB} is missing: copy target/release/libwarpfft.so.0 there first "
                             "(`just wheel` does)")
        super().run()


setup(cmdclass={"bdist_wheel": PlatformWheel})
