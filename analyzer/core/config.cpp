#include "analyzer/core/config.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#define TOML_EXCEPTIONS 1
#include <toml++/toml.h>

namespace fs = std::filesystem;

namespace tl {

const std::vector<std::string>& default_excludes() {
  static const std::vector<std::string> d = {
      ".git", ".hg", ".svn", ".bzr", ".jj", "node_modules", "__pycache__", ".tox", ".nox", ".venv", "venv",
      ".mypy_cache", ".pytest_cache", ".ruff_cache", ".eggs", "*.egg-info", "site-packages", "__pypackages__",
      "dist", ".cache", ".ipynb_checkpoints", ".direnv", "buck-out", "build", "build-*", "cmake-build*", "_build"};
  return d;
}

void Config::finish() {
  std::vector<std::string> all = exclude ? *exclude : default_excludes();
  all.insert(all.end(), extend_exclude.begin(), extend_exclude.end());
  exclude_globs = GlobSet(all);
}

bool selector_matches(std::string_view sel, std::string_view code, std::string_view slug) {
  if (sel == "ALL" || sel == "all") return true;
  if (sel == slug) return true;
  if (sel.size() < 2 || sel.size() > code.size()) return false;
  for (size_t i = 0; i < sel.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(sel[i])) != code[i]) return false;
  return true;
}

namespace {

std::string display_path(const fs::path& p) {
  std::error_code ec;
  fs::path cwd = fs::current_path(ec);
  if (!ec) {
    fs::path rel = p.lexically_relative(cwd);
    if (!rel.empty() && rel.native().rfind("..", 0) != 0) return rel.generic_string();
  }
  return p.generic_string();
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t prev = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cur = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] == b[j - 1] ? 0 : 1)});
      prev = cur;
    }
  }
  return row[b.size()];
}

std::string did_you_mean(std::string_view key, std::initializer_list<std::string_view> known) {
  std::string_view best;
  size_t bd = 3;
  for (auto k : known) {
    size_t d = edit_distance(key, k);
    if (d < bd) {
      bd = d;
      best = k;
    }
  }
  return best.empty() ? std::string() : " (did you mean '" + std::string(best) + "'?)";
}

struct ConfigError {
  std::string message;
  uint32_t line = 0;
};

class Reader {
 public:
  Reader(std::string file, std::string table, const SelectorCheck& known, const RuleCanon& canon)
      : file_(std::move(file)), table_(std::move(table)), known_(known), canon_(canon) {}

  [[noreturn]] void fail(const toml::source_region& where, const std::string& msg) const {
    throw ConfigError{file_ + ":" + std::to_string(where.begin.line) + ": " + msg, where.begin.line};
  }
  std::string key_name(std::string_view k) const { return table_.empty() ? "'" + std::string(k) + "'" : "'" + std::string(k) + "' in [" + table_ + "]"; }

  std::vector<std::string> strings(const toml::key& k, const toml::node& v, std::string_view what) const {
    const toml::array* arr = v.as_array();
    if (!arr)
      fail(v.source(), key_name(k.str()) + " must be a list of " + std::string(what) + ", e.g. " + std::string(k.str()) +
                           " = [\"TL1\", \"TL201\"]; found " + type_name(v));
    std::vector<std::string> out;
    for (auto& e : *arr) {
      auto s = e.value<std::string>();
      if (!e.is_string() || !s) fail(e.source(), key_name(k.str()) + " must hold strings; found " + type_name(e));
      out.push_back(*s);
    }
    return out;
  }
  std::vector<std::string> selectors(const toml::key& k, const toml::node& v) const {
    auto out = strings(k, v, "rule codes, slugs or code prefixes");
    const toml::array* arr = v.as_array();
    for (size_t i = 0; i < out.size(); ++i)
      if (!known_(out[i]))
        fail((*arr)[i].source(), key_name(k.str()) + ": unknown rule '" + out[i] +
                                     "' (`trainlint rules --all` lists the codes and slugs)");
    return out;
  }
  Severity severity(const toml::node& v, std::string_view what) const {
    auto s = v.value<std::string>();
    if (!v.is_string() || !s) fail(v.source(), std::string(what) + " must be \"error\", \"warning\" or \"info\"; found " + type_name(v));
    auto sev = parse_severity(*s);
    if (!sev) fail(v.source(), std::string(what) + " must be \"error\", \"warning\" or \"info\", not \"" + *s + "\"");
    return *sev;
  }
  static std::string type_name(const toml::node& v) {
    switch (v.type()) {
      case toml::node_type::table: return "a table";
      case toml::node_type::array: return "a list";
      case toml::node_type::string: return "a string";
      case toml::node_type::integer: return "an integer";
      case toml::node_type::floating_point: return "a number";
      case toml::node_type::boolean: return "a boolean";
      default: return "a date or time";
    }
  }

  // Reads every key; every mistake is collected (in file order) rather than only the first.
  void read(const toml::table& t, Config& c) const {
    std::vector<ConfigError> errors;
    for (auto&& [k, v] : t) {
      try {
        read_key(k, v, c);
      } catch (ConfigError& e) {
        errors.push_back(std::move(e));
      }
    }
    if (errors.empty()) return;
    std::stable_sort(errors.begin(), errors.end(), [](auto& a, auto& b) { return a.line < b.line; });
    ConfigError all;
    for (auto& e : errors) all.message += (all.message.empty() ? "" : "\n") + e.message;
    throw all;
  }

  void read_key(const toml::key& k, const toml::node& v, Config& c) const {
    {
      std::string_view name = k.str();
      if (name == "select") c.select = selectors(k, v);
      else if (name == "ignore") c.ignore = selectors(k, v);
      else if (name == "extend-select") c.extend_select = selectors(k, v);
      else if (name == "exclude") c.exclude = strings(k, v, "glob patterns");
      else if (name == "extend-exclude") c.extend_exclude = strings(k, v, "glob patterns");
      else if (name == "fail-on") c.fail_on = severity(v, key_name(name));
      else if (name == "baseline") {
        auto s = v.value<std::string>();
        if (!v.is_string() || !s || s->empty())
          fail(v.source(), key_name(name) + " must be a file path (a string); found " + type_name(v));
        c.baseline = (c.dir / *s).lexically_normal().string();
      } else if (name == "cache-dir") {
        auto s = v.value<std::string>();
        if (!v.is_string() || !s || s->empty())
          fail(v.source(), key_name(name) + " must be a folder path (a string); found " + type_name(v));
        c.cache_dir = (c.dir / *s).lexically_normal().string();
      } else if (name == "per-file-ignores") {
        const toml::table* pt = v.as_table();
        if (!pt) fail(v.source(), key_name(name) + " must be a table of glob = [codes], e.g. \"tests/**\" = [\"TL1\"]; found " + type_name(v));
        Reader sub(file_, table_.empty() ? "per-file-ignores" : table_ + ".per-file-ignores", known_, canon_);
        for (auto&& [gk, gv] : *pt) {
          PerFileIgnore p;
          p.pattern = std::string(gk.str());
          p.glob = GlobSet({p.pattern});
          p.selectors = sub.selectors(gk, gv);
          c.per_file_ignores.push_back(std::move(p));
        }
      } else if (name == "severity") {
        const toml::table* st = v.as_table();
        if (!st) fail(v.source(), key_name(name) + " must be a table of code = \"error\"|\"warning\"|\"info\"; found " + type_name(v));
        for (auto&& [ck, cv] : *st) {
          std::string code = canon_(ck.str());
          if (code.empty())
            fail(ck.source(), key_name(name) + ": unknown rule '" + std::string(ck.str()) + "' (a code or slug, such as TL105)");
          c.severity[code] = severity(cv, key_name(name) + " for " + code);
        }
      } else if (name == "run") {
        const toml::table* rt = v.as_table();
        if (!rt) fail(v.source(), key_name(name) + " must be a table ([" + (table_.empty() ? std::string("run") : table_ + ".run") + "]); found " + type_name(v));
        for (auto&& [rk, rv] : *rt) {
          std::string_view rn = rk.str();
          std::string where = table_.empty() ? std::string("[run]") : "[" + table_ + ".run]";
          if (rn == "report") {
            auto s = rv.value<std::string>();
            if (!rv.is_string() || !s || s->empty())
              fail(rv.source(), "'report' in " + where + " must be a file path (a string); found " + type_name(rv));
            c.run.report = (c.dir / *s).lexically_normal().string();
            continue;
          }
          std::optional<double>* slot = rn == "threshold"    ? &c.run.threshold
                                        : rn == "data-stall" ? &c.run.data_stall
                                        : rn == "gc-pauses"  ? &c.run.gc_pauses
                                        : rn == "gpu-idle"   ? &c.run.gpu_idle
                                                             : nullptr;
          if (!slot)
            fail(rk.source(), "unknown key '" + std::string(rn) + "' in " + where +
                                  did_you_mean(rn, {"threshold", "data-stall", "gc-pauses", "gpu-idle", "report"}) +
                                  "; known: threshold, data-stall, gc-pauses, gpu-idle, report");
          auto d = rv.value<double>();
          if (!(rv.is_integer() || rv.is_floating_point()) || !d)
            fail(rv.source(), "'" + std::string(rn) + "' in " + where + " must be a number (percent of step time); found " + type_name(rv));
          if (*d < 0 || *d > 100)
            fail(rv.source(), "'" + std::string(rn) + "' in " + where + " must be a percentage from 0 to 100");
          *slot = *d;
        }
      } else {
        std::string hint = did_you_mean(name, {"select", "ignore", "extend-select", "per-file-ignores", "exclude",
                                               "extend-exclude", "fail-on", "severity", "baseline", "cache-dir", "run"});
        if (name == "tool" && table_.empty())
          hint = " (.trainlint.toml takes the keys themselves, without a [tool.trainlint] table)";
        fail(k.source(), "unknown key " + key_name(name) + hint +
                             "; known keys: select, extend-select, ignore, per-file-ignores, exclude, extend-exclude, "
                             "fail-on, severity, baseline, cache-dir, run");
      }
    }
  }

 private:
  std::string file_, table_;
  const SelectorCheck& known_;
  const RuleCanon& canon_;
};

}  // namespace

std::optional<Config> load_config_file(const fs::path& file, const SelectorCheck& known, const RuleCanon& canon,
                                       std::string* error) {
  error->clear();
  std::string shown = display_path(file);
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    *error = shown + ": cannot read the configuration file";
    return std::nullopt;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  bool pyproject = file.filename() == "pyproject.toml";
  try {
    toml::table doc = toml::parse(text, shown);
    const toml::table* t = &doc;
    if (pyproject) {
      const toml::node* tool = doc.get("tool");
      const toml::table* tt = tool ? tool->as_table() : nullptr;
      const toml::node* tl = tt ? tt->get("trainlint") : nullptr;
      if (!tl) return std::nullopt;
      t = tl->as_table();
      if (!t) throw ConfigError{shown + ":" + std::to_string(tl->source().begin.line) + ": [tool.trainlint] must be a table"};
    }
    Config c;
    c.path = file.string();
    c.dir = file.parent_path();
    Reader(shown, pyproject ? "tool.trainlint" : "", known, canon).read(*t, c);
    c.finish();
    return c;
  } catch (const toml::parse_error& e) {
    *error = shown + ":" + std::to_string(e.source().begin.line) + ": invalid TOML: " + std::string(e.description());
  } catch (const ConfigError& e) {
    *error = e.message;
  }
  return std::nullopt;
}

ConfigSet::ConfigSet(SelectorCheck known, RuleCanon canon) : known_(std::move(known)), canon_(std::move(canon)) {
  defaults_ = std::make_unique<Config>();
  defaults_->finish();
}

bool ConfigSet::init(const std::string& config_file, bool isolated, std::string* error) {
  isolated_ = isolated;
  if (config_file.empty()) return true;
  std::error_code ec;
  fs::path p = fs::absolute(config_file, ec).lexically_normal();
  if (!fs::is_regular_file(p, ec)) {
    *error = "--config " + config_file + ": no such file";
    return false;
  }
  auto c = load_config_file(p, known_, canon_, error);
  if (!c) {
    if (error->empty()) *error = config_file + ": no [tool.trainlint] table in this pyproject.toml";
    return false;
  }
  forced_ = std::make_unique<Config>(std::move(*c));
  return true;
}

const Config* ConfigSet::find(const fs::path& dir) {
  std::string key = dir.generic_string();
  if (auto it = by_dir_.find(key); it != by_dir_.end()) return it->second;
  const Config* found = nullptr;
  std::error_code ec;
  for (const char* name : {".trainlint.toml", "pyproject.toml"}) {
    fs::path f = dir / name;
    if (!fs::is_regular_file(f, ec)) continue;
    std::string err;
    auto c = load_config_file(f, known_, canon_, &err);
    if (c) {
      owned_.push_back(std::make_unique<Config>(std::move(*c)));
      found = owned_.back().get();
      break;
    }
    if (!err.empty()) {
      std::stringstream lines(err);
      for (std::string line; std::getline(lines, line);)
        if (std::find(errors_.begin(), errors_.end(), line) == errors_.end()) errors_.push_back(line);
      found = defaults_.get();  // the run fails on errors(); go on so that every bad file is named
      break;
    }
  }
  if (!found) found = dir.has_parent_path() && dir.parent_path() != dir ? find(dir.parent_path()) : defaults_.get();
  by_dir_[key] = found;
  return found;
}

const Config& ConfigSet::for_dir(const fs::path& abs_dir) {
  if (forced_) return *forced_;
  if (isolated_) return *defaults_;
  return *find(abs_dir);
}

fs::path find_project_root(const fs::path& abs_dir) {
  std::error_code ec;
  for (fs::path d = abs_dir;; d = d.parent_path()) {
    for (const char* m : {"pyproject.toml", ".trainlint.toml", "setup.py", ".git"})
      if (fs::exists(d / m, ec)) return d;
    if (!d.has_parent_path() || d.parent_path() == d) break;
  }
  return {};
}

}  // namespace tl
