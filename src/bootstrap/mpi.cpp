// MPI start: the user's libmpi (Open MPI) is loaded with dlopen, used to learn rank and size and to broadcast
// the rendezvous address and secret from rank 0; everything after that is the TCP rendezvous. mpi.h is never
// included: Open MPI's handles are addresses of its predefined objects (ompi_mpi_comm_world, ompi_mpi_byte).
#include <dlfcn.h>

#include <cstring>
#include <optional>

#include "bootstrap/secret.hpp"
#include "bootstrap/starts.hpp"
#include "runtime/error.hpp"
#include "runtime/log.hpp"

namespace gshmem::bootstrap {
namespace {

using MpiHandle = void*;  // Open MPI: MPI_Comm and MPI_Datatype are pointers

struct MpiLib {
  const char* name = nullptr;
  int (*Initialized)(int*) = nullptr;
  int (*Finalized)(int*) = nullptr;
  int (*Init)(int*, char***) = nullptr;
  int (*Finalize)() = nullptr;
  int (*Comm_rank)(MpiHandle, int*) = nullptr;
  int (*Comm_size)(MpiHandle, int*) = nullptr;
  int (*Bcast)(void*, int, MpiHandle, int, MpiHandle) = nullptr;
  MpiHandle comm_world = nullptr;
  MpiHandle byte = nullptr;
};

const char* kNames[] = {"libmpi.so.40", "libmpi.so.12", "libmpi.so"};
const char* kFix =
    "install Open MPI's libmpi (Debian/Ubuntu: apt install libopenmpi3 openmpi-bin) where the "
    "dynamic loader finds it (LD_LIBRARY_PATH), or choose another start with GSHMEM_BOOTSTRAP "
    "(launcher for gshmemrun, env for torchrun, uid)";

template <typename F>
void sym(void* h, const MpiLib& lib, const char* name, F& out) {
  out = reinterpret_cast<F>(::dlsym(h, name));
  if (!out)
    fail(GSHMEM_ERROR_NOT_SUPPORTED, "mpi bootstrap: {} has no symbol {}: it is not a usable MPI library. Fix: {}",
         lib.name, name, kFix);
}

// Loaded once per process and never unloaded (Open MPI does not support being unloaded).
const MpiLib& load() {
  static MpiLib lib = [] {
    MpiLib l;
    void* h = nullptr;
    std::string errors;
    for (const char* n : kNames) {
      h = ::dlopen(n, RTLD_NOW | RTLD_GLOBAL);
      if (h) {
        l.name = n;
        break;
      }
      const char* e = ::dlerror();
      errors += fmt::format("\n  {}: {}", n, e ? e : "not found");
    }
    if (!h)
      fail(GSHMEM_ERROR_NOT_SUPPORTED, "mpi bootstrap: cannot load libmpi (tried {}, {}, {}):{}\nFix: {}", kNames[0],
           kNames[1], kNames[2], errors, kFix);
    // A program that links libmpi and names MPI_COMM_WORLD gets a copy relocation of these objects in its own
    // image, and libmpi then uses that copy: find the process-wide definition first, libmpi's own only if the
    // program has none.
    l.comm_world = ::dlsym(RTLD_DEFAULT, "ompi_mpi_comm_world");
    if (!l.comm_world) l.comm_world = ::dlsym(h, "ompi_mpi_comm_world");
    l.byte = ::dlsym(RTLD_DEFAULT, "ompi_mpi_byte");
    if (!l.byte) l.byte = ::dlsym(h, "ompi_mpi_byte");
    if (!l.comm_world || !l.byte)
      fail(GSHMEM_ERROR_NOT_SUPPORTED,
           "mpi bootstrap: {} is not Open MPI (it has no ompi_mpi_comm_world): gshmem's "
           "MPI start supports Open MPI's ABI only. Fix: run with Open MPI's mpirun and libmpi, or start with "
           "gshmemrun, or share a gshmem unique id through your MPI (gshmemx_get_uniqueid + MPI_Bcast + "
           "gshmemx_init_attr with GSHMEMX_INIT_WITH_UNIQUEID)",
           l.name);
    sym(h, l, "MPI_Initialized", l.Initialized);
    sym(h, l, "MPI_Finalized", l.Finalized);
    sym(h, l, "MPI_Init", l.Init);
    sym(h, l, "MPI_Finalize", l.Finalize);
    sym(h, l, "MPI_Comm_rank", l.Comm_rank);
    sym(h, l, "MPI_Comm_size", l.Comm_size);
    sym(h, l, "MPI_Bcast", l.Bcast);
    log::info("mpi bootstrap: loaded {}", l.name);
    return l;
  }();
  return lib;
}

}  // namespace

std::unique_ptr<Bootstrap> connect_mpi(const void* mpi_comm) {
  const MpiLib& mpi = load();
  int initialized = 0, finalized = 0;
  mpi.Initialized(&initialized);
  bool we_init = false;
  if (!initialized) {
    mpi.Finalized(&finalized);
    if (finalized)
      fail(GSHMEM_ERROR_NOT_SUPPORTED,
           "mpi bootstrap: MPI was already finalized in this process, so it cannot "
           "start the job. Fix: initialise gshmem before MPI_Finalize");
    if (mpi.Init(nullptr, nullptr) != 0)
      fail(GSHMEM_ERROR_SYSTEM,
           "mpi bootstrap: MPI_Init failed (see MPI's message above). Fix: start the program "
           "with mpirun, or call MPI_Init yourself before gshmem init");
    we_init = true;
  }
  MpiHandle comm = mpi_comm ? *static_cast<const MpiHandle*>(mpi_comm) : mpi.comm_world;
  int rank = -1, size = -1;
  if (mpi.Comm_rank(comm, &rank) != 0 || mpi.Comm_size(comm, &size) != 0 || size < 1 || rank < 0)
    fail(GSHMEM_ERROR_INVALID_VALUE,
         "mpi bootstrap: MPI_Comm_rank/MPI_Comm_size failed on the {} communicator. "
         "Fix: pass attr.mpi_comm = &comm with a valid (not MPI_COMM_NULL) Open MPI communicator",
         mpi_comm ? "given" : "world");

  // Rank 0 serves the rendezvous and broadcasts where it is. If it cannot, it still takes part in the
  // broadcast (with an invalid id) so the other ranks fail with a message instead of hanging.
  gshmemx_uniqueid_t blob{};
  std::unique_ptr<TcpStoreServer> server;
  std::optional<Error> root_error;
  if (rank == 0) {
    try {
      UidInfo info;
      info.secret = random_secret();
      server = new_server(size, info.secret, "mpi bootstrap (rank 0)");
      info.ip = server->ip();
      info.port = server->port();
      pack_unique_id(info, &blob);
    } catch (const Error& e) {
      root_error = e;
      std::memset(&blob, 0, sizeof blob);
    }
  }
  if (mpi.Bcast(&blob, static_cast<int>(sizeof blob), mpi.byte, 0, comm) != 0)
    fail(GSHMEM_ERROR_SYSTEM,
         "mpi bootstrap: MPI_Bcast of the rendezvous address failed (see MPI's message). "
         "Fix: check the MPI job (all ranks must call gshmem init with the same communicator)");
  if (root_error) throw *root_error;
  if (blob.version == 0)
    fail(GSHMEM_ERROR_PEER_FAILED,
         "mpi bootstrap: rank 0 could not open the rendezvous (its error says why). "
         "Fix: read rank 0's output");
  UidInfo info = unpack_unique_id(&blob);

  TcpBootstrap::Params p;
  p.kind = "mpi";
  p.rank = rank;
  p.nranks = size;
  p.secret = info.secret;
  p.server_desc = "MPI rank 0's process";
  p.join_fix =
      "every rank of the communicator must call gshmem init (with the same communicator); for ranks on "
      "several hosts set GSHMEM_BOOTSTRAP_ADDR to an address of rank 0's host that all can reach";
  auto b = join_tcp(std::move(p), info.ip, info.port, std::move(server));
  if (we_init) {
    const MpiLib* lib = &mpi;
    b->on_finalize([lib] {
      int done = 0;
      lib->Finalized(&done);
      if (!done) lib->Finalize();
    });
  }
  return b;
}

}  // namespace gshmem::bootstrap
