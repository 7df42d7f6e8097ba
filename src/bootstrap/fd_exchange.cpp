// FdExchange: passes file descriptors between the PEs of one node over abstract-namespace unix sockets
// (SCM_RIGHTS). Each call: every PE connects to every other local PE and sends (call number, tag, its rank,
// fds) on a connection of its own, then accepts local_size-1 connections. Sends never wait for the receiver to
// accept (the kernel queues the message with the pending connection), so no order of PEs can deadlock.
#include <fcntl.h>
#include <fmt/ranges.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/net.hpp"
#include "bootstrap/secret.hpp"
#include "runtime/error.hpp"
#include "runtime/log.hpp"

namespace gshmem::bootstrap {
namespace {

inline constexpr std::uint32_t kFdMagic = 0x44465347;  // "GSFD"
inline constexpr std::size_t kFdsPerMsg = 250;         // below the kernel's SCM_MAX_FD (253)

// First bytes on each connection (host byte order: both ends are on this host).
struct FdMsg {
  std::uint32_t magic;
  std::int32_t rank;
  std::uint64_t call;  // 1, 2, ... per FdExchange: which exchange() this belongs to
  std::uint64_t tag;
  std::uint32_t nfds;
  std::uint32_t reserved;
};
static_assert(sizeof(FdMsg) == 32, "FdMsg must be 32 bytes");

sockaddr_un abstract_addr(const Secret& secret, int rank, socklen_t& len) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::string name = fmt::format("gshmem-{}-{}", secret_hex(secret), rank);
  a.sun_path[0] = '\0';  // abstract namespace: no file is created anywhere
  std::memcpy(a.sun_path + 1, name.data(), name.size());
  len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  return a;
}

void set_timeout(int fd, int opt, const net::Deadline& d) {
  double left = std::min(d.left_s(), 3600.0);
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(left);
  tv.tv_usec = static_cast<suseconds_t>((left - static_cast<double>(tv.tv_sec)) * 1e6);
  if (tv.tv_sec == 0 && tv.tv_usec == 0) tv.tv_usec = 1000;
  ::setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof tv);
}

// Sends the header and fds (in batches of kFdsPerMsg; each further batch rides on one byte).
bool send_fds(int fd, const FdMsg& msg, const std::vector<int>& fds) {
  std::size_t sent = 0;
  bool first = true;
  do {
    std::size_t k = std::min(kFdsPerMsg, fds.size() - sent);
    char one = 0;
    iovec iov{};
    if (first) {
      iov.iov_base = const_cast<FdMsg*>(&msg);
      iov.iov_len = sizeof msg;
    } else {
      iov.iov_base = &one;
      iov.iov_len = 1;
    }
    std::vector<char> ctrl(CMSG_SPACE(sizeof(int) * std::max<std::size_t>(k, 1)));
    msghdr mh{};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    if (k) {
      mh.msg_control = ctrl.data();
      mh.msg_controllen = CMSG_SPACE(sizeof(int) * k);
      cmsghdr* c = CMSG_FIRSTHDR(&mh);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int) * k);
      std::memcpy(CMSG_DATA(c), fds.data() + sent, sizeof(int) * k);
    }
    ssize_t n;
    do {
      n = ::sendmsg(fd, &mh, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    if (n != static_cast<ssize_t>(iov.iov_len)) return false;
    sent += k;
    first = false;
  } while (sent < fds.size());
  return true;
}

// Receives `len` bytes into buf, appending any passed fds to `fds`. false on EOF/error/timeout (errno set).
bool recv_with_fds(int fd, void* buf, std::size_t len, std::vector<net::UniqueFd>& fds) {
  auto* p = static_cast<char*>(buf);
  while (len > 0) {
    iovec iov{p, len};
    std::vector<char> ctrl(CMSG_SPACE(sizeof(int) * kFdsPerMsg));
    msghdr mh{};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = ctrl.data();
    mh.msg_controllen = ctrl.size();
    ssize_t n = ::recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    for (cmsghdr* c = n > 0 ? CMSG_FIRSTHDR(&mh) : nullptr; c; c = CMSG_NXTHDR(&mh, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
        std::size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (std::size_t i = 0; i < k; ++i) {
          int x;
          std::memcpy(&x, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
          fds.emplace_back(x);
        }
      }
    if (n <= 0) {
      if (n == 0) errno = ECONNRESET;
      return false;
    }
    if (mh.msg_flags & MSG_CTRUNC) {
      errno = EMSGSIZE;
      return false;
    }
    p += n;
    len -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

struct FdExchange::Impl {
  Secret secret;
  int me;
  std::vector<int> local;
  std::vector<int> pids;
  net::UniqueFd listener;
  std::uint64_t calls = 0;
  struct Arrived {
    FdMsg msg;
    std::vector<net::UniqueFd> fds;
  };
  std::vector<Arrived> early;  // from peers already in the next call

  int index_of(int rank) const {
    auto it = std::find(local.begin(), local.end(), rank);
    return it == local.end() ? -1 : static_cast<int>(it - local.begin());
  }
};

FdExchange::FdExchange(const Secret& secret, int my_rank, std::vector<int> local_ranks, std::vector<int> pids_by_rank)
    : impl_(std::make_unique<Impl>()) {
  auto& im = *impl_;
  im.secret = secret;
  im.me = my_rank;
  im.local = std::move(local_ranks);
  im.pids = std::move(pids_by_rank);
  auto sorted = im.local;
  std::sort(sorted.begin(), sorted.end());
  if (im.index_of(my_rank) < 0 || std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end() ||
      sorted.front() < 0 || sorted.back() >= static_cast<int>(im.pids.size()))
    fail(GSHMEM_ERROR_INVALID_VALUE,
         "FdExchange: local ranks [{}] must be distinct PEs below {} (the size of the "
         "pid table) and include this PE ({}). Fix: pass the PEs of this node, including this one",
         fmt::join(im.local, ","), im.pids.size(), my_rank);
  im.listener.reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!im.listener)
    fail(GSHMEM_ERROR_SYSTEM, "FdExchange: {}. Fix: raise the open-file limit (ulimit -n).",
         errno_text("socket(AF_UNIX)", errno));
  socklen_t len;
  sockaddr_un a = abstract_addr(secret, my_rank, len);
  if (::bind(im.listener.get(), reinterpret_cast<sockaddr*>(&a), len) != 0) {
    int err = errno;
    fail(GSHMEM_ERROR_SYSTEM, "FdExchange for PE {}: cannot bind its unix socket: {}. Fix: {}", my_rank,
         std::strerror(err),
         err == EADDRINUSE ? "another FdExchange of this job for the same PE is alive (only one per PE at a time), "
                             "or two processes were given the same rank"
                           : "check that this process may create unix sockets (network namespace, seccomp)");
  }
  if (::listen(im.listener.get(), SOMAXCONN) != 0)
    fail(GSHMEM_ERROR_SYSTEM, "FdExchange for PE {}: {}. Fix: check the system's socket limits.", my_rank,
         errno_text("listen()", errno));
}

FdExchange::~FdExchange() = default;

std::vector<std::vector<int>> FdExchange::exchange(const std::vector<int>& my_fds, std::uint64_t tag,
                                                   Bootstrap* health) {
  auto& im = *impl_;
  const std::uint64_t call = ++im.calls;
  const auto deadline = net::Deadline::bootstrap();
  const std::size_t n = im.local.size();
  const int my_idx = im.index_of(im.me);
  auto timeout_text = [&](const std::string& what) {
    return fmt::format(
        "FdExchange::exchange (tag {}, call #{}) on PE {}: waited {} for {}. Fix: every PE of this "
        "node must make the same collective calls (heap setup and growth) in the same order; check "
        "the other PEs' output, or raise GSHMEM_BOOTSTRAP_TIMEOUT",
        tag, call, im.me, net::seconds_text(deadline.seconds()), what);
  };

  std::vector<std::vector<net::UniqueFd>> got(n);
  for (int fd : my_fds) {
    int d = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (d < 0)
      fail(GSHMEM_ERROR_INVALID_VALUE,
           "FdExchange::exchange (tag {}): cannot duplicate fd {}: {}. Fix: pass open "
           "file descriptors",
           tag, fd, std::strerror(errno));
    got[my_idx].emplace_back(d);
  }

  // 1. Send to every other local PE (its listener may not exist yet: retry until the deadline).
  FdMsg msg{kFdMagic, im.me, call, tag, static_cast<std::uint32_t>(my_fds.size()), 0};
  for (std::size_t i = 0; i < n; ++i) {
    int peer = im.local[i];
    if (peer == im.me) continue;
    socklen_t len;
    sockaddr_un a = abstract_addr(im.secret, peer, len);
    int sleep_ms = 1;
    for (;;) {
      net::UniqueFd s(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
      if (!s)
        fail(GSHMEM_ERROR_SYSTEM, "FdExchange::exchange: {}. Fix: raise the open-file limit (ulimit -n).",
             errno_text("socket(AF_UNIX)", errno));
      if (::connect(s.get(), reinterpret_cast<sockaddr*>(&a), len) == 0) {
        net::set_nonblocking(s.get(), false);
        set_timeout(s.get(), SO_SNDTIMEO, deadline);
        if (!send_fds(s.get(), msg, my_fds))
          fail(GSHMEM_ERROR_SYSTEM,
               "FdExchange::exchange (tag {}) on PE {}: sending {} fds to local PE {} failed: "
               "{}. Fix: check the open-file limit (ulimit -n) and that PE {} is alive",
               tag, im.me, my_fds.size(), peer, std::strerror(errno), peer);
        break;
      }
      int err = errno;
      if (err != ECONNREFUSED && err != ENOENT && err != EAGAIN && err != EINTR)
        fail(GSHMEM_ERROR_SYSTEM,
             "FdExchange::exchange (tag {}) on PE {}: connecting to local PE {}: {}. Fix: check "
             "that all PEs of this node run in one network namespace",
             tag, im.me, peer, std::strerror(err));
      if (health) health->check_health();
      if (deadline.expired())
        fail(GSHMEM_ERROR_TIMEOUT, "{}",
             timeout_text(fmt::format("local PE {} (pid {}) to open its fd-exchange "
                                      "socket",
                                      peer, im.pids[peer])));
      std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
      sleep_ms = std::min(sleep_ms * 2, 20);
    }
  }

  // 2. Receive from every other local PE.
  std::vector<bool> have(n, false);
  have[my_idx] = true;
  std::size_t count = 1;
  auto take = [&](Impl::Arrived& m) {
    int idx = im.index_of(m.msg.rank);
    if (m.msg.tag != tag)
      fail(GSHMEM_ERROR_MISMATCH,
           "FdExchange::exchange call #{}: local PE {} passed tag {}, PE {} tag {}. Fix: "
           "every local PE must make the same sequence of exchanges",
           call, m.msg.rank, m.msg.tag, im.me, tag);
    if (m.msg.nfds != my_fds.size() || m.fds.size() != my_fds.size())
      fail(GSHMEM_ERROR_MISMATCH,
           "FdExchange::exchange (tag {}, call #{}): local PE {} sent {} fds, PE {} {}. "
           "Fix: every local PE must pass the same number of fds",
           tag, call, m.msg.rank, m.fds.size(), im.me, my_fds.size());
    got[idx] = std::move(m.fds);
    have[idx] = true;
    ++count;
  };
  for (auto it = im.early.begin(); it != im.early.end();) {
    if (it->msg.call == call) {
      take(*it);
      it = im.early.erase(it);
    } else {
      ++it;
    }
  }
  while (count < n) {
    pollfd p{im.listener.get(), POLLIN, 0};
    int rc = ::poll(&p, 1, deadline.poll_ms(20));
    if (health) health->check_health();
    if (rc <= 0) {
      if (deadline.expired()) {
        std::vector<int> missing;
        for (std::size_t i = 0; i < n; ++i)
          if (!have[i]) missing.push_back(im.local[i]);
        fail(GSHMEM_ERROR_TIMEOUT, "{}",
             timeout_text(fmt::format("local PE{} {} to send their file descriptors", missing.size() > 1 ? "s" : "",
                                      net::ranks_text(missing))));
      }
      continue;
    }
    net::UniqueFd c(::accept4(im.listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!c) continue;
    ucred cred{};
    socklen_t cl = sizeof cred;
    if (::getsockopt(c.get(), SOL_SOCKET, SO_PEERCRED, &cred, &cl) != 0 || cred.uid != ::geteuid()) {
      log::warn("FdExchange on PE {}: refused a connection from pid {} of uid {} (not this job's user)", im.me,
                cred.pid, cred.uid);
      continue;
    }
    set_timeout(c.get(), SO_RCVTIMEO, deadline);
    Impl::Arrived m{};
    if (!recv_with_fds(c.get(), &m.msg, sizeof m.msg, m.fds) || m.msg.magic != kFdMagic) {
      log::warn("FdExchange on PE {}: dropped a connection from pid {}: {}", im.me, cred.pid,
                m.msg.magic != kFdMagic ? "not a gshmem fd message" : std::strerror(errno));
      continue;
    }
    int idx = im.index_of(m.msg.rank);
    if (idx < 0 || m.msg.rank == im.me || cred.pid != im.pids[m.msg.rank]) {
      log::warn("FdExchange on PE {}: refused a message from pid {} claiming PE {}: {}", im.me, cred.pid, m.msg.rank,
                idx < 0 || m.msg.rank == im.me ? "not another PE of this node"
                                               : fmt::format("PE {} is pid {}", m.msg.rank, im.pids[m.msg.rank]));
      continue;
    }
    std::size_t batches = m.msg.nfds > kFdsPerMsg ? (m.msg.nfds - 1) / kFdsPerMsg : 0;
    std::vector<char> tail(batches);
    if (batches && !recv_with_fds(c.get(), tail.data(), batches, m.fds))
      fail(GSHMEM_ERROR_SYSTEM,
           "FdExchange::exchange (tag {}) on PE {}: receiving {} fds from local PE {}: {}. "
           "Fix: check the open-file limit (ulimit -n)",
           tag, im.me, m.msg.nfds, m.msg.rank, std::strerror(errno));
    if (m.msg.call > call) {
      im.early.push_back(std::move(m));
      continue;
    }
    if (m.msg.call < call || have[idx]) {
      log::warn("FdExchange on PE {}: dropped a duplicate message from PE {} (call #{}, now #{})", im.me, m.msg.rank,
                m.msg.call, call);
      continue;
    }
    take(m);
  }

  std::vector<std::vector<int>> out(n);
  for (std::size_t i = 0; i < n; ++i)
    for (auto& f : got[i]) out[i].push_back(f.release());
  return out;
}

}  // namespace gshmem::bootstrap
