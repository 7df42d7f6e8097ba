"""One PE of test_core.py: checks every gshmem.core function on NumPy arrays, with fresh random data.

Run by the test under gshmemrun (GSHMEM_TEST_SEED set by it): every PE derives every PE's data from the seed, so
each can compute the exact expected result. Argument "uid": UID-based init (rank 0 writes the id to a file).
"""
import os
import sys
import time

import numpy as np

import gshmem.core as nv

SEED = int(os.environ["GSHMEM_TEST_SEED"])
W = nv.Teams.TEAM_WORLD


def data(pe, shape, dtype, lo=0, hi=8):
    """PE `pe`'s input: small integers, so sums and products are exact in every dtype (float16 included)."""
    return np.random.default_rng([SEED, pe, np.dtype(dtype).num]).integers(lo, hi, size=shape).astype(dtype)


def expect_raises(fn, *args, match="", **kw):
    try:
        fn(*args, **kw)
    except nv.NvshmemError as e:  # NvshmemInvalid is one too
        assert match in str(e), f"{fn.__name__}: message {str(e)!r} does not name {match!r}"
        return
    raise AssertionError(f"{fn.__name__}{args} did not raise")


def init():
    if sys.argv[1:] == ["uid"]:
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
    else:
        nv.init()


def check_teams(me, n):
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
    src = nv.array((5,), dtype="int64")
    dst = nv.array((5,), dtype="int64")
    src[:] = data(me, 5, "int64")
    nv.reduce(mine, dst, src, "sum")
    want = sum(data(p, 5, "int64") for p in range(me % 2, n, 2))
    assert np.array_equal(dst, want), (dst, want)
    nv.barrier_all()
    nv.free_array(dst)
    nv.free_array(src)
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


def check_signals(me, n):
    """put_nbi / get_nbi + quiet, put_signal (SET) along a ring with signal_wait, signal_op (ADD) into PE 0's
    counter, and bad input."""
    nxt, prv = (me + 1) % n, (me - 1) % n
    buf = nv.array((16,), dtype="int32")
    got = nv.array((16,), dtype="int32")
    sig = nv.array((2,), dtype="uint64")
    sig[:] = 0
    nv.barrier_all()
    for it in range(1, 4):
        src = data(me * 10 + it, 16, "int32")
        nv.put_signal(buf, src, sig, it, nv.SignalOp.SIGNAL_SET, nxt)
        assert nv.signal_wait(sig, it, nv.ComparisonType.CMP_EQ) == it
        assert np.array_equal(buf, data(prv * 10 + it, 16, "int32")), it
        nv.barrier_all()  # every PE has read buf before the next round overwrites it
    nv.signal_op(sig[1:], 1, nv.SignalOp.SIGNAL_ADD, 0)
    if me == 0:
        assert nv.signal_wait(sig[1:], n, nv.ComparisonType.CMP_GE) == n
    nv.barrier_all()
    mine = data(100 + me, 16, "int32")
    nv.put_nbi(buf, mine, nxt)
    nv.quiet()
    nv.barrier_all()
    assert np.array_equal(buf, data(100 + prv, 16, "int32"))
    local = np.zeros(16, np.int32)
    nv.get_nbi(local, buf, nxt)
    nv.quiet()
    assert np.array_equal(local, data(100 + me, 16, "int32"))  # nxt's buf holds what this PE put there
    nv.barrier_all()
    expect_raises(nv.signal_op, sig, 1, 7, 0, match="SignalOp")
    expect_raises(nv.signal_wait, sig, 0, 9, match="ComparisonType")
    expect_raises(nv.signal_op, buf, 1, nv.SignalOp.SIGNAL_SET, 0, match="64-bit")
    expect_raises(nv.put_signal, buf, mine, sig, 1, nv.SignalOp.SIGNAL_SET, n, match="out of range")
    for a in (sig, got, buf):
        nv.free_array(a)


def main():
    init()
    me, n = nv.my_pe(), nv.n_pes()
    nxt, prv = (me + 1) % n, (me - 1) % n
    assert 0 <= me < n
    assert (nv.team_my_pe(W), nv.team_n_pes(W)) == (me, n)
    for t in (nv.Teams.TEAM_SHARED, nv.Teams.TEAM_NODE):  # one node: the same PEs as the world
        assert (nv.team_my_pe(t), nv.team_n_pes(t)) == (me, n)
    assert nv.team_n_pes(nv.Teams.TEAM_SAME_MYPE_NODE) == 1
    nv.sync_all()
    nv.barrier_all()
    nv.barrier(W)
    nv.sync(nv.Teams.TEAM_SHARED)

    # ---- array, get_peer_array, put, get ----
    for dtype in ("int8", "uint16", "int32", "int64", "float32", "float64"):
        shape = (3, 5)
        a = nv.array(shape, dtype=dtype)
        assert a.shape == shape and a.dtype == np.dtype(dtype)
        a[:] = data(me, shape, dtype)
        dst = nv.array(shape, dtype=dtype)
        nv.barrier_all()
        peer = nv.get_peer_array(a, nxt)  # read the next PE's copy through the mapping
        assert np.array_equal(peer, data(nxt, shape, dtype)), dtype
        nv.put(dst, a, remote_pe=nxt)  # my data into the next PE's dst
        nv.barrier_all()
        assert np.array_equal(dst, data(prv, shape, dtype)), dtype
        local = np.zeros(shape, dtype)
        nv.get(local, a, remote_pe=prv)
        assert np.array_equal(local, data(prv, shape, dtype)), dtype
        nv.barrier_all()
        nv.get_peer_array(dst, nxt)[:] = a  # a store into the next PE's dst
        nv.barrier_all()
        assert np.array_equal(dst, data(prv, shape, dtype)), dtype
        nv.barrier_all()
        nv.free_array(dst)
        nv.free_array(a)

    raw = nv.bytearray((3,), dtype="float64")
    assert raw.dtype == np.uint8 and raw.shape == (24,)
    nv.free_array(raw)

    # ---- buffer / free / get_peer_buffer ----
    b = nv.buffer(64)
    assert b.size == 64 and b.handle
    pb = nv.get_peer_buffer(b, nxt)
    assert pb.size == 64 and pb.peer == nxt
    nv.barrier_all()
    nv.free(b)

    # ---- collectives, on the world and on TEAM_SHARED ----
    ints = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
    for team in (W, nv.Teams.TEAM_SHARED):
        for dtype in ints + ("float16", "float32", "float64"):
            m = 7
            src = nv.array((m,), dtype=dtype)
            dst = nv.array((m,), dtype=dtype)
            ops = ["sum", "min", "max", "prod"] + (["and", "or", "xor"] if dtype in ints else [])
            allv = np.stack([data(p, (m,), dtype, 1, 3 if n > 2 else 4) for p in range(n)])
            for op in ops:
                src[:] = allv[me]
                nv.reduce(team, dst, src, op)
                want = {"sum": np.add, "min": np.minimum, "max": np.maximum, "prod": np.multiply,
                        "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op].reduce(allv, axis=0)
                assert np.array_equal(dst, want.astype(dtype)), (dtype, op, dst, want)
            nv.reduce(team, src, src, "sum")  # in place
            assert np.array_equal(src, allv.sum(axis=0).astype(dtype)), dtype
            nv.free_array(dst)
            nv.free_array(src)

        for dtype in ("int32", "float64", "uint8"):
            m = 5
            big = np.stack([data(p, (n * m,), dtype, 0, 5) for p in range(n)])  # every PE's src of n*m
            src = nv.array((n * m,), dtype=dtype)
            src[:] = big[me]
            rs = nv.array((m,), dtype=dtype)
            nv.reducescatter(team, rs, src, "sum")
            assert np.array_equal(rs, big.sum(axis=0)[me * m:(me + 1) * m].astype(dtype)), dtype
            a2a = nv.array((n * m,), dtype=dtype)
            nv.alltoall(team, a2a, src)
            assert np.array_equal(a2a, np.concatenate([big[p][me * m:(me + 1) * m] for p in range(n)])), dtype
            small = nv.array((m,), dtype=dtype)
            small[:] = data(me, (m,), dtype)
            fc = nv.array((n * m,), dtype=dtype)
            nv.fcollect(team, fc, small)
            assert np.array_equal(fc, np.concatenate([data(p, (m,), dtype) for p in range(n)])), dtype
            for root in range(n):
                bc = nv.array((m,), dtype=dtype)
                nv.broadcast(team, bc, small, root=root)
                assert np.array_equal(bc, data(root, (m,), dtype)), (dtype, root)
                nv.free_array(bc)
            for x in (fc, small, a2a, rs, src):
                nv.free_array(x)

    # ---- bad input raises, naming the call; the job goes on ----
    x = nv.array((4,), dtype="int32")
    if n > 1:
        check_teams(me, n)
    check_signals(me, n)
    y = nv.array((4,), dtype="float32")
    mine = np.zeros(4, np.int32)
    expect_raises(nv.reduce, W, x, y, "sum", match="reduce")  # dtype mismatch
    expect_raises(nv.reduce, W, x, mine, "sum", match="symmetric heap")  # not symmetric
    expect_raises(nv.reduce, W, x, x, "avg", match="op=")
    expect_raises(nv.reduce, W, y, y, "xor", match="integer dtype")
    expect_raises(nv.broadcast, W, x, x, root=n, match="root")
    expect_raises(nv.fcollect, W, x, x, match="fcollect")  # dst too small for n > 1 PEs
    expect_raises(nv.reduce, 99, x, x, "sum", match="team")
    expect_raises(nv.put, x, mine, remote_pe=n, match="out of range")
    expect_raises(nv.put, x, mine, remote_pe=-1, match="out of range")
    expect_raises(nv.put, mine, x, remote_pe=0, match="symmetric heap")
    expect_raises(nv.put, x, y, remote_pe=0, match="dtype")
    expect_raises(nv.get, mine, mine, remote_pe=0, match="symmetric heap")
    expect_raises(nv.get_peer_array, x, n, match="out of range")
    expect_raises(nv.get_peer_array, mine, 0, match="symmetric heap")
    expect_raises(nv.reduce, W, x, x, "sum", stream=object(), match="stream")
    expect_raises(nv.free_array, mine, match="symmetric heap")
    # The library's own checks (past the Python ones) arrive as GshmemError with its message and status.
    from gshmem import _gshmem
    xp = x.__array_interface__["data"][0]
    try:
        _gshmem.putmem(xp, mine.__array_interface__["data"][0], 16, n, "put")
        raise AssertionError("putmem to pe=n did not raise")
    except nv.GshmemError as e:
        assert e.status == 1 and "put: pe=" in str(e) and "out of range" in str(e), str(e)
    try:
        _gshmem.putmem(mine.__array_interface__["data"][0], xp, 16, 0, "put")
        raise AssertionError("putmem to a non-symmetric dest did not raise")
    except nv.GshmemError as e:
        assert e.status == 1 and "not inside the symmetric heap" in str(e), str(e)
    expect_raises(nv.init, match="already initialized")
    nv.free_array(y)
    expect_raises(nv.free_array, y, match="symmetric heap")  # use after free
    expect_raises(nv.put, y, y, remote_pe=0, match="symmetric heap")
    nv.barrier_all()  # x is left for finalize to free
    nv.finalize()
    expect_raises(nv.array, (4,), match="not initialized")
    expect_raises(nv.reduce, W, x, x, "sum", match="not initialized")
    print(f"PASS pe {me}/{n}", flush=True)


if __name__ == "__main__":
    main()
