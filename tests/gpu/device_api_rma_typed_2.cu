// gpu_device_api, part: typed free RMA functions, second half of the types.
#define GT_PART 2
#include "rma_typed.inc"
