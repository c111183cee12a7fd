// The Python bootstrap of `trainlint run`, embedded at build time (cmake/EmbedBoot.cmake): every
// *.py under shim/python, with its path relative to that folder.
#pragma once
#include <string_view>
#include <vector>

namespace tl::runtime {

struct BootFile {
  std::string_view path;  // "trainlint_boot/__init__.py", "sitecustomize.py"...
  std::string_view text;
};

// Empty when the bootstrap was not in the tree at build time.
const std::vector<BootFile>& boot_files();

}  // namespace tl::runtime
