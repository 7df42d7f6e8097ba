// CPU PEs' 16-bit floating types (the storage of CUDA's __half and __nv_bfloat16; no CUDA needed) and their
// arithmetic through coll::Float16 (gshmem/coll/algorithms.h): used by the reductions (collectives.cpp) and by
// MoE combine (moe.cpp).
#pragma once
#include <cstdint>
#include <cstring>

#include "gshmem/coll/algorithms.h"

namespace gshmem {
namespace host {
struct Half {
  std::uint16_t bits;
};
struct Bfloat16 {
  std::uint16_t bits;
};
}  // namespace host

// IEEE binary16 through the compiler's _Float16; bfloat16 is a float's upper 16 bits, rounded to nearest even (NaN
// stays a quiet NaN). Both match CUDA's __half2float / __float2half_rn and __bfloat162float / __float2bfloat16_rn,
// so CPU and GPU PEs agree bit for bit.
template <>
struct coll::Float16<host::Half> {
  static constexpr bool value = true;
  static float to_float(host::Half v) {
    _Float16 h;
    std::memcpy(&h, &v.bits, sizeof h);
    return static_cast<float>(h);
  }
  static host::Half from_float(float f) {
    const _Float16 h = static_cast<_Float16>(f);
    host::Half v;
    std::memcpy(&v.bits, &h, sizeof h);
    return v;
  }
};
template <>
struct coll::Float16<host::Bfloat16> {
  static constexpr bool value = true;
  static float to_float(host::Bfloat16 v) {
    const std::uint32_t u = static_cast<std::uint32_t>(v.bits) << 16;
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
  }
  static host::Bfloat16 from_float(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) return {static_cast<std::uint16_t>((u >> 16) | 0x40u)};  // NaN: quiet
    u += 0x7fffu + ((u >> 16) & 1u);
    return {static_cast<std::uint16_t>(u >> 16)};
  }
};

}  // namespace gshmem
