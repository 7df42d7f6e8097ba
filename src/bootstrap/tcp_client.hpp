// A PE's side of the rendezvous: the Bootstrap every TCP-based start (gshmemrun, torchrun env, unique id, MPI)
// ends up with. Optionally owns the server when this process hosts it.
#pragma once
#include <netinet/in.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/net.hpp"
#include "bootstrap/tcp_server.hpp"
#include "bootstrap/wire.hpp"
#include "runtime/error.hpp"

namespace gshmem::bootstrap {

class TcpBootstrap final : public Bootstrap {
 public:
  struct Params {
    const char* kind = "launcher";
    int rank = 0;
    int nranks = 1;
    Secret secret{};
    std::string server_desc;  // who serves the rendezvous, for messages ("gshmemrun", "PE 0's process", ...)
    std::string join_fix;     // the Fix: of a "PEs did not join" or "server not reachable" error
  };
  explicit TcpBootstrap(Params p);
  ~TcpBootstrap() override;

  enum class Attempt { Joined, Refused, NotOurs, WrongSecret };
  // One attempt to join the server at ip:port. probe_s > 0: a server that does not answer our handshake within
  // that time (or closes, or answers something else) is NotOurs, and a wrong secret is WrongSecret rather than
  // an error (used while scanning ports). probe_s <= 0: wait for the handshake until `deadline`.
  Attempt try_join(in_addr ip, std::uint16_t port, const net::Deadline& deadline, double probe_s);
  // Joins the server at ip:port, retrying while it is not up yet, then waits until every PE joined.
  void join(in_addr ip, std::uint16_t port, const net::Deadline& deadline);
  // Waits until all PEs joined (after try_join returned Joined).
  void wait_ready(const net::Deadline& deadline);
  // This process serves the rendezvous: keep the server alive until the job finalized.
  void host(std::unique_ptr<TcpStoreServer> server) { server_ = std::move(server); }
  // Runs at the end of a successful finalize (e.g. MPI_Finalize when gshmem called MPI_Init).
  void on_finalize(std::function<void()> fn) { on_finalize_ = std::move(fn); }

  int rank() const override { return p_.rank; }
  int size() const override { return p_.nranks; }
  const char* kind() const override { return p_.kind; }
  const Secret& secret() const override { return p_.secret; }
  void allgather(const void* in, void* out, std::size_t len) override;
  void barrier() override;
  void broadcast(void* buf, std::size_t len, int root) override;
  void check_health() override;
  void abort(const std::string& why) noexcept override;
  void finalize() override;
  void leave(const std::string& how) noexcept override;
  bool failure_is_departure() const override { return departure_.load(); }

 private:
  enum class Read { Frame, Timeout, Closed, Bad };
  Read read_frame(wire::Frame& f, const net::Deadline& d);
  [[noreturn]] void lost_server(const char* during);
  bool lock_for_last_words(std::unique_lock<std::timed_mutex>& lock);  // abort / leave: lock, or shut the socket
  void handle_notice(const wire::Frame& f);
  // Waits for a frame `done` accepts. On timeout asks the server who is missing and throws TIMEOUT with
  // `timeout_text(status reply or nullptr)`.
  wire::Frame await(const std::function<bool(const wire::Frame&)>& done, const net::Deadline& deadline,
                    const std::function<std::string(const wire::Frame*)>& timeout_text, const char* during);
  void send_or_lost(const std::vector<std::uint8_t>& bytes, const char* during);
  void usable(const char* call);
  std::vector<std::uint8_t> collective(wire::Op op, const void* data, std::size_t len, std::uint64_t count, int root,
                                       const char* call);

  Params p_;
  std::string addr_;  // "ip:port" of the server joined
  std::timed_mutex mu_;
  net::UniqueFd fd_;
  wire::FrameReader in_;
  std::uint64_t seq_ = 0;
  std::optional<Error> failed_;  // sticky: once the job lost a PE every call reports it
  bool finalized_ = false;
  std::atomic<bool> departure_{false};  // failed_ is a PE that left without finalize (wire::NoticeKind::Left)
  std::unique_ptr<TcpStoreServer> server_;
  std::function<void()> on_finalize_;
};

}  // namespace gshmem::bootstrap
