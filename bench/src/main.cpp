// gshmem-bench: NVSHMEM's perftests in one binary, written against the NVSHMEM API names so that the same source
// measures gshmem, NVIDIA NVSHMEM or (host rows) Open MPI's OSHMEM. Prints a table on PE 0 and writes JSON
// ({"device","date","commit","library","rows":[{"name","bytes","unit",<library>: value, ...}]}); bench/merge.py
// joins two libraries' files and bench/plot.py draws them. bench/README.md describes every row. Exit status: 0; 3 when
// a collective row failed its result check (the run went on; the row is in the JSON with "status" and no figure);
// 1 for an error that ended the run (PE 0's JSON then has the rows so far and "error"); 2 for bad options.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "api.hpp"
#include "coll.hpp"
#include "common.hpp"
#include "report.hpp"

#ifndef BENCH_GIT_COMMIT
#define BENCH_GIT_COMMIT "unknown"
#endif

namespace {

using bench::Options;
using bench::Row;

using bench::parse_sizes;

int env_int(std::initializer_list<const char*> names, int fallback) {
  for (const char* n : names)
    if (const char* v = std::getenv(n); v && *v) return std::atoi(v);
  return fallback;
}

std::string cpu_name(int npes) {
  std::ifstream f("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  return fmt::format("CPU PEs x{}: {} ({} cores)", npes, model, std::thread::hardware_concurrency());
}

#if BENCH_HAVE_UID
// Unique-id bootstrap through a file: rank 0 writes the id (atomically, by rename), the others poll for it.
void init_with_uid_file(const std::string& path, int rank, int nranks) {
  nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
  if (rank == 0) {
    if (nvshmemx_get_uniqueid(&id) != 0) throw std::runtime_error("nvshmemx_get_uniqueid failed");
    bench::write_id_file(path, &id, sizeof id);
  } else {
    bench::read_id_file(path, &id, sizeof id);
  }
  nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
  if (nvshmemx_set_attr_uniqueid_args(rank, nranks, &id, &attr) != 0)
    throw std::runtime_error("nvshmemx_set_attr_uniqueid_args failed");
  if (nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr) != 0)
    throw std::runtime_error("nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID) failed");
}
#endif

}  // namespace

int main(int argc, char** argv) {
  const auto t_start = bench::Clock::now();
  CLI::App app{"gshmem-bench (" BENCH_LIBRARY "): NVSHMEM perftest rows; see bench/README.md"};
  // An option given twice takes its last value, so scripts can add overrides after their defaults (BENCH_ARGS).
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  Options o;
  std::string suites = "all", sizes, signal_sizes = "8,64,512,4K,32K,64K,256K,1M", malloc_sizes, json_path,
              uid_file, commit = BENCH_GIT_COMMIT, ctas = "1,8,32", scopes = "thread,warp,block", dirs = "uni,bi",
              patterns = "pair";
  int uid_rank = -1, uid_nranks = -1;
  bool cuda_preinit = false, no_table = false, name_pes = false;
  app.add_option("--suite", suites,
                 "comma list of: all, init, host-bw, host-lat, host-barrier, malloc, put-bw, get-bw, stream-bw, "
                 "p-lat, pingpong, amo, barrier (device suites run on GPU PEs only), coll (collectives: host forms "
                 "on CPU PEs, stream and block forms on GPU PEs; not part of all)")
      ->capture_default_str();
  app.add_option("--sizes", sizes, "bandwidth and collective sizes: MIN:MAX[:FACTOR] or a list (default 8:1G on GPU "
                                   "PEs, 8:16M:4 on CPU PEs; collectives: 8 B and 16 B..256 MiB by 4 on GPU PEs, ..16 MiB on CPU PEs)");
  app.add_option("--signal-sizes", signal_sizes, "put+signal ping-pong sizes")->capture_default_str();
  app.add_option("--malloc-sizes", malloc_sizes, "malloc/free sizes (default 1M,64M,1G on GPU PEs, 4K,1M,64M on CPU)");
  app.add_option("--ctas", ctas, "device bandwidth: CTA counts")->capture_default_str();
  app.add_option("--threads", o.threads, "threads per CTA (device bandwidth, put+signal)")->capture_default_str();
  app.add_option("--scopes", scopes, "device bandwidth scopes: thread, warp, block")->capture_default_str();
  app.add_option("--dirs", dirs, "uni (PE 0 to PE 1), bi (both at once)")->capture_default_str();
  app.add_option("--pattern", patterns,
                 "device put/get bandwidth: pair (PE 0 and 1, the others idle; rows put_bw/...), all (every PE to "
                 "every other at once; rows put_bw_all/...); a comma list runs both")
      ->capture_default_str();
  app.add_option("--repeats", o.repeats, "timed samples per row (median reported)")->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--warmup", o.warmup, "untimed samples before them")->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--iters", o.iters, "ops per bandwidth sample (0: about 256 MiB worth, 1..1000)")
      ->capture_default_str();
  app.add_option("--lat-iters", o.lat_iters, "ops per latency/rate sample")->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--amo-ctas", o.amo_ctas, "atomic rate: CTAs")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--amo-threads", o.amo_threads, "atomic rate: threads per CTA")->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--json", json_path, "write the rows as JSON here (PE 0)");
  app.add_option("--commit", commit, "commit recorded in the JSON")->capture_default_str();
  app.add_flag("--cuda-preinit", cuda_preinit,
               "create the CUDA context before timing init (init row then shows the library's own cost)");
  app.add_flag("--no-table", no_table, "do not print the table");
  std::string coll_kinds, coll_forms;
  app.add_option("--coll-kinds", coll_kinds, "collective rows: only these kinds (comma list of reduce-float, "
                                             "reduce-int, reducescatter, broadcast, fcollect, alltoall; default all)");
  app.add_option("--coll-forms", coll_forms, "GPU collective rows: stream and/or block (default both)");
  app.add_flag("--progress", o.progress,
               "collective rows: PE 0 names each row and size on stderr before running it (where a run stops)");
  app.add_option("--coll-fault", o.coll_fault,
                 "test the failure path: the last PE spoils its result of this collective row at this size "
                 "(<row>@<bytes>, e.g. host_reduce/sum/float@4096); the row is recorded as failed, the run goes on");
  app.add_flag("--name-pes", name_pes,
               "append /pes=<PE count> to every row name (runs at several PE counts merged into one file)");
#if BENCH_HAVE_UID
  app.add_option("--uid-file", uid_file, "bootstrap with a unique id passed through this file (rank 0 writes it) "
                                         "instead of nvshmem_init()");
  app.add_option("--rank", uid_rank, "with --uid-file: this process's rank (default $BENCH_RANK)");
  app.add_option("--nranks", uid_nranks, "with --uid-file: number of ranks (default $BENCH_NRANKS)");
#endif
  CLI11_PARSE(app, argc, argv);
#if !BENCH_HAVE_UID
  (void)uid_nranks;
#endif

  const auto split = bench::split_list;
  std::vector<std::string> wanted;
  try {
    o.ctas.clear();
    for (const auto& c : split(ctas)) o.ctas.push_back(std::stoi(c));
    o.scopes = split(scopes);
    o.dirs = split(dirs);
    for (const auto& d : o.dirs)
      if (d != "uni" && d != "bi") throw std::invalid_argument("--dirs takes uni and/or bi, not " + d);
    o.patterns = split(patterns);
    for (const auto& p : o.patterns)
      if (p != "pair" && p != "all") throw std::invalid_argument("--pattern takes pair and/or all, not " + p);
    for (const auto& c : o.ctas)
      if (c < 1) throw std::invalid_argument("--ctas must be positive");
    wanted = split(suites);
    o.coll_kinds = split(coll_kinds);
    bench::coll::check_kinds(o.coll_kinds);
    o.coll_forms = split(coll_forms);
    for (const auto& f : o.coll_forms)
      if (f != "stream" && f != "block") throw std::invalid_argument("--coll-forms takes stream and/or block, not " + f);
  } catch (const std::exception& e) {
    std::cerr << "gshmem-bench: " << e.what() << "\n";
    return 2;
  }

  // ---- init, timed: on GPU PEs the device choice (and, without --cuda-preinit, the CUDA context) is inside ----
  const bool want_gpu = bench_want_gpu_pes();
  const int local_rank = uid_rank >= 0 ? uid_rank
                                       : env_int({"GSHMEM_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "LOCAL_RANK",
                                                  "BENCH_RANK"}, 0);
  if (want_gpu && cuda_preinit) {
    const int n = bench::device_count();
    if (n > 0) {
      bench::device_select(local_rank % n);
      bench::device_warm_up_context();
    }
  }
  const auto t_init = bench::Clock::now();
  try {
    if (want_gpu && !cuda_preinit) {
      const int n = bench::device_count();
      if (n > 0) bench::device_select(local_rank % n);
    }
#if BENCH_HAVE_UID
    if (!uid_file.empty()) {
      const int rank = uid_rank >= 0 ? uid_rank : env_int({"BENCH_RANK"}, -1);
      const int nranks = uid_nranks >= 0 ? uid_nranks : env_int({"BENCH_NRANKS"}, -1);
      if (rank < 0 || nranks < 1 || rank >= nranks)
        throw std::invalid_argument("--uid-file needs --rank and --nranks (or BENCH_RANK, BENCH_NRANKS)");
      init_with_uid_file(uid_file, rank, nranks);
    } else {
      nvshmem_init();
    }
#else
    nvshmem_init();
#endif
  } catch (const std::exception& e) {
    std::cerr << "gshmem-bench: init: " << e.what() << "\n";
    return 1;
  }
  const double init_s = bench::seconds_since(t_init);
  const double since_start_s = bench::seconds_since(t_start);

  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  const bool gpu = bench_pe_is_gpu();
  std::vector<Row> rows;
  int status = 0;
  // PE 0's JSON (--json): the rows so far; gpus < 0 (not counted: a run ended by `error`) leaves "gpus" out. A row
  // with a status ("failed: ...", "skipped: ...") has no figure: the library's value is null and "status" says why.
  const auto write_json = [&](const std::string& device, int gpus, const std::string& error) {
    if (json_path.empty()) return;
    nlohmann::json j;
    j["device"] = device;
    j["date"] = bench::iso_date();
    j["commit"] = commit;
    j["library"] = BENCH_LIBRARY;
    j["pes"] = npes;
    if (gpu && gpus >= 0) j["gpus"] = gpus;
    j["pe_kind"] = gpu ? "gpu" : "cpu";
    j["method"] = fmt::format("median of {} samples after {} warm-up; GPU rows: CUDA events; host rows: "
                              "steady_clock; figures from PE 0 (min_over_pes: the lowest PE's)",
                              o.repeats, o.warmup);
    j["argv"] = std::vector<std::string>(argv, argv + argc);
    if (!error.empty()) j["error"] = error;
    j["rows"] = bench::rows_json(rows, BENCH_LIBRARY, npes);
    bench::write_json_file(j, json_path);
  };
  try {
    // Defaults that depend on the PE kind.
    o.sizes = parse_sizes(!sizes.empty() ? sizes : gpu ? "8:1G" : "8:16M:4");
    o.coll_sizes = parse_sizes(!sizes.empty() ? sizes : gpu ? bench::coll::kDefaultSizesGpu
                                                              : bench::coll::kDefaultSizesCpu);
    o.signal_sizes = parse_sizes(signal_sizes);
    o.malloc_sizes = parse_sizes(!malloc_sizes.empty() ? malloc_sizes : gpu ? "1M,64M,1G" : "4K,1M,64M");

    std::vector<std::string> run;
    for (const auto& s : wanted) {
      if (s == "init") continue;
      if (s == bench::coll_suite_name()) {  // every PE kind: host forms on CPU PEs, stream and block on GPU PEs
        if (gpu && !bench::device_rows_available())
          throw std::invalid_argument("this build has no device rows (no CUDA)");
        run.push_back(s);
        continue;
      }
      if (s == "all") {
        for (const auto& h : bench::host_suites()) run.push_back(h);
        if (gpu)
          for (const auto& d : bench::device_suites()) run.push_back(d);
        continue;
      }
      const auto& hs = bench::host_suites();
      const auto& ds = bench::device_suites();
      if (std::find(hs.begin(), hs.end(), s) != hs.end()) run.push_back(s);
      else if (std::find(ds.begin(), ds.end(), s) != ds.end()) {
        if (!gpu) {
          if (me == 0) fmt::print(stderr, "gshmem-bench: suite {} skipped: needs GPU PEs (these are CPU PEs)\n", s);
          continue;
        }
        if (!bench::device_rows_available()) throw std::invalid_argument("this build has no device rows (no CUDA)");
        run.push_back(s);
      } else {
        throw std::invalid_argument("unknown suite '" + s + "' (see --help)");
      }
    }
    const std::string init_name = !gpu ? "init" : cuda_preinit ? "init/cuda-preinit" : "init";
    rows.push_back({init_name, 0, "ms", init_s * 1e3, 1, 1,
                    gpu ? (cuda_preinit ? "device choice + init, CUDA context made before (untimed)"
                                        : "device choice + CUDA context + init (process cold)")
                        : "init on CPU PEs"});
    for (const auto& s : run) {
      const auto h = bench::host_suites();
      if (s == bench::coll_suite_name()) {
        if (gpu) bench::device_coll_suite(o, rows);
        else bench::host_coll_suite(o, rows);
      } else if (std::find(h.begin(), h.end(), s) != h.end()) bench::host_suite(s, o, rows);
      else bench::device_suite(s, o, rows);
    }
    if (name_pes)
      for (auto& r : rows) r.name += fmt::format("/pes={}", npes);
    const int gpus = gpu ? bench::gpus_in_job() : 0;  // collective, so before PE 0 alone writes the results

    if (me == 0) {
      if (!no_table) {
        fmt::print("gshmem-bench, library {}, {} PEs ({}), median of {} samples after {} warm-up; init {:.1f} ms "
                   "({:.1f} ms since main)\n",
                   BENCH_LIBRARY, npes, gpu ? "GPU" : "CPU", o.repeats, o.warmup, init_s * 1e3,
                   since_start_s * 1e3);
        bench::print_table(rows);
      }
      write_json(gpu ? bench::device_name(npes, gpus) : cpu_name(npes), gpus, "");
      const auto failed = std::count_if(rows.begin(), rows.end(),
                                        [](const Row& r) { return r.status.rfind("failed", 0) == 0; });
      if (failed) {
        fmt::print(stderr, "gshmem-bench: {} row(s) failed their result check (recorded without a figure)\n", failed);
        status = 3;
      }
    }
  } catch (const std::exception& e) {
    // One PE's error: the others are not in step with it any more, so no barrier or finalize after it (NVSHMEM's
    // nvshmem_global_exit returns under its unique-id bootstrap, which has no global exit, after marking the
    // library down: a later call reports "nvshmem API called before nvshmem_init"). PE 0 first keeps the rows it
    // has (JSON with "error"); gshmem's global exit ends the other PEs, and under NVSHMEM the launcher
    // (scripts/bench-gpu.sh) ends any PE still waiting for this one.
    std::cerr << "gshmem-bench: PE " << me << ": " << e.what() << "\n";
    if (me == 0) {
      // The device's name needs CUDA calls, which fail after a sticky CUDA error: the rows matter more.
      std::string device = gpu ? "GPU (its name not read after the error)" : cpu_name(npes);
      if (gpu) {
        try {
          device = bench::device_name(npes, -1);
        } catch (const std::exception&) {
        }
      }
      try {
        write_json(device, -1, e.what());
      } catch (const std::exception& e2) {
        std::cerr << "gshmem-bench: PE 0: " << e2.what() << "\n";
      }
    }
    std::cerr.flush();
    nvshmem_global_exit(1);
    std::fflush(nullptr);
    std::_Exit(1);
  }
  nvshmem_barrier_all();
  nvshmem_finalize();
  return status;
}
