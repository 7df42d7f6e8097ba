"""gshmem.moe: mixture-of-experts dispatch and combine with pplx-kernels' semantics (its AllToAll class).

    import gshmem.core as nvshmem, gshmem.moe
    nvshmem.init()
    ata = gshmem.moe.AllToAll(max_num_tokens, num_experts, experts_per_token, nvshmem.my_pe(), nvshmem.n_pes(),
                              dp_size, hidden_dim, hidden_dim_bytes, hidden_dim_scale_bytes)
    ata.dispatch(out_expert_num_tokens, out_expert_x, out_expert_x_scale, dp_x, dp_x_scale, indices, bound_m)
    ...  # the local experts turn out_expert_x's rows into expert_y's
    ata.combine(out_tokens, indices, weights, expert_y, bound_m)
    ata.destroy()

One C++ call each (gshmem::host::moe_*, the algorithm of gshmem/moe/dispatch_combine.h); this module checks the
arrays first, dense in C order (they need not be symmetric: the all-to-all has its own symmetric workspace):
- CPU PEs: NumPy arrays, torch CPU tensors or other DLPack arrays in CPU memory; blocking calls.
- GPU PEs: torch CUDA tensors, CuPy arrays or other DLPack arrays in GPU memory; each call is enqueued on the
  current stream (torch's, else CuPy's, else CUDA's default stream) or on `stream=` and returns at once (no host
  synchronisation; capturable in CUDA graphs). bound_m may be a one-element uint32 CUDA tensor, read by the kernel.
  The checks that need the data (an index >= num_experts, an expert twice in a token, bound_m above the rows
  given) run in the kernel, which prints the call, cause and fix and traps: the error shows at the next
  synchronisation. Passed on 2 x H200 (docs/moe.md, "Measured on 2 x H200").
Shapes, dtypes and the protocol are in docs/moe.md; the differences from pplx-kernels are listed there.
"""
import ctypes
import warnings

import numpy as np

from gshmem import _gshmem
from gshmem.core._interop import DLPACK_CPU, DLPACK_CUDA, describe, readers, stream_handle
from gshmem.core._interop import _torch as _torch_reader, _torch_names
from gshmem.core.types import (GshmemError, GshmemInvalid, GshmemNotSupported, NvshmemWarning, require_init,
                               require_no_stream, state)

__all__ = ["AllToAll", "GshmemError", "GshmemInvalid", "GshmemNotSupported"]

_COMBINE_TYPES = {"float32": 8, "float16": 10, "bfloat16": 11}  # gshmem::host::ReduceType's values
_INDEX_TYPES = ("uint32", "int32")  # pplx passes uint32; int32 has the same bits for expert ids
_COUNT_TYPES = {"uint32": ctypes.c_uint32, "int32": ctypes.c_int32, "int64": ctypes.c_int64}


def _read(call, what, x, gpu=None):
    """(address, shape, dtype name, item bytes) of array `x`, which must be dense in C order and in this PE's
    memory: GPU memory on GPU PEs, CPU memory on CPU PEs (gpu: True / False to ask for one, None for the PE's)."""
    if readers.get(type(x)) is _torch_reader and x.is_contiguous():  # the usual case, in one pass (~2 us a call)
        if x.is_cuda if ((not state.cpu_pes) if gpu is None else gpu) else x.is_cpu:
            return x.data_ptr(), tuple(x.shape), _torch_names[x.dtype], x.element_size()
    p, _, _, dtype, library = describe(x, call, what)
    shape = getattr(x, "shape", None)
    if library == "numpy":
        if not x.dtype.isnative:
            raise GshmemInvalid(f"{call}: {what} has non-native byte order ({x.dtype.str}). Fix: pass "
                                "x.astype(x.dtype.newbyteorder('='))")
        dense, on_gpu, item = x.flags.c_contiguous, False, x.itemsize
    elif library == "cupy":
        dense, on_gpu, item = x.flags.c_contiguous, True, x.itemsize
    elif library == "torch":
        dense, on_gpu, item = x.is_contiguous(), x.is_cuda, x.element_size()  # is_cuda: no torch.device object
        if not on_gpu and not x.is_cpu:
            raise GshmemInvalid(f"{call}: {what} is a torch tensor on device '{x.device}', neither CPU nor CUDA "
                                "memory. Fix: pass CPU tensors (CPU PEs) or CUDA tensors (GPU PEs)")
    elif library == "dlpack" and shape is not None:
        info = _gshmem.dlpack_info(x)
        dense, item = info[7], (info[4] + 7) // 8
        on_gpu = info[5] == DLPACK_CUDA
        if not on_gpu and info[5] != DLPACK_CPU:
            raise GshmemInvalid(f"{call}: {what} is in DLPack device type {info[5]} memory. Fix: pass CPU memory "
                                "(CPU PEs) or CUDA memory (GPU PEs)")
    else:
        raise GshmemInvalid(f"{call}: {what} is a {type(x).__name__}, not an array with a shape. Fix: pass a NumPy "
                            "array or torch CPU tensor on CPU PEs, a torch CUDA tensor or CuPy array on GPU PEs "
                            "(or another DLPack array)")
    want_gpu = (not state.cpu_pes) if gpu is None else gpu
    if on_gpu != want_gpu:
        if want_gpu:
            raise GshmemInvalid(f"{call}: {what} is in CPU memory, but this is a GPU PE: the MoE kernel reads and "
                                "writes GPU memory. Fix: pass CUDA tensors (x.cuda()) or CuPy arrays")
        raise GshmemInvalid(f"{call}: {what} is in GPU memory, but this is a CPU PE. Fix: pass CPU arrays or "
                            "tensors (or run with GPU PEs)")
    if not dense:
        raise GshmemInvalid(f"{call}: {what} is not contiguous in C order. Fix: pass .contiguous() (torch) or "
                            "np.ascontiguousarray() of it")
    # torch.Size, NumPy's and CuPy's shapes are tuples of ints already (a generator per array cost ~1 us a call)
    return p, (tuple(shape) if library != "dlpack" else tuple(int(d) for d in shape)), dtype, item


def _on_gpu(x):
    """Whether array x is in GPU memory (torch CUDA tensor, CuPy array, DLPack CUDA array)."""
    dev = getattr(x, "device", None)
    if getattr(dev, "type", None) == "cuda":
        return True
    if type(x).__module__.startswith("cupy"):
        return True
    dl = getattr(x, "__dlpack_device__", None)
    if dl is not None and not hasattr(x, "__array_interface__"):
        try:
            return int(dl()[0]) == DLPACK_CUDA
        except Exception:
            return False
    return False


def _index(call, name, v):
    try:
        v = int(v.__index__())
    except (AttributeError, TypeError):
        raise GshmemInvalid(f"{call}: {name}={v!r} is not an integer. Fix: pass an int") from None
    if v < 0:
        raise GshmemInvalid(f"{call}: {name}={v} is negative. Fix: pass a count of 0 or more")
    return v


def _shape_error(call, what, shape, want, fix):
    return GshmemInvalid(f"{call}: {what} has shape {list(shape)}, expected {want}. Fix: {fix}")


def _dtype_error(call, what, dtype, want, fix):
    return GshmemInvalid(f"{call}: {what} is {dtype}, expected {want}. Fix: {fix}")


def _no_split(call, do_send, do_recv):
    if not (do_send and do_recv):
        raise GshmemNotSupported(f"{call}: do_send={do_send}, do_recv={do_recv}: gshmem does not split a call into "
                                 "its send and receive halves yet (docs/moe.md, pending). Fix: pass do_send=True "
                                 "and do_recv=True (the defaults): each call sends and receives")


class AllToAll:
    """pplx-kernels' AllToAll over gshmem: created collectively (every PE, the same arguments), then dispatch and
    combine alternately, each called on every PE; destroy() (collective) at the end.

    max_num_tokens: tokens per data-parallel group and call, at most (T); num_experts over all PEs (E; PE p holds
    experts [p * L, p * L + L), L = ceil(E / world_size)); experts_per_token: top-k (K, 1..min(E, 64)); rank and
    world_size: this PE and the number of PEs (gshmem's my_pe() and n_pes(): anything else raises); dp_size: PEs
    per data-parallel group (they hold the same tokens; divides world_size; G = world_size / dp_size groups);
    hidden_dim: elements of an expert output row (combine); hidden_dim_bytes: bytes of a token row (dispatch) and
    hidden_dim_scale_bytes: of its scale row (0: no scales), multiples of 16.
    """

    def __init__(self, max_num_tokens, num_experts, experts_per_token, rank, world_size, dp_size, hidden_dim,
                 hidden_dim_bytes, hidden_dim_scale_bytes):
        call = "gshmem.moe.AllToAll"
        self._ptr = None
        require_init(call)
        args = dict(max_num_tokens=max_num_tokens, num_experts=num_experts, experts_per_token=experts_per_token,
                    rank=rank, world_size=world_size, dp_size=dp_size, hidden_dim=hidden_dim,
                    hidden_dim_bytes=hidden_dim_bytes, hidden_dim_scale_bytes=hidden_dim_scale_bytes)
        v = {name: _index(call, name, value) for name, value in args.items()}
        me, n = _gshmem.my_pe(), _gshmem.n_pes()
        if v["rank"] != me or v["world_size"] != n:
            raise GshmemInvalid(f"{call}: rank={v['rank']}, world_size={v['world_size']} but this is PE {me} of "
                                f"{n}. Fix: pass gshmem.core.my_pe() and n_pes() (the all-to-all spans every PE)")
        if v["dp_size"] == 0 or n % v["dp_size"] != 0:
            raise GshmemInvalid(f"{call}: dp_size={v['dp_size']} must divide world_size={n}. Fix: pass the size of a "
                                "data-parallel group (PEs that hold the same tokens), 1 for none")
        self.max_num_tokens = v["max_num_tokens"]
        self.num_experts = v["num_experts"]
        self.experts_per_token = v["experts_per_token"]
        self.rank, self.world_size, self.dp_size = me, n, v["dp_size"]
        self.hidden_dim = v["hidden_dim"]
        self.hidden_dim_bytes = v["hidden_dim_bytes"]
        self.hidden_dim_scale_bytes = v["hidden_dim_scale_bytes"]
        self.num_local_experts = -(-self.num_experts // n)  # L, the first dimension of the expert arrays
        self.num_dp = n // self.dp_size                     # G
        self.expert_rows = self.max_num_tokens * self.num_dp  # the second one: G * T
        self._has_scales = self.hidden_dim_scale_bytes > 0
        self._generation = state.generation
        self._ptr = _gshmem.moe_create(self.max_num_tokens, self.num_experts, self.experts_per_token, self.hidden_dim,
                                       self.hidden_dim_bytes, self.hidden_dim_scale_bytes, self.dp_size, call)

    @classmethod
    def internode(cls, max_num_tokens, num_experts, experts_per_token, rank, world_size, dp_size, hidden_dim,
                  hidden_dim_bytes, hidden_dim_scale_bytes):
        """pplx-kernels' AllToAll.internode: the same all-to-all (gshmem picks the path to each PE itself)."""
        return cls(max_num_tokens, num_experts, experts_per_token, rank, world_size, dp_size, hidden_dim,
                   hidden_dim_bytes, hidden_dim_scale_bytes)

    @classmethod
    def intranode(cls, max_num_tokens, num_experts, experts_per_token, rank, world_size, dp_size, hidden_dim,
                  hidden_dim_bytes, hidden_dim_scale_bytes, group_name="default"):
        """pplx-kernels' AllToAll.intranode: the same all-to-all; group_name (a torch process group) is not used:
        the PEs are gshmem's."""
        del group_name
        return cls(max_num_tokens, num_experts, experts_per_token, rank, world_size, dp_size, hidden_dim,
                   hidden_dim_bytes, hidden_dim_scale_bytes)

    def __repr__(self):
        return (f"<gshmem.moe.AllToAll max_num_tokens={self.max_num_tokens} num_experts={self.num_experts} "
                f"experts_per_token={self.experts_per_token} pe={self.rank}/{self.world_size} dp_size={self.dp_size} "
                f"hidden_dim={self.hidden_dim} hidden_dim_bytes={self.hidden_dim_bytes} "
                f"hidden_dim_scale_bytes={self.hidden_dim_scale_bytes}{'' if self._ptr else ' destroyed'}>")

    def __del__(self):
        # destroy() is collective, so it is not called here (a PE collecting its object alone would wait for the
        # others); finalize() releases the workspace with the rest of the heap.
        if getattr(self, "_ptr", None) is not None and state.initialized:
            try:
                warnings.warn(NvshmemWarning("gshmem.moe.AllToAll: collected without destroy(); its symmetric "
                                             "workspace stays allocated until finalize(). Fix: call destroy() on "
                                             "every PE"), stacklevel=2)
            except Exception:  # interpreter shutdown
                pass

    def destroy(self):
        """Frees the all-to-all (collective: every PE calls it). A second call does nothing; after finalize() it
        only forgets the handle (finalize released the heap)."""
        if self._ptr is None:
            return
        p, self._ptr = self._ptr, None
        if state.initialized and self._generation != state.generation:
            return  # made before a finalize() and init() since: that runtime released it
        if not state.initialized:
            warnings.warn(NvshmemWarning("gshmem.moe.AllToAll.destroy: gshmem is not initialized (finalize() "
                                         "released the workspace); nothing freed"), stacklevel=2)
            return
        _gshmem.moe_destroy(p, "gshmem.moe.AllToAll.destroy")

    # ---- argument checks shared by dispatch and combine ----
    def _live(self, call):
        require_init(call)
        if self._ptr is None:
            raise GshmemInvalid(f"{call}: the all-to-all was destroyed. Fix: create another one (collective)")
        if self._generation != state.generation:
            raise GshmemInvalid(f"{call}: the all-to-all was made before finalize(); the runtime that held its "
                                "workspace is gone. Fix: create another one after init() (collective)")

    def _indices(self, call, indices):
        p, shape, dtype, _ = _read(call, "indices", indices)
        K = self.experts_per_token
        if dtype not in _INDEX_TYPES:
            raise _dtype_error(call, "indices", dtype, "uint32 (or int32)", "pass expert ids as uint32, e.g. "
                               "indices.to(torch.uint32) or indices.astype(np.uint32)")
        if len(shape) != 2 or shape[1] != K:
            raise _shape_error(call, "indices", shape, f"[m, experts_per_token={K}]",
                               "pass one row of expert ids per token")
        return p, shape[0]

    def _bound(self, call, bound_m, rows):
        """(m, device address): the live token count, from bound_m (a one-element uint32 array, as pplx's; or an
        int) or indices' rows. A bound_m in GPU memory (GPU PEs) is read by the kernel, not here: then m is the rows
        (what the arrays must hold) and the address is passed on; otherwise the address is 0."""
        if bound_m is None:
            m = rows
        elif isinstance(bound_m, (bool, np.bool_)):
            raise GshmemInvalid(f"{call}: bound_m is a bool ({bound_m}). Fix: pass the number of tokens (an int or a "
                                "one-element uint32 array), or None for all of indices' rows")
        elif isinstance(bound_m, (int, np.integer)):
            m = _index(call, "bound_m", bound_m)
        else:
            on_gpu = _on_gpu(bound_m)
            p, shape, dtype, _ = _read(call, "bound_m", bound_m, gpu=on_gpu)
            n = 1
            for d in shape:
                n *= d
            if n != 1 or dtype not in _COUNT_TYPES or (on_gpu and dtype not in ("uint32", "int32")):
                raise GshmemInvalid(f"{call}: bound_m is {dtype} of shape {list(shape)}. Fix: pass a one-element "
                                    "uint32 array or tensor holding the number of tokens (or None: all of indices' "
                                    "rows)")
            if on_gpu:
                if state.cpu_pes:
                    raise GshmemInvalid(f"{call}: bound_m is in GPU memory, but this is a CPU PE. Fix: pass a CPU "
                                        "tensor or an int")
                return rows, p  # the kernel checks 0 <= bound_m <= rows (uint32: a negative int32 is above rows)
            m = _COUNT_TYPES[dtype].from_address(p).value
            if m < 0:
                raise GshmemInvalid(f"{call}: bound_m holds {m}, a negative token count. Fix: pass the number of "
                                    "tokens (0..max_num_tokens)")
        if m > rows:
            raise GshmemInvalid(f"{call}: bound_m={m} but indices has {rows} rows. Fix: pass at least bound_m rows "
                                "of indices (and of the tokens)")
        return m, 0

    def _rows(self, call, what, x, m, row_bytes, width):
        """Address, shape and dtype of a [>= m, width-elements-of-row_bytes] token array."""
        p, shape, dtype, item = _read(call, what, x)
        if len(shape) != 2 or shape[0] < m or shape[1] * item != row_bytes:
            raise _shape_error(call, what, shape, f"[at least bound_m={m}, {width}] ({row_bytes} bytes a row)",
                               f"pass one row per token, {row_bytes} bytes each")
        return p, shape, dtype

    def _experts(self, call, what, x, width, row_bytes=None, elems=None):
        """Address and dtype of a [L, G * T, width] expert array: rows of row_bytes, or of elems elements."""
        p, shape, dtype, item = _read(call, what, x)
        want = (self.num_local_experts, self.expert_rows)
        if len(shape) != 3 or shape[:2] != want or (shape[2] * item != row_bytes if elems is None
                                                    else shape[2] != elems):
            row = f" ({row_bytes} bytes a row)" if elems is None else ""
            raise _shape_error(call, what, shape, f"[num_local_experts={want[0]}, max_num_tokens * num_dp="
                               f"{want[1]}, {width}]{row}",
                               "allocate it with that shape (num_local_experts = ceil(num_experts / world_size))")
        return p, dtype

    def _begin(self, call, indices, bound_m, do_send, do_recv, stream):
        """What dispatch and combine check first: a live all-to-all, no send/receive split, the stream, indices and
        bound_m. Returns (indices' address, m, bound_m's device address or 0, stream handle or None)."""
        self._live(call)
        _no_split(call, do_send, do_recv)
        if state.cpu_pes:
            require_no_stream(stream, call)
            h = None
        else:
            h = stream_handle(stream, call)
        pi, rows = self._indices(call, indices)
        m, pb = self._bound(call, bound_m, rows)
        return pi, m, pb, h

    def dispatch(self, out_expert_num_tokens, out_expert_x, out_expert_x_scale, dp_x, dp_x_scale, indices, bound_m,
                 do_send=True, do_recv=True, stream=None):
        """Sends this PE's tokens to their experts' PEs and receives its local experts' tokens (collective).

        in:  dp_x [m, hidden] (rows of hidden_dim_bytes, any dtype: moved as bytes), dp_x_scale [m, scale columns]
             float32 (rows of hidden_dim_scale_bytes) or None without scales, indices [m, K] uint32 (experts,
             distinct within a row), bound_m: a one-element uint32 array / tensor (or an int) with the live token
             count m <= max_num_tokens, or None for all of indices' rows.
        out: out_expert_num_tokens [L] int32, out_expert_x [L, G * T, hidden] (dp_x's dtype): local expert l's
             rows 0 .. count - 1 are group 0's tokens in token order, then group 1's, ...; later rows are not
             written. out_expert_x_scale [L, G * T, scale columns] likewise, or None.
        GPU PEs: enqueued on `stream` (None: the current stream; a torch / CuPy stream, __cuda_stream__ or an int);
        bound_m may be a one-element uint32 CUDA tensor (read by the kernel; the arrays then need indices' rows).
        """
        call = "gshmem.moe.AllToAll.dispatch"
        pi, m, pb, h = self._begin(call, indices, bound_m, do_send, do_recv, stream)
        hb, sb = self.hidden_dim_bytes, self.hidden_dim_scale_bytes
        px, _, xt = self._rows(call, "dp_x", dp_x, m, hb, "hidden")
        pc, shape, ct, _ = _read(call, "out_expert_num_tokens", out_expert_num_tokens)
        if ct != "int32":
            raise _dtype_error(call, "out_expert_num_tokens", ct, "int32", "allocate it as int32")
        if shape != (self.num_local_experts,):
            raise _shape_error(call, "out_expert_num_tokens", shape, f"[num_local_experts={self.num_local_experts}]",
                               "one count per local expert")
        po, ot = self._experts(call, "out_expert_x", out_expert_x, "hidden", row_bytes=hb)
        if ot != xt:
            raise _dtype_error(call, "out_expert_x", ot, f"dp_x's dtype ({xt})", "allocate it like dp_x (or pass "
                               "views of one dtype)")
        if self._has_scales != (dp_x_scale is not None) or self._has_scales != (out_expert_x_scale is not None):
            raise GshmemInvalid(f"{call}: hidden_dim_scale_bytes={sb} but dp_x_scale is "
                                f"{'None' if dp_x_scale is None else 'given'} and out_expert_x_scale is "
                                f"{'None' if out_expert_x_scale is None else 'given'}. Fix: pass both scale arrays "
                                "exactly when the all-to-all was created with hidden_dim_scale_bytes > 0")
        ps = pos = 0
        if self._has_scales:
            ps, _, st = self._rows(call, "dp_x_scale", dp_x_scale, m, sb, "scale columns")
            pos, ost = self._experts(call, "out_expert_x_scale", out_expert_x_scale, "scale columns", row_bytes=sb)
            for what, t in (("dp_x_scale", st), ("out_expert_x_scale", ost)):
                if t != "float32":
                    raise _dtype_error(call, what, t, "float32", "pass float32 scales, as pplx-kernels does")
        if h is None:
            _gshmem.moe_dispatch(self._ptr, pc, po, pos, px, ps, pi, m, call)
        else:
            _gshmem.moe_dispatch_on_stream(self._ptr, pc, po, pos, px, ps, pi, m, pb, h, call)

    def combine(self, out_tokens, indices, weights, expert_y, bound_m, do_send=True, do_recv=True, stream=None):
        """Returns the experts' outputs to the tokens' PEs and sums them (collective; after dispatch, with its
        indices and bound_m).

        in:  expert_y [L, G * T, hidden_dim] float32, float16 or bfloat16 (the output of each row of the last
             dispatch's out_expert_x, same places), indices [m, K] (the dispatch's), weights [m, K] float32.
        out: out_tokens [>= m, hidden_dim] float32, float16 or bfloat16: out_tokens[i] = the sum over k of
             weights[i][k] * expert_y row of (token i, expert indices[i][k]), in float, k = 0, 1, ... with fused
             multiply-adds, rounded once to out_tokens' dtype; rows >= m are not written. Every member of a
             data-parallel group gets the same result, bit for bit.
        GPU PEs: on `stream`, after the dispatch in stream order, with the same bound_m.
        """
        call = "gshmem.moe.AllToAll.combine"
        pi, m, pb, h = self._begin(call, indices, bound_m, do_send, do_recv, stream)
        K, H = self.experts_per_token, self.hidden_dim
        pout, shape, ot, _ = _read(call, "out_tokens", out_tokens)
        if ot not in _COMBINE_TYPES:
            raise _dtype_error(call, "out_tokens", ot, "float32, float16 or bfloat16", "allocate it in one of them")
        if len(shape) != 2 or shape[0] < m or shape[1] != H:
            raise _shape_error(call, "out_tokens", shape, f"[at least bound_m={m}, hidden_dim={H}]",
                               "one output row per token")
        pw, shape, wt, _ = _read(call, "weights", weights)
        if wt != "float32":
            raise _dtype_error(call, "weights", wt, "float32", "pass float32 router weights")
        if len(shape) != 2 or shape[0] < m or shape[1] != K:
            raise _shape_error(call, "weights", shape, f"[at least bound_m={m}, experts_per_token={K}]",
                               "one weight per (token, expert) as in indices")
        py, yt = self._experts(call, "expert_y", expert_y, f"hidden_dim={H}", elems=H)
        if yt not in _COMBINE_TYPES:
            raise _dtype_error(call, "expert_y", yt, "float32, float16 or bfloat16", "pass the experts' outputs in "
                               "one of them")
        if h is None:
            _gshmem.moe_combine(self._ptr, pout, _COMBINE_TYPES[ot], pi, pw, py, _COMBINE_TYPES[yt], m, call)
        else:
            _gshmem.moe_combine_on_stream(self._ptr, pout, _COMBINE_TYPES[ot], pi, pw, py, _COMBINE_TYPES[yt], m, pb,
                                          h, call)
