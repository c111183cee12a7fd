#include "analyzer/core/limits.h"

#include <sys/resource.h>

#include <atomic>

namespace tl {

std::optional<size_t> address_space_limit() {
  static const std::optional<size_t> limit = []() -> std::optional<size_t> {
    rlimit rl{};
    if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return std::nullopt;
    return static_cast<size_t>(rl.rlim_cur);
  }();
  return limit;
}

bool first_to_report_out_of_memory() {
  static std::atomic_flag said = ATOMIC_FLAG_INIT;
  return !said.test_and_set();
}

}  // namespace tl
