#!/usr/bin/env python3
"""MoE dispatch / combine latency on GPUs (issue 18 item 3): gshmem.moe.AllToAll beside the same exchange done with
torch.distributed.all_to_all_single over NCCL.

  torchrun --nproc-per-node=2 bench/moe/moe_bench.py --json moe.json      (GSHMEM_DEVICE=gpu; no NVLink multicast:
                                                                          NCCL_NVLS_ENABLE=0)

Configurations (pplx-kernels' benchmark): 64 experts / top-6 / hidden 2048 and 256 experts / top-8 / hidden 7168,
bf16 tokens, no scales, dp_size 1 (every rank its own tokens), m = 1, 2, 4, ..., 128 and 4096 tokens per rank
(max_num_tokens = m). Routing: random distinct experts per token (the same generator on every rank, seeded by
--seed and the rank). Expert outputs: a fixed bf16 tensor (no expert compute is timed).

Rows, per (configuration, m), rank 0's figures, microseconds, median over --iters timed iterations after --warmup
untimed ones; every iteration starts with the ranks aligned (a barrier on the stream), then CUDA events around each
phase on one stream:
  gshmem/dispatch, gshmem/combine   one AllToAll.dispatch / .combine each (bound_m a uint32 CUDA tensor); the
                                    events include the host's work of the call (Python checks, launch), as the
                                    NCCL rows' do
  gshmem/graph_pair                 one replay of a CUDA graph of dispatch + combine (captured once): the GPU
                                    time of the pair without the host's per-call work ("error" if capture failed)
  nccl/dispatch                     per-destination counts (bincount), all_to_all_single of the counts, the host
                                    reads them (.tolist(): the split sizes NCCL needs), token rows sorted by
                                    destination, all_to_all_single of the rows (what a dispatcher without a device-
                                    initiated transport does; no expert-wise grouping on the receiver, which
                                    gshmem's dispatch does and so pays for)
  nccl/combine                      all_to_all_single of the rows back, then the weighted sum (index_add_ in float)
Before timing, each configuration's first call is checked: gshmem's received token count over all ranks equals
m * K * ranks, and gshmem's combine equals the NCCL path's (both sum the same bf16 outputs with the same weights,
though not in the same order, so the check allows one bf16 rounding step).
Configurations whose buffers would exceed --max-gib per GPU are skipped and reported.
"""
import argparse
import json
import os
import statistics
import sys

CONFIGS = {"64x6x2048": (64, 6, 2048), "256x8x7168": (256, 8, 7168)}  # pplx-kernels' (the default)


def config(name):
    """(experts, experts per token, hidden) of "ExKxH": pplx-kernels' two, or any other (e.g. 256x6x2048 beside
    64x6x2048, to tell what grows with the experts from what grows with K and the row)."""
    try:
        E, K, H = (int(v) for v in name.lower().split("x"))
    except ValueError:
        raise SystemExit(f"moe_bench: --configs item {name!r} is not ExKxH (e.g. 64x6x2048)") from None
    if E < 1 or not 1 <= K <= E or H < 8 or H % 8:
        raise SystemExit(f"moe_bench: --configs item {name!r}: need 1 <= K <= E and a hidden size that is a "
                         "multiple of 8")
    return E, K, H
DEFAULT_TOKENS = "1,2,4,8,16,32,64,128,4096"


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--configs", default=",".join(CONFIGS),
                   help="E x K x hidden, comma separated (default: pplx-kernels' two; any ExKxH runs)")
    p.add_argument("--tokens", default=DEFAULT_TOKENS, help="tokens per rank (m), comma separated")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--max-gib", type=float, default=40.0, help="skip a configuration needing more GPU memory")
    p.add_argument("--libs", default="gshmem,nccl", help="gshmem, nccl or both")
    p.add_argument("--json", help="write the rows here (rank 0)")
    return p.parse_args()


def gshmem_bytes(E, K, H, m, world):
    """GPU memory of one gshmem all-to-all at T = m: its symmetric workspace (docs/moe.md) and the caller's
    expert arrays (out_expert_x and expert_y, bf16)."""
    L, T = -(-E // world), m
    rows = L * world * T
    staging = 2 * rows * ((2 * H + 8 + 15) // 16 * 16 + 8) + 2 * T * K * ((4 * H + 15) // 16 * 16 + 8)
    return staging + 2 * rows * 2 * H


def main():
    args = parse_args()
    import torch
    import torch.distributed as dist

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local % torch.cuda.device_count())
    dev = torch.device("cuda", torch.cuda.current_device())
    libs = set(args.libs.split(","))
    dist.init_process_group("nccl", device_id=dev)
    import gshmem.core as nv
    import gshmem.moe as moe
    nv.init()
    assert nv.my_pe() == rank and nv.n_pes() == world, "gshmem's PEs must be torchrun's ranks"
    stream = torch.cuda.current_stream()
    rows_out = []
    skipped = []

    def aligned():
        """All ranks at the same point of the stream before a timed phase."""
        nv.barrier_all(stream=stream)

    def timed(fn):
        """Median µs of fn() between CUDA events, each iteration after a barrier on the stream."""
        for _ in range(args.warmup):
            aligned()
            fn()
        samples = []
        for _ in range(args.iters):
            aligned()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record(stream)
            fn()
            b.record(stream)
            b.synchronize()
            samples.append(a.elapsed_time(b) * 1e3)
        return statistics.median(samples)

    for name in args.configs.split(","):
        E, K, H = config(name)
        for m in (int(t) for t in args.tokens.split(",")):
            need = gshmem_bytes(E, K, H, m, world)
            if need > args.max_gib * (1 << 30):
                skipped.append(f"{name}/m={m}: about {need / (1 << 30):.1f} GiB > --max-gib {args.max_gib}")
                continue
            g = torch.Generator(device="cpu").manual_seed(args.seed * 1000 + rank)
            x = torch.randn((m, H), generator=g).to(torch.bfloat16).to(dev)
            idx = torch.argsort(torch.rand((m, E), generator=g), dim=1)[:, :K].to(torch.int32).to(dev)
            w = torch.rand((m, K), generator=g).to(dev)
            L = -(-E // world)
            row = {"config": name, "experts": E, "topk": K, "hidden": H, "tokens": m, "ranks": world}
            ref_out = None
            if "nccl" in libs:
                owner = (idx.long() // L).reshape(-1)  # destination rank of each (token, k)
                order = torch.argsort(owner, stable=True)
                src_tok = (torch.arange(m * K, device=dev) // K)[order]
                y_rows = torch.empty(0)

                def nccl_dispatch():
                    nonlocal y_rows
                    send = torch.bincount(owner, minlength=world).to(torch.int64)
                    recv = torch.empty_like(send)
                    dist.all_to_all_single(recv, send)
                    s, r = send.tolist(), recv.tolist()
                    out = torch.empty((sum(r), H), dtype=torch.bfloat16, device=dev)
                    dist.all_to_all_single(out, x[src_tok], r, s)
                    y_rows = (out, s, r)

                def nccl_combine():
                    out, s, r = y_rows
                    back = torch.empty((m * K, H), dtype=torch.bfloat16, device=dev)
                    dist.all_to_all_single(back, out, s, r)  # the "expert output" is the row itself
                    acc = torch.zeros((m, H), dtype=torch.float32, device=dev)
                    acc.index_add_(0, src_tok, back.float() * w.reshape(-1)[order].unsqueeze(1))
                    return acc.to(torch.bfloat16)

                nccl_dispatch()
                ref_out = nccl_combine()
                torch.cuda.synchronize()
                row["nccl/dispatch"] = timed(nccl_dispatch)
                row["nccl/combine"] = timed(nccl_combine)
            if "gshmem" in libs:
                ata = moe.AllToAll(m, E, K, rank, world, 1, H, 2 * H, 0)
                counts = torch.empty(L, dtype=torch.int32, device=dev)
                ex = torch.empty((L, world * m, H), dtype=torch.bfloat16, device=dev)
                bound = torch.tensor([m], dtype=torch.uint32, device=dev)
                out = torch.empty((m, H), dtype=torch.bfloat16, device=dev)

                def g_dispatch():
                    ata.dispatch(counts, ex, None, x, None, idx, bound)

                def g_combine():
                    ata.combine(out, idx, w, ex, bound)  # expert output = the expert's input row

                g_dispatch()
                g_combine()
                total = counts.sum().to(torch.int64)
                dist.all_reduce(total)
                want = m * K * world
                assert int(total) == want, f"{name} m={m}: {int(total)} rows received, expected {want}"
                if ref_out is not None:
                    diff = (out.float() - ref_out.float()).abs() / ref_out.float().abs().clamp_min(1e-3)
                    worst = float(diff.max()) if diff.numel() else 0.0
                    assert worst <= 2 ** -7, f"{name} m={m}: combine differs from NCCL's by {worst}"
                # Each dispatch must be followed by its combine, so the two are timed in pairs, each phase between
                # its own events after its own barrier.
                d_samples, c_samples = [], []
                for i in range(args.warmup + args.iters):
                    ev = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
                    aligned()
                    ev[0].record(stream)
                    g_dispatch()
                    ev[1].record(stream)
                    aligned()
                    ev[2].record(stream)
                    g_combine()
                    ev[3].record(stream)
                    ev[3].synchronize()
                    if i >= args.warmup:
                        d_samples.append(ev[0].elapsed_time(ev[1]) * 1e3)
                        c_samples.append(ev[2].elapsed_time(ev[3]) * 1e3)
                row["gshmem/dispatch"] = statistics.median(d_samples)
                row["gshmem/combine"] = statistics.median(c_samples)
                torch.cuda.synchronize()
                # The pair's GPU time alone: a graph of one dispatch + combine (the call numbers live in the
                # workspace, so replays are real calls), each replay after a barrier.
                graph, why = torch.cuda.CUDAGraph(), None
                try:
                    with torch.cuda.graph(graph):
                        g_dispatch()
                        g_combine()
                    torch.cuda.synchronize()
                except Exception as e:
                    why = f"error: {type(e).__name__}: {e}"[:300]
                captured = torch.tensor([0 if why else 1], dtype=torch.int32, device=dev)
                dist.all_reduce(captured, op=dist.ReduceOp.MIN)  # replay only where every rank captured
                try:
                    if why or int(captured) == 0:
                        raise RuntimeError(why or "another rank's capture failed")
                    p_samples = []
                    for i in range(args.warmup + args.iters):
                        ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
                        aligned()
                        ev[0].record(stream)
                        graph.replay()
                        ev[1].record(stream)
                        ev[1].synchronize()
                        if i >= args.warmup:
                            p_samples.append(ev[0].elapsed_time(ev[1]) * 1e3)
                    row["gshmem/graph_pair"] = statistics.median(p_samples)
                    del graph
                except Exception as e:  # the plain rows above stand; say why this one is missing
                    row["gshmem/graph_pair"] = str(e) if why else f"error: {type(e).__name__}: {e}"[:300]
                torch.cuda.synchronize()
                ata.destroy()
            rows_out.append(row)
            if rank == 0:
                print(json.dumps(row), flush=True)
    if rank == 0:
        for s in skipped:
            print(f"skipped {s}", flush=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"rows": rows_out, "skipped": skipped, "argv": sys.argv}, f, indent=1)
    nv.finalize()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
