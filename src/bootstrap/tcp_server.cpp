#include "bootstrap/tcp_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <list>
#include <map>
#include <optional>

#include "bootstrap/secret.hpp"
#include "bootstrap/wire.hpp"
#include "runtime/config.hpp"
#include "runtime/error.hpp"
#include "runtime/log.hpp"

namespace gshmem::bootstrap {
namespace {

using Clock = std::chrono::steady_clock;
using wire::Frame;
using wire::Type;

struct Conn {
  net::UniqueFd fd;
  std::string peer;
  wire::FrameReader in;
  std::vector<std::uint8_t> out;
  std::size_t out_off = 0;
  // Finished: the connection of a PE of an earlier epoch (it finalized); kept only until its last answer is sent
  // and the PE closes it.
  enum class Stage { Probing, Joining, Member, Closing, Finished } stage = Stage::Probing;
  int rank = -1;
  bool gone = false;  // remove at the end of this round
  Clock::time_point since = Clock::now();
  bool has_output() const { return out_off < out.size(); }
};

// Lost: the connection dropped before finalize; waiting (a second at most) for the launcher's exit report.
enum class RankState { Absent, Joined, Finalizing, Lost, Dead, Aborted, Left };

// "died (signal 11, SIGSEGV)" for a waitpid status of a signal.
std::string signal_text(int wait_status) {
  const char* abbrev = sigabbrev_np(WTERMSIG(wait_status));
  return fmt::format("died (signal {}{}{})", WTERMSIG(wait_status), abbrev ? fmt::format(", SIG{}", abbrev) : "",
                     WCOREDUMP(wait_status) ? ", core dumped" : "");
}

// What a waitpid status says about a PE that ended before its finalize.
std::string ending_text(int wait_status) {
  if (WIFSIGNALED(wait_status)) return signal_text(wait_status);
  return fmt::format("exited with status {} without calling gshmem_finalize", WEXITSTATUS(wait_status));
}

struct Pending {
  std::vector<Frame> by_rank;
  std::vector<bool> have;
  int count = 0;
};

std::string peer_text(int fd) {
  sockaddr_in sa{};
  socklen_t len = sizeof sa;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) return "an unknown peer";
  return fmt::format("{}:{}", net::ip_text(sa.sin_addr), ntohs(sa.sin_port));
}

// "8 bytes on PEs 0,2; 16 bytes on PE 1"
template <typename Key, typename Show>
std::string grouped(const std::vector<Frame>& frames, Key key, Show show) {
  std::map<decltype(key(frames[0])), std::vector<int>> groups;
  for (std::size_t r = 0; r < frames.size(); ++r) groups[key(frames[r])].push_back(static_cast<int>(r));
  std::string out;
  for (auto& [k, ranks] : groups) {
    if (!out.empty()) out += "; ";
    out += fmt::format("{} on PE{} {}", show(k), ranks.size() > 1 ? "s" : "", net::ranks_text(ranks));
  }
  return out;
}

}  // namespace

struct TcpStoreServer::State {
  TcpStoreServer& server;
  int n;
  Secret secret;
  std::string address;
  std::list<std::unique_ptr<Conn>> conns;
  std::vector<RankState> ranks;
  std::vector<Conn*> member;
  std::vector<std::uint32_t> pids;
  int joined = 0;
  std::map<std::uint64_t, Pending> pending;
  std::vector<std::vector<std::uint8_t>> notices;  // failure notices so far; late joiners get them too
  bool finalized = false;
  double handshake_s;
  std::vector<Clock::time_point> lost_at;  // per rank in state Lost
  // Epochs (launcher-hosted servers only): each init..finalize of the job is one; after the Finalize collective
  // every rank is Absent again and a new gshmem_init of the same PEs joins epoch + 1.
  int epoch = 1;
  // From epoch 2 on: the wait status of each PE that ended (exit report) after its last finalize without joining
  // this epoch. Every PE that joins this epoch is told, since init cannot complete without it.
  std::vector<std::optional<int>> ended;
  // The exit report of each PE whose process ended, whatever its state then (one that ends while the others
  // still finalize is already gone when the next epoch starts: new_epoch() copies these into `ended`).
  std::vector<std::optional<int>> exited;

  State(TcpStoreServer& srv, int nranks, const Secret& s, std::string addr)
      : server(srv),
        n(nranks),
        secret(s),
        address(std::move(addr)),
        ranks(nranks, RankState::Absent),
        member(nranks, nullptr),
        pids(nranks, 0),
        lost_at(nranks),
        ended(nranks),
        exited(nranks) {
    handshake_s = config::get().bootstrap_timeout > 0 ? config::get().bootstrap_timeout : 60.0;
  }

  void flush(Conn& c) {
    while (c.has_output()) {
      ssize_t k = ::send(c.fd.get(), c.out.data() + c.out_off, c.out.size() - c.out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (k > 0) {
        c.out_off += static_cast<std::size_t>(k);
      } else if (k < 0 && errno == EINTR) {
        continue;
      } else {
        if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK) disconnect(c);
        return;
      }
    }
    c.out.clear();
    c.out_off = 0;
    if (c.stage == Conn::Stage::Closing) ::shutdown(c.fd.get(), SHUT_WR);
  }

  void send(Conn& c, const std::vector<std::uint8_t>& bytes) {
    if (c.gone) return;
    c.out.insert(c.out.end(), bytes.begin(), bytes.end());
    flush(c);
  }

  void to_members(const std::vector<std::uint8_t>& bytes, int except = -1) {
    for (int r = 0; r < n; ++r)
      if (r != except && member[r]) send(*member[r], bytes);
  }

  void reject(Conn& c, wire::RejectCode code, const std::string& text) {
    wire::Header h;
    h.code = static_cast<std::uint32_t>(code);
    c.stage = Conn::Stage::Closing;
    send(c, wire::frame(Type::Reject, h, text));
  }

  // Tells every other PE that PE `rank` is gone: "PE <rank> <what>. <fix>". The first one is kept for the
  // launcher's summary.
  void notice_failure(int rank, wire::NoticeKind kind, const std::string& what, const std::string& fix) {
    auto bytes = notice(rank, kind, what, fix);
    notices.push_back(bytes);
    to_members(bytes, rank);
  }

  // The Notice frame "PE <rank> <what>. <fix>"; the first one the job sends is kept for the launcher's summary.
  std::vector<std::uint8_t> notice(int rank, wire::NoticeKind kind, const std::string& what, const std::string& fix) {
    {
      std::lock_guard<std::mutex> lock(server.done_mutex_);
      if (server.first_.rank < 0) server.first_ = {rank, what};
    }
    wire::Header h;
    h.rank = rank;
    h.code = GSHMEM_ERROR_PEER_FAILED;
    h.op = static_cast<std::uint32_t>(kind);
    std::string text = fmt::format("PE {} {}", rank, what);
    if (!fix.empty()) text += ". " + fix;
    return wire::frame(Type::Notice, h, text);
  }

  // PE r ended after its finalize while the PEs joined to this epoch wait in gshmem_init for it: tells them (all of
  // them, or only `to`, one that joins now).
  void notice_ended(int r, Conn* to = nullptr) {
    int status = *ended[r];
    std::vector<int> waiting;
    for (int m = 0; m < n; ++m)
      if (member[m]) waiting.push_back(m);
    if (waiting.empty()) return;
    std::string how =
        WIFSIGNALED(status) ? signal_text(status) : fmt::format("exited (status {})", WEXITSTATUS(status));
    std::string what =
        fmt::format("{} after gshmem_finalize and did not join gshmem_init again, which PE{} {} wait{} in", how,
                    waiting.size() > 1 ? "s" : "", net::ranks_text(waiting), waiting.size() > 1 ? "" : "s");
    std::string fix = fmt::format(
        "Fix: every PE must call gshmem_init again when any PE does (init and finalize are collective over all PEs "
        "of the job): make PE {} run the same init..finalize cycles as the others, or end every PE after the last "
        "gshmem_finalize",
        r);
    auto kind = WIFSIGNALED(status) ? wire::NoticeKind::Died : wire::NoticeKind::Left;
    log::info("rendezvous at {}: PE {} (pid {}) {}; telling PE{} {}", address, r, pids[r], what,
              to ? "" : (waiting.size() > 1 ? "s" : ""), to ? std::to_string(to->rank) : net::ranks_text(waiting));
    auto bytes = notice(r, kind, what, fix);
    if (to)
      send(*to, bytes);
    else
      to_members(bytes, r);
  }

  // The Finalize collective completed (its answers are queued): the next gshmem_init of these PEs is a new epoch.
  void new_epoch() {
    for (int r = 0; r < n; ++r) {
      if (Conn* c = member[r]) {
        c->stage = Conn::Stage::Finished;
        c->since = Clock::now();
      }
      member[r] = nullptr;
      ranks[r] = RankState::Absent;
      ended[r] = exited[r];  // a PE whose process ended during the finalize cannot join this epoch
    }
    joined = 0;
    pending.clear();
    notices.clear();
    finalized = false;
    ++epoch;
    log::info("rendezvous at {}: serving a new gshmem_init of the {} PEs (epoch {})", address, n, epoch);
  }

  // PE r ended before its finalize: `what` says how ("died (signal 11, SIGSEGV)", "died (connection lost)").
  void announce_death(int r, const std::string& what) {
    ranks[r] = RankState::Dead;
    log::info("rendezvous at {}: PE {} (pid {}) {}; telling the other PEs", address, r, pids[r], what);
    notice_failure(r, wire::NoticeKind::Died, what,
                   fmt::format("Its process (pid {}) exited, crashed or was killed before it called gshmem_finalize. "
                               "Fix: read PE {}'s output for its first error; the other PEs stop because the job "
                               "cannot go on without it.",
                               pids[r], r));
  }

  void disconnect(Conn& c) {
    if (c.gone) return;
    c.gone = true;
    if (c.stage != Conn::Stage::Member) return;
    int r = c.rank;
    member[r] = nullptr;
    if (ranks[r] != RankState::Joined) return;
    if (server.exit_reports_) {
      ranks[r] = RankState::Lost;  // the launcher's exit report says how it ended (see exit_reported)
      lost_at[r] = Clock::now();
      return;
    }
    announce_death(r, "died (connection lost)");
  }

  void exit_reported(int r, int wait_status) {
    if (r < 0 || r >= n) return;
    exited[r] = wait_status;
    if (ranks[r] == RankState::Joined || ranks[r] == RankState::Lost) announce_death(r, ending_text(wait_status));
    if (ranks[r] == RankState::Absent && epoch > 1 && !ended[r]) {
      // It finalized the last epoch and ended: normal, unless PEs call gshmem_init again (they wait for it).
      ended[r] = wait_status;
      notice_ended(r);
    }
  }

  // Lost PEs whose exit report did not come within a second are announced without it.
  void lost_timeouts() {
    for (int r = 0; r < n; ++r)
      if (ranks[r] == RankState::Lost && Clock::now() - lost_at[r] > std::chrono::seconds(1))
        announce_death(r, "died (connection lost)");
  }

  // Nobody can use the server any more: every PE joined and then finalized, left or died.
  bool over() const {
    if (joined < n) return false;
    for (int r = 0; r < n; ++r)
      if (member[r] || ranks[r] == RankState::Lost) return false;
    return true;
  }

  void protocol_error(Conn& c, const std::string& what) {
    log::warn("rendezvous at {}: {} from {} ({}); closing that connection", address, what, c.peer,
              c.rank >= 0 ? fmt::format("PE {}", c.rank) : std::string("not joined"));
    disconnect(c);
  }

  void on_frame(Conn& c, Frame& f) {
    switch (c.stage) {
      case Conn::Stage::Probing: {
        if (f.type() != Type::Probe) return protocol_error(c, "a message other than Probe as first message");
        c.stage = Conn::Stage::Joining;
        send(c, wire::frame(Type::Welcome, wire::Header{}));
        return;
      }
      case Conn::Stage::Joining:
        return on_join(c, f);
      case Conn::Stage::Closing:
      case Conn::Stage::Finished:
        return;  // ignore anything a rejected or finished peer still sends
      case Conn::Stage::Member:
        break;
    }
    int r = c.rank;
    switch (f.type()) {
      case Type::Coll:
        return on_coll(c, f);
      case Type::Abort: {
        ranks[r] = RankState::Aborted;
        std::string why = f.text();
        // The PE printed its error itself: the server only passes it on.
        log::info("rendezvous at {}: PE {} aborted: {}", address, r, why);
        notice_failure(r, wire::NoticeKind::Aborted, "aborted: " + why, "");
        member[r] = nullptr;
        c.stage = Conn::Stage::Closing;
        c.gone = true;
        return;
      }
      case Type::Leave: {
        if (ranks[r] != RankState::Joined) return;
        ranks[r] = RankState::Left;
        std::string how = f.text();
        log::info("rendezvous at {}: PE {} leaves without gshmem_finalize ({})", address, r, how);
        notice_failure(r, wire::NoticeKind::Left, fmt::format("left without calling gshmem_finalize ({})", how),
                       "Fix: call gshmem_finalize() on every PE before it returns from main or calls exit(); a PE "
                       "that ends without it cannot take part in the barriers and collectives the others still "
                       "wait in");
        member[r] = nullptr;
        c.stage = Conn::Stage::Closing;
        c.gone = true;
        return;
      }
      case Type::StatusQuery:
        return send(c, status());
      default:
        return protocol_error(c, fmt::format("an unexpected message (type {})", f.h.type));
    }
  }

  void on_join(Conn& c, Frame& f) {
    wire::JoinBody body{};
    if (f.type() != Type::Join || !wire::decode_join(f.payload, body)) return protocol_error(c, "a malformed Join");
    int r = f.h.rank;
    if (!secret_equal(body.secret, secret.data())) {
      log::warn(
          "rendezvous at {}: rejected a connection from {} (pid {}) claiming PE {}: it did not prove this "
          "job's secret (a process of another job, or a stray connection)",
          address, c.peer, body.pid, r);
      return reject(c, wire::RejectCode::Secret,
                    fmt::format("the rendezvous server at {} rejected this PE: it belongs to another job (the job "
                                "secret does not match)",
                                address));
    }
    if (static_cast<int>(body.nranks) != n)
      return reject(c, wire::RejectCode::SizeMismatch,
                    fmt::format("this PE was started as one of {} PEs, but the rendezvous server at {} serves a job "
                                "of {} PEs",
                                body.nranks, address, n));
    if (r < 0 || r >= n)
      return reject(c, wire::RejectCode::RankRange,
                    fmt::format("rank {} is out of range: the job at {} has PEs 0..{}", r, address, n - 1));
    if (ranks[r] != RankState::Absent && ranks[r] != RankState::Joined && ranks[r] != RankState::Finalizing) {
      // This epoch failed (a PE died, aborted or left) and never finalized, so no new one starts: typically a
      // program that caught gshmem's error and calls gshmem_init again.
      const auto f = server.first_failure();
      return reject(c, wire::RejectCode::Duplicate,
                    fmt::format("PE {} calls gshmem_init again, but this job's last init..finalize did not end "
                                "({}). The rendezvous at {} serves a new gshmem_init only after every PE called "
                                "gshmem_finalize. Fix: end the job and start it again; a job that lost a PE cannot "
                                "init again under this gshmemrun",
                                r, f.rank >= 0 ? fmt::format("PE {} {}", f.rank, f.what) : std::string("a PE failed"),
                                address));
    }
    if (ranks[r] != RankState::Absent)
      return reject(c, wire::RejectCode::Duplicate,
                    fmt::format("PE {} already joined the job at {} from another process (pid {}): two processes "
                                "were given the same rank",
                                r, address, pids[r]));
    c.stage = Conn::Stage::Member;
    c.rank = r;
    ranks[r] = RankState::Joined;
    member[r] = &c;
    pids[r] = body.pid;
    ++joined;
    log::trace("rendezvous at {}: PE {} (pid {}) joined from {} ({} of {})", address, r, body.pid, c.peer, joined, n);
    wire::Header h;
    h.count = static_cast<std::uint64_t>(n);
    send(c, wire::frame(Type::Accept, h));
    // A PE that ended after the last epoch's finalize comes first: the failures of this epoch's members follow
    // from it (their init failed waiting for it).
    for (int e = 0; e < n; ++e)
      if (ended[e]) notice_ended(e, &c);
    for (auto& bytes : notices) send(c, bytes);
    if (joined == n) {
      log::info("rendezvous at {}: all {} PEs joined", address, n);
      to_members(wire::frame(Type::Ready, wire::Header{}));
    }
  }

  void on_coll(Conn& c, Frame& f) {
    int r = c.rank;
    if (ranks[r] != RankState::Joined) return protocol_error(c, "a collective after this PE's finalize");
    Pending& p = pending[f.h.seq];
    if (p.have.empty()) {
      p.have.assign(n, false);
      p.by_rank.resize(n);
    }
    if (p.have[r]) return protocol_error(c, fmt::format("a second contribution to collective #{}", f.h.seq));
    if (static_cast<wire::Op>(f.h.op) == wire::Op::Finalize) ranks[r] = RankState::Finalizing;
    p.have[r] = true;
    p.by_rank[r] = std::move(f);
    if (++p.count == n) {
      std::uint64_t seq = p.by_rank[0].h.seq;
      Pending done = std::move(p);
      pending.erase(seq);
      complete(seq, done);
    }
  }

  void complete(std::uint64_t seq, Pending& p) {
    auto& fr = p.by_rank;
    auto op = static_cast<wire::Op>(fr[0].h.op);
    auto error = [&](const std::string& text) {
      wire::Header h;
      h.seq = seq;
      h.code = GSHMEM_ERROR_MISMATCH;
      log::warn("rendezvous at {}: {}", address, text);
      to_members(wire::frame(Type::CollError, h, text));
    };
    for (auto& f : fr)
      if (f.h.op != fr[0].h.op)
        return error(fmt::format(
            "bootstrap collective #{}: the PEs made different calls: {}. Fix: every PE must make the same "
            "sequence of collective calls (init, gshmem_malloc/free, barriers, team creation) in the same order",
            seq,
            grouped(
                fr, [](const Frame& x) { return x.h.op; },
                [](std::uint32_t o) { return std::string(wire::op_name(static_cast<wire::Op>(o))); })));
    auto bytes_text = [](std::uint64_t b) { return fmt::format("{} bytes", b); };
    for (auto& f : fr)
      if (f.h.count != fr[0].h.count)
        return error(fmt::format(
            "{} (bootstrap collective #{}): the PEs passed different lengths: {}. Fix: every PE must pass the same "
            "length to this collective call",
            wire::op_name(op), seq,
            grouped(
                fr, [](const Frame& x) { return x.h.count; }, bytes_text)));
    wire::Header h;
    h.seq = seq;
    h.op = static_cast<std::uint32_t>(op);
    h.count = fr[0].h.count;
    std::vector<std::uint8_t> out;
    if (op == wire::Op::Allgather) {
      std::vector<std::uint8_t> data;
      data.reserve(static_cast<std::size_t>(fr[0].h.count) * n);
      for (auto& f : fr) data.insert(data.end(), f.payload.begin(), f.payload.end());
      out = wire::frame(Type::CollResult, h, data.data(), data.size());
    } else if (op == wire::Op::Broadcast) {
      for (auto& f : fr)
        if (f.h.root != fr[0].h.root)
          return error(fmt::format(
              "broadcast (bootstrap collective #{}): the PEs named different roots: {}. Fix: every PE must pass "
              "the same root",
              seq,
              grouped(
                  fr, [](const Frame& x) { return x.h.root; },
                  [](std::int32_t root) { return fmt::format("root {}", root); })));
      int root = fr[0].h.root;
      if (root < 0 || root >= n)
        return error(
            fmt::format("broadcast (bootstrap collective #{}): root {} is not a PE of this job (0..{}). "
                        "Fix: pass a root in range",
                        seq, root, n - 1));
      const auto& d = fr[root].payload;
      out = wire::frame(Type::CollResult, h, d.data(), d.size());
    } else {
      out = wire::frame(Type::CollResult, h);
    }
    to_members(out);
    if (op == wire::Op::Finalize) {
      log::info("rendezvous at {}: all {} PEs finalized", address, n);
      // The launcher's server stays for a later gshmem_init of the same PEs; one a PE hosts ends (a new init
      // makes a new one).
      if (server.exit_reports_)
        new_epoch();
      else
        finalized = true;
    }
  }

  std::vector<std::uint8_t> status() {
    wire::Header h;
    h.count = static_cast<std::uint64_t>(joined);
    std::vector<int> missing;
    if (joined < n) {
      h.code = static_cast<std::uint32_t>(wire::Phase::Joining);
      for (int r = 0; r < n; ++r)
        if (ranks[r] == RankState::Absent) missing.push_back(r);
    } else if (!pending.empty()) {
      auto& [seq, p] = *pending.begin();
      h.code = static_cast<std::uint32_t>(wire::Phase::Collective);
      h.seq = seq;
      for (int r = 0; r < n; ++r)
        if (!p.have[r])
          missing.push_back(r);
        else
          h.op = p.by_rank[r].h.op;
    } else {
      h.code = static_cast<std::uint32_t>(wire::Phase::Idle);
    }
    return wire::frame(Type::StatusReply, h, net::ranks_text(missing));
  }

  bool all_flushed() const {
    for (auto& c : conns)
      if (!c->gone && c->has_output()) return false;
    return true;
  }
};

TcpStoreServer::TcpStoreServer(net::UniqueFd listener, int nranks, const Secret& secret, in_addr advertised)
    : listener_(std::move(listener)),
      nranks_(nranks),
      secret_(secret),
      ip_(advertised),
      port_(net::local_port(listener_.get())) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0)
    fail(GSHMEM_ERROR_SYSTEM, "starting the rendezvous server: {}. Fix: raise the open-file limit (ulimit -n).",
         errno_text("pipe2()", errno));
  wake_read_.reset(p[0]);
  wake_write_.reset(p[1]);
}

TcpStoreServer::~TcpStoreServer() {
  stop();
}

std::string TcpStoreServer::address() const {
  return fmt::format("{}:{}", net::ip_text(ip_), port_);
}

void TcpStoreServer::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { run(); });
}

void TcpStoreServer::stop() {
  stop_.store(true);
  if (wake_write_) {
    char b = 1;
    [[maybe_unused]] ssize_t k = ::write(wake_write_.get(), &b, 1);
  }
  if (thread_.joinable()) thread_.join();
}

void TcpStoreServer::report_exit(int rank, int wait_status) {
  {
    std::lock_guard<std::mutex> lock(done_mutex_);
    exits_.emplace_back(rank, wait_status);
  }
  if (wake_write_) {
    char b = 1;
    [[maybe_unused]] ssize_t k = ::write(wake_write_.get(), &b, 1);
  }
}

TcpStoreServer::Failure TcpStoreServer::first_failure() const {
  std::lock_guard<std::mutex> lock(done_mutex_);
  return first_;
}

bool TcpStoreServer::wait_done(double seconds) {
  std::unique_lock<std::mutex> lock(done_mutex_);
  return done_cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return done_; });
}

void TcpStoreServer::run() {
  State st(*this, nranks_, secret_, address());
  // One round of poll + handling. Returns whether anything happened.
  auto step = [&](int timeout_ms, bool accept_new) {
    std::vector<pollfd> fds;
    fds.push_back({wake_read_.get(), POLLIN, 0});
    fds.push_back({accept_new ? listener_.get() : -1, POLLIN, 0});
    std::vector<Conn*> order;
    for (auto& c : st.conns) {
      short ev = POLLIN;
      if (c->has_output()) ev |= POLLOUT;
      fds.push_back({c->fd.get(), ev, 0});
      order.push_back(c.get());
    }
    int rc = ::poll(fds.data(), fds.size(), timeout_ms);
    if (rc <= 0) return false;
    if (fds[0].revents) {
      char buf[64];
      while (::read(wake_read_.get(), buf, sizeof buf) > 0) {
      }
    }
    if (fds[1].revents & POLLIN) {
      for (;;) {
        int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) break;
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        auto c = std::make_unique<Conn>();
        c->fd.reset(fd);
        c->peer = peer_text(fd);
        st.conns.push_back(std::move(c));
      }
    }
    for (std::size_t i = 0; i < order.size(); ++i) {
      Conn& c = *order[i];
      short re = fds[i + 2].revents;
      if (!re || c.gone) continue;
      if (re & POLLOUT) st.flush(c);
      if (!(re & (POLLIN | POLLHUP | POLLERR)) || c.gone) continue;
      auto fill = c.in.fill(c.fd.get());
      Frame f;
      for (;;) {
        if (c.gone) break;
        auto nx = c.in.next(f);
        if (nx == wire::FrameReader::Next::Incomplete) break;
        if (nx == wire::FrameReader::Next::Bad) {
          if (c.stage == Conn::Stage::Member)
            st.protocol_error(c, "bytes that are not gshmem's protocol");
          else {
            log::info("rendezvous at {}: closed a connection from {} that does not speak gshmem's protocol", st.address,
                      c.peer);
            c.gone = true;
          }
          break;
        }
        st.on_frame(c, f);
      }
      if (fill == wire::FrameReader::Fill::Eof || fill == wire::FrameReader::Fill::Error) st.disconnect(c);
    }
    // Connections that never finished their handshake do not stay forever.
    auto now = Clock::now();
    for (auto& c : st.conns)
      if (c->stage != Conn::Stage::Member && now - c->since > std::chrono::duration<double>(st.handshake_s))
        c->gone = true;
    st.conns.remove_if([](const std::unique_ptr<Conn>& c) { return c->gone; });
    return true;
  };

  auto handle_exit_reports = [&] {
    std::vector<std::pair<int, int>> exits;
    {
      std::lock_guard<std::mutex> lock(done_mutex_);
      exits.swap(exits_);
    }
    for (auto& [rank, status] : exits) st.exit_reported(rank, status);
    st.lost_timeouts();
  };
  while (!stop_.load()) {
    // A PE-hosted server ends by itself; the launcher's serves every epoch until stop().
    if (!exit_reports_ && (st.finalized || st.over()) && st.all_flushed()) break;
    step(200, true);
    handle_exit_reports();
  }
  if (stop_.load()) {
    // Report what already happened (a PE that dropped just before the stop) and send what is queued.
    for (int i = 0; i < 5 && step(20, false); ++i) {
    }
    handle_exit_reports();
    auto end = Clock::now() + std::chrono::seconds(1);
    while (!st.all_flushed() && Clock::now() < end) step(50, false);
  }
  st.conns.clear();
  listener_.reset();
  {
    std::lock_guard<std::mutex> lock(done_mutex_);
    done_ = true;
  }
  done_cv_.notify_all();
}

}  // namespace gshmem::bootstrap
