#include "analyzer/report/locate.h"

#include <system_error>

namespace fs = std::filesystem;

namespace tl::report {
namespace {

bool unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~';
}

void put_escape(std::string& out, unsigned char c) {
  static const char* hex = "0123456789ABCDEF";
  out.push_back('%');
  out.push_back(hex[c >> 4]);
  out.push_back(hex[c & 15]);
}

fs::path strip_trailing_separator(fs::path p) {
  if (!p.has_filename() && p.has_relative_path()) p = p.parent_path();
  return p;
}

std::optional<std::string> relative_if_inside(const fs::path& abs, const fs::path& root) {
  fs::path rel = abs.lexically_relative(root);
  if (rel.empty() || rel == "." || *rel.begin() == "..") return std::nullopt;
  return rel.generic_string();
}

fs::path absolute_normal(const std::string& path) {
  std::error_code ec;
  fs::path abs = fs::absolute(fs::path(path), ec);
  if (ec) abs = fs::path(path);
  return strip_trailing_separator(abs.lexically_normal());
}

}  // namespace

fs::path normal_root(const fs::path& root) {
  std::error_code ec;
  fs::path r = root.empty() ? fs::current_path(ec) : fs::absolute(root, ec);
  if (ec) r = root;
  return strip_trailing_separator(r.lexically_normal());
}

std::optional<std::string> path_inside(const std::string& path, const fs::path& root) {
  fs::path abs = absolute_normal(path);
  fs::path r = normal_root(root);
  if (auto rel = relative_if_inside(abs, r)) return rel;
  // The root or the file may be reached through a symbolic link (a checkout under /tmp that is
  // really /private/tmp, a workspace linked into $HOME): compare the resolved forms too.
  std::error_code e1, e2;
  fs::path ca = fs::weakly_canonical(abs, e1), cr = fs::weakly_canonical(r, e2);
  if (!e1 && !e2) return relative_if_inside(strip_trailing_separator(ca), strip_trailing_separator(cr));
  return std::nullopt;
}

std::string shown_path(const std::string& path, const fs::path& root) {
  if (auto rel = path_inside(path, root)) return *rel;
  return absolute_normal(path).generic_string();
}

std::string percent_encode_path(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (unreserved(c) || c == '/') out.push_back(static_cast<char>(c));
    else put_escape(out, c);
  }
  return out;
}

std::string encode_uri_chars(std::string_view uri) {
  static constexpr std::string_view allowed = ":/?#[]@!$&'()*+,;=%";
  std::string out;
  out.reserve(uri.size());
  for (unsigned char c : uri) {
    if (unreserved(c) || allowed.find(static_cast<char>(c)) != std::string_view::npos) out.push_back(static_cast<char>(c));
    else put_escape(out, c);
  }
  return out;
}

std::string file_uri(const fs::path& absolute, bool folder) {
  std::string p = absolute.generic_string();
  if (p.empty() || p.front() != '/') p.insert(p.begin(), '/');
  if (folder && p.back() != '/') p.push_back('/');
  return "file://" + percent_encode_path(p);
}

SourceIndex::SourceIndex(const LintResult& res) {
  for (auto& s : res.cached_sources) by_path_.emplace(s->path(), s.get());
  if (!res.model) return;
  for (auto& m : res.model->modules())
    if (m->src) by_path_.emplace(m->path, m->src.get());
}

const SourceFile* SourceIndex::find(const std::string& path) const {
  auto it = by_path_.find(path);
  return it == by_path_.end() ? nullptr : it->second;
}

ShownPos shown_pos(const SourceFile* src, LineCol lc) {
  if (src && src->is_notebook()) {
    CellLine cl = src->cell_line(lc.line);
    return {cl.cell, cl.line, lc.col};
  }
  return {0, lc.line, lc.col};
}

std::string shown_location(const std::string& path, const ShownPos& p) {
  std::string s = path;
  if (p.cell) s += ":cell " + std::to_string(p.cell);
  if (p.line) {
    s += ":" + std::to_string(p.line);
    if (p.col) s += ":" + std::to_string(p.col);
  }
  return s;
}

RuleCategory rule_category(std::string_view code) {
  char family = code.size() >= 3 ? code[2] : '?';
  switch (family) {
    case '0': return {"meta", "Meta", false};
    case '1': return {"per-step-work", "Per-step work", false};
    case '2': return {"data-pipeline", "Data pipeline", false};
    case '3': return {"devices-and-parallelism", "Devices and parallelism", false};
    case '4': return {"correctness", "Correctness that costs time or silently misleads", true};
    case '5': return {"missed-speed-ups", "Missed speed-ups", false};
    case '9': return {"runtime", "Runtime-only findings", false};
  }
  return {"other", "Other", false};
}

}  // namespace tl::report
