// Small socket helpers for the bootstrap: an owning fd, deadlines, IPv4 TCP listen/connect, rank-list text.
// Private to src/bootstrap (and gshmemrun / the unit tests).
#pragma once
#include <netinet/in.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gshmem::bootstrap::net {

// Owns one file descriptor; closes it on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) reset(std::exchange(o.fd_, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

// A point in time every blocking step of the bootstrap must finish by. seconds <= 0 means no limit.
class Deadline {
 public:
  static Deadline after(double seconds);
  // From config::get().bootstrap_timeout.
  static Deadline bootstrap();
  bool expired() const;
  // Milliseconds poll() may wait: min(slice_ms, time left), at least 0.
  int poll_ms(int slice_ms) const;
  double seconds() const { return seconds_; }  // the limit it was made with (for messages)
  bool unlimited() const { return unlimited_; }
  // Seconds left (a huge number when unlimited).
  double left_s() const;

 private:
  std::chrono::steady_clock::time_point end_{};
  double seconds_ = 0;
  bool unlimited_ = true;
};

// "2", "2,3", "0-3,7" (sorted, ranges compressed).
std::string ranks_text(std::vector<int> ranks);
std::string hex(const std::uint8_t* data, std::size_t len);
// "1 s", "2.5 s"
std::string seconds_text(double s);

// Resolves an IPv4 address or host name. Throws Error(INVALID_VALUE) naming `what` (e.g. "MASTER_ADDR").
in_addr resolve_ipv4(const std::string& host, const char* what);
std::string ip_text(in_addr ip);
// Address a listener bound to `bound` is reachable at (0.0.0.0 → this host's address, else `bound`).
in_addr advertised_ip(in_addr bound);

// Creates a non-blocking, close-on-exec TCP listener on ip:port (port 0: ephemeral). Returns the fd, or an
// invalid fd with *in_use = true if the port is taken (only when in_use != nullptr); other failures throw
// Error(SYSTEM) naming `what`.
UniqueFd listen_tcp(in_addr ip, std::uint16_t port, const char* what, bool* in_use = nullptr);
std::uint16_t local_port(int fd);

enum class ConnectResult { Connected, Refused };
// One connect attempt (non-blocking, bounded by `deadline`). Refused: nobody listens there (yet), or the
// attempt timed out; the caller retries. Other failures throw Error(SYSTEM).
ConnectResult connect_tcp(in_addr ip, std::uint16_t port, const Deadline& deadline, UniqueFd& out);

void set_nonblocking(int fd, bool on);
// Writes all bytes (fd may be non-blocking), waiting for POLLOUT until `deadline`. Returns false on a broken
// connection or timeout (errno_out says which: 0 = timeout).
bool send_all(int fd, const void* data, std::size_t len, const Deadline& deadline, int* errno_out = nullptr);

}  // namespace gshmem::bootstrap::net
