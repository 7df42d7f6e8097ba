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
#include <utility>
#include <vector>

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
  // Waits until the serving thread ended; false if `seconds` passed first. A server without exit reports (hosted
  // by a PE) ends by itself once the job is over (every PE finalized, or none is left that could still use the
  // server: each finalized, left or died); the launcher's ends only at stop().
  bool wait_done(double seconds);

  // The launcher (gshmemrun) reports how each PE's process ended (a waitpid status). With reports on, a PE whose
  // connection drops before its finalize is announced with that status ("PE 1 died (signal 11, SIGSEGV)") when
  // it comes within a second, else as "connection lost". Call expect_exit_reports() before start().
  // Such a server also outlives the job's finalize: after the Finalize collective it starts a new epoch (every
  // PE absent again) for a later gshmem_init of the same PEs, and serves until stop(). A PE that ends after its
  // finalize while others join the new epoch is reported to them ("PE 2 exited (status 0) after gshmem_finalize
  // and did not join gshmem_init again, ...").
  void expect_exit_reports() { exit_reports_ = true; }
  void report_exit(int rank, int wait_status);
  // The first PE the job lost (died, aborted, or left without finalize) and what it did; rank -1 if none.
  struct Failure {
    int rank = -1;
    std::string what;  // "died (signal 11, SIGSEGV)", "left without calling gshmem_finalize (...)", ...
  };
  Failure first_failure() const;

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
  bool exit_reports_ = false;
  mutable std::mutex done_mutex_;  // guards done_, exits_, first_
  std::condition_variable done_cv_;
  bool done_ = false;
  std::vector<std::pair<int, int>> exits_;  // (rank, wait status) reported, not yet handled by the thread
  Failure first_;
};

}  // namespace gshmem::bootstrap
