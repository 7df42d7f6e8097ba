"""gshmem from Python. The API is gshmem.core (NVIDIA nvshmem4py's nvshmem.core names)."""
__version__ = "0.1.0"
