"""One PE of test_device_code.py: device code from Python calling NVSHMEM's device API on gshmem, no -rdc.

Argument "torch_ext": a torch C++/CUDA extension built with torch.utils.cpp_extension.load_inline (nvcc; the
extension registers its device state itself when it loads). "cupy_nvcc" / "cupy_nvrtc": the same kernel compiled
at run time by CuPy's RawModule (nvcc, or NVRTC) and registered with gshmem.core.module_init. "cuda_core": compiled
by cuda.core's Program (NVRTC) into a cubin, loaded as a CUlibrary, registered with module_init.

The kernel: each PE puts its block of fresh random ints into the next PE's dst with a signal (put_signal_nbi),
waits for its own signal, and adds 1 to every element it received; the host checks the result exactly.
"""
import os
import sys

import numpy as np

import gshmem
import gshmem.core as nv

SEED = int(os.environ["GSHMEM_TEST_SEED"])
N = 4096

KERNEL = r"""
#include <nvshmem.h>
#include <nvshmemx.h>

extern "C" __global__ void ring_signal(int* dst, const int* src, int n, unsigned long long* sig,
                                       unsigned long long round) {
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  if (threadIdx.x == 0) {
    nvshmem_int_put_signal_nbi(dst, src, n, (uint64_t*)sig, round, NVSHMEM_SIGNAL_SET, (me + 1) % npes);
    nvshmem_signal_wait_until((uint64_t*)sig, NVSHMEM_CMP_EQ, round);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) dst[i] += 1;
}
"""

LAUNCHER = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
void ring(torch::Tensor dst, torch::Tensor src, torch::Tensor sig, int64_t round) {
  auto stream = c10::cuda::getCurrentCUDAStream();
  ring_signal<<<1, 256, 0, stream>>>(dst.data_ptr<int>(), src.data_ptr<int>(), (int)src.numel(),
                                     (unsigned long long*)sig.data_ptr<int64_t>(), (unsigned long long)round);
}
"""


def data(pe, rnd):
    return np.random.default_rng([SEED, pe, rnd]).integers(-1000, 1000, size=N).astype(np.int32)


def main():
    mode = sys.argv[1]
    import torch
    nv.init()
    me, n = nv.my_pe(), nv.n_pes()
    prv = (me - 1) % n
    dst = nv.tensor((N,), dtype=torch.int32)
    src = nv.tensor((N,), dtype=torch.int32)
    sig = nv.tensor((1,), dtype=torch.int64)
    sig.zero_()
    if mode == "torch_ext":
        from torch.utils.cpp_extension import load_inline
        lib = os.path.dirname(gshmem.get_library())
        ext = load_inline(
            name="gshmem_ring_ext", cpp_sources="void ring(torch::Tensor, torch::Tensor, torch::Tensor, int64_t);", cuda_sources=KERNEL + LAUNCHER, functions=["ring"],
            extra_include_paths=[gshmem.get_include(), gshmem.get_nvshmem_include()],
            extra_ldflags=[gshmem.get_library(), f"-Wl,-rpath,{lib}"],
            extra_cuda_cflags=["-std=c++17"], build_directory=os.environ["GSHMEM_TEST_BUILD_DIR"] + f"/{me}",
            verbose=False)

        def launch(rnd):
            ext.ring(dst, src, sig, rnd)
    elif mode == "cuda_core":
        try:
            from cuda.core import Device, LaunchConfig, Program, ProgramOptions
            from cuda.core import launch as cuda_launch
        except ImportError:
            from cuda.core.experimental import Device, LaunchConfig, Program, ProgramOptions
            from cuda.core.experimental import launch as cuda_launch
        dev = Device()
        dev.set_current()
        includes = [o[2:] for o in gshmem.nvrtc_options() if o.startswith("-I")]
        prog = Program(KERNEL, code_type="c++",
                       options=ProgramOptions(std="c++17", arch=f"sm_{dev.arch}", include_path=includes))
        mod = prog.compile("cubin")  # a cuda.core ObjectCode: a CUlibrary once loaded
        kernel = mod.get_kernel("ring_signal")
        nv.module_init(mod)
        stream = dev.create_stream(torch.cuda.current_stream())  # torch's stream, by __cuda_stream__
        config = LaunchConfig(grid=1, block=256)

        def launch(rnd):
            cuda_launch(stream, config, kernel, np.intp(dst.data_ptr()), np.intp(src.data_ptr()), np.int32(N),
                        np.intp(sig.data_ptr()), np.uint64(rnd))
    else:
        import cupy
        backend = "nvcc" if mode == "cupy_nvcc" else "nvrtc"
        mod = cupy.RawModule(code=KERNEL, backend=backend, options=tuple(gshmem.nvrtc_options()))
        fn = mod.get_function("ring_signal")  # compiles and loads the module
        nv.module_init(mod)
        stream = cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)

        def launch(rnd):
            with stream:
                fn((1,), (256,), (cupy.intp(dst.data_ptr()), cupy.intp(src.data_ptr()), np.int32(N),
                                  cupy.intp(sig.data_ptr()), np.uint64(rnd)))

    for rnd in (1, 2, 3):
        src.copy_(torch.from_numpy(data(me, rnd)))
        dst.fill_(-7)  # poison
        nv.barrier_all()  # every PE's dst is free before anyone writes it (stream-ordered)
        launch(rnd)
        nv.barrier_all()
        torch.cuda.current_stream().synchronize()
        got = dst.cpu().numpy()
        assert np.array_equal(got, data(prv, rnd) + 1), (mode, rnd, got[:8], data(prv, rnd)[:8] + 1)
    if mode != "torch_ext":
        torch.cuda.synchronize()
        nv.module_finalize(mod)
    for t in (sig, src, dst):
        nv.free_tensor(t)
    nv.finalize()
    print(f"PASS pe {me}/{n} {mode}", flush=True)


if __name__ == "__main__":
    main()
