"""One PE of test_core.py: checks every gshmem.core function with fresh random data, on one array library.

Run by the test (GSHMEM_TEST_SEED set by it): every PE derives every PE's data from the seed, so each can compute
the exact expected result. GSHMEM_TEST_LIB picks the arrays: "numpy" (CPU PEs), "torch" (CUDA tensors on GPU PEs,
CPU tensors on CPU PEs) or "cupy" (GPU PEs). Argument "uid": UID-based init (rank 0 writes the id to a file);
"mpi": init over mpi4py's COMM_WORLD; none: init() from the environment (gshmemrun, torchrun).

On GPU PEs every call is stream-ordered (the current stream, or an explicit one where a check says so): the
worker synchronises the stream before reading results on the host.
"""
import mmap
import os
import sys
import time

import numpy as np

import gshmem.core as nv

SEED = int(os.environ["GSHMEM_TEST_SEED"])
LIB = os.environ.get("GSHMEM_TEST_LIB", "numpy")
W = nv.Teams.TEAM_WORLD


def data(pe, shape, dtype, lo=0, hi=8):
    """PE `pe`'s input: small integers, so sums and products are exact in every dtype (float16 included)."""
    key = sum(map(ord, dtype))
    return np.random.default_rng([SEED, pe, key]).integers(lo, hi, size=shape).astype(
        "float32" if dtype == "bfloat16" else dtype)


class Numpy:
    """NumPy arrays (CPU PEs)."""
    gpu = False
    dtypes = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
              "float64")

    def new(self, shape, dtype):
        return nv.array(shape, dtype=dtype)

    def free(self, a):
        nv.free_array(a)

    def peer(self, a, pe):
        return nv.get_peer_array(a, pe)

    def local(self, shape, dtype):
        return np.zeros(shape, dtype)

    def host(self, a):
        return np.array(a)

    def put_values(self, a, values):
        a[...] = values

    def sync(self):
        pass

    def dtype_ok(self, a, name):
        return a.dtype == np.dtype(name)


class Cupy(Numpy):
    gpu = True

    def __init__(self):
        import cupy
        self.cp = cupy

    def local(self, shape, dtype):
        return self.cp.zeros(shape, dtype)

    def host(self, a):
        return self.cp.asnumpy(a)

    def put_values(self, a, values):
        a[...] = self.cp.asarray(values)

    def sync(self):
        self.cp.cuda.get_current_stream().synchronize()


class Torch:
    """torch tensors: on the PE's GPU, or CPU tensors on CPU PEs."""

    def __init__(self, gpu):
        import torch
        self.torch, self.gpu = torch, gpu
        self.dtypes = Numpy.dtypes[:4] + ("uint8", "float16", "bfloat16", "float32", "float64")
        if hasattr(torch, "uint16"):  # torch >= 2.3 has the unsigned widths (few kernels; enough for copies)
            self.dtypes += ("uint16", "uint32", "uint64")

    def dt(self, name):
        return getattr(self.torch, name)

    def new(self, shape, dtype):
        return nv.tensor(shape, dtype=self.dt(dtype))

    def free(self, a):
        nv.free_tensor(a)

    def peer(self, a, pe):
        return nv.get_peer_tensor(a, pe)

    def local(self, shape, dtype):
        return self.torch.zeros(shape, dtype=self.dt(dtype), device="cuda" if self.gpu else "cpu")

    def host(self, a):
        a = a.cpu()
        if a.dtype == self.torch.bfloat16:
            a = a.float()
        if a.dtype in (getattr(self.torch, "uint16", None), getattr(self.torch, "uint32", None),
                       getattr(self.torch, "uint64", None)):  # no .numpy() for these: view as the signed width
            signed = {2: self.torch.int16, 4: self.torch.int32, 8: self.torch.int64}[a.element_size()]
            return a.view(signed).numpy().view("uint%d" % (8 * a.element_size()))
        return a.numpy()

    def put_values(self, a, values):
        t = self.torch.from_numpy(np.ascontiguousarray(values))
        if a.dtype in (getattr(self.torch, "uint16", None), getattr(self.torch, "uint32", None),
                       getattr(self.torch, "uint64", None)):
            signed = {2: self.torch.int16, 4: self.torch.int32, 8: self.torch.int64}[a.element_size()]
            t = self.torch.from_numpy(np.ascontiguousarray(values).view("int%d" % (8 * a.element_size())))
            a.view(signed).copy_(t.reshape(a.shape))
            return
        a.copy_(t.reshape(a.shape))

    def sync(self):
        if self.gpu:
            self.torch.cuda.current_stream().synchronize()

    def dtype_ok(self, a, name):
        return a.dtype == self.dt(name)


def expect_raises(fn, *args, match="", **kw):
    try:
        fn(*args, **kw)
    except nv.NvshmemError as e:  # NvshmemInvalid is one too
        assert match in str(e), f"{fn.__name__}: message {str(e)!r} does not name {match!r}"
        return
    raise AssertionError(f"{fn.__name__}{args} did not raise")


def init():
    mode = sys.argv[1] if len(sys.argv) > 1 else "env"
    if LIB == "torch":
        import torch  # noqa: F401 (before init: gshmem.core then points torch at the PE's GPU)
    if mode == "uid":
        rank, nranks = int(os.environ["GSHMEM_TEST_RANK"]), int(os.environ["GSHMEM_TEST_NRANKS"])
        path = os.environ["GSHMEM_TEST_UID_FILE"]
        if rank == 0:
            uid = nv.get_unique_id()
            with open(path + ".tmp", "wb") as f:
                f.write(bytes(uid))
            os.rename(path + ".tmp", path)
        else:
            deadline = time.monotonic() + 30
            while not os.path.exists(path):
                assert time.monotonic() < deadline, "no unique id from rank 0"
                time.sleep(0.01)
            with open(path, "rb") as f:
                uid = nv.UniqueID(f.read())
        nv.init(uid=uid, rank=rank, nranks=nranks, initializer_method="uid")
        assert (nv.my_pe(), nv.n_pes()) == (rank, nranks)
    elif mode == "mpi":
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        expect_raises(nv.init, mpi_comm=object(), initializer_method="mpi", match="mpi_comm")
        nv.init(initializer_method="mpi")  # mpi_comm=None: MPI.COMM_WORLD, as nvshmem4py
        assert (nv.my_pe(), nv.n_pes()) == (comm.Get_rank(), comm.Get_size())
    else:
        nv.init()
        if "RANK" in os.environ and "GSHMEMRUN" not in os.environ:  # torchrun
            assert (nv.my_pe(), nv.n_pes()) == (int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))


def check_teams(xp, me, n):
    """team_split_strided (odd PEs; even PEs), team_split_2d, team_translate_pe, a reduce on a split team,
    team_destroy, and their bad input."""
    odd = nv.team_split_strided(W, 1, 2, n // 2, nv.TeamConfig(), 0, new_team_name="ODD")
    even = nv.team_split_strided(W, 0, 2, (n + 1) // 2, None, 0)
    if me % 2:
        assert even is None and odd is not None and odd.name == "ODD" and nv.Teams["ODD"] == odd
        mine, k = odd, n // 2
    else:
        assert odd is None and even is not None and even in nv.Teams
        mine, k = even, (n + 1) // 2
    assert (nv.team_my_pe(mine), nv.team_n_pes(mine)) == (me // 2, k)
    for i in range(k):
        assert nv.team_translate_pe(mine, i, W) == 2 * i + me % 2
    assert nv.team_translate_pe(W, me, mine) == me // 2
    assert nv.team_translate_pe(W, (me + 1) % n, mine) == (-1 if n > 1 else 0)
    src, dst = xp.new((5,), "int64"), xp.new((5,), "int64")
    xp.put_values(src, data(me, 5, "int64"))
    nv.reduce(mine, dst, src, "sum")
    xp.sync()
    want = sum(data(p, 5, "int64") for p in range(me % 2, n, 2))
    assert np.array_equal(xp.host(dst), want), (dst, want)
    nv.barrier_all()
    xp.sync()
    xp.free(dst)
    xp.free(src)
    xrange_ = 2 if n % 2 == 0 else 1
    row, col = nv.team_split_2d(W, xrange_, new_team_name="GRID")
    assert row is not None and col is not None
    assert (nv.team_my_pe(row), nv.team_n_pes(row)) == (me % xrange_, xrange_)
    assert (nv.team_my_pe(col), nv.team_n_pes(col)) == (me // xrange_, n // xrange_)
    assert nv.Teams["GRID_X"] == row and nv.Teams["GRID_Y"] == col
    expect_raises(nv.team_split_strided, W, 0, 1, n + 1, match="team_split_strided")  # past the parent
    expect_raises(nv.team_split_strided, 12345, 0, 1, 1, match="not a team")
    expect_raises(nv.team_translate_pe, W, n, W, match="out of range")
    expect_raises(nv.team_destroy, W, match="predefined")
    for t in (row, col, mine):
        nv.team_destroy(t)
    assert "ODD" not in nv.Teams and "GRID_X" not in nv.Teams
    expect_raises(nv.team_split_strided, mine, 0, 1, 1, match="team")  # destroyed
    nv.barrier_all()
    xp.sync()


def check_signals(xp, me, n):
    """put_nbi / get_nbi + quiet, put_signal (SET) along a ring with signal_wait, signal_op (ADD) into PE 0's
    counter, and bad input."""
    nxt, prv = (me + 1) % n, (me - 1) % n
    buf, got, sig = xp.new((16,), "int32"), xp.new((16,), "int32"), xp.new((2,), "int64")
    xp.put_values(sig, np.zeros(2, np.int64))
    nv.barrier_all()
    for it in range(1, 4):
        src = xp.local((16,), "int32")
        xp.put_values(src, data(me * 10 + it, 16, "int32"))
        nv.put_signal(buf, src, sig, it, nv.SignalOp.SIGNAL_SET, nxt)
        v = nv.signal_wait(sig, it, nv.ComparisonType.CMP_EQ)
        assert v == (None if xp.gpu else it), v
        xp.sync()
        assert np.array_equal(xp.host(buf), data(prv * 10 + it, 16, "int32")), it
        nv.barrier_all()  # every PE has read buf before the next round overwrites it
    nv.signal_op(sig[1:], 1, nv.SignalOp.SIGNAL_ADD, 0)
    if me == 0:
        nv.signal_wait(sig[1:], n, nv.ComparisonType.CMP_GE)
        xp.sync()
        assert xp.host(sig)[1] == n
    nv.barrier_all()
    mine = xp.local((16,), "int32")
    xp.put_values(mine, data(100 + me, 16, "int32"))
    nv.put_nbi(buf, mine, nxt)
    nv.quiet()
    nv.barrier_all()
    xp.sync()
    assert np.array_equal(xp.host(buf), data(100 + prv, 16, "int32"))
    local = xp.local((16,), "int32")
    nv.get_nbi(local, buf, nxt)
    nv.quiet()
    xp.sync()
    assert np.array_equal(xp.host(local), data(100 + me, 16, "int32"))  # nxt's buf holds what this PE put there
    nv.barrier_all()
    xp.sync()
    expect_raises(nv.signal_op, sig, 1, 7, 0, match="SignalOp")
    expect_raises(nv.signal_wait, sig, 0, 9, match="ComparisonType")
    expect_raises(nv.signal_op, buf, 1, nv.SignalOp.SIGNAL_SET, 0, match="64-bit")
    expect_raises(nv.put_signal, buf, mine, sig, 1, nv.SignalOp.SIGNAL_SET, n, match="out of range")
    for a in (sig, got, buf):
        xp.free(a)


def check_streams(xp, me, n):
    """GPU PEs: the same call on every kind of stream nvshmem4py programs pass (the library's own stream object,
    an int, an object with __cuda_stream__, cuda.core's Stream), ordered against that stream's other work."""
    nxt, prv = (me + 1) % n, (me - 1) % n
    src, dst = xp.new((64,), "int32"), xp.new((64,), "int32")
    if LIB == "torch":
        import torch
        s = torch.cuda.Stream()
        streams = [s, s.cuda_stream]
        def sync_on(st): torch.cuda.synchronize()  # noqa: E704
    else:
        import cupy
        s = cupy.cuda.Stream(non_blocking=True)
        streams = [s, s.ptr]
        def sync_on(st): cupy.cuda.runtime.deviceSynchronize()  # noqa: E704

    class Proto:  # CUDA's stream protocol (__cuda_stream__ -> (version, handle))
        def __init__(self, h):
            self.h = h

        def __cuda_stream__(self):
            return (0, self.h)

    streams.append(Proto(streams[1]))
    try:
        from cuda.core.experimental import Device
    except ImportError:
        try:
            from cuda.core import Device
        except ImportError:
            Device = None
    if Device is not None:
        dev = Device()
        dev.set_current()
        streams.append(dev.create_stream())
    # twice over: the second pass takes the extension's fast path with each kind of stream the first pass taught it
    for k, st in enumerate(streams + streams):
        xp.put_values(src, data(1000 * k + me, 64, "int32"))
        xp.sync()  # src is written before the other stream reads it
        nv.barrier_all(stream=st)
        nv.put(dst, src, remote_pe=nxt, stream=st)
        nv.barrier_all(stream=st)
        sync_on(st)
        assert np.array_equal(xp.host(dst), data(1000 * k + prv, 64, "int32")), (k, type(st))
        nv.reduce(W, dst, src, "sum", stream=st)
        sync_on(st)
        assert np.array_equal(xp.host(dst), sum(data(1000 * k + p, 64, "int32") for p in range(n))), k
        nv.barrier_all(stream=st)
        sync_on(st)
    expect_raises(nv.put, dst, src, remote_pe=nxt, stream=object(), match="not a CUDA stream")
    xp.free(dst)
    xp.free(src)


def check_graph(xp, me, n):
    """torch.cuda.CUDAGraph: barrier_all, reduce, put and barrier_all captured with stream=None (the current stream:
    torch's capture stream while capturing), warmed up on a side stream first as torch asks, then replayed three
    times, each with fresh sources and poisoned destinations."""
    import torch
    m, peer, prev = 256, (me + 1) % n, (me - 1) % n
    src, dst, got = xp.new((m,), "float32"), xp.new((m,), "float32"), xp.new((m,), "float32")

    def calls():
        nv.barrier_all()  # every PE's sources written, destinations poisoned
        nv.reduce(W, dst, src, "sum")
        nv.put(got, src, remote_pe=peer)
        nv.barrier_all()  # every put has landed

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):  # the second round on the fast path, which the capture then takes too
            calls()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        calls()
    for rep in range(3):
        vals = np.stack([data(5000 + 10 * rep + p, (m,), "float32", 0, 9) for p in range(n)])
        xp.put_values(src, vals[me])
        xp.put_values(dst, np.full((m,), -3.0, "float32"))
        xp.put_values(got, np.full((m,), -4.0, "float32"))
        torch.cuda.synchronize()
        graph.replay()
        torch.cuda.synchronize()
        assert np.array_equal(xp.host(dst), vals.sum(axis=0)), f"replay {rep}: the captured reduce"
        assert np.array_equal(xp.host(got), vals[prev]), f"replay {rep}: the captured put"
    nv.barrier_all()
    torch.cuda.synchronize()
    del graph
    for t in (got, dst, src):
        xp.free(t)


def check_gpu_views(xp, me, n):
    """Buffers through DLPack, a peer tensor written by a kernel, multicast refused with the reason."""
    buf = nv.buffer(256)
    if LIB == "torch":
        import torch
        t = torch.from_dlpack(buf)
        assert t.is_cuda and t.numel() == 256 and t.dtype == torch.uint8
    else:
        import cupy
        t = cupy.from_dlpack(buf)
        assert t.size == 256 and t.dtype == np.uint8
    assert t.data_ptr() == buf.handle if LIB == "torch" else t.data.ptr == buf.handle
    xp.put_values(t, data(me, 256, "uint8"))
    nv.barrier_all()
    xp.sync()
    peer = nv.get_peer_buffer(buf, (me + 1) % n)
    pt = torch.from_dlpack(peer) if LIB == "torch" else cupy.from_dlpack(peer)
    assert np.array_equal(xp.host(pt), data((me + 1) % n, 256, "uint8"))
    nv.barrier_all()
    xp.sync()
    nv.free(buf)
    if LIB == "torch":
        expect_raises(nv.get_multicast_tensor, W, xp.local((4,), "int32"), match="multicast")
    expect_raises(nv.get_multicast_buffer, W, None, match="multicast")


def check_register_external(xp, me, n):
    """CPU PEs: every PE's own MAP_SHARED mapping registered as one symmetric region, used by put and a peer
    view, then unregistered (register_external_tensor / unregister_external_tensor; with NumPy also
    register_external_array / unregister_external_array, nvshmem4py's interop.cupy names)."""
    pairs = [(nv.register_external_tensor, nv.unregister_external_tensor)]
    if LIB == "numpy":
        pairs.append((nv.interop.cupy.register_external_array, nv.interop.cupy.unregister_external_array))
    for register, unregister in pairs:
        register_external_once(xp, me, n, register, unregister)


def register_external_once(xp, me, n, register, unregister):
    nxt, prv = (me + 1) % n, (me - 1) % n
    size = 1 << 16
    fd = os.memfd_create("gshmem-test-external")
    os.ftruncate(fd, size)
    m = mmap.mmap(fd, size)
    os.close(fd)
    if LIB == "torch":
        import torch
        mine = torch.frombuffer(m, dtype=torch.int32)
    else:
        mine = np.frombuffer(m, dtype=np.int32)
    mine[:] = 0
    sym = register(mine)
    assert tuple(sym.shape) == (size // 4,)
    src = xp.local((size // 4,), "int32")
    xp.put_values(src, data(me, size // 4, "int32"))
    nv.put(sym, src, remote_pe=nxt)
    nv.barrier_all()
    assert np.array_equal(xp.host(mine), data(prv, size // 4, "int32"))  # the same memory as sym
    assert np.array_equal(xp.host(nv.get_peer_tensor(sym, nxt)), data(me, size // 4, "int32"))
    nv.barrier_all()
    expect_raises(unregister, mine, match="register_external")
    unregister(sym)
    del sym, mine
    m.close()


def check_basics(xp, me, n):
    nxt, prv = (me + 1) % n, (me - 1) % n
    for dtype in ("int8", "int32", "int64", "float32", "float64") + (("uint16",) if "uint16" in xp.dtypes else ()):
        shape = (3, 5)
        a = xp.new(shape, dtype)
        assert tuple(a.shape) == shape and xp.dtype_ok(a, dtype)
        xp.put_values(a, data(me, shape, dtype))
        dst = xp.new(shape, dtype)
        nv.barrier_all()
        xp.sync()
        peer = xp.peer(a, nxt)  # read the next PE's copy through the mapping
        assert np.array_equal(xp.host(peer), data(nxt, shape, dtype)), dtype
        nv.put(dst, a, remote_pe=nxt)  # my data into the next PE's dst
        nv.barrier_all()
        xp.sync()
        assert np.array_equal(xp.host(dst), data(prv, shape, dtype)), dtype
        local = xp.local(shape, dtype)
        nv.get(local, a, remote_pe=prv)
        xp.sync()
        assert np.array_equal(xp.host(local), data(prv, shape, dtype)), dtype
        nv.barrier_all()
        xp.put_values(xp.peer(dst, nxt), data(me + 50, shape, dtype))  # a store into the next PE's dst
        nv.barrier_all()
        xp.sync()
        assert np.array_equal(xp.host(dst), data(prv + 50, shape, dtype)), dtype
        nv.barrier_all()
        xp.sync()
        xp.free(dst)
        xp.free(a)

    if LIB == "torch":
        import torch
        raw = nv.bytetensor((3, 2), dtype=torch.float64)
        assert raw.dtype == torch.uint8 and tuple(raw.shape) == (3, 2)
        nv.free_tensor(raw)
        f = nv.tensor((2, 3), dtype=torch.int32, morder="F")
        assert f.stride() == (1, 2)
        nv.free_tensor(f)
        d = nv.tensor((4,))
        assert d.dtype == torch.float32 and d.is_cuda == xp.gpu
        nv.free_tensor(d)
    else:
        raw = nv.bytearray((3,), dtype="float64")
        assert raw.dtype == np.uint8 and raw.shape == (24,)
        nv.free_array(raw)

    b = nv.buffer(64)
    assert b.size == 64 and b.handle
    if not xp.gpu:  # a Buffer is a DLPack producer (uint8 bytes at its address)
        v = np.from_dlpack(b)
        assert v.dtype == np.uint8 and v.shape == (64,) and v.__array_interface__["data"][0] == b.handle
    pb = nv.get_peer_buffer(b, nxt)
    assert pb.size == 64 and pb.peer == nxt
    nv.barrier_all()
    xp.sync()
    nv.free(b)


def check_collectives(xp, me, n):
    ints = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
    for team in (W, nv.Teams.TEAM_SHARED):
        for dtype in xp.dtypes:
            m = 7
            src, dst = xp.new((m,), dtype), xp.new((m,), dtype)
            ops = ["sum", "min", "max", "prod"] + (["and", "or", "xor"] if dtype in ints else [])
            allv = np.stack([data(p, (m,), dtype, 1, 3 if n > 2 else 4) for p in range(n)])
            for op in ops:
                xp.put_values(src, allv[me])
                nv.reduce(team, dst, src, op)
                xp.sync()
                want = {"sum": np.add, "min": np.minimum, "max": np.maximum, "prod": np.multiply,
                        "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op].reduce(allv, axis=0)
                got = xp.host(dst)
                assert np.array_equal(got, want.astype(got.dtype)), (dtype, op, got, want)
            nv.reduce(team, src, src, "sum")  # in place
            xp.sync()
            got = xp.host(src)
            assert np.array_equal(got, allv.sum(axis=0).astype(got.dtype)), dtype
            xp.free(dst)
            xp.free(src)

        for dtype in ("int32", "float64", "uint8"):
            m = 5
            big = np.stack([data(p, (n * m,), dtype, 0, 5) for p in range(n)])  # every PE's src of n*m
            src = xp.new((n * m,), dtype)
            xp.put_values(src, big[me])
            rs = xp.new((m,), dtype)
            nv.reducescatter(team, rs, src, "sum")
            xp.sync()
            assert np.array_equal(xp.host(rs), big.sum(axis=0)[me * m:(me + 1) * m].astype(dtype)), dtype
            a2a = xp.new((n * m,), dtype)
            nv.alltoall(team, a2a, src)
            xp.sync()
            assert np.array_equal(xp.host(a2a), np.concatenate([big[p][me * m:(me + 1) * m] for p in range(n)]))
            small = xp.new((m,), dtype)
            xp.put_values(small, data(me, (m,), dtype))
            fc = xp.new((n * m,), dtype)
            nv.fcollect(team, fc, small)
            xp.sync()
            assert np.array_equal(xp.host(fc), np.concatenate([data(p, (m,), dtype) for p in range(n)])), dtype
            for root in range(n):
                bc = xp.new((m,), dtype)
                nv.broadcast(team, bc, small, root=root)
                xp.sync()
                assert np.array_equal(xp.host(bc), data(root, (m,), dtype)), (dtype, root)
                nv.barrier_all()
                xp.sync()
                xp.free(bc)
            for x in (fc, small, a2a, rs, src):
                xp.free(x)


def check_bad_input(xp, me, n):
    """Bad input raises, naming the call; the job goes on."""
    x, y = xp.new((4,), "int32"), xp.new((4,), "float32")
    mine = xp.local((4,), "int32")
    expect_raises(nv.reduce, W, x, y, "sum", match="reduce")  # dtype mismatch
    expect_raises(nv.reduce, W, x, mine, "sum", match="not symmetric")
    expect_raises(nv.reduce, W, x, x, "avg", match="op=")
    expect_raises(nv.reduce, W, y, y, "xor", match="integer dtype")
    expect_raises(nv.broadcast, W, x, x, root=n, match="root")
    if n > 1:
        expect_raises(nv.fcollect, W, x, x, match="fcollect")  # dst too small
    expect_raises(nv.reduce, 99, x, x, "sum", match="team")
    expect_raises(nv.put, x, mine, remote_pe=n, match="out of range")
    expect_raises(nv.put, x, mine, remote_pe=-1, match="out of range")
    expect_raises(nv.put, mine, x, remote_pe=0, match="not symmetric")
    expect_raises(nv.put, x, y, remote_pe=0, match="dtype")
    expect_raises(nv.get, mine, mine, remote_pe=0, match="not symmetric")
    expect_raises(xp.peer, x, n, match="out of range")
    expect_raises(xp.peer, mine, 0, match="not symmetric")
    expect_raises(xp.free, mine, match="not symmetric")
    expect_raises(nv.reduce, W, x, x, "sum", stream=object(), match="stream")
    expect_raises(nv.put, x, "not an array", remote_pe=0, match="pass a torch tensor")
    if LIB == "torch":
        import torch
        z = nv.tensor((4, 4), dtype=torch.int32)
        expect_raises(nv.put, z[:, :2], z, remote_pe=0, match="not contiguous")
        expect_raises(nv.free_tensor, z[1:], match="view into an allocation")
        nv.free_tensor(z)
    if not xp.gpu:
        # The library's own checks (past the Python ones) arrive as GshmemError with its message and status.
        from gshmem import _gshmem
        xp_ = x.__array_interface__["data"][0] if LIB == "numpy" else x.data_ptr()
        mp = mine.__array_interface__["data"][0] if LIB == "numpy" else mine.data_ptr()
        try:
            _gshmem.putmem(xp_, mp, 16, n, "put")
            raise AssertionError("putmem to pe=n did not raise")
        except nv.GshmemError as e:
            assert e.status == 1 and "put: pe=" in str(e) and "out of range" in str(e), str(e)
        try:
            _gshmem.putmem(mp, xp_, 16, 0, "put")
            raise AssertionError("putmem to a non-symmetric dest did not raise")
        except nv.GshmemError as e:
            assert e.status == 1 and "not inside the symmetric heap" in str(e), str(e)
    nv.init()  # nested init (nvshmem4py allows it): this PE stays up until the matching finalize
    nv.finalize()
    assert (nv.my_pe(), nv.n_pes()) == (me, n)
    nv.barrier_all()
    xp.sync()
    xp.free(y)
    expect_raises(xp.free, y, match="not symmetric")  # use after free
    expect_raises(nv.put, y, y, remote_pe=0, match="not symmetric")
    nv.barrier_all()
    xp.sync()
    return x  # left for finalize to free


def check_fast_path(xp, me, n):
    """torch tensors and NumPy arrays: the calls after the first take gshmem._gshmem's fast path (python/src/
    fast.cpp); it must give the same results, and refuse (so that the full checks raise) whatever the full path
    would refuse. _gshmem.fast_stats() counts the calls it made."""
    from gshmem import _gshmem
    fast = _gshmem.fast_stats
    m = 16
    allv = np.stack([data(p, (m,), "float32", 0, 9) for p in range(n)])
    src, dst = xp.new((m,), "float32"), xp.new((m,), "float32")
    xp.put_values(src, allv[me])
    before = fast()
    for i in range(4):  # fresh poison each time: a call that did nothing would leave it
        xp.put_values(dst, np.full((m,), -1.0 - i, "float32"))
        nv.reduce(W, dst, src, "sum")
        xp.sync()
        assert np.array_equal(xp.host(dst), allv.sum(axis=0)), i
    assert fast() - before == 3, f"{fast() - before} of the 3 reduces after the first took the fast path"
    nv.reduce(W, dst, dst, "max")  # in place, both sides one tensor
    xp.sync()
    assert np.array_equal(xp.host(dst), allv.sum(axis=0))
    # every collective and put / get it takes, each checked against fresh data
    vals = np.stack([data(p, (n * m,), "int32", 1, 99) for p in range(n)])
    a, b = xp.new((n * m,), "int32"), xp.new((n * m,), "int32")
    xp.put_values(a, vals[me])
    cases = [
        ("reducescatter", lambda: nv.reducescatter(W, b[:m], a, "max"), lambda: vals.reshape(n, n, m).max(axis=0)[me]),
        ("alltoall", lambda: nv.alltoall(W, b, a), lambda: vals.reshape(n, n, m)[:, me].reshape(-1)),
        ("fcollect", lambda: nv.fcollect(W, b, a[:m]), lambda: vals[:, :m].reshape(-1)),
        ("broadcast", lambda: nv.broadcast(W, b, a, root=n - 1), lambda: vals[n - 1]),
        ("reduce xor", lambda: nv.reduce(W, b, a, "xor"), lambda: np.bitwise_xor.reduce(vals, axis=0)),
    ]
    for name, call, want in cases:
        for i in range(3):
            xp.put_values(b, np.full((n * m,), -5 - i, "int32"))
            nv.barrier_all()
            xp.sync()
            took = fast()
            call()
            xp.sync()
            got_now = xp.host(b)[:want().size]
            assert np.array_equal(got_now, want()), (name, i)
            assert i == 0 or fast() == took + 1, f"{name}: call {i} did not take the fast path"
    peer = (me + 1) % n
    got = xp.new((m,), "float32")
    for i in range(3):
        xp.put_values(got, np.full((m,), -7.0, "float32"))
        nv.barrier_all()
        xp.sync()
        nv.put(got, src, remote_pe=peer)  # my src into the next PE's got
        nv.barrier_all()
        xp.sync()
        assert np.array_equal(xp.host(got), allv[(me - 1) % n]), i
    back = xp.new((m,), "float32")
    for i in range(3):
        xp.put_values(back, np.full((m,), -9.0, "float32"))
        took = fast()
        nv.get(back, src, remote_pe=peer)  # the next PE's src into my back
        nv.quiet()
        xp.sync()
        assert np.array_equal(xp.host(back), allv[peer]), i
        assert i == 0 or fast() == took + 1, f"get: call {i} did not take the fast path"
    # put_signal, signal_wait and signal_op (the pipeline's calls): a ring of put_signal SET waited for with
    # signal_wait, then signal_op ADD into PE 0's counter
    sig, ring = xp.new((2,), "int64"), xp.new((m,), "float32")
    xp.put_values(sig, np.zeros(2, np.int64))
    for it in range(1, 4):
        xp.put_values(ring, np.full((m,), -2.0 - it, "float32"))
        nv.barrier_all()  # every PE's ring poisoned before anyone puts into it
        xp.sync()
        took = fast()
        nv.put_signal(ring, src, sig[0:1], it, nv.SignalOp.SIGNAL_SET, peer)
        v = nv.signal_wait(sig[0:1], it, nv.ComparisonType.CMP_EQ)
        assert v == (None if xp.gpu else it), (it, v)
        xp.sync()
        assert np.array_equal(xp.host(ring), allv[(me - 1) % n]), it
        assert it == 1 or fast() == took + 2, f"put_signal / signal_wait {it}: {fast() - took} of 2 took the fast path"
        nv.barrier_all()  # every PE has read its ring before the next round
    took = fast()
    for _ in range(3):
        nv.signal_op(sig[1:], 1, nv.SignalOp.SIGNAL_ADD, 0)
    assert fast() >= took + 2, "the signal_op after the first did not take the fast path"
    if me == 0:
        nv.signal_wait(sig[1:], 3 * n, nv.ComparisonType.CMP_GE)
        xp.sync()
        assert xp.host(sig)[1] == 3 * n, xp.host(sig)
    nv.barrier_all()
    # What the fast path must not let through, each after it took the same arrays before; none of it counts.
    took = fast()
    expect_raises(nv.signal_op, a[:2], 1, nv.SignalOp.SIGNAL_ADD, 0, match="64-bit")  # int32 words
    expect_raises(nv.signal_op, sig[1:], 1, 7, 0, match="SignalOp")
    expect_raises(nv.signal_op, sig[1:], 1, nv.SignalOp.SIGNAL_ADD, n, match="out of range")
    expect_raises(nv.signal_wait, sig[1:], 0, 9, match="ComparisonType")
    expect_raises(nv.put_signal, ring, src, sig[0:1], 1, 8, peer, match="SignalOp")
    expect_raises(nv.put_signal, ring, src, a[:2], 1, nv.SignalOp.SIGNAL_SET, peer, match="64-bit")

    class Index:  # an integer by __index__ only: not a SignalOp or ComparisonType to the enums' lookup
        def __init__(self, v):
            self.v = v

        def __index__(self):
            return self.v

    expect_raises(nv.signal_op, sig[1:], 1, Index(int(nv.SignalOp.SIGNAL_ADD)), 0, match="SignalOp")
    expect_raises(nv.put_signal, ring, src, sig[0:1], 1, Index(int(nv.SignalOp.SIGNAL_SET)), peer, match="SignalOp")
    expect_raises(nv.signal_wait, sig[1:], 0, Index(int(nv.ComparisonType.CMP_GE)), match="ComparisonType")
    expect_raises(nv.reduce, W, dst[::2], src[::2], "sum", match="not contiguous")
    other = xp.new((m,), "int32")
    expect_raises(nv.reduce, W, dst, other, "sum", match="float32 but src_array is int32")
    expect_raises(nv.reduce, W, dst, src, "bogus", match="op=")
    expect_raises(nv.put, got, src, remote_pe=n, match="out of range")
    mine = xp.local((m,), "float32")  # not symmetric: the full check names it
    expect_raises(nv.reduce, W, mine, src, "sum", match="not symmetric")
    if n > 1:  # a team without this PE (a split's None on the PEs outside it)
        expect_raises(nv.reduce, None, dst, src, "sum", match="team")
    expect_raises(nv.reduce, W, dst, src, "and", match="integer dtype")
    expect_raises(nv.reducescatter, W, b, a[:m], "sum", match="needs")
    expect_raises(nv.broadcast, W, b, a, root=n, match="out of range")
    if n > 1:
        expect_raises(nv.fcollect, W, b[:m], a[:m], match="needs")
        expect_raises(nv.alltoall, W, b, a[:n * m - 1], match="not a multiple")
    expect_raises(nv.get, back, mine, remote_pe=peer, match="not symmetric")
    flags, bytes_ = xp.new((m,), "bool"), xp.new((m,), "uint8")  # bool reduces as uint8 but is another dtype
    nv.reduce(W, flags, flags, "or")
    nv.reduce(W, bytes_, bytes_, "or")
    expect_raises(nv.reduce, W, bytes_, flags, "or", match="uint8 but src_array is bool")
    expect_raises(nv.put, bytes_, flags, remote_pe=peer, match="uint8 but src is bool")
    if not xp.gpu:
        expect_raises(nv.reduce, W, dst, src, "sum", stream=1, match="CPU PE")
    else:  # a stream is read as the full path reads its type: an object with an instance attribute is none
        import types
        handle = xp.torch.cuda.current_stream().cuda_stream  # check_fast_path runs on GPUs with torch only
        expect_raises(nv.reduce, W, dst, src, "sum", stream=types.SimpleNamespace(cuda_stream=handle),
                      match="not a CUDA stream")
    stale = xp.new((m,), "float32")
    nv.reduce(W, stale, src, "sum")
    xp.sync()
    xp.free(stale)  # collective; its address leaves the lookup cache with it
    expect_raises(nv.reduce, W, stale, src, "sum", match="not symmetric")
    assert fast() == took, f"the fast path took {fast() - took} calls it should have refused"
    # Tensors of no elements (torch gives their data_ptr() as 0): usable in a call and freeable; an empty slice of a
    # live tensor too.
    empty = xp.new((0,), "float32")
    nv.reduce(W, empty, empty, "sum")
    nv.reduce(W, dst[m:], src[m:], "sum")
    xp.sync()
    xp.free(empty)
    # Teams' names are class attributes (a plain read), and remove() takes them away again.
    assert nv.Teams.__dict__["TEAM_WORLD"] is nv.Teams.TEAM_WORLD
    nv.Teams.add("FAST_PATH_ALIAS", int(W))
    assert int(nv.Teams.FAST_PATH_ALIAS) == int(W) and nv.Teams["FAST_PATH_ALIAS"] is nv.Teams.FAST_PATH_ALIAS
    nv.Teams.remove("FAST_PATH_ALIAS")
    assert "FAST_PATH_ALIAS" not in nv.Teams.__dict__ and not hasattr(nv.Teams, "FAST_PATH_ALIAS")
    nv.Teams.add("keys", int(W))  # a team named like a method of Teams: an item only, keys() still works
    assert nv.Teams["keys"] == W and "keys" in list(nv.Teams.keys())
    nv.Teams.remove("keys")
    xp.sync()
    for t in (other, got, back, a, b, flags, bytes_, sig, ring, dst, src):
        xp.free(t)


def main():
    init()
    me, n = nv.my_pe(), nv.n_pes()
    from gshmem.core.types import state
    gpu = not state.cpu_pes
    xp = Torch(gpu) if LIB == "torch" else Cupy() if LIB == "cupy" else Numpy()
    assert xp.gpu == gpu, f"GSHMEM_TEST_LIB={LIB} on {'GPU' if gpu else 'CPU'} PEs"
    assert 0 <= me < n
    assert (nv.team_my_pe(W), nv.team_n_pes(W)) == (me, n)
    for t in (nv.Teams.TEAM_SHARED, nv.Teams.TEAM_NODE):  # one node: the same PEs as the world
        assert (nv.team_my_pe(t), nv.team_n_pes(t)) == (me, n)
    assert nv.team_n_pes(nv.Teams.TEAM_SAME_MYPE_NODE) == 1
    if not gpu:  # CPU PEs: each a device of its own
        assert (nv.team_my_pe(nv.Teams.TEAM_SAME_GPU), nv.team_n_pes(nv.Teams.TEAM_SAME_GPU)) == (0, 1)
        assert (nv.team_my_pe(nv.Teams.TEAM_GPU_LEADERS), nv.team_n_pes(nv.Teams.TEAM_GPU_LEADERS)) == (me, n)
    nv.sync_all()
    nv.barrier_all()
    nv.barrier(W)
    nv.sync(nv.Teams.TEAM_SHARED)
    xp.sync()

    check_basics(xp, me, n)
    check_collectives(xp, me, n)
    if n > 1:
        check_teams(xp, me, n)
    check_signals(xp, me, n)
    if LIB in ("torch", "numpy"):
        check_fast_path(xp, me, n)
    if gpu:
        check_streams(xp, me, n)
        check_gpu_views(xp, me, n)
        if LIB == "torch":
            check_graph(xp, me, n)
    else:
        check_register_external(xp, me, n)
    left = check_bad_input(xp, me, n)
    nv.finalize()
    expect_raises(xp.new, (4,), "int32", match="not initialized")
    expect_raises(nv.reduce, W, left, left, "sum", match="not initialized")
    print(f"PASS pe {me}/{n} ({LIB} on {'GPU' if gpu else 'CPU'} PEs)", flush=True)


if __name__ == "__main__":
    main()
