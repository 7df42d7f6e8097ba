// Settings: the one table of GSHMEM_* environment settings (settings.def), read once at init.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace gshmem::config {

struct Settings {
#define X(field, type, name, alias, def, doc) type##_t field;
  using Bool_t = bool;
  using Int_t = long long;
  using Size_t = std::uint64_t;
  using Seconds_t = double;
  using String_t = std::string;
#include "settings.def"
#undef X
};

// One row of the table, as gshmem-info prints it.
struct SettingInfo {
  const char* name;
  const char* alias;  // NVSHMEM_* name with the same meaning, or ""
  const char* type;
  std::string default_value;
  std::string current_value;  // as read from the environment now
  bool from_env;              // set in the environment (under either name)
  const char* doc;
};

// Reads the environment (GSHMEM_* first, then the NVSHMEM_* alias). Throws gshmem::Error naming the variable,
// the value and what is accepted when a value does not parse.
Settings load();
// The settings loaded at init (load() on first use if called earlier).
const Settings& get();
void reload();
std::vector<SettingInfo> describe();

// Parses "64M", "1G", "4096", "1.5G" (binary units). Returns false if the text is not a size.
bool parse_size(const std::string& text, std::uint64_t& out);
std::string format_size(std::uint64_t bytes);

}  // namespace gshmem::config
