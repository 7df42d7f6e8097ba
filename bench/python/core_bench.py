#!/usr/bin/env python3
"""gshmem.core beside NVIDIA nvshmem4py and torch.distributed (NCCL), from Python (issue 17).

The rows are written once against nvshmem4py's `nvshmem.core` API; --lib picks what runs them:
  gshmem   import gshmem.core as nvshmem
  nvshmem  import nvshmem.core as nvshmem     (nvshmem4py 0.4.1 over NVIDIA NVSHMEM 3.4.5)
  torch    torch.distributed with NCCL: all_reduce, all_to_all_single, broadcast; the put row is a send/recv ring
           (batch_isend_irecv), NCCL having no one-sided put; no tensor / barrier rows

  torchrun --nproc-per-node=2 bench/python/core_bench.py --lib gshmem --json gshmem.json
  python3 bench/python/merge.py gshmem.json nvshmem.json torch.json

Rows (float32 data; sizes are the bytes one PE holds, NCCL's tests' convention; figures are rank 0's):
  import_init[/env][/cold]  ms: `import <lib>.core` + init (uid made on rank 0 and sent with torch's
                            broadcast_object_list, as nvshmem4py is started under torchrun) + a first buffer(8) and
                            free; /env: gshmem's init() from torchrun's environment; /cold: no CUDA context before
                            (else torch made it first). torch: init_process_group(nccl, device_id) + a first
                            all_reduce, synchronized
  tensor, free_tensor       µs: one tensor() of --tensor-size (default 1 MiB) / its free_tensor, median
  allreduce/sum/float32, alltoall, broadcast (root 0), put (to PE me+1), barrier_all
                            µs per call: CUDA events around `calls` calls issued back to back on one stream, median
                            over --samples samples (after --warmup untimed ones; every sample starts with all PEs
                            synchronised); host µs per call: the time the loop took to issue them (no sync) / calls;
                            gshmem's rows add python_us_per_call: the same calls with the library entries replaced
                            by no-ops and the extension's fast path dry (gshmem.core's layers alone)
Each op's result is checked on every rank, against fresh random data (small integers, so float sums are exact),
after its first call and again after the timed samples: a broken op ends the run instead of posting a figure.
With one PE (a team of one) the collectives move nothing between GPUs: only the host µs per call (and import_init,
tensor) say something. Never uses NVLink multicast (set NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0).
"""
import time

T_SCRIPT = time.perf_counter()  # the first thing the script does: "from script start" counts from here

import argparse  # noqa: E402
import datetime  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402

LIBS = ("gshmem", "nvshmem", "torch")
MODULES = {"gshmem": "gshmem.core", "nvshmem": "nvshmem.core"}
OPS = ("allreduce", "alltoall", "broadcast", "put")
ROWS = ("tensor",) + OPS + ("barrier",)
OP_NAMES = {"allreduce": "allreduce/sum/float32", "alltoall": "alltoall", "broadcast": "broadcast", "put": "put"}
DEFAULT_SIZES = "1K,64K,1M,16M,256M"
GARBAGE = 1.0e6  # what a destination holds before a checked call: no result can have it


# ---- arguments ----
def parse_size(text):
    """Bytes from "4096", "1K", "64KiB", "16M", "1G"."""
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(t[-1:], 1)
    digits = t[:-1] if scale > 1 else t
    if not digits.isdigit() or int(digits) <= 0:
        raise argparse.ArgumentTypeError(f"size {text!r}: want a positive number with an optional K, M or G")
    return int(digits) * scale


def size_list(text):
    return [parse_size(s) for s in text.split(",") if s.strip()]


def row_list(text):
    rows = [r.strip() for r in text.split(",") if r.strip()]
    bad = [r for r in rows if r not in ROWS + ("init",)]
    if bad:
        raise argparse.ArgumentTypeError(f"unknown rows {bad}; rows: init (only init), {', '.join(ROWS)}")
    return [r for r in rows if r != "init"]


def fmt_size(n):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", required=True, choices=LIBS, help="what runs the rows")
    ap.add_argument("--init", choices=("uid", "env"), default="uid",
                    help="gshmem only: uid = nvshmem4py's unique-id start (default; nvshmem always uses it), "
                    "env = gshmem's init() from torchrun's environment (rows named import_init/env)")
    ap.add_argument("--cold-init", action="store_true",
                    help="make no CUDA context before import+init (row import_init/cold); default: torch makes it "
                    "first, so the figure is the library's own cost")
    ap.add_argument("--rows", type=row_list, default=list(ROWS),
                    help=f"comma list of {', '.join(ROWS)} (default all); 'init' alone: only import_init, which "
                    "every run measures")
    ap.add_argument("--sizes", type=size_list, default=size_list(DEFAULT_SIZES),
                    help=f"bytes per PE for the op rows (default {DEFAULT_SIZES})")
    ap.add_argument("--tensor-size", type=parse_size, default=1 << 20, help="bytes of the tensor row (1M)")
    ap.add_argument("--samples", type=int, default=20, help="timed samples per row (20)")
    ap.add_argument("--warmup", type=int, default=2, help="untimed samples before them (2)")
    ap.add_argument("--calls", type=int, default=0,
                    help="calls per sample (default: 1 GiB worth, at least 5 and at most 200)")
    ap.add_argument("--seed", type=int, default=0, help="data seed (default: a fresh one, printed)")
    ap.add_argument("--json", metavar="FILE", help="rank 0 writes the rows there (rewritten after each row)")
    ap.add_argument("--commit", default=os.environ.get("GSHMEM_COMMIT", ""), help="recorded in the JSON")
    a = ap.parse_args(argv)
    if a.samples < 1 or a.warmup < 0 or a.calls < 0:
        ap.error("--samples must be >= 1, --warmup and --calls >= 0")
    if a.init == "env" and a.lib != "gshmem":
        ap.error("--init env is gshmem's (nvshmem4py starts from a unique id; torch from its own environment)")
    return a


def calls_per_sample(nbytes, forced):
    return forced or max(5, min(200, (1 << 30) // max(nbytes, 1)))


# ---- the processes ----
class Launch:
    """This process's place in the job, from torchrun's environment (RANK, WORLD_SIZE, LOCAL_RANK, ...); a plain
    `python3 core_bench.py` is a job of one, with a free loopback port for the rendezvous."""

    def __init__(self):
        env = os.environ
        if "RANK" not in env:
            env.update(RANK="0", WORLD_SIZE="1", LOCAL_RANK="0", LOCAL_WORLD_SIZE="1")
            env.setdefault("MASTER_ADDR", "127.0.0.1")
            env.setdefault("MASTER_PORT", str(_free_port()))
        self.rank, self.world = int(env["RANK"]), int(env["WORLD_SIZE"])
        self.local_rank = int(env.get("LOCAL_RANK", self.rank))
        self.local_world = int(env.get("LOCAL_WORLD_SIZE", self.world))


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def process_age_ms():
    """Milliseconds since this process started (Linux /proc, 10 ms steps), or None."""
    try:
        with open("/proc/self/stat") as f:
            start_ticks = int(f.read().rpartition(")")[2].split()[19])  # field 22, starttime
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        return round((uptime - start_ticks / os.sysconf("SC_CLK_TCK")) * 1e3, 1)
    except (OSError, ValueError, IndexError):
        return None


class StreamProtocol:
    """A torch stream seen through CUDA's stream protocol (`__cuda_stream__`), for a torch that lacks it: what
    nvshmem4py reads a stream through (gshmem.core reads either)."""

    __slots__ = ("stream",)

    def __init__(self, stream):
        self.stream = stream

    def __cuda_stream__(self):
        return (0, self.stream.cuda_stream)


# ---- the libraries, behind one small interface ----
class Shmem:
    """gshmem.core or nvshmem.core, called with nvshmem4py's names and signatures; every call on one torch stream."""

    has_tensor = has_barrier = True

    def __init__(self, lib, torch, dist, launch, device, method):
        self.lib, self.torch, self.dist, self.launch, self.device = lib, torch, dist, launch, device
        self.method = method
        self.nv = self.stream = self.s = None

    def bootstrap(self):
        """Before the timed start: the gloo group that carries the unique id, the seed and nothing else."""
        self.dist.init_process_group("gloo")
        self.dist.barrier()

    def start(self):
        """Imports and starts the library up to a first symmetric buffer; returns (import, init, first buffer)
        in seconds. nvshmem4py: a cuda.core Device made current and passed to init, as its examples do. gshmem: no
        device argument (it takes the current GPU, else its local rank's), so neither cuda.core's import nor
        torch's CUDA start is charged to it. The first buffer(8) + free counts because NVSHMEM finishes an init
        made with no CUDA context current at its first allocation."""
        t0 = time.perf_counter()
        nv = importlib.import_module(MODULES[self.lib])
        device = None
        if self.lib == "nvshmem":
            try:
                from cuda.core import Device
            except ImportError:  # cuda.core before 0.4
                from cuda.core.experimental import Device
            device = Device(self.device)
            device.set_current()
        t1 = time.perf_counter()
        if self.method == "env":
            nv.init()
        else:
            rank, world = self.launch.rank, self.launch.world
            box = [nv.get_unique_id(empty=rank != 0)]
            self.dist.broadcast_object_list(box, src=0)
            if device is None:
                nv.init(uid=box[0], rank=rank, nranks=world, initializer_method="uid")
            else:
                nv.init(device=device, uid=box[0], rank=rank, nranks=world, initializer_method="uid")
        t2 = time.perf_counter()
        nv.free(nv.buffer(8))
        t3 = time.perf_counter()
        if (nv.my_pe(), nv.n_pes()) != (self.launch.rank, self.launch.world):
            raise RuntimeError(f"{self.lib}: PE {nv.my_pe()} of {nv.n_pes()}, but this is rank {self.launch.rank} "
                               f"of {self.launch.world}")
        self.nv = nv
        return t1 - t0, t2 - t1, t3 - t2

    def set_stream(self, stream):
        self.stream = stream
        self.s = stream if hasattr(stream, "__cuda_stream__") else StreamProtocol(stream)

    def version(self):
        if self.lib == "nvshmem":
            v = self.nv.get_version()
            return f"nvshmem4py {v.nvshmem4py_version}, NVSHMEM {v.libnvshmem_version}"
        return f"gshmem {self.nv.get_version()}"

    def share(self, value):
        box = [value]
        self.dist.broadcast_object_list(box, src=0)
        return box[0]

    def alloc(self, elems):
        return self.nv.tensor((elems,), dtype=self.torch.float32)

    def free(self, t):
        self.nv.free_tensor(t)

    def fence(self):
        """Every PE here, this stream idle."""
        self.nv.barrier_all(stream=self.s)
        self.stream.synchronize()

    def skip(self, op):
        return None

    def prepare(self, op, dst, src, mine):
        src.copy_(mine)
        dst.fill_(GARBAGE)

    def before_timing(self, op, dst):
        pass

    def steady(self, op):
        """Whether the result is still checkable after the timed calls (the call is idempotent)."""
        return True

    def how(self, op):
        return None

    def call(self, op, dst, src):
        """A function of no arguments that issues one `op` (nvshmem4py's call, bound to its arguments)."""
        nv, s = self.nv, self.s
        team = nv.Teams.TEAM_WORLD
        if op == "allreduce":
            reduce = nv.reduce
            return lambda: reduce(team, dst, src, "sum", stream=s)
        if op == "alltoall":
            alltoall = nv.alltoall
            return lambda: alltoall(team, dst, src, stream=s)
        if op == "broadcast":
            broadcast = nv.broadcast
            return lambda: broadcast(team, dst, src, root=0, stream=s)
        if op == "put":
            put, pe = nv.put, (self.launch.rank + 1) % self.launch.world
            return lambda: put(dst, src, remote_pe=pe, stream=s)
        if op == "barrier":
            barrier_all = nv.barrier_all
            return lambda: barrier_all(stream=s)
        raise ValueError(op)

    def finish(self):
        self.nv.finalize()
        self.dist.destroy_process_group()


class TorchDist:
    """torch.distributed over NCCL: the same rows with NCCL's calls, on the current stream (torch orders NCCL's
    stream after it and it after NCCL's, as in any torch program)."""

    has_tensor = has_barrier = False
    lib, method = "torch", "env"

    def __init__(self, torch, dist, launch, device):
        self.torch, self.dist, self.launch, self.device = torch, dist, launch, device
        self.stream = self.one = None

    def bootstrap(self):
        pass

    def start(self):
        torch, dist = self.torch, self.dist
        t0 = time.perf_counter()
        dev = torch.device("cuda", self.device)
        torch.cuda.set_device(dev)
        dist.init_process_group("nccl", device_id=dev)
        self.one = torch.ones(1, device=dev)
        t1 = time.perf_counter()
        dist.all_reduce(self.one)
        torch.cuda.synchronize()
        return 0.0, t1 - t0, time.perf_counter() - t1

    def set_stream(self, stream):
        self.stream = stream

    def version(self):
        nccl = ".".join(str(v) for v in self.torch.cuda.nccl.version())
        return f"torch {self.torch.__version__}, NCCL {nccl}"

    def share(self, value):
        box = [value]
        self.dist.broadcast_object_list(box, src=0)
        return box[0]

    def alloc(self, elems):
        return self.torch.empty(elems, dtype=self.torch.float32, device=self.torch.device("cuda", self.device))

    def free(self, t):
        pass

    def fence(self):
        self.dist.all_reduce(self.one, op=self.dist.ReduceOp.MAX)
        self.stream.synchronize()

    def skip(self, op):
        if op == "put" and self.launch.world == 1:
            return "put: torch's send/recv ring needs 2 ranks (NCCL sends to no rank itself); row skipped"
        return None

    def prepare(self, op, dst, src, mine):
        if op == "allreduce":  # in place
            dst.copy_(mine)
        elif op == "broadcast":  # in place: the root's tensor is the source
            if self.launch.rank == 0:
                dst.copy_(mine)
            else:
                dst.fill_(GARBAGE)
        else:
            src.copy_(mine)
            dst.fill_(GARBAGE)

    def before_timing(self, op, dst):
        if op == "allreduce":  # in place: n^calls times the data would overflow; zeros stay zeros
            dst.zero_()

    def steady(self, op):
        return op != "allreduce"

    def how(self, op):
        return {"allreduce": "dist.all_reduce(dst) in place (timed on zeros; checked after its first call only)",
                "alltoall": "dist.all_to_all_single(dst, src)",
                "broadcast": "dist.broadcast(dst, src=0) in place",
                "put": "send/recv ring: dist.batch_isend_irecv([isend(src, me+1), irecv(dst, me-1)]) + wait "
                       "(two-sided; NCCL has no put)"}.get(op)

    def call(self, op, dst, src):
        dist = self.dist
        if op == "allreduce":
            all_reduce = dist.all_reduce
            return lambda: all_reduce(dst)
        if op == "alltoall":
            all_to_all = dist.all_to_all_single
            return lambda: all_to_all(dst, src)
        if op == "broadcast":
            broadcast = dist.broadcast
            return lambda: broadcast(dst, src=0)
        if op == "put":
            me, n = self.launch.rank, self.launch.world
            ops = [dist.P2POp(dist.isend, src, (me + 1) % n), dist.P2POp(dist.irecv, dst, (me - 1) % n)]
            batch = dist.batch_isend_irecv

            def ring():
                for work in batch(ops):
                    work.wait()
            return ring
        raise ValueError(op)

    def finish(self):
        self.dist.destroy_process_group()


# ---- data and checks ----
class Data:
    """Fresh random data per (op, size, rank) that every rank can make for every other rank: integers in
    [-64, 64) as float32, from a CUDA generator seeded by (seed, op, size, rank)."""

    def __init__(self, torch, device, seed):
        self.torch, self.device, self.seed = torch, device, seed

    def of(self, op, nbytes, rank, elems):
        torch = self.torch
        g = torch.Generator(device=f"cuda:{self.device}")
        g.manual_seed((((self.seed * len(OPS) + OPS.index(op)) << 40) + nbytes * 1024 + rank) % (1 << 63))
        return torch.randint(-64, 64, (elems,), generator=g, device=f"cuda:{self.device}",
                             dtype=torch.int32).to(torch.float32)

    def expected(self, op, nbytes, me, n, elems):
        if op == "allreduce":
            want = self.of(op, nbytes, 0, elems)
            for r in range(1, n):
                want += self.of(op, nbytes, r, elems)
            return want
        if op == "alltoall":  # block r of the result is block `me` of rank r's source
            return self.torch.cat([self.of(op, nbytes, r, elems).view(n, -1)[me] for r in range(n)])
        if op == "broadcast":
            return self.of(op, nbytes, 0, elems)
        return self.of(op, nbytes, (me - 1) % n, elems)  # put: the PE before me put its source into my dst


def compare(torch, got, want, what):
    if torch.equal(got, want):
        return
    bad = (got != want).nonzero()
    i = int(bad[0]) if len(bad) else -1
    detail = f"element {i} is {got[i].item()} but must be {want[i].item()}" if i >= 0 else "shapes differ"
    raise RuntimeError(f"check failed: {what}: {detail} ({len(bad)} wrong of {want.numel()})")


# ---- timing ----
def time_calls(torch, lib, call, calls, samples, warmup):
    """(per-call µs from CUDA events, host µs per call to issue them), one pair per timed sample."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    perf_counter = time.perf_counter
    device_us, host_us = [], []
    for i in range(warmup + samples):
        lib.fence()
        start.record(lib.stream)
        t0 = perf_counter()
        for _ in range(calls):
            call()
        t1 = perf_counter()
        end.record(lib.stream)
        end.synchronize()
        if i >= warmup:
            device_us.append(start.elapsed_time(end) * 1e3 / calls)
            host_us.append((t1 - t0) * 1e6 / calls)
    return device_us, host_us


# gshmem.core's entries into its library that the timed rows reach (gshmem.core.collective / rma).
_GSHMEM_ENTRIES = ("reduction_on_stream", "collective_on_stream", "putmem_on_stream", "barrier_on_stream")


def _no_op(*args):
    return None


def python_us(lib, call, calls, rounds=5):
    """gshmem only: host µs per call of gshmem.core's layers alone (the library entries it calls replaced by no-ops,
    and the extension's fast path told to skip its library call, for the measurement), median of `rounds`;
    host_us_per_call minus this is the library and CUDA. None for the other libraries."""
    if lib.lib != "gshmem":
        return None
    from gshmem import _gshmem
    saved = {n: getattr(_gshmem, n) for n in _GSHMEM_ENTRIES}
    perf_counter = time.perf_counter
    us = []
    try:
        for n in saved:
            setattr(_gshmem, n, _no_op)
        _gshmem.fast_dry(True)  # the extension's fast path: all but the library call
        for _ in range(rounds):
            t0 = perf_counter()
            for _ in range(calls):
                call()
            us.append((perf_counter() - t0) * 1e6 / calls)
    finally:
        _gshmem.fast_dry(False)
        for n, f in saved.items():
            setattr(_gshmem, n, f)
    return round(statistics.median(us), 3)


def op_row(name, nbytes, lib, device_us, host_us, calls, samples, extra):
    row = {"name": name, "size_bytes": nbytes, "lib": lib, "unit": "us",
           "value": round(statistics.median(device_us), 3),
           "us_per_call": round(statistics.median(device_us), 3),
           "host_us_per_call": round(statistics.median(host_us), 3),
           "us_min": round(min(device_us), 3), "us_max": round(max(device_us), 3),
           "host_us_min": round(min(host_us), 3), "calls": calls, "samples": samples}
    row.update({k: v for k, v in extra.items() if v is not None})
    return row


class Run:
    """One library's rows on this rank; rank 0 keeps them, prints them and writes the JSON."""

    def __init__(self, args, torch, lib, launch, meta):
        self.args, self.torch, self.lib, self.launch, self.meta = args, torch, lib, launch, meta
        self.rows, self.notes = [], list(meta.get("notes", []))

    def add(self, row):
        row["pes"] = self.launch.world
        self.rows.append(row)
        if self.launch.rank == 0:
            print(table_line(row), flush=True)
            self.write()

    def note(self, text):
        if text not in self.notes:
            self.notes.append(text)
            if self.launch.rank == 0:
                print(f"  note: {text}", flush=True)

    def write(self):
        if self.args.json and self.launch.rank == 0:
            doc = dict(self.meta, notes=self.notes, rows=self.rows)
            tmp = self.args.json + ".tmp"
            with open(tmp, "w") as f:
                json.dump(doc, f, indent=1)
            os.replace(tmp, self.args.json)

    def tensor_rows(self):
        lib, a = self.lib, self.args
        elems = max(1, a.tensor_size // 4)
        allocs, frees = [], []
        for i in range(a.warmup + a.samples):
            lib.fence()
            t0 = time.perf_counter()
            t = lib.alloc(elems)
            t1 = time.perf_counter()
            lib.fence()
            t2 = time.perf_counter()
            lib.free(t)
            t3 = time.perf_counter()
            if i >= a.warmup:
                allocs.append((t1 - t0) * 1e6)
                frees.append((t3 - t2) * 1e6)
        for name, us, how in (("tensor", allocs, "tensor((n,), dtype=torch.float32), host time"),
                              ("free_tensor", frees, "free_tensor(t), host time")):
            self.add({"name": name, "size_bytes": elems * 4, "lib": lib.lib, "unit": "us",
                      "value": round(statistics.median(us), 3), "us_min": round(min(us), 3),
                      "us_max": round(max(us), 3), "samples": a.samples, "how": how})

    def op_rows(self, data):
        lib, a, torch = self.lib, self.args, self.torch
        me, n = self.launch.rank, self.launch.world
        wanted = [op for op in OPS if op in a.rows]
        for op in wanted:
            why = lib.skip(op)
            if why:
                self.note(why)
        wanted = [op for op in wanted if not lib.skip(op)]
        if not wanted:
            return
        for size in a.sizes:
            elems = max(n, size // 4 // n * n)  # whole blocks of one element or more per PE (alltoall)
            nbytes = elems * 4
            src, dst = lib.alloc(elems), lib.alloc(elems)
            for op in wanted:
                what = f"{lib.lib} {op} {fmt_size(nbytes)} on rank {me} of {n} (seed {data.seed})"
                call = lib.call(op, dst, src)
                want = data.expected(op, nbytes, me, n, elems)
                lib.prepare(op, dst, src, data.of(op, nbytes, me, elems))
                lib.fence()
                call()
                lib.fence()
                compare(torch, dst, want, what + ", first call")
                lib.before_timing(op, dst)
                calls = calls_per_sample(nbytes, a.calls)
                device_us, host_us = time_calls(torch, lib, call, calls, a.samples, a.warmup)
                check = "first call"
                if lib.steady(op):
                    lib.fence()
                    compare(torch, dst, want, what + ", after the timed calls")
                    check = "first call and after the timed calls"
                del want
                self.add(op_row(OP_NAMES[op], nbytes, lib.lib, device_us, host_us, calls, a.samples,
                                {"check": check, "how": lib.how(op),
                                 "python_us_per_call": python_us(lib, call, calls)}))
            lib.fence()
            lib.free(dst)
            lib.free(src)

    def barrier_row(self):
        lib, a = self.lib, self.args
        calls = calls_per_sample(0, a.calls)
        call = lib.call("barrier", None, None)
        device_us, host_us = time_calls(self.torch, lib, call, calls, a.samples, a.warmup)
        self.add(op_row("barrier_all", 0, lib.lib, device_us, host_us, calls, a.samples,
                        {"how": "barrier_all(stream=s)", "python_us_per_call": python_us(lib, call, calls)}))


def table_line(row):
    host = row.get("host_us_per_call")
    host = f"{host:12.2f}" if host is not None else f"{'':12}"
    size = fmt_size(row["size_bytes"]) if row["size_bytes"] else "-"
    extra = f"  {row['calls']} calls x {row['samples']}" if "calls" in row else ""
    if row.get("python_us_per_call") is not None:
        extra += f" (Python layer {row['python_us_per_call']:.2f} us/call)"
    return f"  {row['name']:<24} {size:>9} {row['value']:12.2f} {row['unit']:<3}{host}{extra}"


def header(meta):
    lines = [f"core_bench: {meta['version']} | {meta['pes']} PE(s) on {meta['gpus']} GPU(s), {meta['device']} | "
             f"stream: {meta['stream']} | seed {meta['seed']} | {meta['date']}"]
    for text in meta["notes"]:
        lines.append(f"  note: {text}")
    lines.append(f"  {'row':<24} {'size':>9} {'value':>12} {'':<3}{'host us/call':>12}")
    return "\n".join(lines)


# ---- main ----
def main(argv=None):
    args = parse_args(argv)
    launch = Launch()
    import torch
    import torch.distributed as dist

    ngpu = torch.cuda.device_count()
    if ngpu == 0:
        sys.exit("core_bench: no CUDA device: the rows run on GPU PEs only")
    device = launch.local_rank % ngpu
    if not args.cold_init:  # CUDA up before the timed import + init: the figure is the library's own cost
        torch.cuda.set_device(device)
        torch.ones(1, device=f"cuda:{device}").add_(1)
        torch.cuda.synchronize()
    lib = (TorchDist(torch, dist, launch, device) if args.lib == "torch"
           else Shmem(args.lib, torch, dist, launch, device, args.init))
    lib.bootstrap()

    import_s, init_s, first_s = lib.start()
    t_ready, age_ms = time.perf_counter(), process_age_ms()

    torch.cuda.set_device(device)
    stream = torch.cuda.Stream()
    lib.set_stream(stream)
    seed = lib.share(args.seed or int.from_bytes(os.urandom(4), "little"))
    gpus = min(launch.local_world, ngpu)
    notes = []
    if launch.world == 1:
        notes.append("one PE: a team of one, so the collectives and put move nothing between GPUs; only the host us "
                     "per call (and import_init, tensor) say something about the library")
    if launch.local_world > ngpu:
        notes.append(f"{launch.local_world} PEs on {ngpu} GPU(s): PEs share GPUs (NCCL refuses that; NVSHMEM "
                     "refuses collectives)")
    meta = {"lib": args.lib, "version": lib.version(), "pes": launch.world, "gpus": gpus,
            "device": torch.cuda.get_device_name(device), "torch": torch.__version__,
            "python": sys.version.split()[0], "date": datetime.datetime.now(datetime.timezone.utc).isoformat(
                timespec="seconds"), "commit": args.commit, "argv": sys.argv, "seed": seed,
            "init_method": lib.method, "cold_init": args.cold_init,
            "stream": "torch current stream (torch.cuda.Stream)" if args.lib == "torch" else
            ("torch.cuda.Stream" if lib.s is stream else "torch.cuda.Stream behind __cuda_stream__"),
            "figures": "rank 0's", "notes": notes}
    run = Run(args, torch, lib, launch, meta)
    if launch.rank == 0:
        print(header(meta), flush=True)

    name = "import_init" + ("/env" if args.init == "env" else "") + ("/cold" if args.cold_init else "")
    row = {"name": name, "size_bytes": 0, "lib": args.lib, "unit": "ms",
           "value": round((import_s + init_s + first_s) * 1e3, 1), "import_ms": round(import_s * 1e3, 1),
           "init_ms": round(init_s * 1e3, 1), "first_use_ms": round(first_s * 1e3, 1),
           "from_script_start_ms": round((t_ready - T_SCRIPT) * 1e3, 1), "from_process_start_ms": age_ms,
           "cuda_preinit": not args.cold_init, "method": lib.method}
    if args.lib == "torch":
        row["how"] = "init_process_group(nccl, device_id) + a first all_reduce of 1 float, synchronized"
    run.add(row)

    with torch.cuda.stream(stream):
        if "tensor" in args.rows and lib.has_tensor:
            run.tensor_rows()
        run.op_rows(Data(torch, device, seed))
        if "barrier" in args.rows:
            if lib.has_barrier:
                run.barrier_row()
            else:
                run.note("barrier_all: no torch row (dist.barrier is not a stream operation)")
        if "tensor" in args.rows and not lib.has_tensor:
            run.note("tensor: no torch row (torch.empty comes from the caching allocator)")
        lib.fence()
    run.write()
    lib.finish()
    return 0


if __name__ == "__main__":
    sys.exit(main())
