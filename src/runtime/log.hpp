// The one logger: GSHMEM_DEBUG=NONE|WARN|INFO|TRACE, to stderr, each line prefixed "[gshmem host:pid PE n] LEVEL".
// ERROR lines (an error that ends the PE) are written at every level.
#pragma once
#include <fmt/format.h>

#include <string>

namespace gshmem::log {

enum class Level : int { None = 0, Warn = 1, Info = 2, Trace = 3, Error = 4 };

Level level();
void set_level_from_config();
void set_pe(int pe);  // -1 until the PE is known
void write(Level lvl, const std::string& text);

template <typename... Args>
void warn(fmt::format_string<Args...> f, Args&&... args) {
  if (level() >= Level::Warn) write(Level::Warn, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void info(fmt::format_string<Args...> f, Args&&... args) {
  if (level() >= Level::Info) write(Level::Info, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void trace(fmt::format_string<Args...> f, Args&&... args) {
  if (level() >= Level::Trace) write(Level::Trace, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace gshmem::log
