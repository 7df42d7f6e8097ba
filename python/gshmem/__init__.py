"""gshmem from Python. The API is gshmem.core (NVIDIA nvshmem4py's nvshmem.core names).

get_include(), get_nvshmem_include() and get_library() are for building device code against the installed
gshmem: a torch C++/CUDA extension (torch.utils.cpp_extension.load / load_inline), or nvcc / NVRTC for a module
loaded at run time (then gshmem.core.module_init).
"""
from pathlib import Path

__version__ = "0.1.0"
_INCLUDE = Path(__file__).resolve().parent / "include"


def get_include():
    """The folder holding gshmem/device.cuh and gshmem/gshmem.h (installed with the package)."""
    if not (_INCLUDE / "gshmem" / "device.cuh").is_file():
        raise FileNotFoundError(f"gshmem.get_include(): {_INCLUDE} has no gshmem/device.cuh. Fix: install the "
                                "package (pip install .), which carries the headers")
    return str(_INCLUDE)


def get_nvshmem_include():
    """The folder holding nvshmem.h / nvshmemx.h (NVSHMEM's names over gshmem)."""
    return str(Path(get_include()) / "gshmem" / "nvshmem")


def get_library():
    """The path of the libgshmem that gshmem.core loaded (link an extension's host side against it)."""
    from gshmem import _gshmem
    return _gshmem.library_path()
