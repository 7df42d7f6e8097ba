// mp_collectives_gpu: the reductions' device forms at warp scope (collectives_gpu_red.cuh).
#define MPC_RED_SCOPE mpcg::kWarp
#include "collectives_gpu_red.cuh"
