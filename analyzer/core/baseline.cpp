#include "analyzer/core/baseline.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

namespace tl {

std::optional<Baseline> read_baseline(const std::string& file, std::string* error) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    *error = "cannot read the baseline " + file + " (write one with --write-baseline " + file + ")";
    return std::nullopt;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("findings") || !j["findings"].is_array()) {
    *error = file + " is not a trainlint baseline (a JSON object with a \"findings\" list)";
    return std::nullopt;
  }
  if (j.contains("version") && j["version"] != 1) {
    *error = file + ": baseline version " + j["version"].dump() + " is not supported (this trainlint reads version 1)";
    return std::nullopt;
  }
  Baseline b;
  for (auto& e : j["findings"]) {
    if (!e.is_object() || !e.contains("fingerprint") || !e["fingerprint"].is_string()) {
      *error = file + ": every baseline entry needs a \"fingerprint\" string";
      return std::nullopt;
    }
    BaselineEntry be;
    be.fingerprint = e["fingerprint"].get<std::string>();
    auto str = [&](const char* k) { return e.contains(k) && e[k].is_string() ? e[k].get<std::string>() : std::string(); };
    be.path = str("path");
    be.code = str("code");
    be.slug = str("slug");
    be.scope = str("scope");
    be.statement = str("statement");
    ++b.by_fingerprint[be.fingerprint];
    b.entries.push_back(std::move(be));
  }
  return b;
}

std::string baseline_text(std::vector<BaselineEntry> entries) {
  std::sort(entries.begin(), entries.end(), [](const BaselineEntry& a, const BaselineEntry& b) {
    // every field, so that the order (and the file) never depends on the order read
    return std::tie(a.path, a.code, a.scope, a.statement, a.fingerprint, a.slug) <
           std::tie(b.path, b.code, b.scope, b.statement, b.fingerprint, b.slug);
  });
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (auto& e : entries) {
    nlohmann::ordered_json o;
    o["path"] = e.path;
    o["code"] = e.code;
    o["slug"] = e.slug;
    o["scope"] = e.scope;
    o["statement"] = e.statement;
    o["fingerprint"] = e.fingerprint;
    arr.push_back(std::move(o));
  }
  nlohmann::ordered_json doc;
  doc["version"] = 1;
  doc["tool"] = "trainlint";
  doc["comment"] = "Findings accepted when this file was written: trainlint --baseline reports only findings not listed here. "
                   "Regenerate with --write-baseline; entries are matched by fingerprint, not by line.";
  doc["findings"] = std::move(arr);
  return doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

bool write_baseline(const std::string& file, const std::vector<BaselineEntry>& entries, std::string* error) {
  std::string text = baseline_text(entries);
  std::string tmp = file + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out || !(out << text) || !out.flush()) {
      *error = "cannot write the baseline " + file;
      std::remove(tmp.c_str());
      return false;
    }
  }
  if (std::rename(tmp.c_str(), file.c_str()) != 0) {
    *error = "cannot write the baseline " + file;
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace tl
