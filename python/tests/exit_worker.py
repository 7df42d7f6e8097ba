"""One PE of test_core.py's unhandled-exception tests (CPU PEs): the last PE raises after init, unhandled, while the
others wait for it in barrier_all (argv[2] "raise"), or it calls sys.exit(5) without finalize() ("exit"). The
others must fail within seconds with an error that names it (and the exception) — also under mpirun, where mpi4py's
MPI_Finalize at interpreter exit would otherwise wait for ranks that wait for this PE. argv[1]: "mpi" (init over
mpi4py's COMM_WORLD) or "env" (gshmemrun). argv[2] "fork": instead, every PE forks a child after init that ends
normally; the child must end at once and the job must go on and finalize (test_fork_child)."""
import os
import sys
import time

import gshmem.core as nv

if sys.argv[1] == "mpi":
    from mpi4py import MPI  # noqa: F401 (imported first, as programs do; its finalize runs at exit)

    nv.init(initializer_method="mpi")
else:
    nv.init()
me, n = nv.my_pe(), nv.n_pes()
if sys.argv[2] == "fork":  # a child made after init ends normally: it is not the PE and must neither hang nor
    pid = os.fork()        # speak for it; the job then goes on and finalizes as usual
    if pid == 0:
        sys.exit(0)  # runs the inherited exit hooks (Python's and the library's)
    deadline = time.monotonic() + 30
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        assert time.monotonic() < deadline, f"PE {me}: the fork()ed child did not end within 30 s"
        time.sleep(0.05)
    assert os.waitstatus_to_exitcode(status) == 0, f"PE {me}: child status {status}"
    nv.barrier_all()
    nv.finalize()
    print(f"PASS pe {me}/{n} (fork)", flush=True)
    sys.exit(0)
if me == n - 1:
    if sys.argv[2] == "exit":
        sys.exit(5)
    raise RuntimeError(f"deliberate failure of PE {me}")
try:
    nv.barrier_all()
except nv.NvshmemError as e:
    # One write(2) for the whole line: with PYTHONUNBUFFERED (set on some machines) print() writes the text and its
    # newline separately, and the other PE's line can land between them.
    os.write(1, f"PE {me} got: {e}\n".encode())
    sys.exit(3)
print(f"PE {me}: UNEXPECTED: barrier_all returned", flush=True)
