// MPI for the API-compatibility programs (COMPAT_INIT=uid or mpi_comm), kept out of the .cu files. Built with
// COMPAT_WITH_MPI=1 where MPI was found; otherwise every call reports that MPI is missing.
#include <cstdio>
#include <cstdlib>

#if COMPAT_WITH_MPI
#include <mpi.h>
#endif

bool compat_mpi_available() { return COMPAT_WITH_MPI != 0; }

#if COMPAT_WITH_MPI
static MPI_Comm g_world = MPI_COMM_NULL;
static void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) {
    std::fprintf(stderr, "compat: %s failed (%d)\n", what, rc);
    std::exit(1);
  }
}
void compat_mpi_init(int* argc, char*** argv) {
  check(MPI_Init(argc, argv), "MPI_Init");
  g_world = MPI_COMM_WORLD;
}
static MPI_Comm comm_of(void* comm) { return comm ? *static_cast<MPI_Comm*>(comm) : MPI_COMM_WORLD; }
int compat_mpi_rank(void* comm) {
  int r = -1;
  check(MPI_Comm_rank(comm_of(comm), &r), "MPI_Comm_rank");
  return r;
}
int compat_mpi_size(void* comm) {
  int n = 0;
  check(MPI_Comm_size(comm_of(comm), &n), "MPI_Comm_size");
  return n;
}
void compat_mpi_bcast(void* buf, int bytes, int root, void* comm) {
  check(MPI_Bcast(buf, bytes, MPI_BYTE, root, comm_of(comm)), "MPI_Bcast");
}
void* compat_mpi_comm_world() { return &g_world; }
void* compat_mpi_comm_split(int color, int key) {
  static MPI_Comm split = MPI_COMM_NULL;  // one per process, kept until MPI_Finalize
  if (split == MPI_COMM_NULL) check(MPI_Comm_split(MPI_COMM_WORLD, color, key, &split), "MPI_Comm_split");
  return &split;
}
void compat_mpi_finalize() { check(MPI_Finalize(), "MPI_Finalize"); }
#else
[[noreturn]] static void no_mpi() {
  std::fprintf(stderr, "compat: this program was built without MPI\n");
  std::exit(2);
}
void compat_mpi_init(int*, char***) { no_mpi(); }
int compat_mpi_rank(void*) { no_mpi(); }
int compat_mpi_size(void*) { no_mpi(); }
void compat_mpi_bcast(void*, int, int, void*) { no_mpi(); }
void* compat_mpi_comm_world() { no_mpi(); }
void* compat_mpi_comm_split(int, int) { no_mpi(); }
void compat_mpi_finalize() { no_mpi(); }
#endif
