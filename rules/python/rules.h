// Python rule entry points; rules/registry.cpp lists them in one sorted table.
#pragma once
#include "rules/registry.h"

namespace tl::rules {
void check_gc_collect_per_step(RuleContext& ctx);        // TL101
void check_checkpoint_per_step(RuleContext& ctx);        // TL103
void check_artifact_save_per_step(RuleContext& ctx);     // TL104
void check_dataloader_no_workers(RuleContext& ctx);      // TL201
void check_dataloader_no_pin_memory(RuleContext& ctx);   // TL202
void check_pil_decode(RuleContext& ctx);                 // TL204
void check_load_in_getitem(RuleContext& ctx);            // TL205
void check_data_parallel(RuleContext& ctx);              // TL301
}  // namespace tl::rules
