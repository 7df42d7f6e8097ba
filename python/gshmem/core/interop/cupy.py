"""nvshmem4py's nvshmem.core.interop.cupy: the array functions of gshmem.core (CuPy arrays on GPU PEs, NumPy arrays
on CPU PEs)."""
from gshmem.core.memory import (array, array_get_buffer, bytearray, free_array, get_multicast_array, get_peer_array,
                                register_external_array, unregister_external_array)

__all__ = ["bytearray", "array", "free_array", "array_get_buffer", "get_peer_array", "get_multicast_array",
           "register_external_array", "unregister_external_array"]
