"""nvshmem4py's nvshmem.bindings.device.numba: not provided by gshmem (importing it raises ImportError with what to use
instead; see gshmem.core.device)."""
from gshmem.core.device import _no_bindings

raise _no_bindings("numba", "bindings.device")
