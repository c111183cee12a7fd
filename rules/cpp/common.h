// Small helpers shared by the C++ rules. Loop, guard and type logic lives in the model
// (analyzer/cpp), never here.
#pragma once
#include <string>

#include "rules/cpp/rule_context.h"

namespace tl::cpp {

// docs/concepts.md "Messages follow the program's facts".
inline bool on_accelerator(const RuleContext& ctx, const Site& s) { return ctx.model.on_cuda(s.tu); }

// Reports the site when it runs every step, with the accelerator or the host message. Returns
// the finding (valid until the next report) or null.
inline Finding* report_if_per_step(RuleContext& ctx, const Site& s, const std::string& accel_message,
                                   const std::string& host_message) {
  auto sc = ctx.model.runs_every_step(s);
  if (!sc) return nullptr;
  return &ctx.report_per_step(s, on_accelerator(ctx, s) ? accel_message : host_message, *sc);
}

}  // namespace tl::cpp
