"""nvshmem4py's nvshmem.core.direct: the enums and queries it takes straight from the bindings (ComparisonType,
SignalOp, InitStatus, my_pe, n_pes, team_my_pe, team_n_pes, init_status)."""
from enum import IntEnum

from gshmem.core.init_fini import my_pe, n_pes, team_my_pe, team_n_pes
from gshmem.core.rma import ComparisonType, SignalOp
from gshmem.core.types import state

__all__ = ["ComparisonType", "SignalOp", "InitStatus", "my_pe", "team_my_pe", "team_n_pes", "n_pes", "init_status"]


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
