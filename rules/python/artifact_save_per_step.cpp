// TL104 artifact-save-per-step: an image/plot/sample file is written every step.
#include "rules/python/common.h"
#include "rules/python/rules.h"

namespace tl::rules {
namespace {

bool is_pil_image_origin(std::string_view o) {
  return o.rfind("PIL.Image.", 0) == 0 || o == "torchvision.transforms.functional.to_pil_image" ||
         o == "torchvision.transforms.ToPILImage";
}

}  // namespace

void check_artifact_save_per_step(RuleContext& ctx) {
  const auto& t = ctx.tree;
  for (auto& c : ctx.mod.calls) {
    std::string_view q = c.qname;
    std::string what;
    if (qname_in(q, {"torchvision.utils.save_image", "matplotlib.pyplot.savefig", "cv2.imwrite", "imageio.imwrite",
                     "imageio.imsave", "imageio.v2.imwrite", "imageio.v3.imwrite", "skimage.io.imsave"})) {
      what = std::string(q);
    } else if (c.method == "savefig" && c.receiver != py::kNone) {
      what = std::string(t.text(c.callee));
    } else if (c.method == "save" && c.receiver != py::kNone) {
      // a PIL image: bound to Image.open/fromarray/new, or the call itself
      bool pil = false;
      if (t.is(c.receiver, py::K::Call)) {
        if (auto* rc = ctx.mod.call_at(c.receiver)) pil = is_pil_image_origin(rc->qname);
      } else {
        for (auto& o : ctx.model.origins(ctx.mod, c.receiver))
          if (is_pil_image_origin(o)) pil = true;
      }
      if (pil) what = "PIL Image.save";
    }
    if (what.empty()) continue;
    report_if_per_step(ctx, c.node,
                       "`" + what +
                           "` writes an image file every step: encoding and disk I/O in the training loop keep the "
                           "GPU waiting; write samples every N steps",
                       "`" + what +
                           "` writes an image file every step: encoding and disk I/O add to every step's time; write "
                           "samples every N steps");
  }
}

}  // namespace tl::rules
