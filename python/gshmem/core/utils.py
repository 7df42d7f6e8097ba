"""nvshmem4py's nvshmem.core.utils: get_size(shape, dtype) and dtype_nbytes(nvshmem_type_name), which programs use
to size buffers for collective_on_buffer, _configure_logging (gshmem.core logs to the "gshmem" logger), and
_get_device, a private name programs import all the same (triton-distributed's utils.py)."""
import logging
import sys

import numpy as np

from gshmem.core.types import GshmemInvalid

__all__ = ["get_size", "dtype_nbytes"]

_NVSHMEM_NBYTES = {"half": 2, "fp16": 2, "bfloat16": 2, "float": 4, "double": 8, "char": 1, "schar": 1, "int8": 1,
                   "uint8": 1, "int16": 2, "uint16": 2, "int": 4, "int32": 4, "int32_t": 4, "uint32": 4,
                   "uint32_t": 4, "long": 8, "longlong": 8, "ulonglong": 8, "int64": 8, "int64_t": 8, "uint64": 8,
                   "uint64_t": 8, "ptrdiff": 8, "size": 8}


def get_size(shape, dtype):
    """Bytes of an array of `shape` (a tuple, list or int) and `dtype` (a NumPy dtype or name, a torch dtype, or
    "bfloat16"). As nvshmem4py, a name means NumPy's type of that name ("float" is float64 there)."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(dtype, torch.dtype):
        itemsize = dtype.itemsize
    elif isinstance(dtype, str) and dtype == "bfloat16":
        itemsize = 2
    else:
        try:
            itemsize = np.dtype(dtype).itemsize
        except TypeError:
            raise GshmemInvalid(f"get_size: dtype={dtype!r} is not a dtype") from None
    count = 1
    for extent in ((shape,) if np.isscalar(shape) else shape):
        count *= int(extent)
    return int(count * itemsize)


def dtype_nbytes(dtype):
    """Bytes of one element of NVSHMEM's type `dtype` ("float", "int64", "half", ...); ValueError if unknown."""
    try:
        return _NVSHMEM_NBYTES[dtype]
    except (KeyError, TypeError):
        raise ValueError(f"Unsupported NVSHMEM dtype: {dtype}") from None


def _configure_logging(level="WARNING", logfile=None, mype=None):
    """Sets the level of gshmem.core's Python logger (the library's own logging: GSHMEM_DEBUG)."""
    logger = logging.getLogger("gshmem")
    logger.setLevel(getattr(logging, str(level).upper(), logging.WARNING))
    if logfile:
        logger.addHandler(logging.FileHandler(logfile))


def _get_device():
    """nvshmem4py's (device, old_device): this PE's GPU as a cuda.core Device, made current, and None (nvshmem4py
    gives the previous device only in its debug mode, so callers skip restoring it). CPU PEs have no device: (None,
    None). Needs cuda.core on GPU PEs, as nvshmem4py does."""
    from gshmem.core.types import state
    if state.cpu_pes or state.device[0] != 2:
        return None, None
    try:
        from cuda.core import Device
    except ImportError:
        try:
            from cuda.core.experimental import Device
        except ImportError:
            raise GshmemInvalid("_get_device: needs cuda.core for the Device object nvshmem4py returns. Fix: pip "
                                "install cuda-core (or use torch.cuda.current_device() instead)") from None
    device = Device(state.device[1])
    device.set_current()
    return device, None
