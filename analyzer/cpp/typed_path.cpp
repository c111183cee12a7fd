#include "analyzer/cpp/typed_path.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <system_error>

// Where `cmake --install` puts trainlint-clang.so, relative to the installed executable's folder
// (cmake/Install.cmake, like the runtime shim's).
#ifndef TRAINLINT_INSTALL_LIB_DIR
#define TRAINLINT_INSTALL_LIB_DIR ""
#endif

namespace fs = std::filesystem;

namespace tl::cpp {
namespace {

struct Loaded {
  const TypedPathModule* module = nullptr;
  std::string why;
};

// Opens `path` and checks what it hands over; the handle is never closed (LLVM's static state is
// not meant to be unloaded, and the process ends soon after a run).
const TypedPathModule* open_module(const fs::path& path, std::string& why) {
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = ::dlerror();
    why = "cannot load " + path.string() + ": " + (e ? e : "unknown error");
    return nullptr;
  }
  using Entry = const TypedPathModule* (*)();
  auto entry = reinterpret_cast<Entry>(::dlsym(h, kTypedPathSymbol));
  const TypedPathModule* m = entry ? entry() : nullptr;
  uint32_t sizes[4];
  typed_path_sizes(sizes);
  bool same = m && m->abi == kTypedPathAbi && m->torch_include_dirs && m->typed_facts;
  for (int i = 0; same && i < 4; ++i) same = m->sizes[i] == sizes[i];
  if (!same) {
    why = path.string() + " is not the typed C++ path of this trainlint build (rebuild or reinstall trainlint)";
    return nullptr;
  }
  return m;
}

Loaded load() {
  Loaded r;
  if (const char* p = std::getenv("TRAINLINT_CLANG_MODULE"); p && *p) {
    r.module = open_module(p, r.why);
    return r;
  }
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) {
    r.why = "cannot find the trainlint executable (/proc/self/exe) to look for " + std::string(kTypedPathFile) +
            " beside it";
    return r;
  }
  std::vector<fs::path> places{exe.parent_path() / kTypedPathFile};
  if (*TRAINLINT_INSTALL_LIB_DIR)
    places.push_back((exe.parent_path() / TRAINLINT_INSTALL_LIB_DIR / kTypedPathFile).lexically_normal());
  std::string looked;
  for (auto& p : places) {
    if (fs::is_regular_file(p, ec)) {
      r.module = open_module(p, r.why);
      return r;
    }
    looked += (looked.empty() ? "" : " or ") + p.string();
  }
  r.why = std::string(kTypedPathFile) + " (the typed C++ path) was not found at " + looked +
          " (set TRAINLINT_CLANG_MODULE)";
  return r;
}

}  // namespace

const TypedPathModule* typed_path_module(std::string* why) {
  static std::once_flag once;
  static Loaded loaded;
  std::call_once(once, [] { loaded = load(); });
  if (!loaded.module && why) *why = loaded.why;
  return loaded.module;
}

}  // namespace tl::cpp
