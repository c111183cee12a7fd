// The one table of every rule code, sorted by code. Codes are stable and never reused.
// A rule with a null check is in the catalog (RULES.md) but has no Python implementation yet.
#include "rules/registry.h"

#include "rules/python/rules.h"

namespace tl {

const std::vector<RuleInfo>& registry() {
  using S = Severity;
  using namespace rules;
  static const std::vector<RuleInfo> table = {
      {"TL101", "gc-collect-per-step", S::Warning, "Python", "`gc.collect()` runs every training step", "site", check_gc_collect_per_step},
      {"TL102", "empty-cache-per-step", S::Warning, "Python, C++", "`torch.cuda.empty_cache()` runs every step", "site", nullptr},
      {"TL103", "checkpoint-per-step", S::Warning, "Python, C++", "a model/optimizer checkpoint is saved every step", "site", check_checkpoint_per_step},
      {"TL104", "artifact-save-per-step", S::Warning, "Python", "an image/plot/sample file is written every step", "site", check_artifact_save_per_step},
      {"TL105", "host-sync-per-step", S::Info, "Python, C++", "a host-device synchronisation runs every step", "site", nullptr},
      {"TL106", "log-per-step", S::Info, "Python", "printing or logging runs every step", "site", nullptr},
      {"TL107", "setup-in-step", S::Warning, "Python, C++", "an object that should be built once is built every step", "site", nullptr},
      {"TL201", "dataloader-no-workers", S::Warning, "Python, C++", "DataLoader loads batches in the training process (no workers)", "data-wait", check_dataloader_no_workers},
      {"TL202", "dataloader-no-pin-memory", S::Warning, "Python", "DataLoader without pinned memory in a program training on an accelerator", "data-wait+memcpy", check_dataloader_no_pin_memory},
      {"TL203", "dataloader-workers-not-persistent", S::Info, "Python", "DataLoader workers are restarted every epoch", "worker-start", nullptr},
      {"TL204", "pil-decode", S::Info, "Python", "images are decoded with PIL on the data path", "site", check_pil_decode},
      {"TL205", "load-in-getitem", S::Warning, "Python", "a file that does not depend on the index is loaded in `__getitem__`", "site", check_load_in_getitem},
      {"TL301", "data-parallel", S::Warning, "Python, C++", "`nn.DataParallel` instead of DistributedDataParallel", "data-parallel", check_data_parallel},
      {"TL302", "cuda-visible-devices-after-init", S::Warning, "Python", "`CUDA_VISIBLE_DEVICES` is set after CUDA is initialised", "none", nullptr},
      {"TL303", "gpu-never-used", S::Warning, "Python", "a training program never places anything on an accelerator", "gpu-used", nullptr},
      {"TL304", "eval-without-no-grad", S::Warning, "Python", "evaluation runs the model outside `torch.no_grad()`", "site", nullptr},
      {"TL305", "tensor-created-then-moved", S::Warning, "Python, C++", "a tensor is built on the CPU and copied to the accelerator every step", "site+memcpy", nullptr},
      {"TL306", "ddp-accumulation-without-no-sync", S::Warning, "Python", "DDP gradient accumulation all-reduces on every micro-step", "site", nullptr},
      {"TL307", "ddp-find-unused-parameters", S::Info, "Python", "DDP with `find_unused_parameters=True`", "none", nullptr},
      {"TL401", "tensor-to-discarded", S::Error, "Python, C++", "the result of a tensor `.to()`/`.cuda()` is dropped", "none", nullptr},
      {"TL402", "torch-load-no-map-location", S::Info, "Python", "`torch.load` without `map_location`", "none", nullptr},
      {"TL403", "environ-setdefault-extra-args", S::Error, "Python", "`os.environ.setdefault` with more than two arguments", "none", nullptr},
      {"TL404", "dataparallel-state-dict", S::Warning, "Python", "a DataParallel wrapper's state_dict is saved", "none", nullptr},
      {"TL501", "cudnn-benchmark-off", S::Info, "Python", "convolutions on an accelerator without `cudnn.benchmark`", "none", nullptr},
      {"TL502", "no-mixed-precision", S::Info, "Python", "training on an accelerator without mixed precision", "none", nullptr},
      {"TL503", "zero-grad-set-to-false", S::Info, "Python", "`zero_grad(set_to_none=False)`", "none", nullptr},
      {"TL504", "debug-api-left-on", S::Warning, "Python", "an autograd debugging API is left on in training", "site", nullptr},
      {"TL901", "data-stall", S::Warning, "runtime only", "waiting for batches exceeds 5% of step time", "data-wait", nullptr},
      {"TL902", "gc-pauses", S::Warning, "runtime only", "automatic GC pauses exceed 1% of step time", "gc", nullptr},
      {"TL903", "gpu-idle", S::Info, "runtime only", "the GPU is idle for more than half of the steps' wall time", "gpu", nullptr},
  };
  return table;
}

}  // namespace tl
