#include "runtime/control_segment.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runtime/error.hpp"

namespace gshmem {

ControlSegment::ControlSegment(int my_pe, const std::vector<int>& local_pes, int n_pes,
                               bootstrap::FdExchange& fdx, bootstrap::Bootstrap& boot)
    : my_pe_(my_pe), blocks_(n_pes, nullptr) {
  const size_t bytes = sizeof(ControlBlock);
  fd_ = memfd_create("gshmem-control", MFD_CLOEXEC);
  if (fd_ < 0) fail(GSHMEM_ERROR_SYSTEM, "init: {}. Fix: gshmem needs Linux memfd (kernel 3.17+)",
                    errno_text("memfd_create for the control segment", errno));
  if (ftruncate(fd_, static_cast<off_t>(bytes)) != 0)
    fail(GSHMEM_ERROR_SYSTEM, "init: {}", errno_text("ftruncate of the control segment", errno));
  std::vector<std::vector<int>> fds;
  try {
    fds = fdx.exchange({fd_}, /*tag=*/0x43544c, &boot);
  } catch (...) {
    close(fd_);
    throw;
  }
  int err = 0;
  for (size_t i = 0; i < local_pes.size(); ++i) {
    for (size_t j = 0; j < fds[i].size(); ++j) {
      if (j == 0 && !err) {
        void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fds[i][0], 0);
        if (p == MAP_FAILED) {
          err = errno;
        } else {
          maps_.push_back(p);
          blocks_[local_pes[i]] = static_cast<ControlBlock*>(p);
        }
      }
      close(fds[i][j]);
    }
  }
  if (err) {
    for (void* p : maps_) munmap(p, bytes);
    close(fd_);
    fail(GSHMEM_ERROR_SYSTEM, "init: {}", errno_text("mmap of a peer's control segment", err));
  }
  // The memfd starts zeroed: every flag is 0 and every epoch starts at 1. Make sure every PE has mapped before
  // anyone writes.
  boot.barrier();
}

ControlSegment::~ControlSegment() {
  for (void* p : maps_) munmap(p, sizeof(ControlBlock));
  if (fd_ >= 0) close(fd_);
}

}  // namespace gshmem
