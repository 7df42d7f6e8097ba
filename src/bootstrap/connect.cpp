// connect(): picks how this job starts, and the two environment-driven starts (gshmemrun, torchrun).
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "bootstrap/secret.hpp"
#include "bootstrap/starts.hpp"
#include "runtime/config.hpp"
#include "runtime/error.hpp"
#include "runtime/log.hpp"

namespace gshmem::bootstrap {
namespace {

// Launcher-provided variables (not gshmem settings: they describe this process's place in the job).
const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

long long parse_int(const char* name, const char* text, long long lo, long long hi, const char* fix) {
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text, &end, 10);
  if (!*text || *end || errno || v < lo || v > hi)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}=\"{}\" is not an integer in {}..{}. Fix: {}", name, text, lo, hi, fix);
  return v;
}

constexpr int kEnvPortTries = 17;  // MASTER_PORT .. MASTER_PORT+16
constexpr const char* kLauncherFix = "start the program with gshmemrun -n N ./prog (these variables are set by it)";

}  // namespace

std::unique_ptr<TcpBootstrap> join_tcp(TcpBootstrap::Params params, in_addr ip, std::uint16_t port,
                                       std::unique_ptr<TcpStoreServer> server) {
  auto deadline = net::Deadline::bootstrap();
  auto b = std::make_unique<TcpBootstrap>(std::move(params));
  if (server) {
    server->start();
    b->host(std::move(server));
  }
  b->join(ip, port, deadline);
  return b;
}

std::unique_ptr<Bootstrap> connect_launcher() {
  const char* names[] = {"GSHMEM_RANK", "GSHMEM_WORLD_SIZE", "GSHMEM_LAUNCHER_ADDR", "GSHMEM_LAUNCHER_SECRET"};
  std::vector<std::string> missing;
  for (auto* n : names)
    if (!env(n)) missing.push_back(n);
  if (!missing.empty()) {
    std::string list;
    for (auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    fail(GSHMEM_ERROR_INVALID_VALUE,
         "launcher bootstrap: gshmemrun's environment is incomplete ({} not set). "
         "Fix: {}; or choose another start with GSHMEM_BOOTSTRAP (env, mpi, single)",
         list, kLauncherFix);
  }
  int size = static_cast<int>(parse_int("GSHMEM_WORLD_SIZE", env("GSHMEM_WORLD_SIZE"), 1, 1 << 24, kLauncherFix));
  int rank = static_cast<int>(parse_int("GSHMEM_RANK", env("GSHMEM_RANK"), 0, size - 1, kLauncherFix));
  std::string addr = env("GSHMEM_LAUNCHER_ADDR");
  auto colon = addr.rfind(':');
  if (colon == std::string::npos || colon == 0)
    fail(GSHMEM_ERROR_INVALID_VALUE, "GSHMEM_LAUNCHER_ADDR=\"{}\" is not host:port. Fix: {}", addr, kLauncherFix);
  std::string port_text = addr.substr(colon + 1);
  auto port =
      static_cast<std::uint16_t>(parse_int("GSHMEM_LAUNCHER_ADDR (port)", port_text.c_str(), 1, 65535, kLauncherFix));
  in_addr ip = net::resolve_ipv4(addr.substr(0, colon), "GSHMEM_LAUNCHER_ADDR");
  TcpBootstrap::Params p;
  p.kind = "launcher";
  p.rank = rank;
  p.nranks = size;
  if (!parse_secret_hex(env("GSHMEM_LAUNCHER_SECRET"), p.secret))
    fail(GSHMEM_ERROR_INVALID_VALUE, "GSHMEM_LAUNCHER_SECRET is not 32 hex digits. Fix: {}", kLauncherFix);
  p.server_desc = "gshmemrun";
  p.join_fix =
      "check the output of the PEs that did not join: they exited, hang before gshmem init, or never "
      "call it";
  return join_tcp(std::move(p), ip, port, nullptr);
}

std::unique_ptr<Bootstrap> connect_env() {
  const char* fix =
      "start the program with torchrun (e.g. torchrun --nproc-per-node=N prog.py), which sets RANK, "
      "WORLD_SIZE, MASTER_ADDR and MASTER_PORT, or set them yourself for every process";
  std::vector<std::string> missing;
  for (const char* n : {"RANK", "WORLD_SIZE"})
    if (!env(n)) missing.push_back(n);
  if (!missing.empty())
    fail(GSHMEM_ERROR_INVALID_VALUE, "env bootstrap: {} not set. Fix: {}",
         missing.size() == 2 ? "RANK and "
                               "WORLD_SIZE are"
                             : missing[0] + " is",
         fix);
  int size = static_cast<int>(parse_int("WORLD_SIZE", env("WORLD_SIZE"), 1, 1 << 24, fix));
  int rank = static_cast<int>(parse_int("RANK", env("RANK"), 0, size - 1, fix));
  if (size == 1 && (!env("MASTER_ADDR") || !env("MASTER_PORT"))) {
    log::info("env bootstrap: WORLD_SIZE=1 and no MASTER_ADDR/MASTER_PORT: running as a single PE");
    return make_single();
  }
  for (const char* n : {"MASTER_ADDR", "MASTER_PORT"})
    if (!env(n))
      fail(GSHMEM_ERROR_INVALID_VALUE, "env bootstrap (RANK={}, WORLD_SIZE={}): {} is not set. Fix: {}", rank, size, n,
           fix);
  std::string master = env("MASTER_ADDR");
  int base = static_cast<int>(parse_int("MASTER_PORT", env("MASTER_PORT"), 1, 65535 - (kEnvPortTries - 1), fix));
  if (const char* lr = env("LOCAL_RANK"))
    log::trace("env bootstrap: RANK={} LOCAL_RANK={} LOCAL_WORLD_SIZE={}", rank, lr,
               env("LOCAL_WORLD_SIZE") ? env("LOCAL_WORLD_SIZE") : "unset");
  in_addr ip = net::resolve_ipv4(master, "MASTER_ADDR");

  TcpBootstrap::Params p;
  p.kind = "env";
  p.rank = rank;
  p.nranks = size;
  // Derived, not random: it proves a peer was started with this job's environment; anyone who can read that
  // environment (same user) can compute it. gshmemrun and the unique id use random secrets.
  const char* run_id = env("TORCHELASTIC_RUN_ID");
  p.secret =
      derive_secret({master, env("MASTER_PORT"), env("WORLD_SIZE"), run_id ? run_id : "", std::to_string(::getuid())});
  p.server_desc = fmt::format("RANK 0's process, serving on {} ports {}..{}", master, base, base + kEnvPortTries - 1);
  p.join_fix = fmt::format(
      "start all WORLD_SIZE={} processes with the same MASTER_ADDR, MASTER_PORT and "
      "WORLD_SIZE, and check that every rank reaches gshmem init ({})",
      size, fix);
  auto deadline = net::Deadline::bootstrap();

  if (rank == 0) {
    // torchrun's agent may already serve torch's TCPStore on MASTER_PORT: take the first free port after it.
    for (int off = 0; off < kEnvPortTries; ++off) {
      bool in_use = false;
      auto fd = net::listen_tcp(ip, static_cast<std::uint16_t>(base + off), "env bootstrap (RANK 0)", &in_use);
      if (!fd) continue;
      auto server = std::make_unique<TcpStoreServer>(std::move(fd), size, p.secret, ip);
      log::info("env bootstrap: serving the rendezvous on {}", server->address());
      auto port = server->port();
      return join_tcp(std::move(p), ip, port, std::move(server));
    }
    fail(GSHMEM_ERROR_SYSTEM,
         "env bootstrap (RANK 0): ports {}..{} on {} are all in use, so the rendezvous cannot "
         "be served. Fix: choose another MASTER_PORT (torchrun --master-port)",
         base, base + kEnvPortTries - 1, master);
  }

  auto b = std::make_unique<TcpBootstrap>(std::move(p));
  // How long to wait for a port's answer to gshmem's probe. torch's TCPStore on MASTER_PORT (torchrun) takes the
  // probe and stays silent, so a long wait there delays every rank but 0 by that much (2 s measured on H100 under
  // torchrun); gshmem's server answers within a millisecond. A port that stays silent gets twice as long next
  // round, up to 0.4 s, so a rendezvous server that was slow to answer (a loaded host) is joined on a later round,
  // while a silent store costs at most 0.4 s a round when RANK 0 comes late.
  std::array<double, kEnvPortTries> probe_s;
  probe_s.fill(0.05);
  int sleep_ms = 10;
  for (;;) {
    for (int off = 0; off < kEnvPortTries; ++off) {
      auto port = static_cast<std::uint16_t>(base + off);
      auto a = b->try_join(ip, port, deadline, std::min(probe_s[off], deadline.left_s()));
      if (a == TcpBootstrap::Attempt::Joined) {
        b->wait_ready(deadline);
        return b;
      }
      if (a == TcpBootstrap::Attempt::NotOurs) {
        log::trace("env bootstrap: {}:{} did not answer gshmem's probe within {} s (torch's store?); trying the "
                   "next port", master, port, probe_s[off]);
        probe_s[off] = std::min(0.4, probe_s[off] * 2);
      }
      if (a == TcpBootstrap::Attempt::WrongSecret)
        log::info("env bootstrap: {}:{} serves another gshmem job; trying the next port", master, port);
    }
    if (deadline.expired())
      fail(GSHMEM_ERROR_TIMEOUT,
           "connect (env bootstrap) as RANK {} of {}: waited {} for RANK 0 to open the "
           "rendezvous on {} ports {}..{}. Fix: check that RANK 0 is running and reaches gshmem init, that "
           "MASTER_ADDR is reachable from here, and that every process has the same MASTER_ADDR/MASTER_PORT/"
           "WORLD_SIZE; or raise GSHMEM_BOOTSTRAP_TIMEOUT",
           rank, size, net::seconds_text(deadline.seconds()), master, base, base + kEnvPortTries - 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
    sleep_ms = std::min(sleep_ms * 2, 200);
  }
}

std::unique_ptr<Bootstrap> connect(const Options& opts) {
  if (opts.flags & GSHMEMX_INIT_WITH_UNIQUEID) {
    if (!opts.uid)
      fail(GSHMEM_ERROR_INVALID_VALUE,
           "init with GSHMEMX_INIT_WITH_UNIQUEID: the unique id pointer is NULL. Fix: "
           "call gshmemx_set_attr_uniqueid_args(rank, nranks, &uid, &attr) before gshmemx_init_attr");
    return connect_uid(opts.uid, opts.uid_rank, opts.uid_nranks);
  }
  if (opts.flags & GSHMEMX_INIT_WITH_MPI_COMM) {
    if (!opts.mpi_comm)
      fail(GSHMEM_ERROR_INVALID_VALUE,
           "init with GSHMEMX_INIT_WITH_MPI_COMM: attr.mpi_comm is NULL. Fix: set "
           "attr.mpi_comm = &comm (a pointer to your MPI_Comm)");
    return connect_mpi(opts.mpi_comm);
  }
  if (opts.flags & GSHMEMX_INIT_WITH_SHMEM)
    fail(GSHMEM_ERROR_NOT_SUPPORTED,
         "init with GSHMEMX_INIT_WITH_SHMEM: gshmem does not start on top of an "
         "OpenSHMEM library. Fix: start with gshmemrun, mpirun or torchrun instead");

  std::string b = lower(config::get().bootstrap);
  if (b == "auto" || b.empty()) {
    if (env("GSHMEM_LAUNCHER_ADDR") || env("GSHMEM_LAUNCHER_SECRET")) return connect_launcher();
    if (env("OMPI_COMM_WORLD_SIZE") || env("PMIX_RANK") || env("PMI_RANK")) return connect_mpi(nullptr);
    if (env("RANK") && env("WORLD_SIZE")) return connect_env();
    return make_single();
  }
  if (b == "launcher") return connect_launcher();
  if (b == "env") return connect_env();
  if (b == "mpi") return connect_mpi(nullptr);
  if (b == "single") return make_single();
  if (b == "uid")
    fail(GSHMEM_ERROR_INVALID_VALUE,
         "GSHMEM_BOOTSTRAP=uid: a unique-id start needs the id itself. Fix: call "
         "gshmemx_get_uniqueid on one process, share the bytes, and call gshmemx_init_attr("
         "GSHMEMX_INIT_WITH_UNIQUEID, &attr) on every process (GSHMEM_BOOTSTRAP is then not needed)");
  if (b == "pmi" || b == "pmi2" || b == "pmix" || b == "shmem" || b == "plugin")
    fail(GSHMEM_ERROR_NOT_SUPPORTED,
         "GSHMEM_BOOTSTRAP={}: NVSHMEM's {} bootstrap is not supported by gshmem. Fix: "
         "start with gshmemrun (launcher), mpirun (mpi: Open MPI), torchrun (env), or a unique id",
         config::get().bootstrap, config::get().bootstrap);
  fail(GSHMEM_ERROR_INVALID_VALUE,
       "GSHMEM_BOOTSTRAP=\"{}\" is not a known bootstrap. Fix: use one of auto, "
       "launcher, env, mpi, uid, single (case does not matter)",
       config::get().bootstrap);
}

}  // namespace gshmem::bootstrap
