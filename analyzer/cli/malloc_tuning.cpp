// Why: a lint run keeps every file's compact tree and model for the whole run and parses with
// tree-sitter, whose allocations come and go by the million. With glibc's defaults the heap grows
// 128 KiB at a time and every 4 KiB page is a page fault on first touch (31,500 on Debian's torch
// tree, each dear on a virtual machine). glibc.malloc.hugetlb=1 makes malloc ask for transparent
// huge pages on the memory it gets from the system (madvise; the common `madvise` mode of
// /sys/kernel/mm/transparent_hugepage/enabled gives them only on request), and top_pad grows the
// heap 64 MiB at a time so that whole 2 MiB pages fit in it. Side by side on the torch tree
// (bench/README.md, "glibc tuned"): -j 1 19% faster, -j 2 23%, peak RSS about the same. glibc
// reads its tunables only from the environment at start, hence the one re-execution (about a
// millisecond). arena_max=4: glibc gives each thread a heap of its own (up to 8 per core), and
// each heap keeps what its thread freed, its huge pages partly used: at -j 16 on the torch tree
// that was 10-12 MB of peak memory for no measured speed (bench/README.md, "Memory by thread
// count"); the analysis threads beyond four share heaps, each small allocation still served
// from the thread's own cache (tcache) first.
#include "analyzer/cli/malloc_tuning.h"

#include <malloc.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "analyzer/core/limits.h"

namespace tl::cli {
namespace {

constexpr const char* kTunables = "glibc.malloc.hugetlb=1:glibc.malloc.top_pad=67108864:glibc.malloc.arena_max=4";
// set in the re-executed process's environment only, and removed by it at once
constexpr const char* kMarker = "TRAINLINT_MALLOC_TUNED";        // "1": this process was re-executed
constexpr const char* kCallers = "TRAINLINT_CALLER_GLIBC_TUNABLES";  // the caller's GLIBC_TUNABLES, when set

void say(const std::string& what) {
  if (std::getenv("TRAINLINT_TIMING")) std::fprintf(stderr, "trainlint: malloc: %s\n", what.c_str());
}

// Subcommands that gain nothing: the LSP server lives long (a 64 MiB pad kept is memory held), the
// others do little allocation; `run` starts the user's program, which must see their environment.
bool lint_run(int argc, char** argv) {
  if (argc < 2) return true;
  std::string_view first = argv[1];
  for (std::string_view sub : {"lsp", "run", "merge", "rules", "explain", "--version", "--help", "-h"})
    if (first == sub) return false;
  return true;
}

// What children see: the caller's GLIBC_TUNABLES (or none), and neither marker.
std::string restore_environment() {
  const char* callers = std::getenv(kCallers);
  std::string shown = callers ? std::string("'") + callers + "'" : "unset";
  if (callers) setenv("GLIBC_TUNABLES", callers, 1);
  else unsetenv("GLIBC_TUNABLES");
  unsetenv(kCallers);
  unsetenv(kMarker);
  return shown;
}

}  // namespace

void tune_malloc(int argc, char** argv) {
#if defined(__linux__) && defined(__GLIBC__)
  if (std::getenv(kMarker)) {
    std::string shown = restore_environment();
    say(std::string("tuned (") + kTunables + "); GLIBC_TUNABLES for the programs trainlint starts: " + shown);
    return;
  }
  if (!lint_run(argc, argv)) return;
  if (const char* choice = std::getenv("TRAINLINT_MALLOC"); choice && std::string_view(choice) == "system") {
    say("glibc's defaults (TRAINLINT_MALLOC=system)");
    return;
  }
  const char* callers = std::getenv("GLIBC_TUNABLES");
  if (callers && std::strstr(callers, "glibc.malloc.")) {
    say("the caller's GLIBC_TUNABLES, which tunes malloc, kept as it is");
    return;
  }
  // Under a limit on address space (`ulimit -v`) the tuning is the wrong trade: each 64 MiB
  // top_pad, and each thread's heap (64 MiB of address space reserved), count against the limit.
  // One heap, grown as little as glibc grows it, lets a run fit in the least room (a run on the
  // Python fixtures at -j 2 needed about 250 MB tuned, 180 MB so; tests/stress).
  if (address_space_limit()) {
    mallopt(M_ARENA_MAX, 1);
    say("glibc's defaults and one heap (a limit on address space is set)");
    return;
  }
  std::string tunables = callers && *callers ? std::string(callers) + ":" + kTunables : kTunables;
  if (callers) setenv(kCallers, callers, 1);
  setenv("GLIBC_TUNABLES", tunables.c_str(), 1);
  setenv(kMarker, "1", 1);
  std::fflush(nullptr);
  execv("/proc/self/exe", argv);
  // not re-executed (no /proc, say): go on with glibc's defaults
  restore_environment();
  say(std::string("glibc's defaults (re-executing failed: ") + std::strerror(errno) + ")");
#else
  (void)argc;
  (void)argv;
#endif
}

}  // namespace tl::cli
