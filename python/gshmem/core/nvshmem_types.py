"""nvshmem4py's nvshmem.core.nvshmem_types, for `from nvshmem.core.nvshmem_types import *`: the exceptions, Teams,
MutableEnum, Version, NvshmemStream, BufferTypes, NvshmemKernelObject (defined in gshmem.core.types) and
NvshmemResource (gshmem.core.memory)."""
from gshmem.core.memory import NvshmemResource
from gshmem.core.types import (BufferTypes, MutableEnum, NvshmemError, NvshmemInvalid, NvshmemKernelObject,
                               NvshmemStream, NvshmemStreamsType, NvshmemWarning, Teams, Version)

__all__ = ["Version", "NvshmemInvalid", "NvshmemError", "NvshmemWarning", "NvshmemResource", "NvshmemStream",
           "NvshmemStreamsType", "MutableEnum", "Teams", "BufferTypes", "NvshmemKernelObject"]
