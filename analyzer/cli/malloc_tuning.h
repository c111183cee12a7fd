// glibc's allocator tuned for a lint run: huge pages and a large heap pad (malloc_tuning.cpp).
#pragma once

namespace tl::cli {

// Called first thing in main(). For a lint run (not `lsp`, `run`, `merge`, `rules` or `explain`)
// on Linux with glibc, re-executes trainlint once with glibc's malloc tunables for transparent
// huge pages and a 64 MiB heap pad, which glibc reads only at process start; the
// re-executed process then puts the caller's GLIBC_TUNABLES back, so that no program trainlint
// starts inherits the tuning. Returns normally when nothing is to be done, when the caller's
// GLIBC_TUNABLES already tunes malloc, when TRAINLINT_MALLOC=system asks for glibc's defaults,
// or when the re-execution fails. With TRAINLINT_TIMING set it says which it was on stderr.
void tune_malloc(int argc, char** argv);

}  // namespace tl::cli
