// Bootstrap: the TCP rendezvous (server + PEs as threads), unique ids, connect() paths (as forked processes or
// under gshmemrun / mpirun), FdExchange across forked processes, and gshmemrun's process handling.
#include "bootstrap/bootstrap.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/net.hpp"
#include "bootstrap/secret.hpp"
#include "bootstrap/starts.hpp"
#include "bootstrap/tcp_client.hpp"
#include "bootstrap/tcp_server.hpp"
#include "bootstrap/wire.hpp"
#include "runtime/config.hpp"
#include "runtime/error.hpp"

namespace bs = gshmem::bootstrap;
using gshmem::Error;
using Clock = std::chrono::steady_clock;

namespace {

// Sets an environment variable for one test and reloads the config; restores both afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
    gshmem::config::reload();
  }
  ~ScopedEnv() {
    if (had_)
      ::setenv(name_.c_str(), old_.c_str(), 1);
    else
      ::unsetenv(name_.c_str());
    gshmem::config::reload();
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

int count_fds() {
  int n = 0;
  DIR* d = ::opendir("/proc/self/fd");
  while (dirent* e = ::readdir(d))
    if (e->d_name[0] != '.') ++n;
  ::closedir(d);
  return n - 1;  // the DIR's own fd
}

std::set<std::string> gshmem_files() {
  std::set<std::string> out;
  for (const char* dir : {"/tmp", "/dev/shm"}) {
    DIR* d = ::opendir(dir);
    if (!d) continue;
    while (dirent* e = ::readdir(d))
      if (std::strstr(e->d_name, "gshmem")) out.insert(std::string(dir) + "/" + e->d_name);
    ::closedir(d);
  }
  return out;
}

std::vector<std::uint8_t> random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint8_t> v(n);
  for (auto& b : v) b = static_cast<std::uint8_t>(rng());
  return v;
}

bs::TcpBootstrap::Params params(int rank, int n, const bs::Secret& secret) {
  bs::TcpBootstrap::Params p;
  p.kind = "launcher";
  p.rank = rank;
  p.nranks = n;
  p.secret = secret;
  p.server_desc = "the test's server";
  p.join_fix = "start all test PEs";
  return p;
}

// A job of n PE threads around one server. `body` runs on each PE after it joined; errors are collected.
struct Job {
  bs::Secret secret = bs::random_secret();
  std::unique_ptr<bs::TcpStoreServer> server;
  // exit_reports: the server as gshmemrun runs it (launcher exit reports, epochs)
  explicit Job(int n, bool exit_reports = false) : server(bs::new_server(n, secret, "test server")) {
    if (exit_reports) server->expect_exit_reports();
    server->start();
  }

  std::unique_ptr<bs::TcpBootstrap> join(int rank, int n, const bs::Secret& s) {
    auto b = std::make_unique<bs::TcpBootstrap>(params(rank, n, s));
    b->join(server->ip(), server->port(), bs::net::Deadline::bootstrap());
    return b;
  }
};

struct Outcome {
  bool ok = true;
  int status = 0;
  std::string what;
};

std::vector<Outcome> run_pes(int n, const std::function<void(int)>& body) {
  std::vector<Outcome> out(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      try {
        body(r);
      } catch (const Error& e) {
        out[r] = {false, e.status(), e.what()};
      } catch (const std::exception& e) {
        out[r] = {false, -1, e.what()};
      }
    });
  for (auto& t : threads) t.join();
  return out;
}

// Forks n processes running body(rank) (its return value is the exit code) and waits for them (bounded).
std::vector<int> run_forked(int n, const std::function<int(int)>& body, int seconds = 30) {
  std::vector<pid_t> pids;
  for (int r = 0; r < n; ++r) {
    pid_t pid = ::fork();
    if (pid == 0) {
      int rc = 99;
      try {
        rc = body(r);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "forked PE %d: %s\n", r, e.what());
        rc = 98;
      }
      std::fflush(stderr);
      ::_exit(rc);
    }
    pids.push_back(pid);
  }
  std::vector<int> codes(n, -1);
  auto end = Clock::now() + std::chrono::seconds(seconds);
  int left = n;
  while (left > 0) {
    for (int r = 0; r < n; ++r) {
      if (codes[r] != -1) continue;
      int st = 0;
      if (::waitpid(pids[r], &st, WNOHANG) == pids[r]) {
        codes[r] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        --left;
      }
    }
    if (Clock::now() > end) {
      for (int r = 0; r < n; ++r)
        if (codes[r] == -1) ::kill(pids[r], SIGKILL), ::waitpid(pids[r], nullptr, 0), codes[r] = 200;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return codes;
}

struct CmdResult {
  int status = -1;  // exit code, or 128+signal
  std::string err;
  double seconds = 0;
};

// Runs argv with stderr captured (stdout passes through).
CmdResult run_cmd(std::vector<std::string> argv, int timeout_s = 60) {
  int p[2];
  EXPECT_EQ(::pipe2(p, O_CLOEXEC), 0);
  auto start = Clock::now();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(p[1], 2);
    std::vector<char*> a;
    for (auto& s : argv) a.push_back(s.data());
    a.push_back(nullptr);
    ::execv(a[0], a.data());
    ::_exit(126);
  }
  ::close(p[1]);
  CmdResult r;
  char buf[4096];
  auto end = start + std::chrono::seconds(timeout_s);
  for (;;) {
    pollfd pf{p[0], POLLIN, 0};
    if (::poll(&pf, 1, 100) > 0) {
      ssize_t k = ::read(p[0], buf, sizeof buf);
      if (k <= 0) break;
      r.err.append(buf, static_cast<std::size_t>(k));
    }
    if (Clock::now() > end) {
      ::kill(pid, SIGKILL);
      break;
    }
  }
  ::close(p[0]);
  int st = 0;
  ::waitpid(pid, &st, 0);
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

}  // namespace

// ---- pieces ----

TEST(BootstrapWire, HeaderRoundTripsLittleEndian) {
  bs::wire::Header h;
  h.type = 7;
  h.rank = 3;
  h.root = -1;
  h.op = 2;
  h.code = 9;
  h.seq = 0x0102030405060708ull;
  h.count = 17;
  h.length = 1234;
  std::uint8_t buf[bs::wire::kHeaderBytes];
  bs::wire::encode(h, buf);
  EXPECT_EQ(buf[0], 0x47);   // 'G' of the magic, least significant byte first
  EXPECT_EQ(buf[16], 2);     // op
  EXPECT_EQ(buf[24], 0x08);  // seq, little-endian
  auto d = bs::wire::decode(buf);
  EXPECT_EQ(d.magic, bs::wire::kMagic);
  EXPECT_EQ(d.rank, 3);
  EXPECT_EQ(d.root, -1);
  EXPECT_EQ(d.seq, h.seq);
  EXPECT_EQ(d.count, 17u);
  EXPECT_EQ(d.length, 1234u);
}

TEST(BootstrapWire, RanksTextAndSecrets) {
  EXPECT_EQ(bs::net::ranks_text({3, 2}), "2,3");
  EXPECT_EQ(bs::net::ranks_text({0, 1, 2, 3, 7}), "0-3,7");
  EXPECT_EQ(bs::net::ranks_text({5}), "5");
  auto s = bs::random_secret();
  bs::Secret t{};
  ASSERT_TRUE(bs::parse_secret_hex(bs::secret_hex(s), t));
  EXPECT_EQ(s, t);
  EXPECT_FALSE(bs::parse_secret_hex("xyz", t));
  EXPECT_TRUE(bs::secret_equal(s.data(), t.data()));
  t[15] ^= 1;
  EXPECT_FALSE(bs::secret_equal(s.data(), t.data()));
  EXPECT_EQ(bs::derive_secret({"a", "b"}), bs::derive_secret({"a", "b"}));
  EXPECT_NE(bs::derive_secret({"ab", ""}), bs::derive_secret({"a", "b"}));
}

TEST(BootstrapUid, PackUnpackAndValidation) {
  bs::UidInfo info;
  info.ip = bs::net::resolve_ipv4("127.0.0.1", "test");
  info.port = 4242;
  info.secret = bs::random_secret();
  gshmemx_uniqueid_t uid;
  bs::pack_unique_id(info, &uid);
  EXPECT_EQ(uid.version, GSHMEMX_UNIQUEID_VERSION);
  auto back = bs::unpack_unique_id(&uid);
  EXPECT_EQ(back.port, 4242);
  EXPECT_EQ(back.ip.s_addr, info.ip.s_addr);
  EXPECT_EQ(back.secret, info.secret);

  gshmemx_uniqueid_t bad = uid;
  bad.version = 7;
  try {
    bs::unpack_unique_id(&bad);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), GSHMEM_ERROR_INVALID_VALUE);
    EXPECT_NE(std::string(e.what()).find("not a gshmem unique id"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Fix:"), std::string::npos);
  }
  gshmemx_uniqueid_t zero = GSHMEMX_UNIQUEID_INITIALIZER;
  EXPECT_THROW(bs::unpack_unique_id(&zero), Error);

  bs::Options o;
  o.flags = GSHMEMX_INIT_WITH_UNIQUEID;
  o.uid = &uid;
  o.uid_rank = 0;
  o.uid_nranks = 0;
  try {
    bs::connect(o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), GSHMEM_ERROR_INVALID_VALUE);
    EXPECT_NE(std::string(e.what()).find("nranks"), std::string::npos);
  }
  o.uid_nranks = 2;
  o.uid_rank = 2;
  try {
    bs::connect(o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), GSHMEM_ERROR_INVALID_VALUE);
    EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos);
  }
}

TEST(BootstrapUid, ThreadsJoinThroughAUniqueId) {
  gshmemx_uniqueid_t uid;
  bs::make_unique_id(&uid);
  const int n = 3;
  auto res = run_pes(n, [&](int r) {
    bs::Options o;
    o.flags = GSHMEMX_INIT_WITH_UNIQUEID;
    o.uid = &uid;
    o.uid_rank = r;
    o.uid_nranks = n;
    // The creator's listener is process-global: the first thread to connect serves; in real use that is the
    // process that called gshmemx_get_uniqueid.
    auto b = bs::connect(o);
    EXPECT_STREQ(b->kind(), "uid");
    int v = 100 + r;
    std::vector<int> all(n);
    b->allgather(&v, all.data(), sizeof v);
    for (int i = 0; i < n; ++i) EXPECT_EQ(all[i], 100 + i);
    b->finalize();
  });
  for (auto& o : res) EXPECT_TRUE(o.ok) << o.what;
}

// Whether something listens on the id's port (a TCP connect to its address succeeds).
bool uid_listening(const gshmemx_uniqueid_t& uid) {
  const bs::UidInfo info = bs::unpack_unique_id(&uid);
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(info.port);
  a.sin_addr = info.ip;
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

// gshmem_finalize drops the ids made before its job's init that no job used (every rank made one, PyTorch-style)
// and keeps those made during the job (an id for the next init, sent to the others through the job itself).
TEST(BootstrapUid, FinalizeDropsOnlyIdsMadeBeforeItsInit) {
  gshmemx_uniqueid_t before, during;
  bs::make_unique_id(&before);
  const std::uint64_t mark = bs::unique_ids_made();  // what init records
  bs::make_unique_id(&during);
  ASSERT_TRUE(uid_listening(before) && uid_listening(during));
  bs::drop_unused_unique_ids(mark);  // what finalize does
  EXPECT_FALSE(uid_listening(before)) << "an id made before the job's init still listens after its finalize";
  EXPECT_TRUE(uid_listening(during)) << "an id made during the job was dropped at its finalize";
  bs::drop_unused_unique_ids(bs::unique_ids_made());  // the next job's finalize
  EXPECT_FALSE(uid_listening(during));
}

TEST(BootstrapConnect, SelectionErrors) {
  {
    ScopedEnv e("GSHMEM_BOOTSTRAP", "bogus");
    try {
      bs::connect({});
      FAIL();
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), GSHMEM_ERROR_INVALID_VALUE);
      EXPECT_NE(std::string(e.what()).find("launcher, env, mpi, uid, single"), std::string::npos) << e.what();
    }
  }
  {
    ScopedEnv e("GSHMEM_BOOTSTRAP", "PMI");
    try {
      bs::connect({});
      FAIL();
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), GSHMEM_ERROR_NOT_SUPPORTED);
    }
  }
  {
    ScopedEnv e("GSHMEM_BOOTSTRAP", "single");
    auto b = bs::connect({});
    EXPECT_EQ(b->size(), 1);
    EXPECT_STREQ(b->kind(), "single");
    int x = 5, y = 0;
    b->allgather(&x, &y, sizeof x);
    EXPECT_EQ(y, 5);
    b->barrier();
    b->check_health();
    b->finalize();
  }
  {
    ScopedEnv e("GSHMEM_BOOTSTRAP", "launcher");
    ScopedEnv a("GSHMEM_LAUNCHER_ADDR", nullptr);
    try {
      bs::connect({});
      FAIL();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("GSHMEM_LAUNCHER_ADDR"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("gshmemrun"), std::string::npos);
    }
  }
}

// ---- the TCP rendezvous, PEs as threads ----

class BootstrapStore : public ::testing::TestWithParam<int> {};

TEST_P(BootstrapStore, AllgatherBroadcastBarrierExact) {
  const int n = GetParam();
  Job job(n);
  auto res = run_pes(n, [&](int r) {
    auto b = job.join(r, n, job.secret);
    EXPECT_EQ(b->rank(), r);
    EXPECT_EQ(b->size(), n);
    for (std::size_t len : {std::size_t{0}, std::size_t{1}, std::size_t{37}, std::size_t{4096}, std::size_t{200000}}) {
      auto mine = random_bytes(len, static_cast<unsigned>(len * 131 + r));
      std::vector<std::uint8_t> all(len * n, 0xEE);
      b->allgather(mine.data(), all.data(), len);
      for (int q = 0; q < n; ++q) {
        auto want = random_bytes(len, static_cast<unsigned>(len * 131 + q));
        ASSERT_TRUE(std::equal(want.begin(), want.end(), all.begin() + static_cast<std::ptrdiff_t>(q * len)))
            << "len " << len << " from PE " << q;  // (memcmp of len 0 would pass empty vectors' null data())
      }
    }
    for (int root = 0; root < n; ++root) {
      auto want = random_bytes(333, 7000u + root);
      std::vector<std::uint8_t> buf = r == root ? want : std::vector<std::uint8_t>(333, 0xEE);
      b->broadcast(buf.data(), buf.size(), root);
      ASSERT_EQ(buf, want) << "root " << root;
    }
    for (int i = 0; i < 5; ++i) b->barrier();
    b->check_health();
    b->finalize();
    b->check_health();  // after finalize: nothing to report
  });
  for (int r = 0; r < n; ++r) EXPECT_TRUE(res[r].ok) << "PE " << r << ": " << res[r].what;
}

INSTANTIATE_TEST_SUITE_P(Bootstrap, BootstrapStore, ::testing::Values(1, 2, 3, 4, 8));

TEST(BootstrapStoreErrors, LengthMismatchIsAnErrorOnEveryRank) {
  const int n = 3;
  Job job(n);
  auto res = run_pes(n, [&](int r) {
    auto b = job.join(r, n, job.secret);
    std::vector<std::uint8_t> in(r == 1 ? 16 : 8), out(in.size() * n);
    b->allgather(in.data(), out.data(), in.size());
  });
  for (int r = 0; r < n; ++r) {
    EXPECT_FALSE(res[r].ok);
    EXPECT_EQ(res[r].status, GSHMEM_ERROR_MISMATCH) << res[r].what;
    EXPECT_NE(res[r].what.find("8 bytes on PEs 0,2; 16 bytes on PE 1"), std::string::npos) << res[r].what;
  }
}

TEST(BootstrapStoreErrors, DifferentCallsAreAMismatch) {
  const int n = 2;
  Job job(n);
  auto res = run_pes(n, [&](int r) {
    auto b = job.join(r, n, job.secret);
    if (r == 0) {
      b->barrier();
    } else {
      int x = 0, y[2];
      b->allgather(&x, y, sizeof x);
    }
  });
  for (auto& o : res) {
    EXPECT_EQ(o.status, GSHMEM_ERROR_MISMATCH) << o.what;
    EXPECT_NE(o.what.find("barrier on PE 0"), std::string::npos) << o.what;
  }
}

TEST(BootstrapStoreErrors, WrongSecretIsRejectedAndTheJobStillForms) {
  const int n = 2;
  Job job(n);
  try {
    job.join(0, n, bs::random_secret());
    FAIL() << "a PE with another secret joined";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), GSHMEM_ERROR_INVALID_VALUE);
    EXPECT_NE(std::string(e.what()).find("another job"), std::string::npos) << e.what();
  }
  auto res = run_pes(n, [&](int r) {
    auto b = job.join(r, n, job.secret);
    b->barrier();
    b->finalize();
  });
  for (auto& o : res) EXPECT_TRUE(o.ok) << o.what;
}

TEST(BootstrapStoreErrors, DuplicateAndOutOfRangeRanks) {
  const int n = 2;
  Job job(n);
  auto first = std::make_unique<bs::TcpBootstrap>(params(0, n, job.secret));
  ASSERT_EQ(first->try_join(job.server->ip(), job.server->port(), bs::net::Deadline::after(5), 0),
            bs::TcpBootstrap::Attempt::Joined);
  auto dup = std::make_unique<bs::TcpBootstrap>(params(0, n, job.secret));
  try {
    dup->try_join(job.server->ip(), job.server->port(), bs::net::Deadline::after(5), 0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("PE 0 already joined"), std::string::npos) << e.what();
  }
  auto far = std::make_unique<bs::TcpBootstrap>(params(5, n, job.secret));
  try {
    far->try_join(job.server->ip(), job.server->port(), bs::net::Deadline::after(5), 0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
  }
}

TEST(BootstrapStoreErrors, AbruptCloseReachesTheOthersWithinTwoSeconds) {
  const int n = 4;
  Job job(n);
  std::atomic<int> ready{0};
  auto res = run_pes(n, [&](int r) {
    auto b = job.join(r, n, job.secret);
    b->barrier();
    if (r == 2) {
      b.reset();  // drops the connection without finalize, as a crash would
      return;
    }
    auto start = Clock::now();
    while (Clock::now() - start < std::chrono::seconds(2)) {
      b->check_health();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ADD_FAILURE() << "PE " << r << " did not notice PE 2's death within 2 s";
  });
  for (int r = 0; r < n; ++r) {
    if (r == 2) continue;
    EXPECT_EQ(res[r].status, GSHMEM_ERROR_PEER_FAILED) << res[r].what;
    EXPECT_NE(res[r].what.find("PE 2 died (connection lost)"), std::string::npos) << res[r].what;
  }
}

// A PE that ends without finalize says so (Bootstrap::leave): the others get PEER_FAILED naming it and what it
// did, marked as a departure; once every PE left, the server ends by itself.
TEST(BootstrapStoreErrors, LeaveIsAnnouncedAsADeparture) {
  const int n = 3;
  Job job(n);
  auto res = run_pes(n, [&](int r) {
    auto b = job.join(r, n, job.secret);
    b->barrier();
    if (r == 1) {
      b->leave("its process exited with status 0");
      return;
    }
    auto start = Clock::now();
    try {
      while (Clock::now() - start < std::chrono::seconds(2)) {
        b->check_health();
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      ADD_FAILURE() << "PE " << r << " was not told within 2 s that PE 1 left";
    } catch (const Error&) {
      EXPECT_TRUE(b->failure_is_departure());
      b->leave("its process exited with status 0");  // every PE ends without finalize: a clean end
      throw;
    }
  });
  for (int r = 0; r < n; ++r) {
    if (r == 1) continue;
    EXPECT_EQ(res[r].status, GSHMEM_ERROR_PEER_FAILED) << res[r].what;
    EXPECT_NE(res[r].what.find("PE 1 left without calling gshmem_finalize (its process exited with status 0)"),
              std::string::npos)
        << res[r].what;
  }
  EXPECT_TRUE(job.server->wait_done(5)) << "the server did not end after every PE left";
  auto first = job.server->first_failure();
  EXPECT_EQ(first.rank, 1);
  EXPECT_NE(first.what.find("left without calling gshmem_finalize"), std::string::npos) << first.what;
}

// With exit reports (gshmemrun), a dropped connection is announced with the launcher's wait status.
TEST(BootstrapStoreErrors, ExitReportNamesTheSignal) {
  const int n = 3;
  Job job(n, true);  // as gshmemrun serves it
  auto res = run_pes(n, [&](int r) {
    auto b = job.join(r, n, job.secret);
    b->barrier();
    if (r == 2) {
      b.reset();                            // the connection drops, as a crash would...
      job.server->report_exit(2, SIGSEGV);  // ...and the launcher reaps it: wait status "killed by SIGSEGV"
      return;
    }
    auto start = Clock::now();
    while (Clock::now() - start < std::chrono::seconds(3)) {
      b->check_health();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ADD_FAILURE() << "PE " << r << " did not notice PE 2's death within 3 s";
  });
  for (int r = 0; r < n; ++r) {
    if (r == 2) continue;
    EXPECT_EQ(res[r].status, GSHMEM_ERROR_PEER_FAILED) << res[r].what;
    EXPECT_NE(res[r].what.find("PE 2 died (signal 11, SIGSEGV)"), std::string::npos) << res[r].what;
  }
}

// The launcher's server (exit reports on) serves a second init..finalize of the same PEs, and keeps serving
// until stop().
TEST(BootstrapStoreEpochs, LauncherServerServesInitAgain) {
  const int n = 3;
  Job job(n, true);  // as gshmemrun serves it
  auto res = run_pes(n, [&](int r) {
    for (int cycle = 1; cycle <= 3; ++cycle) {
      auto b = job.join(r, n, job.secret);
      std::uint64_t mine = 1000u * static_cast<unsigned>(cycle) + static_cast<unsigned>(r);
      std::vector<std::uint64_t> all(n);
      b->allgather(&mine, all.data(), sizeof mine);
      for (int p = 0; p < n; ++p) EXPECT_EQ(all[p], 1000u * static_cast<unsigned>(cycle) + static_cast<unsigned>(p));
      b->finalize();
    }
  });
  for (int r = 0; r < n; ++r) EXPECT_TRUE(res[r].ok) << res[r].what;
  EXPECT_FALSE(job.server->wait_done(0.3)) << "the launcher's server ended by itself";
  job.server->stop();
  EXPECT_TRUE(job.server->wait_done(1));
  EXPECT_EQ(job.server->first_failure().rank, -1);
}

// A PE that ends after its finalize while the others init again: their join fails within seconds naming it,
// whether its exit report comes before their join (exit 0) or after it (SIGKILL).
TEST(BootstrapStoreEpochs, PeEndedAfterFinalizeFailsTheNextInit) {
  for (bool report_first : {true, false}) {
    const int n = 3;
    Job job(n, true);  // as gshmemrun serves it
    auto first = run_pes(n, [&](int r) { job.join(r, n, job.secret)->finalize(); });
    for (int r = 0; r < n; ++r) ASSERT_TRUE(first[r].ok) << first[r].what;
    if (report_first) job.server->report_exit(2, 0);  // wait status: exited 0
    auto t0 = Clock::now();
    std::thread later;
    if (!report_first)
      later = std::thread([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the others have joined by then
        job.server->report_exit(2, SIGKILL);                          // wait status: killed by SIGKILL
      });
    auto res = run_pes(n - 1, [&](int r) { job.join(r, n, job.secret); });
    if (later.joinable()) later.join();
    EXPECT_LT(Clock::now() - t0, std::chrono::seconds(5));
    std::string what = report_first ? "PE 2 exited (status 0)" : "PE 2 died (signal 9, SIGKILL)";
    for (int r = 0; r < n - 1; ++r) {
      EXPECT_EQ(res[r].status, GSHMEM_ERROR_PEER_FAILED) << res[r].what;
      EXPECT_NE(res[r].what.find(what + " after gshmem_finalize and did not join gshmem_init again, which PE"),
                std::string::npos)
          << res[r].what;
      EXPECT_NE(res[r].what.find("Fix: every PE must call gshmem_init again"), std::string::npos) << res[r].what;
    }
    auto failure = job.server->first_failure();
    EXPECT_EQ(failure.rank, 2);
    EXPECT_NE(failure.what.find("after gshmem_finalize"), std::string::npos) << failure.what;
  }
}

// A PE whose process ends after its finalize contribution but before the others finalize: the next init of the
// others fails at once naming it (its exit report came while it was still finalizing).
TEST(BootstrapStoreEpochs, PeEndedDuringFinalizeFailsTheNextInit) {
  const int n = 3;
  Job job(n, true);  // as gshmemrun serves it
  auto first = run_pes(n, [&](int r) {
    auto b = job.join(r, n, job.secret);
    if (r == 2) {  // finalizes first; its exit report comes while the others have not finalized yet
      std::thread report([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        job.server->report_exit(2, SIGKILL);
      });
      b->finalize();
      report.join();
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      b->finalize();
    }
  });
  for (int r = 0; r < n; ++r) ASSERT_TRUE(first[r].ok) << first[r].what;
  auto t0 = Clock::now();
  auto res = run_pes(n - 1, [&](int r) { job.join(r, n, job.secret); });
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(5));
  for (int r = 0; r < n - 1; ++r) {
    EXPECT_EQ(res[r].status, GSHMEM_ERROR_PEER_FAILED) << res[r].what;
    EXPECT_NE(res[r].what.find("PE 2 died (signal 9, SIGKILL) after gshmem_finalize"), std::string::npos)
        << res[r].what;
  }
}

// A program that calls gshmem_init again after its job lost a PE (no finalize ended that init): refused at once
// with what happened, not as "two processes were given the same rank".
TEST(BootstrapStoreEpochs, InitAgainAfterAFailedInitIsRefused) {
  const int n = 2;
  Job job(n, true);  // as gshmemrun serves it
  auto res = run_pes(n, [&](int r) {
    auto b = job.join(r, n, job.secret);
    if (r == 1) {
      b->abort("deliberate");
      return;
    }
    b->barrier();  // fails: PE 1 aborted
  });
  ASSERT_FALSE(res[0].ok);
  auto again = run_pes(1, [&](int) { job.join(0, n, job.secret); });
  ASSERT_FALSE(again[0].ok);
  EXPECT_NE(again[0].what.find("PE 0 calls gshmem_init again, but this job's last init..finalize did not end (PE 1 "
                               "aborted: deliberate)"),
            std::string::npos)
      << again[0].what;
  EXPECT_EQ(again[0].what.find("same rank"), std::string::npos) << again[0].what;
}

// Every PE finalizes and ends (the usual job): their exit reports are no failure.
TEST(BootstrapStoreEpochs, EndingAfterTheLastFinalizeIsNoFailure) {
  const int n = 2;
  Job job(n, true);  // as gshmemrun serves it
  auto res = run_pes(n, [&](int r) { job.join(r, n, job.secret)->finalize(); });
  for (int r = 0; r < n; ++r) ASSERT_TRUE(res[r].ok) << res[r].what;
  for (int r = 0; r < n; ++r) job.server->report_exit(r, 0);
  job.server->stop();
  EXPECT_EQ(job.server->first_failure().rank, -1) << job.server->first_failure().what;
}

TEST(BootstrapStoreErrors, AbortIsForwarded) {
  const int n = 3;
  Job job(n);
  auto res = run_pes(n, [&](int r) {
    auto b = job.join(r, n, job.secret);
    if (r == 1) {
      b->abort("out of cheese");
      return;
    }
    b->barrier();  // can never complete: the notice ends it
  });
  EXPECT_TRUE(res[1].ok);
  for (int r : {0, 2}) {
    EXPECT_EQ(res[r].status, GSHMEM_ERROR_PEER_FAILED) << res[r].what;
    EXPECT_NE(res[r].what.find("PE 1 aborted: out of cheese"), std::string::npos) << res[r].what;
  }
}

TEST(BootstrapStoreErrors, ServerDisappearingIsAPeerFailure) {
  const int n = 2;
  Job job(n);
  std::vector<std::unique_ptr<bs::TcpBootstrap>> pes(n);
  auto res = run_pes(n, [&](int r) { pes[r] = job.join(r, n, job.secret); });
  for (auto& o : res) ASSERT_TRUE(o.ok) << o.what;
  job.server->stop();
  for (auto& b : pes) {
    try {
      auto start = Clock::now();
      while (Clock::now() - start < std::chrono::seconds(2)) b->check_health();
      ADD_FAILURE() << "no error after the server went away";
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), GSHMEM_ERROR_PEER_FAILED);
      EXPECT_NE(std::string(e.what()).find("lost the connection to the rendezvous server"), std::string::npos)
          << e.what();
    }
  }
}

TEST(BootstrapStoreErrors, TimeoutNamesThePesThatNeverJoined) {
  ScopedEnv t("GSHMEM_BOOTSTRAP_TIMEOUT", "1");
  const int n = 4;
  Job job(n);
  auto start = Clock::now();
  auto res = run_pes(2, [&](int r) { job.join(r, n, job.secret); });
  double took = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_LT(took, 5.0);
  // Both time out at about the same moment; if one PE's exit reaches the other first, the other may report it
  // (PEER_FAILED) instead. At least one must name the missing PEs.
  int named = 0;
  for (auto& o : res) {
    EXPECT_TRUE(o.status == GSHMEM_ERROR_TIMEOUT || o.status == GSHMEM_ERROR_PEER_FAILED) << o.what;
    if (o.status != GSHMEM_ERROR_TIMEOUT) continue;
    ++named;
    EXPECT_NE(o.what.find("waited 1 s for PEs 2,3 to join the rendezvous at 127.0.0.1:"), std::string::npos) << o.what;
    EXPECT_NE(o.what.find("(2 of 4 joined)"), std::string::npos) << o.what;
    EXPECT_NE(o.what.find("Fix:"), std::string::npos) << o.what;
  }
  EXPECT_GE(named, 1);
}

TEST(BootstrapStoreErrors, TimeoutNamesThePesMissingFromACollective) {
  ScopedEnv t("GSHMEM_BOOTSTRAP_TIMEOUT", "1");
  const int n = 3;
  Job job(n);
  auto res = run_pes(n, [&](int r) {
    auto b = job.join(r, n, job.secret);
    if (r != 0)
      b->barrier();
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  });
  int named = 0;
  for (int r : {1, 2}) {
    EXPECT_TRUE(res[r].status == GSHMEM_ERROR_TIMEOUT || res[r].status == GSHMEM_ERROR_PEER_FAILED) << res[r].what;
    if (res[r].status != GSHMEM_ERROR_TIMEOUT) continue;
    ++named;
    EXPECT_NE(res[r].what.find("barrier (bootstrap collective #1)"), std::string::npos) << res[r].what;
    EXPECT_NE(res[r].what.find("for PE 0 to reach it"), std::string::npos) << res[r].what;
  }
  EXPECT_GE(named, 1);
}

TEST(BootstrapStoreErrors, ServerNotUpTimesOut) {
  ScopedEnv t("GSHMEM_BOOTSTRAP_TIMEOUT", "0.5");
  // A port nobody listens on: take an ephemeral one and close it.
  auto fd = bs::net::listen_tcp(bs::net::resolve_ipv4("127.0.0.1", "t"), 0, "test");
  auto port = bs::net::local_port(fd.get());
  fd.reset();
  bs::TcpBootstrap b(params(0, 2, bs::random_secret()));
  try {
    b.join(bs::net::resolve_ipv4("127.0.0.1", "t"), port, bs::net::Deadline::bootstrap());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), GSHMEM_ERROR_TIMEOUT);
    EXPECT_NE(std::string(e.what()).find("to accept connections"), std::string::npos) << e.what();
  }
}

// ---- connect() through the environment, as separate processes ----

TEST(BootstrapConnect, TorchrunEnvSkipsAForeignServerOnMasterPort) {
  // Stand-ins for torch's TCPStore on MASTER_PORT: one that reads and closes, and one that, as torch's does, keeps
  // the connection open and says nothing. The silent one must not hold the ranks up: each probe of it is answered
  // by nothing, and the rank moves on after its short first wait (it used to wait 2 s there on every rank but 0).
  for (bool silent : {false, true}) {
    SCOPED_TRACE(silent ? "silent store" : "closing store");
    auto ip = bs::net::resolve_ipv4("127.0.0.1", "t");
    auto store = bs::net::listen_tcp(ip, 0, "fake store");
    int port = bs::net::local_port(store.get());
    std::atomic<bool> stop{false};
    std::thread fake([&] {
      std::vector<int> held;
      while (!stop) {
        pollfd p{store.get(), POLLIN, 0};
        if (::poll(&p, 1, 50) <= 0) continue;
        int c = ::accept(store.get(), nullptr, nullptr);
        if (c < 0) continue;
        if (silent) {
          held.push_back(c);
          continue;
        }
        char buf[64];
        pollfd q{c, POLLIN, 0};
        if (::poll(&q, 1, 1000) > 0) [[maybe_unused]]
          auto k = ::read(c, buf, sizeof buf);
        ::close(c);
      }
      for (int c : held) ::close(c);
    });
    const int n = 3;
    auto codes = run_forked(n, [&](int r) {
      ::setenv("GSHMEM_BOOTSTRAP", "env", 1);
      ::setenv("RANK", std::to_string(r).c_str(), 1);
      ::setenv("WORLD_SIZE", std::to_string(n).c_str(), 1);
      ::setenv("MASTER_ADDR", "127.0.0.1", 1);
      ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      gshmem::config::reload();
      auto t0 = std::chrono::steady_clock::now();
      auto b = bs::connect({});
      double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (std::string(b->kind()) != "env" || b->rank() != r || b->size() != n) return 2;
      long v = 1000 + r;
      std::vector<long> all(n);
      b->allgather(&v, all.data(), sizeof v);
      for (int i = 0; i < n; ++i)
        if (all[i] != 1000 + i) return 3;
      b->finalize();
      if (took > 1.5) {
        std::fprintf(stderr, "PE %d: connect took %.2f s with a foreign server on MASTER_PORT\n", r, took);
        return 4;
      }
      return 0;
    });
    stop = true;
    fake.join();
    for (int r = 0; r < n; ++r) EXPECT_EQ(codes[r], 0) << "PE " << r << " (4: connect took more than 1.5 s)";
  }
}

// Runs as a PE when this binary is started by gshmemrun or mpirun (see the tests below); skipped otherwise.
TEST(BootstrapChild, PeUnderALauncher) {
  if (!std::getenv("GSHMEM_BOOTSTRAP_TEST_CHILD")) GTEST_SKIP() << "runs only as a PE started by another test";
  auto b = bs::connect({});
  int n = b->size(), r = b->rank();
  std::vector<int> all(n);
  int v = r * 7;
  b->allgather(&v, all.data(), sizeof v);
  for (int i = 0; i < n; ++i) ASSERT_EQ(all[i], i * 7);
  char word[8] = "";
  if (r == 0) std::strcpy(word, "gshmem");
  b->broadcast(word, sizeof word, 0);
  ASSERT_STREQ(word, "gshmem");
  std::fprintf(stderr, "child PE %d of %d kind %s ok\n", r, n, b->kind());
  b->finalize();
}

std::string self_exe() {
  char buf[4096];
  ssize_t k = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return k > 0 ? std::string(buf, static_cast<std::size_t>(k)) : std::string();
}

TEST(BootstrapConnect, UnderGshmemrun) {
  auto r = run_cmd({GSHMEMRUN_PATH, "-n", "3", "--", "/usr/bin/env", "GSHMEM_BOOTSTRAP_TEST_CHILD=1", self_exe(),
                    "--gtest_filter=BootstrapChild.PeUnderALauncher"});
  EXPECT_EQ(r.status, 0) << r.err;
  for (int pe = 0; pe < 3; ++pe)
    EXPECT_NE(r.err.find(fmt::format("child PE {} of 3 kind launcher ok", pe)), std::string::npos) << r.err;
}

TEST(BootstrapConnect, UnderMpirun) {
  if (::access("/usr/bin/mpirun", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/mpirun (Open MPI) on this machine";
  ScopedEnv a("OMPI_ALLOW_RUN_AS_ROOT", "1");
  ScopedEnv b("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
  auto r = run_cmd({"/usr/bin/mpirun", "-np", "2", "--oversubscribe", "-x", "GSHMEM_BOOTSTRAP_TEST_CHILD=1", self_exe(),
                    "--gtest_filter=BootstrapChild.PeUnderALauncher"});
  if (r.status != 0 && r.err.find("child PE") == std::string::npos)
    GTEST_SKIP() << "mpirun could not start processes here:\n" << r.err;
  EXPECT_EQ(r.status, 0) << r.err;
  for (int pe = 0; pe < 2; ++pe)
    EXPECT_NE(r.err.find(fmt::format("child PE {} of 2 kind mpi ok", pe)), std::string::npos) << r.err;
}

// ---- FdExchange across processes ----

namespace {
int fd_exchange_pe(const bs::Secret& secret, int r, const std::vector<int>& pids, int nfds) {
  int before = count_fds();
  std::vector<int> local(pids.size());
  for (std::size_t i = 0; i < local.size(); ++i) local[i] = static_cast<int>(i);
  {
    bs::FdExchange ex(secret, r, local, pids);
    for (std::uint64_t tag : {11u, 12u, 13u}) {
      std::vector<int> mine;
      for (int k = 0; k < nfds; ++k) {
        int fd = ::memfd_create("gshmem-test", MFD_CLOEXEC);
        std::uint64_t pattern = tag * 1000000 + static_cast<std::uint64_t>(r) * 1000 + k;
        if (::pwrite(fd, &pattern, sizeof pattern, 0) != sizeof pattern) return 10;
        mine.push_back(fd);
      }
      auto got = ex.exchange(mine, tag);
      for (int fd : mine) ::close(fd);
      if (got.size() != pids.size()) return 11;
      for (std::size_t q = 0; q < got.size(); ++q) {
        if (static_cast<int>(got[q].size()) != nfds) return 12;
        for (int k = 0; k < nfds; ++k) {
          std::uint64_t v = 0;
          if (::pread(got[q][k], &v, sizeof v, 0) != sizeof v) return 13;
          if (v != tag * 1000000 + q * 1000 + k) {
            std::fprintf(stderr, "PE %d: tag %lu from %zu fd %d: got %lu\n", r, (unsigned long)tag, q, k,
                         (unsigned long)v);
            return 14;
          }
          ::close(got[q][k]);
        }
      }
    }
  }
  int after = count_fds();
  if (after != before) {
    std::fprintf(stderr, "PE %d: fd count %d before, %d after\n", r, before, after);
    return 15;
  }
  return 0;
}

void fd_exchange_job(int n, int nfds) {
  auto secret = bs::random_secret();
  // Children wait for the pid table on a pipe, then exchange.
  std::vector<std::array<int, 2>> pipes(n);
  for (auto& p : pipes) ASSERT_EQ(::pipe(p.data()), 0);
  std::vector<pid_t> pids;
  for (int r = 0; r < n; ++r) {
    pid_t pid = ::fork();
    if (pid == 0) {
      std::vector<int> table(n);
      std::size_t got = 0;
      while (got < sizeof(int) * n) {
        ssize_t k = ::read(pipes[r][0], reinterpret_cast<char*>(table.data()) + got, sizeof(int) * n - got);
        if (k <= 0) ::_exit(20);
        got += static_cast<std::size_t>(k);
      }
      for (auto& p : pipes) ::close(p[0]), ::close(p[1]);
      int rc = 99;
      try {
        rc = fd_exchange_pe(secret, r, table, nfds);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "PE %d: %s\n", r, e.what());
        rc = 98;
      }
      ::_exit(rc);
    }
    pids.push_back(pid);
  }
  std::vector<int> table(pids.begin(), pids.end());
  for (auto& p : pipes) {
    ASSERT_EQ(::write(p[1], table.data(), sizeof(int) * n), static_cast<ssize_t>(sizeof(int) * n));
    ::close(p[0]);
    ::close(p[1]);
  }
  for (int r = 0; r < n; ++r) {
    int st = 0;
    ::waitpid(pids[r], &st, 0);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "PE " << r << " status " << st;
  }
}
}  // namespace

TEST(BootstrapFdExchange, AcrossForkedProcesses) {
  int before = count_fds();
  auto files = gshmem_files();
  fd_exchange_job(2, 1);
  fd_exchange_job(4, 3);
  fd_exchange_job(3, 300);  // more than one SCM_RIGHTS message per peer
  fd_exchange_job(5, 0);
  EXPECT_EQ(count_fds(), before);
  EXPECT_EQ(gshmem_files(), files) << "files left in /tmp or /dev/shm";
}

TEST(BootstrapFdExchange, RejectsAForeignPidAndTimesOut) {
  ScopedEnv t("GSHMEM_BOOTSTRAP_TIMEOUT", "1");
  auto secret = bs::random_secret();
  // The pid table names pid 1 as PE 1: PE 0 must refuse the real PE 1's message and time out naming it.
  const std::vector<int> pids = {static_cast<int>(::getpid()), 1};
  pid_t child = ::fork();
  if (child == 0) {
    // The real PE 1 gets PE 0's message (PE 0's pid is right), so its side succeeds.
    int rc = 0;
    try {
      bs::FdExchange ex(secret, 1, {0, 1}, pids);
      ex.exchange({}, 5);
    } catch (const Error& e) {
      std::fprintf(stderr, "PE 1: %s\n", e.what());
      rc = 1;
    }
    ::_exit(rc);
  }
  {
    bs::FdExchange ex(secret, 0, {0, 1}, pids);
    try {
      ex.exchange({}, 5);
      ADD_FAILURE() << "an exchange with an impostor succeeded";
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), GSHMEM_ERROR_TIMEOUT);
      EXPECT_NE(std::string(e.what()).find("local PE 1 to send"), std::string::npos) << e.what();
    }
  }
  int st = 0;
  ::waitpid(child, &st, 0);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << st;
}

// ---- gshmemrun ----

TEST(Gshmemrun, AllSucceedAndEnvironmentIsSet) {
  auto r = run_cmd({GSHMEMRUN_PATH, "-n", "3", "--", "/bin/sh", "-c",
                    "test \"$GSHMEM_WORLD_SIZE\" = 3 && test \"$GSHMEM_LOCAL_SIZE\" = 3 && "
                    "test \"$GSHMEM_RANK\" = \"$GSHMEM_LOCAL_RANK\" && test ${#GSHMEM_LAUNCHER_SECRET} = 32 && "
                    "test -n \"$GSHMEM_LAUNCHER_ADDR\" && test \"$NVSHMEM_DISABLE_NVLS\" = 1 && "
                    "test \"$NCCL_NVLS_ENABLE\" = 0 && test \"$TORCH_SYMM_MEM_DISABLE_MULTICAST\" = 1"});
  EXPECT_EQ(r.status, 0) << r.err;
  r = run_cmd({GSHMEMRUN_PATH, "-np", "2", "/bin/sh", "-c", "exit 0"});
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST(Gshmemrun, OneFailingPeStopsTheOthers) {
  auto r = run_cmd({GSHMEMRUN_PATH, "-n", "3", "--", "/bin/sh", "-c",
                    "if [ \"$GSHMEM_RANK\" = 1 ]; then sleep 0.2; exit 7; fi; exec sleep 60"});
  EXPECT_EQ(r.status, 7) << r.err;
  EXPECT_LT(r.seconds, 4.0);
  EXPECT_NE(r.err.find("gshmemrun: PE 1 (pid"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("exited with status 7"), std::string::npos) << r.err;

  r = run_cmd({GSHMEMRUN_PATH, "-n", "2", "--", "/bin/sh", "-c",
               "if [ \"$GSHMEM_RANK\" = 0 ]; then kill -KILL $$; fi; exec sleep 60"});
  EXPECT_EQ(r.status, 128 + SIGKILL) << r.err;
  EXPECT_NE(r.err.find("killed by signal SIGKILL"), std::string::npos) << r.err;
  EXPECT_LT(r.seconds, 4.0);
}

TEST(Gshmemrun, PeIgnoringSigtermIsKilledAfterFiveSeconds) {
  auto r = run_cmd({GSHMEMRUN_PATH, "-n", "2", "--", "/bin/sh", "-c",
                    "trap '' TERM; if [ \"$GSHMEM_RANK\" = 0 ]; then sleep 0.3; exit 3; fi; exec sleep 60"});
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_GT(r.seconds, 4.5);
  EXPECT_LT(r.seconds, 9.0);
  EXPECT_NE(r.err.find("sending SIGKILL"), std::string::npos) << r.err;
}

TEST(Gshmemrun, BadArguments) {
  auto r = run_cmd({GSHMEMRUN_PATH, "-n", "0", "/bin/true"});
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("at least 1"), std::string::npos) << r.err;
  r = run_cmd({GSHMEMRUN_PATH, "-n", "2", "no-such-program-gshmem"});
  EXPECT_EQ(r.status, 127);
  EXPECT_NE(r.err.find("no-such-program-gshmem"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("PATH="), std::string::npos) << r.err;
  char path[] = "/tmp/noexec-test-XXXXXX";
  int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::close(fd);
  ::chmod(path, 0644);
  r = run_cmd({GSHMEMRUN_PATH, "-n", "2", path});
  EXPECT_EQ(r.status, 127);
  EXPECT_NE(r.err.find("not executable"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
  ::chmod(path, 0755);  // executable but not a program: execve fails in the PE
  r = run_cmd({GSHMEMRUN_PATH, "-n", "2", path});
  EXPECT_EQ(r.status, 127);
  EXPECT_NE(r.err.find("cannot execute"), std::string::npos) << r.err;
  ::unlink(path);
}

TEST(Gshmemrun, ForwardsSigterm) {
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(p[1], 2);
    ::execl(GSHMEMRUN_PATH, GSHMEMRUN_PATH, "-n", "2", "/bin/sleep", "60", static_cast<char*>(nullptr));
    ::_exit(126);
  }
  ::close(p[1]);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto start = Clock::now();
  ::kill(pid, SIGTERM);
  int st = 0;
  ::waitpid(pid, &st, 0);
  ::close(p[0]);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 3.0);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 128 + SIGTERM);
}
