// gshmem::host — the throwing host layer under the C API and gshmem.hpp. CPU PEs move data with loads, stores
// and atomics on peers' memory mapped into this process; GPU PEs go through transport/gpu.hpp.
#include <atomic>
#include <cstring>

#include "api/thread_buffers.hpp"
#include "bootstrap/bootstrap.hpp"
#include "bootstrap/secret.hpp"
#include "runtime/device_state.hpp"
#include "runtime/error.hpp"
#include "runtime/log.hpp"
#include "runtime/runtime.hpp"
#include "runtime/spin.hpp"
#include "transport/gpu.hpp"

namespace gshmem::host {
namespace {

Runtime& rt(const char* call) { return Runtime::get(call); }

bool on_gpu(const Runtime& r) { return r.mode == Mode::Gpu; }

void check_ptr(const void* p, std::size_t bytes, const char* what, const char* call) {
  if (!p && bytes)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: {} is NULL for a transfer of {} bytes. Fix: pass a valid buffer", call,
         what, bytes);
}

void check_sig_op(int sig_op, const char* call) {
  if (sig_op != GSHMEM_SIGNAL_SET && sig_op != GSHMEM_SIGNAL_ADD)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: sig_op={} is neither GSHMEM_SIGNAL_SET ({}) nor GSHMEM_SIGNAL_ADD ({})",
         call, sig_op, static_cast<int>(GSHMEM_SIGNAL_SET), static_cast<int>(GSHMEM_SIGNAL_ADD));
}

// A signal word: inside the symmetric heap and 8-byte aligned (signal updates are single 64-bit writes/atomics).
void check_signal_word(Runtime& r, const std::uint64_t* sig, const char* call) {
  r.check_symmetric(sig, 8, "sig_addr", call);
  if (reinterpret_cast<std::uintptr_t>(sig) % 8)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: sig_addr={} is not aligned to 8 bytes. Fix: a signal word is a uint64_t "
         "of its own (e.g. from gshmem_malloc), naturally aligned", call, static_cast<const void*>(sig));
}

void check_cmp(int cmp, const char* call) {
  if (cmp < GSHMEM_CMP_EQ || cmp > GSHMEM_CMP_GE)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: cmp={} is not a GSHMEM_CMP_* constant (EQ, NE, GT, LE, LT, GE)", call,
         cmp);
}

gpu::Context& gpu_ctx(Runtime& r, const char* call) {
  if (!on_gpu(r))
    fail(GSHMEM_ERROR_NOT_SUPPORTED, "{}: this PE is a CPU PE ({}), and stream-ordered calls need a GPU PE. Fix: "
         "use the blocking host call (e.g. gshmem_putmem, gshmem_barrier_all) on CPU PEs, or run on GPUs{}",
         call, r.cpu_reason, r.cpu_reason.rfind("GSHMEM_DEVICE", 0) == 0 ? " (unset GSHMEM_DEVICE)" : "");
  return *r.gpu;
}

template <typename T>
bool compare(T a, int cmp, T b) {
  switch (cmp) {
    case GSHMEM_CMP_EQ: return a == b;
    case GSHMEM_CMP_NE: return a != b;
    case GSHMEM_CMP_GT: return a > b;
    case GSHMEM_CMP_LE: return a <= b;
    case GSHMEM_CMP_LT: return a < b;
    case GSHMEM_CMP_GE: return a >= b;
  }
  return false;
}

bool compare_bits(Wait kind, std::uint64_t cur, int cmp, std::uint64_t value) {
  switch (kind) {
    case Wait::I16: return compare<std::int16_t>(static_cast<std::int16_t>(cur), cmp, static_cast<std::int16_t>(value));
    case Wait::U16: return compare<std::uint16_t>(static_cast<std::uint16_t>(cur), cmp, static_cast<std::uint16_t>(value));
    case Wait::I32: return compare<std::int32_t>(static_cast<std::int32_t>(cur), cmp, static_cast<std::int32_t>(value));
    case Wait::U32: return compare<std::uint32_t>(static_cast<std::uint32_t>(cur), cmp, static_cast<std::uint32_t>(value));
    case Wait::I64: return compare<std::int64_t>(static_cast<std::int64_t>(cur), cmp, static_cast<std::int64_t>(value));
    case Wait::U64: return compare<std::uint64_t>(cur, cmp, value);
  }
  return false;
}

std::size_t wait_bytes(Wait kind) {
  switch (kind) {
    case Wait::I16: case Wait::U16: return 2;
    case Wait::I32: case Wait::U32: return 4;
    default: return 8;
  }
}

// Reads this PE's own symmetric variable with acquire ordering.
std::uint64_t load_local(Runtime& r, const void* p, std::size_t bytes) {
  if (on_gpu(r)) {
    std::uint64_t v = 0;
    gpu::load(r.gpu, &v, p, bytes);
    return v;
  }
  switch (bytes) {
    case 2: return __atomic_load_n(static_cast<const std::uint16_t*>(p), __ATOMIC_ACQUIRE);
    case 4: return __atomic_load_n(static_cast<const std::uint32_t*>(p), __ATOMIC_ACQUIRE);
    default: return __atomic_load_n(static_cast<const std::uint64_t*>(p), __ATOMIC_ACQUIRE);
  }
}

template <typename U>
U cpu_amo(U* t, Amo op, U v, U c) {
  switch (op) {
    case Amo::Fetch: return __atomic_load_n(t, __ATOMIC_SEQ_CST);
    case Amo::Set: __atomic_store_n(t, v, __ATOMIC_SEQ_CST); return 0;
    case Amo::Swap: return __atomic_exchange_n(t, v, __ATOMIC_SEQ_CST);
    case Amo::CompareSwap: __atomic_compare_exchange_n(t, &c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); return c;
    case Amo::FetchAdd: return __atomic_fetch_add(t, v, __ATOMIC_SEQ_CST);
    case Amo::FetchAnd: return __atomic_fetch_and(t, v, __ATOMIC_SEQ_CST);
    case Amo::FetchOr: return __atomic_fetch_or(t, v, __ATOMIC_SEQ_CST);
    case Amo::FetchXor: return __atomic_fetch_xor(t, v, __ATOMIC_SEQ_CST);
  }
  return 0;
}

std::uint64_t do_amo(Runtime& r, void* target, int bytes, Amo op, std::uint64_t v, std::uint64_t c) {
  if (on_gpu(r)) return gpu::amo(r.gpu, target, bytes, static_cast<gpu::AmoOp>(op), v, c);
  if (bytes == 4)
    return cpu_amo<std::uint32_t>(static_cast<std::uint32_t*>(target), op, static_cast<std::uint32_t>(v),
                                  static_cast<std::uint32_t>(c));
  return cpu_amo<std::uint64_t>(static_cast<std::uint64_t*>(target), op, v, c);
}

// GPU PEs: the update joins the in-order stream after any data issued before it; `wait`: and is complete on return.
void do_signal(Runtime& r, std::uint64_t* sig, std::uint64_t value, int sig_op, int pe, bool wait) {
  auto* target = static_cast<std::uint64_t*>(r.peer(sig, pe));
  if (on_gpu(r)) {
    gpu::signal_nbi(r.gpu, target, value, sig_op);
    if (wait) gpu::quiet(r.gpu);
    return;
  }
  do_amo(r, target, 8, sig_op == GSHMEM_SIGNAL_ADD ? Amo::FetchAdd : Amo::Set, value, 0);
}

}  // namespace

// ---- init / query ----
void init(unsigned flags, const gshmemx_init_attr_t* attr, int major, int minor, int patch) {
  bootstrap::Options o;
  o.flags = flags;
  if (flags & (GSHMEMX_INIT_WITH_MPI_COMM | GSHMEMX_INIT_WITH_UNIQUEID)) {
    if (!attr)
      fail(GSHMEM_ERROR_INVALID_VALUE, "gshmemx_init_attr: flags ask for an MPI communicator or unique id but "
           "attr is NULL. Fix: pass a gshmemx_init_attr_t set up with GSHMEMX_INIT_ATTR_INITIALIZER");
    // The inline gshmemx_init_attr stamps the versions (as NVSHMEM's does), so another value means the program was
    // compiled against headers of another layout.
    if (attr->version != GSHMEMX_INIT_ATTR_VERSION)
      fail(GSHMEM_ERROR_INVALID_VALUE, "gshmemx_init_attr: attr->version is {} but this gshmem's layout is {} "
           "(0x{:x}): the program was compiled against other gshmem headers. Fix: rebuild it against this "
           "gshmem's include/", attr->version, GSHMEMX_INIT_ATTR_VERSION, GSHMEMX_INIT_ATTR_VERSION);
    o.mpi_comm = attr->mpi_comm;
    o.uid = attr->args.uid_args.id;
    o.uid_rank = attr->args.uid_args.myrank;
    o.uid_nranks = attr->args.uid_args.nranks;
  }
  if (flags & GSHMEMX_INIT_WITH_SHMEM)
    fail(GSHMEM_ERROR_NOT_SUPPORTED, "gshmemx_init_attr: GSHMEMX_INIT_WITH_SHMEM (bootstrap over an OpenSHMEM "
         "library) is not supported. Fix: launch with gshmemrun or mpirun, or use a unique id");
  Runtime::init(o, major, minor, patch);
  reset_thread_level();
}

void finalize() {
  Runtime::finalize();
  buffer_unregister_all();
}
void leave(const char* how) { Runtime::leave_current(how ? how : "its program ended without gshmem_finalize"); }
bool initialized() { return Runtime::current() != nullptr; }
int my_pe() { return rt("gshmem_my_pe").my_pe; }
int n_pes() { return rt("gshmem_n_pes").n_pes; }
double init_ms() { return rt("gshmemx_init_ms").init_ms; }

void query_device(int* ordinal, int* count) {
  Runtime& r = rt("gshmemx_query_device");
  if (ordinal) *ordinal = r.mode == Mode::Gpu ? r.device : -1;
  if (count) *count = r.mode == Mode::Gpu ? r.visible_devices : 0;
}

void get_unique_id(gshmemx_uniqueid_t* uid) {
  if (!uid)
    fail(GSHMEM_ERROR_INVALID_VALUE, "gshmemx_get_uniqueid: uid is NULL. Fix: pass the address of a "
         "gshmemx_uniqueid_t");
  bootstrap::make_unique_id(uid);
}

// ---- heap ----
void* malloc(std::size_t bytes, std::size_t alignment, bool zero, const char* call) {
  Runtime& r = rt(call);
  const std::size_t before = r.heap->size();
  void* p = r.heap->allocate(bytes, alignment, call);
  if (p && zero) {
    if (on_gpu(r)) gpu::memset_zero(r.gpu, p, bytes);
    else std::memset(p, 0, bytes);
    r.teams->barrier(GSHMEM_TEAM_WORLD, call);  // zeroed everywhere before anyone writes into it
  }
  if (on_gpu(r) && r.heap->size() != before) device_state::publish(r);  // kernels see the grown heap
  return p;
}

void free(void* p) {
  Runtime& r = rt("gshmem_free");
  if (on_gpu(r)) gpu::quiet(r.gpu);
  r.heap->free(p, "gshmem_free");
}

void* realloc(void* p, std::size_t bytes) {
  const char* call = "gshmem_realloc";
  Runtime& r = rt(call);
  if (!p) return malloc(bytes, 0, false, call);
  if (!bytes) {
    free(p);
    return nullptr;
  }
  const std::size_t old = r.heap->allocation_size(p);
  if (!old)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: ptr={} is not the start of a live symmetric allocation. Fix: pass exactly "
         "the pointer gshmem_malloc/calloc/align/realloc returned (the same object on every PE), or NULL", call, p);
  void* q = malloc(bytes, 0, false, call);  // collective: every PE asked for the same size
  const std::size_t keep = old < bytes ? old : bytes;
  if (on_gpu(r)) gpu::copy(r.gpu, q, p, keep, false);
  else std::memcpy(q, p, keep);
  // Collective; gathers every PE, so on return every PE has finished its copy out of the old object.
  free(p);
  return q;
}

void* buffer_register_symmetric(void* buf, std::size_t size, int flags) {
  const char* call = "gshmemx_buffer_register_symmetric";
  Runtime& r = rt(call);
  if (flags != 0)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: flags={} is not supported (reserved, as in NVSHMEM). Fix: pass 0", call,
         flags);
  return r.heap->register_external(buf, size, call);
}

void buffer_unregister_symmetric(void* mmap_ptr, std::size_t size) {
  const char* call = "gshmemx_buffer_unregister_symmetric";
  Runtime& r = rt(call);
  // This PE's work on the region is complete before any PE unmaps it (the heap's gather is the barrier after).
  if (on_gpu(r)) {
    gpu::quiet(r.gpu);
    gpu::synchronize_device(r.gpu, call);
  }
  r.heap->unregister_external(mmap_ptr, size, call);
}

void* ptr(const void* p, int pe) {
  Runtime& r = rt("gshmem_ptr");
  r.check_pe(pe, "gshmem_ptr");
  if (!r.heap->contains(p)) return nullptr;
  return r.heap->peer_ptr(p, pe);
}

gshmemx_heap_usage_t heap_usage() {
  auto u = rt("gshmemx_heap_usage").heap->usage();
  return gshmemx_heap_usage_t{u.heap_size, u.used, u.max_size, u.internal, u.allocations};
}

// ---- RMA ----
void putmem(void* dest, const void* src, std::size_t bytes, int pe, bool nbi, const char* call) {
  Runtime& r = rt(call);
  r.check_pe(pe, call);
  if (!bytes) return;
  check_ptr(src, bytes, "source", call);
  r.check_symmetric(dest, bytes, "dest", call);
  void* target = r.peer(dest, pe);
  if (on_gpu(r)) gpu::copy(r.gpu, target, src, bytes, nbi);
  else std::memcpy(target, src, bytes);
}

void getmem(void* dest, const void* src, std::size_t bytes, int pe, bool nbi, const char* call) {
  Runtime& r = rt(call);
  r.check_pe(pe, call);
  if (!bytes) return;
  check_ptr(dest, bytes, "dest", call);
  r.check_symmetric(src, bytes, "source", call);
  const void* from = r.peer(src, pe);
  if (on_gpu(r)) gpu::copy(r.gpu, dest, from, bytes, nbi);
  else std::memcpy(dest, from, bytes);
}

void g(void* out, const void* src, std::size_t bytes, int pe, const char* call) {
  Runtime& r = rt(call);
  if (!on_gpu(r) || bytes > gpu::kLoadMax) return getmem(out, src, bytes, pe, false, call);
  r.check_pe(pe, call);
  if (!bytes) return;
  check_ptr(out, bytes, "dest", call);
  r.check_symmetric(src, bytes, "source", call);
  gpu::load(r.gpu, out, r.peer(src, pe), bytes);
}

namespace {
void strided(Runtime& r, bool put, void* dest, const void* src, std::ptrdiff_t dst, std::ptrdiff_t sst,
             std::size_t elem, std::size_t n, int pe, const char* call) {
  r.check_pe(pe, call);
  if (!n) return;
  if (dst < 1 || sst < 1)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: strides must be at least 1 element (dst={}, sst={})", call, dst, sst);
  const std::size_t dspan = (static_cast<std::size_t>(dst) * (n - 1) + 1) * elem;
  const std::size_t sspan = (static_cast<std::size_t>(sst) * (n - 1) + 1) * elem;
  void* to = dest;
  const void* from = src;
  if (put) {
    check_ptr(src, sspan, "source", call);
    r.check_symmetric(dest, dspan, "dest", call);
    to = r.peer(dest, pe);
  } else {
    check_ptr(dest, dspan, "dest", call);
    r.check_symmetric(src, sspan, "source", call);
    from = r.peer(src, pe);
  }
  if (on_gpu(r)) {
    gpu::copy_strided(r.gpu, to, from, elem, dst, sst, n, false);
    return;
  }
  auto* d = static_cast<unsigned char*>(to);
  auto* s = static_cast<const unsigned char*>(from);
  for (std::size_t i = 0; i < n; ++i) std::memcpy(d + i * dst * elem, s + i * sst * elem, elem);
}
}  // namespace

void iput(void* dest, const void* src, std::ptrdiff_t dst, std::ptrdiff_t sst, std::size_t elem, std::size_t n,
          int pe, const char* call) {
  strided(rt(call), true, dest, src, dst, sst, elem, n, pe, call);
}
void iget(void* dest, const void* src, std::ptrdiff_t dst, std::ptrdiff_t sst, std::size_t elem, std::size_t n,
          int pe, const char* call) {
  strided(rt(call), false, dest, src, dst, sst, elem, n, pe, call);
}

// ---- atomics ----
std::uint64_t atomic(void* dest, int bytes, Amo op, std::uint64_t value, std::uint64_t cond, int pe,
                     const char* call) {
  Runtime& r = rt(call);
  r.check_pe(pe, call);
  r.check_symmetric(dest, static_cast<std::size_t>(bytes), "dest", call);
  if (reinterpret_cast<std::uintptr_t>(dest) % static_cast<std::uintptr_t>(bytes))
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: dest={} is not aligned to {} bytes. Fix: atomics need naturally "
         "aligned objects", call, dest, bytes);
  return do_amo(r, r.peer(dest, pe), bytes, op, value, cond);
}

// ---- point-to-point synchronisation ----
void wait_until(const void* ivar, Wait kind, int cmp, std::uint64_t value, const char* call) {
  Runtime& r = rt(call);
  check_cmp(cmp, call);
  r.check_symmetric(ivar, wait_bytes(kind), "ivar", call);
  Spinner spin(r, call);
  while (!compare_bits(kind, load_local(r, ivar, wait_bytes(kind)), cmp, value)) spin.pause();
}

bool test(const void* ivar, Wait kind, int cmp, std::uint64_t value, const char* call) {
  Runtime& r = rt(call);
  check_cmp(cmp, call);
  r.check_symmetric(ivar, wait_bytes(kind), "ivar", call);
  return compare_bits(kind, load_local(r, ivar, wait_bytes(kind)), cmp, value);
}

// ---- ordering ----
void quiet() {
  Runtime& r = rt("gshmem_quiet");
  if (on_gpu(r)) gpu::quiet(r.gpu);
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

void fence() {
  Runtime& r = rt("gshmem_fence");
  // GPU PEs: host-initiated operations go through one in-order stream, so they are already ordered per target.
  (void)r;
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

void barrier(gshmem_team_t team, bool with_quiet, const char* call) {
  Runtime& r = rt(call);
  if (with_quiet) {
    if (on_gpu(r)) gpu::quiet(r.gpu);
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  r.teams->barrier(team, call);
}

// ---- signals ----
void putmem_signal(void* dest, const void* src, std::size_t bytes, std::uint64_t* sig, std::uint64_t signal,
                   int sig_op, int pe, bool nbi, const char* call) {
  Runtime& r = rt(call);
  check_sig_op(sig_op, call);
  check_signal_word(r, sig, call);
  // GPU PEs: copy and signal go on one in-order stream (the signal after the copy), with one wait at the end for
  // the blocking form (it used to wait after each).
  putmem(dest, src, bytes, pe, nbi || on_gpu(r), call);
  if (!on_gpu(r)) std::atomic_thread_fence(std::memory_order_release);
  do_signal(r, sig, signal, sig_op, pe, !nbi);
}

void signal_op(std::uint64_t* sig, std::uint64_t signal, int sig_op, int pe, const char* call) {
  Runtime& r = rt(call);
  check_sig_op(sig_op, call);
  r.check_pe(pe, call);
  check_signal_word(r, sig, call);
  do_signal(r, sig, signal, sig_op, pe, true);
}

std::uint64_t signal_fetch(const std::uint64_t* sig) {
  Runtime& r = rt("gshmem_signal_fetch");
  check_signal_word(r, sig, "gshmem_signal_fetch");
  return load_local(r, sig, 8);
}

std::uint64_t signal_wait_until(std::uint64_t* sig, int cmp, std::uint64_t value) {
  const char* call = "gshmem_signal_wait_until";
  Runtime& r = rt(call);
  check_cmp(cmp, call);
  check_signal_word(r, sig, call);
  Spinner spin(r, call);
  for (;;) {
    std::uint64_t v = load_local(r, sig, 8);
    if (compare_bits(Wait::U64, v, cmp, value)) return v;
    spin.pause();
  }
}

// ---- teams ----
int team_my_pe(gshmem_team_t team) {
  Runtime& r = rt("gshmem_team_my_pe");
  if (!r.teams->valid(team)) return -1;
  return r.teams->get(team, "gshmem_team_my_pe").my_rank;
}
int team_n_pes(gshmem_team_t team) {
  Runtime& r = rt("gshmem_team_n_pes");
  if (!r.teams->valid(team)) return -1;
  return r.teams->get(team, "gshmem_team_n_pes").size;
}
int team_translate_pe(gshmem_team_t src, int src_pe, gshmem_team_t dest) {
  Runtime& r = rt("gshmem_team_translate_pe");
  if (!r.teams->valid(src) || !r.teams->valid(dest)) return -1;
  return team_translate(r.teams->get(src, "gshmem_team_translate_pe"), src_pe,
                        r.teams->get(dest, "gshmem_team_translate_pe"));
}
gshmem_team_t team_split_strided(gshmem_team_t parent, int start, int stride, int size) {
  Runtime& r = rt("gshmem_team_split_strided");
  gshmem_team_t t = GSHMEM_TEAM_INVALID;
  r.teams->split_strided(parent, start, stride, size, &t);
  return t;
}
void team_split_2d(gshmem_team_t parent, int xrange, gshmem_team_t* x, gshmem_team_t* y) {
  rt("gshmem_team_split_2d").teams->split_2d(parent, xrange, x, y);
}
void team_destroy(gshmem_team_t team) { rt("gshmem_team_destroy").teams->destroy(team); }
std::uint64_t team_uniqueid() {
  const bootstrap::Secret s = bootstrap::random_secret();
  std::uint64_t v = 0;
  std::memcpy(&v, s.data(), sizeof v);
  return v == 0 || v == UINT64_MAX ? 1 : v;  // 0 and UINT64_MAX mean "not set" (NVSHMEM's config initializer)
}
gshmem_team_t team_init(std::uint64_t uniqueid, int npes, int pe_idx_in_team) {
  gshmem_team_t t = GSHMEM_TEAM_INVALID;
  rt("gshmemx_team_init").teams->init_team(uniqueid, npes, pe_idx_in_team, &t);
  return t;
}

// ---- stream-ordered ----
namespace {
// The checks of a put on a stream (putmem_on_stream, putmem_signal_on_stream): PE pe's address of dest, nullptr for
// 0 bytes (dest and source are not looked at then).
void* stream_put_target(Runtime& r, void* dest, const void* src, std::size_t bytes, int pe, const char* call) {
  r.check_pe(pe, call);
  if (!bytes) return nullptr;
  check_ptr(src, bytes, "source", call);
  r.check_symmetric(dest, bytes, "dest", call);
  return r.peer(dest, pe);
}
}  // namespace

void putmem_on_stream(void* dest, const void* src, std::size_t bytes, int pe, gshmem_stream_t s,
                      const char* call) {
  Runtime& r = rt(call);
  auto& g = gpu_ctx(r, call);
  if (void* target = stream_put_target(r, dest, src, bytes, pe, call)) gpu::copy_on_stream(&g, target, src, bytes, s);
}

void getmem_on_stream(void* dest, const void* src, std::size_t bytes, int pe, gshmem_stream_t s,
                      const char* call) {
  Runtime& r = rt(call);
  auto& g = gpu_ctx(r, call);
  r.check_pe(pe, call);
  if (!bytes) return;
  check_ptr(dest, bytes, "dest", call);
  r.check_symmetric(src, bytes, "source", call);
  gpu::copy_on_stream(&g, dest, r.peer(src, pe), bytes, s);
}

void p_on_stream(void* dest, std::uint64_t value, int bytes, int pe, gshmem_stream_t s, const char* call) {
  Runtime& r = rt(call);
  auto& g = gpu_ctx(r, call);
  r.check_pe(pe, call);
  r.check_symmetric(dest, static_cast<std::size_t>(bytes), "dest", call);
  gpu::store_on_stream(&g, r.peer(dest, pe), value, bytes, s);
}

void putmem_signal_on_stream(void* dest, const void* src, std::size_t bytes, std::uint64_t* sig,
                             std::uint64_t signal, int sig_op, int pe, gshmem_stream_t s, const char* call) {
  Runtime& r = rt(call);
  auto& g = gpu_ctx(r, call);
  check_sig_op(sig_op, call);
  check_signal_word(r, sig, call);
  void* target = stream_put_target(r, dest, src, bytes, pe, call);
  // A source in this PE's heap is this GPU's memory: the transport need not ask CUDA where it lives.
  gpu::put_signal_on_stream(&g, target, src, bytes, bytes && r.heap->contains(src, bytes),
                            static_cast<std::uint64_t*>(r.peer(sig, pe)), signal, sig_op, s);
}

void signal_op_on_stream(std::uint64_t* sig, std::uint64_t signal, int sig_op, int pe, gshmem_stream_t s) {
  const char* call = "gshmemx_signal_op_on_stream";
  Runtime& r = rt(call);
  auto& g = gpu_ctx(r, call);
  check_sig_op(sig_op, call);
  r.check_pe(pe, call);
  check_signal_word(r, sig, call);
  gpu::signal_on_stream(&g, static_cast<std::uint64_t*>(r.peer(sig, pe)), signal, sig_op, s);
}

void signal_wait_until_on_stream(std::uint64_t* sig, int cmp, std::uint64_t value, gshmem_stream_t s) {
  const char* call = "gshmemx_signal_wait_until_on_stream";
  Runtime& r = rt(call);
  auto& g = gpu_ctx(r, call);
  check_cmp(cmp, call);
  check_signal_word(r, sig, call);
  gpu::wait_on_stream(&g, sig, cmp, value, s);
}

void quiet_on_stream(gshmem_stream_t s) {
  const char* call = "gshmemx_quiet_on_stream";
  Runtime& r = rt(call);
  gpu::quiet_on_stream(&gpu_ctx(r, call), s);
}

void barrier_on_stream(gshmem_team_t team, bool with_quiet, gshmem_stream_t s, const char* call) {
  Runtime& r = rt(call);
  auto& g = gpu_ctx(r, call);
  const TeamInfo& t = r.teams->get(team, call);
  if (with_quiet) gpu::quiet_on_stream(&g, s);
  gpu::barrier_on_stream(&g, team, t, s);
}

namespace {
gpu::WaitType wait_type(Wait kind) {
  switch (kind) {
    case Wait::I16: return gpu::WaitType::I16;
    case Wait::U16: return gpu::WaitType::U16;
    case Wait::I32: return gpu::WaitType::I32;
    case Wait::U32: return gpu::WaitType::U32;
    case Wait::I64: return gpu::WaitType::I64;
    case Wait::U64: return gpu::WaitType::U64;
  }
  return gpu::WaitType::U64;
}

// Strided transfer checks shared by the host and stream forms; returns the spans in bytes.
void check_strides(std::ptrdiff_t dst, std::ptrdiff_t sst, const char* call) {
  if (dst < 1 || sst < 1)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: strides must be at least 1 element (dst={}, sst={}). Fix: pass positive "
         "strides in elements", call, dst, sst);
}
std::size_t span(std::ptrdiff_t stride, std::size_t elem, std::size_t n, const char* call) {
  const auto s = static_cast<std::size_t>(stride);
  if (n > 1 && s > (SIZE_MAX / elem - 1) / (n - 1))
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: stride {} x {} elements of {} bytes spans more than the address space. "
         "Fix: pass the stride in elements and the element count, not bytes", call, stride, n, elem);
  return (s * (n - 1) + 1) * elem;
}

void strided_on_stream(bool put, void* dest, const void* src, std::ptrdiff_t dst, std::ptrdiff_t sst,
                       std::size_t elem, std::size_t n, int pe, gshmem_stream_t s, const char* call) {
  Runtime& r = rt(call);
  auto& g = gpu_ctx(r, call);
  r.check_pe(pe, call);
  if (!n) return;
  check_strides(dst, sst, call);
  void* to = dest;
  const void* from = src;
  if (put) {
    check_ptr(src, span(sst, elem, n, call), "source", call);
    r.check_symmetric(dest, span(dst, elem, n, call), "dest", call);
    to = r.peer(dest, pe);
  } else {
    check_ptr(dest, span(dst, elem, n, call), "dest", call);
    r.check_symmetric(src, span(sst, elem, n, call), "source", call);
    from = r.peer(src, pe);
  }
  gpu::copy_strided_on_stream(&g, to, from, elem, dst, sst, n, s, call);
}
}  // namespace

void iput_on_stream(void* dest, const void* src, std::ptrdiff_t dst, std::ptrdiff_t sst, std::size_t elem,
                    std::size_t n, int pe, gshmem_stream_t s, const char* call) {
  strided_on_stream(true, dest, src, dst, sst, elem, n, pe, s, call);
}
void iget_on_stream(void* dest, const void* src, std::ptrdiff_t dst, std::ptrdiff_t sst, std::size_t elem,
                    std::size_t n, int pe, gshmem_stream_t s, const char* call) {
  strided_on_stream(false, dest, src, dst, sst, elem, n, pe, s, call);
}

void g_on_stream(void* out, const void* src, std::size_t bytes, int pe, gshmem_stream_t s, const char* call) {
  Runtime& r = rt(call);
  auto& g = gpu_ctx(r, call);
  r.check_pe(pe, call);
  r.check_symmetric(src, bytes, "source", call);
  // Into a bounce buffer on the stack: the copy runs in stream order, and the stream is then drained. (A copy to
  // pageable memory cannot be captured, so a capture is refused first, with a message.)
  gpu::refuse_capture(&g, s, call);
  unsigned char tmp[16] = {};
  gpu::copy_on_stream(&g, tmp, r.peer(src, pe), bytes, s);
  gpu::synchronize_stream(&g, s, call);
  std::memcpy(out, tmp, bytes);
}

void wait_until_on_stream(const void* ivar, Wait kind, int cmp, std::uint64_t value, gshmem_stream_t s,
                          const char* call) {
  Runtime& r = rt(call);
  auto& g = gpu_ctx(r, call);
  check_cmp(cmp, call);
  r.check_symmetric(ivar, wait_bytes(kind), "ivar", call);
  if (reinterpret_cast<std::uintptr_t>(ivar) % wait_bytes(kind))
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: ivar={} is not aligned to {} bytes. Fix: wait on a naturally aligned "
         "symmetric variable", call, ivar, wait_bytes(kind));
  gpu::wait_all_on_stream(&g, ivar, 1, nullptr, wait_type(kind), cmp, value, nullptr, s, call);
}

void wait_until_all_on_stream(const void* ivars, std::size_t n, const int* status, Wait kind, int cmp,
                              std::uint64_t value, const void* values, gshmem_stream_t s, const char* call) {
  Runtime& r = rt(call);
  auto& g = gpu_ctx(r, call);
  check_cmp(cmp, call);
  if (!n) return;
  const std::size_t eb = wait_bytes(kind);
  if (n > SIZE_MAX / eb)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: nelems={} elements of {} bytes overflow the address space. Fix: pass "
         "the number of elements of the ivars array", call, n, eb);
  r.check_symmetric(ivars, n * eb, "ivars", call);
  if (reinterpret_cast<std::uintptr_t>(ivars) % eb)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: ivars={} is not aligned to {} bytes. Fix: pass a naturally aligned "
         "symmetric array", call, ivars, eb);
  auto accessible = [&](const void* p, const char* what) {
    if (p && !gpu::device_accessible(&g, p))
      fail(GSHMEM_ERROR_INVALID_VALUE, "{}: {}={} is ordinary host memory, which the GPU cannot read when the wait "
           "runs on the stream. Fix: pass device memory (cudaMalloc, or symmetric), managed memory, or pinned host "
           "memory (cudaMallocHost / cudaHostRegister)", call, what, p);
  };
  accessible(status, "status");
  if (values) accessible(values, "cmp_values");
  gpu::wait_all_on_stream(&g, ivars, n, status, wait_type(kind), cmp, value, values, s, call);
}

}  // namespace gshmem::host
