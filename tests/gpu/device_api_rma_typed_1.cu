// gpu_device_api, part: typed free RMA functions, first half of the types (and the host half/bfloat16 forms).
#define GT_PART 1
#include "rma_typed.inc"
