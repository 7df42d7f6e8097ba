// The Bootstrap interface's shared parts and the single-PE bootstrap.
#include "bootstrap/bootstrap.hpp"

#include <cstring>
#include <vector>

#include "bootstrap/secret.hpp"
#include "bootstrap/starts.hpp"
#include "runtime/error.hpp"

namespace gshmem::bootstrap {

void Bootstrap::barrier() {
  std::vector<std::uint8_t> out(static_cast<std::size_t>(size()));
  std::uint8_t one = 1;
  allgather(&one, out.data(), 1);
}

void Bootstrap::broadcast(void* buf, std::size_t len, int root) {
  if (root < 0 || root >= size())
    fail(GSHMEM_ERROR_INVALID_VALUE,
         "bootstrap broadcast: root {} is not a PE of this job (0..{}). Fix: pass a "
         "root in range",
         root, size() - 1);
  std::vector<std::uint8_t> all(len * static_cast<std::size_t>(size()));
  allgather(buf, all.data(), len);
  if (len) std::memcpy(buf, all.data() + len * static_cast<std::size_t>(root), len);
}

namespace {

// One PE, no launcher: every collective is a copy.
class SingleBootstrap final : public Bootstrap {
 public:
  SingleBootstrap() : secret_(random_secret()) {}
  int rank() const override { return 0; }
  int size() const override { return 1; }
  const char* kind() const override { return "single"; }
  const Secret& secret() const override { return secret_; }
  void allgather(const void* in, void* out, std::size_t len) override {
    if (len && (!in || !out))
      fail(GSHMEM_ERROR_INVALID_VALUE, "bootstrap allgather: a null buffer for {} bytes. Fix: pass valid buffers", len);
    if (len && in != out) std::memmove(out, in, len);
  }
  void barrier() override {}
  void broadcast(void*, std::size_t, int root) override {
    if (root != 0)
      fail(GSHMEM_ERROR_INVALID_VALUE,
           "bootstrap broadcast: root {} is not a PE of this job (a single PE: 0). "
           "Fix: pass root 0",
           root);
  }
  void check_health() override {}
  void abort(const std::string&) noexcept override {}
  void finalize() override {}

 private:
  Secret secret_;
};

}  // namespace

std::unique_ptr<Bootstrap> make_single() {
  return std::make_unique<SingleBootstrap>();
}

}  // namespace gshmem::bootstrap
