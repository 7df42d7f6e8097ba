"""gshmem.core: NVIDIA nvshmem4py's nvshmem.core API on gshmem (`import gshmem.core as nvshmem`).

GPU PEs: torch tensors (tensor), CuPy arrays (array) and buffers on the symmetric heap, every call on a CUDA stream
(torch's, CuPy's, any __cuda_stream__ object, or the current one). CPU PEs: NumPy arrays and torch CPU tensors,
blocking host calls. See python/README.md.
"""
from gshmem.core.types import GshmemError, GshmemInvalid, NvshmemError, NvshmemInvalid, Teams
from gshmem.core.init_fini import (UniqueID, finalize, get_unique_id, get_version, init, my_pe, n_pes, team_my_pe,
                                   team_n_pes)
from gshmem.core.memory import (Buffer, array, buffer, bytearray, bytetensor, free, free_array, free_tensor,
                                get_multicast_buffer, get_multicast_tensor, get_peer_array, get_peer_buffer,
                                get_peer_tensor, register_external_buffer, register_external_tensor, tensor,
                                unregister_external_buffer, unregister_external_tensor)
from gshmem.core.rma import (ComparisonType, SignalOp, get, get_nbi, put, put_nbi, put_signal, quiet,
                             signal_op, signal_wait)
from gshmem.core.collective import (alltoall, barrier, barrier_all, broadcast, fcollect, reduce, reducescatter,
                                    sync, sync_all)
from gshmem.core.teams import TeamConfig, team_destroy, team_split_2d, team_split_strided, team_translate_pe
from gshmem.core.modules import library_finalize, library_init, module_finalize, module_init

__all__ = ["GshmemError", "GshmemInvalid", "NvshmemError", "NvshmemInvalid", "Teams", "UniqueID", "finalize",
           "get_unique_id", "get_version", "init", "my_pe", "n_pes", "team_my_pe", "team_n_pes",
           "Buffer", "buffer", "free", "get_peer_buffer", "get_multicast_buffer", "register_external_buffer",
           "unregister_external_buffer", "array", "bytearray", "free_array", "get_peer_array", "tensor",
           "bytetensor", "free_tensor", "get_peer_tensor", "get_multicast_tensor", "register_external_tensor",
           "unregister_external_tensor",
           "get", "put", "get_nbi", "put_nbi", "put_signal", "signal_op", "signal_wait", "quiet", "ComparisonType",
           "SignalOp",
           "alltoall", "barrier", "barrier_all", "broadcast", "fcollect", "reduce", "reducescatter", "sync", "sync_all",
           "TeamConfig", "team_destroy", "team_split_2d", "team_split_strided", "team_translate_pe",
           "module_init", "module_finalize", "library_init", "library_finalize"]
