// Small matching helpers shared by the Python rules. Loop, guard, and value logic lives in the
// model (analyzer/python), never here.
#pragma once
#include <initializer_list>
#include <string_view>

#include "rules/registry.h"

namespace tl::rules {

inline bool qname_in(std::string_view q, std::initializer_list<std::string_view> names) {
  for (auto n : names)
    if (q == n) return true;
  return false;
}

// The DataLoader constructor, under any of its import paths.
inline bool is_dataloader_ctor(std::string_view q) {
  return q == "torch.utils.data.DataLoader" || q == "torch.utils.data.dataloader.DataLoader";
}

// Reports `node` when it runs every step; the message gets the step loop in its notes.
inline void report_if_per_step(RuleContext& ctx, py::NodeId node, const std::string& message) {
  if (auto sc = ctx.model.runs_every_step(ctx.mod, node)) ctx.report_per_step(node, message, *sc);
}

}  // namespace tl::rules
