"""Device code the program loads itself: register its copy of gshmem's device state (nvshmem4py's module_init).

A kernel built without -rdc that includes <gshmem/device.cuh> (gshmem needs no device library) and is loaded at
run time — a cubin or PTX through CuPy's RawModule, cuda.core's ObjectCode, Triton, or cuModuleLoad / cuLibraryLoad
through cuda.bindings — has its own copy of the device state, which no host code registered. module_init fills it
now and whenever the state changes (heap growth, new teams) until module_finalize, which must come before the
module is unloaded. Code built into a Python extension (torch.utils.cpp_extension) needs none of this: it
registers itself when the extension is loaded.
"""
from gshmem import _gshmem
from gshmem.core.types import GshmemInvalid, require_init

__all__ = ["module_init", "module_finalize", "library_init", "library_finalize"]


def _handle(obj, call):
    """(kind, handle): kind "module" (CUmodule) or "library" (CUlibrary) of an int or a loaded-code object."""
    if isinstance(obj, int):
        return None, obj
    inner = getattr(obj, "module", None)  # CuPy RawModule -> cupy.cuda.function.Module; Triton: a CUmodule int
    if inner is not None and inner is not obj:
        if isinstance(inner, int):
            return "module", inner
        if hasattr(inner, "ptr"):
            return "module", int(inner.ptr)
    if hasattr(obj, "ptr") and type(obj).__module__.startswith("cupy"):  # cupy.cuda.function.Module
        return "module", int(obj.ptr)
    h = getattr(obj, "handle", None)  # cuda.core ObjectCode -> CUlibrary
    if h is None and type(obj).__name__ in ("CUmodule", "CUlibrary"):
        h = obj
    if h is not None:
        name = type(h).__name__
        kind = "library" if "library" in name.lower() else "module" if "module" in name.lower() else None
        try:
            return kind, int(h)
        except (TypeError, ValueError):
            pass
    raise GshmemInvalid(f"{call}: {obj!r} is not loaded device code. Fix: pass a CuPy RawModule, a cuda.core "
                        "ObjectCode, a cuda.bindings CUmodule / CUlibrary, or the handle as an int")


def module_init(module):
    """Registers loaded device code that calls gshmem's device API (see the module docstring)."""
    require_init("module_init")
    kind, h = _handle(module, "module_init")
    (_gshmem.culibrary_init if kind == "library" else _gshmem.cumodule_init)(h)


def module_finalize(module):
    """Stops updating a module_init'ed module's device state; call it before unloading the module."""
    require_init("module_finalize")
    kind, h = _handle(module, "module_finalize")
    (_gshmem.culibrary_finalize if kind == "library" else _gshmem.cumodule_finalize)(h)


def library_init(library):
    """module_init for a CUlibrary (cuLibraryLoad*, cuda.core ObjectCode)."""
    require_init("library_init")
    _gshmem.culibrary_init(_handle(library, "library_init")[1])


def library_finalize(library):
    require_init("library_finalize")
    _gshmem.culibrary_finalize(_handle(library, "library_finalize")[1])
