#include "bootstrap/net.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "runtime/config.hpp"
#include "runtime/error.hpp"

namespace gshmem::bootstrap::net {

void UniqueFd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

Deadline Deadline::after(double seconds) {
  Deadline d;
  d.seconds_ = seconds;
  d.unlimited_ = !(seconds > 0);
  if (!d.unlimited_)
    d.end_ = std::chrono::steady_clock::now() +
             std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
  return d;
}

Deadline Deadline::bootstrap() {
  return after(config::get().bootstrap_timeout);
}

bool Deadline::expired() const {
  return !unlimited_ && std::chrono::steady_clock::now() >= end_;
}

double Deadline::left_s() const {
  if (unlimited_) return 1e18;
  return std::max(0.0, std::chrono::duration<double>(end_ - std::chrono::steady_clock::now()).count());
}

int Deadline::poll_ms(int slice_ms) const {
  if (unlimited_) return slice_ms;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end_ - std::chrono::steady_clock::now()).count();
  if (left <= 0) return 0;
  return static_cast<int>(std::min<long long>(left, slice_ms));
}

std::string ranks_text(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ',';
    if (j >= i + 2)
      out += fmt::format("{}-{}", ranks[i], ranks[j]);
    else if (j == i + 1)
      out += fmt::format("{},{}", ranks[i], ranks[j]);
    else
      out += fmt::format("{}", ranks[i]);
    i = j + 1;
  }
  return out;
}

std::string hex(const std::uint8_t* data, std::size_t len) {
  static const char digits[] = "0123456789abcdef";
  std::string s(2 * len, '0');
  for (std::size_t i = 0; i < len; ++i) {
    s[2 * i] = digits[data[i] >> 4];
    s[2 * i + 1] = digits[data[i] & 15];
  }
  return s;
}

std::string seconds_text(double s) {
  return fmt::format("{:g} s", s);
}

in_addr resolve_ipv4(const std::string& host, const char* what) {
  in_addr ip{};
  if (inet_pton(AF_INET, host.c_str(), &ip) == 1) return ip;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (rc != 0 || !res)
    fail(GSHMEM_ERROR_INVALID_VALUE,
         "{}=\"{}\" is not an IPv4 address or a host name with an IPv4 address ({}). Fix: set it to an address "
         "such as 127.0.0.1 (all PEs on this node) or this host's address on a network every PE can reach.",
         what, host, rc ? gai_strerror(rc) : "no address");
  ip = reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr;
  freeaddrinfo(res);
  return ip;
}

std::string ip_text(in_addr ip) {
  char buf[INET_ADDRSTRLEN] = {0};
  inet_ntop(AF_INET, &ip, buf, sizeof buf);
  return buf;
}

in_addr advertised_ip(in_addr bound) {
  if (bound.s_addr != htonl(INADDR_ANY)) return bound;
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) == 0) {
    addrinfo hints{};
    hints.ai_family = AF_INET;
    addrinfo* res = nullptr;
    if (getaddrinfo(host, nullptr, &hints, &res) == 0 && res) {
      in_addr ip = reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr;
      freeaddrinfo(res);
      return ip;
    }
  }
  in_addr lo{};
  lo.s_addr = htonl(INADDR_LOOPBACK);
  return lo;
}

UniqueFd listen_tcp(in_addr ip, std::uint16_t port, const char* what, bool* in_use) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd)
    fail(GSHMEM_ERROR_SYSTEM, "{}: {}. Fix: raise the open-file limit (ulimit -n) if it is exhausted.", what,
         errno_text("socket()", errno));
  int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr = ip;
  sa.sin_port = htons(port);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    int err = errno;
    if (err == EADDRINUSE && in_use) {
      *in_use = true;
      return UniqueFd();
    }
    fail(GSHMEM_ERROR_SYSTEM, "{}: cannot listen on {}:{}: {}. Fix: {}", what, ip_text(ip), port, std::strerror(err),
         err == EADDRNOTAVAIL ? "GSHMEM_BOOTSTRAP_ADDR (or MASTER_ADDR) must be an address of this host"
         : err == EADDRINUSE  ? "the port is taken by another program: choose another port"
                              : "check the address and port settings (GSHMEM_BOOTSTRAP_ADDR)");
  }
  if (::listen(fd.get(), SOMAXCONN) != 0)
    fail(GSHMEM_ERROR_SYSTEM, "{}: {}. Fix: check the system's socket limits.", what, errno_text("listen()", errno));
  if (in_use) *in_use = false;
  return fd;
}

std::uint16_t local_port(int fd) {
  sockaddr_in sa{};
  socklen_t len = sizeof sa;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) return 0;
  return ntohs(sa.sin_port);
}

void set_nonblocking(int fd, bool on) {
  int flags = ::fcntl(fd, F_GETFL, 0);
  if (flags < 0) return;
  ::fcntl(fd, F_SETFL, on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK));
}

ConnectResult connect_tcp(in_addr ip, std::uint16_t port, const Deadline& deadline, UniqueFd& out) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd)
    fail(GSHMEM_ERROR_SYSTEM,
         "connecting to the rendezvous at {}:{}: {}. Fix: raise the open-file limit "
         "(ulimit -n) if it is exhausted.",
         ip_text(ip), port, errno_text("socket()", errno));
  int one = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr = ip;
  sa.sin_port = htons(port);
  int err = 0;
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    err = errno;
    if (err == EINPROGRESS) {
      pollfd p{fd.get(), POLLOUT, 0};
      int rc;
      do {
        rc = ::poll(&p, 1, deadline.poll_ms(100));
      } while ((rc == 0 && !deadline.expired()) || (rc < 0 && errno == EINTR));
      if (rc == 0) return ConnectResult::Refused;
      socklen_t len = sizeof err;
      ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
    }
  }
  switch (err) {
    case 0:
      out = std::move(fd);
      return ConnectResult::Connected;
    case ECONNREFUSED:
    case ETIMEDOUT:
    case EHOSTUNREACH:
    case ENETUNREACH:
    case ECONNRESET:
    case EAGAIN:
      return ConnectResult::Refused;
    default:
      fail(GSHMEM_ERROR_SYSTEM,
           "connecting to the rendezvous at {}:{}: {}. Fix: check GSHMEM_BOOTSTRAP_ADDR / "
           "MASTER_ADDR and that this host can reach that address.",
           ip_text(ip), port, std::strerror(err));
  }
}

bool send_all(int fd, const void* data, std::size_t len, const Deadline& deadline, int* errno_out) {
  const char* p = static_cast<const char*>(data);
  while (len > 0) {
    ssize_t n = ::send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      p += n;
      len -= static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (deadline.expired()) {
        if (errno_out) *errno_out = 0;
        return false;
      }
      pollfd pf{fd, POLLOUT, 0};
      ::poll(&pf, 1, deadline.poll_ms(100));
      continue;
    }
    if (errno_out) *errno_out = errno;
    return false;
  }
  return true;
}

}  // namespace gshmem::bootstrap::net
