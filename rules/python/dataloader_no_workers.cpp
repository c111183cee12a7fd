// TL201 dataloader-no-workers: DataLoader with no num_workers, a literal 0, or a name whose
// only value is 0 (argparse defaults count); not for in-memory, tokenized or live-state datasets.
#include "rules/python/common.h"
#include "rules/python/rules.h"

namespace tl::rules {

void check_dataloader_no_workers(RuleContext& ctx) {
  for (auto& c : ctx.mod.calls) {
    if (!is_dataloader_ctor(c.qname)) continue;
    py::ValueSet v = worker_values(ctx, c);
    if (!loads_in_process(v)) continue;
    // after the cheap test: it reads every use of the loader's name in the module
    if (one_shot_loader(ctx, c)) continue;
    // Samples already in memory (workers add copies, no overlap), or read from state the
    // training process changes (workers would iterate stale copies): the model knows.
    py::NodeId ds = ctx.model.loader_dataset(ctx.mod, c);
    using DS = py::ProgramModel::DatasetStorage;
    DS storage = ds != py::kNone ? ctx.model.dataset_storage(ctx.mod, ds) : DS::Unknown;
    if (storage == DS::InMemory || storage == DS::LiveState || storage == DS::Tokens || storage == DS::Indices ||
        storage == DS::OnDevice || storage == DS::HostValues)
      continue;
    // a collate_fn that moves each batch to the GPU: workers would each have to start CUDA
    if (collate_moves_to_device(ctx, c)) continue;
    bool missing = v.values.empty();
    std::string msg = std::string(missing ? "DataLoader has no `num_workers`" : "DataLoader has `num_workers=0`") +
                      (trains_on_accelerator(ctx)
                           ? ": batches are loaded and collated in the training process, so the GPU waits for "
                             "every batch; use worker processes (`num_workers>0`)"
                           : ": batches are loaded and collated in the training process, between steps, adding "
                             "to every step's time; use worker processes (`num_workers>0`)");
    // Each worker iterates its own copy of an IterableDataset: one that never asks which worker
    // it is would yield its whole stream from every worker.
    if (storage == DS::Unsharded)
      msg += ", and split the stream between them in `__iter__` with `torch.utils.data.get_worker_info()`, "
             "or every worker yields every sample";
    ctx.report(c.node, msg);
  }
}

}  // namespace tl::rules
