#include "analyzer/core/gitignore.h"

#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace tl {
namespace {

std::unique_ptr<std::vector<PathPattern>> read_patterns(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return nullptr;
  auto out = std::make_unique<std::vector<PathPattern>>();
  std::string line;
  for (bool first = true; std::getline(in, line); first = false) {
    // git skips a UTF-8 byte-order mark (Windows editors write one)
    if (first && line.rfind("\xef\xbb\xbf", 0) == 0) line.erase(0, 3);
    PathPattern p;
    if (PathPattern::parse(line, p, true)) out->push_back(std::move(p));
  }
  return out;
}

}  // namespace

std::string relative_below(const fs::path& abs, const fs::path& base) {
  std::string a = abs.generic_string(), b = base.generic_string();
  if (!b.empty() && b.back() != '/') b += '/';
  if (a.size() <= b.size() || a.compare(0, b.size(), b) != 0) return {};
  return a.substr(b.size());
}

const fs::path& GitIgnore::repo_root(const fs::path& dir) {
  std::string key = dir.generic_string();
  if (auto it = roots_.find(key); it != roots_.end()) return it->second;
  fs::path root;
  std::error_code ec;
  if (fs::exists(dir / ".git", ec)) root = dir;
  else if (dir.has_parent_path() && dir.parent_path() != dir) root = repo_root(dir.parent_path());
  return roots_[key] = root;
}

const GitIgnore::Rules* GitIgnore::rules_of(const fs::path& dir) {
  std::string key = dir.generic_string();
  auto it = gitignores_.find(key);
  if (it == gitignores_.end()) {
    std::unique_ptr<Rules> r;
    if (auto pats = read_patterns(dir / ".gitignore"); pats && !pats->empty())
      r = std::make_unique<Rules>(Rules{dir, std::move(*pats)});
    it = gitignores_.emplace(key, std::move(r)).first;
  }
  return it->second.get();
}

const GitIgnore::Rules* GitIgnore::info_exclude(const fs::path& root) {
  std::string key = root.generic_string();
  auto it = excludes_.find(key);
  if (it == excludes_.end()) {
    std::unique_ptr<Rules> r;
    if (auto pats = read_patterns(root / ".git" / "info" / "exclude"); pats && !pats->empty())
      r = std::make_unique<Rules>(Rules{root, std::move(*pats)});
    it = excludes_.emplace(key, std::move(r)).first;
  }
  return it->second.get();
}

const GitIgnore::Folder& GitIgnore::folder(const fs::path& dir) {
  std::string key = dir.generic_string();
  auto it = folders_.find(key);
  if (it != folders_.end()) return *it->second;
  auto f = std::make_unique<Folder>();
  const fs::path& root = repo_root(dir);
  if (!root.empty()) {
    f->in_repository = true;
    // pattern files from the root down to `dir`: lowest precedence first
    std::vector<const Rules*> files;
    if (auto* r = info_exclude(root)) files.push_back(r);
    std::vector<fs::path> chain;
    for (fs::path d = dir;; d = d.parent_path()) {
      chain.push_back(d);
      if (d == root || !d.has_parent_path() || d.parent_path() == d) break;
    }
    for (auto it2 = chain.rbegin(); it2 != chain.rend(); ++it2)
      if (auto* r = rules_of(*it2)) files.push_back(r);
    for (auto* r : files) {
      // an entry's path relative to the file's folder is this prefix and its name
      std::string base = r->base.generic_string();
      if (key == base) {
        f->rules.emplace_back(r, std::string());
        continue;
      }
      std::string rel = relative_below(dir, r->base);
      if (!rel.empty()) f->rules.emplace_back(r, rel + '/');
    }
  }
  return *folders_.emplace(std::move(key), std::move(f)).first->second;
}

bool GitIgnore::ignored_in(const Folder& f, std::string_view name, bool is_dir) {
  if (!f.in_repository) return false;
  if (name == ".git") return true;
  bool out = false;
  std::string rel;
  for (auto& [r, prefix] : f.rules) {
    rel.assign(prefix).append(name);
    for (auto& p : r->patterns)
      if (p.matches(rel, is_dir)) out = !p.negate;
  }
  return out;
}

bool GitIgnore::ignored(const fs::path& abs, bool is_dir) {
  if (!abs.has_parent_path()) return false;
  return ignored_in(folder(abs.parent_path()), abs.filename().native(), is_dir);
}

bool GitIgnore::ignored_or_inside_ignored(const fs::path& abs, bool is_dir) {
  if (!abs.has_parent_path()) return false;
  const fs::path& root = repo_root(abs.parent_path());
  if (root.empty()) return false;
  // folders between the root and `abs`, top down
  std::vector<fs::path> above;
  for (fs::path d = abs.parent_path(); d != root && d.has_parent_path() && d.parent_path() != d; d = d.parent_path())
    above.push_back(d);
  for (auto it = above.rbegin(); it != above.rend(); ++it)
    if (ignored(*it, true)) return true;
  return ignored(abs, is_dir);
}

}  // namespace tl
