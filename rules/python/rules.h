// Python rule entry points; rules/registry.cpp lists them in one sorted table.
#pragma once
#include "rules/python/rule_context.h"

namespace tl::rules {
void check_gc_collect_per_step(RuleContext& ctx);        // TL101
void check_empty_cache_per_step(RuleContext& ctx);       // TL102
void check_checkpoint_per_step(RuleContext& ctx);        // TL103
void check_artifact_save_per_step(RuleContext& ctx);     // TL104
void check_host_sync_per_step(RuleContext& ctx);         // TL105
void check_log_per_step(RuleContext& ctx);               // TL106
void check_setup_in_step(RuleContext& ctx);              // TL107
void check_dataloader_no_workers(RuleContext& ctx);      // TL201
void check_dataloader_no_pin_memory(RuleContext& ctx);   // TL202
void check_dataloader_workers_not_persistent(RuleContext& ctx);  // TL203
void check_pil_decode(RuleContext& ctx);                 // TL204
void check_load_in_getitem(RuleContext& ctx);            // TL205
void check_data_parallel(RuleContext& ctx);              // TL301
void check_cuda_visible_devices_after_init(RuleContext& ctx);  // TL302
void check_gpu_never_used(RuleContext& ctx);             // TL303
void check_eval_without_no_grad(RuleContext& ctx);       // TL304
void check_tensor_created_then_moved(RuleContext& ctx);  // TL305
void check_ddp_accumulation_without_no_sync(RuleContext& ctx);  // TL306
void check_ddp_find_unused_parameters(RuleContext& ctx); // TL307
void check_tensor_to_discarded(RuleContext& ctx);        // TL401
void check_torch_load_no_map_location(RuleContext& ctx); // TL402
void check_environ_setdefault_extra_args(RuleContext& ctx);  // TL403
void check_dataparallel_state_dict(RuleContext& ctx);    // TL404
void check_cudnn_benchmark_off(RuleContext& ctx);        // TL501
void check_no_mixed_precision(RuleContext& ctx);         // TL502
void check_zero_grad_set_to_false(RuleContext& ctx);     // TL503
void check_debug_api_left_on(RuleContext& ctx);          // TL504
}  // namespace tl::rules
