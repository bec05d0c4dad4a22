"""The fused kernel: C source, its build, and the ctypes library that calls it."""

from model_utils.engine.kernel.library import FusedKernel, load_kernel

__all__ = ["FusedKernel", "load_kernel"]
