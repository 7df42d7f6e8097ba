"""gshmem.core: NVIDIA nvshmem4py's nvshmem.core API on gshmem (`import gshmem.core as nvshmem`).

GPU PEs: torch tensors (tensor), CuPy arrays (array) and buffers on the symmetric heap, every call on a CUDA stream
(torch's, CuPy's, any __cuda_stream__ object, or the current one). CPU PEs: NumPy arrays and torch CPU tensors,
blocking host calls. nvshmem4py's module paths are here too (gshmem.core.collective, .direct, .utils, .amo,
.nvshmem_types, .interop.torch, .interop.cupy; .interop.cute and .device exist and say what gshmem does
instead). See python/README.md.
"""
from gshmem.core.types import (BufferTypes, GshmemError, GshmemInvalid, GshmemNotSupported, MutableEnum,
                               NvshmemError, NvshmemInvalid, NvshmemKernelObject, NvshmemStream, NvshmemStreamsType,
                               NvshmemWarning, Teams, Version)
from gshmem.core.init_fini import (DeviceLibLanguage, UniqueID, find_device_bitcode_library, finalize, get_name,
                                   get_unique_id, get_version, init, my_pe, n_pes, team_my_pe, team_n_pes)
from gshmem.core.memory import (Buffer, NvshmemResource, array, array_get_buffer, buffer, bytearray, bytetensor,
                                free, free_array, free_tensor, get_multicast_array, get_multicast_buffer,
                                get_multicast_tensor, get_peer_array, get_peer_buffer, get_peer_tensor,
                                register_external_array, register_external_buffer, register_external_tensor, tensor,
                                tensor_get_buffer, unregister_external_array, unregister_external_buffer,
                                unregister_external_tensor)
from gshmem.core.rma import (ComparisonType, SignalOp, flush, get, get_nbi, put, put_nbi, put_signal,
                             put_signal_nbi, quiet, signal_fetch, signal_op, signal_wait)
from gshmem.core.collective import (alltoall, barrier, barrier_all, broadcast, collective_on_buffer, fcollect,
                                    reduce, reducescatter, sync, sync_all)
from gshmem.core.teams import (TeamConfig, TeamUniqueId, get_team_unique_id, team_destroy, team_get_config, team_init,
                               team_split_2d, team_split_strided, team_translate_pe)
from gshmem.core.modules import library_finalize, library_init, module_finalize, module_init
from gshmem.core.direct import InitStatus, SmemAmount, ThreadSupport, ask_smem, init_status, query_thread
from gshmem.core.amo import (atomic_add, atomic_and, atomic_compare_swap, atomic_fetch, atomic_fetch_add,
                             atomic_fetch_and, atomic_fetch_inc, atomic_fetch_or, atomic_fetch_xor, atomic_inc,
                             atomic_or, atomic_set, atomic_swap, atomic_xor)
from gshmem.core import amo, collective, direct, interop, memory, nvshmem_types, rma, teams, utils  # noqa: F401
import gshmem.core.interop.cupy  # noqa: F401,E402 (nvshmem.core.interop.cupy / .torch as attributes)
import gshmem.core.interop.torch  # noqa: F401,E402

__all__ = ["GshmemError", "GshmemInvalid", "GshmemNotSupported", "NvshmemError", "NvshmemInvalid", "NvshmemWarning",
           "Teams", "MutableEnum", "Version", "NvshmemResource",
           "NvshmemStream", "NvshmemStreamsType", "BufferTypes", "NvshmemKernelObject", "UniqueID", "finalize",
           "get_unique_id", "get_version", "get_name", "init", "my_pe", "n_pes", "team_my_pe", "team_n_pes",
           "InitStatus", "init_status", "ThreadSupport", "SmemAmount", "ask_smem", "query_thread",
           "DeviceLibLanguage", "find_device_bitcode_library",
           "Buffer", "buffer", "free", "get_peer_buffer", "get_multicast_buffer", "register_external_buffer",
           "unregister_external_buffer", "array", "bytearray", "free_array", "get_peer_array", "get_multicast_array",
           "array_get_buffer", "tensor", "bytetensor", "free_tensor", "get_peer_tensor", "get_multicast_tensor",
           "tensor_get_buffer", "register_external_tensor", "unregister_external_tensor", "register_external_array",
           "unregister_external_array",
           "get", "put", "get_nbi", "put_nbi", "put_signal", "put_signal_nbi", "signal_op", "signal_wait",
           "signal_fetch", "quiet", "flush", "ComparisonType", "SignalOp",
           "alltoall", "barrier", "barrier_all", "broadcast", "fcollect", "reduce", "reducescatter", "sync",
           "sync_all", "collective_on_buffer",
           "TeamConfig", "TeamUniqueId", "get_team_unique_id", "team_destroy", "team_get_config", "team_init",
           "team_split_2d",
           "team_split_strided", "team_translate_pe",
           "module_init", "module_finalize", "library_init", "library_finalize",
           "atomic_fetch", "atomic_set", "atomic_inc", "atomic_fetch_inc", "atomic_add", "atomic_fetch_add",
           "atomic_and", "atomic_fetch_and", "atomic_or", "atomic_fetch_or", "atomic_xor", "atomic_fetch_xor",
           "atomic_swap", "atomic_compare_swap"]
