// Host-only C++ (g++, no nvcc) that includes only <nvshmem.h> and then uses what NVSHMEM's header brings in: the
// CUDA driver API's types and enums (as a program that allocates a user buffer with cuMemCreate does), the
// runtime's, and the half / bfloat16 types. Compiling is the test; running checks the values set survive and that
// the sizes are the driver's.
#include <nvshmem.h>

#include <cstdio>
#include <cstring>

int main() {
  CUmemAllocationProp prop;
  std::memset(&prop, 0, sizeof prop);
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 1;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  CUmemAccessDesc access;
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CUmemGenericAllocationHandle handle = 0;
  CUdeviceptr dptr = 0;
  CUresult rc = CUDA_SUCCESS;
  cudaStream_t stream = nullptr;
  cudaError_t err = cudaSuccess;
  __half h = __float2half(1.5f);
  __nv_bfloat16 b = __float2bfloat16(-2.0f);
  int bad = 0;
  if (access.location.id != 1 || access.flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE) ++bad;
  if (__half2float(h) != 1.5f || __bfloat162float(b) != -2.0f) ++bad;
  if (sizeof h != 2 || sizeof b != 2 || sizeof dptr != 8 || sizeof handle != 8) ++bad;
  if (rc != CUDA_SUCCESS || err != cudaSuccess || stream != nullptr) ++bad;
  std::printf("driver_types: %s\n", bad ? "FAIL" : "PASS");
  return bad;
}
