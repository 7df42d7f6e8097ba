// nccl-bench: the collective rows of gshmem-bench's coll suite measured with NCCL, the reference for GPU
// collectives: ncclAllReduce (sum, float32 and int32), ncclReduceScatter (sum, float32), ncclBroadcast (root 0),
// ncclAllGather, and all-to-all as one group of ncclSend/ncclRecv to and from every rank. Same sizes (coll.hpp:
// bytes per rank as NCCL's tests count them), same method (CUDA events around `iters` calls on one stream, each
// sample after a stream sync and a barrier, median of --repeats after --warmup), same checks (every element of the
// result, once per size; a mismatch ends the run) and the same JSON as gshmem-bench, library "nccl", with the row
// names of gshmem-bench's stream rows (<family>_on_stream/<variant>), so bench/merge.py puts NCCL in a third
// column beside gshmem and NVSHMEM. Ranks start as gshmem-bench's --uid-file runs do (BENCH_RANK, BENCH_NRANKS;
// rank r on GPU r % GPU count); rank 0 writes NCCL's unique id to the file. NVLink multicast (NVLS) is always off.
#include <cuda_runtime.h>
#include <nccl.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "coll.hpp"
#include "coll_check.cuh"
#include "common.hpp"
#include "report.hpp"

#ifndef BENCH_GIT_COMMIT
#define BENCH_GIT_COMMIT "unknown"
#endif

namespace {

using bench::Options;
using bench::Row;
namespace coll = bench::coll;

void nccl_check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw std::runtime_error(fmt::format("{}: {}", what, ncclGetErrorString(r)));
}
#define NCK(x) nccl_check((x), #x)
#define CK(x) coll::cuda_check((x), #x)

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

struct Comm {
  ncclComm_t comm{};
  int rank = 0, n = 1;
  cudaStream_t s{};
  cudaEvent_t a{}, b{};
  float* word = nullptr;  // the barrier's one-element all-reduce
};

// Every rank has queued and finished all earlier work: a one-float all-reduce, then a stream sync.
void barrier(Comm& c) {
  NCK(ncclAllReduce(c.word, c.word, 1, ncclFloat32, ncclSum, c.comm, c.s));
  CK(cudaStreamSynchronize(c.s));
}

// Median seconds between two events around `launch`, each sample after a barrier (as gshmem-bench's time_events);
// host_s (where given): the median host wall time of launch() itself.
template <class L>
double time_events(const Options& o, Comm& c, L&& launch, double* host_s = nullptr) {
  std::vector<double> t, h;
  for (int r = 0; r < o.warmup + o.repeats; ++r) {
    barrier(c);
    CK(cudaEventRecord(c.a, c.s));
    const auto t0 = bench::Clock::now();
    launch();
    if (r >= o.warmup) h.push_back(bench::seconds_since(t0));
    CK(cudaEventRecord(c.b, c.s));
    CK(cudaEventSynchronize(c.b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, c.a, c.b));
    if (r >= o.warmup) t.push_back(ms * 1e-3);
  }
  barrier(c);
  if (host_s) *host_s = bench::median(h);
  return bench::median(t);
}

void nccl_call(coll::Kind k, void* d, const void* s, const coll::Shape& sh, Comm& c) {
  using coll::Kind;
  switch (k) {
    case Kind::ReduceFloat: NCK(ncclAllReduce(s, d, sh.count, ncclFloat32, ncclSum, c.comm, c.s)); break;
    case Kind::ReduceInt: NCK(ncclAllReduce(s, d, sh.count, ncclInt32, ncclSum, c.comm, c.s)); break;
    case Kind::ReducescatterFloat: NCK(ncclReduceScatter(s, d, sh.count, ncclFloat32, ncclSum, c.comm, c.s)); break;
    case Kind::Broadcast: NCK(ncclBroadcast(s, d, sh.count, ncclInt8, coll::kRoot, c.comm, c.s)); break;
    case Kind::Fcollect: NCK(ncclAllGather(s, d, sh.count, ncclInt8, c.comm, c.s)); break;
    case Kind::Alltoall: {
      NCK(ncclGroupStart());
      for (int r = 0; r < c.n; ++r) {
        NCK(ncclSend(static_cast<const char*>(s) + size_t(r) * sh.count, sh.count, ncclInt8, r, c.comm, c.s));
        NCK(ncclRecv(static_cast<char*>(d) + size_t(r) * sh.count, sh.count, ncclInt8, r, c.comm, c.s));
      }
      NCK(ncclGroupEnd());
      break;
    }
  }
}

void coll_rows(const Options& o, Comm& c, std::vector<Row>& out) {
  std::uint64_t maxb = 64;
  for (const coll::Kind k : coll::kKinds)
    for (const std::uint64_t size : o.coll_sizes) {
      const coll::Shape sh = coll::shape(k, size, c.n);
      maxb = std::max({maxb, sh.src_elems * coll::elem_size(k), sh.dst_elems * coll::elem_size(k)});
    }
  void *src = nullptr, *dst = nullptr;
  CK(cudaMalloc(&src, maxb));
  CK(cudaMalloc(&dst, maxb));
  const std::uint64_t cap = std::min<std::uint64_t>(o.lat_iters, 200);
  for (const coll::Kind k : coll::kKinds) {
    if (!coll::wanted(o.coll_kinds, k)) continue;
    const std::string name = coll::row_name(k, "on_stream");
    for (const std::uint64_t size : o.coll_sizes) {
      const coll::Shape sh = coll::shape(k, size, c.n);
      if (!sh.ok()) continue;
      coll::fill(k, src, dst, sh, c.rank, c.s);
      const std::uint64_t it = coll::iters(o.iters, o.bw_target_bytes, cap, sh.bytes);
      double host = -1;
      const double sec = time_events(
          o, c, [&] { for (std::uint64_t i = 0; i < it; ++i) nccl_call(k, dst, src, sh, c); }, &host);
      if (const std::string wrong = coll::check(k, dst, sh, c.rank, c.n, name, c.s); !wrong.empty())
        throw std::runtime_error(wrong);
      coll::add_rows(out, k, name, sh, c.n, sec, o.repeats, it,
                     fmt::format("{} (count {}) x{} between two events, result checked", coll::names(k).nccl,
                                 sh.count, it),
                     host);
    }
  }
  CK(cudaFree(src));
  CK(cudaFree(dst));
}

// Distinct GPUs of the job (PCI ids gathered from every rank), so ranks sharing a GPU are labelled as such.
int gpus_in_job(Comm& c) {
  int dev = 0;
  CK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, dev));
  const long long id = (static_cast<long long>(prop.pciDomainID) << 32) | (prop.pciBusID << 8) | prop.pciDeviceID;
  long long* d = nullptr;
  CK(cudaMalloc(&d, sizeof(long long) * size_t(c.n + 1)));
  CK(cudaMemcpy(d + c.n, &id, sizeof id, cudaMemcpyHostToDevice));
  NCK(ncclAllGather(d + c.n, d, 1, ncclInt64, c.comm, c.s));
  std::vector<long long> h(size_t(c.n));
  CK(cudaStreamSynchronize(c.s));
  CK(cudaMemcpy(h.data(), d, h.size() * sizeof(long long), cudaMemcpyDeviceToHost));
  CK(cudaFree(d));
  std::sort(h.begin(), h.end());
  return int(std::unique(h.begin(), h.end()) - h.begin());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"nccl-bench: gshmem-bench's collective rows (suite coll) measured with NCCL; see bench/README.md"};
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.allow_extras();  // gshmem-bench options that do not apply here (BENCH_ARGS is shared) are ignored
  Options o;
  std::string sizes = coll::kDefaultSizesGpu, json_path, uid_file, commit = BENCH_GIT_COMMIT, suites = "coll";
  int rank = -1, nranks = -1;
  bool no_table = false, name_pes = false;
  app.add_option("--suite", suites, "coll (the only suite; accepted for the scripts' shared options)")
      ->capture_default_str();
  app.add_option("--sizes", sizes, "sizes: MIN:MAX[:FACTOR] or a list")->capture_default_str();
  app.add_option("--repeats", o.repeats, "timed samples per row (median reported)")->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--warmup", o.warmup, "untimed samples before them")->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--iters", o.iters, "calls per sample (0: about 256 MiB worth, 1..min(lat-iters, 200))")
      ->capture_default_str();
  app.add_option("--lat-iters", o.lat_iters, "caps the calls per sample at min(this, 200)")->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--json", json_path, "write the rows as JSON here (rank 0)");
  app.add_option("--commit", commit, "commit recorded in the JSON")->capture_default_str();
  app.add_option("--uid-file", uid_file, "rank 0 writes NCCL's unique id here, the others read it")->required();
  app.add_option("--rank", rank, "this process's rank (default $BENCH_RANK)");
  app.add_option("--nranks", nranks, "number of ranks (default $BENCH_NRANKS)");
  app.add_flag("--no-table", no_table, "do not print the table");
  app.add_flag("--name-pes", name_pes, "append /pes=<ranks> to every row name");
  std::string coll_kinds;
  app.add_option("--coll-kinds", coll_kinds, "only these kinds (as gshmem-bench --coll-kinds; default all)");
  CLI11_PARSE(app, argc, argv);

  if (rank < 0) rank = env_int("BENCH_RANK", -1);
  if (nranks < 0) nranks = env_int("BENCH_NRANKS", -1);
  Comm c;
  std::vector<Row> rows;
  try {
    if (rank < 0 || nranks < 1 || rank >= nranks)
      throw std::invalid_argument("needs --rank and --nranks (or BENCH_RANK, BENCH_NRANKS)");
    if (suites != "coll" && suites != "all") throw std::invalid_argument("nccl-bench has only the coll suite");
    o.coll_sizes = bench::parse_sizes(sizes);
    o.coll_kinds = bench::split_list(coll_kinds);
    coll::check_kinds(o.coll_kinds);
    if (!app.remaining().empty() && rank == 0)
      fmt::print(stderr, "nccl-bench: ignoring {} option word(s) it does not use ({} ...)\n", app.remaining().size(),
                 app.remaining().front());
    // Never NVLink multicast (the lent machines are shared): NVLS off unless the caller already chose.
    setenv("NCCL_NVLS_ENABLE", "0", 0);
    if (std::string(std::getenv("NCCL_NVLS_ENABLE")) != "0")
      throw std::invalid_argument("NCCL_NVLS_ENABLE must be 0 (no NVLink multicast on the shared machines)");
    int ngpu = 0;
    CK(cudaGetDeviceCount(&ngpu));
    if (ngpu < 1) throw std::runtime_error("no GPU");
    CK(cudaSetDevice(rank % ngpu));
    const auto t0 = bench::Clock::now();
    ncclUniqueId id{};
    if (rank == 0) {
      NCK(ncclGetUniqueId(&id));
      bench::write_id_file(uid_file, &id, sizeof id);
    } else {
      bench::read_id_file(uid_file, &id, sizeof id);
    }
    NCK(ncclCommInitRank(&c.comm, nranks, id, rank));
    const double init_ms = bench::seconds_since(t0) * 1e3;
    c.rank = rank;
    c.n = nranks;
    CK(cudaStreamCreateWithFlags(&c.s, cudaStreamNonBlocking));
    CK(cudaEventCreate(&c.a));
    CK(cudaEventCreate(&c.b));
    CK(cudaMalloc(&c.word, sizeof(float)));
    CK(cudaMemset(c.word, 0, sizeof(float)));

    coll_rows(o, c, rows);
    if (name_pes)
      for (auto& r : rows) r.name += fmt::format("/pes={}", nranks);
    const int gpus = gpus_in_job(c);
    int version = 0;
    NCK(ncclGetVersion(&version));
    if (rank == 0) {
      if (!no_table) {
        fmt::print("nccl-bench, NCCL {}, {} ranks on {} GPU(s), median of {} samples after {} warm-up; "
                   "ncclCommInitRank {:.1f} ms\n",
                   version, nranks, gpus, o.repeats, o.warmup, init_ms);
        bench::print_table(rows);
      }
      if (!json_path.empty()) {
        int dev = 0;
        CK(cudaGetDevice(&dev));
        cudaDeviceProp prop{};
        CK(cudaGetDeviceProperties(&prop, dev));
        nlohmann::json j;
        j["device"] = gpus == nranks ? fmt::format("{} x{}", prop.name, gpus)
                                     : fmt::format("{} x{} ({} PEs)", prop.name, gpus, nranks);
        j["date"] = bench::iso_date();
        j["commit"] = commit;
        j["library"] = "nccl";
        j["nccl_version"] = version;
        j["init_ms"] = init_ms;
        j["pes"] = nranks;
        j["gpus"] = gpus;
        j["pe_kind"] = "gpu";
        j["method"] = fmt::format("median of {} samples after {} warm-up; CUDA events; figures from rank 0; "
                                  "NCCL_NVLS_ENABLE=0",
                                  o.repeats, o.warmup);
        j["argv"] = std::vector<std::string>(argv, argv + argc);
        j["rows"] = bench::rows_json(rows, "nccl", nranks);
        bench::write_json_file(j, json_path);
      }
    }
    barrier(c);
  } catch (const std::exception& e) {
    std::cerr << "nccl-bench: rank " << rank << ": " << e.what() << "\n";
    if (c.comm) ncclCommAbort(c.comm);
    return 1;
  }
  ncclCommDestroy(c.comm);
  return 0;
}
