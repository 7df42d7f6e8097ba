"""Pipeline-parallel training of a small GPT with activations and gradients moved through gshmem, beside the same
training with torch.distributed send/recv (NCCL on GPUs, gloo on CPU PEs). One stage per PE.

    torchrun --nproc-per-node=2 examples/python/pipeline_train.py                  # one stage per GPU
    GSHMEM_DEVICE=cpu torchrun --nproc-per-node=2 examples/python/pipeline_train.py --device cpu   # CPU PEs

The model (token + position embedding, `--layers` pre-norm transformer blocks, a tied-free LM head) is built from one
seed on every PE; PE s keeps stage s: stage 0 the embeddings and the first blocks, the last stage the last blocks,
the final norm, the head and the loss. Each step feeds `--micro-batches` micro-batches of random tokens (made from
the step's seed, the same on every PE) through the stages in a GPipe schedule (every forward, then every backward;
`--schedule 1f1b` interleaves them) and takes one AdamW step per stage.

gshmem transport: every PE holds symmetric receive slots, one per micro-batch, for activations (from the previous
stage) and gradients (from the next). A sender writes a slot with `put_signal` (data, then the slot's signal word set
to the use count, in one call on the compute stream); the receiver waits on that word with `signal_wait` on its
stream, copies the slot out, and returns a credit to the sender with `signal_op` ADD, so a slot is never overwritten
before it is read. No host synchronisation: on GPUs every call is stream-ordered. On CPU PEs the same calls block.

torch.distributed transport: `isend` / `irecv` of the same tensors in the same order (NCCL: on its own stream, ordered
after the compute stream; gloo on CPU PEs).

`--graphs` (GPUs): after the warm-up steps each stage captures its whole training step (every micro-batch's forward
and backward, the transfers, the optimizer step) in one CUDA graph and replays it for the timed steps, so the
host's launches no longer bound the step and the transfers' latency is on its path. The gshmem transport then
starts every step by zeroing its signal words, then a barrier, so the captured signal values (1: each slot is used
once a step) are right on every replay and no credits are needed. The torch transport's NCCL send / recv
are captured too where torch can (a failed capture is reported and that transport runs eagerly; every stage runs
the same mode). AdamW runs with capturable=True under both transports (and in `--reference`).

Both transports run in one job from the same seed; the last stage prints each step's loss for both and the tokens/s
of each, and checks that the losses are bit-identical (deterministic algorithms on); every stage checks that its
parameters after training are bit-identical under both (a one-ulp error in a moved tensor shows there even where
the losses round it away). `--reference` also runs the whole model unsplit on the last stage and checks the
pipeline's losses against it.
"""
import argparse
import math
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

import gshmem.core as nvshmem


# ---- the model ----

class Block(nn.Module):
    """Pre-norm transformer block: causal self-attention and a 4x GELU MLP, each around a residual."""

    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(hidden)
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)
        self.ln2 = nn.LayerNorm(hidden)
        self.fc = nn.Linear(hidden, 4 * hidden)
        self.out = nn.Linear(4 * hidden, hidden)

    def forward(self, x):
        b, t, h = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(h, dim=2)
        q, k, v = (y.view(b, t, self.heads, h // self.heads).transpose(1, 2) for y in (q, k, v))
        # written out (not scaled_dot_product_attention, whose fused GPU backward is not deterministic)
        s = (q @ k.transpose(-2, -1)) / math.sqrt(h // self.heads)
        s = s.masked_fill(torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1), float("-inf"))
        a = s.softmax(dim=-1) @ v
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, h))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class Stage(nn.Module):
    """Blocks [first, last) of the model, with the embeddings on the first stage and the head on the last."""

    def __init__(self, cfg, first, last, is_first, is_last, blocks, embed, head):
        super().__init__()
        self.is_first, self.is_last = is_first, is_last
        self.embed = embed if is_first else None
        self.blocks = nn.ModuleList(blocks[first:last])
        self.head = head if is_last else None

    def forward(self, x):
        if self.is_first:
            tok, pos = self.embed
            x = tok(x) + pos(torch.arange(x.shape[1], device=x.device))
        for b in self.blocks:
            x = b(x)
        if self.is_last:
            norm, lin = self.head
            x = lin(norm(x))
        return x


def build_stages(cfg, n_stages, device):
    """The whole model from cfg.seed, split into n_stages (blocks as evenly as possible, earlier stages one more)."""
    torch.manual_seed(cfg.seed)
    tok = nn.Embedding(cfg.vocab, cfg.hidden)
    pos = nn.Embedding(cfg.seq, cfg.hidden)
    blocks = [Block(cfg.hidden, cfg.heads) for _ in range(cfg.layers)]
    norm, lin = nn.LayerNorm(cfg.hidden), nn.Linear(cfg.hidden, cfg.vocab)
    embed, head = nn.ModuleList([tok, pos]), nn.ModuleList([norm, lin])
    bounds = [round(i * cfg.layers / n_stages) for i in range(n_stages + 1)]
    return [Stage(cfg, bounds[s], bounds[s + 1], s == 0, s == n_stages - 1, blocks, embed, head).to(device)
            for s in range(n_stages)]


def batch(cfg, step, device):
    """Step `step`'s tokens [micro-batches, micro-batch size, seq + 1], the same on every PE."""
    g = torch.Generator().manual_seed(cfg.seed * 1000003 + step)
    return torch.randint(0, cfg.vocab, (cfg.micro_batches, cfg.mb, cfg.seq + 1), generator=g).to(device)


# ---- transports: send / receive one micro-batch's activation (forward) or gradient (backward) ----

class GshmemTransport:
    """Symmetric receive slots per micro-batch and direction; put_signal in, credit back with signal_op."""

    def __init__(self, cfg, me, n, device, dtype):
        self.me, self.n = me, n
        # --graphs: the stream current at each call (None), which is torch's capture stream while capturing
        self.per_step = cfg.graphs
        self.stream = torch.cuda.current_stream() if device.type == "cuda" and not cfg.graphs else None
        m, shape = cfg.micro_batches, (cfg.mb, cfg.seq, cfg.hidden)
        self.slots = {d: nvshmem.tensor((m,) + shape, dtype=dtype) for d in ("act", "grad")}
        # signal words: "ready" (written by the sender: the slot's use count), "credit" (written by the receiver:
        # how many uses of the slot it has read). Kept in one int64 tensor per kind so each is symmetric.
        self.ready = {d: nvshmem.tensor((m,), dtype=torch.int64) for d in ("act", "grad")}
        self.credit = {d: nvshmem.tensor((m,), dtype=torch.int64) for d in ("act", "grad")}
        if self.slots["act"].device.type != device.type:
            raise SystemExit(f"gshmem's PEs are {'GPU' if self.slots['act'].is_cuda else 'CPU'} PEs but the model "
                             f"runs on {device.type}: pass --device to match (CPU PEs: GSHMEM_DEVICE=cpu and "
                             "--device cpu)")
        for t in list(self.ready.values()) + list(self.credit.values()):
            t.zero_()
        self.sent = {d: [0] * m for d in ("act", "grad")}
        self.got = {d: [0] * m for d in ("act", "grad")}
        nvshmem.barrier_all(stream=self.stream)  # every PE's words are zero before anyone signals

    def step_begin(self):
        """--graphs: every slot is used once a step, so its signal word counts from 0 each step. This PE's stream
        has waited for every word it receives on in the last step (so every put into its slots has landed) and
        copied those slots out; it zeroes its words, and a barrier on the stream keeps every PE from putting
        before every PE has done so. The same values are then sent every step, as a replayed graph does."""
        if not self.per_step:
            return
        for t in self.ready.values():
            t.zero_()
        nvshmem.barrier_all(stream=self.stream)
        for d in ("act", "grad"):
            self.sent[d] = [0] * len(self.sent[d])
            self.got[d] = [0] * len(self.got[d])

    def _send(self, d, m, x, peer):
        k = self.sent[d][m] = self.sent[d][m] + 1
        if k > 1:  # the receiver has read the slot's previous use
            nvshmem.signal_wait(self.credit[d][m:m + 1], k - 1, nvshmem.ComparisonType.CMP_GE, stream=self.stream)
        nvshmem.put_signal(self.slots[d][m], x.contiguous(), self.ready[d][m:m + 1], k,
                           nvshmem.SignalOp.SIGNAL_SET, peer, stream=self.stream)

    def _recv(self, d, m, peer):
        k = self.got[d][m] = self.got[d][m] + 1
        nvshmem.signal_wait(self.ready[d][m:m + 1], k, nvshmem.ComparisonType.CMP_GE, stream=self.stream)
        x = self.slots[d][m].clone()
        if not self.per_step:  # per step: the next step's barriers order the slot's reuse instead
            nvshmem.signal_op(self.credit[d][m:m + 1], 1, nvshmem.SignalOp.SIGNAL_ADD, peer, stream=self.stream)
        return x

    def send_act(self, m, x):
        self._send("act", m, x, self.me + 1)

    def recv_act(self, m):
        return self._recv("act", m, self.me - 1)

    def send_grad(self, m, g):
        self._send("grad", m, g, self.me - 1)

    def recv_grad(self, m):
        return self._recv("grad", m, self.me + 1)

    def step_done(self):
        pass

    def close(self):
        nvshmem.barrier_all(stream=self.stream)
        if self.slots["act"].is_cuda:  # every use of the slots is done before they are freed
            torch.cuda.synchronize()
        for group in (self.slots, self.ready, self.credit):
            for t in group.values():
                nvshmem.free_tensor(t)


class TorchTransport:
    """torch.distributed isend / irecv (NCCL on GPUs, gloo on CPU)."""

    def __init__(self, cfg, me, n, device, dtype):
        self.me, self.device, self.dtype = me, device, dtype
        self.shape = (cfg.mb, cfg.seq, cfg.hidden)
        self.pending = []  # isend handles and the tensors they send, completed at the end of each step

    def step_begin(self):
        self.pending.clear()  # empty after every step; not after a capture that failed part way

    def _send(self, x, peer):
        x = x.contiguous()
        self.pending.append((dist.isend(x, peer), x))

    def _recv(self, peer):
        x = torch.empty(self.shape, device=self.device, dtype=self.dtype)
        dist.irecv(x, peer).wait()
        return x

    def send_act(self, m, x):
        self._send(x, self.me + 1)

    def recv_act(self, m):
        return self._recv(self.me - 1)

    def send_grad(self, m, g):
        self._send(g, self.me - 1)

    def recv_grad(self, m):
        return self._recv(self.me + 1)

    def step_done(self):
        for h, _ in self.pending:
            h.wait()
        self.pending.clear()

    def close(self):
        self.step_done()


# ---- one training run ----

def schedule(kind, stage, n_stages, m):
    """The order of ("F", i) / ("B", i) steps of one stage: GPipe, or 1F1B (warm-up forwards, then alternating)."""
    if kind == "gpipe":
        return [("F", i) for i in range(m)] + [("B", i) for i in range(m)]
    warm = min(n_stages - stage - 1, m)
    order = [("F", i) for i in range(warm)]
    f, b = warm, 0
    while b < m:
        if f < m:
            order.append(("F", f))
            f += 1
        order.append(("B", b))
        b += 1
    return order


def train(cfg, transport_cls, me, n, device):
    """Trains cfg.steps steps; returns (losses per step on the last stage else [], tokens/s of the timed steps, this
    stage's parameters at the end, how the steps ran: "eager", "CUDA graphs" or why not graphs)."""
    dtype = torch.float32
    stage = build_stages(cfg, n, device)[me]
    opt = torch.optim.AdamW(stage.parameters(), lr=cfg.lr, capturable=cfg.graphs)
    tp = transport_cls(cfg, me, n, device, dtype) if n > 1 else None
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    losses, t0 = [], None

    def body(tokens):
        """One training step on this stage: its share of every micro-batch, the transfers, the optimizer step."""
        if tp:
            tp.step_begin()
        inputs, outputs, total = {}, {}, torch.zeros((), device=device)
        for kind, i in schedule(cfg.schedule, me, n, cfg.micro_batches):
            if kind == "F":
                x = tokens[i, :, :-1] if stage.is_first else tp.recv_act(i).requires_grad_()
                y = stage(x)
                if stage.is_last:
                    y = F.cross_entropy(y.reshape(-1, cfg.vocab), tokens[i, :, 1:].reshape(-1)) / cfg.micro_batches
                    total += y.detach()
                else:
                    tp.send_act(i, y.detach())
                inputs[i], outputs[i] = x, y
            else:
                y = outputs.pop(i)
                if stage.is_last:
                    y.backward()
                else:
                    y.backward(tp.recv_grad(i))
                x = inputs.pop(i)
                if not stage.is_first:
                    tp.send_grad(i, x.grad)
        if tp:
            tp.step_done()
        opt.step()
        return total

    def run_step(step):
        total = body(batch(cfg, step, device))
        opt.zero_grad(set_to_none=True)
        return total

    # --graphs: steps 0 .. warmup - 2 run eagerly on a side stream (torch's rule for work before a capture: the
    # optimizer's state and the libraries' handles are made there), step warmup - 1 is captured and is the graph's
    # first replay, the timed steps replay it. The grads are None at capture, so the captured backward makes them
    # (from the graph's pool) and every replay starts them afresh, as zero_grad(set_to_none=True) does eagerly.
    mode, graph, static = "eager", None, {}
    side = torch.cuda.Stream() if cfg.graphs else None
    if side is not None:
        side.wait_stream(torch.cuda.current_stream())

    def capture(step):
        nonlocal graph
        static["tokens"] = batch(cfg, step, device)
        sync()
        graph = torch.cuda.CUDAGraph()
        why, before = "", torch.cuda.current_stream()
        try:
            # thread_local: the NCCL watchdog's (and any other thread's) CUDA calls do not end the capture
            with torch.cuda.graph(graph, capture_error_mode="thread_local"):
                static["total"] = body(static["tokens"])
        except Exception as e:  # reported, and every stage then runs eagerly (below)
            why = f"{type(e).__name__}: {e}".splitlines()[0][:200].replace("|", "/")
            graph = None
            torch.cuda.set_stream(before)  # a failed capture_end leaves torch's capture stream current
        # every stage the same mode: the lowest verdict over the PEs, through gshmem (independent of the
        # transport whose capture may have failed)
        flag = nvshmem.tensor((1,), dtype=torch.int32)
        res = nvshmem.tensor((1,), dtype=torch.int32)
        flag.fill_(0 if why else 1)
        nvshmem.reduce(nvshmem.Teams.TEAM_WORLD, res, flag, "min")
        everyone = int(res.item()) == 1
        nvshmem.free_tensor(flag)
        nvshmem.free_tensor(res)
        if not everyone:
            graph = None
            opt.zero_grad(set_to_none=True)  # grads the capture made (never written): the eager step makes its own
            if why:
                print(f"stage {me}, {transport_cls.__name__}: CUDA graph capture failed ({why}); eager steps",
                      flush=True)
            return f"eager (a stage's CUDA graph capture failed{': ' + why if why else ''})"
        return "CUDA graphs"

    def replay(step):
        static["tokens"].copy_(batch(cfg, step, device))
        graph.replay()
        return static["total"]

    for step in range(cfg.steps):
        if step == cfg.warmup:
            sync()
            dist.barrier()
            t0 = time.perf_counter()
        if cfg.graphs and step == cfg.warmup - 1:
            torch.cuda.current_stream().wait_stream(side)
            mode = capture(step)
        if graph is not None:
            total = replay(step)
        elif cfg.graphs and mode == "eager":  # before the capture: on the side stream
            with torch.cuda.stream(side):
                total = run_step(step)
            torch.cuda.current_stream().wait_stream(side)  # the loss below is read on the default stream
        else:
            total = run_step(step)
        if stage.is_last:
            losses.append(total.item())
    sync()
    dist.barrier()
    elapsed = time.perf_counter() - t0
    if cfg.profile:  # one more step, after the timed ones, under torch.profiler
        # (under --graphs a replay: an eager step would add its grads to the ones the graph's last replay left)
        profile_step(cfg, (lambda: replay(cfg.steps)) if graph is not None else (lambda: run_step(cfg.steps)), sync,
                     me, transport_cls.__name__)
    if tp:
        tp.close()
    timed = cfg.steps - cfg.warmup
    params = [p.detach().cpu() for p in stage.parameters()]
    return losses, timed * cfg.micro_batches * cfg.mb * cfg.seq / elapsed, params, mode


def profile_step(cfg, step, sync, me, name):
    """--profile: runs `step` once under torch.profiler and prints, stage by stage, its wall time and the operators
    that took most of it (self time on the GPU where there is one, else on the CPU): where a step's time goes with
    this transport."""
    from torch.profiler import ProfilerActivity, profile
    gpu = cfg.use_cuda
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if gpu else [])
    sync()
    dist.barrier()
    t0 = time.perf_counter()
    with profile(activities=activities) as prof:
        step()
        sync()
    wall_ms = (time.perf_counter() - t0) * 1e3
    events = prof.key_averages()
    table = None
    for key in (("self_device_time_total", "self_cuda_time_total") if gpu else ("self_cpu_time_total",)):
        try:
            table = events.table(sort_by=key, row_limit=12)
            break
        except (AttributeError, KeyError, ValueError):
            continue
    for pe in range(dist.get_world_size()):  # one stage at a time, so the tables do not interleave
        if pe == me:
            print(f"profile: stage {me}, {name}, one step: {wall_ms:.1f} ms wall\n{table}", flush=True)
        dist.barrier()


def reference(cfg, device):
    """The same steps with the whole model in this process (one stage), for --reference."""
    stage = build_stages(cfg, 1, device)[0]
    opt = torch.optim.AdamW(stage.parameters(), lr=cfg.lr, capturable=cfg.graphs)
    losses = []
    for step in range(cfg.steps):
        tokens = batch(cfg, step, device)
        total = torch.zeros((), device=device)
        outs = []
        for i in range(cfg.micro_batches):
            y = stage(tokens[i, :, :-1])
            y = F.cross_entropy(y.reshape(-1, cfg.vocab), tokens[i, :, 1:].reshape(-1)) / cfg.micro_batches
            total += y.detach()
            outs.append(y)
        for y in outs:
            y.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(total.item())
    return losses


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--transport", choices=["gshmem", "torch", "both"], default="both",
                    help="torch: torch.distributed send/recv (NCCL on GPUs, gloo on CPU); both: one after the other")
    ap.add_argument("--schedule", choices=["gpipe", "1f1b"], default="gpipe")
    ap.add_argument("--device", choices=["auto", "cuda", "cpu"], default="auto")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--vocab", type=int, default=1024)
    ap.add_argument("--micro-batches", type=int, default=8, dest="micro_batches")
    ap.add_argument("--micro-batch-size", type=int, default=2, dest="mb")
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--warmup", type=int, default=2, help="untimed first steps")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--reference", action="store_true", help="also train the unsplit model on the last stage")
    ap.add_argument("--graphs", action="store_true",
                    help="GPUs: capture each stage's training step in a CUDA graph after the warm-up steps and replay "
                         "it (both transports; a transport whose capture fails runs eagerly, and says so)")
    ap.add_argument("--profile", action="store_true",
                    help="after the timed steps, one more step under torch.profiler: each stage prints its top "
                         "operators (the same extra step under both transports, so the results still compare)")
    cfg = ap.parse_args()
    if cfg.hidden % cfg.heads or cfg.steps <= cfg.warmup:
        ap.error("--hidden must be a multiple of --heads, and --steps larger than --warmup")
    if cfg.graphs and cfg.warmup < 2:
        ap.error("--graphs needs --warmup 2 or more (eager steps first, then the step that is captured)")

    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # no NVLink multicast (shared machines)
    use_cuda = cfg.device == "cuda" or (cfg.device == "auto" and torch.cuda.is_available()
                                        and os.environ.get("GSHMEM_DEVICE") != "cpu")
    cfg.use_cuda = use_cuda
    if cfg.graphs and not use_cuda:
        ap.error("--graphs needs GPUs (CUDA graphs); CPU PEs run the steps eagerly: leave it out")
    if use_cuda:
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # deterministic cuBLAS
    torch.use_deterministic_algorithms(True, warn_only=True)
    dist.init_process_group("nccl" if use_cuda else "gloo")
    nvshmem.init()  # torchrun's environment; the next free port after torch's store
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    device = torch.device("cuda", torch.cuda.current_device()) if use_cuda else torch.device("cpu")
    if n > cfg.layers:
        raise SystemExit(f"{n} stages need at least {n} layers (--layers)")

    runs = {"gshmem": GshmemTransport, "torch": TorchTransport}
    names = list(runs) if cfg.transport == "both" else [cfg.transport]
    results = {}
    for name in names:
        results[name] = train(cfg, runs[name], me, n, device)

    ok = True
    label = {"gshmem": "gshmem", "torch": "nccl" if use_cuda else "gloo"}
    if len(results) == 2:  # every stage: its trained parameters, bit for bit (stricter than the losses)
        same = all(torch.equal(a, b) for a, b in zip(results["gshmem"][2], results["torch"][2]))
        ok &= same
        print(f"stage {me}: parameters after training {'bit-identical' if same else 'DIFFER'} between gshmem and "
              f"{label['torch']}", flush=True)
        dist.barrier()
    if me == n - 1:
        print(f"pipeline: {n} stages on {'GPUs' if use_cuda else 'CPU PEs'}, {cfg.schedule}, {cfg.layers} layers, "
              f"hidden {cfg.hidden}, {cfg.micro_batches} micro-batches of {cfg.mb} x {cfg.seq} tokens", flush=True)
        for step in range(cfg.steps):
            print(f"  step {step}: " + "  ".join(f"{label[k]} loss {v[0][step]:.6f}" for k, v in results.items()))
        for k, v in results.items():
            print(f"  {label[k]}: {v[1]:.0f} tokens/s over steps {cfg.warmup}..{cfg.steps - 1}, {v[3]}")
        if len(results) == 2:
            a, b = results["gshmem"][0], results["torch"][0]
            same = a == b
            ok &= same
            print(f"  losses {'bit-identical' if same else 'DIFFER'} between gshmem and {label['torch']}")
            ratio = results["gshmem"][1] / results["torch"][1]
            print(f"  tokens/s gshmem / {label['torch']}: {ratio:.2f}")
        if cfg.reference:
            ref = reference(cfg, device)
            for k, v in results.items():
                worst = max(abs(x - y) for x, y in zip(v[0], ref))
                good = v[0] == ref
                ok &= good
                verdict = "bit-identical" if good else f"DIFFER (max {worst:.3g})"
                print(f"  {label[k]} vs the unsplit model: {verdict}")
        if not all(math.isfinite(x) for v in results.values() for x in v[0]):
            ok = False
            print("  a loss is not finite")
        print(f"pipeline: {'ok' if ok else 'FAILED'}", flush=True)
    nvshmem.finalize()
    dist.destroy_process_group()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
