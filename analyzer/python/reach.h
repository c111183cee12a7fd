// Program-level passes over the code each program runs (analyzer/python/reach.cpp). Called by
// ProgramModel::build in this order: tests after call resolution; reachability after programs;
// intent after reachability; CUDA order after the call graph.
#pragma once
#include "analyzer/python/model.h"

namespace tl::py {

// Module::is_test for pytest/unittest modules (docs/concepts.md "Test modules").
void mark_test_modules(ProgramModel& pm);
// Program::reached_ids / reached_class_ids: functions and classes reachable from each program's entry.
void compute_reachability(ProgramModel& pm, unsigned threads);
// Whether programs start their walks from the shared walks of the packages they import (hubs; on
// unless a test turns them off to compare: the answers are the same either way).
void set_reach_hubs(bool on);
// Program::accelerator_intent, from the code the program runs (modules and programs on up to
// `threads` threads).
void compute_accelerator_intent(ProgramModel& pm, unsigned threads);
// ProgramModel::cuda_initialised_before, following the calls from each entry in execution order.
void compute_cuda_init_order(ProgramModel& pm);

// Where the device expression `e` (the argument of `.to(e)` or `device=e`, in code program `p`
// runs) can be followed to its values: through parameters to what every call of the program
// passes (or the default), through `self.x` set once in `__init__`, through local assignments and
// `torch.device(...)`. 1: some value is an accelerator; 0: none is; -1: not known.
int device_on_accelerator(const ProgramModel& pm, const Program& p, const Module& m, NodeId e);

// Does call `c` into `f` rule out the branch of f's body holding `node`? An enclosing `if` tests a
// plain parameter (`if context is not None:`, `if verbose:`) that the call fixes, by its argument
// or by leaving the default, so that the branch cannot run on this call.
bool call_rules_out(const ProgramModel& pm, const Call& c, const Function& f, NodeId node);

}  // namespace tl::py
