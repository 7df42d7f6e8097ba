// gshmem-bench: what the collective rows (suite coll) measure, shared by gshmem-bench's host and device rows and
// by the NCCL companion (nccl_rows.cu), so that all of them size, name and check a collective the same way.
// Library-neutral: no SHMEM or NCCL names here.
//
// Size: the bytes one PE holds as NCCL's tests count them (nccl-tests' "size"): allreduce (reduce) the vector;
// reducescatter the input (n blocks); broadcast the buffer; fcollect (allgather) the gathered output (n blocks);
// alltoall the send buffer (n blocks). A size that does not split into whole elements (n blocks of whole elements
// where there are blocks) is rounded down, and the row carries the size actually moved; a size smaller than one
// element (block) is skipped. busbw = algbw x factor (NCCL's): allreduce 2(n-1)/n, reducescatter, allgather and
// alltoall (n-1)/n, broadcast 1; algbw = size / time.
//
// Data: element g of PE p's source holds a value fixed by (p, g) (the *_value functions), so each PE can compute
// what its result must hold; the checks compare every element, exactly (the float sums add small integers).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common.hpp"

#if defined(__CUDACC__)
#define BENCH_HD __host__ __device__
#else
#define BENCH_HD
#endif

namespace bench::coll {

enum class Kind : int { ReduceFloat, ReduceInt, ReducescatterFloat, Broadcast, Fcollect, Alltoall };
inline constexpr Kind kKinds[] = {Kind::ReduceFloat, Kind::ReduceInt, Kind::ReducescatterFloat,
                                  Kind::Broadcast,   Kind::Fcollect,  Kind::Alltoall};
inline constexpr int kRoot = 0;  // broadcast root
// Default sizes: 8 B, then 16 B to 256 MiB (CPU PEs: 16 MiB) by factors of 4, so that the sizes issue 16's goals
// name (1 KiB, 16 MiB, 256 MiB) are rows.
inline constexpr const char* kDefaultSizesGpu = "8,16,64,256,1K,4K,8K,16K,64K,256K,1M,4M,16M,64M,256M";
inline constexpr const char* kDefaultSizesCpu = "8,16,64,256,1K,4K,16K,64K,256K,1M,4M,16M";

// How a kind is named in the rows: family (NVSHMEM's word) and variant; NCCL's name for it.
struct Names {
  const char* family;   // reduce, reducescatter, broadcast, fcollect, alltoall
  const char* variant;  // sum/float, sum/int, mem
  const char* nccl;     // ncclAllReduce, ...
};
inline Names names(Kind k) {
  switch (k) {
    case Kind::ReduceFloat: return {"reduce", "sum/float", "ncclAllReduce sum float32"};
    case Kind::ReduceInt: return {"reduce", "sum/int", "ncclAllReduce sum int32"};
    case Kind::ReducescatterFloat: return {"reducescatter", "sum/float", "ncclReduceScatter sum float32"};
    case Kind::Broadcast: return {"broadcast", "mem", "ncclBroadcast int8, root 0"};
    case Kind::Fcollect: return {"fcollect", "mem", "ncclAllGather int8"};
    case Kind::Alltoall: return {"alltoall", "mem", "ncclSend/ncclRecv int8 to and from every rank in one group"};
  }
  return {"?", "?", "?"};
}

// The kind's name in --coll-kinds: reduce-float, reduce-int, reducescatter, broadcast, fcollect, alltoall.
inline std::string kind_name(Kind k) {
  const Names n = names(k);
  if (k == Kind::ReduceFloat) return "reduce-float";
  if (k == Kind::ReduceInt) return "reduce-int";
  return n.family;
}
// Whether --coll-kinds (a list of kind_name values; empty: every kind) asks for kind k.
template <typename List>
bool wanted(const List& kinds, Kind k) {
  if (kinds.empty()) return true;
  for (const auto& w : kinds)
    if (w == kind_name(k)) return true;
  return false;
}
// Throws std::invalid_argument naming the valid names if `kinds` holds an unknown one.
template <typename List>
void check_kinds(const List& kinds) {
  for (const auto& w : kinds) {
    bool ok = false;
    std::string all;
    for (const Kind k : kKinds) {
      ok = ok || w == kind_name(k);
      all += (all.empty() ? "" : ", ") + kind_name(k);
    }
    if (!ok) throw std::invalid_argument("--coll-kinds: unknown kind '" + std::string(w) + "' (kinds: " + all + ")");
  }
}

// Row names: <family>_on_stream/<variant> (NVSHMEM's and NCCL's stream rows share it, so merge.py puts them in one
// line), <family>_block/<variant>/threads=T, host_<family>/<variant>; busbw rows add /busbw.
inline std::string row_name(Kind k, const std::string& form, int threads = 0) {
  const Names n = names(k);
  if (form == "host") return std::string("host_") + n.family + "/" + n.variant;
  std::string s = std::string(n.family) + "_" + form + "/" + n.variant;
  if (threads > 0) s += "/threads=" + std::to_string(threads);
  return s;
}

BENCH_HD inline std::size_t elem_size(Kind k) {
  return k == Kind::ReduceFloat || k == Kind::ReducescatterFloat || k == Kind::ReduceInt ? 4 : 1;
}
inline bool has_blocks(Kind k) {
  return k == Kind::ReducescatterFloat || k == Kind::Fcollect || k == Kind::Alltoall;
}

// One size of one collective on n PEs: `count` is the count argument of the call (elements for the typed ones,
// bytes for *mem: the vector for reduce, the block for the others), `bytes` the size the row reports.
struct Shape {
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;
  std::uint64_t src_elems = 0, dst_elems = 0;  // elements of the source and destination buffers
  bool ok() const { return count > 0; }
};
inline Shape shape(Kind k, std::uint64_t size, int n) {
  Shape s;
  const std::uint64_t e = elem_size(k), np = std::uint64_t(n);
  if (has_blocks(k)) {
    s.count = size / (np * e);
    s.bytes = s.count * np * e;
  } else {
    s.count = size / e;
    s.bytes = s.count * e;
  }
  switch (k) {
    case Kind::ReduceFloat:
    case Kind::ReduceInt:
    case Kind::Broadcast: s.src_elems = s.dst_elems = s.count; break;
    case Kind::ReducescatterFloat: s.src_elems = s.count * np, s.dst_elems = s.count; break;
    case Kind::Fcollect: s.src_elems = s.count, s.dst_elems = s.count * np; break;
    case Kind::Alltoall: s.src_elems = s.dst_elems = s.count * np; break;
  }
  return s;
}

// NCCL's bus-bandwidth factor for n ranks.
// Bytes of the largest source or destination any kind needs over `sizes` at n PEs (at least 64).
template <typename Sizes>
std::uint64_t max_buffer_bytes(const Sizes& sizes, int n) {
  std::uint64_t maxb = 64;
  for (const Kind k : kKinds)
    for (const std::uint64_t size : sizes) {
      const Shape sh = shape(k, size, n);
      maxb = std::max({maxb, sh.src_elems * elem_size(k), sh.dst_elems * elem_size(k)});
    }
  return maxb;
}

inline double busbw_factor(Kind k, int n) {
  if (n < 2) return 0;
  switch (k) {
    case Kind::ReduceFloat:
    case Kind::ReduceInt: return 2.0 * (n - 1) / n;
    case Kind::Broadcast: return 1.0;
    default: return double(n - 1) / n;
  }
}
inline const char* busbw_rule(Kind k) {
  switch (k) {
    case Kind::ReduceFloat:
    case Kind::ReduceInt: return "2(n-1)/n";
    case Kind::Broadcast: return "1";
    default: return "(n-1)/n";
  }
}

// ---- the data: source values and the result each PE must hold ----
BENCH_HD inline float float_value(int pe, std::uint64_t g) { return float(pe + 1) + float(g % 5); }
BENCH_HD inline int int_value(int pe, std::uint64_t g) { return (pe + 1) * int(g % 11 + 1); }
BENCH_HD inline std::uint8_t byte_value(int pe, std::uint64_t g) {
  return std::uint8_t((std::uint64_t(pe) * 131u + g * 7u + (g >> 8) * 3u + (g >> 16) + 1u) & 0xffu);
}

// Source element i of PE `me` (as float, int or byte by kind; the caller stores it in the kind's type).
BENCH_HD inline double source_value(Kind k, int me, std::uint64_t i) {
  switch (k) {
    case Kind::ReduceFloat:
    case Kind::ReducescatterFloat: return float_value(me, i);
    case Kind::ReduceInt: return int_value(me, i);
    default: return byte_value(me, i);
  }
}

// Destination element i of PE `me` after the collective on n PEs with block (count) `nb`.
BENCH_HD inline double expected_value(Kind k, int me, int n, std::uint64_t nb, std::uint64_t i) {
  switch (k) {
    case Kind::ReduceFloat: {
      float s = 0;
      for (int p = 0; p < n; ++p) s += float_value(p, i);
      return s;
    }
    case Kind::ReducescatterFloat: {
      float s = 0;
      for (int p = 0; p < n; ++p) s += float_value(p, std::uint64_t(me) * nb + i);
      return s;
    }
    case Kind::ReduceInt: {
      int s = 0;
      for (int p = 0; p < n; ++p) s += int_value(p, i);
      return s;
    }
    case Kind::Broadcast: return byte_value(kRoot, i);
    case Kind::Fcollect: return byte_value(int(i / nb), i % nb);
    case Kind::Alltoall: return byte_value(int(i / nb), std::uint64_t(me) * nb + i % nb);
  }
  return 0;
}

// A value that differs from expected_value (the test hook's spoiled element).
BENCH_HD inline double spoiled_value(Kind k, int me, int n, std::uint64_t nb, std::uint64_t i) {
  const double want = expected_value(k, me, n, nb, i);
  return elem_size(k) == 1 ? double(std::uint8_t(want) ^ 1u) : want + 1;
}

// Element i of a buffer of kind k, read as the value source_value/expected_value compare against.
BENCH_HD inline double load(Kind k, const void* buf, std::uint64_t i) {
  switch (k) {
    case Kind::ReduceFloat:
    case Kind::ReducescatterFloat: return static_cast<const float*>(buf)[i];
    case Kind::ReduceInt: return static_cast<const int*>(buf)[i];
    default: return static_cast<const std::uint8_t*>(buf)[i];
  }
}
BENCH_HD inline void store(Kind k, void* buf, std::uint64_t i, double v) {
  switch (k) {
    case Kind::ReduceFloat:
    case Kind::ReducescatterFloat: static_cast<float*>(buf)[i] = float(v); break;
    case Kind::ReduceInt: static_cast<int*>(buf)[i] = int(v); break;
    default: static_cast<std::uint8_t*>(buf)[i] = std::uint8_t(v); break;
  }
}

// Operations per sample: about bw_target bytes' worth, at least 1, at most `cap` (small sizes are latency rows).
inline std::uint64_t iters(std::uint64_t fixed, std::uint64_t bw_target, std::uint64_t cap, std::uint64_t bytes) {
  if (fixed) return fixed;
  const std::uint64_t n = (bw_target + bytes - 1) / bytes;
  return n < 1 ? 1 : n > cap ? cap : n;
}

// Text for a failed check (printed on stderr by the PE that found it; the row is recorded as failed and the run
// goes on: a wrong result in one row must not lose the others).
inline std::string mismatch_text(const std::string& row, std::uint64_t bytes, int me, std::uint64_t bad,
                                 std::uint64_t first, double got, double want) {
  return row + " at " + std::to_string(bytes) + " bytes: wrong result on PE " + std::to_string(me) + ": " +
         std::to_string(bad) + " element(s) differ, first at " + std::to_string(first) + " (got " +
         std::to_string(got) + ", expected " + std::to_string(want) + ")";
}

// Test hook (--coll-fault <row>@<bytes>): whether the last PE spoils its result of this row and size before the
// check, so the failure path (the row recorded as failed on PE 0, the run going on) can be exercised.
inline bool fault_here(const std::string& fault, const std::string& row, std::uint64_t bytes, int me, int npes) {
  return !fault.empty() && me == npes - 1 && fault == row + "@" + std::to_string(bytes);
}

// PE 0's status for a row whose check failed on some PEs: `wrong[p]` nonzero where PE p's result was wrong.
inline std::string failed_status(const int* wrong, int npes) {
  std::string pes;
  for (int p = 0; p < npes; ++p)
    if (wrong[p]) {
      if (!pes.empty()) pes += ',';
      pes += std::to_string(p);
    }
  return "failed: wrong result on PE " + pes + " (the PE's stderr line names the first wrong element)";
}

// A row with no figure (failed check or skipped): one time row carrying the reason, so the table and the JSON say
// why the library has no value there.
inline void add_status_row(Rows& out, const std::string& name, const Shape& sh, const std::string& status,
                           const std::string& how) {
  Row r{name, sh.bytes, "us", 0, 0, 0, how};
  r.status = status;
  out.push_back(r);
}

// The rows of one collective at one size: time per call (us) and, with 2 or more PEs, busbw (GB/s, algbw beside).
// host_s: where measured (stream forms), the host's median wall time of one sample's `it` calls: the time row
// carries it per call (host_us), so a row whose time per call is its host time shows as host-bound.
inline void add_rows(Rows& out, Kind k, const std::string& name, const Shape& sh, int npes, double sample_s,
                     int repeats, std::uint64_t it, const std::string& how, double host_s = -1) {
  const double per_call = sample_s / double(it);
  out.push_back({name, sh.bytes, "us", per_call * 1e6, repeats, it, how + "; time per call"});
  if (host_s >= 0) {
    out.back().host_us = host_s / double(it) * 1e6;
    out.back().how += "; host_us: the host's wall time per call (issuing it)";
  }
  if (npes < 2) return;
  const double algbw = gbps(double(sh.bytes), per_call);
  Row r{name + "/busbw", sh.bytes, "GB/s", algbw * busbw_factor(k, npes), repeats, it,
        how + "; busbw = size / time per call x " + busbw_rule(k) + " (NCCL's factor, n = " + std::to_string(npes) +
            "); algbw = size / time"};
  r.algbw = algbw;
  out.push_back(r);
}

}  // namespace bench::coll
