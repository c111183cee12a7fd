// The process's limit on address space (`ulimit -v`, RLIMIT_AS), which three parts of a run size
// themselves by: the parse arena (off under one), the analysis threads' stacks (a share of it) and
// the malloc tuning (left out under one); and the advice every out-of-memory message ends with.
#pragma once
#include <cstddef>
#include <optional>

namespace tl {

// The limit in bytes, or nothing where there is none (read once; the limit cannot grow back).
std::optional<size_t> address_space_limit();

inline constexpr const char* kOutOfMemoryAdvice = "fewer threads (-j) or a higher memory limit would leave the run room";

// True for the first caller only: the one that says the run is out of memory (threads that run
// out at the same moment would each say it).
bool first_to_report_out_of_memory();

}  // namespace tl
