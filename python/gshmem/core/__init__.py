"""gshmem.core: NVIDIA nvshmem4py's nvshmem.core API on gshmem (`import gshmem.core as nvshmem`).

This slice: CPU PEs, NumPy arrays on the symmetric heap, blocking host calls (stream=None). See python/README.md.
"""
from gshmem.core.types import GshmemError, GshmemInvalid, NvshmemError, NvshmemInvalid, Teams
from gshmem.core.init_fini import (UniqueID, finalize, get_unique_id, get_version, init, my_pe, n_pes, team_my_pe,
                                   team_n_pes)
from gshmem.core.memory import Buffer, array, buffer, bytearray, free, free_array, get_peer_array, get_peer_buffer
from gshmem.core.rma import (ComparisonType, SignalOp, get, get_nbi, put, put_nbi, put_signal, quiet,
                             signal_op, signal_wait)
from gshmem.core.collective import (alltoall, barrier, barrier_all, broadcast, fcollect, reduce, reducescatter,
                                    sync, sync_all)
from gshmem.core.teams import TeamConfig, team_destroy, team_split_2d, team_split_strided, team_translate_pe

__all__ = ["GshmemError", "GshmemInvalid", "NvshmemError", "NvshmemInvalid", "Teams", "UniqueID", "finalize",
           "get_unique_id", "get_version", "init", "my_pe", "n_pes", "team_my_pe", "team_n_pes", "Buffer", "array",
           "buffer", "bytearray", "free", "free_array", "get_peer_array", "get_peer_buffer", "get", "put", "quiet",
           "alltoall", "barrier", "barrier_all", "broadcast", "fcollect", "reduce", "reducescatter", "sync", "sync_all",
           "TeamConfig", "team_destroy", "team_split_2d", "team_split_strided", "team_translate_pe",
           "ComparisonType", "SignalOp", "get_nbi", "put_nbi", "put_signal", "signal_op", "signal_wait"]
