// Shared by the parts of gpu_device_api_ext (device_api_ext_*.cu): the device calls added for NVSHMEM
// compatibility. Each part is its own translation unit (own gshmemi_dstate, no -rdc) and exports one suite.
#pragma once
#include "device_api.hpp"

namespace gt {
void ext_typed_strided_suite(Ctx& c);  // device_api_ext_typed.cu: gshmemx_<T>_{iput,iget}_{warp,block}, all types
// device_api_ext_sized.cu: put<N>_signal[_nbi] in every scope, {iput,iget}<N> warp/block
void ext_sized_suite(Ctx& c);
void ext_team_suite(Ctx& c);           // device_api_ext_team.cu: gshmemx_barrier_warpgroup, gshmemx_mc_ptr
}  // namespace gt
