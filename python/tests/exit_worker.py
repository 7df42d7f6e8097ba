"""One PE of test_core.py's unhandled-exception tests (CPU PEs): the last PE raises after init, unhandled, while the
others wait for it in barrier_all (argv[2] "raise"), or it calls sys.exit(5) without finalize() ("exit"). The
others must fail within seconds with an error that names it (and the exception) — also under mpirun, where mpi4py's
MPI_Finalize at interpreter exit would otherwise wait for ranks that wait for this PE. argv[1]: "mpi" (init over
mpi4py's COMM_WORLD) or "env" (gshmemrun)."""
import sys

import gshmem.core as nv

if sys.argv[1] == "mpi":
    from mpi4py import MPI  # noqa: F401 (imported first, as programs do; its finalize runs at exit)

    nv.init(initializer_method="mpi")
else:
    nv.init()
me, n = nv.my_pe(), nv.n_pes()
if me == n - 1:
    if sys.argv[2] == "exit":
        sys.exit(5)
    raise RuntimeError(f"deliberate failure of PE {me}")
try:
    nv.barrier_all()
except nv.NvshmemError as e:
    print(f"PE {me} got: {e}", flush=True)
    sys.exit(3)
print(f"PE {me}: UNEXPECTED: barrier_all returned", flush=True)
