// TL204 pil-decode: PIL image decoding on the data path, or an ImageFolder/DatasetFolder that
// uses the default (PIL) loader.
#include <unordered_map>

#include "rules/python/common.h"
#include "rules/python/rules.h"

namespace tl::rules {
namespace {

constexpr const char* kFaster =
    "decode with `torchvision.io.decode_jpeg`/`decode_image` (on the GPU if you like), OpenCV, or DALI";

bool is_default_loader(std::string_view q) {
  return q == "torchvision.datasets.folder.default_loader" || q == "torchvision.datasets.folder.pil_loader";
}

}  // namespace

// One finding per function: its other decodes (the other branch of `if self.cache_mode:` or of an
// RGB/grayscale switch, the sample's label map or depth image) are notes of the first, which one
// change to the dataset's decoding covers.
void check_pil_decode(RuleContext& ctx) {
  const auto& t = ctx.tree;
  std::vector<std::vector<const py::Call*>> groups;  // the decodes of each function, in source order
  std::unordered_map<const py::Function*, size_t> group_of;
  for (auto& c : ctx.mod.calls)
    if (c.qname == "PIL.Image.open" && ctx.model.data_path(c.fn)) {
      auto [it, fresh] = group_of.emplace(c.fn, groups.size());
      if (fresh) groups.emplace_back();
      groups[it->second].push_back(&c);
    }
  for (auto& g : groups) {
    const py::DataPathInfo* dp = ctx.model.data_path(g.front()->fn);
    std::vector<Note> notes;
    notes.push_back(RuleContext::note_at(*dp->root->mod, dp->root->def, "on the data path: " + dp->desc));
    for (const py::Call* ch : dp->chain) {
      const py::Module* cm = ch->mod;
      notes.push_back(RuleContext::note_at(*cm, ch->node, "called from here for every sample"));
    }
    for (size_t k = 1; k < g.size(); ++k)
      notes.push_back(RuleContext::note_at(ctx.mod, g[k]->node,
                                           "another PIL decode of the same function (another branch, or another "
                                           "image of the sample): the same change covers it"));
    ctx.report(g.front()->node,
               "images are decoded with PIL for every sample (`PIL.Image.open`): PIL decoding is CPU-bound and "
               "often the slowest stage of the input pipeline; " + std::string(kFaster),
               std::move(notes));
  }
  for (auto& c : ctx.mod.calls) {
    bool image_folder = qname_in(c.qname, {"torchvision.datasets.ImageFolder", "torchvision.datasets.folder.ImageFolder"});
    bool dataset_folder = qname_in(c.qname, {"torchvision.datasets.DatasetFolder", "torchvision.datasets.folder.DatasetFolder"});
    if (!image_folder && !dataset_folder) continue;
    py::NodeId loader = ctx.model.keyword_arg(ctx.mod, c, "loader");
    if (loader == py::kNone) loader = ctx.model.positional_arg(ctx.mod, c, image_folder ? 3 : 1);
    if (loader == py::kNone) {
      if (ctx.model.has_splat(ctx.mod, c) || dataset_folder) continue;  // the loader may be in **kwargs
    } else {
      std::string q = ctx.model.qualified_name(ctx.mod, loader);
      if (!is_default_loader(q)) continue;
    }
    ctx.report(c.node, std::string(image_folder ? "`ImageFolder`" : "`DatasetFolder`") +
                           " decodes every image with PIL through its default loader; pass a `loader=` that " +
                           std::string(kFaster).replace(0, 6, "decodes"));
    (void)t;
  }
}

}  // namespace tl::rules
