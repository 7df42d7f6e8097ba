// Device state: what kernels using <gshmem/device.cuh> see of this PE (gshmem_device_state_t), built here in
// device memory (peer-base table, team table) and delivered two ways: by value as a kernel argument
// (gshmemx_device_handle) and into every registered translation unit's own __constant__ copy (the setters that
// device.cuh registers), so user code needs no -rdc and no device library.
//
// Heap layout: the library's first kHeapInternalBytes of every heap are shared with transport/gpu.cu. gpu.cu owns
// [0, kStreamBarrierEnd) (stream-barrier flags [kMaxTeams][kMaxRounds] uint64, then per-team stream epochs
// [kMaxTeams] uint64) and the word after it (the init trial of its stream memory operations, written by the
// previous PE). The device API owns [kDeviceBarrierOffset, kDeviceInternalEnd):
//   kDeviceBarrierOffset: device-barrier flags [kMaxTeams][kMaxRounds] uint64, written by peers
//   kDeviceEpochOffset:   device-barrier epochs [kMaxTeams] uint64, this PE's own count of device barriers
// Both are zeroed at the first publish (before init's closing barrier) and per slot when a team is destroyed.
// The collectives (gshmem/coll/algorithms.h, every form: host on CPU PEs, stream kernels, device API) own
// [kCollOffset, kCollEnd), the collective workspace, on CPU and GPU PEs alike:
//   kCollOffset:      sync flags [kMaxTeams][kMaxRounds] uint64, written by peers
//   kCollEpochOffset: sync epochs [kMaxTeams] uint64, this PE's own count of collective syncs per team slot
//   kCollArgsOffset:  call signatures [kMaxTeams] of kCollArgsBytes: what this PE's latest host collective on the
//                     slot was called with (CPU PEs; written before the entry sync, read by the members after it,
//                     src/api/collectives.cpp); never needs zeroing
//   kCollLLOffset:    the LL area of small collectives (gshmem/coll/algorithms.h, "LL"): its head (kLLSeqBytes)
//                     holds this PE's LL call count per slot [kMaxTeams] uint64, then the tally of finished CTAs
//                     of a multi-CTA LL kernel per slot [kMaxTeams] uint32, then (coll::kSplitOffset) the words of
//                     a multi-CTA kernel's own syncs [kMaxTeams][coll::kSplitWords] uint64; then two buffers of
//                     kLLBufBytes per slot, written by peers
//   kCollChunkOffset: right after the LL area (device code finds it there): the two-shot broadcast's chunk flags
//                     [kMaxTeams] of coll::kBcastFlagBytes, written by the root of each call
//   kCollStagedOffset: coll::kStagedFromLL past the LL area: the staged buffers of mid-sized collectives, two of
//                     coll::kStagedBufBytes per predefined slot below coll::kStagedSlots (flags, then sections),
//                     written by peers
// Zeroed per slot when a split (re)uses the slot, before the split's closing parent barrier (TeamTable::reset_slot
// in team/team.cpp); fresh heaps start zeroed (host memfd; GPU PEs zero it at the first publish). The rest of the
// internal area, up to kHeapInternalBytes, is free.
#pragma once
#include <cstddef>
#include <cstdint>

#include "gshmem/coll/algorithms.h"
#include "gshmem/device/state.h"
#include "runtime/control_segment.hpp"
#include "runtime/runtime.hpp"

namespace gshmem::device_state {

inline constexpr std::size_t kStreamBarrierEnd =
    sizeof(std::uint64_t) * kMaxTeams * kMaxRounds + sizeof(std::uint64_t) * kMaxTeams;  // gpu.cu's kInternalUsed
inline constexpr std::size_t kDeviceBarrierOffset = 32 * 1024;
inline constexpr std::size_t kDeviceBarrierBytes = sizeof(std::uint64_t) * kMaxTeams * kMaxRounds;
inline constexpr std::size_t kDeviceEpochOffset = kDeviceBarrierOffset + kDeviceBarrierBytes;
inline constexpr std::size_t kDeviceInternalEnd = kDeviceEpochOffset + sizeof(std::uint64_t) * kMaxTeams;
inline constexpr std::size_t kCollOffset = 64 * 1024;
inline constexpr std::size_t kCollSlotBytes = sizeof(std::uint64_t) * kMaxRounds;
inline constexpr std::size_t kCollEpochOffset = kCollOffset + kCollSlotBytes * kMaxTeams;
inline constexpr std::size_t kCollArgsOffset = kCollEpochOffset + sizeof(std::uint64_t) * kMaxTeams;
inline constexpr std::size_t kCollArgsBytes = 4 * sizeof(std::uint64_t);
inline constexpr std::size_t kCollEnd = kCollArgsOffset + kCollArgsBytes * kMaxTeams;
inline constexpr std::size_t kCollLLOffset = 128 * 1024;
inline constexpr std::size_t kCollLLEnd = kCollLLOffset + coll::kLLAreaBytes;
inline constexpr std::size_t kCollChunkOffset = kCollLLEnd;
inline constexpr std::size_t kCollChunkEnd = kCollChunkOffset + coll::kBcastFlagBytes * kMaxTeams;
inline constexpr std::size_t kCollStagedOffset = kCollLLOffset + coll::kStagedFromLL;
inline constexpr std::size_t kCollStagedEnd = kCollStagedOffset + coll::kStagedAreaBytes;
static_assert(kCollChunkEnd <= kCollStagedOffset, "the staged buffers overlap the two-shot broadcast's chunk flags");
static_assert(kCollStagedEnd <= kHeapInternalBytes, "the collectives' staged buffers outgrew kHeapInternalBytes");
static_assert(coll::kStagedSlots <= GSHMEM_TEAMS_MIN, "staged buffers only for predefined slots (never reset)");
static_assert(coll::kStagedFromLL >= coll::kLLAreaBytes + coll::kBcastFlagBytes * kMaxTeams,
              "coll::kStagedFromLL must lie past the LL area and the chunk flags");
static_assert(kCollChunkEnd <= kHeapInternalBytes, "the two-shot broadcast's chunk flags outgrew kHeapInternalBytes");
static_assert(kCollEnd <= kCollLLOffset, "collective workspace overlaps the LL area");
static_assert(kCollLLEnd <= kHeapInternalBytes, "the collectives' LL area outgrew kHeapInternalBytes");
static_assert(sizeof(std::uint64_t) * kMaxTeams <= coll::kLLTallyOffset &&
                  coll::kLLTallyOffset + sizeof(std::uint32_t) * kMaxTeams <= coll::kLLSeqBytes,
              "LL call counts and part tallies outgrew their head");
static_assert(coll::kLLTallyOffset + sizeof(std::uint32_t) * kMaxTeams <= coll::kSplitOffset &&
                  coll::kSplitOffset + sizeof(std::uint64_t) * coll::kSplitWords * kMaxTeams <= coll::kLLSeqBytes,
              "the split kernels' sync words overlap the LL tallies or outgrew the LL area's head");
static_assert(kDeviceInternalEnd <= kCollOffset, "collective workspace overlaps the device-barrier area");
static_assert(kCollEnd <= kHeapInternalBytes, "collective workspace outgrew kHeapInternalBytes");
static_assert(kStreamBarrierEnd + 8 <= kDeviceBarrierOffset, "device-barrier flags overlap the stream-barrier area");
static_assert(kDeviceInternalEnd <= kHeapInternalBytes, "device API internal area outgrew kHeapInternalBytes");
static_assert(kMaxTeams == GSHMEM_DEVICE_MAX_TEAMS && kMaxRounds == GSHMEM_DEVICE_MAX_ROUNDS,
              "gshmem/device/state.h constants must match the library's team limits");

// Rebuilds the device tables from `rt` (peer bases, teams, heap size) and calls every registered setter. Call at
// the end of init (after the GPU context exists, before the closing barrier) and after anything that changes the
// state: team split/destroy, heap growth. No-op for CPU PEs. Throws Error naming the failing CUDA call.
void publish(Runtime& rt);

// At finalize, before the heap goes: every registered translation unit gets a state of version 0 (its kernels then
// trap with a clear message instead of touching freed memory), and the device tables are freed. Never throws.
void reset(Runtime& rt) noexcept;

// GSHMEM_COLL_LL_BYTES resolved: -1 (unset) is 128 KiB on GPU PEs and 0 on CPU PEs (whose host collectives keep the
// entry sync, where members' calls are compared); checked (0 to kLLBufBytes / 2). Throws Error naming `call`.
std::size_t coll_ll_limit(bool gpu_pe, const char* call);

// GSHMEM_COLL_STAGED_BYTES resolved: -1 (unset) is coll::kStagedDefaultBytes on GPU PEs and 0 on CPU PEs (as LL);
// checked (0 to coll::kStagedDefaultBytes). Throws Error naming `call`.
std::size_t coll_staged_limit(bool gpu_pe, const char* call);

// The state last published (version 0 if none, or on CPU PEs).
gshmem_device_state_t current();

}  // namespace gshmem::device_state
