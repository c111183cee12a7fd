// TL202 dataloader-no-pin-memory: DataLoader without pin_memory=True in a program that trains on
// an accelerator; not for rows of token ids tokenized ahead.
#include <optional>

#include "rules/python/common.h"
#include "rules/python/fix_edits.h"
#include "rules/python/rules.h"

namespace tl::rules {

namespace {

// `pin_memory=True` added, or a literal `False` (keyword or the 8th positional argument) turned
// into `True`; none when the value comes from a variable or a `**kwargs` dict.
std::optional<Fix> pin_memory_fix(RuleContext& ctx, const py::Call& c) {
  const auto& t = ctx.tree;
  py::NodeId args = t.field(c.node, py::F::Arguments);
  if (args == py::kNone) return std::nullopt;
  for (py::NodeId a : t.named_child_range(args))
    if (t.is(a, py::K::DictionarySplat) || t.is(a, py::K::ListSplat)) return std::nullopt;
  Fix fix;
  fix.title = "Pass `pin_memory=True`";
  fix.applicability = Applicability::Safe;
  py::NodeId v = ctx.model.keyword_arg(ctx.mod, c, "pin_memory");
  if (v == py::kNone) v = ctx.model.positional_arg(ctx.mod, c, 7);
  if (v != py::kNone) {
    if (!t.is(v, py::K::False)) return std::nullopt;
    fix.edits.push_back(replace_node(ctx.mod, v, "True"));
  } else {
    fix.edits = add_argument(ctx.mod, c.node, "pin_memory=True");
  }
  if (fix.edits.empty()) return std::nullopt;
  return fix;
}

// Does the module copy anything with `non_blocking=True` (`.to(device, non_blocking=True)`,
// `.cuda(non_blocking=True)`), or use Lightning, whose trainers move batches to a GPU that way?
bool copies_non_blocking(const RuleContext& ctx) {
  for (auto& q : ctx.mod.imported_modules)
    if (q == "lightning" || q == "pytorch_lightning" || q.starts_with("lightning.") || q.starts_with("pytorch_lightning."))
      return true;
  for (auto& c : ctx.mod.calls) {
    if (c.receiver == py::kNone || !(c.method == "to" || c.method == "cuda")) continue;
    py::NodeId v = ctx.model.keyword_arg(ctx.mod, c, "non_blocking");
    if (v != py::kNone && !ctx.tree.is(v, py::K::False)) return true;
  }
  return false;
}

}  // namespace

void check_dataloader_no_pin_memory(RuleContext& ctx) {
  if (!ctx.model.programs_use_accelerator(ctx.mod)) return;
  for (auto& c : ctx.mod.calls) {
    if (!is_dataloader_ctor(c.qname)) continue;
    // the loader is built in a program that trains on an accelerator, not only defined in a
    // module one imports (a library's demo or test fixture no entry script runs)
    if (!ctx.model.runs_in_training_accelerator_program(ctx.mod, c.node)) continue;
    // rows of token ids tokenized ahead, or indices whose features the step gathers itself: a
    // batch is a few KB, and pinning it saves microseconds; samples of strings and numbers hold no
    // tensor to pin, and samples already on the accelerator cannot be pinned at all
    py::NodeId ds = ctx.model.loader_dataset(ctx.mod, c);
    using DS = py::ProgramModel::DatasetStorage;
    DS storage = ds != py::kNone ? ctx.model.dataset_storage(ctx.mod, ds) : DS::Unknown;
    if (storage == DS::Tokens || storage == DS::Indices || storage == DS::OnDevice || storage == DS::HostValues)
      continue;
    // samples in memory served without workers: the loader would pin each batch in the training
    // process itself, one more copy in the same thread as the copy it speeds up, unless the
    // module copies batches with `non_blocking=True` (then pinned memory lets the copy overlap)
    if (storage == DS::InMemory && !copies_non_blocking(ctx) && loads_in_process(worker_values(ctx, c))) continue;
    // a collate_fn that moves each batch to the GPU: there is nothing left on the host to pin
    if (collate_moves_to_device(ctx, c)) continue;
    py::ValueSet v = ctx.model.keyword_values(ctx.mod, c, "pin_memory", 7);
    bool all_false = v.all([&](const py::Literal& l) { return !v.is_truthy_literal(l); }, /*absent_ok=*/true);
    if (!all_false) continue;
    // last: it reads every use of the loader's name in the module
    if (one_shot_loader(ctx, c)) continue;
    Finding& f = ctx.report(c.node, "DataLoader without `pin_memory=True` in a program that runs on an accelerator: "
                                    "every host-to-device copy of a batch goes through pageable memory and cannot "
                                    "overlap compute");
    f.fix = pin_memory_fix(ctx, c);
  }
}

}  // namespace tl::rules
