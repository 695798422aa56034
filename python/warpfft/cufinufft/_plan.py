"""``cufinufft._plan`` of the stand-in: ``Plan`` (warpfft's, ``warpfft._compat``), with the
reference's public interface and the private names packages built on it use (``_plan``,
``_setpts``, ``_exec_plan``, ``_destroy_plan``, ``_opts``, ``_references``, ``_nj``, ...)."""

from .._compat import Plan

__all__ = ["Plan"]
