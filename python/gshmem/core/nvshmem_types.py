"""nvshmem4py's nvshmem.core.nvshmem_types, for `from nvshmem.core.nvshmem_types import *`: the exceptions, Teams,
Version, NvshmemStream, BufferTypes, NvshmemKernelObject (all defined in gshmem.core.types)."""
from gshmem.core.types import (BufferTypes, NvshmemError, NvshmemInvalid, NvshmemKernelObject, NvshmemStream,
                               NvshmemStreamsType, NvshmemWarning, Teams, Version)

__all__ = ["Version", "NvshmemInvalid", "NvshmemError", "NvshmemWarning", "NvshmemStream", "NvshmemStreamsType",
           "Teams", "BufferTypes", "NvshmemKernelObject"]
