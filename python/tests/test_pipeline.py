"""examples/python/pipeline_train.py under torchrun: a small GPT split into one stage per PE, activations and
gradients through gshmem put_signal / signal_wait and through torch.distributed. The losses of both transports and
of the unsplit model, and every stage's trained parameters under both transports, must be bit-identical. CPU PEs
(gloo beside gshmem) where torch is installed, 2-4 stages; GPUs (NCCL beside gshmem) where there are some, eagerly and
with --graphs (each stage's step a CUDA graph: gshmem's run must be captured; NCCL's may fall back to eager steps,
as the example reports). Skipped without torch (CI has none)."""
import shutil

import pytest

from test_core import GPU_PES, GPUS, HERE, env, have, run

EXAMPLE = HERE.parents[1] / "examples" / "python" / "pipeline_train.py"
SMALL = ["--layers", "3", "--hidden", "64", "--heads", "2", "--seq", "16", "--vocab", "128", "--micro-batches", "4",
         "--steps", "4", "--warmup", "1", "--reference"]


@pytest.mark.parametrize("device,n,schedule,graphs",
                         [("cpu", 2, "gpipe", False), ("cpu", 3, "1f1b", False), ("cpu", 4, "1f1b", False),
                          ("gpu", GPU_PES, "gpipe", False), ("gpu", GPU_PES, "1f1b", False),
                          ("gpu", GPU_PES, "gpipe", True), ("gpu", GPU_PES, "1f1b", True)])
def test_pipeline_example(device, n, schedule, graphs, tmp_path):
    torchrun = shutil.which("torchrun")
    if not torchrun or not have("torch"):
        pytest.skip("torch / torchrun is not installed")
    if device == "gpu" and not GPUS:
        pytest.skip("no GPU on this machine")
    args = SMALL + ["--schedule", schedule, "--device", "cpu" if device == "cpu" else "cuda"]
    if n > 3:  # a layer per stage at least (issue 20's 4-stage run, on CPU PEs until 4 GPUs are lent)
        args += ["--layers", str(n)]
    if graphs:  # two eager steps, then the captured one, then two replays
        args += ["--graphs", "--warmup", "2", "--steps", "5"]
    profiled = schedule == "gpipe"  # --profile: an extra step under torch.profiler, under both transports
    if profiled:
        args += ["--profile"]
    e = dict(env(0, "torch", device), TMPDIR=str(tmp_path))  # torchrun's torchelastic_* folders go there
    r = run([torchrun, "--standalone", f"--nproc-per-node={n}", str(EXAMPLE)] + args, e, timeout=400)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "pipeline: ok" in out, out
    assert "losses bit-identical between gshmem and" in out, out
    assert out.count("vs the unsplit model: bit-identical") == 2, out
    if graphs:
        assert any(line.startswith("  gshmem: ") and line.endswith(", CUDA graphs") for line in out.splitlines()), out
    for stage in range(n):
        assert f"stage {stage}: parameters after training bit-identical between gshmem and" in out, out
        if profiled:  # each stage's table under each transport, after the extra step
            for name in ("GshmemTransport", "TorchTransport"):
                assert f"profile: stage {stage}, {name}, one step:" in out, out


def test_pipeline_graphs_need_gpus(tmp_path):
    """--graphs on CPU PEs: refused at once with what to do, before any PE starts."""
    torchrun = shutil.which("torchrun")
    if not torchrun or not have("torch"):
        pytest.skip("torch / torchrun is not installed")
    e = dict(env(0, "torch", "cpu"), TMPDIR=str(tmp_path))
    r = run([torchrun, "--standalone", "--nproc-per-node=2", str(EXAMPLE)] + SMALL +
            ["--device", "cpu", "--graphs", "--warmup", "2", "--steps", "4"], e, timeout=200)
    out = r.stdout + r.stderr
    assert r.returncode != 0, out
    assert "--graphs needs GPUs" in out, out
