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
int compat_mpi_rank() {
  int r = -1;
  check(MPI_Comm_rank(MPI_COMM_WORLD, &r), "MPI_Comm_rank");
  return r;
}
int compat_mpi_size() {
  int n = 0;
  check(MPI_Comm_size(MPI_COMM_WORLD, &n), "MPI_Comm_size");
  return n;
}
void compat_mpi_bcast(void* buf, int bytes, int root) {
  check(MPI_Bcast(buf, bytes, MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast");
}
void* compat_mpi_comm_world() { return &g_world; }
void compat_mpi_finalize() { check(MPI_Finalize(), "MPI_Finalize"); }
#else
[[noreturn]] static void no_mpi() {
  std::fprintf(stderr, "compat: this program was built without MPI\n");
  std::exit(2);
}
void compat_mpi_init(int*, char***) { no_mpi(); }
int compat_mpi_rank() { no_mpi(); }
int compat_mpi_size() { no_mpi(); }
void compat_mpi_bcast(void*, int, int) { no_mpi(); }
void* compat_mpi_comm_world() { no_mpi(); }
void compat_mpi_finalize() { no_mpi(); }
#endif
