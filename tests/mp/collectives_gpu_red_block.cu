// mp_collectives_gpu: the reductions' device forms at block scope (collectives_gpu_red.cuh).
#define MPC_RED_SCOPE mpcg::kBlock
#include "collectives_gpu_red.cuh"
