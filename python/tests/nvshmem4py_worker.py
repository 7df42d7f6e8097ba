"""One PE of test_nvshmem4py_patterns.py: programs written for NVIDIA nvshmem4py, called the way public programs
call `nvshmem.core`, run on gshmem.core (`import gshmem.core as nvshmem`).

Every check names where the calling pattern was seen (repository and path; the patterns are facts about those
programs, the code here is ours). Fresh data from GSHMEM_TEST_SEED (every PE computes every PE's data), outputs
poisoned before each call, exact comparisons, and bad input checked for the exception class programs catch.

Modes (argument 1):
  env   (default) started by gshmemrun or torchrun; GSHMEM_TEST_LIB picks numpy (CPU PEs), torch (CPU or GPU PEs)
        or cupy (GPU PEs).
  init  plain processes (GSHMEM_TEST_RANK / _NRANKS, GSHMEM_TEST_COMM_DIR): the unique-id moves programs make
        (MPI Bcast into uid._data, bytes, pickling), nested init / finalize, "emulated_mpi" over a communicator.
  case NAME  started by gshmemrun: one group of checks of CASES (split-team-collectives, views-and-lifetime).
  single     one plain process that inits itself from its own unique id (nranks=1).
"""
import ctypes
import os
import pickle
import sys
import time
import warnings

import numpy as np

import gshmem.core
import gshmem.core as nvshmem
from worker import Cupy, Numpy, Torch, data

SEED = int(os.environ["GSHMEM_TEST_SEED"])
LIB = os.environ.get("GSHMEM_TEST_LIB", "numpy")


def raises(exc, fn, *args, **kw):
    """fn(*args, **kw) must raise `exc` (the class a program would catch); returns the exception."""
    try:
        fn(*args, **kw)
    except exc as e:
        return e
    except Exception as e:  # noqa: BLE001 (report what came instead)
        raise AssertionError(f"seed {SEED}: {getattr(fn, '__name__', fn)} raised {type(e).__name__}: {e}, "
                             f"not {getattr(exc, '__name__', exc)}") from e
    raise AssertionError(f"seed {SEED}: {getattr(fn, '__name__', fn)}{args} did not raise "
                         f"{getattr(exc, '__name__', exc)}")


def same(got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and np.array_equal(got, want), \
        f"seed {SEED}, PE {nvshmem.my_pe()}: {what}\n got {got!r}\nwant {want!r}"


class Lib:
    """The worker.py adaptors plus what these checks need: bytes poisoning, dtype names of the library."""

    def __init__(self):
        from gshmem.core.types import state
        gpu = not state.cpu_pes
        self.xp = Torch(gpu) if LIB == "torch" else Cupy() if LIB == "cupy" else Numpy()
        self.gpu = gpu
        assert self.xp.gpu == gpu, f"GSHMEM_TEST_LIB={LIB} on {'GPU' if gpu else 'CPU'} PEs"

    def new(self, shape, dtype, **kw):
        """The library's allocation as the programs spell it: array(shape, dtype="...") or tensor(shape, dtype=)."""
        if LIB == "torch":
            dt = self.xp.torch.bool if dtype == "bool" else self.xp.dt(dtype)
            return nvshmem.tensor(shape, dtype=dt, **kw)
        return nvshmem.array(shape, dtype=dtype, **kw)

    def free(self, a):
        (nvshmem.free_tensor if LIB == "torch" else nvshmem.free_array)(a)

    def peer(self, a, pe):
        return (nvshmem.get_peer_tensor if LIB == "torch" else nvshmem.get_peer_array)(a, pe)

    def poison(self, a):
        """Every byte of the (dense, C or F order) array set to 0xA5."""
        if LIB == "torch":
            flat = a.as_strided((a.numel(),), (1,))
            flat.view(self.xp.torch.uint8).fill_(0xA5)
        elif LIB == "cupy":
            self.xp.cp.cuda.runtime.memset(a.data.ptr, 0xA5, a.nbytes)
        else:
            ctypes.memset(a.ctypes.data, 0xA5, a.nbytes)
        self.xp.sync()

    def set(self, a, values):
        self.xp.put_values(a, values)
        self.xp.sync()

    def host(self, a):
        self.xp.sync()
        return self.xp.host(a)

    def barrier_now(self):
        """barrier_all, waited for on the host too (GPU PEs: the barrier is on the stream; host calls such as the
        AMOs that follow must not overtake it)."""
        nvshmem.barrier_all()
        self.xp.sync()


# ---------------------------------------------------------------------------------------------------------------
# env mode
# ---------------------------------------------------------------------------------------------------------------

def check_names():
    """Module paths and names programs import (`from nvshmem.core.nvshmem_types import *` in NVIDIA's test utils;
    `nvshmem.core.utils`, `nvshmem.core.interop.torch` (a MegaMoE probe, seen through the code index),
    `nvshmem.direct.init_status()` / `nvshmem.collective.alltoall` (wufann/pplx-kernels tests/test_nvshmem.py),
    `from nvshmem.core import TeamConfig, TeamUniqueId, get_team_unique_id, Teams` (teams_test.py))."""
    from gshmem.core import TeamConfig, TeamUniqueId, Teams, get_team_unique_id  # noqa: F401
    from gshmem.core.nvshmem_types import (BufferTypes, NvshmemError, NvshmemInvalid, NvshmemKernelObject,  # noqa
                                           NvshmemStream, NvshmemWarning, Version)
    from gshmem.core.utils import dtype_nbytes, get_size  # noqa: F401
    import gshmem.core.interop.torch as nvt
    import gshmem.core.interop.cupy as nvc
    assert nvt.tensor is nvshmem.tensor and nvc.array is nvshmem.array and nvc.array_get_buffer
    assert nvshmem.collective.alltoall is nvshmem.alltoall and nvshmem.direct.my_pe is nvshmem.my_pe
    assert gshmem.core.NvshmemInvalid is NvshmemInvalid and gshmem.core.NvshmemError is NvshmemError
    assert issubclass(NvshmemInvalid, NvshmemError) and issubclass(NvshmemWarning, UserWarning)
    assert nvshmem.direct.init_status() >= 2 == nvshmem.InitStatus.STATUS_IS_INITIALIZED  # `< 2`: not up (pplx)
    v = nvshmem.get_version()  # print(nvshmem.core.get_version()) (wheel_sanity_test.py); .libnvshmem_version
    assert v.libnvshmem_version and v.nvshmem4py_version and v.openshmem_spec_version and str(v)
    # Programs compare the numbers (a DAE project's nvshmem.py takes a version tuple of libnvshmem_version; a warp
    # test asserts it against the expected NVSHMEM release): NVSHMEM's release and OpenSHMEM level, the values the
    # bindings' vendor_get_version_info / info_get_version report, and nvshmem4py's release number.
    import gshmem.bindings as bindings
    ints = [ctypes.c_int(-1) for _ in range(5)]
    bindings.info_get_version(ctypes.addressof(ints[0]), ctypes.addressof(ints[1]))
    bindings.vendor_get_version_info(*(ctypes.addressof(i) for i in ints[2:]))
    assert v.openshmem_spec_version == "%d.%d" % (ints[0].value, ints[1].value), v.openshmem_spec_version
    assert v.libnvshmem_version == "%d.%d.%d" % tuple(i.value for i in ints[2:]) == str(v), repr(v)
    assert tuple(int(x) for x in v.libnvshmem_version.split(".")) >= (3, 4, 0), repr(v)
    assert tuple(int(x) for x in v.nvshmem4py_version.split(".")[:2]) >= (0, 4), repr(v)
    # nvshmem4py's teams are plain ints: printed and formatted as the number, copied and pickled as the same handle
    # (a team kept in a deep-copied config, or sent with torch.distributed.broadcast_object_list), still usable
    import copy
    w = nvshmem.Teams.TEAM_WORLD
    assert str(w) == "0" and f"{w}" == "0" and f"{w:>3}" == "  0" and "TEAM_WORLD" in repr(w)
    for t in (copy.copy(w), copy.deepcopy(w), pickle.loads(pickle.dumps(w)), copy.deepcopy({"team": w})["team"]):
        assert t == w and int(t) == 0 and nvshmem.team_n_pes(t) == nvshmem.n_pes(), repr(t)
    # nvshmem.core.utils._get_device (triton-distributed's utils.py imports it): (device, None); no device on CPU
    from gshmem.core.utils import _get_device
    from gshmem.core.types import state
    import importlib.util
    has_cuda_core = importlib.util.find_spec("cuda") is not None and (
        importlib.util.find_spec("cuda.core") is not None)
    if state.cpu_pes or has_cuda_core:
        device, old = _get_device()
        assert old is None and (device is None) == bool(state.cpu_pes), (device, old)
    else:  # GPU PEs without cuda.core: the Device nvshmem4py returns cannot be made; the error says so
        assert "cuda.core" in str(raises(nvshmem.NvshmemInvalid, _get_device))
    # get_size / dtype_nbytes with NVSHMEM's type names (collective_test.py, perftest/utils.py)
    assert get_size((2, 2, 3), "int32") == 48 and get_size(5, "half") == 10 and get_size((4,), "bfloat16") == 8
    assert [dtype_nbytes(t) for t in ("float", "double", "half", "int64", "size", "uint32")] == [4, 8, 2, 8, 8, 4]
    raises(ValueError, dtype_nbytes, "float128")
    # NvshmemKernelObject.from_handle (init_test.py test_module_init): an object with .handle for library_init
    assert NvshmemKernelObject.from_handle(1234).handle == 1234
    raises(RuntimeError, NvshmemKernelObject)
    assert BufferTypes.PEER == 1
    # every public name of nvshmem4py 0.4.1's nvshmem.core (the __all__ lists of its modules, read from its wheel)
    missing = [name for name in NVSHMEM4PY_CORE_NAMES if not hasattr(nvshmem, name)]
    assert not missing, f"gshmem.core lacks nvshmem4py's {missing}"
    # the queries nvshmem4py answers straight from the library (direct.py, init_fini.py, teams.py)
    assert nvshmem.query_thread() == nvshmem.ThreadSupport.THREAD_SERIALIZED == 2
    assert nvshmem.direct.ask_smem() == 65536 and nvshmem.ask_smem(nvshmem.SmemAmount.SMEM_MINIMUM) == 32768
    assert nvshmem.ask_smem(nvshmem.SmemAmount.SMEM_BARRIERS_ONLY) == 0
    assert nvshmem.get_name() == "gshmem " + ".".join(str(x) for x in gshmem._gshmem.VERSION), nvshmem.get_name()
    cfg = nvshmem.team_get_config(nvshmem.Teams.TEAM_WORLD)
    assert isinstance(cfg, nvshmem.TeamConfig) and cfg.num_contexts == 0
    raises(nvshmem.NvshmemInvalid, nvshmem.team_get_config, 4242)
    e = raises(nvshmem.GshmemNotSupported, nvshmem.find_device_bitcode_library,
               language=nvshmem.DeviceLibLanguage.LTOIR)
    assert "LTOIR" in e.msg and "CUDA C++" in e.msg, e.msg


def check_teams(lib, me, n):
    """Teams as programs pass them: Teams members (TEAM_WORLD / TEAM_NODE / TEAM_SHARED / TEAM_SAME_MYPE_NODE), plain
    ints, names; `"WORLD" in Teams` (teams_test.py), Teams.keys() / Teams.TEST_TEAM; TeamConfig attributes;
    team_split_strided / team_split_2d with positional config and mask; team_init over every PE; the negative cases
    of teams_test.py with the exception classes they raise."""
    T = nvshmem.Teams
    assert nvshmem.team_my_pe(T.TEAM_NODE) == me and nvshmem.team_n_pes(T.TEAM_WORLD) == n
    assert nvshmem.team_n_pes(T.TEAM_SHARED) == n and nvshmem.team_n_pes(T.TEAM_SAME_MYPE_NODE) == 1
    assert nvshmem.team_n_pes(0) == n and T["TEAM_WORLD"] == 0 and int(T.TEAM_WORLD_INDEX) == 0
    assert "TEAM_NODE" in T and "TEAM_NODE" in T.keys() and "WORLD" not in T and "TEAM_WORLD" in list(T)
    # NVSHMEM's TEAM_SAME_GPU / TEAM_GPU_LEADERS (4, 5) and TEAMS_MIN; CPU PEs are each a device of their own
    assert [int(T[k]) for k in ("TEAM_SAME_GPU", "TEAM_SAME_GPU_INDEX", "TEAM_GPU_LEADERS", "TEAM_GPU_LEADERS_INDEX",
                                "TEAMS_MIN")] == [4, 4, 5, 5, 6]
    gpu_rank, leader_rank = nvshmem.team_my_pe(T.TEAM_SAME_GPU), nvshmem.team_my_pe(T.TEAM_GPU_LEADERS)
    if not lib.gpu:
        assert (gpu_rank, nvshmem.team_n_pes(T.TEAM_SAME_GPU)) == (0, 1)
        assert (leader_rank, nvshmem.team_n_pes(T.TEAM_GPU_LEADERS)) == (me, n)
    assert gpu_rank >= 0 and nvshmem.team_translate_pe(T.TEAM_SAME_GPU, gpu_rank, T.TEAM_WORLD) == me
    if leader_rank < 0:  # a PE that shares its GPU and is not its lowest: a team it is not in
        assert nvshmem.team_n_pes(T.TEAM_GPU_LEADERS) == -1 and gpu_rank > 0
    else:
        assert nvshmem.team_translate_pe(T.TEAM_GPU_LEADERS, leader_rank, T.TEAM_WORLD) == me
    src, dst = lib.new((3,), "int64"), lib.new((3,), "int64")  # every PE allocates (collective over the world)
    lib.set(src, data(me, 3, "int64"))
    for team in [T.TEAM_SAME_GPU] + ([T.TEAM_GPU_LEADERS] if leader_rank >= 0 else []):  # a barrier, a reduce
        nvshmem.barrier(team)
        members = [nvshmem.team_translate_pe(team, i, T.TEAM_WORLD) for i in range(nvshmem.team_n_pes(team))]
        lib.poison(dst)
        nvshmem.reduce(team, dst, src, "sum")
        same(lib.host(dst), sum(data(p, 3, "int64") for p in members), f"reduce on team {int(team)}")
        nvshmem.barrier(team)
    nvshmem.barrier_all()
    lib.free(dst)
    lib.free(src)
    raises(nvshmem.NvshmemError, nvshmem.team_destroy, T.TEAM_GPU_LEADERS)  # predefined
    parent = T.WORLD if "WORLD" in T else 0  # teams_test.py's spelling
    assert dict(T.items())["TEAM_SHARED"] == 1 and 2 in [int(v) for v in T.values()]
    config = nvshmem.TeamConfig()  # teams_test.py: fields set as attributes
    config.version = 2
    config.num_contexts = 1
    config.uniqueid = 12345
    # every member calls; (0, 2, ceil(n/2)) is the even PEs, None elsewhere
    team = nvshmem.team_split_strided(T.TEAM_NODE, 0, 2, (n + 1) // 2, config, 0)
    if me % 2:
        assert team is None
    else:
        assert nvshmem.team_n_pes(team) == (n + 1) // 2 and nvshmem.team_my_pe(team) == me // 2
        assert nvshmem.team_translate_pe(team, nvshmem.team_my_pe(team), parent) == me
        nvshmem.team_destroy(team)
    nvshmem.barrier(T.TEAM_WORLD)
    xcfg, ycfg = nvshmem.TeamConfig(), nvshmem.TeamConfig()
    xrange_ = 2 if n % 2 == 0 else n
    x, y = nvshmem.team_split_2d(T.TEAM_NODE, xrange_, xcfg, 0, ycfg, 0)  # positional configs and masks
    assert nvshmem.team_n_pes(x) == xrange_ and nvshmem.team_n_pes(y) == n // xrange_
    nvshmem.team_destroy(x)
    nvshmem.team_destroy(y)
    # team_init over every PE in order, every PE passing teams_test.py's uniqueid 12345 (test_team_destroy)
    t = nvshmem.team_init(config, 0, n, me, new_team_name="TEST_TEAM")
    assert "TEST_TEAM" in T.keys() and nvshmem.team_n_pes(t) == n and nvshmem.team_my_pe(T.TEST_TEAM) == me
    src, dst = lib.new((3,), "int64"), lib.new((3,), "int64")
    lib.set(src, data(me, 3, "int64"))
    lib.poison(dst)
    nvshmem.reduce(T.TEST_TEAM, dst, src, "sum")
    same(lib.host(dst), sum(data(p, 3, "int64") for p in range(n)), "reduce on a team_init team")
    nvshmem.barrier_all()
    lib.free(dst)
    lib.free(src)
    assert int(t) >= 6  # splits never take a predefined slot
    nvshmem.team_destroy(T.TEST_TEAM)
    assert "TEST_TEAM" not in T and int(T.TEAMS_MIN) == 6  # destroying slot 6 leaves the constant alone
    # negative cases, all PEs alike (checked before any collective starts)
    raises(KeyError, nvshmem.team_destroy, "NON_EXISTENT_TEAM")
    t = nvshmem.team_init(config, 0, n, me, new_team_name="NEG_TEST_TEAM")
    nvshmem.team_destroy("NEG_TEST_TEAM")
    raises(KeyError, nvshmem.team_destroy, "NEG_TEST_TEAM")  # twice
    raises(nvshmem.NvshmemError, nvshmem.team_init, config, -1, n, me, new_team_name="BAD_MASK_TEAM")
    raises(nvshmem.NvshmemError, nvshmem.team_split_strided, parent, 0, 1, 0, config, 0)  # size 0
    raises(nvshmem.NvshmemError, nvshmem.team_split_strided, -1, 0, 1, 2, config, 0)  # no such parent
    raises(nvshmem.NvshmemError, nvshmem.team_split_2d, parent, 0, config, 0, config, 0)  # xrange 0
    raises(nvshmem.NvshmemError, nvshmem.team_translate_pe, T.TEAM_WORLD, n + 10, parent)
    if n > 1:  # a proper subset through team_init needs a unique id shared by its members, and says so
        e = raises(nvshmem.NvshmemError, nvshmem.team_init, nvshmem.TeamConfig(), 0, n - 1, min(me, n - 2))
        assert "uniqueid" in str(e), e
    nvshmem.barrier(T.TEAM_WORLD)
    # team_init as users' code makes the team of a process group: the group's first PE gets the id and the others
    # receive the object (torch's broadcast_object_list: a pickle), config.uniqueid = that TeamUniqueId,
    # config_mask 0, only the members call. Here the even PEs, the id's pickle handed out by a broadcast.
    box, got = lib.new((256,), "uint8"), lib.new((256,), "uint8")
    blob = pickle.dumps(nvshmem.get_team_unique_id())
    assert len(blob) <= 255, len(blob)
    lib.set(box, np.frombuffer(bytes([len(blob)]) + blob.ljust(255, b"\0"), dtype=np.uint8))
    nvshmem.broadcast(T.TEAM_WORLD, got, box, root=0)
    raw = bytes(lib.host(got))
    uid = pickle.loads(raw[1:1 + raw[0]])
    assert isinstance(uid, nvshmem.TeamUniqueId) and uid.value not in (0, (1 << 64) - 1), uid
    if me % 2 == 0:
        cfg = nvshmem.TeamConfig()
        cfg.version, cfg.num_contexts, cfg.uniqueid = 2, 1, uid
        evens = (n + 1) // 2
        t = nvshmem.team_init(team_config=cfg, config_mask=0, npes=evens, pe_idx_in_team=me // 2)
        assert nvshmem.team_n_pes(t) == evens and nvshmem.team_my_pe(t) == me // 2, (t, evens)
        assert nvshmem.team_translate_pe(t, evens - 1, T.TEAM_WORLD) == 2 * (evens - 1)
        nvshmem.barrier(t)
        nvshmem.team_destroy(t)
    nvshmem.barrier(T.TEAM_WORLD)
    # every PE in decreasing world order (index n - 1 - me): a member list, as NVSHMEM's own test teams make one
    blob = pickle.dumps(nvshmem.get_team_unique_id())
    lib.set(box, np.frombuffer(bytes([len(blob)]) + blob.ljust(255, b"\0"), dtype=np.uint8))
    nvshmem.broadcast(T.TEAM_WORLD, got, box, root=0)
    raw = bytes(lib.host(got))
    cfg = nvshmem.TeamConfig()
    cfg.uniqueid = pickle.loads(raw[1:1 + raw[0]])
    t = nvshmem.team_init(cfg, 0, n, n - 1 - me)
    assert nvshmem.team_my_pe(t) == n - 1 - me and nvshmem.team_translate_pe(t, 0, T.TEAM_WORLD) == n - 1, t
    assert nvshmem.team_translate_pe(T.TEAM_WORLD, 0, t) == n - 1
    src, dst = lib.new((3,), "int64"), lib.new((3,), "int64")
    lib.set(src, data(me, 3, "int64"))
    lib.poison(dst)
    nvshmem.reduce(t, dst, src, "sum")
    same(lib.host(dst), sum(data(p, 3, "int64") for p in range(n)), "reduce on a team_init team in reverse order")
    lib.poison(dst)
    nvshmem.broadcast(t, dst, src, root=0)  # root: team index 0, world PE n - 1
    same(lib.host(dst), data(n - 1, 3, "int64"), "broadcast on a team_init team in reverse order")
    nvshmem.barrier(t)
    nvshmem.team_destroy(t)
    lib.free(dst)
    lib.free(src)
    nvshmem.barrier(T.TEAM_WORLD)
    lib.free(got)
    lib.free(box)


DTYPES = ("float16", "float32", "float64", "uint8", "int8", "int16", "int32", "int64", "bool")  # collective_test.py

# nvshmem4py 0.4.1's nvshmem.core public names: the __all__ of init_fini, nvshmem_types, memory, interop.cupy,
# interop.torch, direct, collective, rma, amo and teams, as its wheel has them (names only: facts of its API).
NVSHMEM4PY_CORE_NAMES = (
    "get_unique_id init finalize get_name get_version module_init module_finalize library_init library_finalize "
    "UniqueID DeviceLibLanguage find_device_bitcode_library Version NvshmemInvalid NvshmemError NvshmemResource "
    "NvshmemStream NvshmemStreamsType MutableEnum Teams BufferTypes NvshmemKernelObject buffer free get_peer_buffer "
    "get_multicast_buffer register_external_buffer unregister_external_buffer bytearray array free_array "
    "array_get_buffer get_peer_array get_multicast_array register_external_array unregister_external_array "
    "bytetensor tensor free_tensor tensor_get_buffer get_peer_tensor get_multicast_tensor register_external_tensor "
    "unregister_external_tensor ComparisonType SignalOp InitStatus ThreadSupport SmemAmount ask_smem query_thread "
    "my_pe team_my_pe team_n_pes n_pes init_status reduce reducescatter alltoall fcollect broadcast barrier sync "
    "barrier_all sync_all collective_on_buffer put_signal put_signal_nbi signal_op signal_wait put put_nbi get "
    "get_nbi quiet flush signal_fetch atomic_fetch atomic_set atomic_inc atomic_fetch_inc atomic_add "
    "atomic_fetch_add atomic_and atomic_fetch_and atomic_or atomic_fetch_or atomic_xor atomic_fetch_xor atomic_swap "
    "atomic_compare_swap team_split_strided team_split_2d team_destroy team_init team_translate_pe team_get_config "
    "TeamConfig TeamUniqueId get_team_unique_id").split()


def _vals(pe, shape, dtype):
    if dtype == "bool":
        return data(pe, shape, "uint8", 0, 2).astype(bool)
    return data(pe, shape, dtype, 1, 4)


def _bytes(x, dtype):
    """Compare bools by their bytes (a bool reduce writes counts as uint8, as nvshmem4py's "bool" -> uint8)."""
    x = np.ascontiguousarray(x)
    return x.view(np.uint8) if dtype == "bool" else x


def check_collectives(lib, me, n):
    """collective_test.py's calls with its dtypes (strings, "bool" included) and shapes: reduce with the op
    positional and as op= (memory_test.py, torch_mempool.py), reducescatter of (2, 2, n) into (2, 2), fcollect of
    (2, 2) into (n, 2, 2), alltoall of (n, n), broadcast(root=...) (keyword), barrier / sync on TEAM_NODE,
    barrier_all / sync_all; on-stream.py's dtype="int"; in-place reduce (torch_mempool.py / torch_triton_interop.py:
    reduce(team, t, t, "sum")); nvshmem.collective.alltoall(team, out, in) with no stream (pplx-kernels fork)."""
    W = nvshmem.Teams.TEAM_WORLD
    for dtype in DTYPES:
        allv = np.stack([_vals(p, (2, 2), dtype) for p in range(n)])
        src, dst = lib.new((2, 2), dtype), lib.new((2, 2), dtype)
        for k, op in enumerate(("sum", "min", "max")):
            lib.set(src, allv[me])
            lib.poison(dst)
            nvshmem.barrier(W)
            if k % 2:
                nvshmem.reduce(W, dst, src, op=op)
            else:
                nvshmem.reduce(W, dst, src, op)
            red = {"sum": np.add, "min": np.minimum, "max": np.maximum}[op]
            want = red.reduce(allv.astype(np.uint8) if dtype == "bool" else allv, axis=0)
            same(_bytes(lib.host(dst), dtype), want.astype(np.uint8 if dtype == "bool" else dtype),
                 f"reduce {dtype} {op}")
        # reducescatter: src (2, 2, n), dst (2, 2): PE i gets the op over the 4 elements of block i
        big = np.stack([_vals(p, (2, 2, n), dtype) for p in range(n)])
        rs_src = lib.new((2, 2, n), dtype)
        lib.set(rs_src, big[me])
        lib.poison(dst)
        nvshmem.barrier(W)
        nvshmem.reducescatter(W, dst, rs_src, "max")
        want = np.maximum.reduce(big.reshape(n, -1), axis=0)[4 * me:4 * me + 4].reshape(2, 2)
        same(_bytes(lib.host(dst), dtype), _bytes(want, dtype), f"reducescatter {dtype}")
        # fcollect: (2, 2) into (n, 2, 2)
        fc = lib.new((n, 2, 2), dtype)
        lib.set(src, allv[me])
        lib.poison(fc)
        nvshmem.barrier(W)
        nvshmem.fcollect(W, fc, src)
        same(_bytes(lib.host(fc), dtype), _bytes(allv, dtype), f"fcollect {dtype}")
        # alltoall: (n, n); row j of PE p goes to PE j's row p
        a2a_all = np.stack([_vals(100 + p, (n, n), dtype) for p in range(n)])
        a_src, a_dst = lib.new((n, n), dtype), lib.new((n, n), dtype)
        lib.set(a_src, a2a_all[me])
        lib.poison(a_dst)
        nvshmem.barrier(W)
        nvshmem.collective.alltoall(W, a_dst, a_src)
        same(_bytes(lib.host(a_dst), dtype), _bytes(a2a_all[:, me, :], dtype), f"alltoall {dtype}")
        # broadcast(root=...) from the last PE
        lib.poison(dst)
        nvshmem.barrier(W)
        nvshmem.broadcast(W, dst, src, root=n - 1)
        same(_bytes(lib.host(dst), dtype), _bytes(allv[n - 1], dtype), f"broadcast {dtype}")
        nvshmem.barrier_all()
        for a in (a_dst, a_src, fc, rs_src, dst, src):
            lib.free(a)
    # dtype="int" (on-stream.py): NumPy's int, int64 here
    if LIB != "torch":
        x = nvshmem.array((5,), dtype="int")
        assert x.dtype == np.dtype("int")
        lib.set(x, data(me, 5, "int64"))
        nvshmem.reduce(W, x, x, "sum")  # in place
        same(lib.host(x), sum(data(p, 5, "int64") for p in range(n)), "in-place reduce of dtype=int")
        nvshmem.barrier_all()
        lib.free(x)
    nvshmem.barrier(nvshmem.Teams.TEAM_NODE)
    nvshmem.sync(nvshmem.Teams.TEAM_NODE)
    nvshmem.sync_all()
    nvshmem.barrier_all()


def check_shapes(lib, me, n):
    """How programs pass shapes and orders: array(1024) / tensor(1024) (an int, default float32; memory_test.py),
    array((1, 2, 3, 4), dtype="float32"), (256, 1), a list, morder="F" (memory_test.py: cupy.isfortran holds) used
    in put and reduce as nvshmem4py moves its bytes, bytearray."""
    a = lib.new(1024, "float32") if LIB != "torch" else nvshmem.tensor(1024)
    assert tuple(a.shape) == (1024,) and lib.xp.dtype_ok(a, "float32")
    b = lib.new((1, 2, 3, 4), "float32")
    c = lib.new((256, 1), "float32")
    d = lib.new([2, 3, 4], "int16")  # a list (cutlass examples: tensor([PING_PONG_SIZE, world_size, M, N], ...))
    assert tuple(d.shape) == (2, 3, 4)
    f = lib.new((3, 4), "int32", morder="F")
    assert tuple(f.shape) == (3, 4)
    if LIB == "numpy":
        assert f.flags.f_contiguous and not f.flags.c_contiguous
    elif LIB == "cupy":
        assert lib.xp.cp.isfortran(f)
    else:
        assert f.stride() == (1, 3)
    vals = data(me, (3, 4), "int32")
    lib.set(f, vals)
    g = lib.new((3, 4), "int32", morder="F")
    lib.poison(g)
    nvshmem.barrier_all()
    nvshmem.put(g, f, remote_pe=(me + 1) % n)  # the same layout on both sides: element (i, j) lands at (i, j)
    nvshmem.barrier_all()
    same(lib.host(g), data((me - 1) % n, (3, 4), "int32"), "put between morder=F arrays")
    nvshmem.reduce(nvshmem.Teams.TEAM_WORLD, g, f, "sum")
    same(lib.host(g), sum(data(p, (3, 4), "int32") for p in range(n)), "reduce of morder=F arrays")
    p = lib.peer(f, (me + 1) % n)  # a peer view keeps the order
    nvshmem.barrier_all()
    same(lib.host(p), data((me + 1) % n, (3, 4), "int32"), "peer view of a morder=F array")
    nvshmem.barrier_all()
    if LIB != "torch":
        ba = nvshmem.bytearray((2, 3), dtype="float64")
        assert ba.nbytes == 48
        lib.free(ba)
    for x in (g, f, d, c, b, a):
        lib.free(x)


def _fill_buffer(buf, values):
    """Writes values into a Buffer through DLPack (np.from_dlpack / torch / cupy from_dlpack, as programs do)."""
    if LIB == "torch":
        import torch
        t = torch.from_dlpack(buf)
        t.copy_(torch.from_numpy(np.ascontiguousarray(values).view(np.uint8).reshape(-1)))
        return t
    if LIB == "cupy":
        import cupy
        t = cupy.from_dlpack(buf)
        t[...] = cupy.asarray(np.ascontiguousarray(values).view(np.uint8).reshape(-1))
        return t
    t = np.from_dlpack(buf)
    t[...] = np.ascontiguousarray(values).view(np.uint8).reshape(-1)
    return t


def _read_buffer(lib, buf, dtype, count):
    if LIB == "torch":
        import torch
        raw = torch.from_dlpack(buf).cpu().numpy()
    elif LIB == "cupy":
        import cupy
        raw = cupy.asnumpy(cupy.from_dlpack(buf))
    else:
        raw = np.array(np.from_dlpack(buf))
    return raw.view(dtype)[:count]


def check_buffers(lib, me, n):
    """Raw buffers: buffer(size) sized with utils.get_size(shape, <NVSHMEM type name>) and collective_on_buffer(coll,
    team, dst, src, dtype=<NVSHMEM name>, op=...) as collective_test.py test_collectives_on_raw_buffers does (dst n
    times src), enable_timing=True (perftest/utils.py); put(buf_dst, buf_src, remote_pe=...) (rma_test.py);
    buffer(8, release=True) seen through from_dlpack and freed with free_array (memory_test.py)."""
    W = nvshmem.Teams.TEAM_WORLD
    for name, dt in (("float", "float32"), ("double", "float64"), ("int", "int32"), ("int64", "int64"),
                     ("half", "float16"), ("uint64", "uint64"), ("int8", "int8")):
        esz = nvshmem.utils.dtype_nbytes(name)
        src = nvshmem.buffer(nvshmem.utils.get_size((2, 2, n), name))
        dst = nvshmem.buffer(n * nvshmem.utils.get_size((2, 2, n), name))
        se = src.size // esz  # element counts as nvshmem4py takes them from the sizes
        allv = [data(p, se, dt, 1, 4) for p in range(n)]
        for coll in ("fcollect", "alltoall"):  # counts from src: NVIDIA's sizes fit
            _fill_buffer(src, allv[me])
            _fill_buffer(dst, np.full(dst.size, 0xA5, np.uint8))
            lib.xp.sync()
            nvshmem.barrier(W)
            ms = nvshmem.collective_on_buffer(coll, W, dst, src, dtype=name, op=None,
                                              enable_timing=coll == "fcollect")
            assert ms >= 0
            if coll == "fcollect":
                want = np.concatenate(allv)
            else:
                per = se // n
                want = np.concatenate([allv[p][me * per:(me + 1) * per] for p in range(n)])
            got = _read_buffer(lib, dst, "uint8", dst.size)
            same(got[:want.nbytes].view(dt), want, f"collective_on_buffer {coll} {name}")
            same(got[want.nbytes:], np.full(dst.size - want.nbytes, 0xA5, np.uint8), f"{coll} {name}: past the end")
            nvshmem.barrier(W)
        # reduce / reducescatter / broadcast count from dst: with NVIDIA's sizes (dst n times src) that would read
        # past src (nvshmem4py does), so gshmem refuses, on every PE alike
        for coll, op in (("reduce", "sum"), ("reducescatter", "min"), ("broadcast", None)):
            raises(nvshmem.NvshmemInvalid, nvshmem.collective_on_buffer, coll, W, dst, src, dtype=name, op=op)
        # sized as the counts need: dst of src's size (reduce, broadcast), of src / n (reducescatter)
        for coll, op, size in (("reduce", "sum", src.size), ("reduce", "min", src.size), ("reduce", "max", src.size),
                               ("reducescatter", "sum", src.size // n), ("broadcast", None, src.size)):
            out = nvshmem.buffer(size)
            _fill_buffer(src, allv[me])
            _fill_buffer(out, np.full(size, 0xA5, np.uint8))
            lib.xp.sync()
            nvshmem.barrier(W)
            nvshmem.collective_on_buffer(coll, W, out, src, dtype=name, op=op, root=n - 1, stream=None)
            k = size // esz
            if coll == "broadcast":
                want = allv[n - 1]
            else:
                full = {"sum": np.add, "min": np.minimum, "max": np.maximum}[op].reduce(np.stack(allv), axis=0)
                want = full if coll == "reduce" else full[me * k:(me + 1) * k]
            same(_read_buffer(lib, out, dt, k), want.astype(dt), f"collective_on_buffer {coll} {op} {name}")
            nvshmem.barrier(W)
            nvshmem.free(out)
        nvshmem.free(dst)
        nvshmem.free(src)
    raises(nvshmem.NvshmemInvalid, nvshmem.collective_on_buffer, "allreduce", W, None, None, dtype="float")
    b = nvshmem.buffer(64)
    raises(nvshmem.NvshmemInvalid, nvshmem.collective_on_buffer, "reduce", W, b, b, dtype="float128", op="sum")
    raises(nvshmem.NvshmemInvalid, nvshmem.collective_on_buffer, "reduce", W, b, b, dtype="float", op="avg")
    raises(nvshmem.NvshmemInvalid, nvshmem.collective_on_buffer, "reduce", W, b, b, dtype="float", op=None)
    # put on Buffers (both sides symmetric)
    b2 = nvshmem.buffer(64)
    _fill_buffer(b, data(me, 64, "uint8"))
    _fill_buffer(b2, np.full(64, 0xA5, np.uint8))
    lib.xp.sync()
    nvshmem.barrier_all()
    nvshmem.put(b2, b, remote_pe=(me + 1) % n)
    nvshmem.barrier_all()
    same(_read_buffer(lib, b2, "uint8", 64), data((me - 1) % n, 64, "uint8"), "put between Buffers")
    nvshmem.barrier_all()
    nvshmem.free(b2)
    nvshmem.free(b)
    # buffer(8, release=True) -> from_dlpack -> free_array / free_tensor frees the buffer's memory
    r = nvshmem.buffer(8, release=True)
    arr = _fill_buffer(r, np.zeros(8, np.uint8))
    lib.xp.sync()
    (nvshmem.free_tensor if LIB == "torch" else nvshmem.free_array)(arr)
    raises(nvshmem.NvshmemInvalid, nvshmem.free, r)  # already freed


def check_rma(lib, me, n):
    """rma_test.py: put / get with remote_pe=, put_nbi + flush + quiet, get_nbi + quiet; signals as Buffers from
    array_get_buffer(signal_array) with SignalOp.SIGNAL_SET / SIGNAL_ADD and ComparisonType.CMP_EQ / CMP_GE;
    put_signal_nbi and signal_fetch; signal_op(buf_sig, 1, SIGNAL_SET, remote_pe=...)."""
    nxt, prv = (me + 1) % n, (me - 1) % n
    src, dst = lib.new((4, 4), "float32"), lib.new((4, 4), "float32")
    lib.set(src, data(me, (4, 4), "float32"))
    lib.poison(dst)
    nvshmem.barrier_all()
    nvshmem.put(dst, src, remote_pe=nxt)
    nvshmem.barrier(nvshmem.Teams.TEAM_WORLD)
    same(lib.host(dst), data(prv, (4, 4), "float32"), "put(dst, src, remote_pe=)")
    g = lib.new((4, 4), "float32")
    lib.poison(g)
    nvshmem.get(g, src, remote_pe=nxt)
    same(lib.host(g), data(nxt, (4, 4), "float32"), "get")
    nvshmem.barrier_all()
    lib.set(src, data(me + 10, (4, 4), "float32"))
    lib.poison(dst)
    nvshmem.barrier_all()
    nvshmem.put_nbi(dst, src, remote_pe=nxt)
    nvshmem.flush()
    nvshmem.quiet()
    nvshmem.get_nbi(g, src, remote_pe=nxt)
    nvshmem.quiet()
    nvshmem.barrier(nvshmem.Teams.TEAM_WORLD)
    same(lib.host(dst), data(prv + 10, (4, 4), "float32"), "put_nbi + flush + quiet")
    same(lib.host(g), data(nxt + 10, (4, 4), "float32"), "get_nbi + quiet")
    nvshmem.barrier_all()
    # signals: a uint64 array's Buffer (torch has no uint64 in older versions: the programs use an array)
    signal = nvshmem.array((1,), dtype="uint64") if LIB != "torch" else lib.new((1,), "int64")
    lib.set(signal, np.zeros(1, np.uint64 if LIB != "torch" else np.int64))
    buf_sig, sz, dtype_str = (nvshmem.array_get_buffer if LIB != "torch" else nvshmem.tensor_get_buffer)(signal)
    assert sz == 8 and dtype_str in ("uint64", "torch.int64")
    nvshmem.barrier_all()
    for it in (1, 2):
        lib.set(src, data(100 * it + me, (4, 4), "float32"))
        lib.poison(dst)
        nvshmem.barrier_all()
        if it == 1:
            nvshmem.put_signal(dst, src, buf_sig, it, nvshmem.SignalOp.SIGNAL_SET, remote_pe=nxt)
        else:
            nvshmem.put_signal_nbi(dst, src, buf_sig, it, nvshmem.SignalOp.SIGNAL_SET, remote_pe=nxt)
            nvshmem.quiet()
        nvshmem.signal_wait(buf_sig, it, nvshmem.ComparisonType.CMP_EQ)
        lib.xp.sync()
        same(lib.host(dst), data(100 * it + prv, (4, 4), "float32"), f"put_signal round {it}")
        assert nvshmem.signal_fetch(buf_sig) == it
        nvshmem.barrier_all()
    nvshmem.signal_op(buf_sig, 5, nvshmem.SignalOp.SIGNAL_ADD, remote_pe=0)
    if me == 0:
        nvshmem.signal_wait(buf_sig, 2 + 5 * n, nvshmem.ComparisonType.CMP_GE)
        lib.xp.sync()
        assert nvshmem.signal_fetch(buf_sig) == 2 + 5 * n
    nvshmem.barrier_all()
    nvshmem.signal_op(buf_sig, 7, nvshmem.SignalOp.SIGNAL_SET, remote_pe=me)
    lib.xp.sync()  # GPU PEs: the signal op is on the stream, signal_fetch reads now
    assert nvshmem.signal_fetch(buf_sig) == 7
    # bad input: the classes programs catch
    raises(nvshmem.NvshmemInvalid, nvshmem.put, dst, src, remote_pe=n)
    raises(nvshmem.NvshmemInvalid, nvshmem.put, dst, "not an array", remote_pe=0)
    raises(nvshmem.NvshmemInvalid, nvshmem.signal_op, buf_sig, 1, 99, remote_pe=0)
    raises(nvshmem.NvshmemInvalid, nvshmem.signal_wait, src, 1, nvshmem.ComparisonType.CMP_EQ)  # float32 signal
    nvshmem.barrier_all()
    for a in (signal, g, dst, src):
        lib.free(a)


def check_amo(lib, me, n):
    """rma_test.py test_host_atomic_memory_operations: every host AMO on int32 / uint32 / float32 targets (here on the
    next PE as well as this one), offset= and dtype= keywords on a larger array and on a Buffer, and bad input."""
    nxt = (me + 1) % n
    ints = lib.new((1,), "int32")
    uints = nvshmem.array((1,), dtype="uint32") if LIB != "torch" else lib.new((1,), "int64")
    floats = lib.new((1,), "float32")
    lib.set(ints, np.array([10], np.int32))
    lib.set(uints, np.array([0b1010], np.uint32 if LIB != "torch" else np.int64))
    lib.set(floats, np.array([1.25], np.float32))
    lib.barrier_now()
    for pe in (me, nxt):  # own copy, then the next PE's (every PE does the same to its next one)
        if pe == nxt:
            lib.barrier_now()
            lib.set(ints, np.array([10], np.int32))
            lib.set(uints, np.array([0b1010], np.uint32 if LIB != "torch" else np.int64))
            lib.set(floats, np.array([1.25], np.float32))
            lib.barrier_now()
        assert nvshmem.atomic_fetch(ints, pe) == 10
        nvshmem.atomic_set(ints, 12, pe)
        assert nvshmem.atomic_fetch_add(ints, 4, pe) == 12
        nvshmem.atomic_add(ints, 3, pe)
        assert nvshmem.atomic_fetch_inc(ints, pe) == 19
        nvshmem.atomic_inc(ints, pe)
        assert nvshmem.atomic_swap(ints, 30, pe) == 21
        assert nvshmem.atomic_compare_swap(ints, 30, 25, pe) == 30
        assert nvshmem.atomic_compare_swap(ints, 30, 99, pe) == 25
        assert nvshmem.atomic_fetch_add(ints, -40, pe) == 25 and nvshmem.atomic_fetch(ints, pe) == -15
        assert nvshmem.atomic_fetch_or(uints, 0b0101, pe) == 0b1010
        nvshmem.atomic_and(uints, 0b1101, pe)
        assert nvshmem.atomic_fetch_xor(uints, 0b0011, pe) == 0b1101
        nvshmem.atomic_or(uints, 0b0001, pe)
        nvshmem.atomic_xor(uints, 0b0011, pe)
        assert nvshmem.atomic_fetch_and(uints, 0b1111, pe) == 0b1100
        assert nvshmem.atomic_fetch(floats, pe) == 1.25
        nvshmem.atomic_set(floats, 1.5, pe)
        assert nvshmem.atomic_fetch_add(floats, 0.5, pe) == 1.5
        nvshmem.atomic_add(floats, 0.25, pe)
        assert nvshmem.atomic_swap(floats, -3.5, pe) == 2.25 and nvshmem.atomic_fetch(floats, pe) == -3.5
    lib.barrier_now()
    same(lib.host(ints), np.array([-15], np.int32), "int32 AMOs from the previous PE")
    # every PE adds to PE 0's counters at offsets: exact totals
    counters = lib.new((4,), "int64")
    lib.set(counters, np.zeros(4, np.int64))
    lib.barrier_now()
    for k in range(4):
        nvshmem.atomic_add(counters, (me + 1) * (k + 1), 0, offset=k)
    lib.barrier_now()
    if me == 0:
        same(lib.host(counters), np.array([(k + 1) * n * (n + 1) // 2 for k in range(4)], np.int64),
             "atomic_add(offset=) from every PE")
    buf, _, _ = (nvshmem.array_get_buffer if LIB != "torch" else nvshmem.tensor_get_buffer)(counters)
    lib.barrier_now()
    assert nvshmem.atomic_fetch(buf, me, offset=1, dtype="int64") == (2 * n * (n + 1) // 2 if me == 0 else 0)
    lib.barrier_now()
    raises(nvshmem.NvshmemInvalid, nvshmem.atomic_fetch, buf, me)  # a Buffer needs dtype=
    raises(nvshmem.NvshmemInvalid, nvshmem.atomic_fetch, counters, me, offset=4)
    raises(nvshmem.NvshmemInvalid, nvshmem.atomic_fetch, counters, me, offset=-1)
    raises(nvshmem.NvshmemInvalid, nvshmem.atomic_fetch, counters, me, dtype="int32")  # not its dtype
    raises(nvshmem.NvshmemInvalid, nvshmem.atomic_and, floats, 1, me)
    raises(nvshmem.NvshmemInvalid, nvshmem.atomic_inc, floats, me)
    raises(nvshmem.NvshmemInvalid, nvshmem.atomic_fetch, ints)  # remote_pe left at -1
    raises(nvshmem.NvshmemInvalid, nvshmem.atomic_fetch, ints, n)
    raises(nvshmem.NvshmemInvalid, nvshmem.atomic_fetch, lib.xp.local((1,), "int32"), me)  # not symmetric
    i16 = lib.new((2,), "int16")
    raises(nvshmem.NvshmemInvalid, nvshmem.atomic_fetch, i16, me)  # no 16-bit atomics
    lib.barrier_now()
    for a in (i16, counters, floats, uints, ints):
        lib.free(a)


def check_peers(lib, me, n):
    """get_peer_buffer / get_peer_array / get_peer_tensor of every PE, this one included (cutlass and
    triton-distributed programs build such lists; memory_test.py), stores through them, then freeing the views of
    the other PEs (a local no-op in nvshmem4py: `free(peer_buf)`, `free_tensor(t_peer)` on one PE only) before
    the allocation itself."""
    shape = (16, 8)
    t = lib.new(shape, "float16")
    lib.set(t, data(me, shape, "float16"))
    nvshmem.barrier_all()
    views = [lib.peer(t, p) for p in range(n)]
    for p, v in enumerate(views):
        same(lib.host(v), data(p, shape, "float16"), f"peer view of PE {p}")
    nvshmem.barrier_all()
    lib.set(views[(me + 1) % n], data(50 + me, shape, "float16"))  # a store into the next PE's copy
    nvshmem.barrier_all()
    same(lib.host(t), data(50 + (me - 1) % n, shape, "float16"), "store through a peer view")
    nvshmem.barrier_all()
    if me == 0:  # one PE only frees its views: no collective
        for p in range(n):
            if p != me:
                lib.free(views[p])
    buf = nvshmem.buffer(1024)
    pb = nvshmem.get_peer_buffer(buf, (me + 1) % n)
    assert pb.size == 1024
    # cuda.core's Buffer record, read for the address (triton-distributed's nvshmem_signal_wait reads
    # tensor_get_buffer(get_peer_tensor(sig, pe))[0]._mnff.ptr; nvmath's distributed helpers buf._mnff.ptr)
    assert (buf._mnff.ptr, buf._mnff.size) == (buf.handle, 1024) and pb._mnff.ptr == pb.handle != buf.handle
    pv = lib.peer(t, (me + 1) % n)
    view_buf = (nvshmem.tensor_get_buffer if LIB == "torch" else nvshmem.array_get_buffer)(pv)[0]
    want_ptr = pv.data_ptr() if LIB == "torch" else pv.data.ptr if LIB == "cupy" else pv.ctypes.data
    assert view_buf._mnff.ptr == view_buf.handle == want_ptr, (view_buf, want_ptr)
    if me == 0:
        nvshmem.free(pb)  # memory_test.py test_peer_buffer: "safe to do so"
    nvshmem.barrier_all()
    nvshmem.free(buf)
    lib.free(t)
    raises(nvshmem.NvshmemInvalid, lib.peer, lib.xp.local((2,), "float32"), 0)
    raises(nvshmem.NvshmemInvalid, lib.peer, t, 0)  # freed
    raises(nvshmem.NvshmemInvalid, nvshmem.get_multicast_buffer, nvshmem.Teams.TEAM_NODE, None)
    if LIB != "torch":
        raises(nvshmem.NvshmemInvalid, nvshmem.get_multicast_array, nvshmem.Teams.TEAM_SHARED, None)


def check_bad_input(lib, me, n):
    """The classes programs catch, and .msg: NvshmemInvalid for bad arguments (nvshmem4py raises NvshmemInvalid for
    its checks and NvshmemError for failures), ValueError-compatible; a bad morder; mismatched dtypes; an op
    outside nvshmem4py's min / max / sum (and gshmem's prod / and / or / xor)."""
    W = nvshmem.Teams.TEAM_WORLD
    x, y = lib.new((4,), "int32"), lib.new((4,), "float32")
    e = raises(nvshmem.NvshmemInvalid, nvshmem.reduce, W, x, y, "sum")
    assert isinstance(e, nvshmem.NvshmemError) and isinstance(e, ValueError) and "reduce" in e.msg
    raises(nvshmem.NvshmemInvalid, nvshmem.reduce, W, x, x, "avg")
    raises(nvshmem.NvshmemInvalid, lib.new, (4,), "int32", morder="X")
    raises(nvshmem.NvshmemInvalid, nvshmem.broadcast, W, x, x, root=n)
    raises(nvshmem.NvshmemInvalid, nvshmem.reduce, 99, x, x, "sum")
    nvshmem.barrier_all()
    lib.free(y)
    lib.free(x)


def check_api_surface(lib, me, n):
    """nvshmem4py 0.x names and behaviours beyond the calls above, as its modules define them (NVIDIA/nvshmem
    nvshmem4py/nvshmem/core/*.py) and programs reach them: init(except_on_del=) (init_fini.py of 0.1), MutableEnum
    and NvshmemResource in nvshmem_types' __all__, module_init in init_fini, collective's module tables (amo.py
    imports external_to_nvshmem_dtypes), Teams.add / remove raising ValueError (MutableEnum), a team name given
    twice, team_destroy of a handle that is no team (teams_test.py: "C API is idempotent"), Buffer.memory_resource /
    .close() (cuda.core Buffers), `import nvshmem.core.interop.cute` (CuTe DSL users) and nvshmem.core.device.*."""
    import importlib
    import inspect
    from gshmem.core.init_fini import module_init
    from gshmem.core.nvshmem_types import MutableEnum, NvshmemResource
    T, W = nvshmem.Teams, nvshmem.Teams.TEAM_WORLD
    assert inspect.signature(nvshmem.init).parameters["except_on_del"].default is True
    assert module_init is nvshmem.module_init and nvshmem.NvshmemResource is NvshmemResource
    assert nvshmem.collective.external_to_nvshmem_dtypes["torch.float32"] == "float"
    assert nvshmem.collective.external_to_nvshmem_dtypes["bool"] == "uint8" and "sum" in nvshmem.collective.valid_ops
    assert nvshmem.collective.valid_collectives == ["reduce", "reducescatter", "alltoall", "fcollect", "broadcast"]
    # MutableEnum: nvshmem4py's class, with its errors
    names = [f"K{i}" for i in np.random.default_rng([SEED, 7]).permutation(5)]
    m = MutableEnum(**{k: i for i, k in enumerate(names)})
    assert list(m) == names and m[names[2]] == 2 and getattr(m, names[4]) == 4 and names[0] in m and "X" not in m
    raises(ValueError, m.add, names[1], 9)
    raises(ValueError, m.remove, "X")
    raises(KeyError, m.__getitem__, "X")
    raises(AttributeError, getattr, m, "X")
    m.remove_by_value(99)  # unknown value: nothing happens
    m.remove_by_value(3)
    m.remove(names[0])
    m.add("X", 7)
    assert list(m.items()) == [(k, i) for i, k in enumerate(names) if i not in (0, 3)] + [("X", 7)]
    assert list(MutableEnum.from_enum(nvshmem.BufferTypes).keys()) == ["NORMAL", "PEER", "MULTIMEM", "EXTERNAL"]
    # Teams: add of a registered name and remove of an unknown one raise ValueError (NvshmemInvalid here)
    e = raises(ValueError, T.add, "TEAM_WORLD", 0)
    assert isinstance(e, nvshmem.NvshmemInvalid) and "Teams.add" in e.msg and int(T.TEAM_WORLD) == 0
    raises(ValueError, T.remove, "NO_SUCH_TEAM")
    # a new_team_name already registered: ValueError on every PE before the collective, the old team untouched
    t = nvshmem.team_split_strided(W, 0, 1, n, None, 0, new_team_name="GAP_TEAM")
    for call, args in ((nvshmem.team_split_strided, (W, 0, 1, n, None, 0)), (nvshmem.team_init, (None, 0, n, me))):
        e = raises(ValueError, call, *args, new_team_name="GAP_TEAM")
        assert call.__name__ in e.msg and "GAP_TEAM" in e.msg, e.msg
    x, y = nvshmem.team_split_2d(W, n, None, 0, None, 0, new_team_name="GAP2")
    e = raises(ValueError, nvshmem.team_split_2d, W, n, None, 0, None, 0, new_team_name="GAP2")
    assert "team_split_2d" in e.msg and "GAP2_X" in e.msg
    src, dst = lib.new((5,), "int32"), lib.new((5,), "int32")
    lib.set(src, data(me, 5, "int32"))
    lib.poison(dst)
    nvshmem.reduce(T.GAP_TEAM, dst, src, "max")  # the first team still works
    same(lib.host(dst), np.max([data(p, 5, "int32") for p in range(n)], axis=0), "reduce on GAP_TEAM")
    handle = int(t)
    nvshmem.team_destroy("GAP_TEAM")
    nvshmem.team_destroy(handle)  # destroyed already: nothing happens, as nvshmem4py's C API does
    nvshmem.team_destroy(30)  # never made (teams_test.py test_team_destroy_negative)
    assert "GAP_TEAM" not in T and nvshmem.team_n_pes(handle) <= 0
    nvshmem.team_destroy(x)
    nvshmem.team_destroy(y)
    # Buffer.memory_resource (NvshmemResource) and close(): a peer view is forgotten, a live buffer must be freed
    buf = nvshmem.buffer(8 * n)
    mr = buf.memory_resource
    assert isinstance(mr, NvshmemResource) and mr.is_host_accessible == (not lib.gpu) and mr is buf.memory_resource
    assert mr.is_device_accessible == lib.gpu
    e = raises(nvshmem.NvshmemError, buf.close)
    assert "Buffer.close" in e.msg and "free(buf)" in e.msg, e.msg
    b2 = mr.allocate(8 * n)  # collective, as buffer()
    want = data(me, n, "int64")
    _fill_buffer(b2, want)
    lib.xp.sync()
    nvshmem.barrier_all()
    peer = (me + 1) % n
    view = mr.get_peer_buffer(b2, peer)
    assert view.handle == nvshmem.get_peer_buffer(b2, peer).handle and view.size == b2.size
    if not lib.gpu:  # the peer's bytes, read through the view on the host
        same(np.array(np.from_dlpack(view)).view(np.int64), data(peer, n, "int64"), "NvshmemResource peer view")
    view.close()  # forgotten (local)
    raises(nvshmem.NvshmemInvalid, mr.get_mc_buffer, W, b2)
    # cuda.core's Buffer.copy_to / copy_from: whole buffers, into a given buffer, into a new one from the resource
    # (every PE calls), from a peer view (the peer's bytes) and into a peer view (the peer's copy is written)
    b3 = mr.allocate(8 * n)
    _fill_buffer(b3, np.full(n, -1, np.int64))
    lib.xp.sync()
    assert b2.copy_to(b3) is b3
    lib.xp.sync()
    same(_read_buffer(lib, b3, np.int64, n), want, "Buffer.copy_to")
    fresh = b2.copy_to()
    lib.xp.sync()
    assert fresh.size == b2.size and fresh.handle not in (b2.handle, b3.handle)
    same(_read_buffer(lib, fresh, np.int64, n), want, "Buffer.copy_to() into a new buffer")
    nvshmem.get_peer_buffer(b2, peer).copy_to(b3)
    lib.xp.sync()
    same(_read_buffer(lib, b3, np.int64, n), data(peer, n, "int64"), "Buffer.copy_to from a peer view")
    nvshmem.get_peer_buffer(b2, me).copy_to(b3)  # this PE's own view
    lib.xp.sync()
    same(_read_buffer(lib, b3, np.int64, n), want, "Buffer.copy_to from this PE's own view")
    small = mr.allocate(8)
    if n > 1:
        e = raises(nvshmem.NvshmemInvalid, b2.copy_to, small)
        assert "Buffer.copy_to" in e.msg and f"exactly {8 * n} bytes" in e.msg, e.msg
        e = raises(nvshmem.NvshmemInvalid, b2.copy_from, small)
        assert "Buffer.copy_from" in e.msg, e.msg
    nvshmem.barrier_all()  # every PE has read its b3 before a peer writes it
    _fill_buffer(fresh, data(me + 100, n, "int64", 100, 1000))
    lib.xp.sync()
    nvshmem.get_peer_buffer(b3, peer).copy_from(fresh)
    lib.xp.sync()
    nvshmem.barrier_all()
    same(_read_buffer(lib, b3, np.int64, n), data((me - 1) % n + 100, n, "int64", 100, 1000),
         "Buffer.copy_from into a peer view (written by the PE before this one)")
    nvshmem.barrier_all()
    for b in (small, fresh, b3):
        nvshmem.free(b)
    nvshmem.barrier_all()
    nvshmem.free(b2)
    nvshmem.free(buf)
    buf.close()  # freed already: nothing happens
    mr.deallocate(b2.handle, b2.size)
    lib.free(dst)
    lib.free(src)
    # nvshmem.core.interop.cute (imported on request) and nvshmem.core.device.*: present, and they say what to do
    import gshmem.core.interop.cute as cute
    assert set(cute.__all__) >= {"tensor", "bytetensor", "free_tensor", "tensor_get_buffer", "cleanup_cute"}
    for fn, args in ((cute.tensor, ((4,),)), (cute.bytetensor, ((4,),)), (cute.free_tensor, (None,)),
                     (cute.tensor_get_buffer, (None,)), (cute.get_peer_tensor, (None, 0)),
                     (cute.get_multicast_tensor, (W, None)), (cute.register_external_tensor, (None,)),
                     (cute.unregister_external_tensor, (None,))):
        e = raises(nvshmem.GshmemNotSupported, fn, *args)
        assert isinstance(e, NotImplementedError) and isinstance(e, nvshmem.NvshmemError)
        assert f"cute.{fn.__name__}" in e.msg and "Fix:" in e.msg, e.msg
    cute.cleanup_cute()
    import gshmem.core.device  # noqa: F401
    for name in ("numba", "cute", "numba_cuda_mlir"):
        e = raises(ImportError, importlib.import_module, f"gshmem.core.device.{name}")
        assert f"gshmem.core.device.{name}" in str(e) and "Fix:" in str(e), e
    nvshmem.barrier_all()


def check_torch_only(lib, me, n):
    """torch patterns: tensor(shape) with dtype left out (torch's default dtype), tensor((n,), dtype=torch.int32)
    .fill_(rank) then alltoall without a stream (pplx-kernels fork tests/test_nvshmem.py), an fp8 tensor as an int8
    allocation viewed as float8 (triton-distributed's nvshmem_create_tensor), bytetensor, tensor_get_buffer."""
    import torch
    t = nvshmem.tensor((3, 2))
    assert t.dtype == torch.float32  # dtype left out: float32 (nvshmem4py's default), whatever torch's default
    old_default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        t64, t32 = nvshmem.tensor((2,), dtype=None), nvshmem.tensor((2,))  # None: torch's default dtype
    finally:
        torch.set_default_dtype(old_default)
    assert t64.dtype == torch.float64 and t32.dtype == torch.float32, (t64.dtype, t32.dtype)
    t_in = nvshmem.tensor((n,), dtype=torch.int32).fill_(me)
    t_out = nvshmem.tensor((n,), dtype=torch.int32)
    nvshmem.collective.alltoall(nvshmem.Teams.TEAM_WORLD, t_out, t_in)
    nvshmem.collective.barrier(nvshmem.Teams.TEAM_WORLD)
    lib.xp.sync()
    assert t_out.tolist() == list(range(n)), t_out
    if hasattr(torch, "float8_e4m3fn"):
        raw = nvshmem.tensor((4, 4), dtype=torch.int8)
        f8 = raw.view(torch.float8_e4m3fn)
        assert f8.data_ptr() == raw.data_ptr()
        nvshmem.free_tensor(raw)
    bt = nvshmem.bytetensor((5, 3))
    assert bt.dtype == torch.uint8 and tuple(bt.shape) == (5, 3)
    buf, size, dt = nvshmem.tensor_get_buffer(t_out)
    assert size == 4 * n and dt == "torch.int32" and buf.handle == t_out.data_ptr()
    nvshmem.barrier_all()
    for x in (bt, t_out, t_in, t32, t64, t):
        nvshmem.free_tensor(x)


def check_gpu_streams(lib, me, n):
    """GPU PEs: the streams programs pass: a cuda.core stream from Device().create_stream() (collective_test.py,
    rma_test.py), nvshmem.core.NvshmemStream(torch.cuda.current_stream()) (torch_triton_interop.py), a wrapper
    object with .handle and __cuda_stream__() (pplx-kernels' PyTorchStreamWrapper, triton-distributed's
    TorchStreamWrapper), the stream passed positionally (simple_p2p_kernel.py: barrier(team, stream)), and
    collective_on_buffer(..., enable_timing=True) on a stream (perftest/utils.py)."""
    W = nvshmem.Teams.TEAM_WORLD
    streams = []
    try:
        from cuda.core import Device
    except ImportError:
        try:
            from cuda.core.experimental import Device
        except ImportError:
            Device = None
    if Device is not None:
        dev = Device()
        dev.set_current()
        streams.append(("cuda.core", dev.create_stream(), lambda s: s.sync()))
    if LIB == "torch":
        import torch

        class Wrapper:
            def __init__(self, pt):
                self.pt_stream, self.handle = pt, pt.cuda_stream

            def __cuda_stream__(self):
                return (0, self.pt_stream.cuda_stream)

        cur = torch.cuda.current_stream()
        streams.append(("NvshmemStream", nvshmem.NvshmemStream(cur), lambda s: cur.synchronize()))
        streams.append(("wrapper", Wrapper(cur), lambda s: cur.synchronize()))
    for k, (name, st, sync) in enumerate(streams):
        src, dst = lib.new((64,), "float32"), lib.new((64,), "float32")
        lib.set(src, data(k * 10 + me, 64, "float32"))
        lib.poison(dst)
        nvshmem.barrier(W, st)  # positional stream
        nvshmem.reduce(W, dst, src, "sum", stream=st)
        nvshmem.barrier_all(stream=st)
        sync(st)
        same(lib.xp.host(dst), sum(data(k * 10 + p, 64, "float32") for p in range(n)), f"reduce on {name}")
        b_src, b_dst = nvshmem.buffer(256), nvshmem.buffer(256)
        ms = nvshmem.collective_on_buffer("reduce", W, b_dst, b_src, dtype="float", op="sum", stream=st,
                                          enable_timing=True)
        sync(st)
        assert isinstance(ms, float) and ms >= 0, ms
        nvshmem.barrier_all(stream=st)
        sync(st)
        nvshmem.free(b_dst)
        nvshmem.free(b_src)
        lib.free(dst)
        lib.free(src)


def env_main():
    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    lib = Lib()
    check_names()
    check_teams(lib, me, n)
    check_collectives(lib, me, n)
    check_shapes(lib, me, n)
    check_buffers(lib, me, n)
    check_rma(lib, me, n)
    check_amo(lib, me, n)
    check_peers(lib, me, n)
    check_bad_input(lib, me, n)
    check_api_surface(lib, me, n)
    if LIB == "torch":
        check_torch_only(lib, me, n)
    if lib.gpu:
        check_gpu_streams(lib, me, n)
    left = lib.new((8,), "int32")  # freed by finalize (nvshmem4py: "some memory was not freed" and frees it)
    nvshmem.finalize()
    assert nvshmem.direct.init_status() == nvshmem.InitStatus.STATUS_NOT_INITIALIZED
    with warnings.catch_warnings(record=True) as w:  # free after finalize: nvshmem4py warns and returns
        warnings.simplefilter("always")
        lib.free(left)
    assert any(issubclass(x.category, nvshmem.NvshmemWarning) for x in w), w
    raises(nvshmem.NvshmemInvalid, lib.new, (4,), "int32")
    print(f"PASS pe {me}/{n} ({LIB} on {'GPU' if lib.gpu else 'CPU'} PEs)", flush=True)


# ---------------------------------------------------------------------------------------------------------------
# init mode: plain processes and a communicator over files (what an mpi4py communicator does for these calls)
# ---------------------------------------------------------------------------------------------------------------

class FileComm:
    """The mpi4py calls programs make around init: Get_rank, Get_size, Bcast(buffer, root) into a NumPy buffer in
    place, bcast(object, root) (pickled), Barrier."""

    def __init__(self, folder, rank, size):
        self.folder, self.rank, self.size, self.seq = folder, rank, size, 0

    def Get_rank(self):  # noqa: N802 (mpi4py's names)
        return self.rank

    def Get_size(self):  # noqa: N802
        return self.size

    def _next(self):
        self.seq += 1
        return os.path.join(self.folder, f"msg{self.seq}")

    def _publish(self, path, payload):
        with open(path + f".tmp{self.rank}", "wb") as f:
            f.write(payload)
        os.rename(path + f".tmp{self.rank}", path)

    def _fetch(self, path):
        deadline = time.monotonic() + 30
        while not os.path.exists(path):
            assert time.monotonic() < deadline, f"no message {path}"
            time.sleep(0.002)
        with open(path, "rb") as f:
            return f.read()

    def Bcast(self, buf, root=0):  # noqa: N802
        path = self._next()
        view = memoryview(buf).cast("B")
        if self.rank == root:
            self._publish(path, bytes(view))
        else:
            view[:] = self._fetch(path)

    def bcast(self, obj, root=0):
        path = self._next()
        if self.rank == root:
            self._publish(path, pickle.dumps(obj))
            return obj
        return pickle.loads(self._fetch(path))

    def Barrier(self):  # noqa: N802
        path = self._next()
        self._publish(f"{path}.{self.rank}", b"")
        for r in range(self.size):
            self._fetch(f"{path}.{r}")


def _small_job(me, n):
    """A reduce on the PEs just started, to show they work."""
    a = nvshmem.array((3,), dtype="int64")
    a[...] = data(me, 3, "int64")
    nvshmem.reduce(nvshmem.Teams.TEAM_WORLD, a, a, "sum")
    same(a, sum(data(p, 3, "int64") for p in range(n)), "reduce after init")
    nvshmem.barrier_all()
    nvshmem.free_array(a)


def init_main():
    rank, nranks = int(os.environ["GSHMEM_TEST_RANK"]), int(os.environ["GSHMEM_TEST_NRANKS"])
    comm = FileComm(os.environ["GSHMEM_TEST_COMM_DIR"], rank, nranks)
    # before init: use raises NvshmemInvalid; free only warns (nvshmem4py logs and returns)
    raises(nvshmem.NvshmemInvalid, nvshmem.array, 4)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        nvshmem.free(nvshmem.Buffer(0, 0))
    assert w and issubclass(w[0].category, nvshmem.NvshmemWarning)
    raises(nvshmem.NvshmemInvalid, nvshmem.init, initializer_method="bogus")
    raises(nvshmem.NvshmemInvalid, nvshmem.init, uid=None, rank=rank, nranks=nranks, initializer_method="uid")
    # NVIDIA/nvshmem nvshmem4py/test/utils.py, examples/init_fini.py, perftest/utils.py and the init docs: every
    # rank makes an empty id, rank 0 a real one, and comm.Bcast(uid._data.view(np.int8), root=0) fills the others
    uniqueid = nvshmem.get_unique_id(empty=True)
    if rank == 0:
        uniqueid = nvshmem.get_unique_id()
    comm.Bcast(uniqueid._data.view(np.int8), root=0)
    raw = uniqueid._data.view(np.uint8).tobytes()  # bytes out (a TCPStore program, seen through the code index)
    assert len(raw) == 128 and raw != bytes(128) and comm.bcast(raw, root=0) == raw
    u2 = nvshmem.get_unique_id(empty=True)
    u2._data.view(np.uint8)[:] = np.frombuffer(raw, dtype=np.uint8)  # bytes in, through a uint8 view
    u3 = nvshmem.get_unique_id(empty=rank != 0)  # cutlass / DTensor examples: uid._data[:] = received.view(dtype)
    u3._data[:] = np.frombuffer(raw, dtype=np.uint8).copy().view(u3._data.dtype)
    u4 = pickle.loads(pickle.dumps(uniqueid))  # torch.distributed.broadcast_object_list([uid]) pickles it
    u5 = nvshmem.get_unique_id(empty=True)
    u5._data = np.frombuffer(raw, dtype=np.uint8).copy()  # examples/init_fini.py assigns the received array back
    for u in (u2, u3, u4, u5):
        assert u == uniqueid and bytes(u) == raw and u.ptr and len(u) == 1
    raises(nvshmem.NvshmemInvalid, setattr, u5, "_data", np.zeros(7, np.uint8))
    raises(nvshmem.NvshmemInvalid, nvshmem.init, uid=uniqueid, rank=nranks, nranks=nranks,
           initializer_method="uid")
    nvshmem.init(device=None, uid=u3, rank=rank, nranks=nranks, mpi_comm=None, initializer_method="uid")
    assert (nvshmem.my_pe(), nvshmem.n_pes()) == (rank, nranks)
    # init_test.py test_multi_init: init twice, finalize twice; the PE stays up until the second finalize
    nvshmem.init(uid=uniqueid, rank=rank, nranks=nranks, initializer_method="uid")
    nvshmem.finalize()
    assert nvshmem.direct.init_status() == nvshmem.InitStatus.STATUS_IS_INITIALIZED
    _small_job(rank, nranks)
    nvshmem.finalize()
    assert nvshmem.direct.init_status() == 0
    raises(nvshmem.NvshmemInvalid, nvshmem.barrier_all)
    comm.Barrier()
    # initializer_method="emulated_mpi" (init_test.py, examples/init_fini.py) and "mpi" over a communicator: rank 0's
    # id goes out by the communicator's broadcast, in the same process after a finalize
    for method in ("emulated_mpi", "mpi"):
        nvshmem.init(device=None, uid=None, rank=None, nranks=None, mpi_comm=comm, initializer_method=method)
        assert (nvshmem.my_pe(), nvshmem.n_pes()) == (rank, nranks)
        _small_job(rank, nranks)
        nvshmem.finalize()
        comm.Barrier()
    print(f"PASS pe {rank}/{nranks} (init patterns)", flush=True)


# ---------------------------------------------------------------------------------------------------------------
# case mode: one group of checks per pytest case (test_nvshmem4py_patterns.py names the case)
# ---------------------------------------------------------------------------------------------------------------

def _split_teams(me, n):
    """The splits programs make, every PE calling in one order: (label, team or None, world PEs of this PE's team).
    teams_test.py: team_split_strided(TEAM_NODE, 0, 2, size, config, 0) and team_split_2d(TEAM_NODE, 2, xcfg, 0,
    ycfg, 0); our additions: the odd PEs (named), the PEs after PE 0 (a team whose index 0 is not world PE 0).
    At an odd n the 2D grid's last row is short (NVSHMEM's split_2d: yrange = ceil(n / xrange))."""
    T = nvshmem.Teams
    cfg = nvshmem.TeamConfig()
    cfg.version, cfg.num_contexts, cfg.uniqueid = 2, 1, 12345
    out = []
    even = nvshmem.team_split_strided(T.TEAM_NODE, 0, 2, (n + 1) // 2, cfg, 0)
    out.append(("even", even, list(range(0, n, 2))))
    odd = nvshmem.team_split_strided(T.TEAM_WORLD, 1, 2, n // 2, None, 0, new_team_name="ODD_PES")
    out.append(("odd", T.ODD_PES if odd is not None else None, list(range(1, n, 2))))
    tail = nvshmem.team_split_strided(T.TEAM_WORLD, 1, 1, n - 1, cfg, 0)
    out.append(("tail", tail, list(range(1, n))))
    xcfg, ycfg = nvshmem.TeamConfig(), nvshmem.TeamConfig()
    x, y = nvshmem.team_split_2d(T.TEAM_NODE, 2, xcfg, 0, ycfg, 0)
    row = me // 2 * 2
    out.append(("2d-x", x, list(range(row, min(row + 2, n)))))
    out.append(("2d-y", y, list(range(me % 2, n, 2))))
    return [(label, t, pes if me in pes else None) for label, t, pes in out]


def _still_poisoned(host_tail, dtype, what):
    """The part of an output a call must not write still holds the 0xA5 bytes poison() wrote (bfloat16 arrives on
    the host as float32: bfloat16 0xA5A5 is float32 0xA5A50000)."""
    tail = np.ascontiguousarray(host_tail).reshape(-1)
    if dtype == "bfloat16":
        same(tail.view(np.uint32), np.full(tail.size, 0xA5A50000, np.uint32), what)
    else:
        same(tail.view(np.uint8), np.full(tail.nbytes, 0xA5, np.uint8), what)


def check_split_team_collectives(lib, me, n):
    """Every collective on teams from splits, not only on TEAM_WORLD: teams_test.py makes split teams (strided,
    2D) and collective_test.py runs reduce / reducescatter / fcollect / alltoall / broadcast(root=) / barrier /
    sync; no public program's test runs the collectives on the split teams, which programs do (MoE expert groups,
    2D meshes). On each team: team_n_pes / team_my_pe / team_translate_pe (to the world, and between the 2D row
    and column teams), put to the next member + barrier(team), and each collective with sync(team) first, the
    root as a team index, outputs poisoned past the team's part; then the negative cases of teams_test.py with
    new_team_name (no name left in Teams) and a collective on a destroyed team or on None (a non-member's split
    result), which raise NvshmemInvalid."""
    T, W = nvshmem.Teams, nvshmem.Teams.TEAM_WORLD
    teams = _split_teams(me, n)
    dtypes = ("int64", "float32", "float16", "uint8", "bool") + (("bfloat16",) if LIB == "torch" else ())
    m = 4  # elements per member
    # the 2D teams: this PE is the only PE in both, so translating between them is -1 except for itself
    (_, x, xpes), (_, y, ypes) = teams[3], teams[4]
    for i, pe in enumerate(xpes):
        assert nvshmem.team_translate_pe(x, i, y) == (ypes.index(me) if pe == me else -1), (i, pe, xpes, ypes)
    for k, dtype in enumerate(dtypes):
        # every PE allocates (a world collective) for the largest team; a team of k members uses prefixes
        src, dst, ring = lib.new((n * m,), dtype), lib.new((n * m,), dtype), lib.new((m,), dtype)
        for label, team, pes in teams:
            if team is None:
                assert pes is None, label
                continue
            size, idx = len(pes), pes.index(me)
            assert (nvshmem.team_n_pes(team), nvshmem.team_my_pe(team)) == (size, idx), (label, pes)
            assert [nvshmem.team_translate_pe(team, i, W) for i in range(size)] == pes, label
            assert nvshmem.team_translate_pe(W, me, team) == idx
            outside = [p for p in range(n) if p not in pes]
            if outside:
                assert nvshmem.team_translate_pe(W, outside[0], team) == -1, (label, outside)
            what = f"{label} team {pes}, {dtype}"
            seed = 1000 * k + 100 * len(label)
            vals = {p: _vals(seed + p, (m,), dtype) for p in pes}
            big = {p: _vals(seed + 50 + p, (size * m,), dtype) for p in pes}
            # put to the next member, completed and seen after barrier(team)
            lib.set(src[:m], vals[me])
            lib.poison(ring)
            nvshmem.sync(team)
            nvshmem.put(ring, src[:m], remote_pe=pes[(idx + 1) % size])
            nvshmem.barrier(team)
            same(_bytes(lib.host(ring), dtype), _bytes(vals[pes[idx - 1]], dtype), f"put + barrier: {what}")
            op = ("sum", "min", "max")[k % 3]
            red = {"sum": np.add, "min": np.minimum, "max": np.maximum}[op]
            stack = np.stack([vals[p] for p in pes])
            if dtype == "bool":
                stack = stack.astype(np.uint8)
            root = size - 1
            runs = (
                ("reduce", lambda: nvshmem.reduce(team, dst[:m], src[:m], op, stream=None), vals[me], m,
                 red.reduce(stack, axis=0)),
                ("reducescatter", lambda: nvshmem.reducescatter(team, dst[:m], src[:size * m], op), big[me], m,
                 red.reduce(np.stack([big[p].astype(np.uint8) if dtype == "bool" else big[p] for p in pes]),
                            axis=0)[idx * m:(idx + 1) * m]),
                ("fcollect", lambda: nvshmem.fcollect(team, dst[:size * m], src[:m]), vals[me], size * m,
                 np.concatenate([vals[p] for p in pes])),
                ("alltoall", lambda: nvshmem.alltoall(team, dst[:size * m], src[:size * m]), big[me], size * m,
                 np.concatenate([big[p][idx * m:(idx + 1) * m] for p in pes])),
                ("broadcast", lambda: nvshmem.broadcast(team, dst[:m], src[:m], root=root), vals[me], m,
                 vals[pes[root]]),
            )
            for name, call, mine, count, want in runs:
                lib.set(src[:len(mine)], mine)
                lib.poison(dst)
                nvshmem.sync(team)  # every member's dst poisoned before any member writes into it
                call()
                got = _bytes(lib.host(dst), dtype).reshape(-1)
                want = np.asarray(want).astype(np.uint8 if dtype == "bool" else want.dtype)
                label = f"{name} ({op})" if name.startswith("reduce") else name
                same(got[:count], _bytes(want, dtype).reshape(-1), f"{label} on the {what}")
                _still_poisoned(got[count:], dtype, f"{name} on the {what}: past its part")
                nvshmem.barrier(team)  # every member done reading src before the next round writes it
        nvshmem.barrier_all()
        for a in (ring, dst, src):
            lib.free(a)
    # the collectives refuse a team that is gone, and None (what a split returns to a PE outside the new team)
    a = lib.new((m,), "int32")
    lib.set(a, data(me, m, "int32"))
    for label, team, pes in teams:
        if team is not None:
            handle = int(team)
            nvshmem.team_destroy(team)
            for call in (lambda: nvshmem.reduce(handle, a, a, "sum"), lambda: nvshmem.barrier(handle),
                         lambda: nvshmem.fcollect(handle, a, a)):
                raises(nvshmem.NvshmemInvalid, call)
    assert "ODD_PES" not in T
    for call in (lambda: nvshmem.reduce(None, a, a, "sum"), lambda: nvshmem.sync(None),
                 lambda: nvshmem.broadcast(None, a, a, root=0), lambda: nvshmem.alltoall(object(), a, a)):
        e = raises(nvshmem.NvshmemInvalid, call)
        assert "team" in e.msg, e.msg
    same(lib.host(a), data(me, m, "int32"), "the array a refused call was given")
    nvshmem.barrier_all()
    lib.free(a)
    # teams_test.py's negative cases with new_team_name, each followed by a world barrier: no name is left behind
    cfg = nvshmem.TeamConfig()
    raises(nvshmem.NvshmemError, nvshmem.team_split_strided, W, 0, 1, 0, cfg, 0, new_team_name="BAD_SIZE_TEAM")
    nvshmem.barrier(W, stream=None)
    raises(nvshmem.NvshmemError, nvshmem.team_split_2d, -1, 2, cfg, 0, cfg, 0, new_team_name="BAD_PARENT_TEAM_2D")
    nvshmem.barrier(W, stream=None)
    raises(nvshmem.NvshmemError, nvshmem.team_split_2d, W, 0, cfg, 0, cfg, 0, new_team_name="BAD_XRANGE_TEAM")
    nvshmem.barrier(W, stream=None)
    assert not [name for name in T.keys() if name.startswith("BAD_")], list(T.keys())
    # the same names work once the arguments are right
    t = nvshmem.team_split_strided(W, 0, 1, n, cfg, 0, new_team_name="BAD_SIZE_TEAM")
    assert nvshmem.team_n_pes(T.BAD_SIZE_TEAM) == n and int(t) == int(T.BAD_SIZE_TEAM)
    nvshmem.team_destroy("BAD_SIZE_TEAM")
    nvshmem.barrier_all()


def check_views_and_lifetime(lib, me, n):
    """Parts of symmetric allocations and the end of their life, as programs use them:
    - flashinfer-ai/flashinfer flashinfer/comm/nvshmem_allreduce.py: symmetric input / output tensors of a maximum
      size allocated once; each all-reduce copies k elements into input[:k], barrier_all, then
      collective_on_buffer("reduce", TEAM_WORLD, dst_view, src_view, dtype="half" / "bfloat16" / "float",
      op="sum", stream=...) on Buffer.from_handle(ptr=, size=k * itemsize, mr=buf.memory_resource) prefixes of
      tensor_get_buffer(...)'s Buffer; output[:k] read back; free_tensor both, then finalize. The same prefixes as
      array / tensor slices in reduce.
    - a vLLM NVSHMEM probe (code index): one row of a symmetric 2D tensor put into another row of the next PE's
      copy (nvshmem4py refuses slices, "Tensor not tracked"; gshmem takes any dense part of an allocation).
    - a MegaMoE helper (code index): free_tensor of a tensor freed already is caught as RuntimeError / ValueError /
      TypeError whose message says "already", "freed" or "invalid".
    - a torch DTensor NVSHMEM helper (code index, torch only): tensor(torch.Size(...)), attributes set on the
      returned tensor, a [:a, :b] slice used and the base freed through the slice's attribute; a requires_grad
      symmetric tensor as a reduce source."""
    W = nvshmem.Teams.TEAM_WORLD
    cap = 64
    names = (("half", "float16"), ("float", "float32")) + ((("bfloat16", "bfloat16"),) if LIB == "torch" else ())
    get_buffer = nvshmem.tensor_get_buffer if LIB == "torch" else nvshmem.array_get_buffer
    rng = np.random.default_rng([SEED, 4242])
    for nv_name, dt in names:
        inp, out = lib.new((cap,), dt), lib.new((cap,), dt)
        for r, k in enumerate((1, int(rng.integers(2, cap)), cap)):
            allv = [_vals(10 * r + p, (k,), dt) for p in range(n)]
            lib.set(inp[:k], allv[me])
            lib.poison(out)
            nvshmem.barrier_all(stream=None)
            ib, _, _ = get_buffer(inp)
            ob, _, _ = get_buffer(out)
            esz = nvshmem.utils.dtype_nbytes(nv_name)
            src_view = nvshmem.Buffer.from_handle(ptr=int(ib.handle), size=k * esz, mr=ib.memory_resource)
            dst_view = nvshmem.Buffer.from_handle(ptr=int(ob.handle), size=k * esz, mr=ob.memory_resource)
            assert (src_view.handle, src_view.size) == (ib.handle, k * esz), (src_view, ib, k)
            nvshmem.collective_on_buffer("reduce", W, dst_view, src_view, dtype=nv_name, op="sum", stream=None)
            got = lib.host(out)
            same(got[:k], sum(allv).astype(got.dtype), f"reduce on Buffer.from_handle prefixes, {k} {nv_name}")
            _still_poisoned(got[k:], dt, f"reduce of {k} {nv_name}: past k")
            # the same prefixes as slices of the arrays
            lib.poison(out)
            nvshmem.barrier_all()
            nvshmem.reduce(W, out[:k], inp[:k], "sum")
            same(lib.host(out)[:k], sum(allv).astype(got.dtype), f"reduce of [:{k}] slices, {dt}")
            nvshmem.barrier_all()
        # from_handle itself checks nothing (cuda.core's does not); a collective on a view past the allocation
        # raises on every PE alike, before any PE starts it
        over = nvshmem.Buffer.from_handle(int(ib.handle), cap * esz + esz)
        raises(nvshmem.NvshmemInvalid, nvshmem.collective_on_buffer, "reduce", W, over, over, dtype=nv_name,
               op="sum")
        lib.free(out)
        lib.free(inp)
    # a row of a symmetric 2D array put into another row of the next PE's copy, then a row got back
    rows, cols = 5, 6
    w = lib.new((rows, cols), "int32")
    lib.set(w, data(me, (rows, cols), "int32"))
    nvshmem.barrier_all()
    nvshmem.put(w[rows - 1], w[0], remote_pe=(me + 1) % n)
    nvshmem.barrier_all()
    want = data(me, (rows, cols), "int32")
    want[rows - 1] = data((me - 1) % n, (rows, cols), "int32")[0]
    same(lib.host(w), want, "put of row 0 into row 4 of the next PE")
    row = lib.new((cols,), "int32")
    lib.poison(row)
    nvshmem.get(row, w[2], remote_pe=(me + 1) % n)
    same(lib.host(row), data((me + 1) % n, (rows, cols), "int32")[2], "get of row 2 from the next PE")
    nvshmem.barrier_all()
    lib.free(row)
    lib.free(w)
    # double free: the exception classes and words a program's handler looks for
    for shape in ((3,), (2, 2)):
        a = lib.new(shape, "float32")
        lib.free(a)
        e = raises((RuntimeError, ValueError, TypeError), lib.free, a)
        assert any(word in str(e).lower() for word in ("already", "freed", "invalid")), str(e)
    # memory_test.py test_buffer_scope_release_gc_free_reuse: free, del, a new buffer (often at the freed address),
    # gc.collect(); and a buffer dropped without free() (del + gc.collect()) stays allocated: the memory belongs to
    # gshmem.core's table, not to the Buffer object, until free() or finalize()
    import gc
    b1, b2 = nvshmem.buffer(8, release=True), nvshmem.buffer(8, release=True)
    nvshmem.free(b1)
    del b1
    b3 = nvshmem.buffer(8, release=True)
    gc.collect()
    kept, size = nvshmem.buffer(16), 16
    ptr = kept.handle
    del kept
    gc.collect()
    for b, pe in ((b2, me), (b3, (me + 1) % n), (nvshmem.Buffer.from_handle(ptr, size), (me - 1) % n)):
        _fill_buffer(b, np.full(b.size, 0xA5, np.uint8))
        lib.xp.sync()
        nvshmem.barrier_all()
        src = lib.xp.local((b.size,), "uint8")
        lib.xp.put_values(src, data(pe, b.size, "uint8"))
        nvshmem.put(b, src, remote_pe=pe)  # every PE writes the copy of one PE: its own, the next's, the last's
        nvshmem.barrier_all()
        writer = {me: me, (me + 1) % n: (me - 1) % n, (me - 1) % n: (me + 1) % n}[pe]
        same(_read_buffer(lib, b, "uint8", b.size), data(me, b.size, "uint8"),
             f"put into a buffer of {b.size} bytes by PE {writer}")
    nvshmem.barrier_all()
    nvshmem.free(b2)
    nvshmem.free(b3)
    nvshmem.free(nvshmem.Buffer.from_handle(ptr, size))  # the allocation, by its address
    raises(nvshmem.NvshmemInvalid, nvshmem.free, nvshmem.Buffer.from_handle(ptr, size))  # and only once
    # memory_test.py test_get_peer_memory_scope: rounds of allocate, a peer view on PE 0 only (freed there, or left
    # for the allocation's free to drop), free; shapes drawn at random, so addresses are reused with other sizes
    for r in range(6):
        shape = (int(rng.integers(1, 16)), int(rng.integers(1, 64)))
        t = lib.new(shape, "float16")
        lib.set(t, data(me + 7 * r, shape, "float16"))
        nvshmem.barrier_all()
        if me == 0:
            view = lib.peer(t, (me + 1) % n)
            same(lib.host(view), data((me + 1) % n + 7 * r, shape, "float16"), f"peer view, round {r}")
            if r % 2:
                lib.free(view)  # local; the allocation stays
                same(lib.host(t), data(me + 7 * r, shape, "float16"), f"the allocation after its view was freed")
        nvshmem.barrier_all()
        lib.free(t)
    # NVIDIA/cutlass examples/python/CuTeDSL/distributed/all_reduce_one_shot_lamport.py (all_reduce_simple.py
    # alike): a list of get_peer_tensor(local, r).permute(...) for every rank r, this PE's own included, stores
    # through them, and the end of life: free_tensor of each view in the list and never of `local` (the own-rank
    # view frees the allocation, the others are forgotten), in rounds that reuse the addresses
    ping_pong, rows, cols = 3, 2, 5
    for r in range(3):
        local = lib.new((ping_pong, n, rows, cols), "float32")
        lib.poison(local)
        perm = (lambda v: v.permute(2, 3, 1, 0)) if LIB == "torch" else (lambda v: v.transpose(2, 3, 1, 0))
        views = [perm(lib.peer(local, p)) for p in range(n)]
        slot = r % ping_pong
        mine = data(me + 11 * r, (rows, cols), "float32")
        nvshmem.barrier_all()
        for v in views:  # this PE's input into its slot of every PE's buffer (a strided store through each view)
            lib.xp.put_values(v[:, :, me, slot], mine)  # CuPy takes no NumPy array on assignment
        lib.xp.sync()
        nvshmem.barrier_all()
        got = lib.host(perm(local))
        same(got[:, :, :, slot].sum(axis=2), sum(data(p + 11 * r, (rows, cols), "float32") for p in range(n)),
             f"one-shot all-reduce through permuted peer views, round {r}")
        others = [s_ for s_ in range(ping_pong) if s_ != slot]
        _still_poisoned(np.ascontiguousarray(got[:, :, :, others]), "float32", "the other ping-pong slots")
        nvshmem.barrier_all()
        for v in views:
            lib.free(v)
        raises(nvshmem.NvshmemInvalid, lib.free, local)  # freed through its own-rank view already
    if LIB == "torch":
        import torch
        base = nvshmem.tensor(torch.Size([n + 1, 4]), dtype=torch.float32)
        assert tuple(base.shape) == (n + 1, 4)
        base._symmetric_alloc = True
        view = base[:n, :3]  # not contiguous: used locally, the base goes to the collectives
        view._symmetric_base = base
        view.copy_(torch.from_numpy(data(me, (n, 3), "float32")))
        grad_src = nvshmem.tensor((n, 3), dtype=torch.float32)
        grad_src.copy_(view)
        grad_src.requires_grad_(True)
        out = nvshmem.tensor((n, 3), dtype=torch.float32)
        lib.poison(out)
        nvshmem.barrier_all()
        nvshmem.reduce(W, out, grad_src, "max")
        same(lib.host(out), np.max([data(p, (n, 3), "float32") for p in range(n)], axis=0),
             "reduce from a requires_grad tensor")
        same(lib.host(view), data(me, (n, 3), "float32"), "the slice of the base")
        nvshmem.barrier_all()
        assert getattr(view._symmetric_base, "_symmetric_alloc", False)
        for t in (out, grad_src, view._symmetric_base):
            nvshmem.free_tensor(t)


def single_main():
    """wufann/pplx-kernels tests/test_nvshmem.py test_nvshmem_1_gpu: one plain process, get_unique_id() and
    init(uid=, rank=0, nranks=1, initializer_method="uid"), direct.init_status() checked against 2, then (its 4-GPU
    worker) tensor((n,), dtype=int32).fill_(rank), collective.alltoall / collective.barrier on Teams.TEAM_WORLD
    without a stream, and free_tensor + finalize in a finally block; here on one PE, with the other collectives."""
    uid = nvshmem.get_unique_id()
    nvshmem.init(uid=uid, rank=0, nranks=1, initializer_method="uid")
    try:
        assert nvshmem.direct.init_status() >= 2 and (nvshmem.my_pe(), nvshmem.n_pes()) == (0, 1)
        lib = Lib()
        W = nvshmem.Teams.TEAM_WORLD
        t_in, t_out = lib.new((1,), "int32"), lib.new((1,), "int32")
        lib.set(t_in, np.array([int(np.random.default_rng(SEED).integers(1, 1000))], np.int32))
        want = lib.host(t_in).copy()
        for call in (lambda: nvshmem.collective.alltoall(W, t_out, t_in), lambda: nvshmem.fcollect(W, t_out, t_in),
                     lambda: nvshmem.reduce(W, t_out, t_in, "max"), lambda: nvshmem.reducescatter(W, t_out, t_in),
                     lambda: nvshmem.broadcast(W, t_out, t_in, root=0)):
            lib.poison(t_out)
            call()
            nvshmem.collective.barrier(W)
            same(lib.host(t_out), want, "a collective of one PE")
        assert nvshmem.team_split_strided(W, 0, 1, 1, None, 0) is not None
        raises(nvshmem.NvshmemInvalid, nvshmem.put, t_out, t_in, remote_pe=1)
    finally:
        lib.free(t_in)
        lib.free(t_out)
        nvshmem.finalize()
    assert nvshmem.direct.init_status() == nvshmem.InitStatus.STATUS_NOT_INITIALIZED
    print("PASS pe 0/1 (one PE from a unique id)", flush=True)


CASES = {"split-team-collectives": check_split_team_collectives, "views-and-lifetime": check_views_and_lifetime}


def case_main(name):
    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    lib = Lib()
    CASES[name](lib, me, n)
    live = lib.new((4,), "int64")  # left for finalize (flashinfer's shutdown frees its own first; this one does not)
    nvshmem.finalize()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        lib.free(live)
    assert any(issubclass(x.category, nvshmem.NvshmemWarning) for x in w), w
    print(f"PASS pe {me}/{n} ({name}, {LIB} on {'GPU' if lib.gpu else 'CPU'} PEs)", flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "single":
        single_main()
    elif len(sys.argv) > 2 and sys.argv[1] == "case":
        case_main(sys.argv[2])
    else:
        (init_main if len(sys.argv) > 1 and sys.argv[1] == "init" else env_main)()
