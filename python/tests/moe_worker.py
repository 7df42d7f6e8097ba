"""One PE of test_moe.py: gshmem.moe.AllToAll (pplx-kernels' dispatch / combine) against a plain reference.

Every PE derives every data-parallel group's tokens, scales, routing and weights from GSHMEM_TEST_SEED, so it knows
what its local experts must receive and what combine must give. Outputs are poisoned before each call. Dispatch is
compared exactly and in order (docs/moe.md: expert l's rows are group 0's tokens in token order, then group 1's,
...), rows past the count still poisoned; combine bit for bit (docs/moe.md: a float fused multiply-add chain in k
order, rounded once), rows past bound_m still poisoned. Several calls per all-to-all, no barrier between them.

Environment: GSHMEM_TEST_SEED, GSHMEM_TEST_LIB ("numpy": NumPy arrays; "torch": torch CPU tensors, bfloat16
included; "cuda": torch CUDA tensors on GPU PEs, copied back to the NumPy side after each call), GSHMEM_TEST_DP
(dp_size). Argument "bad": the bad-input cases instead (every PE makes the same bad call, so each raises and the job
goes on); "gpu_bad": the Python-side refusals on GPU PEs (CPU arrays, a wrong stream).

With "cuda" every call is enqueued on a stream: odd calls on the current stream, even ones on a torch.cuda.Stream
passed as stream=; bound_m "array" is a one-element uint32 CUDA tensor, read by the kernel.
"""
import os
import sys

import numpy as np

import gshmem.core as nv
import gshmem.moe as moe

SEED = int(os.environ["GSHMEM_TEST_SEED"])
LIB = os.environ.get("GSHMEM_TEST_LIB", "numpy")
DP = int(os.environ.get("GSHMEM_TEST_DP", "1"))
POISON8 = 0xA7


# ---- exact float32 arithmetic in NumPy ----
def fma32(a, b, c):
    """float32 fmaf(a, b, c) elementwise, exactly: a * b is exact in float64, the sum's rounding error comes from
    TwoSum, and the one case where rounding the float64 sum to float32 differs from rounding the exact value (the
    sum lies on a float32 midpoint) is decided by the error's sign."""
    p = a.astype(np.float64) * b.astype(np.float64)
    c64 = c.astype(np.float64)
    s = p + c64
    bb = s - p
    err = (p - (s - bb)) + (c64 - bb)
    r = s.astype(np.float32)
    r64 = r.astype(np.float64)
    inexact = r64 != s
    other = np.nextafter(r, np.where(s > r64, np.float32(np.inf), np.float32(-np.inf)).astype(np.float32))
    mid = (r64 + other.astype(np.float64)) / 2
    tie = inexact & (s == mid) & (err != 0)
    up = np.maximum(r, other)
    down = np.minimum(r, other)
    return np.where(tie, np.where(err > 0, up, down), r).astype(np.float32)


def bf16_bits(f32):
    """float32 -> bfloat16 bits, round to nearest even (finite values)."""
    u = f32.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_to_f32(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def to_type(f32, dtype):
    """float32 values rounded to dtype ("float32", "float16", "bfloat16"), as bits (uint16 / uint32)."""
    if dtype == "float32":
        return f32.astype(np.float32).view(np.uint32)
    if dtype == "float16":
        return f32.astype(np.float32).astype(np.float16).view(np.uint16)
    return bf16_bits(f32)


def from_bits(bits, dtype):
    if dtype == "float32":
        return bits.view(np.float32)
    if dtype == "float16":
        return bits.view(np.float16).astype(np.float32)
    return bf16_to_f32(bits)


BITS = {"float32": np.uint32, "float16": np.uint16, "bfloat16": np.uint16}


# ---- arrays of the library under test, over NumPy memory (so results are read through the NumPy side) ----
class Arrays:
    def __init__(self, lib):
        self.lib = lib
        self.pending = []  # "cuda": (CUDA tensor, NumPy array) pairs to copy back at done()
        self.stream = None
        if lib in ("torch", "cuda"):
            import torch
            self.torch = torch
        if lib == "cuda":
            self.stream = torch.cuda.Stream()

    def wrap(self, a, dtype=None):
        """The array handed to gshmem.moe for NumPy array `a` (its memory; dtype "bfloat16": a holds the bits).
        "cuda": a CUDA copy, written back into `a` by done()."""
        if self.lib == "numpy":
            assert dtype != "bfloat16"
            return a
        t = self.torch.from_numpy(a.view(np.int16) if dtype == "bfloat16" else a)
        if self.lib == "cuda":
            c = t.cuda()
            self.pending.append((c, t))
            t = c
        return t.view(self.torch.bfloat16) if dtype == "bfloat16" else t

    def call_stream(self, call):
        """The stream= of call number `call`: None (the current stream) or the worker's own torch stream, which
        first waits for the uploads on the current one."""
        if self.lib != "cuda" or call % 2 == 0:
            return None
        self.stream.wait_stream(self.torch.cuda.current_stream())
        return self.stream

    def done(self, stream):
        """After a call: "cuda" copies every CUDA array back into its NumPy memory (after the call's stream)."""
        if self.lib != "cuda":
            return
        if stream is not None:
            self.torch.cuda.current_stream().wait_stream(stream)
        for c, t in self.pending:
            t.copy_(c.cpu())
        self.pending = []

    def typed(self, bits, dtype):
        """The array of `dtype` over `bits` (uint32 / uint16 NumPy memory)."""
        return self.wrap(bits if dtype == "bfloat16" else bits.view(dtype), dtype)


# ---- scenarios ----
class Case:
    def __init__(self, name, T, E, K, hidden, routing="random", scale_cols=4, y="float32", out="float16", calls=3,
                 tokens="random", bound="array", index_dtype=np.uint32):
        self.__dict__.update(locals())
        del self.__dict__["self"]


def group_tokens(case, call, g, n, L):
    """Group g's tokens of this call: m (bound_m), rows, x [rows, hidden] float16, scale [rows, S] float32,
    idx [rows, K], w [rows, K] float32 (the same on every PE)."""
    key = [SEED, sum(map(ord, case.name)), call, g]
    rng = np.random.default_rng(key)
    T, E, K = case.T, case.E, case.K
    if case.tokens == "max":
        m = rows = T
    elif case.tokens == "one":
        m = rows = 1
    elif case.tokens == "bound":
        rows = T
        m = int(rng.integers(0, T))  # < rows
    elif case.tokens == "some_empty_groups":
        m = rows = 0 if (g + call) % 2 == 0 else int(rng.integers(1, T + 1))
    else:
        m = rows = int(rng.integers(1, T + 1))
    x = rng.standard_normal((rows, case.hidden)).astype(np.float16)
    scale = rng.standard_normal((rows, case.scale_cols)).astype(np.float32)
    if case.routing == "random":
        idx = np.argsort(rng.random((rows, E)), axis=1)[:, :K]
    elif case.routing == "hot":  # every token to one expert (chosen per call), the other K - 1 at random
        hot = int(rng.integers(0, E))
        others = np.array([e for e in range(E) if e != hot])
        rest = others[np.argsort(rng.random((rows, len(others))), axis=1)[:, :K - 1]]
        idx = np.concatenate([np.full((rows, 1), hot), rest], axis=1)
    else:  # "few": only three experts used (the others receive nothing)
        used = np.array(sorted({1 % E, (E // 2), E - 1}))
        idx = used[np.argsort(rng.random((rows, len(used))), axis=1)[:, :K]]
    w = rng.random((rows, K)).astype(np.float32)
    return m, rows, x, scale, idx.astype(np.uint32), w


def expert_fn(x16, e, y_dtype):
    """Expert e's output for token rows x16 (float16), as bits of y_dtype: x * (1 + e / 8) - e / 4 in float32."""
    f = x16.astype(np.float32) * np.float32(1 + e / 8) - np.float32(e / 4)
    return to_type(f, y_dtype)


def run_case(case, arr, me, n):
    D = DP
    G, L = n // D, -(-case.E // n)
    my_g = me // D
    S = case.scale_cols
    sb = 4 * S
    hb = 2 * case.hidden
    ata = moe.AllToAll(case.T, case.E, case.K, me, n, D, case.hidden, hb, sb)
    assert ata.num_local_experts == L and ata.expert_rows == G * case.T
    for call in range(case.calls):
        groups = [group_tokens(case, call, g, n, L) for g in range(G)]
        m, rows, x, scale, idx, w = groups[my_g]
        idx_in = idx.astype(case.index_dtype)
        # dispatch: poisoned outputs
        counts = np.full(L, -7, np.int32)
        out_x = np.full((L, G * case.T, 2 * case.hidden), POISON8, np.uint8).view(np.float16)
        out_s = np.full((L, G * case.T, 4 * S), POISON8, np.uint8).view(np.float32)
        if case.bound == "array":
            bound = arr.wrap(np.array([m], np.uint32))
        elif case.bound == "int":
            bound = m
        else:
            assert m == rows
            bound = None
        st = arr.call_stream(call)
        kw = {} if st is None else {"stream": st}
        ata.dispatch(arr.wrap(counts), arr.wrap(out_x), arr.wrap(out_s) if S else None, arr.wrap(x),
                     arr.wrap(scale) if S else None, arr.wrap(idx_in), bound, **kw)
        arr.done(st)
        # reference: local expert l (expert e = me * L + l) gets group 0's tokens routed to e in order, then 1's, ...
        for l in range(L):
            e = me * L + l
            want_x, want_s = [], []
            for gm, _, gx, gs, gidx, _ in groups:
                sel = np.nonzero((gidx[:gm] == e).any(axis=1))[0]
                want_x.append(gx[sel])
                want_s.append(gs[sel])
            want_x = np.concatenate(want_x)
            want_s = np.concatenate(want_s)
            c = len(want_x) if e < case.E else 0
            assert counts[l] == c, f"{case.name} call {call}: expert {e} received {counts[l]} tokens, expected {c}"
            assert np.array_equal(out_x[l, :c].view(np.uint16), want_x.view(np.uint16)), \
                f"{case.name} call {call}: expert {e}'s rows differ"
            assert (out_x[l, c:].view(np.uint8) == POISON8).all(), f"{case.name}: rows past expert {e}'s count written"
            if S:
                assert np.array_equal(out_s[l, :c].view(np.uint32), want_s.view(np.uint32)), \
                    f"{case.name} call {call}: expert {e}'s scale rows differ"
                assert (out_s[l, c:].view(np.uint8) == POISON8).all(), f"{case.name}: scale rows past the count"
        # the experts: y = expert_fn(x) for the delivered rows; the rest poisoned (not read)
        ybits = np.full((L, G * case.T, case.hidden), 0x7B, BITS[case.y])
        for l in range(L):
            ybits[l, :counts[l]] = expert_fn(out_x[l, :counts[l]], me * L + l, case.y)
        out_bits = np.full((case.T, case.hidden), 0x5A, BITS[case.out])
        if arr.lib == "cuda" and case.bound == "array":
            bound = arr.wrap(np.array([m], np.uint32))
        st = arr.call_stream(call)
        kw = {} if st is None else {"stream": st}
        ata.combine(arr.typed(out_bits, case.out), arr.wrap(idx_in), arr.wrap(w), arr.typed(ybits, case.y), bound,
                    **kw)
        arr.done(st)
        # reference: acc = fmaf(w[i][k], float(y_k), acc), k = 0..K-1, from 0, rounded once
        acc = np.zeros((m, case.hidden), np.float32)
        for k in range(case.K):
            yk = np.stack([from_bits(expert_fn(x[i], int(idx[i, k]), case.y), case.y) for i in range(m)]) if m else \
                np.zeros((0, case.hidden), np.float32)
            acc = fma32(np.repeat(w[:m, k:k + 1], case.hidden, axis=1), yk, acc)
        want = to_type(acc, case.out)
        if not np.array_equal(out_bits[:m], want):
            bad = np.argwhere(out_bits[:m] != want)[0]
            raise AssertionError(f"{case.name} call {call}: combined token {bad[0]} column {bad[1]}: got bits "
                                 f"{out_bits[tuple(bad)]:#x}, expected {want[tuple(bad)]:#x}")
        assert (out_bits[m:] == BITS[case.out](0x5A)).all(), f"{case.name}: combine wrote rows past bound_m"
    ata.destroy()


def cases(n):
    W = n
    out = [
        Case("random", T=12, E=3 * W, K=3, hidden=16),
        Case("random_int32_indices_f16_y", T=8, E=2 * W + 1, K=2, hidden=24, y="float16", out="float32",
             index_dtype=np.int32, bound="int"),
        Case("empty_experts", T=8, E=8 * W, K=2, hidden=8, routing="few", tokens="some_empty_groups", bound="none",
             scale_cols=0),
        Case("one_expert_top1", T=8, E=2 * W, K=1, hidden=8, routing="hot"),
        Case("one_expert_top3", T=8, E=2 * W, K=3, hidden=8, routing="hot", y="float16", out="float16"),
        Case("one_token", T=4, E=3 * W, K=2, hidden=8, tokens="one"),
        Case("max_tokens", T=32, E=2 * W + 1, K=4, hidden=16, tokens="max", y="float32", out="float32"),
        Case("bound_m_below_rows", T=16, E=3 * W, K=3, hidden=8, tokens="bound", bound="array"),
        Case("bound_m_int", T=16, E=3 * W, K=2, hidden=8, tokens="bound", bound="int", calls=2),
        Case("fewer_experts_than_pes", T=8, E=max(W - 1, 1), K=1, hidden=8, scale_cols=0),
    ]
    if LIB in ("torch", "cuda"):  # bfloat16 (NumPy has no such dtype)
        out += [Case("bf16_y_bf16_out", T=8, E=3 * W, K=3, hidden=16, y="bfloat16", out="bfloat16"),
                Case("f32_y_bf16_out", T=8, E=2 * W, K=2, hidden=8, y="float32", out="bfloat16"),
                Case("bf16_y_f16_out", T=8, E=2 * W, K=2, hidden=8, y="bfloat16", out="float16")]
    return out


# ---- bad input ----
def expect(exc, what, fn, *words, status=None):
    try:
        fn()
    except exc as e:
        msg = str(e)
        for word in words:
            assert word in msg, f"{what}: {word!r} not in the message: {msg}"
        assert "Fix" in msg, f"{what}: no fix in the message: {msg}"
        if status is not None:
            assert e.status == status, f"{what}: status {e.status}, expected {status}"
        return
    raise AssertionError(f"{what}: no {exc.__name__} raised")


def bad_cases(arr, me, n):
    T, E, K, H = 8, 2 * n, 2, 8
    D = DP
    G, L = n // D, -(-E // n)
    C = "gshmem.moe.AllToAll"
    Inv = nv.NvshmemInvalid
    expect(Inv, "rank mismatch", lambda: moe.AllToAll(T, E, K, (me + 1) % n, n, D, H, 2 * H, 0), "rank=", "PE")
    expect(Inv, "world_size mismatch", lambda: moe.AllToAll(T, E, K, me, n + 1, D, H, 2 * H, 0), "world_size=")
    expect(Inv, "negative", lambda: moe.AllToAll(-1, E, K, me, n, D, H, 2 * H, 0), "max_num_tokens=-1")
    expect(nv.NvshmemError, "row bytes", lambda: moe.AllToAll(T, E, K, me, n, D, H, 2 * H + 2, 0),
           "hidden_dim_bytes", "multiples of 16", status=1)
    # PEs with different configurations (same workspace size): MISMATCH on every PE
    expect(nv.NvshmemError, "config mismatch",
           lambda: moe.AllToAll(T, E, K, me, n, D, 4 if me == 0 else 3, 16, 0), "different configurations",
           status=4)
    ata = moe.AllToAll(T, E, K, me, n, D, H, 2 * H, 0)
    rng = np.random.default_rng([SEED, 99])
    m = 5
    x = rng.standard_normal((m, H)).astype(np.float16)
    idx = np.stack([rng.permutation(E)[:K] for _ in range(m)]).astype(np.uint32)  # the same on every PE
    w = rng.random((m, K)).astype(np.float32)
    counts = np.zeros(L, np.int32)
    out_x = np.zeros((L, G * T, H), np.float16)
    y = np.zeros((L, G * T, H), np.float32)
    out = np.zeros((T, H), np.float32)
    a = arr.wrap

    def disp(**kw):
        args = dict(out_expert_num_tokens=a(counts), out_expert_x=a(out_x), out_expert_x_scale=None, dp_x=a(x),
                    dp_x_scale=None, indices=a(idx), bound_m=None)
        args.update(kw)
        return lambda: ata.dispatch(**args)

    def comb(**kw):
        args = dict(out_tokens=a(out), indices=a(idx), weights=a(w), expert_y=a(y), bound_m=None)
        args.update(kw)
        return lambda: ata.combine(**args)

    D_ = f"{C}.dispatch"
    expect(Inv, "indices int64", disp(indices=a(idx.astype(np.int64))), D_, "indices is int64", "uint32")
    expect(Inv, "bound_m bool", disp(bound_m=True), D_, "bound_m is a bool")
    if arr.lib == "numpy":  # byte order is NumPy's alone
        expect(Inv, "indices big-endian", disp(indices=idx.astype(">u4")), D_, "non-native byte order")
    expect(Inv, "indices shape", disp(indices=a(idx[:, :1].copy())), D_, "indices has shape [5, 1]")
    expect(Inv, "counts dtype", disp(out_expert_num_tokens=a(counts.astype(np.int64))), "int32")
    expect(Inv, "counts shape", disp(out_expert_num_tokens=a(np.zeros(L + 1, np.int32))), "num_local_experts")
    expect(Inv, "out_x shape", disp(out_expert_x=a(np.zeros((L, T, H), np.float16))), "out_expert_x has shape")
    expect(Inv, "out_x dtype", disp(out_expert_x=a(np.zeros((L, G * T, H // 2), np.float32))), "dp_x's dtype")
    expect(Inv, "dp_x row bytes", disp(dp_x=a(np.zeros((m, H + 8), np.float16))), "dp_x has shape", "bytes a row")
    expect(Inv, "dp_x rows", disp(dp_x=a(x[:3].copy())), "at least bound_m=5")
    expect(Inv, "bound_m above rows", disp(bound_m=a(np.array([6], np.uint32))), "bound_m=6", "indices has 5 rows")
    expect(Inv, "bound_m dtype", disp(bound_m=a(np.array([2.0], np.float32))), "bound_m is float32")
    expect(Inv, "scales without scale bytes", disp(dp_x_scale=a(np.zeros((m, 4), np.float32))), "scale")
    if LIB == "numpy":  # F order: not C-contiguous
        expect(Inv, "dp_x not contiguous", disp(dp_x=np.asfortranarray(x)), "not contiguous")
    else:
        expect(Inv, "dp_x not contiguous", disp(dp_x=a(x).t().contiguous().t()), "not contiguous")
    if arr.lib == "torch":  # neither CPU nor CUDA memory: refused, not read through data_ptr()
        import torch
        expect(Inv, "dp_x on meta", disp(dp_x=torch.empty((m, H), dtype=torch.float16, device="meta")), D_,
               "device 'meta'")
    expect(nv.NvshmemError, "combine first", comb(), "combine without a dispatch", status=1)
    bad_idx = idx.copy()
    bad_idx[2, 1] = E  # every PE: the library refuses it before sending anything
    expect(nv.NvshmemError, "index >= num_experts", disp(indices=a(bad_idx)), "indices[2][1]", "not an expert",
           status=1)
    twice = idx.copy()
    twice[1, 1] = twice[1, 0]
    expect(nv.NvshmemError, "expert twice", disp(indices=a(twice)), "twice", status=1)
    expect(moe.GshmemNotSupported, "do_send=False", disp(do_send=False), "do_send=False", status=3)
    expect(NotImplementedError, "do_recv=False", disp(do_recv=False), "do_recv=False")
    # a good call still works after the refused ones
    disp()()
    C_ = f"{C}.combine"
    expect(Inv, "out_tokens float64", comb(out_tokens=a(np.zeros((T, H), np.float64))), C_, "float64")
    expect(Inv, "weights float16", comb(weights=a(w.astype(np.float16))), "weights is float16")
    expect(Inv, "weights shape", comb(weights=a(w[:, :1].copy())), "weights has shape")
    expect(Inv, "expert_y int32", comb(expert_y=a(np.zeros((L, G * T, H), np.int32))), "expert_y is int32")
    expect(Inv, "expert_y shape", comb(expert_y=a(np.zeros((L, G * T, H + 1), np.float32))), "expert_y has shape")
    expect(Inv, "out_tokens shape", comb(out_tokens=a(np.zeros((T, H - 1), np.float32))), "out_tokens has shape")
    expect(nv.NvshmemError, "combine bound_m", comb(bound_m=4), "bound_m", "dispatch before had 5", status=1)
    expect(moe.GshmemNotSupported, "combine do_recv=False", comb(do_recv=False), C_)
    comb()()
    ata.destroy()
    small = moe.AllToAll(2, E, K, me, n, D, H, 2 * H, 0)
    expect(nv.NvshmemError, "bound_m > max_num_tokens", lambda: small.dispatch(
        a(counts), a(np.zeros((L, G * 2, H), np.float16)), None, a(x), None, a(idx), None), "max_num_tokens=2",
        status=1)
    small.destroy()
    ata.destroy()  # a second destroy does nothing
    expect(Inv, "destroyed", disp(), "destroyed")


def gpu_bad_cases(me, n):
    """GPU PEs: what the Python layer refuses before any kernel (the data checks trap in the kernel: mp_moe_gpu's
    bad cases cover them)."""
    import torch
    T, E, K, H = 8, 2 * n, 2, 8
    G, L = n // DP, -(-E // n)
    ata = moe.AllToAll(T, E, K, me, n, DP, H, 2 * H, 0)
    m = 3
    dev = dict(out_expert_num_tokens=torch.zeros(L, dtype=torch.int32, device="cuda"),
               out_expert_x=torch.zeros((L, G * T, H), dtype=torch.float16, device="cuda"), out_expert_x_scale=None,
               dp_x=torch.zeros((m, H), dtype=torch.float16, device="cuda"), dp_x_scale=None,
               indices=torch.zeros((m, K), dtype=torch.int32, device="cuda"), bound_m=None)
    D_ = "gshmem.moe.AllToAll.dispatch"
    expect(nv.NvshmemInvalid, "CPU dp_x on a GPU PE", lambda: ata.dispatch(**dict(dev, dp_x=dev["dp_x"].cpu())), D_,
           "dp_x is in CPU memory, but this is a GPU PE")
    expect(nv.NvshmemInvalid, "bad stream", lambda: ata.dispatch(**dev, stream="s0"), D_, "not a CUDA stream")
    expect(nv.NvshmemInvalid, "bound_m float CUDA", lambda: ata.dispatch(
        **dict(dev, bound_m=torch.ones(1, dtype=torch.float32, device="cuda"))), "bound_m is float32")
    ata.destroy()


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "cases"
    if LIB == "cuda":
        import torch  # noqa: F401  imported before init, which then makes this PE's GPU torch's current device
    nv.init()
    me, n = nv.my_pe(), nv.n_pes()
    arr = Arrays(LIB)
    if mode == "gpu_bad":
        gpu_bad_cases(me, n)
    elif mode == "bad":
        bad_cases(arr, me, n)
    else:
        for case in cases(n):
            run_case(case, arr, me, n)
    nv.finalize()
    print(f"PASS pe {me}/{n} ({mode}, {LIB}, dp_size {DP})", flush=True)


if __name__ == "__main__":
    main()
