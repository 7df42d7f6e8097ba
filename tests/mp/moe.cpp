// mp_moe: MoE dispatch / combine (gshmem::MoeAllToAll, docs/moe.md) on CPU PEs, for every dp_size that divides the
// PE count. Every PE derives every data-parallel group's tokens, routing, scales and weights from the shared seed,
// so it computes what it must receive (dispatch: counts, rows and scales in the documented order, rows past the
// count untouched) and what combine must give (the same fmaf chain in k order: exact, bitwise). Outputs are
// poisoned before each call; several calls follow each other with no barrier between (staging halves and signal
// values carry the call number). Scenarios: random routings, num_experts not a multiple of the PE count, all tokens
// to one expert, empty experts and groups with no tokens, 1 token, max tokens, bound_m < max_num_tokens,
// experts_per_token 1..8, no scales, float / half / bfloat16 expert outputs and combined tokens in every pairing.
//
// `group_scope` instantiates the algorithm here over 8 (or 16) threads per PE in parts of 2 (the device scopes' shape).
//
// `moe_bad CASE` (argv) makes one bad call instead; tests/mp/CMakeLists.txt expects the job to end with a message
// naming the call and the cause.
//
// Built a second time as mp_moe_gpu (MPT_MOE_GPU, CUDA runtime linked; label gpu): the same scenarios, rounds and
// checks on GPU PEs through GPU buffers, every form of the host entry (blocking, stream with and without a device
// bound_m), plus `pipelined` (every call of a scenario enqueued back to back) and `graph_replay` (one captured
// dispatch + combine replayed); `group_scope` is CPU-only. The bad cases there check the device's messages.
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#if defined(MPT_MOE_GPU)
#include <cuda_runtime.h>

#include "moe_device_entry.hpp"
#endif

#include "gshmem/gshmem.hpp"
#include "gshmem/moe/dispatch_combine.h"
#include "harness.hpp"

// The test's 16-bit storage types, with the test's own conversions as their coll::Float16 arithmetic (for the
// group-scope runs below, which instantiate the algorithm here).
struct TestHalf {
  std::uint16_t bits;
};
struct TestBf16 {
  std::uint16_t bits;
};
namespace {
std::uint16_t bf16_of(float f);
float float_of_bf16(std::uint16_t b);
}  // namespace
template <>
struct gshmem::coll::Float16<TestHalf> {
  static constexpr bool value = true;
  static float to_float(TestHalf v) {
    _Float16 h;
    std::memcpy(&h, &v.bits, 2);
    return static_cast<float>(h);
  }
  static TestHalf from_float(float f) {
    const _Float16 h = static_cast<_Float16>(f);
    TestHalf v;
    std::memcpy(&v.bits, &h, 2);
    return v;
  }
};
template <>
struct gshmem::coll::Float16<TestBf16> {
  static constexpr bool value = true;
  static float to_float(TestBf16 v) { return float_of_bf16(v.bits); }
  static TestBf16 from_float(float f) { return TestBf16{bf16_of(f)}; }
};

namespace {

using gshmem::host::ReduceType;

// The test's own 16-bit conversions (an independent reference): half through _Float16, bfloat16 rounded to nearest
// even by hand (the test's values are finite).
std::uint16_t bf16_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  const std::uint32_t lsb = (u >> 16) & 1;
  return static_cast<std::uint16_t>((u + 0x7fff + lsb) >> 16);
}
float float_of_bf16(std::uint16_t b) {
  const std::uint32_t u = std::uint32_t{b} << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
std::size_t type_bytes(ReduceType t) { return t == ReduceType::Float ? 4 : 2; }
const char* type_name(ReduceType t) {
  return t == ReduceType::Float ? "float" : t == ReduceType::Half ? "half" : "bfloat16";
}
// Stores f as type t at p (rounded to nearest even), and reads it back.
void store_as(ReduceType t, float f, void* p) {
  if (t == ReduceType::Float) {
    std::memcpy(p, &f, 4);
  } else if (t == ReduceType::Half) {
    const _Float16 h = static_cast<_Float16>(f);
    std::memcpy(p, &h, 2);
  } else {
    const std::uint16_t b = bf16_of(f);
    std::memcpy(p, &b, 2);
  }
}
float load_as(ReduceType t, const void* p) {
  if (t == ReduceType::Float) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  std::uint16_t b;
  std::memcpy(&b, p, 2);
  if (t == ReduceType::Bfloat16) return float_of_bf16(b);
  _Float16 h;
  std::memcpy(&h, &b, 2);
  return static_cast<float>(h);
}

enum class Routing { Random, Hot, Few };

struct Scenario {
  const char* name;
  std::uint64_t max_tokens, experts, topk, hidden, x_bytes, scale_bytes;
  Routing routing;
  int tokens_mode;  // 0: random 0..T, 1: exactly T, 2: random 1..T-1 (bound_m < T), 3: exactly 1
  int rounds;
};

constexpr std::uint8_t kPoison = 0xEE;
const ReduceType kTypes[3] = {ReduceType::Float, ReduceType::Half, ReduceType::Bfloat16};

// Everything about one group's tokens in one call: a pure function of (seed, scenario tag, call, group).
struct GroupTokens {
  std::uint64_t m = 0;
  std::vector<std::uint32_t> indices;  // [m][K]
  std::vector<std::uint8_t> x, scale;  // [m][x_bytes], [m][scale_bytes]
  std::vector<float> weights;          // [m][K]
};

GroupTokens tokens_of(const Scenario& s, std::uint64_t tag, int call, int g) {
  GroupTokens t;
  const std::uint64_t T = s.max_tokens, K = s.topk, E = s.experts;
  const std::uint64_t r = mpt::rnd(tag, 1, static_cast<std::uint64_t>(call), static_cast<std::uint64_t>(g));
  switch (s.tokens_mode) {
    case 1: t.m = T; break;
    case 2: t.m = T > 1 ? 1 + r % (T - 1) : 1; break;
    case 3: t.m = 1; break;
    default: t.m = r % (T + 1);
  }
  t.indices.resize(t.m * K);
  const std::uint64_t hot = mpt::rnd(tag, 2, static_cast<std::uint64_t>(call)) % E;
  const std::uint64_t few = E < 3 ? E : 3;  // Few: only experts {0, E/2, E-1}-ish used: the rest stay empty
  for (std::uint64_t i = 0; i < t.m; ++i) {
    std::vector<std::uint32_t> pool;
    for (std::uint64_t e = 0; e < E; ++e) pool.push_back(static_cast<std::uint32_t>(e));
    if (s.routing == Routing::Few && K <= few) {
      pool = {0, static_cast<std::uint32_t>(E / 2), static_cast<std::uint32_t>(E - 1)};
      pool.resize(few);
    }
    for (std::uint64_t k = 0; k < K; ++k) {  // partial Fisher-Yates: distinct experts
      const std::uint64_t n = pool.size() - k;
      const std::uint64_t cg = static_cast<std::uint64_t>(call) << 8 | static_cast<std::uint64_t>(g);
      const std::uint64_t pick = k + mpt::rnd(tag ^ 3, cg, i, k) % n;
      std::swap(pool[k], pool[pick]);
    }
    if (s.routing == Routing::Hot) {  // the hot expert first, the others distinct from it
      for (std::uint64_t k = 0; k < pool.size(); ++k)
        if (pool[k] == hot) std::swap(pool[k], pool[0]);
      if (pool[0] != hot) pool[0] = static_cast<std::uint32_t>(hot);
    }
    for (std::uint64_t k = 0; k < K; ++k) t.indices[i * K + k] = pool[k];
  }
  t.x.resize(t.m * s.x_bytes);
  for (std::size_t b = 0; b < t.x.size(); ++b)
    t.x[b] = static_cast<std::uint8_t>(mpt::rnd(tag, 4, static_cast<std::uint64_t>(call) << 8 |
                                                static_cast<std::uint64_t>(g), b));
  t.scale.resize(t.m * s.scale_bytes);
  for (std::size_t b = 0; b < t.scale.size(); ++b)
    t.scale[b] = static_cast<std::uint8_t>(mpt::rnd(tag, 5, static_cast<std::uint64_t>(call) << 8 |
                                                    static_cast<std::uint64_t>(g), b));
  t.weights.resize(t.m * K);
  for (std::size_t w = 0; w < t.weights.size(); ++w)  // any float in [0, 1): the reference does the same fmaf chain
    t.weights[w] = static_cast<float>(mpt::rnd(tag, 6, static_cast<std::uint64_t>(call) << 8 |
                                               static_cast<std::uint64_t>(g), w) >> 40) / 16777216.0f;
  return t;
}

// The expert output the test's "expert" e computes for token i of group g, element j: small multiples of 1/8, exact
// in every type.
float y_value(std::uint64_t tag, int call, std::uint64_t e, int g, std::uint64_t i, std::uint64_t j) {
  const std::uint64_t ceg = static_cast<std::uint64_t>(call) << 32 | e << 8 | static_cast<std::uint64_t>(g);
  const std::uint64_t r = mpt::rnd(tag, 7, ceg, i << 20 | j);
  return static_cast<float>(static_cast<int>(r % 255) - 127) / 8.0f;
}

// How a scenario reaches dispatch / combine: the library (gshmem::MoeAllToAll, this thread) or the algorithm
// instantiated here over a group of threads (GroupScope below).
class Backend {
 public:
  virtual ~Backend() = default;
  virtual void dispatch(std::int32_t* counts, void* ex, void* es, const void* x, const void* xs,
                        const std::uint32_t* idx, std::size_t m) = 0;
  virtual void combine(void* out, ReduceType to, const std::uint32_t* idx, const float* w, const void* y,
                       ReduceType ty, std::size_t m) = 0;
};

class LibraryBackend : public Backend {
 public:
  explicit LibraryBackend(const gshmem::host::MoeConfig& cfg) : ata_(cfg) {}
  void dispatch(std::int32_t* counts, void* ex, void* es, const void* x, const void* xs, const std::uint32_t* idx,
                std::size_t m) override {
    ata_.dispatch(counts, ex, es, x, xs, idx, m);
  }
  void combine(void* out, ReduceType to, const std::uint32_t* idx, const float* w, const void* y, ReduceType ty,
               std::size_t m) override {
    ata_.combine(out, to, idx, w, y, ty, m);
  }

 private:
  gshmem::MoeAllToAll ata_;
};

// The C API (gshmem.h, gshmemx_moe_*): every status checked, the message printed where one fails.
class CBackend : public Backend {
 public:
  explicit CBackend(const gshmem::host::MoeConfig& c) {
    gshmemx_moe_config_t cfg;
    std::memcpy(&cfg, &c, sizeof cfg);
    ok(gshmemx_moe_create(&cfg, &moe_), "gshmemx_moe_create");
  }
  ~CBackend() override { ok(gshmemx_moe_destroy(moe_), "gshmemx_moe_destroy"); }
  void dispatch(std::int32_t* counts, void* ex, void* es, const void* x, const void* xs, const std::uint32_t* idx,
                std::size_t m) override {
    ok(gshmemx_moe_dispatch(moe_, counts, ex, es, x, xs, idx, m), "gshmemx_moe_dispatch");
  }
  void combine(void* out, ReduceType to, const std::uint32_t* idx, const float* w, const void* y, ReduceType ty,
               std::size_t m) override {
    ok(gshmemx_moe_combine(moe_, out, static_cast<int>(to), idx, w, y, static_cast<int>(ty), m),
       "gshmemx_moe_combine");
  }
  static void ok(int status, const char* what) {
    if (status != GSHMEM_SUCCESS) std::fprintf(stderr, "[PE %d] %s: %s\n", mpt::me(), what, gshmemx_last_error());
    mpt::require(status == GSHMEM_SUCCESS, what);
  }

 private:
  gshmemx_moe_t moe_ = nullptr;
};

// A cooperation scope of group_threads threads of this PE in parts of kPart threads, the shape of the device's block
// of warps: the algorithm's group-parallel paths (threads splitting experts and the index scan; parts sending rows
// or pieces of rows and taking rows and tokens in turn; threads of a part splitting a row; syncs of the group and of
// a part; one thread polling) run with real concurrency on CPU PEs, where the GPU form cannot run here.
// group_threads: 8 (4 parts), 16 (8 parts) for the scenarios that split rows among more parts; set between
// scenarios only.
int group_threads = 8;
constexpr int kPart = 2;
// Plan::recv_share of the group scenarios: dispatch's receiving parts while the others send, once every part has
// rows to send (the default), or 0 (send, then receive), or most parts receiving; set between scenarios only.
std::uint64_t recv_share = gshmem::moe::kRecvShare;
class GroupBarrier {
 public:
  explicit GroupBarrier(int n) : n_(n) {}
  void wait() {
    std::unique_lock<std::mutex> lock(m_);
    const unsigned long gen = gen_;
    if (++waiting_ == n_) {
      waiting_ = 0;
      ++gen_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return gen_ != gen; });
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  const int n_;
  int waiting_ = 0;
  unsigned long gen_ = 0;
};
struct GroupScope {
  static thread_local int my_rank;
  static GroupBarrier* barrier;
  static std::vector<std::unique_ptr<GroupBarrier>>* part_barriers;  // [group_threads / kPart]
  static int rank() { return my_rank; }
  static int size() { return group_threads; }
  static void sync() { barrier->wait(); }
};
thread_local int GroupScope::my_rank = 0;
GroupBarrier* GroupScope::barrier = nullptr;
std::vector<std::unique_ptr<GroupBarrier>>* GroupScope::part_barriers = nullptr;
// The part this thread is in (the device's warp).
struct PartScope {
  static int rank() { return GroupScope::my_rank % kPart; }
  static int size() { return kPart; }
  static void sync() { (*GroupScope::part_barriers)[static_cast<std::size_t>(GroupScope::my_rank / kPart)]->wait(); }
};
}  // namespace
template <>
struct gshmem::moe::Parts<GroupScope> {
  using Part = PartScope;
  static int index() { return GroupScope::my_rank / kPart; }
  static int count() { return group_threads / kPart; }
};
namespace {

// The environment over the public API only: gshmem_ptr for peers, C++ atomics, a bounded poll, and a copy split
// among the group's threads as the device's cooperative copy is.
// skew_copies: odd PEs sleep up to 200 us in some copies, before or after the copy (a slow piece, whose row's flag
// must wait for it; a slow reader, which a fast PE must not overtake).
std::atomic<bool> skew_copies{false};
std::atomic<std::uint64_t> copies{0};
struct TestEnv {
  void release_fence() const { std::atomic_thread_fence(std::memory_order_seq_cst); }
  void store_relaxed(std::uint64_t* p, std::uint64_t v) const { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
  void wait_flag(const std::uint64_t* f, std::uint64_t v, const char* call) const {
    const double t0 = mpt::now_s();
    while (__atomic_load_n(f, __ATOMIC_ACQUIRE) < v) {
      sched_yield();
      if (mpt::now_s() - t0 > 60) {
        std::fprintf(stderr, "[PE %d] FATAL: %s waited 60 s for a flag to reach %llu\n", mpt::me(), call,
                     static_cast<unsigned long long>(v));
        gshmem_global_exit(1);
      }
    }
  }
  template <typename T>
  T* peer(T* p, int pe) const {
    return static_cast<T*>(gshmem_ptr(p, pe));
  }
  template <typename Scope>
  void copy(void* d, const void* s, std::size_t n) const {
    const std::size_t size = static_cast<std::size_t>(Scope::size());
    const std::size_t per = (n + size - 1) / size;
    const std::size_t lo = per * static_cast<std::size_t>(Scope::rank());
    const std::uint64_t r =
        skew_copies && mpt::me() % 2 == 1 ? mpt::rnd(31, copies.fetch_add(1), static_cast<std::uint64_t>(mpt::me())) : 1;
    if (r % 4 == 0) usleep(static_cast<useconds_t>(r >> 8) % 200);  // a slow piece (a flag must wait for it)
    if (lo < n) std::memcpy(static_cast<char*>(d) + lo, static_cast<const char*>(s) + lo, std::min(per, n - lo));
    if (r % 4 == 2) usleep(static_cast<useconds_t>(r >> 8) % 200);  // a slow reader (or a part's next copy)
  }
};

class GroupBackend : public Backend {
 public:
  explicit GroupBackend(const gshmem::host::MoeConfig& c)
      : plan_(gshmem::moe::make_plan(c.max_num_tokens, c.num_experts, c.experts_per_token, c.hidden_dim,
                                     c.hidden_dim_bytes, c.hidden_dim_scale_bytes, c.dp_size, mpt::me(),
                                     mpt::npes())) {
    plan_.scan_chunk_entries = 1;  // the index scan splits into chunks from 2 entries (both of its ways run)
    plan_.piece_bytes = 16;        // rows and tokens split into pieces whenever there are fewer than parts
    plan_.send_piece_bytes = 16;   // likewise the rows sent (dispatch) and the expert rows sent back (combine)
    plan_.recv_share = recv_share;
    ws_ = static_cast<char*>(gshmem_calloc(1, plan_.bytes));
    mpt::require(ws_ != nullptr, "gshmem_calloc of the MoE workspace");
    gshmem_barrier_all();  // every PE zeroed its workspace before any PE writes into it
  }
  ~GroupBackend() override {
    gshmem_barrier_all();
    gshmem_free(ws_);
  }
  void dispatch(std::int32_t* counts, void* ex, void* es, const void* x, const void* xs, const std::uint32_t* idx,
                std::size_t m) override {
    ++calls_;
    run([&] {
      TestEnv env;
      gshmem::moe::dispatch<GroupScope>(env, plan_, ws_, calls_, counts, static_cast<char*>(ex),
                                        static_cast<char*>(es), static_cast<const char*>(x),
                                        static_cast<const char*>(xs), idx, m, "the test's group dispatch");
    });
  }
  void combine(void* out, ReduceType to, const std::uint32_t* idx, const float* w, const void* y, ReduceType ty,
               std::size_t m) override {
    if (ty == ReduceType::Float) combine_y<float>(out, to, idx, w, y, m);
    else if (ty == ReduceType::Half) combine_y<TestHalf>(out, to, idx, w, y, m);
    else combine_y<TestBf16>(out, to, idx, w, y, m);
  }

 private:
  template <typename TY>
  void combine_y(void* out, ReduceType to, const std::uint32_t* idx, const float* w, const void* y, std::size_t m) {
    if (to == ReduceType::Float) combine_as<TY, float>(out, idx, w, y, m);
    else if (to == ReduceType::Half) combine_as<TY, TestHalf>(out, idx, w, y, m);
    else combine_as<TY, TestBf16>(out, idx, w, y, m);
  }
  template <typename TY, typename TO>
  void combine_as(void* out, const std::uint32_t* idx, const float* w, const void* y, std::size_t m) {
    run([&] {
      TestEnv env;
      gshmem::moe::combine<GroupScope, TY, TO>(env, plan_, ws_, calls_, static_cast<TO*>(out), idx, w,
                                               static_cast<const TY*>(y), m, "the test's group combine");
    });
  }
  // Runs fn on group_threads threads, GroupScope::rank() 0..group_threads-1, in parts of kPart.
  template <typename Fn>
  void run(Fn fn) {
    GroupBarrier barrier(group_threads);
    std::vector<std::unique_ptr<GroupBarrier>> parts;
    for (int q = 0; q < group_threads / kPart; ++q) parts.push_back(std::make_unique<GroupBarrier>(kPart));
    GroupScope::barrier = &barrier;
    GroupScope::part_barriers = &parts;
    std::vector<std::thread> threads;
    for (int r = 0; r < group_threads; ++r)
      threads.emplace_back([&fn, r] {
        GroupScope::my_rank = r;
        fn();
      });
    for (auto& t : threads) t.join();
  }

  gshmem::moe::Plan plan_;
  char* ws_ = nullptr;
  std::uint64_t calls_ = 0;
};

// One call of a scenario, prepared in full before it is made: this PE's group's tokens, what dispatch must deliver
// here, the experts' outputs for it, and what combine must give. A pure function of (scenario, dp, tag, call), so
// rounds can be prepared ahead and their calls enqueued back to back (the GPU cases).
struct Round {
  std::string at;
  GroupTokens mine;
  std::vector<std::int32_t> want_counts;
  std::vector<std::uint8_t> want_x, want_s;  // [L * G * T] rows, poisoned past the counts
  ReduceType ty, to;                          // expert outputs, combined tokens
  std::vector<std::uint8_t> y;                // [L * G * T][H] of ty; rows past the counts: NaN patterns
  std::vector<std::uint8_t> want_out;         // [T + 1][H] of to, poisoned past m
};

// Forced types (both ReduceType::Int8: the call's own, from tag and call) for a graph, whose kernels are fixed.
Round make_round(const Scenario& s, int dp, std::uint64_t tag, int call, const std::string& where,
                 ReduceType force_ty = ReduceType::Int8, ReduceType force_to = ReduceType::Int8) {
  const int W = mpt::npes(), me = mpt::me(), G = W / dp, my_group = me / dp;
  const std::uint64_t T = s.max_tokens, K = s.topk, E = s.experts, H = s.hidden;
  const std::uint64_t L = (E + static_cast<std::uint64_t>(W) - 1) / static_cast<std::uint64_t>(W);
  const std::uint64_t rows = L * static_cast<std::uint64_t>(G) * T;
  Round r;
  r.at = where + " call " + std::to_string(call);
  std::vector<GroupTokens> all;
  for (int g = 0; g < G; ++g) all.push_back(tokens_of(s, tag, call, g));
  r.mine = all[static_cast<std::size_t>(my_group)];
  // Expert e = me * L + l receives group 0's tokens in order, then group 1's, ...
  std::vector<std::vector<std::pair<int, std::uint64_t>>> from(L);
  r.want_x.assign(rows * s.x_bytes, kPoison);
  r.want_s.assign(rows * s.scale_bytes, kPoison);
  r.want_counts.assign(L, 0);
  for (std::uint64_t l = 0; l < L; ++l) {
    const std::uint64_t e = static_cast<std::uint64_t>(me) * L + l;
    if (e >= E) continue;
    for (int g = 0; g < G; ++g) {
      const GroupTokens& t = all[static_cast<std::size_t>(g)];
      for (std::uint64_t i = 0; i < t.m; ++i)
        for (std::uint64_t k = 0; k < K; ++k) {
          if (t.indices[i * K + k] != e) continue;
          const std::uint64_t pos = l * G * T + from[l].size();
          std::memcpy(&r.want_x[pos * s.x_bytes], &t.x[i * s.x_bytes], s.x_bytes);
          if (s.scale_bytes)
            std::memcpy(&r.want_s[pos * s.scale_bytes], &t.scale[i * s.scale_bytes], s.scale_bytes);
          from[l].push_back({g, i});
        }
    }
    r.want_counts[l] = static_cast<std::int32_t>(from[l].size());
  }
  // The experts: y = f(expert, source token) in this call's output type of the experts.
  r.ty = force_ty != ReduceType::Int8 ? force_ty : kTypes[(call + static_cast<int>(tag % 3)) % 3];
  r.to = force_to != ReduceType::Int8 ? force_to : kTypes[(call / 3 + static_cast<int>(tag % 5)) % 3];
  const std::size_t yb = type_bytes(r.ty), ob = type_bytes(r.to);
  r.y.assign(rows * H * yb, 0xFF);  // rows past the counts: NaN patterns, never to be read
  for (std::uint64_t l = 0; l < L; ++l)
    for (std::size_t q = 0; q < from[l].size(); ++q)
      for (std::uint64_t j = 0; j < H; ++j)
        store_as(r.ty, y_value(tag, call, static_cast<std::uint64_t>(me) * L + l, from[l][q].first,
                               from[l][q].second, j),
                 &r.y[((l * G * T + q) * H + j) * yb]);
  // Combine: the same fmaf chain in k order.
  r.want_out.assign((T + 1) * H * ob, kPoison);
  for (std::uint64_t i = 0; i < r.mine.m; ++i)
    for (std::uint64_t j = 0; j < H; ++j) {
      float acc = 0.0f;
      for (std::uint64_t k = 0; k < K; ++k) {
        std::uint8_t v[4];
        store_as(r.ty, y_value(tag, call, r.mine.indices[i * K + k], my_group, i, j), v);
        acc = std::fmaf(r.mine.weights[i * K + k], load_as(r.ty, v), acc);
      }
      store_as(r.to, acc, &r.want_out[(i * H + j) * ob]);
    }
  return r;
}

void check_dispatch(const Round& r, const std::int32_t* counts, const std::uint8_t* ex, const std::uint8_t* es) {
  MPT_CHECK_ARRAY(r.at + ": out_expert_num_tokens", counts, r.want_counts.data(), r.want_counts.size());
  MPT_CHECK_MEM(r.at + ": out_expert_x (rows past the counts must stay poisoned)", ex, r.want_x.data(),
                r.want_x.size());
  if (!r.want_s.empty()) MPT_CHECK_MEM(r.at + ": out_expert_x_scale", es, r.want_s.data(), r.want_s.size());
}

void check_combine(const Round& r, const std::uint8_t* out) {
  MPT_CHECK_MEM(r.at + ": combine out_tokens (" + type_name(r.ty) + " -> " + type_name(r.to) +
                    ", rows past m poisoned)", out, r.want_out.data(), r.want_out.size());
}

// Which form a scenario goes through: the C++ class, the C API (gshmemx_moe_*), or the test's group scope.
enum class Via { Cxx, C, Group };
std::unique_ptr<Backend> make_backend(const gshmem::host::MoeConfig& cfg, Via via);

void run_scenario(const Scenario& s, int dp, std::uint64_t tag, Via via) {
  const int me = mpt::me();
  const std::string where = std::string(s.name) + " dp_size=" + std::to_string(dp) +
                            (via == Via::Group ? " (group scope)" : via == Via::C ? " (C API)" : "");
  gshmem::host::MoeConfig cfg{s.max_tokens, s.experts, s.topk, s.hidden, s.x_bytes, s.scale_bytes, dp, 0};
  std::unique_ptr<Backend> ata = make_backend(cfg, via);
  for (int call = 1; call <= s.rounds; ++call) {
    const Round r = make_round(s, dp, tag, call, where);
    // Long runs: some PEs fall behind by up to 2 ms now and then, so fast PEs reach the next calls' staging halves
    // while slow ones still read the last call's (the done flags must hold them back).
    if (s.rounds >= 10 && mpt::rnd(tag, 8, static_cast<std::uint64_t>(call), static_cast<std::uint64_t>(me)) % 3 == 0)
      usleep(static_cast<useconds_t>(mpt::rnd(tag, 9, static_cast<std::uint64_t>(call)) % 2000));
    std::vector<std::int32_t> counts(r.want_counts.size(), -7);
    std::vector<std::uint8_t> ex(r.want_x.size(), kPoison), es(r.want_s.size(), kPoison);
    ata->dispatch(counts.data(), ex.data(), s.scale_bytes ? es.data() : nullptr, r.mine.x.data(),
                  s.scale_bytes ? r.mine.scale.data() : nullptr, r.mine.indices.data(), r.mine.m);
    check_dispatch(r, counts.data(), ex.data(), es.data());
    std::vector<std::uint8_t> out(r.want_out.size(), kPoison);
    ata->combine(out.data(), r.to, r.mine.indices.data(), r.mine.weights.data(), r.y.data(), r.ty, r.mine.m);
    check_combine(r, out.data());
  }
}

std::vector<int> dp_sizes() {
  std::vector<int> v;
  for (int d = 1; d <= mpt::npes(); ++d)
    if (mpt::npes() % d == 0) v.push_back(d);
  return v;
}

void run_all(const Scenario& s, std::uint64_t tag, Via via = Via::Cxx) {
  for (int dp : dp_sizes()) run_scenario(s, dp, tag + static_cast<std::uint64_t>(dp) * 1000, via);
}

std::uint64_t n_pes() { return static_cast<std::uint64_t>(mpt::npes()); }

#if defined(MPT_MOE_GPU)
// ---- GPU PEs (mp_moe_gpu: this file built with MPT_MOE_GPU, CUDA runtime linked) ----
// The same scenarios, rounds and checks on GPU buffers: inputs copied to device memory, outputs (poisoned first)
// copied back and compared exactly. No kernels of the test's own: the library's kernels do everything.
#define MOE_CK(expr) mpt::require((expr) == cudaSuccess, #expr)

// A device buffer of n bytes (at least 16, so an empty one still has an address), freed on destruction.
class DevBuf {
 public:
  explicit DevBuf(std::size_t n) { MOE_CK(cudaMalloc(&p_, n < 16 ? 16 : n)); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  ~DevBuf() { cudaFree(p_); }
  template <typename T = std::uint8_t>
  T* get() const {
    return static_cast<T*>(p_);
  }

 private:
  void* p_ = nullptr;
};

// Every form of the host entry in turn: call c's dispatch and combine each pick one of four (blocking; stream with
// bound_m in device memory and all T rows passed; stream with m rows and no bound_m; stream with bound_m == rows),
// dispatch and combine with different ones, so the call state they share (device memory) is exercised across forms.
// Through the C++ class, or (c_api) the C API's gshmemx_moe_* with every status checked.
class GpuBackend : public Backend {
 public:
  GpuBackend(const gshmem::host::MoeConfig& c, bool c_api)
      : cfg_(c),
        L_((c.num_experts + static_cast<std::uint64_t>(mpt::npes()) - 1) / static_cast<std::uint64_t>(mpt::npes())),
        rows_(L_ * static_cast<std::uint64_t>(mpt::npes() / c.dp_size) * c.max_num_tokens),
        counts_(L_ * 4),
        ex_(rows_ * c.hidden_dim_bytes),
        es_(rows_ * c.hidden_dim_scale_bytes),
        x_(c.max_num_tokens * c.hidden_dim_bytes),
        xs_(c.max_num_tokens * c.hidden_dim_scale_bytes),
        idx_(c.max_num_tokens * c.experts_per_token * 4),
        w_(c.max_num_tokens * c.experts_per_token * 4),
        y_(rows_ * c.hidden_dim * 4),
        out_((c.max_num_tokens + 1) * c.hidden_dim * 4),
        bound_(4) {
    MOE_CK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    if (c_api) {
      gshmemx_moe_config_t cc;
      std::memcpy(&cc, &c, sizeof cc);
      CBackend::ok(gshmemx_moe_create(&cc, &moe_), "gshmemx_moe_create");
    } else {
      ata_ = std::make_unique<gshmem::MoeAllToAll>(c);
    }
  }
  ~GpuBackend() override {
    if (moe_) CBackend::ok(gshmemx_moe_destroy(moe_), "gshmemx_moe_destroy");
    cudaStreamDestroy(stream_);
  }

  void dispatch(std::int32_t* counts, void* ex, void* es, const void* x, const void* xs, const std::uint32_t* idx,
                std::size_t m) override {
    const std::uint64_t T = cfg_.max_num_tokens, K = cfg_.experts_per_token;
    const bool scales = cfg_.hidden_dim_scale_bytes != 0;
    ++calls_;
    up(counts_.get(), counts, L_ * 4);
    up(ex_.get(), ex, rows_ * cfg_.hidden_dim_bytes);
    if (scales) up(es_.get(), es, rows_ * cfg_.hidden_dim_scale_bytes);
    up(x_.get(), x, m * cfg_.hidden_dim_bytes);
    if (scales) up(xs_.get(), xs, m * cfg_.hidden_dim_scale_bytes);
    up(idx_.get(), idx, m * K * 4);
    const std::uint32_t m32 = static_cast<std::uint32_t>(m);
    up(bound_.get(), &m32, 4);
    const int form = static_cast<int>(calls_ % 4);
    std::int32_t* dc = counts_.get<std::int32_t>();
    void* des = scales ? es_.get() : nullptr;
    const void* dxs = scales ? xs_.get() : nullptr;
    const std::uint32_t* di = idx_.get<std::uint32_t>();
    const std::size_t rows = form == 1 ? T : m;
    const std::uint32_t* bound = form == 2 ? nullptr : bound_.get<std::uint32_t>();
    if (form == 0) MOE_CK(cudaStreamSynchronize(stream_));  // the blocking form runs on the library's own stream
    if (moe_ && form == 0)
      CBackend::ok(gshmemx_moe_dispatch(moe_, dc, ex_.get(), des, x_.get(), dxs, di, m), "gshmemx_moe_dispatch");
    else if (moe_)
      CBackend::ok(gshmemx_moe_dispatch_on_stream(moe_, dc, ex_.get(), des, x_.get(), dxs, di, rows, bound, stream_),
                   "gshmemx_moe_dispatch_on_stream");
    else if (form == 0)
      ata_->dispatch(dc, ex_.get(), des, x_.get(), dxs, di, m);
    else
      ata_->dispatch_on_stream(dc, ex_.get(), des, x_.get(), dxs, di, rows, bound, stream_);
    down(counts, counts_.get(), L_ * 4);
    down(ex, ex_.get(), rows_ * cfg_.hidden_dim_bytes);
    if (scales) down(es, es_.get(), rows_ * cfg_.hidden_dim_scale_bytes);
    MOE_CK(cudaStreamSynchronize(stream_));
  }
  void combine(void* out, ReduceType to, const std::uint32_t* idx, const float* w, const void* y, ReduceType ty,
               std::size_t m) override {
    const std::uint64_t T = cfg_.max_num_tokens, K = cfg_.experts_per_token, H = cfg_.hidden_dim;
    const std::size_t out_bytes = (T + 1) * H * type_bytes(to);
    up(out_.get(), out, out_bytes);
    up(idx_.get(), idx, m * K * 4);
    up(w_.get(), w, m * K * 4);
    up(y_.get(), y, rows_ * H * type_bytes(ty));
    const int form = static_cast<int>((calls_ + 1) % 4);
    const std::size_t rows = form == 1 ? T : m;
    const std::uint32_t* bound = form == 2 ? nullptr : bound_.get<std::uint32_t>();
    const std::uint32_t* di = idx_.get<std::uint32_t>();
    if (form == 0) MOE_CK(cudaStreamSynchronize(stream_));
    if (moe_ && form == 0)
      CBackend::ok(gshmemx_moe_combine(moe_, out_.get(), static_cast<int>(to), di, w_.get<float>(), y_.get(),
                                       static_cast<int>(ty), m), "gshmemx_moe_combine");
    else if (moe_)
      CBackend::ok(gshmemx_moe_combine_on_stream(moe_, out_.get(), static_cast<int>(to), di, w_.get<float>(),
                                                 y_.get(), static_cast<int>(ty), rows, bound, stream_),
                   "gshmemx_moe_combine_on_stream");
    else if (form == 0)
      ata_->combine(out_.get(), to, di, w_.get<float>(), y_.get(), ty, m);
    else
      ata_->combine_on_stream(out_.get(), to, di, w_.get<float>(), y_.get(), ty, rows, bound, stream_);
    down(out, out_.get(), out_bytes);
    MOE_CK(cudaStreamSynchronize(stream_));
  }

 private:
  void up(void* d, const void* h, std::size_t n) {
    if (n) MOE_CK(cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, stream_));
  }
  void down(void* h, const void* d, std::size_t n) {
    if (n) MOE_CK(cudaMemcpyAsync(h, d, n, cudaMemcpyDeviceToHost, stream_));
  }

  std::unique_ptr<gshmem::MoeAllToAll> ata_;  // the C++ class, or
  gshmemx_moe_t moe_ = nullptr;               // the C API's handle
  gshmem::host::MoeConfig cfg_;
  std::uint64_t L_, rows_;
  DevBuf counts_, ex_, es_, x_, xs_, idx_, w_, y_, out_, bound_;
  cudaStream_t stream_ = nullptr;
  std::uint64_t calls_ = 0;
};

// One round's buffers in device memory: inputs uploaded and outputs poisoned on `st`, before any call is enqueued.
struct DevRound {
  std::size_t n_counts, n_ex, n_es, n_out;
  DevBuf counts, ex, es, x, xs, idx, w, y, out, bound;
  DevRound(const Round& r, cudaStream_t st)
      : n_counts(r.want_counts.size() * 4),
        n_ex(r.want_x.size()),
        n_es(r.want_s.size()),
        n_out(r.want_out.size()),
        counts(n_counts),
        ex(n_ex),
        es(n_es),
        x(r.mine.x.size()),
        xs(r.mine.scale.size()),
        idx(r.mine.indices.size() * 4),
        w(r.mine.weights.size() * 4),
        y(r.y.size()),
        out(n_out),
        bound(4) {
    auto up = [&](const DevBuf& d, const void* h, std::size_t n) {
      if (n) MOE_CK(cudaMemcpyAsync(d.get(), h, n, cudaMemcpyHostToDevice, st));
    };
    up(x, r.mine.x.data(), r.mine.x.size());
    up(xs, r.mine.scale.data(), r.mine.scale.size());
    up(idx, r.mine.indices.data(), r.mine.indices.size() * 4);
    up(w, r.mine.weights.data(), r.mine.weights.size() * 4);
    up(y, r.y.data(), r.y.size());
    const std::uint32_t m32 = static_cast<std::uint32_t>(r.mine.m);
    up(bound, &m32, 4);
    poison(st);
  }
  void poison(cudaStream_t st) const {
    MOE_CK(cudaMemsetAsync(counts.get(), kPoison, n_counts, st));
    MOE_CK(cudaMemsetAsync(ex.get(), kPoison, n_ex, st));
    if (n_es) MOE_CK(cudaMemsetAsync(es.get(), kPoison, n_es, st));
    MOE_CK(cudaMemsetAsync(out.get(), kPoison, n_out, st));
  }
};

// Downloads a round's outputs (after the stream ran) and checks them.
void check_dev_round(const Round& r, const DevRound& d) {
  std::vector<std::int32_t> counts(r.want_counts.size());
  std::vector<std::uint8_t> ex(r.want_x.size()), es(r.want_s.size()), out(r.want_out.size());
  MOE_CK(cudaMemcpy(counts.data(), d.counts.get(), counts.size() * 4, cudaMemcpyDeviceToHost));
  MOE_CK(cudaMemcpy(ex.data(), d.ex.get(), ex.size(), cudaMemcpyDeviceToHost));
  if (!es.empty()) MOE_CK(cudaMemcpy(es.data(), d.es.get(), es.size(), cudaMemcpyDeviceToHost));
  MOE_CK(cudaMemcpy(out.data(), d.out.get(), out.size(), cudaMemcpyDeviceToHost));
  check_dispatch(r, counts.data(), ex.data(), es.data());
  // out_expert_num_tokens was poisoned with bytes, not -7: the check compares counts only, which are all written.
  check_combine(r, out.data());
}

// Every call of the scenario enqueued back to back on one stream (stream forms, bound_m in device memory, all T
// rows passed), with no host synchronisation until the last; then every round checked.
void run_pipelined(const Scenario& s, int dp, std::uint64_t tag) {
  const std::string where = std::string(s.name) + " dp_size=" + std::to_string(dp) + " (pipelined stream calls)";
  const gshmem::host::MoeConfig cfg{s.max_tokens, s.experts, s.topk, s.hidden, s.x_bytes, s.scale_bytes, dp, 0};
  gshmem::MoeAllToAll ata(cfg);
  cudaStream_t st;
  MOE_CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  std::vector<Round> rounds;
  std::vector<std::unique_ptr<DevRound>> dev;
  for (int call = 1; call <= s.rounds; ++call) {
    rounds.push_back(make_round(s, dp, tag, call, where));
    dev.push_back(std::make_unique<DevRound>(rounds.back(), st));
  }
  const bool scales = s.scale_bytes != 0;
  for (std::size_t i = 0; i < rounds.size(); ++i) {
    const Round& r = rounds[i];
    const DevRound& d = *dev[i];
    ata.dispatch_on_stream(d.counts.get<std::int32_t>(), d.ex.get(), scales ? d.es.get() : nullptr, d.x.get(),
                           scales ? d.xs.get() : nullptr, d.idx.get<std::uint32_t>(), s.max_tokens,
                           d.bound.get<std::uint32_t>(), st);
    ata.combine_on_stream(d.out.get(), r.to, d.idx.get<std::uint32_t>(), d.w.get<float>(), d.y.get(), r.ty,
                          s.max_tokens, d.bound.get<std::uint32_t>(), st);
  }
  MOE_CK(cudaStreamSynchronize(st));
  for (std::size_t i = 0; i < rounds.size(); ++i) check_dev_round(rounds[i], *dev[i]);
  MOE_CK(cudaStreamDestroy(st));
}

// One dispatch + combine captured into a CUDA graph over fixed buffers, replayed once per round with the round's
// inputs copied in before and its outputs copied out after (all on the stream, no host synchronisation between
// replays): the call number must advance in device memory at each replay, or the second replay's waits would be
// satisfied by the first's signals (wrong data) or never (half h never flips). Types fixed: a graph's kernels are.
void run_graph(const Scenario& s, int dp, std::uint64_t tag) {
  const std::string where = std::string(s.name) + " dp_size=" + std::to_string(dp) + " (graph replay)";
  const gshmem::host::MoeConfig cfg{s.max_tokens, s.experts, s.topk, s.hidden, s.x_bytes, s.scale_bytes, dp, 0};
  gshmem::MoeAllToAll ata(cfg);
  cudaStream_t st;
  MOE_CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  std::vector<Round> rounds;
  std::vector<std::unique_ptr<DevRound>> dev;
  for (int call = 1; call <= s.rounds; ++call) {
    rounds.push_back(make_round(s, dp, tag, call, where, ReduceType::Bfloat16, ReduceType::Half));
    dev.push_back(std::make_unique<DevRound>(rounds.back(), st));
  }
  const std::uint64_t T = s.max_tokens, K = s.topk;
  const Round& r0 = rounds.front();
  DevBuf x(T * s.x_bytes), xs(T * s.scale_bytes), idx(T * K * 4), w(T * K * 4), bound(4);
  DevBuf counts(r0.want_counts.size() * 4), ex(r0.want_x.size()), es(r0.want_s.size()), y(r0.y.size()),
      out(r0.want_out.size());
  const bool scales = s.scale_bytes != 0;
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  MOE_CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
  ata.dispatch_on_stream(counts.get<std::int32_t>(), ex.get(), scales ? es.get() : nullptr, x.get(),
                         scales ? xs.get() : nullptr, idx.get<std::uint32_t>(), T, bound.get<std::uint32_t>(), st);
  ata.combine_on_stream(out.get(), ReduceType::Half, idx.get<std::uint32_t>(), w.get<float>(), y.get(),
                        ReduceType::Bfloat16, T, bound.get<std::uint32_t>(), st);
  MOE_CK(cudaStreamEndCapture(st, &graph));
  MOE_CK(cudaGraphInstantiate(&exec, graph, 0));
  auto d2d = [&](void* to, const void* from, std::size_t n) {
    if (n) MOE_CK(cudaMemcpyAsync(to, from, n, cudaMemcpyDeviceToDevice, st));
  };
  for (std::size_t i = 0; i < rounds.size(); ++i) {
    const Round& r = rounds[i];
    const DevRound& d = *dev[i];
    d2d(x.get(), d.x.get(), r.mine.x.size());
    d2d(xs.get(), d.xs.get(), r.mine.scale.size());
    d2d(idx.get(), d.idx.get(), r.mine.indices.size() * 4);
    d2d(w.get(), d.w.get(), r.mine.weights.size() * 4);
    d2d(y.get(), d.y.get(), r.y.size());
    d2d(bound.get(), d.bound.get(), 4);
    d2d(counts.get(), d.counts.get(), d.n_counts);  // the poisoned outputs of the round
    d2d(ex.get(), d.ex.get(), d.n_ex);
    d2d(es.get(), d.es.get(), d.n_es);
    d2d(out.get(), d.out.get(), d.n_out);
    MOE_CK(cudaGraphLaunch(exec, st));
    d2d(d.counts.get(), counts.get(), d.n_counts);
    d2d(d.ex.get(), ex.get(), d.n_ex);
    d2d(d.es.get(), es.get(), d.n_es);
    d2d(d.out.get(), out.get(), d.n_out);
  }
  MOE_CK(cudaStreamSynchronize(st));
  for (std::size_t i = 0; i < rounds.size(); ++i) check_dev_round(rounds[i], *dev[i]);
  MOE_CK(cudaGraphExecDestroy(exec));
  MOE_CK(cudaGraphDestroy(graph));
  MOE_CK(cudaStreamDestroy(st));
}

// The device entry (gshmem/moe/device.cuh) from the test's own kernels, as a user kernel calls it: one block of
// `threads` (or one warp), a plan from moe::make_plan and a zeroed symmetric workspace of its own, the call number
// counted here; every call of the scenario enqueued back to back, then every round checked. Types fixed per
// scenario (moe_device_entry.cu instantiates three pairings).
void run_device_entry(const Scenario& s, int dp, std::uint64_t tag, bool warp, unsigned threads, ReduceType ty,
                      ReduceType to) {
  const std::string where = std::string(s.name) + " dp_size=" + std::to_string(dp) +
                            (warp ? " (device entry, warp)" : " (device entry, block of " + std::to_string(threads) +
                                                                  ")");
  MoeEntryCall a{};
  a.plan = gshmem::moe::make_plan(s.max_tokens, s.experts, s.topk, s.hidden, s.x_bytes, s.scale_bytes, dp,
                                  mpt::me(), mpt::npes());
  a.ws = gshmem_calloc(1, a.plan.bytes);  // zeroed: flags, count words and state start at 0
  mpt::require(a.ws != nullptr, "gshmem_calloc of the device entry's workspace");
  cudaStream_t st;
  MOE_CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  std::vector<Round> rounds;
  std::vector<std::unique_ptr<DevRound>> dev;
  for (int call = 1; call <= s.rounds; ++call) {
    rounds.push_back(make_round(s, dp, tag, call, where, ty, to));
    dev.push_back(std::make_unique<DevRound>(rounds.back(), st));
  }
  const bool scales = s.scale_bytes != 0;
  for (std::size_t i = 0; i < rounds.size(); ++i) {
    const DevRound& d = *dev[i];
    a.call_no = i + 1;
    a.counts = d.counts.get<std::int32_t>();
    a.ex = d.ex.get();
    a.es = scales ? d.es.get() : nullptr;
    a.x = d.x.get();
    a.xs = scales ? d.xs.get() : nullptr;
    a.idx = d.idx.get<std::uint32_t>();
    a.bound_m = d.bound.get<std::uint32_t>();
    a.out = d.out.get();
    a.w = d.w.get<float>();
    a.y = d.y.get();
    a.ty = ty;
    a.to = to;
    MOE_CK(moe_entry_dispatch(warp, threads, st, a));
    MOE_CK(moe_entry_combine(warp, threads, st, a));
  }
  MOE_CK(cudaStreamSynchronize(st));
  for (std::size_t i = 0; i < rounds.size(); ++i) check_dev_round(rounds[i], *dev[i]);
  MOE_CK(cudaStreamDestroy(st));
  gshmem_free(a.ws);
}
#endif

std::unique_ptr<Backend> make_backend(const gshmem::host::MoeConfig& cfg, Via via) {
#if defined(MPT_MOE_GPU)
  mpt::require(via != Via::Group, "the group-scope form runs on CPU PEs only");
  return std::make_unique<GpuBackend>(cfg, via == Via::C);
#else
  if (via == Via::Group) return std::make_unique<GroupBackend>(cfg);
  if (via == Via::C) return std::make_unique<CBackend>(cfg);
  return std::make_unique<LibraryBackend>(cfg);
#endif
}

}  // namespace

MPT_CASE(random) { run_all({"random", 8, 3 * n_pes(), 3, 8, 32, 16, Routing::Random, 0, 6}, 1); }

MPT_CASE(experts_not_multiple) {
  run_all({"experts_not_multiple", 5, 2 * n_pes() + 1, 2, 5, 16, 0, Routing::Random, 0, 4}, 2);
  if (n_pes() > 2) run_all({"fewer_experts_than_pes", 4, n_pes() - 1, 1, 3, 16, 16, Routing::Random, 0, 3}, 3);
}

MPT_CASE(one_hot_expert) {
  run_all({"hot_k1", 6, 2 * n_pes(), 1, 4, 16, 16, Routing::Hot, 1, 3}, 4);
  run_all({"hot_k3", 6, 3 * n_pes() + 1, 3, 4, 16, 0, Routing::Hot, 1, 3}, 5);
}

MPT_CASE(empty_experts) { run_all({"empty_experts", 3, 8 * n_pes(), 1, 4, 16, 16, Routing::Few, 0, 5}, 6); }

MPT_CASE(one_token) { run_all({"one_token", 1, 2 * n_pes(), 2, 8, 48, 16, Routing::Random, 3, 4}, 7); }

MPT_CASE(max_tokens) {
  run_all({"max_tokens", 64, 4 * n_pes() < 8 ? 8 : 4 * n_pes(), 8, 16, 32, 16, Routing::Random, 1, 3}, 8);
}

MPT_CASE(bound_m) { run_all({"bound_m_below_max", 32, 3 * n_pes(), 2, 8, 16, 0, Routing::Random, 2, 4}, 9); }

// The C API: a few scenarios end to end (it is the C++ class's calls with statuses).
MPT_CASE(c_api) {
  run_all({"c_random", 8, 3 * n_pes(), 3, 8, 32, 16, Routing::Random, 0, 4}, 30, Via::C);
  run_all({"c_hot_bound", 6, 2 * n_pes() + 1, 2, 4, 16, 0, Routing::Hot, 2, 3}, 31, Via::C);
}

MPT_CASE(topk_1_to_8) {
  for (std::uint64_t k = 1; k <= 8; ++k) {
    const std::uint64_t e = 2 * n_pes() > k ? 2 * n_pes() : k + 1;
    run_all({"topk", 6, e, k, 4, 16, 16, Routing::Random, 0, 2}, 100 + k);
  }
}

// Many calls back to back (each of the 9 type pairings several times), no barrier between.
MPT_CASE(many_calls) { run_all({"many_calls", 7, 2 * n_pes() + 2, 2, 6, 32, 16, Routing::Random, 0, 18}, 10); }

// Rows of a realistic width (hidden 1024 as bf16, fp8-style 1-byte rows with 128-element scale blocks elsewhere).
MPT_CASE(wide_rows) {
  run_all({"wide_bf16", 8, 4 * n_pes(), 4, 1024, 2048, 0, Routing::Random, 0, 2}, 11);
  run_all({"wide_fp8_scales", 8, 4 * n_pes(), 4, 512, 512, 16, Routing::Random, 0, 2}, 12);
}

#if defined(MPT_MOE_GPU)
// Back to back on the stream, no host synchronisation between calls: random routings, many calls of few tokens
// over many experts (PEs often exchange nothing), and W + 1 experts (the last PEs hold none: only the done flags
// order them).
MPT_CASE(pipelined) {
  for (int dp : dp_sizes()) {
    const std::uint64_t t = 300 + static_cast<std::uint64_t>(dp) * 1000;
    run_pipelined({"pipelined_random", 8, 3 * n_pes(), 3, 8, 32, 16, Routing::Random, 0, 8}, dp, t);
    run_pipelined({"pipelined_few", 2, 4 * n_pes(), 1, 4, 16, 16, Routing::Random, 0, 30}, dp, t + 1);
    run_pipelined({"pipelined_idle_pes", 3, n_pes() + 1, 1, 4, 16, 16, Routing::Random, 0, 30}, dp, t + 2);
    run_pipelined({"pipelined_wide", 16, 4 * n_pes(), 4, 1024, 2048, 0, Routing::Random, 1, 6}, dp, t + 3);
  }
}

MPT_CASE(device_entry) {
  for (int dp : dp_sizes()) {
    const std::uint64_t t = 500 + static_cast<std::uint64_t>(dp) * 1000;
    run_device_entry({"entry_random", 8, 3 * n_pes(), 3, 8, 32, 16, Routing::Random, 0, 6}, dp, t, false, 256,
                     ReduceType::Bfloat16, ReduceType::Half);
    run_device_entry({"entry_idle_pes", 3, n_pes() + 1, 1, 4, 16, 0, Routing::Random, 0, 6}, dp, t + 1, false, 64,
                     ReduceType::Float, ReduceType::Float);
    run_device_entry({"entry_warp", 6, 2 * n_pes(), 2, 8, 16, 16, Routing::Random, 0, 4}, dp, t + 2, true, 32,
                     ReduceType::Half, ReduceType::Bfloat16);
    // 1-2 wide tokens in a block of 8 warps: rows and expert rows sent in pieces (2080 bytes: 1024, 1024, 32).
    run_device_entry({"entry_wide", 3, 2 * n_pes(), 2, 1040, 2080, 16, Routing::Random, 2, 4}, dp, t + 3, false, 256,
                     ReduceType::Bfloat16, ReduceType::Half);
  }
}

MPT_CASE(graph_replay) {
  for (int dp : dp_sizes()) {
    const std::uint64_t t = 400 + static_cast<std::uint64_t>(dp) * 1000;
    run_graph({"graph_random", 8, 3 * n_pes(), 3, 8, 32, 16, Routing::Random, 0, 12}, dp, t);
    run_graph({"graph_idle_pes", 3, n_pes() + 1, 1, 4, 16, 0, Routing::Random, 0, 12}, dp, t + 1);
  }
}
#else
// The algorithm over a group of 8 threads per PE in 4 parts of 2 (16 in 8 parts for the wide scenarios: the device
// scopes' shape), through the test's own environment.
MPT_CASE(group_scope) {
  run_all({"group_random", 8, 3 * n_pes(), 3, 8, 32, 16, Routing::Random, 0, 5}, 20, Via::Group);
  // Dispatch with its receive overlapped (the default where every part has rows to send, as in group_random and
  // group_max) against the plain order, and with 3 of 4 parts receiving from 1 sender.
  recv_share = 0;
  run_all({"group_random_no_overlap", 8, 3 * n_pes(), 3, 8, 32, 16, Routing::Random, 1, 4}, 33, Via::Group);
  recv_share = 90;
  run_all({"group_random_most_receive", 8, 3 * n_pes(), 3, 8, 32, 16, Routing::Random, 1, 4}, 34, Via::Group);
  recv_share = gshmem::moe::kRecvShare;
  run_all({"group_hot_empty", 5, 4 * n_pes() + 1, 2, 5, 16, 0, Routing::Hot, 0, 4}, 21, Via::Group);
  run_all({"group_max", 16, 8 * n_pes(), 8, 37, 48, 16, Routing::Random, 1, 3}, 22, Via::Group);
  run_all({"group_many_calls", 6, 2 * n_pes() + 2, 2, 6, 32, 16, Routing::Random, 0, 12}, 23, Via::Group);
  // Fewer rows and tokens than parts, rows wider than a piece: sent rows, received rows and combined tokens split
  // into pieces (hidden 76: pieces of 8-element vectors and a 4-element tail).
  run_all({"group_few_wide", 3, 2 * n_pes() + 1, 3, 76, 160, 16, Routing::Random, 2, 6}, 26, Via::Group);
  // Few wide tokens over 8 parts (16 threads): each (token, k) row and each expert output row goes out in up to 8
  // pieces from as many parts (a short last piece: 2080-byte rows in 272-byte pieces; expert rows of 1001 elements,
  // not a whole number of 16-byte units), and its flag only after all of them. Odd PEs sleep in some copies, so a
  // flag stored before its row's last piece landed is seen (wrong rows or tokens).
  group_threads = 16;
  skew_copies = true;
  run_all({"group_wide_one_token", 2, 4 * n_pes(), 1, 1040, 2080, 16, Routing::Random, 3, 8}, 27, Via::Group);
  run_all({"group_wide_few_tokens", 3, 3 * n_pes(), 3, 1001, 2000, 16, Routing::Random, 2, 8}, 28, Via::Group);
  // Many rows over 8 parts, overlapped (4 send in waves of batches, 4 receive ranges of rows), odd PEs sleeping in
  // some copies: a receiver must wait for each row's own flag (wrong rows if it copies a row its flag did not cover),
  // and a hot expert puts most rows in one pair.
  run_all({"group_overlap_skewed", 16, 2 * n_pes(), 4, 24, 48, 16, Routing::Random, 1, 4}, 35, Via::Group);
  run_all({"group_overlap_hot", 12, 3 * n_pes(), 3, 16, 32, 0, Routing::Hot, 0, 4}, 36, Via::Group);
  skew_copies = false;
  group_threads = 8;
  // Few tokens over many experts (so PEs often exchange nothing in a call: no implicit ordering through the data)
  // with slow readers on odd PEs: fast PEs reach the next calls while slow ones still read; the done flags must
  // hold them back from staging still being read.
  skew_copies = true;
  run_all({"group_skewed", 2, 4 * n_pes(), 1, 4, 16, 16, Routing::Random, 0, 30}, 24, Via::Group);
  // W + 1 experts: from 4 PEs on, the last PEs hold none, so nothing they receive orders them after the others.
  run_all({"group_skewed_idle_pes", 3, n_pes() + 1, 1, 4, 16, 16, Routing::Random, 0, 30}, 25, Via::Group);
  skew_copies = false;
}
#endif

namespace {
// One bad call (argv[1] == "moe_bad", argv[2] == case); a gshmem::Error is printed and ends the job.
int bad(const std::string& c) {
  if (gshmem_init() != GSHMEM_SUCCESS) return 2;
  const int n = gshmem_n_pes();
  gshmemx_heap_usage_t before{};
  if (gshmemx_heap_usage(&before) != GSHMEM_SUCCESS) return 2;
  try {
    gshmem::host::MoeConfig cfg{4, static_cast<std::uint64_t>(2 * n), 2, 4, 16, 0, 1, 0};
    if (c == "bad_dp") cfg.dp_size = n + 1;
    if (c == "bad_bytes") cfg.hidden_dim_bytes = 24;
    if (c == "topk_too_large") cfg.experts_per_token = cfg.num_experts + 1;
    if (c == "huge_rows") cfg.hidden_dim_bytes = std::uint64_t{1} << 41;
    if (c == "huge_staging") {  // each value allowed, the sizes' product not (it would wrap make_plan's sums)
      cfg.max_num_tokens = std::uint64_t{1} << 24;
      cfg.hidden_dim = std::uint64_t{1} << 32;
    }
    if (c == "config_mismatch") {  // the same workspace size (48-byte rows) from other row splits
      cfg.hidden_dim_scale_bytes = 16;
      if (gshmem_my_pe() == 1) cfg = {4, cfg.num_experts, 2, 4, 32, 0, 1, 0};
    }
    gshmem::MoeAllToAll ata(cfg);
    std::vector<std::int32_t> counts(2);
    std::vector<std::uint8_t> ex(2 * 4 * n * 16), x(8 * 16);
    std::vector<std::uint32_t> idx = {0, 1, 1, 0, 0, 1, 1, 0, 0, 1};
    std::vector<float> w(10, 0.5f), out(8 * 4), y(2 * 4 * n * 4);
    if (c == "expert_out_of_range") idx[3] = static_cast<std::uint32_t>(2 * n);
    if (c == "duplicate_expert") idx[3] = idx[2];
    const std::size_t m = c == "bound_m_too_large" ? 5 : 3;
#if defined(MPT_MOE_GPU)
    // GPU PEs: the same calls on device copies; the data checks happen in the kernel (a trap, then the blocking
    // call's error), and bound_m_device passes a device bound_m above the rows given.
    DevBuf d_counts(counts.size() * 4), d_ex(ex.size()), d_x(x.size()), d_idx(idx.size() * 4), d_w(w.size() * 4),
        d_out(out.size() * 4), d_y(y.size() * 4), d_bound(4);
    MOE_CK(cudaMemcpy(d_idx.get(), idx.data(), idx.size() * 4, cudaMemcpyHostToDevice));
    MOE_CK(cudaMemcpy(d_w.get(), w.data(), w.size() * 4, cudaMemcpyHostToDevice));
    const std::uint32_t four = 4;
    MOE_CK(cudaMemcpy(d_bound.get(), &four, 4, cudaMemcpyHostToDevice));
    if (c == "bound_m_device") {
      ata.dispatch_on_stream(d_counts.get<std::int32_t>(), d_ex.get(), nullptr, d_x.get(), nullptr,
                             d_idx.get<std::uint32_t>(), 3, d_bound.get<std::uint32_t>(), nullptr);
      MOE_CK(cudaDeviceSynchronize());
    }
    ata.dispatch(d_counts.get<std::int32_t>(), d_ex.get(), c == "scale_unexpected" ? d_ex.get() : nullptr, d_x.get(),
                 nullptr, d_idx.get<std::uint32_t>(), m);
    if (c == "dispatch_twice")
      ata.dispatch(d_counts.get<std::int32_t>(), d_ex.get(), nullptr, d_x.get(), nullptr, d_idx.get<std::uint32_t>(),
                   m);
    ata.combine(d_out.get(), ReduceType::Float, d_idx.get<std::uint32_t>(), d_w.get<float>(), d_y.get(),
                c == "combine_int" ? ReduceType::Int32 : ReduceType::Float, c == "combine_tokens" ? 2 : m);
#else
    ata.dispatch(counts.data(), ex.data(), c == "scale_unexpected" ? ex.data() : nullptr, x.data(), nullptr,
                 idx.data(), m);
    if (c == "dispatch_twice")
      ata.dispatch(counts.data(), ex.data(), nullptr, x.data(), nullptr, idx.data(), m);
    ata.combine(out.data(), ReduceType::Float, idx.data(), w.data(), y.data(),
                c == "combine_int" ? ReduceType::Int32 : ReduceType::Float, c == "combine_tokens" ? 2 : m);
#endif
  } catch (const gshmem::Error& e) {
    std::fprintf(stderr, "[PE %d] ERROR: %s\n", gshmem_my_pe(), e.what());
    // A create that failed must leave the heap as it found it (the test rejects the second line).
    gshmemx_heap_usage_t after{};
    if (gshmemx_heap_usage(&after) == GSHMEM_SUCCESS && after.allocations == before.allocations &&
        after.used == before.used)
      std::fprintf(stderr, "[PE %d] heap after the failed call: as before (%llu allocations)\n", gshmem_my_pe(),
                   static_cast<unsigned long long>(after.allocations));
    else
      std::fprintf(stderr, "[PE %d] heap after the failed call: %llu allocations, %llu bytes; before: %llu, %llu\n",
                   gshmem_my_pe(), static_cast<unsigned long long>(after.allocations),
                   static_cast<unsigned long long>(after.used), static_cast<unsigned long long>(before.allocations),
                   static_cast<unsigned long long>(before.used));
    std::fflush(stderr);
    if (c == "config_mismatch") gshmem_barrier_all();  // every PE fails there: each prints its heap line first
    gshmem_global_exit(1);
  }
  std::fprintf(stderr, "moe_bad: UNCAUGHT: the bad call of case '%s' returned normally\n", c.c_str());
  gshmem_finalize();
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "moe_bad") return bad(argv[2]);
  return mpt::main(argc, argv);
}
