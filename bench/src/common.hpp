// gshmem-bench: options, result rows and timing helpers shared by the host rows (host_rows.cpp) and the device
// rows (device_rows.cu). Library-neutral: no SHMEM or CUDA names here.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace bench {

struct Options {
  std::vector<std::string> suites;            // expanded suite names
  std::vector<std::uint64_t> sizes;           // bandwidth rows (device, stream, host put/get)
  std::vector<std::uint64_t> signal_sizes;    // put+signal ping-pong
  std::vector<std::uint64_t> malloc_sizes;    // malloc/free
  std::vector<std::uint64_t> coll_sizes;      // collectives (suite coll): bytes per PE as NCCL counts them
  std::vector<int> ctas{1, 8, 32};            // device bandwidth: CTAs per grid
  int threads = 1024;                         // device bandwidth and put+signal: threads per CTA
  std::vector<std::string> scopes{"thread", "warp", "block"};
  std::vector<std::string> dirs{"uni", "bi"};
  std::vector<std::string> patterns{"pair"};  // device put/get bandwidth: pair (PE 0 -> 1), all (all-to-all)
  int repeats = 10;                           // timed samples per row (the row reports their median)
  int warmup = 2;                             // untimed samples before them
  std::uint64_t iters = 0;                    // operations per sample for bandwidth rows (0 = from the size)
  std::uint64_t bw_target_bytes = 256ull << 20;  // with iters 0: about this many bytes per sample (1..1000 ops)
  std::uint64_t lat_iters = 1000;             // operations per sample for latency and rate rows
  int amo_ctas = 8;                           // atomic rate: CTAs x threads issuing atomics at once
  int amo_threads = 256;
  bool progress = false;                      // collective rows: PE 0 names each row on stderr before it runs
  std::vector<std::string> coll_kinds;        // collective rows: these kinds only (coll::kind_name), empty: all
  std::vector<std::string> coll_forms;        // GPU collective rows: stream and/or block, empty: both
  std::string coll_fault;                     // test: "<row>@<bytes>": the last PE spoils its result of that row
};

struct Row {
  std::string name;
  std::uint64_t bytes = 0;
  std::string unit;  // "GB/s", "us", "ms", "Mop/s"
  double value = 0;
  int repeats = 0;          // samples whose median is `value`
  std::uint64_t iters = 0;  // operations timed together in one sample
  std::string how;          // one line: what was timed
  double min_over_pes = -1;  // where every PE measures the same thing (all-to-all rows): the lowest PE's figure
  double algbw = -1;         // collective busbw rows: the algorithm bandwidth (size / time) beside busbw, GB/s
  double host_us = -1;       // stream rows: the host's wall time per call (issuing it, not waiting), median, us
  std::string status{};      // empty: measured; "failed: ..." (result check) or "skipped: ...": `value` means nothing
};

using Clock = std::chrono::steady_clock;
// A comma list's non-empty items ("a,,b" -> a, b).
inline std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> v;
  std::stringstream ss(s);
  for (std::string p; std::getline(ss, p, ',');)
    if (!p.empty()) v.push_back(p);
  return v;
}

inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Operations per bandwidth sample: enough to move about bw_target_bytes, between 1 and 1000.
inline std::uint64_t bw_iters(const Options& o, std::uint64_t bytes) {
  if (o.iters) return o.iters;
  const std::uint64_t n = (o.bw_target_bytes + bytes - 1) / bytes;
  return std::clamp<std::uint64_t>(n, 1, 1000);
}

// GB/s (1e9 bytes per second) from bytes moved and seconds.
inline double gbps(double bytes, double seconds) { return seconds > 0 ? bytes / seconds / 1e9 : 0; }

// "1K", "16M", "8" (binary suffixes where exact).
inline std::string size_label(std::uint64_t b) {
  if (b >= (1ull << 30) && b % (1ull << 30) == 0) return std::to_string(b >> 30) + "G";
  if (b >= (1ull << 20) && b % (1ull << 20) == 0) return std::to_string(b >> 20) + "M";
  if (b >= (1ull << 10) && b % (1ull << 10) == 0) return std::to_string(b >> 10) + "K";
  return std::to_string(b);
}

// "4K" -> 4096: a number with an optional K, M or G suffix (binary), optionally followed by B.
inline std::uint64_t parse_bytes(const std::string& s) {
  std::size_t pos = 0;
  const unsigned long long v = std::stoull(s, &pos);
  std::string suf = s.substr(pos);
  if (!suf.empty() && (suf.back() == 'B' || suf.back() == 'b')) suf.pop_back();
  if (suf.empty()) return v;
  if (suf == "K" || suf == "k" || suf == "Ki") return v << 10;
  if (suf == "M" || suf == "m" || suf == "Mi") return v << 20;
  if (suf == "G" || suf == "g" || suf == "Gi") return v << 30;
  throw std::invalid_argument("bad size '" + s + "' (a number with an optional K, M or G suffix, binary)");
}

// "8,4K,1M" (a list) or "8:1G" (powers of two) or "8:1G:4" (every size times 4).
inline std::vector<std::uint64_t> parse_sizes(const std::string& spec) {
  std::vector<std::uint64_t> out;
  if (spec.find(':') != std::string::npos) {
    std::vector<std::string> parts;
    std::stringstream ss(spec);
    for (std::string p; std::getline(ss, p, ':');) parts.push_back(p);
    if (parts.size() < 2 || parts.size() > 3) throw std::invalid_argument("size range is MIN:MAX[:FACTOR]");
    const std::uint64_t lo = parse_bytes(parts[0]), hi = parse_bytes(parts[1]);
    const std::uint64_t f = parts.size() == 3 ? std::stoull(parts[2]) : 2;
    if (lo == 0 || f < 2 || lo > hi) throw std::invalid_argument("size range needs 0 < MIN <= MAX and FACTOR >= 2");
    for (std::uint64_t b = lo; b <= hi; b *= f) out.push_back(b);
  } else {
    std::stringstream ss(spec);
    for (std::string p; std::getline(ss, p, ',');)
      if (!p.empty()) out.push_back(parse_bytes(p));
  }
  for (auto b : out)
    if (b == 0) throw std::invalid_argument("sizes must be at least 1 byte");
  if (out.empty()) throw std::invalid_argument("empty size list '" + spec + "'");
  return out;
}

// Rows of one suite; the functions are collective (every PE calls them, in the same order).
using Rows = std::vector<Row>;
void host_suite(const std::string& suite, const Options& o, Rows& out);
void device_suite(const std::string& suite, const Options& o, Rows& out);  // device_rows.cu (CUDA builds)

// Device side of main (device_rows.cu; no-ops without CUDA).
int device_count();                       // visible GPUs (0 without CUDA or GPU)
void device_select(int ordinal);          // cudaSetDevice
void device_warm_up_context();            // cudaFree(0): create the context
int gpus_in_job();                        // collective: distinct GPUs of the job's PEs, on PE 0 (others: 0)
// "NVIDIA H200 x2", "NVIDIA H200 x1 (2 PEs)"; gpus < 0 (not counted): "NVIDIA H200 (2 PEs, GPUs not counted)";
// "" without CUDA
std::string device_name(int npes, int gpus);
void device_fill(void* p, int byte, std::uint64_t bytes, bool gpu);  // memset on host or device memory
bool device_rows_available();             // built with CUDA

// Collective rows (suite coll, not part of "all"): on CPU PEs the host forms (host_rows.cpp), on GPU PEs the stream
// and block forms (device_rows.cu). Sizes: Options::coll_sizes.
void host_coll_suite(const Options& o, Rows& out);
// PE 0: the status of a collective row from every PE's verdict ("" where right everywhere; others: ""); collective
// (host_rows.cpp; slots: npes symmetric ints)
std::string coll_verdict(int* slots, bool wrong, int me, int npes);
void device_coll_suite(const Options& o, Rows& out);
inline const char* coll_suite_name() { return "coll"; }

// The suites: host ones run on every PE kind; device ones only on GPU PEs.
inline const std::vector<std::string>& host_suites() {
  static const std::vector<std::string> s{"host-bw", "host-lat", "host-barrier", "malloc"};
  return s;
}
inline const std::vector<std::string>& device_suites() {
  static const std::vector<std::string> s{"put-bw", "get-bw", "stream-bw", "p-lat", "pingpong", "amo", "barrier"};
  return s;
}

}  // namespace bench
