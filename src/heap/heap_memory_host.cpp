// Host backing for CPU PEs: each PE's heap is a memfd (anonymous shared memory: nothing in /dev/shm or /tmp),
// mapped at its slot by every PE of the node. The memfds are shared once through FdExchange; growing is
// ftruncate of one's own memfd, agreement, then mapping the new range of every local memfd.
#include <sys/mman.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>

#include "heap/heap_memory.hpp"
#include "runtime/config.hpp"
#include "runtime/error.hpp"
#include "runtime/log.hpp"

namespace gshmem::heap {
namespace {

class HostMemory final : public HeapMemory {
 public:
  HostMemory(const Layout& layout, bootstrap::Bootstrap& boot, bootstrap::FdExchange& fdx);
  ~HostMemory() override;
  HostMemory(const HostMemory&) = delete;
  HostMemory& operator=(const HostMemory&) = delete;

  char* slot_base(int local) const override { return base_ + static_cast<std::size_t>(local) * layout_.slot; }
  std::size_t size() const override { return size_; }
  const char* kind() const override { return "host memfd"; }
  std::string grow(std::size_t new_size) override;
  void map_external(std::size_t offset, void* user, std::size_t bytes, std::uint64_t tag, const char* call) override;
  void unmap_external(std::size_t offset) noexcept override;

 private:
  void reserve();
  void release() noexcept;
  // Maps [from, to) of local PE `local`'s memfd at the same offsets of its slot. Returns errno or 0.
  int map_range(int local, std::size_t from, std::size_t to);

  Layout layout_;
  bootstrap::Bootstrap& boot_;
  char* reservation_ = nullptr;  // as returned by mmap (before alignment)
  std::size_t reservation_len_ = 0;
  char* base_ = nullptr;         // aligned start of slot 0
  std::size_t size_ = 0;
  std::vector<int> fds_;         // memfd of each local PE (mine at my_local); -1 when not open
  std::map<std::size_t, std::size_t> externals_;  // registered buffers: offset -> bytes (mapped in every slot)
  bootstrap::FdExchange& fdx_;
};

HostMemory::HostMemory(const Layout& layout, bootstrap::Bootstrap& boot, bootstrap::FdExchange& fdx)
    : layout_(layout), boot_(boot), fds_(static_cast<std::size_t>(layout.n_local), -1), fdx_(fdx) {
  const int me = layout_.my_local;
  try {
    // 1. Local: reserve the address space of every local PE's heap, create my memfd, back and map it. Every PE
    //    reports the outcome, so a failure on one PE is an error on all (nobody waits in the exchange).
    StepStatus st = step_ok();
    try {
      reserve();
      int fd = memfd_create("gshmem-heap", MFD_CLOEXEC);
      if (fd < 0) {
        fail(GSHMEM_ERROR_SYSTEM, "{}. Fix: gshmem needs Linux 3.17+ with memfd support",
             errno_text("memfd_create", errno));
      }
      fds_[me] = fd;
      if (ftruncate(fd, static_cast<off_t>(layout_.initial)) != 0) {
        fail(GSHMEM_ERROR_OUT_OF_MEMORY, "could not size the host heap to {} bytes: {}. Fix: lower "
             "GSHMEM_SYMMETRIC_SIZE", layout_.initial, errno_text("ftruncate", errno));
      }
      if (int err = map_range(me, 0, layout_.initial)) {
        fail(GSHMEM_ERROR_SYSTEM, "could not map the host heap: {}", errno_text("mmap", err));
      }
    } catch (const Error& e) {
      st = step_error(StepStatus::kFailed, e.what(), e.status());
    }
    agree_or_throw(boot, st, "symmetric heap (host memory)");

    // 2. Share the memfds with the local peers and map theirs at their slots.
    std::vector<std::vector<int>> got = fdx.exchange({fds_[me]}, kHostFdTag, &boot);
    for (std::size_t i = 0; i < got.size(); ++i) {
      for (std::size_t k = 0; k < got[i].size(); ++k) {
        if (static_cast<int>(i) != me && k == 0 && i < fds_.size()) {
          fds_[i] = got[i][k];
        } else {
          close(got[i][k]);  // my own entry holds a dup of my memfd
        }
      }
    }
    st = step_ok();
    for (int i = 0; i < layout_.n_local && st.code == StepStatus::kOk; ++i) {
      if (i == me) continue;
      struct stat sb{};
      if (fds_[i] < 0) {
        st = step_error(StepStatus::kFailed, fmt::format("no memfd received from PE {}", layout_.local_pes[i]),
                        GSHMEM_ERROR_INTERNAL);
      } else if (fstat(fds_[i], &sb) != 0 || static_cast<std::size_t>(sb.st_size) < layout_.initial) {
        st = step_error(StepStatus::kFailed,
                        fmt::format("the memfd received from PE {} holds {} bytes, expected {}",
                                    layout_.local_pes[i], static_cast<long long>(sb.st_size), layout_.initial),
                        GSHMEM_ERROR_INTERNAL);
      } else if (int err = map_range(i, 0, layout_.initial)) {
        st = step_error(StepStatus::kFailed,
                        fmt::format("mapping PE {}'s heap: {}. Fix: check the memory limits of the node "
                                    "(vm.max_map_count, cgroup memory)",
                                    layout_.local_pes[i], errno_text("mmap", err)));
      }
    }
    agree_or_throw(boot, st, "symmetric heap (host memory)");
    size_ = layout_.initial;
  } catch (...) {
    release();
    throw;
  }
}

void HostMemory::reserve() {
  const std::size_t total = layout_.slot * static_cast<std::size_t>(layout_.n_local);
  const std::size_t len = total + layout_.alignment;  // room to align the start
  void* r = mmap(nullptr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (r == MAP_FAILED) {
    fail(GSHMEM_ERROR_OUT_OF_MEMORY,
         "could not reserve {} bytes of address space ({} local PEs x {} per PE): {}. Fix: lower "
         "GSHMEM_MAX_HEAP_SIZE, or raise the address-space limit (ulimit -v)",
         total, layout_.n_local, config::format_size(layout_.slot), errno_text("mmap", errno));
  }
  reservation_ = static_cast<char*>(r);
  reservation_len_ = len;
  auto addr = reinterpret_cast<std::uintptr_t>(reservation_);
  base_ = reservation_ + ((layout_.alignment - addr % layout_.alignment) % layout_.alignment);
}

HostMemory::~HostMemory() { release(); }

void HostMemory::release() noexcept {
  if (reservation_) munmap(reservation_, reservation_len_);  // also removes every mapping placed inside
  reservation_ = nullptr;
  for (int& fd : fds_) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
}

int HostMemory::map_range(int local, std::size_t from, std::size_t to) {
  void* want = slot_base(local) + from;
  void* got = mmap(want, to - from, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fds_[local],
                   static_cast<off_t>(from));
  if (got == MAP_FAILED) return errno;
  return 0;
}

std::string HostMemory::grow(std::size_t new_size) {
  const int me = layout_.my_local;
  const std::size_t old = size_;
  // 1. Everyone extends their own memfd; the agreement is also the barrier that makes every memfd long
  //    enough before anyone maps it.
  StepStatus st = step_ok();
  if (ftruncate(fds_[me], static_cast<off_t>(new_size)) != 0) {
    int err = errno;
    st = step_error(err == ENOMEM || err == ENOSPC || err == EFBIG ? StepStatus::kNoMemory : StepStatus::kFailed,
                    errno_text("ftruncate of the host heap memfd", err));
  }
  StepStatus all = agree(boot_, st);
  if (all.code != StepStatus::kOk) {
    if (st.code == StepStatus::kOk && ftruncate(fds_[me], static_cast<off_t>(old)) != 0) {
      log::warn("symmetric heap: could not shrink the host heap back to {} bytes after a failed growth: {}", old,
                errno_text("ftruncate", errno));
    }
    if (all.code == StepStatus::kNoMemory) return all.text;
    fail(GSHMEM_ERROR_SYSTEM, "symmetric heap: growing the host heap to {} bytes failed ({})", new_size, all.text);
  }
  // 2. Map the new range of every local PE's memfd, mine included.
  st = step_ok();
  for (int i = 0; i < layout_.n_local && st.code == StepStatus::kOk; ++i) {
    if (int err = map_range(i, old, new_size)) {
      st = step_error(StepStatus::kFailed,
                      fmt::format("mapping PE {}'s heap: {}", layout_.local_pes[i], errno_text("mmap", err)));
    }
  }
  all = agree(boot_, st);
  if (all.code != StepStatus::kOk) {
    fail(GSHMEM_ERROR_SYSTEM, "symmetric heap: growing the host heap to {} bytes failed ({}). Fix: check the "
         "memory limits of the node (vm.max_map_count, cgroup memory)", new_size, all.text);
  }
  size_ = new_size;
  return {};
}

// A file descriptor for the shared file mapping that holds [user, user + bytes) in this process, and the file offset
// of `user`: the buffer given to gshmemx_buffer_register_symmetric on a CPU PE. The mapping must be MAP_SHARED and
// file-backed (memfd_create, shm_open, a file); its fd is found among this process's open fds (same device and
// inode), else by reopening the mapped file's path, else through /proc/self/map_files (which needs privileges).
// Throws INVALID_VALUE naming `call` and the fix.
int shareable_fd(void* user, std::size_t bytes, const char* call, std::uint64_t* file_offset) {
  const auto a = reinterpret_cast<std::uintptr_t>(user);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  unsigned long start = 0, end = 0, off = 0, ino = 0;
  unsigned dmaj = 0, dmin = 0;
  char perms[8] = {};
  std::string path;
  bool found = false;
  while (std::getline(maps, line)) {
    int pos = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx %7s %lx %x:%x %lu %n", &start, &end, perms, &off, &dmaj, &dmin, &ino,
                    &pos) < 7)
      continue;
    if (a < start || a >= end) continue;
    found = true;
    path = pos > 0 && static_cast<std::size_t>(pos) <= line.size() ? line.substr(static_cast<std::size_t>(pos)) : "";
    break;
  }
  constexpr const char* kFix =
      "Fix: register memory every process can map: fd = memfd_create(\"buf\", 0) (or shm_open); ftruncate(fd, "
      "size); buf = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0); the same size on every PE";
  if (!found)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: buf_ptr={} is not mapped in this process. {}", call, user, kFix);
  if (perms[3] != 's' || ino == 0)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: buf_ptr={} is private memory (malloc, new, or mmap MAP_PRIVATE / "
         "MAP_ANONYMOUS: '{}'), which other processes cannot map. {}", call, user, line, kFix);
  if (bytes > end - a)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: [buf_ptr={}, +size={}) runs past the shared mapping that holds it "
         "([{:#x}, {:#x})). Fix: pass a size within one mmap of the buffer", call, user, bytes, start, end);
  *file_offset = off + (a - start);
  const dev_t want_dev = makedev(dmaj, dmin);
  auto same_file = [&](int fd) {
    struct stat sb{};
    return fstat(fd, &sb) == 0 && sb.st_ino == ino && sb.st_dev == want_dev;
  };
  // 1. An fd of the same file this process has open.
  if (DIR* d = opendir("/proc/self/fd")) {
    const int self = dirfd(d);
    int fd = -1;
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      const int k = std::atoi(e->d_name);
      if (k != self && same_file(k)) {
        fd = fcntl(k, F_DUPFD_CLOEXEC, 0);
        break;
      }
    }
    closedir(d);
    if (fd >= 0) return fd;
  }
  // 2. The mapped file by its path (shm_open's /dev/shm/<name>, a regular file), if it is still that file.
  if (!path.empty() && path[0] == '/' && path.find(" (deleted)") == std::string::npos) {
    const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd >= 0 && same_file(fd)) return fd;
    if (fd >= 0) close(fd);
  }
  // 3. The mapping itself (CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE).
  const std::string mf = fmt::format("/proc/self/map_files/{:x}-{:x}", start, end);
  const int fd = open(mf.c_str(), O_RDWR | O_CLOEXEC);
  if (fd >= 0 && same_file(fd)) return fd;
  if (fd >= 0) close(fd);
  fail(GSHMEM_ERROR_INVALID_VALUE, "{}: buf_ptr={} is shared memory ('{}') whose file is no longer open in this "
       "process and cannot be reopened. Fix: keep the memfd_create / shm_open file descriptor open until "
       "gshmemx_buffer_register_symmetric has returned (it may be closed after)", call, user, path);
}

void HostMemory::map_external(std::size_t offset, void* user, std::size_t bytes, std::uint64_t tag,
                              const char* call) {
  const int me = layout_.my_local;
  // 1. My buffer's file and offset, mapped at my slot.
  StepStatus st = step_ok();
  int fd = -1;
  std::uint64_t file_off = 0;
  try {
    fd = shareable_fd(user, bytes, call, &file_off);
    void* got = mmap(slot_base(me) + offset, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
                     static_cast<off_t>(file_off));
    if (got == MAP_FAILED)
      fail(GSHMEM_ERROR_SYSTEM, "{}: mapping buf_ptr={} into the symmetric address space: {}", call, user,
           errno_text("mmap", errno));
  } catch (const Error& e) {
    st = step_error(StepStatus::kFailed, e.what(), e.status());
  }
  auto unmap_slots = [&](int upto) {
    for (int i = 0; i < upto; ++i)
      mmap(slot_base(i) + offset, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
  };
  const StepStatus all = agree(boot_, st);
  if (all.code != StepStatus::kOk) {
    if (fd >= 0) {
      close(fd);
      unmap_slots(layout_.n_local);
    }
    throw Error(all.status, all.text);
  }
  // 2. Every local PE's file and offset; map the peers' at their slots.
  std::vector<std::uint64_t> offs(static_cast<std::size_t>(boot_.size()));
  boot_.allgather(&file_off, offs.data(), sizeof file_off);
  std::vector<std::vector<int>> got;
  try {
    got = fdx_.exchange({fd}, tag, &boot_);
  } catch (...) {
    close(fd);
    unmap_slots(layout_.n_local);
    throw;
  }
  close(fd);
  st = step_ok();
  for (int i = 0; i < static_cast<int>(got.size()); ++i) {
    for (std::size_t k = 0; k < got[i].size(); ++k) {
      const int pfd = got[i][k];
      if (i != me && k == 0 && i < layout_.n_local && st.code == StepStatus::kOk) {
        const int pe = layout_.local_pes[i];
        void* m = mmap(slot_base(i) + offset, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, pfd,
                       static_cast<off_t>(offs[static_cast<std::size_t>(pe)]));
        if (m == MAP_FAILED)
          st = step_error(StepStatus::kFailed, fmt::format("{}: mapping PE {}'s buffer: {}", call, pe,
                                                           errno_text("mmap", errno)));
      }
      close(pfd);
    }
  }
  const StepStatus all2 = agree(boot_, st);
  if (all2.code != StepStatus::kOk) {
    unmap_slots(layout_.n_local);
    throw Error(all2.status, all2.text);
  }
  externals_[offset] = bytes;
}

void HostMemory::unmap_external(std::size_t offset) noexcept {
  auto it = externals_.find(offset);
  if (it == externals_.end()) return;
  // Back to reserved address space (the reservation's PROT_NONE), in every slot.
  for (int i = 0; i < layout_.n_local; ++i)
    mmap(slot_base(i) + offset, it->second, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1,
         0);
  externals_.erase(it);
}

}  // namespace

std::size_t host_granularity() {
  long page = sysconf(_SC_PAGESIZE);
  return page > 0 ? static_cast<std::size_t>(page) : 4096;
}

std::unique_ptr<HeapMemory> make_host_memory(const Layout& layout, bootstrap::Bootstrap& boot,
                                             bootstrap::FdExchange& fdx) {
  return std::make_unique<HostMemory>(layout, boot, fdx);
}

}  // namespace gshmem::heap
