"""nvshmem4py's nvshmem.core.interop.cute: symmetric tensors as CUTLASS CuTe DSL tensors
(`import nvshmem.core.interop.cute as cute`; like nvshmem4py, gshmem.core does not import it itself, since its names
are the torch ones).

gshmem does not make CuTe DSL tensors yet: every function here raises GshmemNotSupported (a NotImplementedError and
an NvshmemError) that names the call and what to use instead; cleanup_cute() has nothing to release and returns.
"""
from gshmem.core.types import GshmemNotSupported

__all__ = ["bytetensor", "tensor", "free_tensor", "tensor_get_buffer", "get_peer_tensor", "get_multicast_tensor",
           "register_external_tensor", "unregister_external_tensor", "cleanup_cute"]


def _not_yet(call):
    raise GshmemNotSupported(
        f"gshmem.core.interop.cute.{call}: gshmem does not make CuTe DSL tensors (CUTLASS's cute.Tensor) over the "
        "symmetric heap yet. Fix: allocate with gshmem.core.tensor() (torch) or array() (CuPy / NumPy) and pass "
        "it to CuTe with cutlass.cute.runtime.from_dlpack(t); free it with free_tensor() / free_array()")


def tensor(shape, dtype=None, release=False, morder="C", except_on_del=True):
    _not_yet("tensor")


def bytetensor(shape, dtype=None, release=False, morder="C", except_on_del=True):
    _not_yet("bytetensor")


def free_tensor(tensor):  # noqa: F811 (nvshmem4py's names)
    _not_yet("free_tensor")


def tensor_get_buffer(tensor):  # noqa: F811
    _not_yet("tensor_get_buffer")


def get_peer_tensor(tensor, peer_pe=None):  # noqa: F811
    _not_yet("get_peer_tensor")


def get_multicast_tensor(team, tensor):  # noqa: F811
    _not_yet("get_multicast_tensor")


def register_external_tensor(tensor):  # noqa: F811
    _not_yet("register_external_tensor")


def unregister_external_tensor(tensor):  # noqa: F811
    _not_yet("unregister_external_tensor")


def cleanup_cute():
    """Nothing to release (no CuTe MLIR context or DLPack holders are made here)."""
