// The rendezvous server ("TCP store"): a star that N PEs join. Runs in a thread of gshmemrun, or of one PE
// (torchrun env, unique id and MPI starts). Protocol: wire.hpp.
#pragma once
#include <netinet/in.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/net.hpp"

namespace gshmem::bootstrap {

class TcpStoreServer {
 public:
  // Serves `nranks` PEs of the job that knows `secret` on an already listening socket (see net::listen_tcp).
  // `advertised` is the address PEs connect to (for messages).
  TcpStoreServer(net::UniqueFd listener, int nranks, const Secret& secret, in_addr advertised);
  ~TcpStoreServer();  // stop()
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;

  // Starts the serving thread.
  void start();
  // Ends the thread: handles what is already readable (so a PE that just dropped is still reported to the
  // others), sends what is queued (bounded to about a second), closes every connection. Idempotent.
  void stop();
  // Waits until the job finalized and the server ended by itself; false if `seconds` passed first.
  bool wait_done(double seconds);

  std::uint16_t port() const { return port_; }
  in_addr ip() const { return ip_; }
  std::string address() const;  // "ip:port"

 private:
  struct State;
  void run();

  net::UniqueFd listener_;
  int nranks_;
  Secret secret_;
  in_addr ip_;
  std::uint16_t port_;
  net::UniqueFd wake_read_, wake_write_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex done_mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
};

}  // namespace gshmem::bootstrap
