#include "runtime/node_exchange.hpp"

#include <cstring>

#include "runtime/error.hpp"
#include "runtime/runtime.hpp"
#include "runtime/spin.hpp"

namespace gshmem {

void NodeExchange::allgather(const void* in, void* out, std::size_t len) {
  if (len > static_cast<std::size_t>(kExchangeBytes)) {
    inner_.allgather(in, out, len);
    return;
  }
  ControlSegment& ctrl = *rt_.ctrl;
  ControlBlock& me = ctrl.mine();
  const int n = size();
  const std::uint64_t seq = ++seq_;
  const char* what = "symmetric heap collective (node-local exchange)";
  // 1. Every PE has read my previous data: my buffer may be rewritten.
  for (int pe = 0; pe < n; ++pe) {
    Spinner spin(rt_, what);
    while (ctrl.of(pe).xchg_done.load(std::memory_order_acquire) + 1 < seq) spin.pause();
  }
  // 2. Publish.
  if (len) std::memcpy(me.xchg, in, len);
  me.xchg_len = len;
  me.xchg_seq.store(seq, std::memory_order_release);
  // 3. Gather in rank order (this is also the barrier: every PE has published exchange `seq`).
  for (int pe = 0; pe < n; ++pe) {
    ControlBlock& b = ctrl.of(pe);
    Spinner spin(rt_, what);
    while (b.xchg_seq.load(std::memory_order_acquire) < seq) spin.pause();
    if (b.xchg_len != len)
      fail(GSHMEM_ERROR_MISMATCH, "{}: PE {} contributed {} bytes to exchange {}, PE {} {} bytes (an internal "
           "collective got out of step). Fix: report this with GSHMEM_DEBUG=TRACE output", what, pe, b.xchg_len,
           seq, rank(), len);
    if (len) std::memcpy(static_cast<unsigned char*>(out) + static_cast<std::size_t>(pe) * len, b.xchg, len);
  }
  // 4. Done reading everybody's exchange `seq`.
  me.xchg_done.store(seq, std::memory_order_release);
}

}  // namespace gshmem
