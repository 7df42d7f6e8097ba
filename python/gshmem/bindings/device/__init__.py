"""nvshmem4py's nvshmem.bindings.device (NVSHMEM's device calls for Numba, CuTe DSL and numba-cuda-mlir kernels):
not provided. Importing gshmem.bindings.device.numba / .cute / .numba_cuda_mlir raises ImportError saying what to
do instead, as gshmem.core.device's modules do."""

__all__ = []
