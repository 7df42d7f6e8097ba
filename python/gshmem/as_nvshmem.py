"""Runs a program written for NVIDIA nvshmem4py unchanged on gshmem: `import nvshmem.core`, `nvshmem.bindings`,
`from nvshmem.core.nvshmem_types import *`, ... resolve to gshmem.core, gshmem.bindings, ... in that process.

    python -m gshmem.as_nvshmem prog.py [args]         (also under gshmemrun -n N -- python -m gshmem.as_nvshmem ...)
    python -m gshmem.as_nvshmem -m package.module [args]
    torchrun --nproc-per-node=2 -m gshmem.as_nvshmem prog.py [args]

or, inside a program (before its first `import nvshmem`), `gshmem.as_nvshmem.install()`. Only that process sees
the names; an nvshmem4py installed beside gshmem stays untouched for other processes.
"""
import importlib
import importlib.abc
import importlib.util
import os
import runpy
import sys

__all__ = ["install", "uninstall", "main"]


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """`nvshmem` and `nvshmem.<x>` are gshmem's module of the same path (`gshmem`, `gshmem.<x>`): the same module
    object under both names, so `nvshmem.core.Teams is gshmem.core.Teams`."""

    def __init__(self):
        self._specs = {}

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "nvshmem" and not fullname.startswith("nvshmem."):
            return None
        ours = "gshmem" + fullname[len("nvshmem"):]
        spec = importlib.util.find_spec(ours)
        if spec is None:
            raise ModuleNotFoundError(
                f"gshmem.as_nvshmem: {fullname} has no gshmem counterpart ({ours}). gshmem provides nvshmem4py's "
                "nvshmem.core (and its submodules) and nvshmem.bindings; the device bindings raise ImportError "
                "saying what to use instead (python/README.md)", name=fullname)
        return importlib.util.spec_from_loader(fullname, self,
                                               is_package=spec.submodule_search_locations is not None)

    def create_module(self, spec):
        module = importlib.import_module("gshmem" + spec.name[len("nvshmem"):])
        self._specs[spec.name] = module.__spec__  # importlib sets __spec__ to the alias's: put it back after
        return module

    def exec_module(self, module):  # the gshmem module ran when it was imported
        module.__spec__ = self._specs.pop(module.__spec__.name, module.__spec__)


_finder = _Alias()


def install():
    """From now on this process imports gshmem's modules for `nvshmem` and `nvshmem.*`. An `nvshmem` imported
    before (nvshmem4py's) is dropped from sys.modules first, so later imports get gshmem's."""
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
    for name in [n for n in sys.modules if n == "nvshmem" or n.startswith("nvshmem.")]:
        mod = sys.modules[name]
        if not getattr(mod, "__name__", "").startswith("gshmem"):
            del sys.modules[name]


def uninstall():
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    install()
    if argv[0] == "-m":
        if len(argv) < 2:
            print("gshmem.as_nvshmem: -m needs a module name (python -m gshmem.as_nvshmem -m pkg.mod [args])",
                  file=sys.stderr)
            return 2
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))  # as `python prog.py` does
        runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
