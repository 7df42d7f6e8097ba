// How the library's stream kernels start and are launched (kernels on the user's stream: p_on_stream,
// signal_op_on_stream, the signal and typed waits, the stream barrier; the MoE kernels as cooperative grids).
// Internal to transport/.
//
// Where the GPU and the kernel's code allow it (compute capability 9.0+, the code compiled for 9.0+), a stream
// kernel is launched with programmatic stream serialization: the GPU processes its launch while the previous kernel
// on the stream still runs, and the kernel's first statement, stream_kernel_entry(), waits (griddepcontrol.wait)
// until every earlier kernel on the stream has completed and its memory operations are visible. So stream order
// is kept, and what is saved is the gap between two kernels: back-to-back empty kernels 3.0-3.1 -> 2.4-2.5 us,
// a stream barrier of two 4.2-4.3 -> 3.8 us on one H200 (bench/NOTES.md entry 11). The library's kernels never
// trigger their dependents early, so a user kernel launched after one with the same attribute starts as usual.
// GSHMEM_STREAM_OVERLAP=0 launches them plainly.
#pragma once

#include <cuda_runtime.h>

#include <utility>

namespace gshmem::gpu {

// First statement of every kernel launched by launch_stream_kernel.
__device__ __forceinline__ void stream_kernel_entry() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// `blocks` blocks of `threads` on `s` with launch attribute `attr` (none when null).
template <typename... P, typename... A>
cudaError_t launch_grid_with(const cudaLaunchAttribute* attr, void (*kernel)(P...), unsigned blocks,
                             unsigned threads, cudaStream_t s, A&&... args) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(threads);
  cfg.stream = s;
  cudaLaunchAttribute copy{};
  if (attr != nullptr) copy = *attr;
  cfg.attrs = &copy;
  cfg.numAttrs = attr != nullptr ? 1 : 0;
  return cudaLaunchKernelEx(&cfg, kernel, std::forward<A>(args)...);
}
// `blocks` blocks of `threads` on `s`; `overlap`: with programmatic stream serialization (Context's overlap_launch).
template <typename... P, typename... A>
cudaError_t launch_stream_grid(bool overlap, void (*kernel)(P...), unsigned blocks, unsigned threads, cudaStream_t s,
                               A&&... args) {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  return launch_grid_with(overlap ? &attr : nullptr, kernel, blocks, threads, s, std::forward<A>(args)...);
}
// One block of `threads` on `s`.
template <typename... P, typename... A>
cudaError_t launch_stream_kernel(bool overlap, void (*kernel)(P...), unsigned threads, cudaStream_t s, A&&... args) {
  return launch_stream_grid(overlap, kernel, 1, threads, s, std::forward<A>(args)...);
}

// `blocks` blocks of `threads` on `s`, launched cooperatively (cudaLaunchAttributeCooperative: every block
// resident at once, so the kernel may wait at grid-wide barriers; the caller keeps `blocks` within the occupancy
// limit: the occupancy API). Capturable in a CUDA graph. Without programmatic stream serialization: a
// cooperative grid that started beside the previous kernel could find too few free SMs.
template <typename... P, typename... A>
cudaError_t launch_cooperative_grid(void (*kernel)(P...), unsigned blocks, unsigned threads, cudaStream_t s,
                                    A&&... args) {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeCooperative;
  attr.val.cooperative = 1;
  return launch_grid_with(&attr, kernel, blocks, threads, s, std::forward<A>(args)...);
}

}  // namespace gshmem::gpu
