// The C API of MoE dispatch / combine (gshmem.h, gshmemx_moe_*): each call is the host layer's (api/moe.cpp) with
// its error turned into a status and gshmemx_last_error(). The handle is the host layer's MoeState.
#include <cstddef>
#include <cstring>

#include "api/guard.hpp"
#include "gshmem/gshmem.h"
#include "gshmem/gshmem.hpp"
#include "runtime/error.hpp"

using namespace gshmem;
using gshmem::api::status_on_error;

static_assert(sizeof(gshmemx_moe_config_t) == sizeof(host::MoeConfig) &&
                  offsetof(gshmemx_moe_config_t, dp_size) == offsetof(host::MoeConfig, dp_size) &&
                  offsetof(gshmemx_moe_config_t, hidden_dim_scale_bytes) ==
                      offsetof(host::MoeConfig, hidden_dim_scale_bytes),
              "gshmemx_moe_config_t is gshmem::host::MoeConfig, field for field");
static_assert(GSHMEMX_MOE_FLOAT == static_cast<int>(host::ReduceType::Float) &&
                  GSHMEMX_MOE_HALF == static_cast<int>(host::ReduceType::Half) &&
                  GSHMEMX_MOE_BFLOAT16 == static_cast<int>(host::ReduceType::Bfloat16),
              "the C type codes are host::ReduceType's values");

namespace {
host::MoeState* state_of(gshmemx_moe_t m) { return reinterpret_cast<host::MoeState*>(m); }
}  // namespace

int gshmemx_moe_create(const gshmemx_moe_config_t* config, gshmemx_moe_t* moe) {
  return status_on_error("gshmemx_moe_create", [&] {
    if (!config || !moe)
      fail(GSHMEM_ERROR_INVALID_VALUE, "gshmemx_moe_create: config={} and moe={}; neither may be NULL. Fix: pass "
           "the configuration and where to store the handle", static_cast<const void*>(config),
           static_cast<void*>(moe));
    host::MoeConfig c;
    std::memcpy(&c, config, sizeof c);
    *moe = reinterpret_cast<gshmemx_moe_t>(host::moe_create(c, "gshmemx_moe_create"));
  });
}

int gshmemx_moe_destroy(gshmemx_moe_t moe) {
  return status_on_error("gshmemx_moe_destroy", [&] { host::moe_destroy(state_of(moe), "gshmemx_moe_destroy"); });
}

int gshmemx_moe_dispatch(gshmemx_moe_t moe, int32_t* out_expert_num_tokens, void* out_expert_x,
                         void* out_expert_x_scale, const void* dp_x, const void* dp_x_scale, const uint32_t* indices,
                         size_t num_tokens) {
  return status_on_error("gshmemx_moe_dispatch", [&] {
    host::moe_dispatch(state_of(moe), out_expert_num_tokens, out_expert_x, out_expert_x_scale, dp_x, dp_x_scale,
                       indices, num_tokens, "gshmemx_moe_dispatch");
  });
}

int gshmemx_moe_combine(gshmemx_moe_t moe, void* out_tokens, int out_type, const uint32_t* indices,
                        const float* weights, const void* expert_y, int y_type, size_t num_tokens) {
  return status_on_error("gshmemx_moe_combine", [&] {
    host::moe_combine(state_of(moe), out_tokens, static_cast<host::ReduceType>(out_type), indices, weights, expert_y,
                      static_cast<host::ReduceType>(y_type), num_tokens, "gshmemx_moe_combine");
  });
}

int gshmemx_moe_dispatch_on_stream(gshmemx_moe_t moe, int32_t* out_expert_num_tokens, void* out_expert_x,
                                   void* out_expert_x_scale, const void* dp_x, const void* dp_x_scale,
                                   const uint32_t* indices, size_t num_tokens, const uint32_t* bound_m,
                                   gshmem_stream_t stream) {
  return status_on_error("gshmemx_moe_dispatch_on_stream", [&] {
    host::moe_dispatch_on_stream(state_of(moe), out_expert_num_tokens, out_expert_x, out_expert_x_scale, dp_x,
                                 dp_x_scale, indices, num_tokens, bound_m, stream, "gshmemx_moe_dispatch_on_stream");
  });
}

int gshmemx_moe_combine_on_stream(gshmemx_moe_t moe, void* out_tokens, int out_type, const uint32_t* indices,
                                  const float* weights, const void* expert_y, int y_type, size_t num_tokens,
                                  const uint32_t* bound_m, gshmem_stream_t stream) {
  return status_on_error("gshmemx_moe_combine_on_stream", [&] {
    host::moe_combine_on_stream(state_of(moe), out_tokens, static_cast<host::ReduceType>(out_type), indices, weights,
                                expert_y, static_cast<host::ReduceType>(y_type), num_tokens, bound_m, stream,
                                "gshmemx_moe_combine_on_stream");
  });
}
