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

// Where the module is: $TRAINLINT_CLANG_MODULE as given, else the first of the places that holds
// a file. Empty with `why` set when none does.
fs::path locate(std::string& why) {
  if (const char* p = std::getenv("TRAINLINT_CLANG_MODULE"); p && *p) return p;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) {
    why = "cannot find the trainlint executable (/proc/self/exe) to look for " + std::string(kTypedPathFile) +
          " beside it";
    return {};
  }
  std::vector<fs::path> places{exe.parent_path() / kTypedPathFile};
  if (*TRAINLINT_INSTALL_LIB_DIR)
    places.push_back((exe.parent_path() / TRAINLINT_INSTALL_LIB_DIR / kTypedPathFile).lexically_normal());
  std::string looked;
  for (auto& p : places) {
    if (fs::is_regular_file(p, ec)) return p;
    looked += (looked.empty() ? "" : " or ") + p.string();
  }
  why = std::string(kTypedPathFile) + " (the typed C++ path) was not found at " + looked +
        " (set TRAINLINT_CLANG_MODULE)";
  return {};
}

Loaded load() {
  Loaded r;
  fs::path p = locate(r.why);
  if (!p.empty()) r.module = open_module(p, r.why);
  return r;
}

}  // namespace

std::string typed_path_module_identity() {
  std::string why;
  fs::path p = locate(why);
  if (p.empty()) return "no typed path module";
  std::error_code ec;
  auto size = fs::file_size(p, ec);
  if (ec) return "typed path module " + p.string() + " unreadable";
  auto mtime = fs::last_write_time(p, ec);
  return "typed path module " + p.string() + " " + std::to_string(size) + " " +
         std::to_string(ec ? 0 : mtime.time_since_epoch().count());
}

const TypedPathModule* typed_path_module(std::string* why) {
  static std::once_flag once;
  static Loaded loaded;
  std::call_once(once, [] { loaded = load(); });
  if (!loaded.module && why) *why = loaded.why;
  return loaded.module;
}

}  // namespace tl::cpp
