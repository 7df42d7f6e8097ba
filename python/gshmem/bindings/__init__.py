"""nvshmem4py's nvshmem.bindings over gshmem: `import gshmem.bindings as bindings` (or
`import gshmem.bindings.nvshmem as bindings`) where a program has `import nvshmem.bindings`. NVSHMEM's host calls
one for one on addresses and streams given as ints; see gshmem/bindings/nvshmem.py and python/README.md."""
from gshmem.bindings.nvshmem import *  # noqa: F401,F403
from gshmem.bindings.nvshmem import __all__  # noqa: F401
