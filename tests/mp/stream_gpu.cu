// mp_stream_gpu: the stream-ordered host calls on GPU PEs, directly and captured into a CUDA graph replayed with
// fresh data each time. Needs GPU PEs (CTest label gpu; skipped without a GPU by gpu_or_skip.sh).
//   putmem/getmem_on_stream, p_on_stream, putmem_signal_on_stream (SET, ADD) + signal_wait_until_on_stream,
//   putmem_signal_on_stream's paths (alignments and odd sizes, heap / device / host sources, 0 bytes),
//   signal_op_on_stream, barrier_all_on_stream, sync_all_on_stream, barrier/team_sync_on_stream, quiet_on_stream;
//   and the library's stream kernels launched behind a user kernel that is still running (after_kernel);
//   p_on_stream of every width and SET signals from a thread that has made no CUDA call, on the legacy default
//   stream, and host signal_op from another such thread (fresh_thread); host and stream calls from a thread that
//   has another GPU current (other_device_thread).
#include <cuda_runtime.h>

#include <algorithm>
#include <cinttypes>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"
#include "cuda_check.cuh"

using namespace mpt;

namespace {

gshmem_stream_t gs(cudaStream_t s) { return reinterpret_cast<gshmem_stream_t>(s); }

std::vector<unsigned char> data_of(std::uint64_t tag, int round, int from, int to, std::size_t bytes) {
  std::vector<unsigned char> d(bytes);
  for (std::size_t i = 0; i < bytes; i += 8) {
    std::uint64_t w = rnd(tag, static_cast<std::uint64_t>(round), static_cast<std::uint64_t>(from * 4096 + to), i);
    std::memcpy(&d[i], &w, bytes - i < 8 ? bytes - i : 8);
  }
  return d;
}

cudaStream_t stream;

__device__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
// One thread: waits `ns` nanoseconds, then stores *val at dst (a peer's word through gshmem_ptr) with a plain store.
// On 9.0+ it is a PDL-aware kernel that lets the next kernel on the stream launch at once (as tuned kernels do):
// the library's stream kernels must still wait for it to finish.
__global__ void late_store(std::uint64_t* dst, const std::uint64_t* val, unsigned long long ns) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
  const unsigned long long t0 = now_ns();
  while (now_ns() - t0 < ns) {
  }
  *reinterpret_cast<volatile std::uint64_t*>(dst) = *val;
}
__global__ void read_words(const std::uint64_t* src, std::uint64_t* out, int n) {
  for (int i = 0; i < n; ++i) out[i] = reinterpret_cast<const volatile std::uint64_t*>(src)[i];
}

MPT_CASE(on_stream) {
  const int n = npes(), my = me(), next = (my + 1) % n, prev = (my + n - 1) % n;
  const std::size_t N = static_cast<std::size_t>(n), B = 8192 + 24;
  const std::uint64_t tag = tag_of("on_stream");
  auto* sym = static_cast<unsigned char*>(gshmem_malloc(N * B));
  auto* ints = static_cast<int*>(gshmem_malloc(N * sizeof(int)));
  auto* sig = static_cast<std::uint64_t*>(gshmem_malloc((N + 1) * sizeof(std::uint64_t)));
  require(sym && ints && sig, "gshmem_malloc");
  unsigned char* dpriv = nullptr;
  CK(cudaMalloc(&dpriv, (N + 1) * B));  // N slots plus one scratch block (dpriv + B is used with N = 1)
  std::vector<unsigned char> got(N * B), want(N * B), pois(N * B);

  // putmem_on_stream into slot `my` of every PE, barrier_all_on_stream, then check
  for (int round = 0; round < 3; ++round) {  // round 2: the _nbi_on_stream form
    for (int s = 0; s < n; ++s) {
      auto d = data_of(tag, round, s, my, B);
      std::memcpy(&want[static_cast<std::size_t>(s) * B], d.data(), B);
    }
    poison_of(pois.data(), want.data(), N * B);
    local_write(sym, pois.data(), N * B);
    gshmem_barrier_all();
    for (int j = 0; j < n; ++j) {
      const int t = (my + j) % n;
      auto d = data_of(tag, round, my, t, B);
      CK(cudaMemcpyAsync(dpriv + static_cast<std::size_t>(t) * B, d.data(), B, cudaMemcpyHostToDevice, stream));
      CK(cudaStreamSynchronize(stream));
      if (round < 2)
        gshmemx_putmem_on_stream(sym + static_cast<std::size_t>(my) * B, dpriv + static_cast<std::size_t>(t) * B, B, t, gs(stream));
      else
        gshmemx_putmem_nbi_on_stream(sym + static_cast<std::size_t>(my) * B, dpriv + static_cast<std::size_t>(t) * B, B, t, gs(stream));
    }
    if (round != 1) gshmemx_barrier_all_on_stream(gs(stream));
    else {
      gshmemx_quiet_on_stream(gs(stream));
      gshmemx_sync_all_on_stream(gs(stream));
    }
    CK(cudaStreamSynchronize(stream));
    local_read(got.data(), sym, N * B);
    MPT_CHECK_MEM(round == 0   ? "putmem_on_stream + barrier_all_on_stream"
                  : round == 1 ? "putmem_on_stream + quiet + sync_all_on_stream"
                               : "putmem_nbi_on_stream + barrier_all_on_stream",
                  got.data(), want.data(), N * B);
    gshmem_barrier_all();
  }
  // getmem_on_stream (odd j: the _nbi form) from every PE (each PE's slot holds data from the last round, which
  // wrote the same data as round 1: data_of is keyed by round, so compare with round 2's)
  for (int j = 0; j < n; ++j) {
    const int t = (my + j) % n;
    auto w = data_of(tag, 2, my, t, B);  // what I put into PE t's slot `my` in the last round
    CK(cudaMemsetAsync(dpriv, 0xEE, B, stream));  // on the get's stream: a cudaMemset could land after the get
    if (j % 2 == 0) gshmemx_getmem_on_stream(dpriv, sym + static_cast<std::size_t>(my) * B, B, t, gs(stream));
    else gshmemx_getmem_nbi_on_stream(dpriv, sym + static_cast<std::size_t>(my) * B, B, t, gs(stream));
    CK(cudaStreamSynchronize(stream));
    std::vector<unsigned char> g(B);
    CK(cudaMemcpy(g.data(), dpriv, B, cudaMemcpyDeviceToHost));
    MPT_CHECK_MEM(std::string(j % 2 ? "getmem_nbi_on_stream" : "getmem_on_stream") + " from PE " + std::to_string(t),
                  g.data(), w.data(), B);
  }
  gshmem_barrier_all();
  // p_on_stream
  local_fill(ints, N, -1);
  gshmem_barrier_all();
  for (int j = 0; j < n; ++j) {
    const int t = (my + j) % n;
    gshmemx_int_p_on_stream(ints + my, static_cast<int>(rnd(tag, 5, static_cast<std::uint64_t>(my), static_cast<std::uint64_t>(t)) >> 33), t, gs(stream));
  }
  gshmemx_barrier_all_on_stream(gs(stream));
  CK(cudaStreamSynchronize(stream));
  for (int p = 0; p < n; ++p)
    MPT_CHECK_EQ(local_get(ints + p), static_cast<int>(rnd(tag, 5, static_cast<std::uint64_t>(p), static_cast<std::uint64_t>(my)) >> 33));
  gshmem_barrier_all();
  // putmem_signal_on_stream SET and ADD + signal_wait_until_on_stream on the receiver's stream
  for (int round = 0; round < 2; ++round) {
    local_fill<std::uint64_t>(sig, N + 1, 0);
    auto wdat = data_of(tag, 10 + round, prev, my, B);
    std::vector<unsigned char> p2(B);
    poison_of(p2.data(), wdat.data(), B);
    local_write(sym, p2.data(), B);
    gshmem_barrier_all();
    auto d = data_of(tag, 10 + round, my, next, B);
    // On the stream: a pageable cudaMemcpy can return before its data lands, and the put below reads dpriv.
    CK(cudaMemcpyAsync(dpriv, d.data(), B, cudaMemcpyHostToDevice, stream));
    const std::uint64_t sv = rnd(tag, 20 + static_cast<std::uint64_t>(round), static_cast<std::uint64_t>(my)) % 1000000 + 1;
    const std::uint64_t sv_prev = rnd(tag, 20 + static_cast<std::uint64_t>(round), static_cast<std::uint64_t>(prev)) % 1000000 + 1;
    if (round == 0) gshmemx_putmem_signal_on_stream(sym, dpriv, B, sig, sv, GSHMEM_SIGNAL_SET, next, gs(stream));
    else gshmemx_putmem_signal_nbi_on_stream(sym, dpriv, B, sig, sv, GSHMEM_SIGNAL_ADD, next, gs(stream));
    gshmemx_signal_wait_until_on_stream(sig, GSHMEM_CMP_EQ, sv_prev, gs(stream));
    gshmemx_getmem_on_stream(dpriv + B, sym, B, my, gs(stream));  // ordered after the wait
    CK(cudaStreamSynchronize(stream));
    std::vector<unsigned char> g(B);
    CK(cudaMemcpy(g.data(), dpriv + B, B, cudaMemcpyDeviceToHost));
    MPT_CHECK_MEM(round ? "putmem_signal_nbi_on_stream ADD" : "putmem_signal_on_stream SET", g.data(), wdat.data(), B);
    MPT_CHECK_EQ(gshmem_signal_fetch(sig), sv_prev);
    gshmem_barrier_all();
  }
  // signal_op_on_stream: SET then ADD into my word at every PE; an ADD race into word N
  local_fill<std::uint64_t>(sig, N + 1, 0);
  gshmem_barrier_all();
  for (int j = 0; j < n; ++j) {
    const int t = (my + j) % n;
    gshmemx_signal_op_on_stream(sig + my, 100 + static_cast<std::uint64_t>(my), GSHMEM_SIGNAL_SET, t, gs(stream));
    gshmemx_signal_op_on_stream(sig + my, 7, GSHMEM_SIGNAL_ADD, t, gs(stream));
    gshmemx_signal_op_on_stream(sig + N, static_cast<std::uint64_t>(my) + 1, GSHMEM_SIGNAL_ADD, t, gs(stream));
  }
  gshmemx_barrier_all_on_stream(gs(stream));
  CK(cudaStreamSynchronize(stream));
  for (int p = 0; p < n; ++p) MPT_CHECK_EQ(gshmem_signal_fetch(sig + p), 107 + static_cast<std::uint64_t>(p));
  MPT_CHECK_EQ(gshmem_signal_fetch(sig + N), static_cast<std::uint64_t>(n) * (n + 1) / 2);
  gshmem_barrier_all();
  // team barrier/sync on stream over the x-axis teams of a 2d split
  gshmem_team_t xt, yt;
  MPT_CHECK_STATUS(gshmem_team_split_2d(GSHMEM_TEAM_WORLD, 2, nullptr, 0, &xt, nullptr, 0, &yt), GSHMEM_SUCCESS, "");
  local_fill(ints, N, -1);
  gshmem_barrier_all();
  const int xs = gshmem_team_n_pes(xt);
  for (int i = 0; i < xs; ++i)
    gshmemx_int_p_on_stream(ints + my, my + 1000, gshmem_team_translate_pe(xt, i, GSHMEM_TEAM_WORLD), gs(stream));
  MPT_CHECK_STATUS(gshmemx_barrier_on_stream(xt, gs(stream)), GSHMEM_SUCCESS, "");
  CK(cudaStreamSynchronize(stream));
  for (int i = 0; i < xs; ++i) {
    const int pe = gshmem_team_translate_pe(xt, i, GSHMEM_TEAM_WORLD);
    MPT_CHECK_EQ(local_get(ints + pe), pe + 1000);
  }
  MPT_CHECK_STATUS(gshmemx_team_sync_on_stream(yt, gs(stream)), GSHMEM_SUCCESS, "");
  MPT_CHECK_STATUS(gshmemx_barrier_on_stream(4242, gs(stream)), GSHMEM_ERROR_INVALID_VALUE, "gshmemx_barrier_on_stream");
  CK(cudaStreamSynchronize(stream));
  gshmem_barrier_all();
  gshmem_team_destroy(xt);
  gshmem_team_destroy(yt);
  CK(cudaFree(dpriv));
  gshmem_free(sig);
  gshmem_free(ints);
  gshmem_free(sym);
}

// The same kind of sequence captured once into a CUDA graph and replayed 10 times; each replay reads fresh data
// from pinned host memory and must deliver it.
MPT_CASE(graph_replay) {
  const int n = npes(), my = me(), next = (my + 1) % n, prev = (my + n - 1) % n;
  const std::size_t B = 4096 + 8;
  const std::uint64_t tag = tag_of("graph");
  auto* sym = static_cast<unsigned char*>(gshmem_malloc(B));
  auto* sig = static_cast<std::uint64_t*>(gshmem_malloc(sizeof(std::uint64_t)));
  require(sym && sig, "gshmem_malloc");
  local_set<std::uint64_t>(sig, 0);
  unsigned char *hin = nullptr, *hout = nullptr, *din = nullptr, *dout = nullptr;
  CK(cudaMallocHost(&hin, B));
  CK(cudaMallocHost(&hout, B));
  CK(cudaMalloc(&din, B));
  CK(cudaMalloc(&dout, B));
  gshmem_barrier_all();

  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  CK(cudaMemcpyAsync(din, hin, B, cudaMemcpyHostToDevice, stream));
  gshmemx_putmem_signal_on_stream(sym, din, B, sig, 1, GSHMEM_SIGNAL_SET, next, gs(stream));
  gshmemx_signal_wait_until_on_stream(sig, GSHMEM_CMP_EQ, 1, gs(stream));
  gshmemx_signal_op_on_stream(sig, 0, GSHMEM_SIGNAL_SET, my, gs(stream));  // reset my own word for the next replay
  gshmemx_getmem_on_stream(dout, sym, B, my, gs(stream));
  CK(cudaMemcpyAsync(hout, dout, B, cudaMemcpyDeviceToHost, stream));
  gshmemx_quiet_on_stream(gs(stream));
  gshmemx_barrier_all_on_stream(gs(stream));
  CK(cudaStreamEndCapture(stream, &graph));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  for (int r = 0; r < 10; ++r) {
    auto d = data_of(tag, r, my, next, B);
    auto w = data_of(tag, r, prev, my, B);
    std::memcpy(hin, d.data(), B);
    poison_of(hout, w.data(), B);
    gshmem_barrier_all();  // every PE's host buffers are ready before anyone's replay sends
    CK(cudaGraphLaunch(exec, stream));
    CK(cudaStreamSynchronize(stream));
    MPT_CHECK_MEM("graph replay " + std::to_string(r), hout, w.data(), B);
  }
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  CK(cudaFreeHost(hin));
  CK(cudaFreeHost(hout));
  CK(cudaFree(din));
  CK(cudaFree(dout));
  gshmem_barrier_all();
  gshmem_free(sig);
  gshmem_free(sym);
}

// putmem_signal_on_stream over the shapes that pick each of its paths: the one-kernel copy in 16-, 8-, 4-, 2-byte
// words and bytewise (the widest word at whose boundaries source and dest fall together), each with and without a
// bytewise head before dest's first boundary and a tail after the last whole word, and a size within the head; a
// source in the heap (no pointer query), one in pinned host memory and one above GSHMEM_PUT_SIGNAL_KERNEL_BYTES's
// default (the copy engine), and 0 bytes (the signal alone). Each put lands in PE next's poisoned region: exactly
// its bytes change.
MPT_CASE(put_signal_shapes) {
  const int n = npes(), my = me(), next = (my + 1) % n, prev = (my + n - 1) % n;
  const std::uint64_t tag = tag_of("put_signal_shapes");
  enum Src { DEV, HEAP, HOST };
  struct Shape {
    Src src;
    std::size_t soff, doff, bytes;  // offsets from 256-byte aligned buffers
  };
  const Shape shapes[] = {
      {DEV, 0, 0, 65536}, {DEV, 16, 48, 16}, {DEV, 0, 0, 4100},   {DEV, 1, 1, 1027},  // 16-byte words
      {DEV, 8, 0, 4104},  {DEV, 4, 12, 1028},                                          // 8
      {DEV, 3, 7, 1000},                                                               // 4
      {DEV, 2, 0, 1030},  {DEV, 1, 3, 777},                                            // 2
      {DEV, 0, 1, 777},                                                                // bytewise
      {DEV, 5, 5, 7},                                                                  // all in the head
      {HEAP, 0, 0, 1000}, {HEAP, 3, 3, 65535}, {HOST, 0, 8, 4096}, {HOST, 7, 1, 333},
      {DEV, 0, 16, 65552}, {DEV, 0, 0, 0}};
  const std::size_t S = 65536 + 64;
  auto* dst = static_cast<unsigned char*>(gshmem_malloc(S));
  auto* hsrc = static_cast<unsigned char*>(gshmem_malloc(S));
  auto* sig = static_cast<std::uint64_t*>(gshmem_malloc(sizeof(std::uint64_t)));
  require(dst && hsrc && sig, "gshmem_malloc");
  unsigned char *dsrc = nullptr, *host = nullptr;
  CK(cudaMalloc(&dsrc, S));
  CK(cudaMallocHost(&host, S));
  local_set<std::uint64_t>(sig, 0);
  std::vector<unsigned char> want(S), got(S);
  for (std::size_t k = 0; k < sizeof shapes / sizeof shapes[0]; ++k) {
    const Shape& sh = shapes[k];
    const std::string what = "putmem_signal_on_stream shape " + std::to_string(k) + " (" + std::to_string(sh.bytes) +
                             " bytes, source offset " + std::to_string(sh.soff) + ", dest offset " +
                             std::to_string(sh.doff) + ")";
    // What PE prev sends me: its data's window at doff, everything else keeps my poison.
    auto in = data_of(tag, static_cast<int>(k), prev, my, S);
    poison_of(want.data(), in.data(), S);
    local_write(dst, want.data(), S);
    std::memcpy(want.data() + sh.doff, in.data() + sh.doff, sh.bytes);
    auto out = data_of(tag, static_cast<int>(k), my, next, S);
    unsigned char* src = sh.src == DEV ? dsrc : sh.src == HEAP ? hsrc : host;
    std::vector<unsigned char> staged(S, 0x5A);
    std::memcpy(staged.data() + sh.soff, out.data() + sh.doff, sh.bytes);
    if (sh.src == DEV) CK(cudaMemcpy(dsrc, staged.data(), S, cudaMemcpyHostToDevice));
    else if (sh.src == HEAP) local_write(hsrc, staged.data(), S);
    else std::memcpy(host, staged.data(), S);
    CK(cudaDeviceSynchronize());
    gshmem_barrier_all();  // every PE's poison is in place before anyone puts
    const std::uint64_t v = k + 1;
    gshmemx_putmem_signal_on_stream(dst + sh.doff, src + sh.soff, sh.bytes, sig, v, GSHMEM_SIGNAL_SET, next,
                                    gs(stream));
    gshmemx_signal_wait_until_on_stream(sig, GSHMEM_CMP_EQ, v, gs(stream));
    CK(cudaStreamSynchronize(stream));
    local_read(got.data(), dst, S);
    MPT_CHECK_MEM(what, got.data(), want.data(), S);
    gshmem_barrier_all();  // no PE rewrites its source or poison while a put from it may still read
  }
  CK(cudaFreeHost(host));
  CK(cudaFree(dsrc));
  gshmem_free(sig);
  gshmem_free(hsrc);
  gshmem_free(dst);
}

// The library's stream kernels (barrier, signal_op, signal wait, p, typed wait) after a user kernel that is still
// running when they are launched: each must start only once that kernel has finished, so the kernel's late store
// into the next PE is visible there after the barrier / signal / flag (on GPUs 9.0+ the library launches its stream
// kernels overlapped with the previous kernel and waits in the kernel: src/transport/stream_kernel.cuh). Directly,
// and captured into a CUDA graph replayed with fresh values.
MPT_CASE(after_kernel) {
  const int n = npes(), my = me(), next = (my + 1) % n, prev = (my + n - 1) % n;
  const std::uint64_t tag = tag_of("after_kernel");
  // ns a slow PE's user kernel runs before its store: 50 us, or 20 ms where PEs share a GPU (their contexts are
  // time-sliced, so a shorter kernel always finished before the reader's context ran)
  int ngpu = 0;
  CK(cudaGetDeviceCount(&ngpu));
  const unsigned long long kLate = ngpu < gshmem_team_n_pes(GSHMEM_TEAM_SHARED) ? 20000000 : 50000;
  auto* words = static_cast<std::uint64_t*>(gshmem_calloc(4, sizeof(std::uint64_t)));
  auto* sig = static_cast<std::uint64_t*>(gshmem_calloc(1, sizeof(std::uint64_t)));
  auto* flag = static_cast<int*>(gshmem_calloc(1, sizeof(int)));
  require(words && sig && flag, "gshmem_calloc");
  auto* peer_words = static_cast<std::uint64_t*>(gshmem_ptr(words, next));
  require(peer_words != nullptr, "gshmem_ptr of the next PE (GPU PEs of one node)");
  std::uint64_t *hval = nullptr, *hout = nullptr, *dval = nullptr, *dout = nullptr;
  CK(cudaMallocHost(&hval, 3 * sizeof(std::uint64_t)));
  CK(cudaMallocHost(&hout, 3 * sizeof(std::uint64_t)));
  CK(cudaMalloc(&dval, 3 * sizeof(std::uint64_t)));
  CK(cudaMalloc(&dout, 3 * sizeof(std::uint64_t)));
  const std::size_t w = sizeof(std::uint64_t);
  auto value = [&](int round, int from, int k) {
    return rnd(tag, static_cast<std::uint64_t>(round), static_cast<std::uint64_t>(from), static_cast<std::uint64_t>(k));
  };
  // Round r: word 0 before a barrier, word 1 before signal_op + signal_wait_until, word 2 before int_p + int
  // wait_until; this PE reads each of its own words (written by the previous PE) on the stream right after.
  // Every other PE is slow in each round, so a fast reader's own stream does not hold back its read while the slow
  // writer's store is still to come.
  auto enqueue = [&](int r) {
    const unsigned long long late = (my + r) % 2 ? kLate : 0;
    CK(cudaMemcpyAsync(dval, hval, 3 * w, cudaMemcpyHostToDevice, stream));
    late_store<<<1, 1, 0, stream>>>(peer_words + 0, dval + 0, late);
    gshmemx_barrier_all_on_stream(gs(stream));
    read_words<<<1, 1, 0, stream>>>(words + 0, dout + 0, 1);
    late_store<<<1, 1, 0, stream>>>(peer_words + 1, dval + 1, late);
    gshmemx_signal_op_on_stream(sig, static_cast<std::uint64_t>(r), GSHMEM_SIGNAL_SET, next, gs(stream));
    gshmemx_signal_wait_until_on_stream(sig, GSHMEM_CMP_GE, static_cast<std::uint64_t>(r), gs(stream));
    read_words<<<1, 1, 0, stream>>>(words + 1, dout + 1, 1);
    late_store<<<1, 1, 0, stream>>>(peer_words + 2, dval + 2, late);
    gshmemx_int_p_on_stream(flag, r, next, gs(stream));
    gshmemx_int_wait_until_on_stream(flag, GSHMEM_CMP_GE, r, gs(stream));
    read_words<<<1, 1, 0, stream>>>(words + 2, dout + 2, 1);
    CK(cudaMemcpyAsync(hout, dout, 3 * w, cudaMemcpyDeviceToHost, stream));
  };
  auto check = [&](const char* what, int r) {
    for (int k = 0; k < 3; ++k)
      MPT_CHECK(hout[k] == value(r, prev, k)) << what << " round " << r << " word " << k << ": got " << hout[k]
                                              << " want " << value(r, prev, k);
  };
  // Values of round r in hval, poison (anything but the expected value) in hout; then every PE's previous reads
  // are done before anyone's stores.
  auto prepare = [&](int r) {
    for (int k = 0; k < 3; ++k) {
      hval[k] = value(r, my, k);
      hout[k] = ~value(r, prev, k);
    }
    gshmem_barrier_all();
  };
  for (int r = 1; r <= 20; ++r) {
    prepare(r);
    enqueue(r);
    CK(cudaStreamSynchronize(stream));
    check("direct", r);
  }
  // The same captured once: the signal and flag values are baked in as 100 (both reset before each replay), the
  // words' values change through hval.
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  enqueue(100);
  CK(cudaStreamEndCapture(stream, &graph));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  for (int rep = 0; rep < 10; ++rep) {
    local_set<std::uint64_t>(sig, 0);
    local_set<int>(flag, 0);
    prepare(100 + rep);
    CK(cudaGraphLaunch(exec, stream));
    CK(cudaStreamSynchronize(stream));
    check("graph replay", 100 + rep);
  }
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  CK(cudaFreeHost(hval));
  CK(cudaFreeHost(hout));
  CK(cudaFree(dval));
  CK(cudaFree(dout));
  gshmem_barrier_all();
  gshmem_free(flag);
  gshmem_free(sig);
  gshmem_free(words);
}

// The library's p and signals on streams use driver calls (memsets, write-values), which need a current context: a
// thread that has made no CUDA call has none until the library binds this PE's GPU (transport/gpu.cu, bind_thread).
MPT_CASE(fresh_thread) {
  const int n = npes(), my = me();
  const std::size_t N = static_cast<std::size_t>(n);
  const std::uint64_t tag = tag_of("fresh_thread");
  auto* c8 = static_cast<signed char*>(gshmem_malloc(N));
  auto* c16 = static_cast<short*>(gshmem_malloc(N * sizeof(short)));
  auto* c32 = static_cast<int*>(gshmem_malloc(N * sizeof(int)));
  auto* c64 = static_cast<long long*>(gshmem_malloc(N * sizeof(long long)));
  auto* sig = static_cast<std::uint64_t*>(gshmem_malloc(2 * N * sizeof(std::uint64_t)));
  require(c8 && c16 && c32 && c64 && sig, "gshmem_malloc");
  local_fill<signed char>(c8, N, -1);
  local_fill<short>(c16, N, -1);
  local_fill<int>(c32, N, -1);
  local_fill<long long>(c64, N, -1);
  local_fill<std::uint64_t>(sig, 2 * N, 0);
  auto v = [&](int from, int to, int k) {
    return rnd(tag, static_cast<std::uint64_t>(k), static_cast<std::uint64_t>(from), static_cast<std::uint64_t>(to));
  };
  int pe_gpu = -1;
  CK(cudaGetDevice(&pe_gpu));
  gshmem_barrier_all();
  std::thread stream_ops([&] {  // no CUDA call on this thread before these
    for (int j = 0; j < n; ++j) {
      const int t = (my + j) % n;
      gshmemx_schar_p_on_stream(c8 + my, static_cast<signed char>(v(my, t, 1)), t, nullptr);
      gshmemx_short_p_on_stream(c16 + my, static_cast<short>(v(my, t, 2)), t, nullptr);
      gshmemx_int_p_on_stream(c32 + my, static_cast<int>(v(my, t, 3)), t, nullptr);
      gshmemx_longlong_p_on_stream(c64 + my, static_cast<long long>(v(my, t, 4)), t, nullptr);
      gshmemx_signal_op_on_stream(sig + my, v(my, t, 5) | 1, GSHMEM_SIGNAL_SET, t, nullptr);
    }
    gshmemx_quiet_on_stream(nullptr);
    // The library bound this PE's GPU to the thread (not device 0, the runtime's default: with PEs on several
    // GPUs, its kernels ran on GPU 0 there and faulted on the heap, mapped for the PE's GPU only).
    int d = -1;
    CK(cudaGetDevice(&d));
    MPT_CHECK_EQ(d, pe_gpu);
    CK(cudaStreamSynchronize(nullptr));
  });
  stream_ops.join();
  std::thread host_signal([&] {  // the host's blocking signal_op, from another fresh thread
    for (int j = 0; j < n; ++j) {
      const int t = (my + j) % n;
      gshmemx_signal_op(sig + N + my, v(my, t, 6) | 1, GSHMEM_SIGNAL_SET, t);
    }
  });
  host_signal.join();
  gshmem_barrier_all();
  for (int p = 0; p < n; ++p) {
    MPT_CHECK_EQ(local_get(c8 + p), static_cast<signed char>(v(p, my, 1)));
    MPT_CHECK_EQ(local_get(c16 + p), static_cast<short>(v(p, my, 2)));
    MPT_CHECK_EQ(local_get(c32 + p), static_cast<int>(v(p, my, 3)));
    MPT_CHECK_EQ(local_get(c64 + p), static_cast<long long>(v(p, my, 4)));
    MPT_CHECK_EQ(local_get(sig + p), v(p, my, 5) | 1);
    MPT_CHECK_EQ(local_get(sig + N + p), v(p, my, 6) | 1);
  }
  gshmem_barrier_all();
  gshmem_free(sig);
  gshmem_free(c64);
  gshmem_free(c32);
  gshmem_free(c16);
  gshmem_free(c8);
}

// A thread whose current GPU is another one than this PE's (the program's choice: it works on that GPU too): the
// library's host and stream calls run on the PE's GPU and give the thread its GPU back. Needs a second visible
// GPU; with one, the case only checks the calls (the PE's GPU is the only one to be current).
MPT_CASE(other_device_thread) {
  const int n = npes(), my = me();
  const std::size_t N = static_cast<std::size_t>(n);
  const std::uint64_t tag = tag_of("other_device_thread");
  int pe_gpu = -1, ngpu = 0;
  CK(cudaGetDevice(&pe_gpu));
  CK(cudaGetDeviceCount(&ngpu));
  const int other = ngpu > 1 ? (pe_gpu + 1) % ngpu : pe_gpu;
  auto* w32 = static_cast<int*>(gshmem_malloc(2 * N * sizeof(int)));
  auto* sig = static_cast<std::uint64_t*>(gshmem_malloc(2 * N * sizeof(std::uint64_t)));
  auto* dat = static_cast<std::uint64_t*>(gshmem_malloc(N * sizeof(std::uint64_t)));
  require(w32 && sig && dat, "gshmem_malloc");
  local_fill<int>(w32, 2 * N, -1);
  local_fill<std::uint64_t>(sig, 2 * N, 0);
  local_fill<std::uint64_t>(dat, N, 0);
  auto v = [&](int from, int to, int k) {
    return rnd(tag, static_cast<std::uint64_t>(k), static_cast<std::uint64_t>(from), static_cast<std::uint64_t>(to));
  };
  gshmem_barrier_all();
  std::thread t([&] {
    CK(cudaSetDevice(other));
    for (int j = 0; j < n; ++j) {
      const int to = (my + j) % n;
      gshmemx_int_p_on_stream(w32 + my, static_cast<int>(v(my, to, 1)), to, gs(stream));  // the PE's stream
      gshmemx_signal_op_on_stream(sig + my, v(my, to, 2) | 1, GSHMEM_SIGNAL_ADD, to, gs(stream));
      gshmem_int_p(w32 + N + my, static_cast<int>(v(my, to, 3)), to);
      gshmemx_signal_op(sig + N + my, v(my, to, 4) | 1, GSHMEM_SIGNAL_SET, to);
      const std::uint64_t x = v(my, to, 5);
      gshmem_putmem(dat + my, &x, sizeof x, to);
    }
    gshmem_quiet();
    int d = -1;
    CK(cudaGetDevice(&d));
    MPT_CHECK_EQ(d, other);  // given back
    CK(cudaSetDevice(pe_gpu));
    CK(cudaStreamSynchronize(stream));
  });
  t.join();
  gshmem_barrier_all();
  for (int p = 0; p < n; ++p) {
    MPT_CHECK_EQ(local_get(w32 + p), static_cast<int>(v(p, my, 1)));
    MPT_CHECK_EQ(local_get(sig + p), v(p, my, 2) | 1);
    MPT_CHECK_EQ(local_get(w32 + N + p), static_cast<int>(v(p, my, 3)));
    MPT_CHECK_EQ(local_get(sig + N + p), v(p, my, 4) | 1);
    MPT_CHECK_EQ(local_get(dat + p), v(p, my, 5));
  }
  gshmem_barrier_all();
  gshmem_free(dat);
  gshmem_free(sig);
  gshmem_free(w32);
}

}  // namespace

int main(int argc, char** argv) {
  // The cases use `stream`; create it once gshmem_init has selected this PE's device. mpt::main runs init and
  // then the cases, so hook the creation in front of the first case.
  static mpt::Registrar first("(create stream)", [] {
    if (!st().gpu) {
      std::fprintf(stderr, "[PE %d] FAIL: mp_stream_gpu needs GPU PEs but this is a CPU PE\n", me());
      gshmem_global_exit(1);
    }
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    MPT_CHECK(stream != nullptr);
  });
  // Registered last but must run first: rotate it to the front.
  auto& c = mpt::cases();
  std::rotate(c.begin(), c.end() - 1, c.end());
  return mpt::main(argc, argv);
}
