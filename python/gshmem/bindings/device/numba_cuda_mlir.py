"""nvshmem4py's nvshmem.bindings.device.numba_cuda_mlir: not provided by gshmem (importing it raises ImportError with what to use
instead; see gshmem.core.device)."""
from gshmem.core.device import _no_bindings

raise _no_bindings("numba_cuda_mlir", "bindings.device")
