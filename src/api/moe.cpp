// gshmem::host MoE dispatch / combine (docs/moe.md): configuration and argument checks, the symmetric workspace,
// then the one implementation (gshmem/moe/dispatch_combine.h): run by this thread on CPU PEs (scope HostThread,
// environment HostPeerEnv); on GPU PEs launched as a cooperative grid (transport/gpu_moe.cu over
// gshmem/moe/device.cuh), on the program's stream (_on_stream) or on the internal stream and waited for (the
// blocking forms). On GPU PEs the checks that need the token data (indices, bound_m, the dispatch / combine order)
// run on the device, since reading device memory here would synchronise (device.cuh).
#include <array>
#include <cstdint>
#include <cstring>
#include <string>

#include "api/host_env.hpp"
#include "api/host_float16.hpp"
#include "gshmem/coll/algorithms.h"
#include "gshmem/gshmem.hpp"
#include "gshmem/moe/dispatch_combine.h"
#include "runtime/device_state.hpp"
#include "runtime/error.hpp"
#include "runtime/runtime.hpp"
#include "transport/gpu.hpp"

namespace gshmem {
namespace host {

// One MoE all-to-all: its plan, its symmetric workspace, and where it is in the dispatch / combine alternation.
class MoeState {
 public:
  moe::Plan plan{};
  char* ws = nullptr;
  // CPU PEs only: GPU PEs keep the call state in the workspace (moe::kState*), read and advanced by the kernels, so
  // that graph replays count too.
  std::uint64_t calls = 0;        // dispatches made (the call number c of the last one)
  bool dispatched = false;        // a dispatch waits for its combine
  std::uint64_t last_tokens = 0;  // the last dispatch's num_tokens
  bool gpu = false;               // a GPU PE: workspace in GPU memory, stream kernels
  // GPU PEs: buffers this all-to-all already found GPU-readable (the last 16): a call with the buffers of an earlier
  // one skips their cudaPointerGetAttributes (up to 7 a dispatch, about a microsecond each). Device allocations
  // are never reused as ordinary host memory; a host buffer registered (cudaHostRegister), seen here, then
  // unregistered and passed again is not checked again (the kernel then faults instead of this message).
  std::array<const void*, 16> readable{};
  unsigned next_readable = 0;
};

namespace {

const char* type_name(ReduceType t) {
  switch (t) {
    case ReduceType::Float: return "float";
    case ReduceType::Half: return "half";
    case ReduceType::Bfloat16: return "bfloat16";
    default: return "an unsupported type";
  }
}

std::string describe(const MoeConfig& c) {
  return fmt::format("max_num_tokens={} num_experts={} experts_per_token={} hidden_dim={} hidden_dim_bytes={} "
                     "hidden_dim_scale_bytes={} dp_size={}", c.max_num_tokens, c.num_experts, c.experts_per_token,
                     c.hidden_dim, c.hidden_dim_bytes, c.hidden_dim_scale_bytes, c.dp_size);
}

void check_config(const MoeConfig& c, int world, const char* call) {
  if (c.max_num_tokens == 0 || c.max_num_tokens > (1u << 24))
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: max_num_tokens={} must be 1..{}. Fix: pass the largest number of tokens "
         "one data-parallel group dispatches in one call", call, c.max_num_tokens, 1u << 24);
  if (c.num_experts == 0 || c.num_experts > (1u << 24))
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: num_experts={} must be 1..{}. Fix: pass the number of experts over all "
         "PEs", call, c.num_experts, 1u << 24);
  if (c.experts_per_token == 0 || c.experts_per_token > moe::kMaxExpertsPerToken ||
      c.experts_per_token > c.num_experts)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: experts_per_token={} must be 1..min(num_experts={}, {}). Fix: pass the "
         "router's top-k", call, c.experts_per_token, c.num_experts, moe::kMaxExpertsPerToken);
  if (c.hidden_dim_bytes == 0 || c.hidden_dim_bytes % 16 != 0 || c.hidden_dim_scale_bytes % 16 != 0)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: hidden_dim_bytes={} and hidden_dim_scale_bytes={} must be multiples of 16 "
         "(hidden_dim_bytes at least 16), as pplx-kernels requires (rows move as 16-byte vectors on GPUs). Fix: pad "
         "the rows", call, c.hidden_dim_bytes, c.hidden_dim_scale_bytes);
  if (c.hidden_dim_bytes > (std::uint64_t{1} << 40) || c.hidden_dim_scale_bytes > c.hidden_dim_bytes)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: hidden_dim_bytes={} must be at most 2^40 and hidden_dim_scale_bytes={} at "
         "most hidden_dim_bytes (pplx-kernels' limit). Fix: pass the bytes of one token row and of its scale row",
         call, c.hidden_dim_bytes, c.hidden_dim_scale_bytes);
  if (c.hidden_dim == 0 || c.hidden_dim > (std::uint64_t{1} << 32))
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: hidden_dim={} must be 1..2^32 elements. Fix: pass the expert output row's "
         "length in elements", call, c.hidden_dim);
  if (c.dp_size < 1 || world % c.dp_size != 0)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: dp_size={} must divide the number of PEs ({}). Fix: pass the size of a "
         "data-parallel group (PEs that hold the same tokens), 1 for none", call, c.dp_size, world);
  if (c.reserved != 0)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: MoeConfig::reserved={} must be 0. Fix: value-initialise the struct",
         call, c.reserved);
  // The staging areas' size, in 128 bits (make_plan's 64-bit sums would wrap, and a wrapped size would allocate a
  // small workspace the kernels then overrun): dispatch rows 2 * L * G * T of the row's bytes, combine rows
  // 2 * T * K of hidden_dim floats. Above 2^48 bytes no GPU or host holds it.
  using U = unsigned __int128;
  const U L = (c.num_experts + static_cast<std::uint64_t>(world) - 1) / static_cast<std::uint64_t>(world);
  const U staging = 2 * L * static_cast<U>(world / c.dp_size) * c.max_num_tokens *
                        (static_cast<U>(c.hidden_dim_bytes) + c.hidden_dim_scale_bytes + 64) +
                    2 * static_cast<U>(c.max_num_tokens) * c.experts_per_token * (static_cast<U>(c.hidden_dim) * 4 + 16);
  if (staging > (U{1} << 48))
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: the configuration ({}) needs more than 2^48 bytes of symmetric staging "
         "memory on each PE. Fix: lower max_num_tokens, hidden_dim or the row bytes", call, describe(c));
}

MoeState& live(MoeState* s, const char* call) {
  if (!s || !s->ws)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: the MoE all-to-all is null or destroyed. Fix: create it with "
         "gshmem::host::moe_create (gshmem::MoeAllToAll) on every PE first", call);
  return *s;
}

// Every check one PE can make alone (a failure ends the job, so no PE waits for this one).
void check_tokens(const MoeState& s, const std::uint32_t* indices, std::size_t m, const char* call) {
  const moe::Plan& p = s.plan;
  if (m > p.max_tokens)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: num_tokens (bound_m)={} is more than max_num_tokens={}. Fix: dispatch at "
         "most max_num_tokens tokens per call, or create the all-to-all with a larger max_num_tokens", call, m,
         p.max_tokens);
  if (m != 0 && !indices)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: indices is NULL for {} tokens. Fix: pass indices [num_tokens][{}]", call,
         m, p.experts_per_token);
  const std::uint64_t K = p.experts_per_token;
  for (std::uint64_t i = 0; i < m; ++i)
    for (std::uint64_t k = 0; k < K; ++k) {
      const std::uint32_t e = indices[i * K + k];
      if (e >= p.num_experts)
        fail(GSHMEM_ERROR_INVALID_VALUE, "{}: indices[{}][{}]={} is not an expert (0..{}). Fix: pass expert ids "
             "below num_experts", call, i, k, e, p.num_experts - 1);
      for (std::uint64_t k2 = 0; k2 < k; ++k2)
        if (indices[i * K + k2] == e)
          fail(GSHMEM_ERROR_INVALID_VALUE, "{}: token {} names expert {} twice (indices[{}][{}] and [{}][{}]). "
               "Fix: route each token to distinct experts (a top-k does)", call, i, e, i, k2, i, k);
    }
}

template <typename TY, typename TO>
void combine_as(MoeState& s, void* out, const std::uint32_t* indices, const float* weights, const void* y,
                std::size_t m, const char* call) {
  HostPeerEnv env{Runtime::get(call)};
  moe::combine<coll::HostThread, TY, TO>(env, s.plan, s.ws, s.calls, static_cast<TO*>(out), indices, weights,
                                         static_cast<const TY*>(y), m, call);
}

template <typename TY>
void combine_y(MoeState& s, ReduceType out_type, void* out, const std::uint32_t* indices, const float* weights,
               const void* y, std::size_t m, const char* call) {
  switch (out_type) {
    case ReduceType::Float: return combine_as<TY, float>(s, out, indices, weights, y, m, call);
    case ReduceType::Half: return combine_as<TY, Half>(s, out, indices, weights, y, m, call);
    default: return combine_as<TY, Bfloat16>(s, out, indices, weights, y, m, call);
  }
}

bool combine_type(ReduceType t) {
  return t == ReduceType::Float || t == ReduceType::Half || t == ReduceType::Bfloat16;
}

}  // namespace

MoeState* moe_create(const MoeConfig& config, const char* call) {
  Runtime& r = Runtime::get(call);
  check_config(config, r.n_pes, call);
  MoeState* s = new MoeState;
  s->gpu = r.mode == Mode::Gpu;
  s->plan = moe::make_plan(config.max_num_tokens, config.num_experts, config.experts_per_token, config.hidden_dim,
                           config.hidden_dim_bytes, config.hidden_dim_scale_bytes, config.dp_size, r.my_pe, r.n_pes);
  try {
    // The workspace, then this PE's configuration (read by the others once, below). malloc is collective and
    // checks that the sizes agree.
    s->ws = static_cast<char*>(host::malloc(s->plan.bytes + sizeof(MoeConfig), 16, true, call));
    if (!s->ws)
      fail(GSHMEM_ERROR_OUT_OF_MEMORY, "{}: the symmetric workspace of {} bytes could not be allocated. Fix: "
           "lower max_num_tokens or raise GSHMEM_MAX_HEAP_SIZE", call, s->plan.bytes);
    // Through the host API's put / get, which reach GPU memory too (the workspace is there on GPU PEs).
    putmem(s->ws + s->plan.bytes, &config, sizeof config, r.my_pe, false, call);
    barrier(GSHMEM_TEAM_WORLD, true, call);  // every PE zeroed its workspace before any PE writes into it
    // Every PE compares its configuration with every other's, so all of them fail where two differ.
    for (int pe = 0; pe < r.n_pes; ++pe) {
      MoeConfig other;
      getmem(&other, s->ws + s->plan.bytes, sizeof other, pe, false, call);
      if (std::memcmp(&other, &config, sizeof config) != 0)
        fail(GSHMEM_ERROR_MISMATCH, "{}: the PEs created the MoE all-to-all with different configurations: this PE "
             "(PE {}) with {}, PE {} with {}. Fix: pass the same MoeConfig on every PE", call, r.my_pe,
             describe(config), pe, describe(other));
    }
  } catch (...) {
    // Every PE fails the same way here (each compares its configuration with all the others), so every PE frees
    // its workspace and the symmetric heap stays aligned. A second failure inside free (a dead peer) must not
    // hide the first.
    if (s->ws) {
      try {
        host::free(s->ws);
      } catch (...) {
      }
    }
    delete s;
    throw;
  }
  return s;
}

void moe_destroy(MoeState* s, const char* call) {
  MoeState& st = live(s, call);
  Runtime& r = Runtime::get(call);
  // GPU PEs: this PE's dispatch / combine kernels still queued on the program's streams finish first (they use the
  // workspace); its peers' finish before they reach the barrier.
  if (st.gpu) gpu::synchronize_device(r.gpu, call);
  barrier(GSHMEM_TEAM_WORLD, true, call);  // no PE still writes into another's workspace (done flags included)
  host::free(st.ws);
  st.ws = nullptr;
  delete s;
}

namespace {

// What dispatch and its stream form check before any data moves; the rest (indices, the order of calls) is the
// CPU path's (check_tokens, the alternation) or the device's (device.cuh) on GPU PEs.
void check_dispatch_buffers(const MoeState& st, const std::int32_t* out_expert_num_tokens, const void* out_expert_x,
                            const void* out_expert_x_scale, const void* dp_x, const void* dp_x_scale,
                            std::size_t num_tokens, const char* call) {
  const moe::Plan& p = st.plan;
  if (!out_expert_num_tokens || !out_expert_x || (num_tokens != 0 && !dp_x))
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: out_expert_num_tokens, out_expert_x and (with tokens) dp_x must not be "
         "NULL. Fix: pass the buffers", call);
  if ((p.scale_bytes != 0) != (out_expert_x_scale != nullptr) ||
      (num_tokens != 0 && (p.scale_bytes != 0) != (dp_x_scale != nullptr)))
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: hidden_dim_scale_bytes={} but dp_x_scale={} and out_expert_x_scale={}. "
         "Fix: pass both scale buffers exactly when the all-to-all was created with scales", call, p.scale_bytes,
         dp_x_scale, out_expert_x_scale);
}

void check_combine_buffers(const MoeState& st, const void* out_tokens, ReduceType out_type, const float* weights,
                           const void* expert_y, ReduceType y_type, std::size_t num_tokens, const char* call) {
  if (!combine_type(out_type) || !combine_type(y_type))
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: out_tokens is {} and expert_y is {}; combine takes float, half or "
         "bfloat16. Fix: pass ReduceType::Float, Half or Bfloat16", call, type_name(out_type), type_name(y_type));
  if (num_tokens != 0 && (!out_tokens || !weights))
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: out_tokens and weights must not be NULL for {} tokens. Fix: pass them",
         call, num_tokens);
  if (!expert_y && st.plan.my_local_experts > 0)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: expert_y is NULL. Fix: pass the experts' outputs [{}][{}][{}]", call,
         st.plan.local_experts, st.plan.groups * st.plan.max_tokens, st.plan.hidden_dim);
}

// GPU PEs: the kernel reads and writes these, so each must be GPU-readable (device, managed or pinned memory).
void check_device_buffer(Runtime& r, MoeState& st, const void* p, const char* name, const char* call) {
  if (!p) return;
  for (const void* q : st.readable)
    if (q == p) return;
  if (gpu::device_accessible(r.gpu, p)) {
    st.readable[st.next_readable++ % st.readable.size()] = p;
    return;
  }
  fail(GSHMEM_ERROR_INVALID_VALUE, "{}: {}={} is ordinary host memory, which the MoE kernel cannot reach on a GPU "
         "PE. Fix: pass GPU memory (cudaMalloc, a CUDA tensor) or pinned memory", call, name, p);
}

// GPU PEs: num_tokens rows passed, at most T (bound_m, the live count on the device, is checked there).
void check_rows(const MoeState& st, std::size_t num_tokens, const std::uint32_t* indices, const char* call) {
  if (num_tokens > st.plan.max_tokens)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: num_tokens={} is more than max_num_tokens={}. Fix: dispatch at most "
         "max_num_tokens tokens per call, or create the all-to-all with a larger max_num_tokens", call, num_tokens,
         st.plan.max_tokens);
  if (num_tokens != 0 && !indices)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: indices is NULL for {} tokens. Fix: pass indices [num_tokens][{}]", call,
         num_tokens, st.plan.experts_per_token);
}

void need_gpu(Runtime& r, const char* call) {
  if (r.mode != Mode::Gpu)
    fail(GSHMEM_ERROR_NOT_SUPPORTED, "{}: this PE is a CPU PE ({}), and stream-ordered calls need a GPU PE. Fix: "
         "use the blocking dispatch / combine on CPU PEs", call, r.cpu_reason);
}

// GPU PEs, both forms: blocking: on the internal stream, waited for; else on `s` (0 is CUDA's default stream).
void dispatch_gpu(Runtime& r, MoeState& st, std::int32_t* out_expert_num_tokens, void* out_expert_x,
                  void* out_expert_x_scale, const void* dp_x, const void* dp_x_scale, const std::uint32_t* indices,
                  std::size_t num_tokens, const std::uint32_t* bound_m, gshmem_stream_t s, bool blocking,
                  const char* call) {
  check_rows(st, num_tokens, indices, call);
  check_dispatch_buffers(st, out_expert_num_tokens, out_expert_x, out_expert_x_scale, dp_x, dp_x_scale, num_tokens,
                         call);
  check_device_buffer(r, st, out_expert_num_tokens, "out_expert_num_tokens", call);
  check_device_buffer(r, st, out_expert_x, "out_expert_x", call);
  check_device_buffer(r, st, out_expert_x_scale, "out_expert_x_scale", call);
  check_device_buffer(r, st, dp_x, "dp_x", call);
  check_device_buffer(r, st, dp_x_scale, "dp_x_scale", call);
  check_device_buffer(r, st, indices, "indices", call);
  check_device_buffer(r, st, bound_m, "bound_m", call);
  if (blocking) gpu::quiet(r.gpu);  // the program's earlier nbi operations from the host are complete first
  gpu::moe_dispatch_on_stream(r.gpu, device_state::current(), st.plan, st.ws, out_expert_num_tokens, out_expert_x,
                              out_expert_x_scale, dp_x, dp_x_scale, indices, num_tokens, bound_m, s, blocking, call);
}

void combine_gpu(Runtime& r, MoeState& st, void* out_tokens, ReduceType out_type, const std::uint32_t* indices,
                 const float* weights, const void* expert_y, ReduceType y_type, std::size_t num_tokens,
                 const std::uint32_t* bound_m, gshmem_stream_t s, bool blocking, const char* call) {
  check_rows(st, num_tokens, indices, call);
  check_combine_buffers(st, out_tokens, out_type, weights, expert_y, y_type, num_tokens, call);
  check_device_buffer(r, st, out_tokens, "out_tokens", call);
  check_device_buffer(r, st, indices, "indices", call);
  check_device_buffer(r, st, weights, "weights", call);
  check_device_buffer(r, st, expert_y, "expert_y", call);
  check_device_buffer(r, st, bound_m, "bound_m", call);
  if (blocking) gpu::quiet(r.gpu);
  gpu::moe_combine_on_stream(r.gpu, device_state::current(), st.plan, st.ws, out_tokens,
                             static_cast<gpu::ReduceType>(out_type), indices, weights, expert_y,
                             static_cast<gpu::ReduceType>(y_type), num_tokens, bound_m, s, blocking, call);
}
static_assert(static_cast<int>(ReduceType::Float) == static_cast<int>(gpu::ReduceType::Float) &&
                  static_cast<int>(ReduceType::Half) == static_cast<int>(gpu::ReduceType::Half) &&
                  static_cast<int>(ReduceType::Bfloat16) == static_cast<int>(gpu::ReduceType::Bfloat16),
              "the host layer's and the GPU transport's element types are one list");

}  // namespace

void moe_dispatch(MoeState* s, std::int32_t* out_expert_num_tokens, void* out_expert_x, void* out_expert_x_scale,
                  const void* dp_x, const void* dp_x_scale, const std::uint32_t* indices, std::size_t num_tokens,
                  const char* call) {
  MoeState& st = live(s, call);
  Runtime& r = Runtime::get(call);
  if (st.gpu)
    return dispatch_gpu(r, st, out_expert_num_tokens, out_expert_x, out_expert_x_scale, dp_x, dp_x_scale, indices,
                        num_tokens, nullptr, nullptr, true, call);
  const moe::Plan& p = st.plan;
  if (st.dispatched)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: dispatch called twice without a combine between (call {}). Fix: call "
         "combine after each dispatch: the two share staging buffers", call, st.calls);
  check_tokens(st, indices, num_tokens, call);
  check_dispatch_buffers(st, out_expert_num_tokens, out_expert_x, out_expert_x_scale, dp_x, dp_x_scale, num_tokens,
                         call);
  HostPeerEnv env{r};
  ++st.calls;
  st.dispatched = true;
  st.last_tokens = num_tokens;
  moe::dispatch<coll::HostThread>(env, p, st.ws, st.calls, out_expert_num_tokens, static_cast<char*>(out_expert_x),
                                  static_cast<char*>(out_expert_x_scale), static_cast<const char*>(dp_x),
                                  static_cast<const char*>(dp_x_scale), indices, num_tokens, call);
}

void moe_dispatch_on_stream(MoeState* s, std::int32_t* out_expert_num_tokens, void* out_expert_x,
                            void* out_expert_x_scale, const void* dp_x, const void* dp_x_scale,
                            const std::uint32_t* indices, std::size_t num_tokens, const std::uint32_t* bound_m,
                            gshmem_stream_t stream, const char* call) {
  MoeState& st = live(s, call);
  Runtime& r = Runtime::get(call);
  need_gpu(r, call);
  dispatch_gpu(r, st, out_expert_num_tokens, out_expert_x, out_expert_x_scale, dp_x, dp_x_scale, indices, num_tokens,
               bound_m, stream, false, call);
}

void moe_combine(MoeState* s, void* out_tokens, ReduceType out_type, const std::uint32_t* indices,
                 const float* weights, const void* expert_y, ReduceType y_type, std::size_t num_tokens,
                 const char* call) {
  MoeState& st = live(s, call);
  Runtime& r = Runtime::get(call);
  if (st.gpu)
    return combine_gpu(r, st, out_tokens, out_type, indices, weights, expert_y, y_type, num_tokens, nullptr, nullptr,
                       true, call);
  if (!st.dispatched)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: combine without a dispatch before it. Fix: call dispatch, then combine "
         "with the experts' outputs", call);
  if (num_tokens != st.last_tokens)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: num_tokens (bound_m)={} but the dispatch before had {}. Fix: combine "
         "the tokens that were dispatched (same bound_m, indices)", call, num_tokens, st.last_tokens);
  check_combine_buffers(st, out_tokens, out_type, weights, expert_y, y_type, num_tokens, call);
  check_tokens(st, indices, num_tokens, call);
  st.dispatched = false;
  switch (y_type) {
    case ReduceType::Float: return combine_y<float>(st, out_type, out_tokens, indices, weights, expert_y,
                                                    num_tokens, call);
    case ReduceType::Half: return combine_y<Half>(st, out_type, out_tokens, indices, weights, expert_y,
                                                  num_tokens, call);
    default: return combine_y<Bfloat16>(st, out_type, out_tokens, indices, weights, expert_y, num_tokens, call);
  }
}

void moe_combine_on_stream(MoeState* s, void* out_tokens, ReduceType out_type, const std::uint32_t* indices,
                           const float* weights, const void* expert_y, ReduceType y_type, std::size_t num_tokens,
                           const std::uint32_t* bound_m, gshmem_stream_t stream, const char* call) {
  MoeState& st = live(s, call);
  Runtime& r = Runtime::get(call);
  need_gpu(r, call);
  combine_gpu(r, st, out_tokens, out_type, indices, weights, expert_y, y_type, num_tokens, bound_m, stream, false,
              call);
}

}  // namespace host
}  // namespace gshmem
