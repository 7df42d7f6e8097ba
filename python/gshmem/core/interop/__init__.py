"""nvshmem4py's nvshmem.core.interop.torch, .cupy and .cute module paths (programs import the tensor / array
functions from there; .cute is imported only on request, as in nvshmem4py)."""
