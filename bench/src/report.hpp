// gshmem-bench and its NCCL companion (nccl_rows.cu): the pieces of a run that do not depend on the library: the
// date, the table PE 0 prints, and passing a unique id from rank 0 to the others through a file.
#pragma once
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common.hpp"

namespace bench {

inline std::string iso_date() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

inline void print_table(const std::vector<Row>& rows) {
  std::size_t w = 4;
  for (const auto& r : rows) w = std::max(w, r.name.size());
  fmt::print("{:<{}} {:>8} {:>12} {:<6} {:>8} {:>8}\n", "name", w, "bytes", "value", "unit", "samples", "ops");
  for (const auto& r : rows)
    if (r.status.empty())
      fmt::print("{:<{}} {:>8} {:>12.4g} {:<6} {:>8} {:>8}\n", r.name, w, r.bytes ? size_label(r.bytes) : "-",
                 r.value, r.unit, r.repeats, r.iters);
    else  // no figure: the reason instead
      fmt::print("{:<{}} {:>8} {:>12} {}\n", r.name, w, r.bytes ? size_label(r.bytes) : "-", "-", r.status);
  std::fflush(stdout);
}

// The rows as the JSON files hold them, the figure under `library`: a row with a status ("failed: ...", "skipped:
// ...") has none, so its value is null and "status" says why.
inline nlohmann::json rows_json(const std::vector<Row>& rows, const char* library, int pes) {
  nlohmann::json jr = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json row = {{"name", r.name}, {"bytes", r.bytes}, {"unit", r.unit}, {library, r.value},
                          {"repeats", r.repeats}, {"iters", r.iters}, {"pes", pes}, {"how", r.how}};
    if (!r.status.empty()) {
      row[library] = nullptr;
      row["status"] = r.status;
    }
    if (r.min_over_pes >= 0) row["min_over_pes"] = r.min_over_pes;
    if (r.algbw >= 0) row["algbw"] = r.algbw;
    if (r.host_us >= 0) row["host_us"] = r.host_us;
    jr.push_back(row);
  }
  return jr;
}
inline void write_json_file(const nlohmann::json& j, const std::string& path) {
  std::ofstream f(path);
  f << j.dump(1) << "\n";
  if (!f) throw std::runtime_error("cannot write " + path);
}

// Rank 0 writes the id (atomically, by rename); the others poll for it (120 s at most).
inline void write_id_file(const std::string& path, const void* id, std::size_t bytes) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f.write(static_cast<const char*>(id), std::streamsize(bytes));
    if (!f) throw std::runtime_error("cannot write the unique id to " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot rename " + tmp);
}
inline void read_id_file(const std::string& path, void* id, std::size_t bytes) {
  const auto t0 = Clock::now();
  for (;;) {
    std::ifstream f(path, std::ios::binary);
    if (f && f.read(static_cast<char*>(id), std::streamsize(bytes))) return;
    if (seconds_since(t0) > 120)
      throw std::runtime_error("no unique id in " + path + " after 120 s (did rank 0 start?)");
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

}  // namespace bench
