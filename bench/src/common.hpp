// gshmem-bench: options, result rows and timing helpers shared by the host rows (host_rows.cpp) and the device
// rows (device_rows.cu). Library-neutral: no SHMEM or CUDA names here.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace bench {

struct Options {
  std::vector<std::string> suites;            // expanded suite names
  std::vector<std::uint64_t> sizes;           // bandwidth rows (device, stream, host put/get)
  std::vector<std::uint64_t> signal_sizes;    // put+signal ping-pong
  std::vector<std::uint64_t> malloc_sizes;    // malloc/free
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
};

using Clock = std::chrono::steady_clock;
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

std::string size_label(std::uint64_t bytes);

// Rows of one suite; the functions are collective (every PE calls them, in the same order).
using Rows = std::vector<Row>;
void host_suite(const std::string& suite, const Options& o, Rows& out);
void device_suite(const std::string& suite, const Options& o, Rows& out);  // device_rows.cu (CUDA builds)

// Device side of main (device_rows.cu; no-ops without CUDA).
int device_count();                       // visible GPUs (0 without CUDA or GPU)
void device_select(int ordinal);          // cudaSetDevice
void device_warm_up_context();            // cudaFree(0): create the context
int gpus_in_job();                        // collective: distinct GPUs of the job's PEs, on PE 0 (others: 0)
std::string device_name(int npes, int gpus);  // "NVIDIA H200 x2", "NVIDIA H200 x1 (2 PEs)"; "" without CUDA
void device_fill(void* p, int byte, std::uint64_t bytes, bool gpu);  // memset on host or device memory
bool device_rows_available();             // built with CUDA

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
