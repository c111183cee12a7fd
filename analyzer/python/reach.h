// Program-level passes over the code each program runs (analyzer/python/reach.cpp). Called by
// ProgramModel::build in this order: tests after call resolution; reachability after programs;
// intent after reachability; CUDA order after the call graph.
#pragma once
#include "analyzer/python/model.h"

namespace tl::py {

// Module::is_test for pytest/unittest modules (RULES.md "Test modules").
void mark_test_modules(ProgramModel& pm);
// Program::reached / reached_classes: functions and classes reachable from each program's entry.
void compute_reachability(ProgramModel& pm, unsigned threads);
// Program::accelerator_intent, from the code the program runs.
void compute_accelerator_intent(ProgramModel& pm);
// ProgramModel::cuda_initialised_before, following the calls from each entry in execution order.
void compute_cuda_init_order(ProgramModel& pm);

}  // namespace tl::py
