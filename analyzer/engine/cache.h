// The on-disk cache of lint runs (`.trainlint_cache/`, docs/cache.md), in two levels:
//
// - trees: each Python file's parsed tree (py::Tree::encode), under the hash of its text and of
//   this build of trainlint. A run whose files changed re-parses only the changed ones; the
//   per-file analysis and the link passes then run over every file as they do without a cache, so
//   findings that depend on other files (calls followed across files, program-level facts) are
//   exactly those of a cold run.
// - runs: a whole run's findings and file messages, under the hash of everything they depend on:
//   this build, the command line's rule selection, every configuration file's text and every
//   analysed file's path, role and text. An unchanged tree is answered from here without parsing.
//   The C++ half of a run has such an entry of its own, keyed on the C++ files alone (engine.cpp,
//   CppHalfCache): a Python edit does not re-analyse the C++ files.
//
// Entries are written to a temporary file and renamed into place, so concurrent runs never see a
// partial entry; an entry that fails its checks is ignored (and the file re-analysed). The cache is
// bounded: when it grows past its limit the least recently used entries are removed.
#pragma once
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/core/finding.h"
#include "analyzer/python/ast.h"

namespace tl::cache {

// A 128-bit hash (two independent 64-bit lanes), for cache keys.
struct Hash {
  uint64_t a = 0, b = 0;
  bool operator==(const Hash&) const = default;
  std::string hex() const;
};

class Hasher {
 public:
  Hasher& add(std::string_view bytes);
  Hasher& add(uint64_t v);
  Hash finish() const { return {a_, b_}; }

 private:
  uint64_t a_ = 0x243F6A8885A308D3ull, b_ = 0x13198A2E03707344ull;
};

// This build of trainlint: its version and its executable's identity (a rebuild from other sources
// changes rules without changing the version).
const std::string& build_identity();

// What a whole run's entry holds.
struct RunResult {
  std::vector<Finding> findings;
  std::vector<FileMessage> messages;
  size_t files_analysed = 0, context_files = 0;
};

class DiskCache : public py::TreeStore {
 public:
  // Opens (creating) the cache folder; nullptr with `error` set when it cannot be created.
  static std::unique_ptr<DiskCache> open(const std::filesystem::path& dir, size_t max_bytes, std::string* error);

  // py::TreeStore
  std::optional<py::Tree> load(const SourceFile& src) override;
  void save(const SourceFile& src, const py::Tree& tree) override;

  std::optional<RunResult> load_run(const Hash& key);
  void save_run(const Hash& key, const RunResult& r);

  // Removes the least recently used entries while the cache holds more than its limit.
  void prune();

  struct Stats {
    size_t tree_hits = 0, tree_misses = 0;
  };
  Stats stats() const;

 private:
  DiskCache(std::filesystem::path dir, size_t max_bytes) : dir_(std::move(dir)), max_bytes_(max_bytes) {}
  std::filesystem::path tree_path(const SourceFile& src) const;
  bool write_atomic(const std::filesystem::path& p, std::string_view bytes);

  std::filesystem::path dir_;
  size_t max_bytes_;
  std::atomic<size_t> tree_hits_{0}, tree_misses_{0};  // load() runs on several threads
};

}  // namespace tl::cache
