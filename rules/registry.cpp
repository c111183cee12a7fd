// The one table of every rule code, sorted by code. Codes are stable and never reused.
// Each row: the rule's metadata, then its Python check and its C++ check. A null check means the
// rule is in the catalog (docs/concepts.md) but has no implementation for that language yet.
#include "rules/registry.h"

#include <cctype>

#include "rules/docs.h"
#include "rules/cpp/rules.h"
#include "rules/python/rules.h"

namespace tl {

const std::vector<RuleEntry>& registry() {
  using S = Severity;
  using namespace rules;
  static const std::vector<RuleEntry> table = {
      {{"TL001", "unused-suppression", S::Info, "Python, C++", "a suppression comment suppresses no finding", "none", true, true}, nullptr, nullptr},
      {{"TL101", "gc-collect-per-step", S::Warning, "Python", "`gc.collect()` runs every training step", "site"}, check_gc_collect_per_step, nullptr},
      {{"TL102", "empty-cache-per-step", S::Warning, "Python, C++", "`torch.cuda.empty_cache()` runs every step", "site"}, check_empty_cache_per_step, cpp::check_empty_cache_per_step},
      {{"TL103", "checkpoint-per-step", S::Warning, "Python, C++", "a model/optimizer checkpoint is saved every step", "site"}, check_checkpoint_per_step, cpp::check_checkpoint_per_step},
      {{"TL104", "artifact-save-per-step", S::Warning, "Python", "an image/plot/sample file is written every step", "site"}, check_artifact_save_per_step, nullptr},
      {{"TL105", "host-sync-per-step", S::Info, "Python, C++", "a host-device synchronisation runs every step", "site"}, check_host_sync_per_step, cpp::check_host_sync_per_step},
      {{"TL106", "log-per-step", S::Info, "Python", "printing or logging runs every step", "site"}, check_log_per_step, nullptr},
      {{"TL107", "setup-in-step", S::Warning, "Python, C++", "an object that should be built once is built every step", "site"}, check_setup_in_step, cpp::check_setup_in_step},
      {{"TL201", "dataloader-no-workers", S::Warning, "Python, C++", "DataLoader loads batches in the training process (no workers)", "data-wait"}, check_dataloader_no_workers, cpp::check_dataloader_no_workers},
      {{"TL202", "dataloader-no-pin-memory", S::Warning, "Python", "DataLoader without pinned memory in a program training on an accelerator", "data-wait+memcpy"}, check_dataloader_no_pin_memory, nullptr},
      {{"TL203", "dataloader-workers-not-persistent", S::Info, "Python", "DataLoader workers are restarted every epoch", "worker-start"}, check_dataloader_workers_not_persistent, nullptr},
      {{"TL204", "pil-decode", S::Info, "Python", "images are decoded with PIL on the data path", "site"}, check_pil_decode, nullptr},
      {{"TL205", "load-in-getitem", S::Warning, "Python", "a file that does not depend on the index is loaded in `__getitem__`", "site"}, check_load_in_getitem, nullptr},
      {{"TL301", "data-parallel", S::Warning, "Python, C++", "`nn.DataParallel` instead of DistributedDataParallel", "data-parallel"}, check_data_parallel, cpp::check_data_parallel},
      {{"TL302", "cuda-visible-devices-after-init", S::Warning, "Python", "`CUDA_VISIBLE_DEVICES` is set after CUDA is initialised", "none"}, check_cuda_visible_devices_after_init, nullptr},
      {{"TL303", "gpu-never-used", S::Warning, "Python", "a training program never places anything on an accelerator", "gpu-used"}, check_gpu_never_used, nullptr},
      {{"TL304", "eval-without-no-grad", S::Warning, "Python, C++", "evaluation runs the model outside `torch.no_grad()`", "site"}, check_eval_without_no_grad, cpp::check_eval_without_no_grad},
      {{"TL305", "tensor-created-then-moved", S::Warning, "Python, C++", "a tensor is built on the CPU and copied to the accelerator every step", "site+memcpy"}, check_tensor_created_then_moved, cpp::check_tensor_created_then_moved},
      {{"TL306", "ddp-accumulation-without-no-sync", S::Warning, "Python", "DDP gradient accumulation all-reduces on every micro-step", "site"}, check_ddp_accumulation_without_no_sync, nullptr},
      {{"TL307", "ddp-find-unused-parameters", S::Info, "Python", "DDP with `find_unused_parameters=True`", "none"}, check_ddp_find_unused_parameters, nullptr},
      {{"TL401", "tensor-to-discarded", S::Error, "Python, C++", "the result of a tensor `.to()`/`.cuda()` is dropped", "none"}, check_tensor_to_discarded, cpp::check_tensor_to_discarded},
      {{"TL402", "torch-load-no-map-location", S::Info, "Python", "`torch.load` without `map_location`", "none"}, check_torch_load_no_map_location, nullptr},
      {{"TL403", "environ-setdefault-extra-args", S::Error, "Python", "`os.environ.setdefault` with more than two arguments", "none"}, check_environ_setdefault_extra_args, nullptr},
      {{"TL404", "dataparallel-state-dict", S::Warning, "Python", "a DataParallel wrapper's state_dict is saved", "none"}, check_dataparallel_state_dict, nullptr},
      {{"TL501", "cudnn-benchmark-off", S::Info, "Python, C++", "convolutions on an accelerator without `cudnn.benchmark`", "none"}, check_cudnn_benchmark_off, cpp::check_cudnn_benchmark_off},
      {{"TL502", "no-mixed-precision", S::Info, "Python", "training on an accelerator without mixed precision", "none"}, check_no_mixed_precision, nullptr},
      {{"TL503", "zero-grad-set-to-false", S::Info, "Python", "`zero_grad(set_to_none=False)`", "none"}, check_zero_grad_set_to_false, nullptr},
      {{"TL504", "debug-api-left-on", S::Warning, "Python", "an autograd debugging API is left on in training", "site"}, check_debug_api_left_on, nullptr},
      {{"TL901", "data-stall", S::Warning, "runtime only", "waiting for batches exceeds 5% of step time", "data-wait"}, nullptr, nullptr},
      {{"TL902", "gc-pauses", S::Warning, "runtime only", "automatic GC pauses exceed 1% of step time", "gc"}, nullptr, nullptr},
      {{"TL903", "gpu-idle", S::Info, "runtime only", "the GPU is idle for more than half of the steps' wall time", "gpu"}, nullptr, nullptr},
  };
  return table;
}

const RuleEntry* find_rule(std::string_view s) {
  for (auto& r : registry())
    if (r.code == s || r.slug == s) return &r;
  // case-insensitive code
  if (s.size() == 5)
    for (auto& r : registry()) {
      bool eq = true;
      for (size_t i = 0; i < 5; ++i)
        if (std::toupper(static_cast<unsigned char>(s[i])) != r.code[i]) eq = false;
      if (eq) return &r;
    }
  return nullptr;
}

std::string_view rule_doc(std::string_view code) {
  for (auto& d : rule_docs())
    if (d.code == code) return d.text;
  return {};
}

}  // namespace tl
