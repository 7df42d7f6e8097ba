// Driver and runtime error texts name the error and say what it is, also where the driver cannot name it (no
// driver, a driver already torn down at exit, an unknown code): transport/cuda_driver.hpp. No GPU needed.
#if GSHMEM_HAVE_CUDA
#include <gtest/gtest.h>

#include <string>

#include "transport/cuda_driver.hpp"

namespace gshmem::cuda {
namespace {

TEST(CudaErrorText, UsesTheDriversNameAndText) {
  EXPECT_EQ(format_error(700, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"),
            "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)");
}

TEST(CudaErrorText, FallsBackToTheBuiltInTable) {
  // cuGetErrorName/String gave nothing (the message used to read "cuMemUnmap failed: CUDA_ERROR_? ()").
  EXPECT_EQ(format_error(CUDA_ERROR_ILLEGAL_ADDRESS, nullptr, nullptr),
            "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)");
  EXPECT_EQ(format_error(CUDA_ERROR_DEINITIALIZED, nullptr, ""), "CUDA_ERROR_DEINITIALIZED (driver shutting down)");
  EXPECT_EQ(format_error(CUDA_ERROR_INVALID_VALUE, "", nullptr), "CUDA_ERROR_INVALID_VALUE (invalid argument)");
  EXPECT_EQ(format_error(CUDA_ERROR_LAUNCH_FAILED, nullptr, nullptr),
            "CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)");
  // Name from the driver, text from the table.
  EXPECT_EQ(format_error(CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", nullptr),
            "CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
}

TEST(CudaErrorText, UnknownCodeIsNamedByNumber) {
  EXPECT_EQ(format_error(123456, nullptr, nullptr), "CUresult 123456 (unknown error code)");
}

TEST(CudaErrorText, EveryCommonCodeHasANameWithOrWithoutADriver) {
  // Whatever this machine has (a driver or none), error_text never prints an empty name or text.
  for (CUresult r : {CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_OUT_OF_MEMORY,
                     CUDA_ERROR_NOT_PERMITTED, CUDA_ERROR_NOT_SUPPORTED, CUDA_ERROR_INVALID_HANDLE}) {
    const std::string t = error_text(r);
    EXPECT_EQ(t.rfind("CUDA_ERROR_", 0), 0u) << t;
    EXPECT_EQ(t.find("()"), std::string::npos) << t;
    EXPECT_EQ(t.find("CUDA_ERROR_?"), std::string::npos) << t;
  }
  EXPECT_EQ(error_text(CUDA_ERROR_ILLEGAL_ADDRESS),
            "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)");
}

TEST(CudaErrorText, RuntimeErrorsCarryNameAndText) {
  EXPECT_EQ(error_text(cudaErrorIllegalAddress), "cudaErrorIllegalAddress (an illegal memory access was encountered)");
}

}  // namespace
}  // namespace gshmem::cuda
#endif
