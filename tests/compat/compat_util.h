// Shared by the API-compatibility programs. Written against NVIDIA NVSHMEM's API only (no gshmem name), so the
// same sources build against NVSHMEM 3.4.5 (scripts/nvshmem-compat.sh) and against gshmem (this directory's
// CMakeLists.txt). Checks: fresh random data (a seed PE 0 draws and sends to all), poisoned outputs, exact
// comparison, non-zero exit on any mismatch; exit 77 where a GPU program finds no GPU.
//
// How a program starts is chosen by COMPAT_INIT (default plain):
//   plain     nvshmem_init()                                     (under gshmemrun, mpirun, torchrun, or alone)
//   uid       nvshmemx_get_uniqueid on rank 0, MPI_Bcast, nvshmemx_set_attr_uniqueid_args,
//             nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID)   (under mpirun)
//   mpi_comm  nvshmemx_init_attr(NVSHMEMX_INIT_WITH_MPI_COMM) with MPI_COMM_WORLD (under mpirun)
// and two the way programs in the wild write them, with structs never initialised (filled here with fresh random
// bytes, the worst an uninitialised stack variable can hold):
//   mpi_comm_uninit  seed 000 / pipeline_llm.c: `nvshmemx_init_attr_t attr; attr.mpi_comm = &comm;`
//                    nvshmemx_init_attr(NVSHMEMX_INIT_WITH_MPI_COMM, &attr)
//   mpi_comm_args    the same, the communicator set with nvshmemx_set_attr_mpi_comm_args(&comm, &attr)
//   uid_uninit       DeepEP: `nvshmemx_uniqueid_t id; nvshmemx_get_uniqueid(&id);` on rank 0, the id sent as raw
//                    bytes, `nvshmemx_init_attr_t attr; nvshmemx_set_attr_uniqueid_args(rank, n, &id, &attr);`
//                    nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr)
// and jobs made of a group, or through the host library's entry point (read in the programs named; no code copied):
//   uid_groups       ByteDance flux src/ths_op/flux_shm.cc init_flux_shm(group) / Triton-distributed's
//                    init_nvshmem_by_uniqueid(TP_GROUP): each tensor-parallel group of a TP x DP job starts its own
//                    job with its own id; the group's rank 0 makes it, the group broadcasts it, every rank passes
//                    its group rank and size, and flux then checks nvshmem_my_pe() == group rank. Here the groups
//                    are MPI_Comm_split(WORLD, rank % COMPAT_GROUPS (default 2), -rank): ranks in reverse order
//   mpi_comm_groups  LLNL distconv util/nvshmem.cpp initialize(MPI_Comm comm), and an mpi4py binding that passes a
//                    node-local communicator: NVSHMEMX_INIT_WITH_MPI_COMM with that split communicator
//   hostlib_uid      liger-kernel's and a Rust binding's nvshmemx_hostlib_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID)
//                    on an attr zeroed with memset (versions never stamped), ended by nvshmemx_hostlib_finalize
//   hostlib_mpi      nvshmemx_hostlib_init_attr(NVSHMEMX_INIT_WITH_MPI_COMM) on NVSHMEMX_INIT_ATTR_INITIALIZER with
//                    attr.mpi_comm = &world (a C++ transport), ended by nvshmemx_hostlib_finalize
// In every MPI mode the PE must be the rank in the communicator the job was made of, n_pes its size.
// When the GPU is chosen is COMPAT_SET_DEVICE (GPU programs):
//   before   cudaSetDevice(local rank) before init (seed 000), where a launcher names the local rank (mpirun;
//            the default; under gshmemrun, whose variables NVSHMEM programs do not read, it acts as `after`)
//   after    nvshmem_init first, then cudaSetDevice(nvshmem_team_my_pe(NVSHMEMX_TEAM_NODE)) (NVSHMEM's examples)
//   again    before init, and the same device set again after it
// MPI is reached through compat_mpi.cpp so that no .cu file includes mpi.h.
#pragma once

#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

// compat_mpi.cpp
bool compat_mpi_available();
void compat_mpi_init(int* argc, char*** argv);
// comm: a pointer to an MPI_Comm (compat_mpi_comm_world, compat_mpi_comm_split); NULL: MPI_COMM_WORLD
int compat_mpi_rank(void* comm = nullptr);
int compat_mpi_size(void* comm = nullptr);
void compat_mpi_bcast(void* buf, int bytes, int root, void* comm = nullptr);
void* compat_mpi_comm_world();  // pointer to an MPI_Comm holding MPI_COMM_WORLD
// MPI_Comm_split(MPI_COMM_WORLD, color, key) once per process; a pointer to the new communicator
void* compat_mpi_comm_split(int color, int key);
void compat_mpi_finalize();

#if defined(__CUDACC__)
#define COMPAT_HD __host__ __device__
#else
#define COMPAT_HD
#endif
// CUDA runtime calls only where its header is there (a host-only program on a machine without CUDA runs CPU PEs)
// and the build links it (COMPAT_NO_CUDART: a gshmem build without GPU support on a machine that has the headers).
#if (defined(__CUDACC__) || defined(CUDART_VERSION)) && !defined(COMPAT_NO_CUDART)
#define COMPAT_HAVE_CUDART 1
#else
#define COMPAT_HAVE_CUDART 0
#endif

namespace compat {

inline const char*& prog_name() {
  static const char* name = "compat";
  return name;
}
inline int& failures() {
  static int n = 0;
  return n;
}
inline bool& hostlib_mode() {  // started with nvshmemx_hostlib_init_attr: ends with nvshmemx_hostlib_finalize
  static bool hostlib = false;
  return hostlib;
}
inline int& my_pe_cache() {
  static int pe = -1;
  return pe;
}

// A mismatch: printed with the PE and counted; the program ends non-zero.
inline void fail(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "[PE %d] %s: FAIL %s\n", my_pe_cache(), prog_name(), buf);
  ++failures();
}

#if COMPAT_HAVE_CUDART
#define COMPAT_CUDA(call)                                                                                      \
  do {                                                                                                         \
    cudaError_t e_ = (call);                                                                                   \
    if (e_ != cudaSuccess) {                                                                                   \
      std::fprintf(stderr, "[PE %d] %s: %s failed: %s (%s:%d)\n", compat::my_pe_cache(), compat::prog_name(), \
                   #call, cudaGetErrorString(e_), __FILE__, __LINE__);                                         \
      std::exit(1);                                                                                            \
    }                                                                                                          \
  } while (0)
#endif

inline const char* env_or(const char* name, const char* dflt) {
  const char* v = std::getenv(name);
  return v && *v ? v : dflt;
}

// The node-local rank a launcher gives (seed 000 picks its GPU from it before init), or -1.
inline int launcher_local_rank() {
  for (const char* n : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "LOCAL_RANK", "SLURM_LOCALID"}) {
    const char* v = std::getenv(n);
    if (v && *v) return std::atoi(v);
  }
  return -1;
}

struct Options {
  bool gpu = true;  // the program needs a GPU (exit 77 without one)
};

// Starts MPI if the init mode needs it, picks this process's GPU (before init, as NVSHMEM requires), and
// initialises with the chosen mode. Returns this PE.
inline int init(int* argc, char*** argv, const char* name, Options opt = Options{}) {
  prog_name() = name;
  const std::string mode = env_or("COMPAT_INIT", "plain");
  const bool mpi = mode == "uid" || mode == "mpi_comm" || mode == "uid_uninit" || mode == "mpi_comm_uninit" ||
                   mode == "mpi_comm_args" || mode == "uid_groups" || mode == "mpi_comm_groups" ||
                   mode == "hostlib_uid" || mode == "hostlib_mpi";
  if (mode != "plain" && !mpi) {
    std::fprintf(stderr, "%s: COMPAT_INIT=%s is not one of plain, uid, mpi_comm, uid_uninit, mpi_comm_uninit, "
                 "mpi_comm_args, uid_groups, mpi_comm_groups, hostlib_uid, hostlib_mpi\n", name, mode.c_str());
    std::exit(2);
  }
  if (mpi) {
    if (!compat_mpi_available()) {
      std::fprintf(stderr, "%s: COMPAT_INIT=%s needs MPI, and this program was built without it\n", name,
                   mode.c_str());
      std::exit(2);
    }
    compat_mpi_init(argc, argv);
  }
  int ndev = 0;
#if COMPAT_HAVE_CUDART
  if (cudaGetDeviceCount(&ndev) != cudaSuccess) ndev = 0;
#endif
  if (opt.gpu && ndev == 0) {
    std::printf("%s: SKIP: no usable GPU\n", name);
    if (mpi) compat_mpi_finalize();
    std::exit(77);
  }
  const std::string set_device = env_or("COMPAT_SET_DEVICE", "before");
  if (set_device != "before" && set_device != "after" && set_device != "again") {
    std::fprintf(stderr, "%s: COMPAT_SET_DEVICE=%s is not one of before, after, again\n", name, set_device.c_str());
    std::exit(2);
  }
  // unused without cudart
  [[maybe_unused]] const int local = set_device == "after" ? -1 : mpi ? compat_mpi_rank() : launcher_local_rank();
#if COMPAT_HAVE_CUDART
  if (ndev > 0 && local >= 0) {
    COMPAT_CUDA(cudaSetDevice(local % ndev));
    if (opt.gpu) std::printf("[Rank %d] Set GPU %d (of %d GPUs)\n", local, local % ndev, ndev);
  }
#endif
  // A fresh random byte pattern standing for what an uninitialised variable holds.
  auto garbage = [](void* p, size_t n) {
    std::random_device rd;
    auto* b = static_cast<unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) b[i] = static_cast<unsigned char>(rd());
  };
  // Libraries that may be initialised by someone else first ask (Neko, distconv): nothing is up yet.
  if (nvshmemx_init_status() != NVSHMEM_STATUS_NOT_INITIALIZED)
    fail("nvshmemx_init_status() is %d before init, expected NVSHMEM_STATUS_NOT_INITIALIZED", nvshmemx_init_status());
  // The communicator the job is made of: MPI_COMM_WORLD, or (the *_groups modes) this rank's group.
  void* comm = nullptr;
  if (mode == "uid_groups" || mode == "mpi_comm_groups") {
    const int ngroups = std::atoi(env_or("COMPAT_GROUPS", "2"));
    if (ngroups < 1) {
      std::fprintf(stderr, "%s: COMPAT_GROUPS=%d is not a positive number\n", name, ngroups);
      std::exit(2);
    }
    comm = compat_mpi_comm_split(compat_mpi_rank() % ngroups, -compat_mpi_rank());
  }
  const bool hostlib = mode == "hostlib_uid" || mode == "hostlib_mpi";
  hostlib_mode() = hostlib;
  auto start = [&](unsigned int flags, nvshmemx_init_attr_t* attr, const char* what) {
    if ((hostlib ? nvshmemx_hostlib_init_attr(flags, attr) : nvshmemx_init_attr(flags, attr)) != 0) {
      std::fprintf(stderr, "%s: %s failed\n", name, what);
      std::exit(1);
    }
  };
  if (mode == "plain") {
    nvshmem_init();
  } else if (mode == "uid_uninit") {
    nvshmemx_uniqueid_t id;
    garbage(&id, sizeof id);
    if (compat_mpi_rank() == 0 && nvshmemx_get_uniqueid(&id) != 0) {
      std::fprintf(stderr, "%s: nvshmemx_get_uniqueid failed\n", name);
      std::exit(1);
    }
    unsigned char bytes[sizeof(nvshmemx_uniqueid_t)];  // sent as raw bytes, as DeepEP does through Python
    std::memcpy(bytes, &id, sizeof bytes);
    compat_mpi_bcast(bytes, static_cast<int>(sizeof bytes), 0);
    nvshmemx_uniqueid_t root_id;
    std::memcpy(&root_id, bytes, sizeof root_id);
    nvshmemx_init_attr_t attr;
    garbage(&attr, sizeof attr);
    nvshmemx_set_attr_uniqueid_args(compat_mpi_rank(), compat_mpi_size(), &root_id, &attr);
    start(NVSHMEMX_INIT_WITH_UNIQUEID, &attr, "init with a unique id and an uninitialised attr");
  } else if (mode == "mpi_comm_uninit" || mode == "mpi_comm_args") {
    nvshmemx_init_attr_t attr;
    garbage(&attr, sizeof attr);
    if (mode == "mpi_comm_uninit") {
      attr.mpi_comm = compat_mpi_comm_world();
    } else if (nvshmemx_set_attr_mpi_comm_args(compat_mpi_comm_world(), &attr) != 0) {
      std::fprintf(stderr, "%s: nvshmemx_set_attr_mpi_comm_args failed\n", name);
      std::exit(1);
    }
    start(NVSHMEMX_INIT_WITH_MPI_COMM, &attr, "init with an MPI communicator and an uninitialised attr");
  } else if (mode == "uid" || mode == "uid_groups" || mode == "hostlib_uid") {
    nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
    if (compat_mpi_rank(comm) == 0 && nvshmemx_get_uniqueid(&id) != 0) {
      std::fprintf(stderr, "%s: nvshmemx_get_uniqueid failed\n", name);
      std::exit(1);
    }
    compat_mpi_bcast(&id, static_cast<int>(sizeof id), 0, comm);
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    if (hostlib) std::memset(&attr, 0, sizeof attr);  // liger-kernel's binding: zeroed, versions never stamped
    if (nvshmemx_set_attr_uniqueid_args(compat_mpi_rank(comm), compat_mpi_size(comm), &id, &attr) != 0) {
      std::fprintf(stderr, "%s: nvshmemx_set_attr_uniqueid_args failed\n", name);
      std::exit(1);
    }
    start(NVSHMEMX_INIT_WITH_UNIQUEID, &attr, "init with a unique id");
  } else {  // mpi_comm, mpi_comm_groups, hostlib_mpi
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    attr.mpi_comm = comm ? comm : compat_mpi_comm_world();
    start(NVSHMEMX_INIT_WITH_MPI_COMM, &attr, "init with an MPI communicator");
  }
  // The PE number is the rank in the communicator the job was made of, as flux checks (FLUX_CHECK_EQ(rank, mype)).
  if (mpi && (nvshmem_my_pe() != compat_mpi_rank(comm) || nvshmem_n_pes() != compat_mpi_size(comm))) {
    std::fprintf(stderr, "%s: FAIL after COMPAT_INIT=%s this is PE %d of %d; the communicator says rank %d of %d\n",
                 name, mode.c_str(), nvshmem_my_pe(), nvshmem_n_pes(), compat_mpi_rank(comm), compat_mpi_size(comm));
    std::exit(1);
  }
  const int pe = nvshmem_my_pe();
  my_pe_cache() = pe;
  // NVSHMEM reports PEs sharing a GPU as LIMITED_MPG / FULL_MPG, and a PE that chose no GPU before init as
  // IS_BOOTSTRAPPED until a call after cudaSetDevice finishes its init (gshmem: IS_INITIALIZED in both cases).
  const int status = nvshmemx_init_status();
  if (status != NVSHMEM_STATUS_IS_INITIALIZED && status != NVSHMEM_STATUS_LIMITED_MPG &&
      status != NVSHMEM_STATUS_FULL_MPG && !(local < 0 && status == NVSHMEM_STATUS_IS_BOOTSTRAPPED))
    fail("nvshmemx_init_status() is %d after init, expected NVSHMEM_STATUS_IS_INITIALIZED (or, PEs sharing a GPU, "
         "NVSHMEM_STATUS_LIMITED_MPG / FULL_MPG; IS_BOOTSTRAPPED before a GPU is chosen)", status);
#if COMPAT_HAVE_CUDART
  // No launcher rank before init (gshmemrun, or COMPAT_SET_DEVICE=after): NVSHMEM's documented pattern, the PE's
  // rank in the node team. COMPAT_SET_DEVICE=again: the device chosen before init, set once more.
  if (opt.gpu && local < 0) COMPAT_CUDA(cudaSetDevice(nvshmem_team_my_pe(NVSHMEMX_TEAM_NODE) % ndev));
  if (opt.gpu && local >= 0 && set_device == "again")
    COMPAT_CUDA(cudaSetDevice(local % ndev));
#endif
  return pe;
}

// Ends the program: 0 if no PE saw a mismatch, else 1. Each PE writes its count into every PE's table (host-side
// nvshmem_int_p), so every PE knows whether the run passed everywhere.
inline int finish() {
  const int pe = nvshmem_my_pe(), npes = nvshmem_n_pes();
  int* counts = static_cast<int*>(nvshmem_malloc(npes * sizeof(int)));
  nvshmem_barrier_all();
  for (int q = 0; q < npes; ++q) nvshmem_int_p(&counts[pe], failures(), q);
  nvshmem_quiet();
  nvshmem_barrier_all();
  int total = 0;
  for (int q = 0; q < npes; ++q) total += nvshmem_int_g(&counts[q], pe);
  nvshmem_barrier_all();
  nvshmem_free(counts);
  if (failures() == 0 && total == 0)
    std::printf("[PE %d] %s: PASS (%d PEs)\n", pe, prog_name(), npes);
  else
    std::printf("[PE %d] %s: FAIL (%d mismatches here, %d on all PEs)\n", pe, prog_name(), failures(), total);
  std::fflush(stdout);
  if (hostlib_mode())
    nvshmemx_hostlib_finalize();
  else
    nvshmem_finalize();
  if (std::string(env_or("COMPAT_INIT", "plain")) != "plain") compat_mpi_finalize();
  return total == 0 && failures() == 0 ? 0 : 1;
}

// A seed every PE shares, fresh each run: PE 0 draws it and puts it into every PE's symmetric copy.
inline uint64_t shared_seed() {
  uint64_t* s = static_cast<uint64_t*>(nvshmem_malloc(sizeof(uint64_t)));
  nvshmem_barrier_all();
  if (nvshmem_my_pe() == 0) {
    std::random_device rd;
    const uint64_t seed = (static_cast<uint64_t>(rd()) << 32) ^ rd();
    for (int pe = 0; pe < nvshmem_n_pes(); ++pe) nvshmem_uint64_p(s, seed, pe);
    nvshmem_quiet();
  }
  nvshmem_barrier_all();
  const uint64_t seed = nvshmem_uint64_g(s, nvshmem_my_pe());
  nvshmem_barrier_all();
  nvshmem_free(s);
  return seed;
}

// Deterministic values from (seed, stream, index): every PE can compute what any other PE sent.
COMPAT_HD inline uint64_t mix(uint64_t seed, uint64_t stream, uint64_t i) {
  uint64_t z = seed ^ (stream * 0x9E3779B97F4A7C15ull) ^ (i * 0xBF58476D1CE4E5B9ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace compat
