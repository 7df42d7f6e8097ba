"""nvshmem4py's nvshmem.core.interop.torch and .cupy module paths (programs import the tensor / array functions
from there)."""
