#include "runtime/config.hpp"

#include <cmath>
#include <cstdlib>
#include <mutex>
#include <optional>

#include "runtime/error.hpp"

namespace gshmem::config {
namespace {

struct Raw {
  std::optional<std::string> value;
  const char* from = nullptr;
};

Raw read_env(const char* name, const char* alias) {
  if (const char* v = std::getenv(name)) return {std::string(v), name};
  if (alias && *alias)
    if (const char* v = std::getenv(alias)) return {std::string(v), alias};
  return {};
}

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

[[noreturn]] void bad(const char* var, const std::string& text, const char* accepted) {
  fail(GSHMEM_ERROR_INVALID_VALUE, "environment variable {}=\"{}\" is not valid: expected {}. Fix: set it to such "
       "a value or unset it (gshmem-info lists every setting).", var, text, accepted);
}

void parse_into(bool& out, const char* var, const std::string& t) {
  std::string s;
  for (char c : trim(t)) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "1" || s == "y" || s == "yes" || s == "true" || s == "on") out = true;
  else if (s == "0" || s == "n" || s == "no" || s == "false" || s == "off" || s.empty()) out = false;
  else bad(var, t, "a boolean (1/0, true/false, yes/no, on/off)");
}
[[maybe_unused]] void parse_into(long long& out, const char* var, const std::string& t) {
  char* end = nullptr;
  std::string s = trim(t);
  long long v = std::strtoll(s.c_str(), &end, 0);
  if (s.empty() || *end) bad(var, t, "an integer");
  out = v;
}
void parse_into(std::uint64_t& out, const char* var, const std::string& t) {
  if (!parse_size(t, out)) bad(var, t, "a size in bytes, optionally with a K, M, G or T suffix (e.g. 512M, 2G)");
}
void parse_into(double& out, const char* var, const std::string& t) {
  char* end = nullptr;
  std::string s = trim(t);
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end || !(v >= 0)) bad(var, t, "a non-negative number of seconds");
  out = v;
}
void parse_into(std::string& out, const char*, const std::string& t) { out = trim(t); }

template <typename T>
std::string show(const T& v) {
  if constexpr (std::is_same_v<T, bool>) return v ? "true" : "false";
  else if constexpr (std::is_same_v<T, std::uint64_t>) return format_size(v);
  else if constexpr (std::is_same_v<T, std::string>) return v;
  else return fmt::format("{}", v);
}

std::mutex g_mutex;
std::optional<Settings> g_settings;

}  // namespace

bool parse_size(const std::string& text, std::uint64_t& out) {
  std::string s = trim(text);
  if (s.empty()) return false;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || !(v >= 0)) return false;
  std::string suffix = trim(end);
  double mult = 1;
  if (!suffix.empty()) {
    char c = static_cast<char>(std::toupper(static_cast<unsigned char>(suffix[0])));
    std::string rest = suffix.substr(1);
    if (!(rest.empty() || rest == "B" || rest == "b" || rest == "iB" || rest == "ib")) return false;
    switch (c) {
      case 'B': if (!rest.empty()) return false; break;
      case 'K': mult = 1024.0; break;
      case 'M': mult = 1024.0 * 1024; break;
      case 'G': mult = 1024.0 * 1024 * 1024; break;
      case 'T': mult = 1024.0 * 1024 * 1024 * 1024; break;
      default: return false;
    }
  }
  double bytes = v * mult;
  if (bytes > 1.8e19) return false;
  out = static_cast<std::uint64_t>(std::llround(bytes));
  return true;
}

std::string format_size(std::uint64_t b) {
  const char* units[] = {"", "K", "M", "G", "T"};
  int u = 0;
  while (u < 4 && b >= 1024 && b % 1024 == 0) {
    b /= 1024;
    ++u;
  }
  return fmt::format("{}{}", b, units[u]);
}

Settings load() {
  Settings s;
#define X(field, type, name, alias, def, doc)                    \
  s.field = def;                                               \
  {                                                            \
    Raw r = read_env(name, alias);                             \
    if (r.value) parse_into(s.field, r.from, *r.value);        \
  }
#include "runtime/settings.def"
#undef X
  return s;
}

const Settings& get() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_settings) g_settings = load();
  return *g_settings;
}

void reload() {
  Settings s = load();
  std::lock_guard<std::mutex> lock(g_mutex);
  g_settings = std::move(s);
}

std::vector<SettingInfo> describe() {
  std::vector<SettingInfo> rows;
#define X(field, type, name, alias, def, doc)                                        \
  {                                                                                \
    Settings::type##_t d = def, cur = def;                                         \
    Raw r = read_env(name, alias);                                                 \
    std::string shown;                                                             \
    if (r.value) {                                                                 \
      try {                                                                        \
        parse_into(cur, r.from, *r.value);                                         \
        shown = show(cur);                                                         \
      } catch (const Error&) {                                                     \
        shown = "INVALID: \"" + *r.value + "\"";                                   \
      }                                                                            \
    } else {                                                                       \
      shown = show(cur);                                                           \
    }                                                                              \
    rows.push_back({name, alias, #type, show(d), shown, r.value.has_value(), doc}); \
  }
#include "runtime/settings.def"
#undef X
  return rows;
}

}  // namespace gshmem::config
