"""nvshmem4py's nvshmem.core.interop.torch: the torch tensor functions of gshmem.core."""
from gshmem.core.memory import (bytetensor, free_tensor, get_multicast_tensor, get_peer_tensor,
                                register_external_tensor, tensor, tensor_get_buffer, unregister_external_tensor)

__all__ = ["bytetensor", "tensor", "free_tensor", "tensor_get_buffer", "get_peer_tensor", "get_multicast_tensor",
           "register_external_tensor", "unregister_external_tensor"]
