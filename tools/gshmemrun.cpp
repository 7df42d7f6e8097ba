// gshmemrun: starts N PEs of a program on this node and serves their rendezvous.
//
//   gshmemrun -n 4 ./prog args...        (also -np 4, --np 4; "--" may separate gshmemrun's options)
//
// Each PE gets GSHMEM_RANK, GSHMEM_WORLD_SIZE, GSHMEM_LOCAL_RANK, GSHMEM_LOCAL_SIZE, GSHMEM_LAUNCHER_ADDR and
// GSHMEM_LAUNCHER_SECRET (a fresh random secret), plus the NVLink-multicast safety settings our GPU hosts
// require. The PEs stay in gshmemrun's process group; SIGINT/SIGTERM/SIGHUP sent to gshmemrun are forwarded.
// When a PE fails, the rendezvous tells the others (they end with an error naming it); those still running 2 s
// later get SIGTERM, then SIGKILL 5 s after that. gshmemrun ends with one summary line naming the PE that failed
// first, and exits with that PE's status (128+signal for a signal), or if it ended with 0 (it left without
// gshmem_finalize while others waited) with the first non-zero status of another PE.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "bootstrap/net.hpp"
#include "bootstrap/secret.hpp"
#include "bootstrap/tcp_server.hpp"
#include "runtime/config.hpp"
#include "runtime/error.hpp"

extern char** environ;

namespace {

using namespace gshmem;
using Clock = std::chrono::steady_clock;

constexpr double kKillAfterSeconds = 5.0;
// After a PE failed, the others learn it from the rendezvous and end by themselves, each printing its error: give
// them this long before SIGTERM.
constexpr double kStopAfterSeconds = 2.0;

Clock::time_point after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : fmt::format("signal {}", sig);
}

void say(const std::string& text) {
  std::string line = "gshmemrun: " + text + "\n";
  [[maybe_unused]] ssize_t k = ::write(STDERR_FILENO, line.data(), line.size());
}

bool is_executable_file(const std::string& path, std::string& why) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    why = std::strerror(errno);
    return false;
  }
  if (S_ISDIR(st.st_mode)) {
    why = "it is a directory";
    return false;
  }
  if (::access(path.c_str(), X_OK) != 0) {
    why = "it is not executable (no x permission for this user)";
    return false;
  }
  return true;
}

// Finds the program as execvp would. Exits with a message naming the path (and PATH) if it cannot be run.
std::string resolve_program(const std::string& prog) {
  std::string why;
  if (prog.find('/') != std::string::npos) {
    if (is_executable_file(prog, why)) return prog;
    say(fmt::format("cannot run '{}': {}. Fix: check the path to the program (and chmod +x it if it is a script)", prog,
                    why));
    std::exit(127);
  }
  const char* path_env = std::getenv("PATH");
  std::string path = path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  for (;;) {
    std::size_t end = path.find(':', start);
    std::string dir = path.substr(start, end == std::string::npos ? std::string::npos : end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + prog;
    if (is_executable_file(candidate, why)) return candidate;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  say(
      fmt::format("cannot run '{}': no executable of that name in PATH={}. Fix: give the program's path "
                  "(e.g. ./{}), or add its directory to PATH",
                  prog, path, prog));
  std::exit(127);
}

struct Child {
  int rank;
  pid_t pid;
  bool alive;
  bool exec_failed = false;  // already reported
  int wait_status = 0;       // once !alive
};

std::string ending_text(int wait_status) {
  if (WIFEXITED(wait_status)) return fmt::format("exit status {}", WEXITSTATUS(wait_status));
  return fmt::format("signal {} ({}){}", WTERMSIG(wait_status), signal_name(WTERMSIG(wait_status)),
                     WCOREDUMP(wait_status) ? ", core dumped" : "");
}

}  // namespace

int main(int argc, char** argv) {
  // Accept MPI's spelling "-np N" (CLI11 reads single-dash options as one letter).
  std::vector<std::string> args(argv + 1, argv + argc);
  for (auto& a : args) {
    if (a == "--") break;
    if (a == "-np")
      a = "--np";
    else if (a.rfind("-np=", 0) == 0)
      a = "--np=" + a.substr(4);
  }
  std::reverse(args.begin(), args.end());  // CLI11's vector form takes the arguments in reverse order

  CLI::App app{
      "gshmemrun: start N PEs of a gshmem program on this node and serve their rendezvous.\n"
      "Example: gshmemrun -n 4 ./ring",
      "gshmemrun"};
  int n = 0;
  std::string bind_addr;
  double timeout = -1;
  app.add_option("-n,--np", n, "number of PEs to start (at least 1)")->required();
  app.add_option("--bind-addr", bind_addr,
                 "IPv4 address the rendezvous listens on (default: GSHMEM_BOOTSTRAP_ADDR, 127.0.0.1)");
  app.add_option("--timeout", timeout,
                 "seconds a PE's bootstrap steps may wait (sets GSHMEM_BOOTSTRAP_TIMEOUT for the PEs)");
  app.prefix_command();
  app.footer("Everything after the program name (or after --) is the program and its arguments.");
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  std::vector<std::string> cmd = app.remaining();
  if (!cmd.empty() && cmd.front() == "--") cmd.erase(cmd.begin());
  if (cmd.empty()) {
    say("no program given. Fix: gshmemrun -n N ./program [args...]");
    return 2;
  }
  if (n < 1) {
    say(fmt::format("-n {}: the number of PEs must be at least 1. Fix: gshmemrun -n N ./program with N >= 1", n));
    return 2;
  }
  std::string program = resolve_program(cmd.front());

  std::vector<std::string> extra;  // settings passed on to the PEs
  if (timeout >= 0) {
    std::string t = fmt::format("{:g}", timeout);
    ::setenv("GSHMEM_BOOTSTRAP_TIMEOUT", t.c_str(), 1);
    extra.push_back("GSHMEM_BOOTSTRAP_TIMEOUT=" + t);
  }

  // Signals are taken through a signalfd: block them before any thread exists (the server's inherits the mask).
  sigset_t handled;
  sigemptyset(&handled);
  for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaddset(&handled, s);
  sigset_t old_mask;
  pthread_sigmask(SIG_BLOCK, &handled, &old_mask);
  int sfd = ::signalfd(-1, &handled, SFD_CLOEXEC);
  if (sfd < 0) {
    say(fmt::format("{}. Fix: this needs Linux signalfd support", errno_text("signalfd()", errno)));
    return 1;
  }

  std::unique_ptr<bootstrap::TcpStoreServer> server;
  bootstrap::Secret secret;
  try {
    config::reload();
    if (bind_addr.empty()) bind_addr = config::get().bootstrap_addr;
    in_addr ip = bootstrap::net::resolve_ipv4(bind_addr, "--bind-addr");
    secret = bootstrap::random_secret();
    auto fd = bootstrap::net::listen_tcp(ip, 0, "gshmemrun (rendezvous server)");
    server = std::make_unique<bootstrap::TcpStoreServer>(std::move(fd), n, secret, bootstrap::net::advertised_ip(ip));
    server->expect_exit_reports();
    server->start();
  } catch (const Error& e) {
    say(e.what());
    return 1;
  }

  // Environment of each PE: ours, minus what we set, plus the PE's variables and the mandatory safety settings.
  const std::map<std::string, std::string> common = {
      {"GSHMEM_WORLD_SIZE", std::to_string(n)},
      {"GSHMEM_LOCAL_SIZE", std::to_string(n)},
      {"GSHMEM_LAUNCHER_ADDR", server->address()},
      {"GSHMEM_LAUNCHER_SECRET", bootstrap::secret_hex(secret)},
      // NVLink multicast must stay off on the shared GPU hosts (see DESIGN.md): always, whatever the caller set.
      {"NVSHMEM_DISABLE_NVLS", "1"},
      {"NCCL_NVLS_ENABLE", "0"},
      {"TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"},
  };
  std::vector<std::string> base_env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    std::string name = kv.substr(0, kv.find('='));
    if (common.count(name) || name == "GSHMEM_RANK" || name == "GSHMEM_LOCAL_RANK") continue;
    base_env.push_back(kv);
  }
  for (auto& [k, v] : common) base_env.push_back(k + "=" + v);

  std::vector<char*> child_argv;
  for (auto& a : cmd) child_argv.push_back(a.data());
  child_argv.push_back(nullptr);

  std::vector<Child> children;
  int exit_status = -1;   // of the first PE that failed
  int first_failed = -1;  // rank of the first PE that exited non-zero
  bool terminating = false;
  Clock::time_point kill_at{};
  Clock::time_point stop_at = Clock::time_point::max();  // SIGTERM the PEs still running (after a failure)
  int interrupted = 0;

  auto signal_live = [&](int sig) {
    for (auto& c : children)
      if (c.alive) ::kill(c.pid, sig);
  };
  auto terminate_rest = [&] {
    if (terminating) return;
    terminating = true;
    kill_at = after(kKillAfterSeconds);
    signal_live(SIGTERM);
  };

  for (int r = 0; r < n && !terminating; ++r) {
    std::vector<std::string> env = base_env;
    env.push_back("GSHMEM_RANK=" + std::to_string(r));
    env.push_back("GSHMEM_LOCAL_RANK=" + std::to_string(r));
    for (auto& x : extra) env.push_back(x);
    std::vector<char*> envp;
    for (auto& x : env) envp.push_back(x.data());
    envp.push_back(nullptr);
    int errpipe[2];
    if (::pipe2(errpipe, O_CLOEXEC) != 0) {
      say(fmt::format("starting PE {}: {}. Fix: raise the open-file limit (ulimit -n)", r,
                      errno_text("pipe2()", errno)));
      exit_status = 1;
      terminate_rest();
      break;
    }
    pid_t parent = ::getpid();
    pid_t pid = ::fork();
    if (pid == 0) {
      // Child: only async-signal-safe calls until exec.
      ::close(errpipe[0]);
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // if gshmemrun is killed, its PEs do not linger
      if (::getppid() != parent) ::_exit(127);
      ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
      ::execve(program.c_str(), child_argv.data(), envp.data());
      int err = errno;
      [[maybe_unused]] ssize_t k = ::write(errpipe[1], &err, sizeof err);
      ::_exit(127);
    }
    ::close(errpipe[1]);
    if (pid < 0) {
      ::close(errpipe[0]);
      say(fmt::format("starting PE {}: {}. Fix: check the process limit (ulimit -u) and free memory", r,
                      errno_text("fork()", errno)));
      exit_status = 1;
      terminate_rest();
      break;
    }
    children.push_back({r, pid, true});
    int err = 0;
    ssize_t got;
    do {
      got = ::read(errpipe[0], &err, sizeof err);
    } while (got < 0 && errno == EINTR);
    ::close(errpipe[0]);
    if (got == static_cast<ssize_t>(sizeof err)) {
      say(
          fmt::format("PE {}: cannot execute '{}': {}. Fix: check that the program is an executable for this "
                      "machine (PATH={})",
                      r, program, std::strerror(err), std::getenv("PATH") ? std::getenv("PATH") : ""));
      children.back().exec_failed = true;
      if (exit_status < 0) first_failed = r;
      exit_status = 127;
      terminate_rest();
    }
  }

  auto live_count = [&] {
    int k = 0;
    for (auto& c : children) k += c.alive;
    return k;
  };
  while (live_count() > 0) {
    int wait_ms = -1;
    Clock::time_point next = terminating ? kill_at : stop_at;
    if (next != Clock::time_point::max()) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now()).count();
      wait_ms = static_cast<int>(std::max<long long>(0, left));
    }
    pollfd p{sfd, POLLIN, 0};
    int rc = ::poll(&p, 1, wait_ms);
    if (!terminating && Clock::now() >= stop_at) {
      std::vector<int> running;
      for (auto& c : children)
        if (c.alive) running.push_back(c.rank);
      say(
          fmt::format("PE{} {} still running {:g} s after PE {} failed: stopping {} (SIGTERM, then SIGKILL after "
                      "{:g} s)",
                      running.size() > 1 ? "s" : "", bootstrap::net::ranks_text(running), kStopAfterSeconds,
                      first_failed, running.size() > 1 ? "them" : "it", kKillAfterSeconds));
      terminate_rest();
    }
    if (terminating && Clock::now() >= kill_at && kill_at != Clock::time_point::max()) {
      std::vector<int> stuck;
      for (auto& c : children)
        if (c.alive) stuck.push_back(c.rank);
      if (!stuck.empty()) {
        say(fmt::format("PE{} {} did not exit {:g} s after SIGTERM; sending SIGKILL", stuck.size() > 1 ? "s" : "",
                        bootstrap::net::ranks_text(stuck), kKillAfterSeconds));
        signal_live(SIGKILL);
      }
      kill_at = Clock::time_point::max();
    }
    if (rc <= 0) continue;
    signalfd_siginfo si{};
    if (::read(sfd, &si, sizeof si) != static_cast<ssize_t>(sizeof si)) continue;
    int sig = static_cast<int>(si.ssi_signo);
    if (sig == SIGCHLD) {
      int status = 0;
      pid_t pid;
      while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
        Child* c = nullptr;
        for (auto& x : children)
          if (x.pid == pid) c = &x;
        if (!c) continue;
        c->alive = false;
        c->wait_status = status;
        server->report_exit(c->rank, status);  // the rendezvous names how it ended to the PEs waiting for it
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        bool ours = terminating && WIFSIGNALED(status) &&
                    (WTERMSIG(status) == SIGTERM || WTERMSIG(status) == SIGKILL ||
                     (interrupted && WTERMSIG(status) == interrupted));
        if (!ours && !c->exec_failed)
          say(WIFEXITED(status)
                  ? fmt::format("PE {} (pid {}) exited with status {}", c->rank, pid, WEXITSTATUS(status))
                  : fmt::format("PE {} (pid {}) killed by signal {}{}", c->rank, pid, signal_name(WTERMSIG(status)),
                                WCOREDUMP(status) ? " (core dumped)" : ""));
        if (exit_status < 0) {
          exit_status = code;
          first_failed = c->rank;
        }
        if (!terminating && stop_at == Clock::time_point::max() && live_count() > 0) stop_at = after(kStopAfterSeconds);
      }
    } else {
      // A signal for gshmemrun. One typed at the terminal (SIGINT from ^C) already reached the PEs, which
      // share our process group; one sent to gshmemrun alone (kill, a batch system) is passed on.
      bool from_tty = si.ssi_code == SI_KERNEL;
      if (!interrupted) interrupted = sig;
      if (!from_tty) signal_live(sig);
      if (!terminating) {
        say(fmt::format("got {}{}; waiting up to {:g} s for the PEs to exit", signal_name(sig),
                        from_tty ? "" : " (passed on to the PEs)", kKillAfterSeconds));
        terminating = true;
        kill_at = after(kKillAfterSeconds);
      }
    }
  }
  server->stop();
  ::close(sfd);
  if (exit_status >= 0) {
    // One line at the end: the PE that failed first, as the rendezvous saw it (a PE that ended without finalize
    // while others waited, died, or aborted), else the first PE that exited non-zero.
    auto failure = server->first_failure();
    int first = failure.rank >= 0 ? failure.rank : first_failed;
    if (first < 0) return exit_status;  // gshmemrun itself failed to start the PEs, and said why
    std::string what = failure.rank >= 0 ? failure.what : "exited non-zero";
    if (auto fix = what.find(" Fix:"); fix != std::string::npos) what.resize(fix);
    std::string ended = "still running";
    for (auto& c : children) {
      if (c.rank != first || c.alive) continue;
      ended = ending_text(c.wait_status);
      // gshmemrun's status is that PE's when it failed with one (the others' are only their reports of it)
      if (failure.rank < 0) continue;  // exit_status is already the first failing PE's
      if (WIFSIGNALED(c.wait_status)) exit_status = 128 + WTERMSIG(c.wait_status);
      if (WIFEXITED(c.wait_status) && WEXITSTATUS(c.wait_status) != 0) exit_status = WEXITSTATUS(c.wait_status);
    }
    say(fmt::format("job failed: PE {} failed first: {} [its process: {}]; gshmemrun exits with status {}", first, what,
                    ended, exit_status));
    return exit_status;
  }
  if (interrupted) return 128 + interrupted;
  return 0;
}
