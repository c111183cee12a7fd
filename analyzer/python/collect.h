#pragma once
#include "analyzer/python/model.h"

namespace tl::py {
// Phase 1: fill a Module's scopes, functions, classes, calls, loops and argparse definitions
// from its tree. Touches nothing outside `m`.
void collect_module(Module& m);
}  // namespace tl::py
