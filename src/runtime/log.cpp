#include "runtime/log.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "runtime/config.hpp"

namespace gshmem::log {
namespace {
std::atomic<int> g_level{-1};
std::atomic<int> g_pe{-1};
std::mutex g_mutex;

Level parse(const std::string& s) {
  if (s == "NONE" || s == "none" || s == "0") return Level::None;
  if (s == "INFO" || s == "info" || s == "VERSION") return Level::Info;
  if (s == "TRACE" || s == "trace") return Level::Trace;
  return Level::Warn;  // WARN and anything unrecognised
}
}  // namespace

Level level() {
  int l = g_level.load(std::memory_order_relaxed);
  if (l < 0) {
    // Before init the config may not be loaded; read the same table entry it would.
    const char* v = std::getenv("GSHMEM_DEBUG");
    if (!v) v = std::getenv("NVSHMEM_DEBUG");
    l = static_cast<int>(parse(v ? v : "WARN"));
    g_level.store(l, std::memory_order_relaxed);
  }
  return static_cast<Level>(l);
}

void set_level_from_config() { g_level.store(static_cast<int>(parse(config::get().debug))); }
void set_pe(int pe) { g_pe.store(pe); }

void write(Level lvl, const std::string& text) {
  static const char* names[] = {"", "WARN", "INFO", "TRACE", "ERROR"};
  char host[64] = {0};
  gethostname(host, sizeof host - 1);
  std::string line;
  int pe = g_pe.load();
  if (pe >= 0)
    line = fmt::format("[gshmem {}:{} PE {}] {}: {}\n", host, getpid(), pe, names[static_cast<int>(lvl)], text);
  else
    line = fmt::format("[gshmem {}:{}] {}: {}\n", host, getpid(), names[static_cast<int>(lvl)], text);
  std::lock_guard<std::mutex> lock(g_mutex);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace gshmem::log
