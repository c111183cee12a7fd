// The C++ checks, one file per rule (rules/cpp/<slug>.cpp). The registry's cpp slot points here.
#pragma once
#include "rules/cpp/rule_context.h"

namespace tl::cpp {

void check_empty_cache_per_step(RuleContext& ctx);        // TL102
void check_checkpoint_per_step(RuleContext& ctx);         // TL103
void check_host_sync_per_step(RuleContext& ctx);          // TL105
void check_setup_in_step(RuleContext& ctx);               // TL107
void check_dataloader_no_workers(RuleContext& ctx);       // TL201
void check_data_parallel(RuleContext& ctx);               // TL301
void check_eval_without_no_grad(RuleContext& ctx);        // TL304
void check_tensor_created_then_moved(RuleContext& ctx);   // TL305
void check_tensor_to_discarded(RuleContext& ctx);         // TL401
void check_cudnn_benchmark_off(RuleContext& ctx);         // TL501

}  // namespace tl::cpp
