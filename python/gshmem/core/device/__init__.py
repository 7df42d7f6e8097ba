"""nvshmem4py's nvshmem.core.device: NVSHMEM's device API for Python-written kernels (Numba, CuTe DSL). gshmem does
not provide these bindings: importing gshmem.core.device.numba / .cute / .numba_cuda_mlir raises ImportError saying
so, so programs that fall back on `except ImportError` keep working. Kernels call gshmem's device API from CUDA C++
instead (a torch extension, a CuPy RawModule, a cuda.core Program; python/README.md)."""

__all__ = []


def _no_bindings(name, package="core.device"):
    """The ImportError a module of this package (or of gshmem.bindings.device: package="bindings.device") raises:
    what is missing and what to use instead."""
    return ImportError(
        f"gshmem.{package}.{name}: gshmem has no {name} device bindings (nvshmem4py's nvshmem.{package}."
        f"{name}). Fix: write the kernel in CUDA C++ with #include <nvshmem.h> (gshmem's headers: "
        "gshmem.get_include(), gshmem.get_nvshmem_include()) and build it as a torch extension, a CuPy RawModule "
        "(options=gshmem.nvrtc_options(), then gshmem.core.module_init) or a cuda.core Program", name=name)
