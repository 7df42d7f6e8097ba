// mp_collectives_gpu: the reductions' device forms at thread scope (collectives_gpu_red.cuh).
#define MPC_RED_SCOPE mpcg::kThread
#include "collectives_gpu_red.cuh"
