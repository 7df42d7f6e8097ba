#include "bootstrap/tcp_client.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "runtime/config.hpp"
#include "runtime/log.hpp"

namespace gshmem::bootstrap {

using wire::Frame;
using wire::Type;

namespace {
const char* kRaiseTimeout = "raise GSHMEM_BOOTSTRAP_TIMEOUT if the PEs are only slow to start";
}

TcpBootstrap::TcpBootstrap(Params p) : p_(std::move(p)) {}

TcpBootstrap::~TcpBootstrap() {
  // Without an orderly finalize the server reports this PE as dead to the others: that is what it is.
  fd_.reset();
  server_.reset();
}

TcpBootstrap::Read TcpBootstrap::read_frame(Frame& f, const net::Deadline& d) {
  bool closed = false;
  for (;;) {
    auto nx = in_.next(f);
    if (nx == wire::FrameReader::Next::Frame) return Read::Frame;
    if (nx == wire::FrameReader::Next::Bad) return Read::Bad;
    if (closed) return Read::Closed;
    if (d.expired()) return Read::Timeout;
    pollfd pf{fd_.get(), POLLIN, 0};
    int rc = ::poll(&pf, 1, d.poll_ms(100));
    if (rc <= 0) continue;
    auto fill = in_.fill(fd_.get());
    if (fill == wire::FrameReader::Fill::Eof || fill == wire::FrameReader::Fill::Error) closed = true;
  }
}

void TcpBootstrap::lost_server(const char* during) {
  fd_.reset();
  failed_.emplace(GSHMEM_ERROR_PEER_FAILED,
                  fmt::format("{}: lost the connection to the rendezvous server at {} ({}): it exited or crashed, "
                              "so the job cannot go on. Fix: read the output of {} for its first error",
                              during, addr_, p_.server_desc, p_.server_desc));
  throw *failed_;
}

void TcpBootstrap::handle_notice(const Frame& f) {
  departure_ = static_cast<wire::NoticeKind>(f.h.op) == wire::NoticeKind::Left;
  // The job is over for this PE; the server knows. After a departure the connection stays: this PE may end
  // without finalize too and then says so (leave), so the server need not guess from a dropped connection.
  if (!departure_) fd_.reset();
  failed_.emplace(GSHMEM_ERROR_PEER_FAILED, f.text());
  throw *failed_;
}

void TcpBootstrap::send_or_lost(const std::vector<std::uint8_t>& bytes, const char* during) {
  int err = 0;
  if (!net::send_all(fd_.get(), bytes.data(), bytes.size(), net::Deadline::bootstrap(), &err)) {
    if (err == 0)
      fail(GSHMEM_ERROR_TIMEOUT,
           "{}: the rendezvous server at {} ({}) did not take our message within {}. Fix: "
           "check that {} is not stopped (e.g. by a debugger), or {}",
           during, addr_, p_.server_desc, net::seconds_text(config::get().bootstrap_timeout), p_.server_desc,
           kRaiseTimeout);
    lost_server(during);
  }
}

Frame TcpBootstrap::await(const std::function<bool(const Frame&)>& done, const net::Deadline& deadline,
                          const std::function<std::string(const Frame*)>& timeout_text, const char* during) {
  bool asked = false;
  net::Deadline grace;
  std::optional<Frame> notice;  // a PE failed while we were already asking why we waited so long
  auto timed_out = [&](const Frame* status) {
    std::string text = timeout_text(status);
    if (notice) {
      // Report the wait (the first cause), and keep the failure for every later call.
      failed_.emplace(GSHMEM_ERROR_PEER_FAILED, notice->text());
      fd_.reset();
      text += fmt::format(" (meanwhile: {})", notice->text());
    }
    fail(GSHMEM_ERROR_TIMEOUT, "{}", text);
  };
  for (;;) {
    Frame f;
    const net::Deadline& d = asked ? grace : deadline;
    switch (read_frame(f, d)) {
      case Read::Frame:
        if (f.type() == Type::Notice) {
          if (!asked) handle_notice(f);
          notice = std::move(f);
          break;
        }
        if (done(f)) return f;
        if (f.type() == Type::StatusReply && asked) timed_out(&f);
        log::trace("bootstrap: ignored a message of type {} while waiting in {}", f.h.type, during);
        break;
      case Read::Closed:
        if (asked) timed_out(nullptr);
        lost_server(during);
      case Read::Bad:
        fd_.reset();
        failed_.emplace(GSHMEM_ERROR_INTERNAL,
                        fmt::format("{}: the rendezvous server at {} sent bytes that are not gshmem's protocol. "
                                    "Fix: make sure gshmemrun and the program use the same gshmem build",
                                    during, addr_));
        throw *failed_;
      case Read::Timeout:
        if (asked) timed_out(nullptr);
        asked = true;
        grace = net::Deadline::after(1.0);
        send_or_lost(wire::frame(Type::StatusQuery, wire::Header{}), during);
        break;
    }
  }
}

TcpBootstrap::Attempt TcpBootstrap::try_join(in_addr ip, std::uint16_t port, const net::Deadline& deadline,
                                             double probe_s) {
  addr_ = fmt::format("{}:{}", net::ip_text(ip), port);
  in_ = wire::FrameReader();
  if (net::connect_tcp(ip, port, deadline, fd_) == net::ConnectResult::Refused) return Attempt::Refused;
  bool probing = probe_s > 0;
  auto not_ours = [&] {
    fd_.reset();
    return Attempt::NotOurs;
  };
  wire::Header hello;
  hello.rank = p_.rank;
  auto probe = wire::frame(Type::Probe, hello);
  if (!net::send_all(fd_.get(), probe.data(), probe.size(), deadline)) return not_ours();
  Frame f;
  net::Deadline welcome_by = probing ? net::Deadline::after(std::min(probe_s, deadline.left_s())) : deadline;
  if (read_frame(f, welcome_by) != Read::Frame || f.type() != Type::Welcome) return not_ours();
  if (f.h.version != wire::kVersion)
    fail(GSHMEM_ERROR_INVALID_VALUE,
         "connect ({} bootstrap): the rendezvous server at {} speaks gshmem protocol version {}, this PE version "
         "{}: they come from different gshmem builds. Fix: run the program with the gshmemrun of the same gshmem "
         "installation it was built against",
         p_.kind, addr_, f.h.version, wire::kVersion);
  wire::Header jh;
  jh.rank = p_.rank;
  auto body =
      wire::encode_join(p_.secret, static_cast<std::uint32_t>(p_.nranks), static_cast<std::uint32_t>(::getpid()));
  send_or_lost(wire::frame(Type::Join, jh, body.data(), body.size()), "connect");
  auto r = read_frame(f, deadline);
  if (r == Read::Timeout)
    fail(GSHMEM_ERROR_TIMEOUT,
         "connect ({} bootstrap): the rendezvous server at {} did not answer this PE's join "
         "request within {}. Fix: check that {} is running and not stopped, or {}",
         p_.kind, addr_, net::seconds_text(deadline.seconds()), p_.server_desc, kRaiseTimeout);
  if (r != Read::Frame) {
    if (probing) return not_ours();
    lost_server("connect");
  }
  if (f.type() == Type::Reject) {
    auto code = static_cast<wire::RejectCode>(f.h.code);
    fd_.reset();
    if (code == wire::RejectCode::Secret && probing) return Attempt::WrongSecret;
    const char* fix = "";
    switch (code) {
      case wire::RejectCode::Secret:
        fix =
            "start all PEs of one job together (one gshmemrun, one torchrun, or the same unique id), and do not "
            "mix PEs of different jobs";
        break;
      case wire::RejectCode::RankRange:
      case wire::RejectCode::SizeMismatch:
        fix =
            "give every PE the same number of PEs and a distinct rank in 0..n-1 (GSHMEM_WORLD_SIZE/WORLD_SIZE, "
            "or gshmemx_set_attr_uniqueid_args)";
        break;
      case wire::RejectCode::Duplicate:
        fix =
            "give every PE a distinct rank (check RANK / GSHMEM_RANK / the rank passed with the unique id), and "
            "do not start a second job with the same rendezvous";
        break;
    }
    fail(GSHMEM_ERROR_INVALID_VALUE, "connect ({} bootstrap) as PE {} of {}: {}. Fix: {}", p_.kind, p_.rank, p_.nranks,
         f.text(), fix);
  }
  if (f.type() != Type::Accept) {
    if (probing) return not_ours();
    fd_.reset();
    fail(GSHMEM_ERROR_INTERNAL,
         "connect ({} bootstrap): the rendezvous server at {} answered a join with "
         "message type {}. Fix: make sure gshmemrun and the program use the same gshmem build",
         p_.kind, addr_, f.h.type);
  }
  return Attempt::Joined;
}

void TcpBootstrap::join(in_addr ip, std::uint16_t port, const net::Deadline& deadline) {
  int sleep_ms = 10;
  for (;;) {
    auto a = try_join(ip, port, deadline, 0);
    if (a == Attempt::Joined) break;
    if (a == Attempt::NotOurs)
      fail(GSHMEM_ERROR_INVALID_VALUE,
           "connect ({} bootstrap): the program listening at {} is not a gshmem rendezvous server (it did not "
           "answer gshmem's handshake). Fix: {}",
           p_.kind, addr_, p_.join_fix);
    if (deadline.expired())
      fail(GSHMEM_ERROR_TIMEOUT,
           "connect ({} bootstrap) as PE {} of {}: waited {} for the rendezvous server at {} ({}) to accept "
           "connections (connection refused). Fix: {}; or {}",
           p_.kind, p_.rank, p_.nranks, net::seconds_text(deadline.seconds()), addr_, p_.server_desc, p_.join_fix,
           kRaiseTimeout);
    std::this_thread::sleep_for(
        std::chrono::duration<double, std::milli>(std::min<double>(sleep_ms, deadline.left_s() * 1000)));
    sleep_ms = std::min(sleep_ms * 2, 200);
  }
  wait_ready(deadline);
}

void TcpBootstrap::wait_ready(const net::Deadline& deadline) {
  std::lock_guard<std::timed_mutex> lock(mu_);
  await([](const Frame& f) { return f.type() == Type::Ready; }, deadline,
        [&](const Frame* st) {
          std::string who = "some PEs";
          std::string count;
          if (st && static_cast<wire::Phase>(st->h.code) == wire::Phase::Joining) {
            who = fmt::format("PE{} {}", st->text().find_first_of(",-") != std::string::npos ? "s" : "", st->text());
            count = fmt::format(" ({} of {} joined)", st->h.count, p_.nranks);
          }
          return fmt::format(
              "connect ({} bootstrap) as PE {} of {}: waited {} for {} to join the rendezvous at "
              "{}{}. Fix: {}; or {}",
              p_.kind, p_.rank, p_.nranks, net::seconds_text(deadline.seconds()), who, addr_, count, p_.join_fix,
              kRaiseTimeout);
        },
        "connect");
  log::trace("bootstrap ({}): PE {} of {} joined the rendezvous at {}", p_.kind, p_.rank, p_.nranks, addr_);
}

void TcpBootstrap::usable(const char* call) {
  if (failed_) throw *failed_;
  if (finalized_)
    fail(GSHMEM_ERROR_NOT_INITIALIZED,
         "bootstrap {}: called after finalize. Fix: make no gshmem calls after "
         "gshmem_finalize",
         call);
  if (!fd_)
    fail(GSHMEM_ERROR_NOT_INITIALIZED,
         "bootstrap {}: this PE is not connected to a rendezvous. Fix: initialise "
         "gshmem first",
         call);
}

std::vector<std::uint8_t> TcpBootstrap::collective(wire::Op op, const void* data, std::size_t len, std::uint64_t count,
                                                   int root, const char* call) {
  usable(call);
  std::uint64_t seq = ++seq_;
  wire::Header h;
  h.rank = p_.rank;
  h.root = root;
  h.op = static_cast<std::uint32_t>(op);
  h.seq = seq;
  h.count = count;
  send_or_lost(wire::frame(Type::Coll, h, data, len), call);
  net::Deadline deadline = net::Deadline::bootstrap();
  Frame f = await(
      [seq](const Frame& x) { return (x.type() == Type::CollResult || x.type() == Type::CollError) && x.h.seq == seq; },
      deadline,
      [&](const Frame* st) {
        std::string who = "some PEs";
        if (st && static_cast<wire::Phase>(st->h.code) == wire::Phase::Collective && st->h.seq == seq)
          who = fmt::format("PE{} {}", st->text().find_first_of(",-") != std::string::npos ? "s" : "", st->text());
        else if (st && static_cast<wire::Phase>(st->h.code) == wire::Phase::Collective)
          who = fmt::format("the PEs (the server is still at collective #{})", st->h.seq);
        return fmt::format(
            "{} (bootstrap collective #{}) on PE {}: waited {} for {} to reach it (rendezvous at "
            "{}). Fix: every PE must make the same sequence of collective calls (a PE that skips a "
            "gshmem_malloc, barrier or team call, or is stuck elsewhere, leaves the others waiting); "
            "or raise GSHMEM_BOOTSTRAP_TIMEOUT if the PEs are only slow",
            call, seq, p_.rank, net::seconds_text(deadline.seconds()), who, addr_);
      },
      call);
  if (f.type() == Type::CollError) throw Error(static_cast<int>(f.h.code), f.text());
  return std::move(f.payload);
}

void TcpBootstrap::allgather(const void* in, void* out, std::size_t len) {
  if (len && (!in || !out))
    fail(GSHMEM_ERROR_INVALID_VALUE,
         "bootstrap allgather: a null buffer for {} bytes. Fix: pass valid buffers "
         "(out must hold size()*len bytes)",
         len);
  std::lock_guard<std::timed_mutex> lock(mu_);
  auto r = collective(wire::Op::Allgather, in, len, len, -1, "allgather");
  if (r.size() != len * static_cast<std::size_t>(p_.nranks))
    fail(GSHMEM_ERROR_INTERNAL,
         "bootstrap allgather: the server returned {} bytes, expected {}. Fix: make sure "
         "gshmemrun and the program use the same gshmem build",
         r.size(), len * p_.nranks);
  if (len) std::memcpy(out, r.data(), r.size());
}

void TcpBootstrap::barrier() {
  std::lock_guard<std::timed_mutex> lock(mu_);
  collective(wire::Op::Barrier, nullptr, 0, 0, -1, "barrier");
}

void TcpBootstrap::broadcast(void* buf, std::size_t len, int root) {
  if (len && !buf)
    fail(GSHMEM_ERROR_INVALID_VALUE, "bootstrap broadcast: a null buffer for {} bytes. Fix: pass a valid buffer", len);
  if (root < 0 || root >= p_.nranks)
    fail(GSHMEM_ERROR_INVALID_VALUE,
         "bootstrap broadcast: root {} is not a PE of this job (0..{}). Fix: pass a "
         "root in range",
         root, p_.nranks - 1);
  std::lock_guard<std::timed_mutex> lock(mu_);
  bool me = root == p_.rank;
  auto r = collective(wire::Op::Broadcast, me ? buf : nullptr, me ? len : 0, len, root, "broadcast");
  if (r.size() != len)
    fail(GSHMEM_ERROR_INTERNAL,
         "bootstrap broadcast: the server returned {} bytes, expected {}. Fix: make sure "
         "gshmemrun and the program use the same gshmem build",
         r.size(), len);
  if (len && !me) std::memcpy(buf, r.data(), len);
}

void TcpBootstrap::check_health() {
  std::lock_guard<std::timed_mutex> lock(mu_);
  if (failed_) throw *failed_;
  if (finalized_ || !fd_) return;
  auto fill = in_.fill(fd_.get());
  Frame f;
  for (;;) {
    auto nx = in_.next(f);
    if (nx == wire::FrameReader::Next::Incomplete) break;
    if (nx == wire::FrameReader::Next::Bad) lost_server("check_health");
    if (f.type() == Type::Notice) handle_notice(f);
    log::trace("bootstrap: check_health ignored a message of type {}", f.h.type);
  }
  if (fill == wire::FrameReader::Fill::Eof || fill == wire::FrameReader::Fill::Error) lost_server("check_health");
}

// The last words of a PE that ends without finalize: takes the connection's lock, or, while another thread is
// inside a bootstrap call, ends the connection so the others learn this PE is gone (and returns false).
bool TcpBootstrap::lock_for_last_words(std::unique_lock<std::timed_mutex>& lock) {
  lock = std::unique_lock<std::timed_mutex>(mu_, std::defer_lock);
  if (lock.try_lock_for(std::chrono::seconds(2))) return true;
  int fd = fd_.get();
  if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
  return false;
}

void TcpBootstrap::abort(const std::string& why) noexcept {
  try {
    std::unique_lock<std::timed_mutex> lock;
    if (!lock_for_last_words(lock)) return;
    if (!fd_ || finalized_) return;
    auto bytes = wire::frame(Type::Abort, wire::Header{.rank = p_.rank}, why);
    net::send_all(fd_.get(), bytes.data(), bytes.size(), net::Deadline::after(1.0));
    fd_.reset();
    failed_.emplace(GSHMEM_ERROR_PEER_FAILED, fmt::format("this PE (PE {}) aborted: {}", p_.rank, why));
  } catch (...) {
  }
}

void TcpBootstrap::leave(const std::string& how) noexcept {
  try {
    std::unique_lock<std::timed_mutex> lock;
    if (!lock_for_last_words(lock)) return;
    if (finalized_) return;
    if (fd_) {
      auto bytes = wire::frame(Type::Leave, wire::Header{.rank = p_.rank}, how);
      net::send_all(fd_.get(), bytes.data(), bytes.size(), net::Deadline::after(1.0));
      fd_.reset();
    }
    if (server_) {
      // The other PEs may still work (and end without finalize later): serve them until they are done.
      const double limit = config::get().bootstrap_timeout;
      if (!server_->wait_done(limit > 0 ? limit : 24 * 3600.0))
        log::warn(
            "PE {} ends without gshmem_finalize and hosts the rendezvous: waited {} for the other PEs to end; "
            "they will lose the rendezvous server",
            p_.rank, net::seconds_text(limit));
      server_.reset();
    }
  } catch (...) {
  }
}

void TcpBootstrap::finalize() {
  std::lock_guard<std::timed_mutex> lock(mu_);
  if (finalized_) return;
  collective(wire::Op::Finalize, nullptr, 0, 0, -1, "finalize");
  fd_.reset();
  finalized_ = true;
  if (server_) {
    // Everyone has the answer queued; give the server the moment it needs to send it, then end it.
    server_->wait_done(std::min(5.0, std::max(1.0, config::get().bootstrap_timeout)));
    server_.reset();
  }
  if (on_finalize_) on_finalize_();
}

}  // namespace gshmem::bootstrap
