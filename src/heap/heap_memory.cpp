#include "heap/heap_memory.hpp"

#include <algorithm>
#include <cstring>

#include "runtime/error.hpp"

namespace gshmem::heap {

StepStatus step_ok() { return StepStatus{}; }

StepStatus step_error(std::int32_t code, const std::string& text, std::int32_t status) {
  StepStatus s;
  s.code = code;
  s.status = code == StepStatus::kNoMemory ? GSHMEM_ERROR_OUT_OF_MEMORY : status;
  std::size_t n = std::min(text.size(), sizeof(s.text) - 1);
  std::memcpy(s.text, text.data(), n);
  s.text[n] = '\0';
  return s;
}

StepStatus agree(bootstrap::Bootstrap& boot, const StepStatus& mine) {
  std::vector<StepStatus> all(static_cast<std::size_t>(boot.size()));
  boot.allgather(&mine, all.data(), sizeof(StepStatus));
  // The worst outcome wins (kFailed over kNoMemory), reported for the lowest PE that had it.
  std::size_t worst = 0;
  for (std::size_t pe = 1; pe < all.size(); ++pe)
    if (all[pe].code > all[worst].code) worst = pe;
  const StepStatus& s = all[worst];
  if (s.code == StepStatus::kOk) return step_ok();
  std::string text(s.text, strnlen(s.text, sizeof(s.text)));
  return step_error(s.code, "PE " + std::to_string(worst) + ": " + text, s.status);
}

void agree_or_throw(bootstrap::Bootstrap& boot, const StepStatus& mine, const char* what) {
  StepStatus all = agree(boot, mine);
  if (all.code == StepStatus::kOk) return;
  throw Error(all.status, std::string(what) + ": " + all.text);
}

}  // namespace gshmem::heap
