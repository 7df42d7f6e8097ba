// RMA correctness kernel and host driver, instantiated per operation set (Ops) by device_api_rma_*.cu.
// Ops: type; name; kP (has p/g), kSignal (put_signal), kI (iput/iget), kICoop (iput/iget in warp/block scope);
// p, g, and templates put/get/put_nbi/get_nbi/iput/iget/put_signal/put_signal_nbi<Coop>(h, ...).
#pragma once
#include <cstring>
#include <string>

#include "device_api.hpp"

namespace gt {

enum RmaOp { OP_P, OP_G, OP_PUT, OP_GET, OP_PUT_NBI, OP_GET_NBI, OP_IPUT, OP_IGET, OP_PUT_SIGNAL, OP_PUT_SIGNAL_NBI,
             OP_COUNT };
inline const char* rma_op_name(int op) {
  static const char* names[] = {"p", "g", "put", "get", "put_nbi", "get_nbi", "iput", "iget", "put_signal",
                                "put_signal_nbi"};
  return names[op];
}
inline bool rma_is_put(int op) {
  return op == OP_P || op == OP_PUT || op == OP_PUT_NBI || op == OP_IPUT || op == OP_PUT_SIGNAL ||
         op == OP_PUT_SIGNAL_NBI;
}

struct RmaCase {
  int op;
  int pe;          // the peer: target of puts, source of gets
  char* src;       // element 0 of the source (offset applied)
  char* dst;       // element 0 of the destination (offset applied)
  size_t n;        // elements
  long long ds, ss;  // strides (iput/iget; 1 otherwise)
  uint64_t* sig;
};

template <typename Ops, typename C>
__global__ void rma_kernel(gshmem::DeviceHandle h, RmaCase c) {
  using T = typename Ops::type;
  const size_t groups = group_count<C>(), g = group_index<C>();
  const size_t chunk = (c.n + groups - 1) / groups;
  const size_t lo = g * chunk < c.n ? g * chunk : c.n;
  const size_t hi = lo + chunk < c.n ? lo + chunk : c.n;
  const size_t cnt = hi - lo;
  T* dst = reinterpret_cast<T*>(c.dst);
  const T* src = reinterpret_cast<const T*>(c.src);
  switch (c.op) {
    case OP_P:
      if constexpr (Ops::kP) for (size_t i = lo; i < hi; ++i) Ops::p(h, dst + i, src[i], c.pe);
      break;
    case OP_G:
      if constexpr (Ops::kP) for (size_t i = lo; i < hi; ++i) dst[i] = Ops::g(h, src + i, c.pe);
      break;
    case OP_PUT: Ops::template put<C>(h, dst + lo, src + lo, cnt, c.pe); break;
    case OP_GET: Ops::template get<C>(h, dst + lo, src + lo, cnt, c.pe); break;
    case OP_PUT_NBI: Ops::template put_nbi<C>(h, dst + lo, src + lo, cnt, c.pe); gshmem::dev::quiet(); break;
    case OP_GET_NBI: Ops::template get_nbi<C>(h, dst + lo, src + lo, cnt, c.pe); gshmem::dev::quiet(); break;
    case OP_IPUT:
      if constexpr (Ops::kI)
        Ops::template iput<C>(h, dst + lo * c.ds, src + lo * c.ss, c.ds, c.ss, cnt, c.pe);
      break;
    case OP_IGET:
      if constexpr (Ops::kI)
        Ops::template iget<C>(h, dst + lo * c.ds, src + lo * c.ss, c.ds, c.ss, cnt, c.pe);
      break;
    case OP_PUT_SIGNAL:
      if constexpr (Ops::kSignal)
        Ops::template put_signal<C>(h, dst + lo, src + lo, cnt, c.sig, 1, GSHMEM_SIGNAL_ADD, c.pe);
      break;
    case OP_PUT_SIGNAL_NBI:
      if constexpr (Ops::kSignal) {
        Ops::template put_signal_nbi<C>(h, dst + lo, src + lo, cnt, c.sig, 1, GSHMEM_SIGNAL_ADD, c.pe);
        gshmem::dev::quiet();
      }
      break;
    default: break;
  }
}

struct RmaBuffers {
  char* src;
  char* dst;
  uint64_t* sig;
  static constexpr size_t kBytes = 32 * 1024;
};

inline uint64_t& rma_case_counter() {
  static uint64_t n = 0;
  return n;
}

template <typename Ops, typename C>
void rma_launch(const gshmem::DeviceHandle& h, const RmaCase& rc) {
  rma_kernel<Ops, C><<<2, 64>>>(h, rc);
  GT_CUDA(cudaGetLastError());
}

// Every operation of Ops in every scope it has: fresh data per case, poisoned destination, exact comparison of
// the whole destination buffer (so writes outside the transfer are caught too).
template <typename Ops>
void rma_suite(Ctx& c, const RmaBuffers& b) {
  using T = typename Ops::type;
  constexpr size_t E = sizeof(T);
  if (!c.sample(4)) return;
  const gshmem::DeviceHandle h = gshmem::device_handle();
  const int right = (c.me + 1) % c.n, left = (c.me + c.n - 1) % c.n;
  std::vector<unsigned char> got(RmaBuffers::kBytes);
  for (int op = 0; op < OP_COUNT; ++op) {
    if ((op == OP_P || op == OP_G) && !Ops::kP) continue;
    if ((op == OP_IPUT || op == OP_IGET) && !Ops::kI) continue;
    if ((op == OP_PUT_SIGNAL || op == OP_PUT_SIGNAL_NBI) && !Ops::kSignal) continue;
    for (int scope = 0; scope < 3; ++scope) {
      if (scope > 0 && (op == OP_P || op == OP_G)) continue;
      if (scope > 0 && (op == OP_IPUT || op == OP_IGET) && !Ops::kICoop) continue;
      const uint64_t id = ++rma_case_counter();
      auto rng = c.case_rng(id);
      const size_t n = 1 + rng() % 300;
      const bool strided = op == OP_IPUT || op == OP_IGET;
      const long long ds = strided ? 1 + static_cast<long long>(rng() % 3) : 1;
      const long long ss = strided ? 1 + static_cast<long long>(rng() % 3) : 1;
      const size_t off = rng() % 3;  // elements: moves the copy off 16-byte alignment
      const unsigned char poison = static_cast<unsigned char>(0xA5 ^ (id * 0x3B));
      const auto mine = c.data(c.me, id, RmaBuffers::kBytes);
      GT_CUDA(cudaMemcpy(b.src, mine.data(), RmaBuffers::kBytes, cudaMemcpyHostToDevice));
      GT_CUDA(cudaMemset(b.dst, poison, RmaBuffers::kBytes));
      GT_CUDA(cudaMemset(b.sig, 0, sizeof(uint64_t)));
      GT_CUDA(cudaDeviceSynchronize());
      gshmem_barrier_all();
      const bool put = rma_is_put(op);
      RmaCase rc{op, right, b.src + off * E, b.dst + off * E, n, ds, ss, b.sig};
      if (scope == 0) rma_launch<Ops, gshmem::dev::Thread>(h, rc);
      else if (scope == 1) rma_launch<Ops, gshmem::dev::Warp>(h, rc);
      else rma_launch<Ops, gshmem::dev::Block>(h, rc);
      GT_CUDA(cudaDeviceSynchronize());
      gshmem_barrier_all();
      // A put came from the left neighbour (its source); a get read the right neighbour's source.
      const auto theirs = c.data(put ? left : right, id, RmaBuffers::kBytes);
      std::vector<unsigned char> want(RmaBuffers::kBytes, poison);
      for (size_t i = 0; i < n; ++i)
        std::memcpy(&want[(off + i * ds) * E], &theirs[(off + i * ss) * E], E);
      GT_CUDA(cudaMemcpy(got.data(), b.dst, RmaBuffers::kBytes, cudaMemcpyDeviceToHost));
      char what[256];
      size_t bad = 0;
      while (bad < got.size() && got[bad] == want[bad]) ++bad;
      std::snprintf(what, sizeof what, "%s %s %s: %zu elements (offset %zu, strides %lld/%lld): byte %zu is 0x%02x, "
                    "expected 0x%02x", Ops::name, rma_op_name(op), scope_name(scope), n, off, ds, ss, bad,
                    bad < got.size() ? got[bad] : 0, bad < got.size() ? want[bad] : 0);
      c.expect(bad == got.size(), what);
      if (op == OP_PUT_SIGNAL || op == OP_PUT_SIGNAL_NBI) {
        uint64_t sig = 0;
        GT_CUDA(cudaMemcpy(&sig, b.sig, sizeof sig, cudaMemcpyDeviceToHost));
        const uint64_t groups = scope == 0 ? 128 : scope == 1 ? 4 : 2;  // <<<2, 64>>>, each group adds 1
        std::snprintf(what, sizeof what, "%s %s %s: signal is %llu, expected %llu", Ops::name, rma_op_name(op),
                      scope_name(scope), static_cast<unsigned long long>(sig),
                      static_cast<unsigned long long>(groups));
        c.expect(sig == groups, what);
      }
    }
  }
}

inline RmaBuffers rma_buffers() {
  RmaBuffers b{};
  b.src = static_cast<char*>(gshmem_malloc(RmaBuffers::kBytes));
  b.dst = static_cast<char*>(gshmem_malloc(RmaBuffers::kBytes));
  b.sig = static_cast<uint64_t*>(gshmem_malloc(sizeof(uint64_t)));
  return b;
}
inline void rma_free(RmaBuffers& b) {
  gshmem_free(b.src);
  gshmem_free(b.dst);
  gshmem_free(b.sig);
}

}  // namespace gt
