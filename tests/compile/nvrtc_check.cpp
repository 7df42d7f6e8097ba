// nvrtc_check: compiles CUDA sources with NVRTC to PTX, as CuPy's RawModule or cuda.core's Program would at run
// time, and fails with NVRTC's log when any does not compile. Usage: nvrtc_check <arch> <source>... -- <options>
// (e.g. nvrtc_check compute_90 k.cu -- -I<gshmem>/include -I<cuda>/include/cccl -std=c++17). No GPU needed.
#include <nvrtc.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: nvrtc_check <arch> <source>... -- <options>\n");
    return 2;
  }
  const std::string arch = std::string("-arch=") + argv[1];
  std::vector<std::string> sources, options{arch};
  bool opts = false;
  for (int i = 2; i < argc; ++i) {
    if (std::string(argv[i]) == "--") opts = true;
    else (opts ? options : sources).push_back(argv[i]);
  }
  std::vector<const char*> option_ptrs;
  for (const auto& o : options) option_ptrs.push_back(o.c_str());
  int failed = 0;
  for (const auto& path : sources) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) {
      std::fprintf(stderr, "nvrtc_check: cannot read %s\n", path.c_str());
      return 2;
    }
    nvrtcProgram prog;
    if (nvrtcCreateProgram(&prog, text.str().c_str(), path.c_str(), 0, nullptr, nullptr) != NVRTC_SUCCESS) return 2;
    const nvrtcResult r = nvrtcCompileProgram(prog, static_cast<int>(option_ptrs.size()), option_ptrs.data());
    size_t log_size = 0;
    nvrtcGetProgramLogSize(prog, &log_size);
    std::string log(log_size, '\0');
    if (log_size) nvrtcGetProgramLog(prog, log.data());
    size_t ptx_size = 0;
    if (r == NVRTC_SUCCESS) nvrtcGetPTXSize(prog, &ptx_size);
    std::printf("nvrtc_check: %s (%s): %s, %zu bytes of PTX\n%s", path.c_str(), argv[1], nvrtcGetErrorString(r),
                ptx_size, log.c_str());
    if (r != NVRTC_SUCCESS) failed = 1;
    nvrtcDestroyProgram(&prog);
  }
  return failed;
}
