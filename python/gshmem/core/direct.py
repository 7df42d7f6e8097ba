"""nvshmem4py's nvshmem.core.direct: the enums and queries it takes straight from the bindings (ComparisonType,
SignalOp, InitStatus, ThreadSupport, SmemAmount, ask_smem, query_thread, my_pe, n_pes, team_my_pe, team_n_pes,
init_status)."""
from enum import IntEnum

from gshmem import _gshmem
from gshmem.core.init_fini import my_pe, n_pes, team_my_pe, team_n_pes
from gshmem.core.rma import ComparisonType, SignalOp
from gshmem.core.types import state

__all__ = ["ComparisonType", "SignalOp", "InitStatus", "ThreadSupport", "SmemAmount", "ask_smem", "query_thread", "my_pe",
           "team_my_pe", "team_n_pes", "n_pes", "init_status"]


class InitStatus(IntEnum):
    """nvshmemx_init_status's values (programs test `init_status() >= 2`, STATUS_IS_INITIALIZED)."""

    STATUS_NOT_INITIALIZED = 0
    STATUS_IS_BOOTSTRAPPED = 1
    STATUS_IS_INITIALIZED = 2
    STATUS_LIMITED_MPG = 3
    STATUS_FULL_MPG = 4
    STATUS_INVALID = 2**31 - 1


def init_status():
    """STATUS_IS_INITIALIZED between init() and finalize(), else STATUS_NOT_INITIALIZED."""
    return InitStatus.STATUS_IS_INITIALIZED if state.initialized else InitStatus.STATUS_NOT_INITIALIZED


class ThreadSupport(IntEnum):
    """nvshmemx_thread_support_t's values (query_thread's answer)."""

    THREAD_SINGLE = 0
    THREAD_FUNNELED = 1
    THREAD_SERIALIZED = 2
    THREAD_MULTIPLE = 3
    THREAD_TYPE_SENTINEL = 2**31 - 1


class SmemAmount(IntEnum):
    """nvshmemx_smem_amount_t's values (ask_smem's argument)."""

    SMEM_RECOMMENDED = 0
    SMEM_MINIMUM = 1
    SMEM_BARRIERS_ONLY = 2
    MAX = 3


def ask_smem(amount=SmemAmount.SMEM_RECOMMENDED):
    """nvshmemx_ask_smem: the dynamic shared memory (bytes) to launch a kernel with that hands it to
    nvshmemx_give_smem. gshmem moves data without TMA and keeps none of it, but answers NVSHMEM's sizes (64 KiB
    recommended, 32 KiB minimum; 0 for SMEM_BARRIERS_ONLY), which programs also use for their own data."""
    return _gshmem.ask_smem(int(amount))


def query_thread():
    """nvshmem_query_thread: the thread level the library provides (THREAD_SERIALIZED: host calls from any thread,
    one at a time; docs/migration.md says why not MULTIPLE). Works before init too."""
    return ThreadSupport(_gshmem.query_thread())
