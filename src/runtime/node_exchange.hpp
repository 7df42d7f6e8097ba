// NodeExchange: the bootstrap interface for the symmetric heap's collective steps (argument checks, growth
// agreement), carried by the shared control segment instead of TCP when every PE is on this node. A malloc or
// free then costs a few hundred nanoseconds of shared-memory traffic instead of a round trip through the
// rendezvous server. Payloads larger than kExchangeBytes, health checks, abort and identity go to the real
// bootstrap underneath.
#pragma once
#include <cstdint>

#include "bootstrap/bootstrap.hpp"

namespace gshmem {

class Runtime;

class NodeExchange final : public bootstrap::Bootstrap {
 public:
  // rt.ctrl must exist and every PE must be local (the runtime refuses multi-node jobs for now).
  NodeExchange(Runtime& rt, bootstrap::Bootstrap& inner) : rt_(rt), inner_(inner) {}

  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  const char* kind() const override { return "node-local"; }
  const bootstrap::Secret& secret() const override { return inner_.secret(); }
  void allgather(const void* in, void* out, std::size_t len) override;
  void check_health() override { inner_.check_health(); }
  void abort(const std::string& why) noexcept override { inner_.abort(why); }
  void finalize() override {}  // the runtime finalizes the real bootstrap

 private:
  Runtime& rt_;
  bootstrap::Bootstrap& inner_;
  std::uint64_t seq_ = 0;
};

}  // namespace gshmem
