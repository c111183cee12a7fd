#include "analyzer/runtime/merge.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

namespace tl::runtime {
namespace {

using nlohmann::json;

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string ms_text(double v) { return v < 10 ? fmt("%.2f", v) : fmt("%.1f", v); }

std::string pad(std::string s, size_t w, bool right = false) {
  if (s.size() >= w) return s;
  return right ? std::string(w - s.size(), ' ') + s : s + std::string(w - s.size(), ' ');
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Reports come from files: any field may be missing or of another type (a hand-edited or
// truncated report, another tool's JSON). Every read goes through these, which never throw.
const json& field(const json& j, const char* key) {
  static const json none;
  if (!j.is_object()) return none;
  auto it = j.find(key);
  return it == j.end() ? none : *it;
}

std::optional<double> num(const json& j, const char* key) {
  const json& v = field(j, key);
  if (!v.is_number()) return std::nullopt;
  return v.get<double>();
}

std::optional<int64_t> integer(const json& j, const char* key) {
  const json& v = field(j, key);
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float() && v.get<double>() >= -9e15 && v.get<double>() <= 9e15) return static_cast<int64_t>(v.get<double>());
  return std::nullopt;
}

std::string str(const json& j, const char* key) {
  const json& v = field(j, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

template <class T>
json opt_json(const std::optional<T>& v) {
  return v ? json(*v) : json();
}

struct Rank {
  size_t node = 0;
  std::optional<int64_t> rank;
  int64_t pid = 0;
  int64_t steps = 0;
  std::optional<double> step_ms;  // median of its counted steps, else their mean
  double wait_per_step = 0;
  int64_t counted = 0;
  bool clean = true;
};

}  // namespace

MergeResult merge_reports(const std::vector<NodeReport>& nodes) {
  MergeResult res;
  std::vector<Rank> ranks;
  json node_list = json::array();
  for (size_t n = 0; n < nodes.size(); ++n) {
    const json& doc = nodes[n].doc;
    const json& run = field(doc, "run");
    if (!run.is_object() || !field(run, "processes").is_array()) {
      res.error = nodes[n].file + " is not a `trainlint run --format json` report (no `run` object with `processes`)";
      return res;
    }
    node_list.push_back({{"file", nodes[n].file},
                         {"command", field(run, "command").is_array() ? field(run, "command") : json::array()},
                         {"steps", integer(run, "steps").value_or(0)},
                         {"exit_code", integer(run, "exit_code").value_or(0)},
                         {"gpu", str(field(run, "gpu"), "status")}});
    for (auto& p : run["processes"]) {
      const std::string role = str(p, "role");
      const int64_t steps = std::max<int64_t>(0, integer(p, "steps").value_or(0));
      if (role != "rank" && !(role == "main" && steps > 0)) continue;
      Rank r;
      r.node = n;
      r.rank = integer(p, "rank");
      r.pid = integer(p, "pid").value_or(0);
      r.steps = steps;
      r.clean = !field(p, "clean").is_boolean() || field(p, "clean").get<bool>();
      r.step_ms = num(p, "median_step_ms");
      if (!r.step_ms) r.step_ms = num(p, "mean_step_ms");
      // the counted steps: all but the warm-up step 1 when there are 2 or more
      r.counted = r.steps >= 2 ? r.steps - 1 : r.steps;
      if (r.counted > 0) r.wait_per_step = num(p, "data_wait_ms").value_or(0) / static_cast<double>(r.counted);
      ranks.push_back(r);
    }
  }
  std::stable_sort(ranks.begin(), ranks.end(), [](const Rank& a, const Rank& b) {
    if (a.rank.has_value() != b.rank.has_value()) return a.rank.has_value();
    if (a.rank && *a.rank != *b.rank) return *a.rank < *b.rank;
    return a.node < b.node;
  });

  std::vector<double> steps, waits;
  for (auto& r : ranks)
    if (r.step_ms) {
      steps.push_back(*r.step_ms);
      waits.push_back(r.wait_per_step);
    }
  const double med_step = median(steps), med_wait = median(waits);
  const double lo = steps.empty() ? 0 : *std::min_element(steps.begin(), steps.end());
  const double hi = steps.empty() ? 0 : *std::max_element(steps.begin(), steps.end());
  const bool steps_differ = lo > 0 && hi > 1.05 * lo;
  std::optional<size_t> slowest;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (!ranks[i].step_ms) continue;
    if (!slowest) {
      slowest = i;
      continue;
    }
    const Rank& a = ranks[i];
    const Rank& b = ranks[*slowest];
    if (steps_differ ? *a.step_ms > *b.step_ms : a.wait_per_step > b.wait_per_step) slowest = i;
  }

  json rank_list = json::array(), stragglers = json::array();
  for (size_t i = 0; i < ranks.size(); ++i) {
    const Rank& r = ranks[i];
    std::string why;
    if (r.step_ms && med_step > 0 && *r.step_ms > 1.10 * med_step)
      why = "median step " + ms_text(*r.step_ms) + " ms, " + fmt("%.0f", 100.0 * (*r.step_ms / med_step - 1)) +
            "% over the ranks' median " + ms_text(med_step) + " ms";
    else if (r.step_ms && med_step > 0 && r.wait_per_step - med_wait > 0.10 * med_step)
      why = "waits " + ms_text(r.wait_per_step) + " ms per step for its data, the ranks' median " + ms_text(med_wait) +
            " ms: the other ranks wait for it";
    json j = {{"node", r.node},
              {"file", nodes[r.node].file},
              {"rank", r.rank ? json(*r.rank) : json()},
              {"pid", r.pid},
              {"steps", r.steps},
              {"step_ms", r.step_ms ? json(*r.step_ms) : json()},
              {"data_wait_ms_per_step", r.wait_per_step},
              {"clean", r.clean},
              {"straggler", !why.empty()},
              {"slowest", slowest && *slowest == i}};
    if (!why.empty()) {
      j["straggler_reason"] = why;
      stragglers.push_back({{"rank", j["rank"]}, {"node", r.node}, {"reason", why}});
    }
    rank_list.push_back(std::move(j));
  }

  // findings: one entry per fingerprint, with the node and rank where it cost the most
  json findings = json::array();
  std::map<std::string, size_t> by_key;
  for (size_t n = 0; n < nodes.size(); ++n) {
    const json& list = field(nodes[n].doc, "findings");
    if (!list.is_array()) continue;
    for (auto& f : list) {
      if (!f.is_object()) continue;
      std::string key = str(f, "fingerprint");
      if (key.empty()) key = str(f, "code") + "@" + str(f, "path");
      const json& rt = field(f, "runtime");
      const double share = num(rt, "share").value_or(-1);
      auto it = by_key.find(key);
      if (it == by_key.end()) {
        by_key[key] = findings.size();
        json m = {{"code", str(f, "code")},
                  {"slug", str(f, "slug")},
                  {"message", str(f, "message")},
                  {"path", str(f, "path")},
                  {"line", integer(field(field(f, "range"), "start"), "line").value_or(0)},
                  {"fingerprint", key},
                  {"confirmed_on", json::array()},
                  {"nodes", json::array()}};
        findings.push_back(std::move(m));
        it = by_key.find(key);
      }
      json& m = findings[it->second];
      const std::string verdict = str(rt, "verdict");
      m["nodes"].push_back({{"node", n}, {"verdict", verdict}, {"share", share >= 0 ? json(share) : json()},
                            {"rank", opt_json(integer(rt, "rank"))}});
      if (verdict == "confirmed") m["confirmed_on"].push_back(n);
      if (share >= 0 && (!m.contains("max_share") || share > m["max_share"].get<double>())) {
        m["max_share"] = share;
        m["max_node"] = n;
        m["max_rank"] = opt_json(integer(rt, "rank"));
        m["max_ms_per_step"] = opt_json(num(rt, "ms_per_step"));
      }
    }
  }
  std::stable_sort(findings.begin(), findings.end(), [](const json& a, const json& b) {
    return a.value("max_share", -1.0) > b.value("max_share", -1.0);
  });

  res.doc = {{"merge", true},
             {"nodes", node_list},
             {"ranks", rank_list},
             {"median_step_ms", steps.empty() ? json() : json(med_step)},
             {"slowest_rank", slowest ? rank_list[*slowest]["rank"] : json()},
             {"slowest_node", slowest ? json(ranks[*slowest].node) : json()},
             {"slowest_by", slowest ? json(steps_differ ? "step time" : "data wait") : json()},
             {"stragglers", stragglers},
             {"findings", findings}};
  return res;
}

void write_merge_text(std::ostream& out, const json& m) {
  const json& ranks = m["ranks"];
  out << "trainlint merge: " << m["nodes"].size() << (m["nodes"].size() == 1 ? " node, " : " nodes, ") << ranks.size()
      << (ranks.size() == 1 ? " rank" : " ranks") << "\n\n";
  size_t file_w = 4;
  for (auto& r : ranks) file_w = std::max(file_w, r["file"].get<std::string>().size());
  out << pad("rank", 6) << pad("node", file_w + 2) << pad("steps", 7, true) << pad("step ms", 10, true)
      << pad("data wait ms/step", 19, true) << "\n";
  for (auto& r : ranks) {
    out << pad(r["rank"].is_number() ? std::to_string(r["rank"].get<int64_t>()) : "-", 6)
        << pad(r["file"].get<std::string>(), file_w + 2) << pad(std::to_string(r["steps"].get<int64_t>()), 7, true)
        << pad(r["step_ms"].is_number() ? ms_text(r["step_ms"].get<double>()) : "-", 10, true)
        << pad(ms_text(r["data_wait_ms_per_step"].get<double>()), 19, true);
    if (r["slowest"].get<bool>()) out << "  slowest";
    if (r["straggler"].get<bool>()) out << "  straggler";
    if (!r["clean"].get<bool>()) out << "  (did not end cleanly)";
    out << "\n";
  }
  out << "step ms: the median of each rank's counted steps (warm-up step 1 left out)\n\n";
  if (m["slowest_rank"].is_number() || m["slowest_node"].is_number()) {
    out << "slowest rank: "
        << (m["slowest_rank"].is_number() ? std::to_string(m["slowest_rank"].get<int64_t>()) : std::string("?")) << " ("
        << m["nodes"][m["slowest_node"].get<size_t>()]["file"].get<std::string>() << "), by "
        << m["slowest_by"].get<std::string>()
        << (m["slowest_by"] == "data wait" ? " (the ranks' step times are within 5 %: synchronous training evens them out)"
                                          : "")
        << "\n";
  }
  if (m["stragglers"].empty()) {
    out << "stragglers: none\n";
  } else {
    for (auto& s : m["stragglers"])
      out << "straggler: rank " << (s["rank"].is_number() ? std::to_string(s["rank"].get<int64_t>()) : std::string("?"))
          << ": " << s["reason"].get<std::string>() << "\n";
  }
  bool any = false;
  for (auto& f : m["findings"]) {
    if (f["confirmed_on"].empty()) continue;
    if (!any) out << "\nconfirmed findings (most costly first):\n";
    any = true;
    out << "  " << f["code"].get<std::string>() << " " << f["path"].get<std::string>() << ":" << f["line"].get<int64_t>()
        << "  confirmed on " << f["confirmed_on"].size() << " of " << m["nodes"].size() << " nodes";
    if (f.contains("max_share"))
      out << ", up to " << fmt("%.1f", 100.0 * f["max_share"].get<double>()) << "% of the step"
          << (f["max_rank"].is_number() ? " (rank " + std::to_string(f["max_rank"].get<int64_t>()) + ")" : std::string());
    out << "\n";
  }
  if (!any) out << "\nno finding was confirmed on any node\n";
}

int merge_command(const MergeOptions& opts) {
  std::vector<NodeReport> nodes;
  for (auto& f : opts.files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) {
      std::cerr << "trainlint: error: cannot read " << f << "\n";
      return 2;
    }
    NodeReport n;
    n.file = f;
    n.doc = json::parse(in, nullptr, false);
    if (n.doc.is_discarded()) {
      std::cerr << "trainlint: error: " << f << " is not JSON (write it with `trainlint run --format json`)\n";
      return 2;
    }
    nodes.push_back(std::move(n));
  }
  MergeResult r = merge_reports(nodes);
  if (!r.error.empty()) {
    std::cerr << "trainlint: error: " << r.error << "\n";
    return 2;
  }
  std::string text;
  if (opts.format == "json") {
    text = r.doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  } else {
    std::ostringstream ss;
    write_merge_text(ss, r.doc);
    text = ss.str();
  }
  if (opts.output.empty()) {
    std::cout << text << std::flush;
    return 0;
  }
  std::ofstream out(opts.output, std::ios::binary);
  out << text;
  out.close();
  if (!out) {
    std::cerr << "trainlint: error: cannot write " << opts.output << "\n";
    return 2;
  }
  return 0;
}

}  // namespace tl::runtime
