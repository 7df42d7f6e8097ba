"""gshmem from Python. The API is gshmem.core (NVIDIA nvshmem4py's nvshmem.core names).

get_include(), get_nvshmem_include(), get_library() and nvrtc_options() are for building device code against the
installed gshmem: a torch C++/CUDA extension (torch.utils.cpp_extension.load / load_inline), or nvcc / NVRTC
(CuPy's RawModule, cuda.core's Program) for a module loaded at run time, then gshmem.core.module_init.
"""
import os
import shutil
from pathlib import Path

__version__ = "0.1.0"


def __getattr__(name):
    """`gshmem.bindings` (and, under gshmem.as_nvshmem, `nvshmem.bindings`) without importing it first: nvshmem4py's
    core imports its bindings, so programs that import only `nvshmem.core` still reach `nvshmem.bindings.<call>`
    (triton-distributed's nvshmem_signal_wait). Loaded on first use, so `import gshmem.core` stays as quick."""
    if name == "bindings":
        import importlib
        return importlib.import_module("gshmem.bindings")
    raise AttributeError(f"module 'gshmem' has no attribute {name!r}")
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


def _cuda_include():
    """The CUDA toolkit's include folder: $CUDA_HOME / $CUDA_PATH, nvcc's, or /usr/local/cuda's (None if none)."""
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")]
    nvcc = shutil.which("nvcc")
    if nvcc:
        roots.append(str(Path(nvcc).resolve().parents[1]))
    roots.append("/usr/local/cuda")
    for root in roots:
        if root and (Path(root) / "include" / "cuda_fp16.h").is_file():
            return Path(root) / "include"
    return None


def nvrtc_options():
    """The options NVRTC needs to compile a kernel that includes <nvshmem.h> or <gshmem/device.cuh>: gshmem's
    include folders, the CUDA toolkit's and its CCCL (<cuda/std/...>, <cuda/atomic>), and C++17. Pass them to
    cupy.RawModule(code, options=...) or cuda.core's ProgramOptions(include_path=...); then module_init."""
    opts = [f"-I{get_include()}", f"-I{get_nvshmem_include()}", "-std=c++17"]
    inc = _cuda_include()
    if inc is None:
        raise FileNotFoundError("gshmem.nvrtc_options(): no CUDA toolkit headers found (cuda_fp16.h). Fix: set "
                                "CUDA_HOME to the toolkit's folder, or put its nvcc on PATH")
    if (inc / "cccl" / "cuda" / "atomic").is_file():  # CUDA 13 keeps CCCL in include/cccl
        opts.append(f"-I{inc / 'cccl'}")
    opts.append(f"-I{inc}")
    return opts
