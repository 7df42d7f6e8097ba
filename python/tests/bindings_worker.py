"""One PE of test_bindings.py: programs that call nvshmem4py's raw host bindings (`nvshmem.bindings`, addresses
and streams as ints) next to `nvshmem.core`, run on gshmem (`import gshmem.bindings as bindings`).

Patterns and where they were seen (facts about those programs; the code here is ours):
  - `import nvshmem.bindings.nvshmem as bindings`; `bindings.putmem_signal_on_stream(dst.data_ptr(),
    src.data_ptr(), nbytes, sig.handle, value, bindings.Signal_op.SIGNAL_SET, pe, stream)` (0 bytes for a
    signal-only message) and `nvshmem.core.signal_wait(sig, value, bindings.Cmp_type.CMP_GE, stream=...)`:
    sglang's ae_disaggregation NVSHMEM handlers (code index).
  - `bindings.signal_wait_until_on_stream(flag.data_ptr(), cmp, value, stream)`: a vLLM LoRA NVSHMEM helper, a
    Triton-distributed utility (code index).
  - `nvshmem.bindings.mc_ptr(nvshmem.core.Teams.TEAM_NODE, tensor.data_ptr()) != 0` to test for multicast:
    Triton-distributed's model utilities (code index).
  - `from nvshmem.bindings import barrier_all, my_pe`: NVIDIA/nvshmem's nvshmem4py examples.
  - init by the bindings alone (get_uniqueid, set_attr_uniqueid_args, hostlib_init_attr with an InitAttr),
    host atomics, teams with TeamConfig, malloc / ptr: the names and signatures of nvshmem4py's
    nvshmem/bindings/nvshmem.pxd.

Modes (argument 1): env (default; started by gshmemrun; gshmem.core.init() first; GSHMEM_TEST_LIB numpy on CPU PEs,
torch on GPU PEs), uid (plain processes, GSHMEM_TEST_RANK / _NRANKS / _COMM_DIR: the PEs start through the
bindings) and mpi (under mpirun with mpi4py: the PEs start through the bindings on an MPI communicator). Fresh
data from GSHMEM_TEST_SEED, poisoned outputs, exact comparisons.
"""
import ctypes
import os
import pickle
import re
import sys

import numpy as np

import gshmem
import gshmem.bindings as bindings
import gshmem.bindings.nvshmem as bindings_nvshmem
import gshmem.core as nvshmem
from nvshmem4py_worker import FileComm, raises

SEED = int(os.environ["GSHMEM_TEST_SEED"])
LIB = os.environ.get("GSHMEM_TEST_LIB", "numpy")
rng = np.random.default_rng([SEED, 7])  # the same stream on every PE: shared random choices


def same(got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and np.array_equal(got, want), \
        f"seed {SEED}, PE {os.environ.get('GSHMEM_RANK', '?')}: {what}\n got {got!r}\nwant {want!r}"


def view(address, count, dtype):
    """A NumPy view of `count` elements at a host address (CPU PEs: the symmetric heap is host memory)."""
    raw = (ctypes.c_char * (count * np.dtype(dtype).itemsize)).from_address(address)
    return np.frombuffer(raw, dtype=dtype)


def c_int32():
    v = ctypes.c_int32(-7)  # poisoned: the call must write it
    return v, ctypes.addressof(v)


def check_module():
    """The module surface: names, enums, structs, errors, version queries (no PE needed for most)."""
    assert bindings.putmem_signal_on_stream is bindings_nvshmem.putmem_signal_on_stream
    for name in ("barrier_all", "my_pe", "malloc", "int_atomic_fetch_add", "float_sum_reduce_on_stream",
                 "bfloat16_alltoall_on_stream", "half_max_reducescatter_on_stream", "signal_wait_until_on_stream",
                 "team_split_2d", "hostlib_init_attr", "InitAttr", "TeamConfig", "Cmp_type"):
        assert name in bindings.__all__, name
    assert int(bindings.Signal_op.SIGNAL_SET) == 9 and int(bindings.Signal_op.SIGNAL_ADD) == 10
    assert int(bindings.Cmp_type.CMP_GE) == int(nvshmem.ComparisonType.CMP_GE)
    assert int(bindings.Team_id.TEAM_NODE) == int(nvshmem.Teams.TEAM_NODE)
    uid = bindings.uniqueid()
    assert len(uid) == 1 and uid.version == (1 << 16) + 128 and int(uid) == uid.ptr
    assert bindings.uniqueid(3)[1] == bindings.uniqueid.from_data(bindings.uniqueid(3)._data[1:2])
    # a bindings id handed to the core (in nvshmem4py core.UniqueID is bindings.uniqueid; core.init takes bytes(uid))
    uid._data.view(np.uint8)[4:] = np.random.default_rng(SEED).integers(0, 256, 124, dtype=np.uint8)
    assert bytes(uid) == uid._data.tobytes() and len(bytes(uid)) == 128
    assert bytes(nvshmem.UniqueID(bytes(uid))) == bytes(uid)
    attr = bindings.InitAttr()
    assert attr.version == (1 << 16) + 144 and attr._data.itemsize == 144
    cfg = bindings.TeamConfig()
    assert cfg.version == (2 << 16) + 64 and cfg.num_contexts == -1 and cfg.uniqueid == 2**64 - 1
    e = bindings.NVSHMEMError(3, "why")
    e2 = pickle.loads(pickle.dumps(e))
    assert e2.status == 3 and str(e2) == "why"
    # the version queries agree with the compat headers the package carries: the OpenSHMEM version in
    # nvshmem_host.h, the release in non_abi/nvshmem_version.h, read as text the way build scripts read NVSHMEM's
    # (Triton-distributed's get_nvshmem_version opens that path under the include directory)
    inc = gshmem.get_nvshmem_include()
    header = open(os.path.join(inc, "nvshmem_host.h")).read()
    release = open(os.path.join(inc, "non_abi", "nvshmem_version.h")).read()
    want = [int(re.search(rf"#define NVSHMEM_{k}_VERSION (\d+)", header).group(1)) for k in ("MAJOR", "MINOR")]
    want += [int(re.search(rf"^#define NVSHMEM_VENDOR_{k}_VERSION (\d+)$", release, re.M).group(1))
             for k in ("MAJOR", "MINOR", "PATCH")]
    ints = [ctypes.c_int(-1) for _ in range(5)]
    bindings.info_get_version(ctypes.addressof(ints[0]), ctypes.addressof(ints[1]))
    bindings.vendor_get_version_info(*(ctypes.addressof(i) for i in ints[2:]))
    same([i.value for i in ints], want, "info_get_version + vendor_get_version_info")
    for dev in ("numba", "cute", "numba_cuda_mlir"):
        e = raises(ImportError, __import__, f"gshmem.bindings.device.{dev}")
        assert "Fix:" in str(e) and f"bindings.device.{dev}" in str(e), e


def check_queries(me, n):
    assert (bindings.my_pe(), bindings.n_pes()) == (me, n)
    assert bindings.init_status() == bindings.Init_status.STATUS_IS_INITIALIZED
    assert bindings.team_my_pe(bindings.Team_id.TEAM_WORLD) == me
    assert bindings.team_n_pes(bindings.Team_id.TEAM_WORLD) == n
    level = ctypes.c_int(-1)
    bindings.query_thread(ctypes.addressof(level))
    assert level.value == bindings.Thread_support.THREAD_SERIALIZED, level.value
    name = ctypes.create_string_buffer(256)
    bindings.info_get_name(ctypes.addressof(name))
    assert name.value.startswith(b"gshmem"), name.value


def check_memory(me, n):
    """malloc / calloc / align / ptr / mc_ptr / free, and stores through ptr() into the right neighbour."""
    right, left = (me + 1) % n, (me - 1) % n
    count = int(rng.integers(1, 5000))
    p = bindings.malloc(count * 8)
    z = bindings.calloc(count, 4)
    a = bindings.align(4096, 100)
    assert p and z and a and a % 4096 == 0, (p, z, a)
    same(view(z, count, "int32"), np.zeros(count, "int32"), "calloc's memory")
    assert bindings.ptr(p, me) == p
    assert bindings.mc_ptr(nvshmem.Teams.TEAM_NODE, p) == 0  # no multicast: callers fall back (Triton-distributed)
    mine = view(p, count, "int64")
    mine[:] = -1  # poison
    bindings.barrier_all()
    peer = bindings.ptr(p, right)
    assert peer, "ptr() of a peer on the same node"
    view(peer, count, "int64")[:] = np.random.default_rng([SEED, me, 1]).integers(-2**62, 2**62, count)
    bindings.barrier_all()
    same(mine, np.random.default_rng([SEED, left, 1]).integers(-2**62, 2**62, count), "stores through ptr()")
    bindings.barrier_all()
    for q in (p, z, a):
        bindings.free(q)


AMO = {"uint": "uint32", "ulong": "uint64", "ulonglong": "uint64", "int32": "int32", "uint32": "uint32",
       "int64": "int64", "uint64": "uint64", "int": "int32", "long": "int64", "longlong": "int64",
       "size": "uint64", "ptrdiff": "int64"}
BITWISE = ("uint", "ulong", "ulonglong", "int32", "uint32", "int64", "uint64")


def check_atomics(me, n):
    """Every type of every host AMO, all PEs on one word of a rotating root: exact finals, tickets a permutation."""
    word = bindings.malloc(64)
    for i, (t, dt) in enumerate(AMO.items()):
        root = i % n
        f = lambda op: getattr(bindings, f"{t}_atomic_{op}")  # noqa: E731
        bindings.uint64_atomic_set(word, 0xDEADBEEF, me)  # poison, then a defined start (GPU memory too)
        bindings.barrier_all()
        if me == root:
            f("set")(word, 5, root)
        bindings.barrier_all()
        tickets = [f("fetch_inc")(word, root) for _ in range(3)]
        f("inc")(word, root)
        add = int(np.random.default_rng([SEED, me, i]).integers(1, 1000))
        got = f("fetch_add")(word, add, root)
        assert got >= 5, (t, got)
        f("add")(word, add, root)
        bindings.barrier_all()
        total = 5 + 4 * n + 2 * sum(int(np.random.default_rng([SEED, p, i]).integers(1, 1000)) for p in range(n))
        assert f("fetch")(word, root) == total, (t, f("fetch")(word, root), total)
        all_tickets = view_tickets(tickets, n)  # the word only grows, so every fetch_inc saw its own value
        assert len(set(all_tickets)) == 3 * n and min(all_tickets) == 5, (t, all_tickets)
        bindings.barrier_all()
        # compare_swap: exactly one PE wins
        if me == root:
            f("set")(word, 77, root)
        bindings.barrier_all()
        old = f("compare_swap")(word, 77, 100 + me, root)
        wins = gather_int(int(old == 77), n)
        assert sum(wins) == 1, (t, wins)
        bindings.barrier_all()
        winner = wins.index(1)
        assert f("swap")(word, 9, root) in (100 + winner, 9), t
        bindings.barrier_all()
        assert f("fetch")(word, root) == 9, (t, f("fetch")(word, root))
        bindings.barrier_all()  # every PE has read it before the root sets the word again
        if t in BITWISE:
            if me == root:
                f("set")(word, 0, root)
            bindings.barrier_all()
            bit, full = 1 << me, (1 << n) - 1
            f("or")(word, bit, root)
            bindings.barrier_all()
            assert f("fetch")(word, root) == full, t
            bindings.barrier_all()
            old = f("fetch_xor")(word, bit, root)  # only this PE touches its bit: set before, clear after
            assert old & bit and old & ~full == 0, (t, old)
            bindings.barrier_all()
            assert f("fetch")(word, root) == 0, (t, f("fetch")(word, root))
            bindings.barrier_all()
            f("xor")(word, bit, root)
            bindings.barrier_all()
            assert f("fetch")(word, root) == full, t
            bindings.barrier_all()
            old = f("fetch_and")(word, full & ~bit, root)
            assert old & bit, (t, old)
            bindings.barrier_all()
            assert f("fetch")(word, root) == 0, (t, f("fetch")(word, root))
            bindings.barrier_all()
            old = f("fetch_or")(word, bit, root)
            assert not old & bit and old & ~full == 0, (t, old)
            bindings.barrier_all()
            f("and")(word, full & ~bit if me == root else full, root)
            bindings.barrier_all()
            assert f("fetch")(word, root) == full & ~(1 << root), (t, f("fetch")(word, root))
        bindings.barrier_all()
    # float and double: fetch / set / swap in C, add and fetch_add by compare-and-swap; halves add exactly
    for t in ("float", "double"):
        root = 1 % n
        f = lambda op: getattr(bindings, f"{t}_atomic_{op}")  # noqa: E731
        if me == root:
            f("set")(word, 0.5, root)
        bindings.barrier_all()
        vals = lambda p: [float(v) / 2 for v in np.random.default_rng([SEED, p, 99]).integers(1, 64, 20)]  # noqa
        for k, v in enumerate(vals(me)):
            (f("add") if k % 2 else f("fetch_add"))(word, v, root)
        bindings.barrier_all()
        want = 0.5 + sum(sum(vals(p)) for p in range(n))
        assert f("fetch")(word, root) == want, (t, f("fetch")(word, root), want)
        bindings.barrier_all()
        alone = (root + 1) % n
        if me == alone:  # no other PE adds now: each fetch_add returns exactly the running value
            running = want
            for v in vals(me):
                assert f("fetch_add")(word, v, root) == running, (t, running)
                running += v
        bindings.barrier_all()
        want += sum(vals(alone))
        assert f("fetch")(word, root) == want, (t, f("fetch")(word, root), want)
        bindings.barrier_all()
        assert f("swap")(word, 2.0, root) in (want, 2.0)
        bindings.barrier_all()
    bindings.free(word)


_scratch = {}


def gather_int(value, n):
    """Every PE's int (through the symmetric heap and barriers: int64_atomic_set into slot me of every PE)."""
    if "g" not in _scratch:
        _scratch["g"] = bindings.malloc(8 * 64)
    g, me = _scratch["g"], bindings.my_pe()
    for p in range(n):
        bindings.int64_atomic_set(g + 8 * p, -99, me)  # poison this PE's slots
    bindings.barrier_all()
    for pe in range(n):
        bindings.int64_atomic_set(g + 8 * me, value, pe)
    bindings.barrier_all()
    out = [bindings.int64_atomic_fetch(g + 8 * p, me) for p in range(n)]
    bindings.barrier_all()
    return out


def view_tickets(tickets, n):
    out = []
    for k in range(len(tickets)):
        out += gather_int(int(tickets[k]), n)
    return out


def check_signal_and_core(me, n):
    """A core Buffer's handle given to the bindings (sglang's sig.handle), signal_fetch, and core.signal_wait with
    bindings.Cmp_type (CPU PEs: it returns the word)."""
    right, left = (me + 1) % n, (me - 1) % n
    sig = nvshmem.buffer(8)
    view(sig.handle, 1, "uint64")[:] = 0
    bindings.barrier_all()
    value = int(np.random.default_rng([SEED, me, 5]).integers(1, 2**40))
    bindings.uint64_atomic_set(sig.handle, value, right)
    want = int(np.random.default_rng([SEED, left, 5]).integers(1, 2**40))
    got = nvshmem.signal_wait(sig, want, bindings.Cmp_type.CMP_GE)
    assert got == want and bindings.signal_fetch(sig.handle) == want, (got, want)
    bindings.barrier_all()
    nvshmem.free(sig)
    arr = nvshmem.array((4,), dtype="int32")
    arr[:] = 0
    bindings.barrier_all()
    bindings.int32_atomic_add(arr.ctypes.data + 4 * (me % 4), 1, 0)
    bindings.barrier_all()
    if me == 0:
        same(arr, np.bincount(np.arange(n) % 4, minlength=4).astype("int32"), "atomics into a core array")
    bindings.barrier_all()
    nvshmem.free_array(arr)


def check_teams(me, n):
    """team_split_strided / team_split_2d with TeamConfig, translate, get_config, barrier on the team, destroy."""
    cfg = bindings.TeamConfig()
    even, even_at = c_int32()
    size = (n + 1) // 2
    bindings.team_split_strided(bindings.Team_id.TEAM_WORLD, 0, 2, size, cfg.ptr, 0, even_at)
    if me % 2 == 0:
        assert even.value >= bindings.Team_id.TEAMS_MIN, even.value
        assert bindings.team_my_pe(even.value) == me // 2 and bindings.team_n_pes(even.value) == size
        for i in range(size):
            assert bindings.team_translate_pe(even.value, i, bindings.Team_id.TEAM_WORLD) == 2 * i
        got = bindings.TeamConfig()
        got.num_contexts = 12345
        bindings.team_get_config(even.value, got.ptr)
        assert got.num_contexts == 0, got.num_contexts  # no communication contexts
        bindings.barrier(even.value)
    else:
        assert even.value == bindings.Team_id.TEAM_INVALID, even.value
    assert bindings.team_translate_pe(bindings.Team_id.TEAM_WORLD, me, even.value) == \
        (me // 2 if me % 2 == 0 else -1)
    x, x_at = c_int32()
    y, y_at = c_int32()
    xcfg, ycfg = bindings.TeamConfig(), bindings.TeamConfig()
    bindings.team_split_2d(bindings.Team_id.TEAM_WORLD, 2, xcfg.ptr, 0, x_at, ycfg.ptr, 0, y_at)
    assert bindings.team_my_pe(x.value) == me % 2 and bindings.team_my_pe(y.value) == me // 2, (x.value, y.value)
    bindings.barrier(x.value)
    bindings.barrier(y.value)
    for t in (x.value, y.value) + ((even.value,) if me % 2 == 0 else ()):
        bindings.team_destroy(t)
    bindings.barrier_all()
    # a split this PE's arguments make impossible: every PE gets the status as NVSHMEMError
    bad, bad_at = c_int32()
    e = raises(bindings.NVSHMEMError, bindings.team_split_strided, bindings.Team_id.TEAM_WORLD, 0, 1, n + 1,
               cfg.ptr, 0, bad_at)
    assert e.status != 0 and "team_split_strided" in str(e), e
    bindings.barrier_all()
    # team_get_uniqueid / team_init (NVSHMEM 3.4): PE 0's id handed out through the heap; the odd PEs' team
    # (PE 0 alone at 1 PE)
    tu = bindings.team_uniqueid()
    bindings.team_get_uniqueid(tu.ptr)
    assert tu.value not in (0, (1 << 64) - 1), tu.value
    signed = tu.value - (1 << 64) if tu.value >= 1 << 63 else tu.value  # the id's bits as an int64
    tu.value = gather_int(signed, n)[0] & ((1 << 64) - 1)  # PE 0's
    members = list(range(1, n, 2)) if n > 1 else [0]
    if me in members:
        tcfg = bindings.TeamConfig()
        tcfg.uniqueid = tu.value
        t, t_at = c_int32()
        bindings.team_init(t_at, tcfg.ptr, 2, len(members), members.index(me))  # NVSHMEM_TEAM_CONFIG_MASK_UNIQUEID
        assert bindings.team_n_pes(t.value) == len(members) and bindings.team_my_pe(t.value) == members.index(me)
        assert bindings.team_translate_pe(t.value, len(members) - 1, bindings.Team_id.TEAM_WORLD) == members[-1]
        bindings.barrier(t.value)
        bindings.team_destroy(t.value)
    bindings.barrier_all()
    if n > 1:  # no id (the config's initializer) for a team of one: refused on every PE
        t, t_at = c_int32()
        e = raises(bindings.NVSHMEMError, bindings.team_init, t_at, cfg.ptr, 0, 1, 0)
        assert e.status == bindings.Status.ERROR_INVALID_VALUE and "uniqueid" in str(e), e
        assert t.value == bindings.Team_id.TEAM_INVALID, t.value


def check_no_streams_on_cpu(me, n):
    """On CPU PEs a stream call raises NVSHMEMError(ERROR_NOT_SUPPORTED) naming the fix; the job goes on."""
    p = bindings.malloc(64)
    for call, args in (("putmem_signal_on_stream", (p, p, 8, p + 8, 1, bindings.Signal_op.SIGNAL_SET, 0, 0)),
                       ("signal_wait_until_on_stream", (p, bindings.Cmp_type.CMP_EQ, 0, 0)),
                       ("float_sum_reduce_on_stream", (0, p, p + 32, 1, 0)),
                       ("bfloat16_alltoall_on_stream", (0, p, p + 32, 1, 0)),
                       ("barrier_on_stream", (0, 0)), ("barrier_all_on_stream", (0,))):
        e = raises(bindings.NVSHMEMError, getattr(bindings, call), *args)
        assert e.status == bindings.Status.ERROR_NOT_SUPPORTED and call in str(e) and "Fix:" in str(e), e
    bindings.barrier_all()
    bindings.free(p)


def check_streams_gpu(me, n):
    """GPU PEs, torch: the stream calls as the programs above make them, on torch's current stream."""
    import torch
    right, left = (me + 1) % n, (me - 1) % n
    s = torch.cuda.current_stream()
    stream = s.cuda_stream
    count = int(rng.integers(1, 50000))
    # sglang: putmem_signal_on_stream into the right PE, core.signal_wait(Cmp_type.CMP_GE) on the left's message
    src = nvshmem.tensor((count,), dtype=torch.bfloat16)
    dst = nvshmem.tensor((count,), dtype=torch.bfloat16)
    sig = nvshmem.buffer(8)
    bindings.uint64_atomic_set(sig.handle, 0, me)  # malloc'd memory is not zeroed
    mine = torch.from_numpy(np.random.default_rng([SEED, me, 11]).integers(-64, 64, count).astype("float32"))
    src.copy_(mine.to(torch.bfloat16))
    dst.fill_(-1000)  # poison
    torch.cuda.synchronize()
    nvshmem.barrier_all(stream=s)
    bindings.putmem_signal_on_stream(dst.data_ptr(), src.data_ptr(), count * 2, sig.handle, 3,
                                     bindings.Signal_op.SIGNAL_SET, right, stream)
    nvshmem.signal_wait(sig, 3, bindings.Cmp_type.CMP_GE, stream=s)
    want = np.random.default_rng([SEED, left, 11]).integers(-64, 64, count).astype("float32")
    same(dst.float().cpu().numpy(), want, "putmem_signal_on_stream + core.signal_wait")
    # a signal-only message (0 bytes), then ADD, waited for by signal_wait_until_on_stream (vLLM)
    nvshmem.barrier_all(stream=s)
    bindings.putmem_signal_on_stream(dst.data_ptr(), dst.data_ptr(), 0, sig.handle, 10,
                                     bindings.Signal_op.SIGNAL_SET, right, stream)
    bindings.signal_op_on_stream(sig.handle, 5, bindings.Signal_op.SIGNAL_ADD, right, stream)
    bindings.signal_wait_until_on_stream(sig.handle, bindings.Cmp_type.CMP_EQ, 15, stream)
    s.synchronize()
    assert bindings.signal_fetch(sig.handle) == 15
    # get, nbi put + quiet, barriers on the stream
    back = nvshmem.tensor((count,), dtype=torch.bfloat16)
    back.fill_(7)
    dst.fill_(-1000)  # poison again: it holds `want` from the first message
    bindings.barrier_all_on_stream(stream)
    bindings.getmem_on_stream(back.data_ptr(), src.data_ptr(), count * 2, left, stream)
    bindings.putmem_nbi_on_stream(dst.data_ptr(), src.data_ptr(), count * 2, right, stream)
    bindings.quiet_on_stream(stream)
    bindings.flush_on_stream(stream)
    bindings.barrier_on_stream(bindings.Team_id.TEAM_WORLD, stream)
    assert bindings.team_sync_on_stream(bindings.Team_id.TEAM_WORLD, stream) == 0
    bindings.sync_all_on_stream(stream)
    s.synchronize()
    same(back.float().cpu().numpy(), want, "getmem_on_stream")
    same(dst.float().cpu().numpy(), want, "putmem_nbi_on_stream + quiet_on_stream")
    # collectives on the stream, typed names and the half / bfloat16 ones
    k = int(rng.integers(1, 3000))
    for ti, (t, tdt) in enumerate((("float", torch.float32), ("int", torch.int32), ("bfloat16", torch.bfloat16),
                                   ("half", torch.float16), ("int64", torch.int64), ("uint8", torch.uint8))):
        vals = [np.random.default_rng([SEED, p, 12, ti]).integers(0, 8, k * n) for p in range(n)]
        a = nvshmem.tensor((k * n,), dtype=tdt)
        b = nvshmem.tensor((k * n,), dtype=tdt)
        a.copy_(torch.from_numpy(vals[me].astype("float32")).to(tdt))
        for op, ref in (("sum", lambda x: np.sum(x, axis=0)), ("max", lambda x: np.max(x, axis=0))):
            b.fill_(99)
            bindings.barrier_all_on_stream(stream)  # every dest poisoned before any member sends
            getattr(bindings, f"{t}_{op}_reduce_on_stream")(0, b.data_ptr(), a.data_ptr(), k * n, stream)
            s.synchronize()
            same(b.float().cpu().numpy(), ref(np.stack(vals)).astype("float32"), f"{t}_{op}_reduce_on_stream")
            b.fill_(99)
            bindings.barrier_all_on_stream(stream)  # every dest poisoned before any member sends
            getattr(bindings, f"{t}_{op}_reducescatter_on_stream")(0, b.data_ptr(), a.data_ptr(), k, stream)
            s.synchronize()
            same(b[:k].float().cpu().numpy(), ref(np.stack(vals))[me * k:(me + 1) * k].astype("float32"),
                 f"{t}_{op}_reducescatter_on_stream")
        b.fill_(99)
        bindings.barrier_all_on_stream(stream)
        getattr(bindings, f"{t}_fcollect_on_stream")(0, b.data_ptr(), a.data_ptr(), k, stream)
        s.synchronize()
        same(b.float().cpu().numpy(), np.concatenate([v[:k] for v in vals]).astype("float32"),
             f"{t}_fcollect_on_stream")
        b.fill_(99)
        bindings.barrier_all_on_stream(stream)
        getattr(bindings, f"{t}_alltoall_on_stream")(0, b.data_ptr(), a.data_ptr(), k, stream)
        s.synchronize()
        same(b.float().cpu().numpy(), np.concatenate([v[me * k:(me + 1) * k] for v in vals]).astype("float32"),
             f"{t}_alltoall_on_stream")
        b.fill_(99)
        bindings.barrier_all_on_stream(stream)
        root = n - 1
        getattr(bindings, f"{t}_broadcast_on_stream")(0, b.data_ptr(), a.data_ptr(), k, root, stream)
        s.synchronize()
        same(b[:k].float().cpu().numpy(), vals[root][:k].astype("float32"), f"{t}_broadcast_on_stream")
        nvshmem.free_tensor(a)
        nvshmem.free_tensor(b)
    nvshmem.barrier_all(stream=s)
    s.synchronize()
    for x in (src, dst, back):
        nvshmem.free_tensor(x)
    nvshmem.free(sig)


def env_main():
    check_module()
    nvshmem.init()
    me, n = bindings.my_pe(), bindings.n_pes()
    gpu = bindings_nvshmem._gshmem.device()[0] >= 0
    check_queries(me, n)
    if gpu:  # host atomics and teams on GPU memory too; the checks that view host memory are CPU-only
        check_atomics(me, n)
        check_teams(me, n)
        check_streams_gpu(me, n)
    else:
        check_memory(me, n)
        check_atomics(me, n)
        check_signal_and_core(me, n)
        check_teams(me, n)
        check_no_streams_on_cpu(me, n)
    bindings.barrier_all()
    if "g" in _scratch:
        bindings.free(_scratch.pop("g"))
    nvshmem.finalize()
    assert bindings.init_status() == bindings.Init_status.STATUS_NOT_INITIALIZED
    print(f"PASS pe {me}/{n} ({'GPU' if gpu else 'CPU'} PEs)", flush=True)


def uid_main():
    """The PEs start through the bindings: rank 0's get_uniqueid, the id's bytes broadcast (MPI-style, here over
    files), set_attr_uniqueid_args into an InitAttr, hostlib_init_attr(INIT_WITH_UNIQUEID); then bindings and
    gshmem.core calls; a nested start; hostlib_finalize."""
    rank, nranks = int(os.environ["GSHMEM_TEST_RANK"]), int(os.environ["GSHMEM_TEST_NRANKS"])
    comm = FileComm(os.environ["GSHMEM_TEST_COMM_DIR"], rank, nranks)
    assert bindings.init_status() == bindings.Init_status.STATUS_NOT_INITIALIZED
    uid = bindings.uniqueid()
    if rank == 0:
        bindings.get_uniqueid(uid.ptr)
    comm.Bcast(uid._data.view(np.int8), root=0)
    attr = bindings.InitAttr()
    ctypes.memset(attr.ptr, 0xA5, 144)  # an attr never initialised: the call stamps its versions
    bindings.set_attr_uniqueid_args(rank, nranks, uid.ptr, attr.ptr)
    bindings.hostlib_init_attr(bindings.Flags.INIT_WITH_UNIQUEID, attr.ptr)
    assert (bindings.my_pe(), bindings.n_pes()) == (rank, nranks)
    bindings.hostlib_init_attr(bindings.Flags.INIT_WITH_UNIQUEID, attr.ptr)  # nested: needs its own finalize
    a = nvshmem.array((5,), dtype="int64")
    a[:] = np.random.default_rng([SEED, rank, 3]).integers(0, 100, 5)
    bindings.barrier_all()  # every member's dest is ready before the collective
    nvshmem.reduce(nvshmem.Teams.TEAM_WORLD, a, a, "sum")
    same(a, sum(np.random.default_rng([SEED, p, 3]).integers(0, 100, 5) for p in range(nranks)),
         "gshmem.core's reduce after hostlib_init_attr")
    bindings.barrier_all()  # PE 0 has its result before any PE adds to it
    bindings.int64_atomic_add(a.ctypes.data, 1, 0)
    bindings.barrier_all()
    if rank == 0:
        assert a[0] == sum(np.random.default_rng([SEED, p, 3]).integers(0, 100, 5)[0] for p in range(nranks)) + \
            nranks
    bindings.barrier_all()
    nvshmem.free_array(a)
    bindings.hostlib_finalize()
    assert bindings.init_status() == bindings.Init_status.STATUS_IS_INITIALIZED  # the nested one still runs
    bindings.hostlib_finalize()
    assert bindings.init_status() == bindings.Init_status.STATUS_NOT_INITIALIZED
    print(f"PASS pe {rank}/{nranks} (uid)", flush=True)


def mpi_main():
    """Under mpirun: set_attr_mpi_comm_args(MPI._addressof(comm), attr.ptr) + hostlib_init_attr(INIT_WITH_MPI_COMM)
    on a communicator whose ranks run backwards (MPI_Comm_split with key -rank): PE i is rank i of that
    communicator, not of COMM_WORLD. Then gshmem.core and the bindings on the PEs, hostlib_finalize."""
    from mpi4py import MPI
    world = MPI.COMM_WORLD
    comm = world.Split(0, -world.Get_rank())
    rank, nranks = comm.Get_rank(), comm.Get_size()
    attr = bindings.InitAttr()
    bindings.set_attr_mpi_comm_args(MPI._addressof(comm), attr.ptr)
    assert attr.mpi_comm == MPI._addressof(comm), (attr.mpi_comm, MPI._addressof(comm))
    bindings.hostlib_init_attr(bindings.Flags.INIT_WITH_MPI_COMM, attr.ptr)
    assert (bindings.my_pe(), bindings.n_pes()) == (rank, nranks), (bindings.my_pe(), rank, world.Get_rank())
    a = nvshmem.array((3,), dtype="int64")
    a[:] = np.random.default_rng([SEED, rank, 4]).integers(0, 1000, 3)
    bindings.barrier_all()
    nvshmem.reduce(nvshmem.Teams.TEAM_WORLD, a, a, "max")
    same(a, np.max([np.random.default_rng([SEED, p, 4]).integers(0, 1000, 3) for p in range(nranks)], axis=0),
         "max reduce after an MPI start through the bindings")
    bindings.barrier_all()
    nvshmem.free_array(a)
    bindings.hostlib_finalize()
    comm.Free()
    print(f"PASS pe {rank}/{nranks} (mpi, world rank {world.Get_rank()})", flush=True)


if __name__ == "__main__":
    {"env": env_main, "uid": uid_main, "mpi": mpi_main}[sys.argv[1] if len(sys.argv) > 1 else "env"]()
