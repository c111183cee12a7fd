#include "analyzer/runtime/html_report.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "rules/registry.h"

namespace tl::runtime {
namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string ms_text(double v) { return v < 10 ? fmt("%.2f", v) : fmt("%.1f", v); }

std::string pct_text(double frac) {
  double p = 100.0 * frac;
  return p < 10 ? fmt("%.2f%%", p) : fmt("%.1f%%", p);
}

// SVG coordinates: 1 decimal is plenty.
std::string num(double v) { return fmt("%.1f", v); }

// One colour per segment of the stacked bar, then grey for "the rest".
const char* const kPalette[] = {"#d1495b", "#edae49", "#00798c", "#30638e", "#8f2d56",
                                "#66a182", "#e07a5f", "#3d405b", "#81b29a", "#f2cc8f"};
constexpr const char* kRestColour = "#c8c8c8";

// The lines of a source file, read once per path.
class SourceLines {
 public:
  const std::vector<std::string>* lines(const std::string& path) {
    auto it = cache_.find(path);
    if (it != cache_.end()) return it->second.empty() ? nullptr : &it->second;
    std::vector<std::string> v;
    std::ifstream in(path, std::ios::binary);
    for (std::string line; in && std::getline(in, line);) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      v.push_back(std::move(line));
    }
    auto& slot = cache_[path] = std::move(v);
    return slot.empty() ? nullptr : &slot;
  }

 private:
  std::map<std::string, std::vector<std::string>> cache_;
};

// The first code block of the rule doc's "## Use instead" section: what the fix looks like.
std::string use_instead(std::string_view code) {
  std::string_view doc = rule_doc(code);
  size_t at = doc.find("## Use instead");
  if (at == std::string_view::npos) return {};
  size_t end = doc.find("\n## ", at + 1);
  std::string_view sec = doc.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
  size_t open = sec.find("```");
  if (open == std::string_view::npos) return {};
  size_t body = sec.find('\n', open);
  if (body == std::string_view::npos) return {};
  size_t close = sec.find("```", body + 1);
  if (close == std::string_view::npos) return {};
  std::string block(sec.substr(body + 1, close - body - 1));
  while (!block.empty() && block.back() == '\n') block.pop_back();
  return block;
}

// Why the GPU was not measured, in a few words (the whole reason is in the JSON report).
std::string gpu_absent(const RunSummary& run) {
  if (run.gpu_state == "no-driver") return "no NVIDIA driver";
  if (run.gpu_state == "no-gpu") return "no NVIDIA GPU";
  if (run.gpu_state == "host-only") return "the GPU shim (libtrainlint_shim.so) is not installed";
  if (run.gpu_state == "busy") return "torch.profiler took CUPTI";
  if (run.gpu_state == "unavailable") return "CUPTI is not available";
  return run.gpu_state.empty() ? std::string("no GPU status was recorded") : run.gpu_state;
}

struct Segment {
  std::string label;
  double ms = 0;
  std::string colour;
};

void write_timeline(std::ostream& out, const std::vector<double>& steps, const RunSummary& run) {
  const double W = 960, H = 220, left = 56, right = 12, top = 14, bottom = 34;
  const double pw = W - left - right, ph = H - top - bottom;
  const size_t n = steps.size();
  double ymax = 0;
  for (size_t i = 1; i < n; ++i) ymax = std::max(ymax, steps[i]);
  const bool warmup = n >= 2 && run.warmup_excluded;
  // the warm-up step may be many times the others: it is clipped, and says its value
  if (!warmup || n == 1) ymax = std::max(ymax, steps.front());
  else ymax = std::max(ymax, std::min(steps.front(), 3 * ymax));
  if (ymax <= 0) ymax = 1;
  ymax *= 1.1;
  out << "<svg id=\"timeline\" class=\"chart\" data-steps=\"" << n << "\" viewBox=\"0 0 " << num(W) << " " << num(H)
      << "\" width=\"" << num(W) << "\" height=\"" << num(H) << "\" role=\"img\" aria-label=\"step time of every step\">\n";
  // axes and grid: four horizontal lines
  for (int k = 0; k <= 4; ++k) {
    double v = ymax * k / 4, y = top + ph - ph * k / 4;
    out << "<line class=\"grid\" x1=\"" << num(left) << "\" x2=\"" << num(W - right) << "\" y1=\"" << num(y) << "\" y2=\""
        << num(y) << "\"/><text class=\"tick\" x=\"" << num(left - 6) << "\" y=\"" << num(y + 4)
        << "\" text-anchor=\"end\">" << ms_text(v) << "</text>\n";
  }
  out << "<text class=\"axis\" x=\"12\" y=\"" << num(top + ph / 2) << "\" transform=\"rotate(-90 12 " << num(top + ph / 2)
      << ")\" text-anchor=\"middle\">ms</text>\n";
  const double slot = pw / static_cast<double>(std::max<size_t>(n, 1));
  const double bw = std::max(0.5, slot * (n > 200 ? 1.0 : 0.8));
  for (size_t i = 0; i < n; ++i) {
    const bool is_warm = warmup && i == 0;
    const double v = std::min(steps[i], ymax);
    const double h = ph * v / ymax, x = left + slot * static_cast<double>(i) + (slot - bw) / 2, y = top + ph - h;
    out << "<rect class=\"step" << (is_warm ? " warmup" : "") << "\" x=\"" << num(x) << "\" y=\"" << num(y)
        << "\" width=\"" << num(bw) << "\" height=\"" << num(std::max(h, 0.5)) << "\"><title>step " << (i + 1) << ": "
        << ms_text(steps[i]) << " ms" << (is_warm ? " (warm-up, not counted)" : "") << "</title></rect>\n";
    if (is_warm && steps[i] > ymax)
      out << "<text class=\"clip\" x=\"" << num(x + bw / 2) << "\" y=\"" << num(top + 10) << "\" text-anchor=\""
          << (bw < 40 ? "start" : "middle") << "\">\u2191 " << ms_text(steps[i]) << " ms</text>\n";
  }
  if (run.median_step_ms) {
    double y = top + ph - ph * std::min(*run.median_step_ms, ymax) / ymax;
    out << "<line class=\"median\" x1=\"" << num(left) << "\" x2=\"" << num(W - right) << "\" y1=\"" << num(y)
        << "\" y2=\"" << num(y) << "\"/><text class=\"median-label\" x=\"" << num(W - right - 4) << "\" y=\""
        << num(y - 4) << "\" text-anchor=\"end\">median " << ms_text(*run.median_step_ms) << " ms</text>\n";
  }
  out << "<text class=\"axis\" x=\"" << num(left) << "\" y=\"" << num(H - 8) << "\">step 1</text><text class=\"axis\" x=\""
      << num(W - right) << "\" y=\"" << num(H - 8) << "\" text-anchor=\"end\">step " << n << "</text>\n</svg>\n";
}

void write_breakdown(std::ostream& out, const std::vector<Segment>& segs, double mean_step_ms) {
  const double W = 960, H = 64, left = 8, right = 8;
  double total = 0;
  for (auto& s : segs) total += s.ms;
  total = std::max(total, mean_step_ms);
  if (total <= 0) total = 1;
  out << "<svg id=\"breakdown\" class=\"chart\" data-segments=\"" << segs.size() << "\" viewBox=\"0 0 " << num(W) << " "
      << num(H) << "\" width=\"" << num(W) << "\" height=\"" << num(H)
      << "\" role=\"img\" aria-label=\"where the mean step goes\">\n";
  double x = left;
  const double pw = W - left - right;
  for (auto& s : segs) {
    double w = pw * s.ms / total;
    out << "<rect class=\"seg\" x=\"" << num(x) << "\" y=\"8\" width=\"" << num(std::max(w, 0.5))
        << "\" height=\"40\" fill=\"" << s.colour << "\"><title>" << html_escape(s.label) << ": " << ms_text(s.ms)
        << " ms (" << pct_text(s.ms / total) << ")</title></rect>\n";
    if (w > 70)
      out << "<text class=\"seg-label\" x=\"" << num(x + 6) << "\" y=\"33\">" << pct_text(s.ms / total) << "</text>\n";
    x += w;
  }
  out << "</svg>\n<ul class=\"legend\">\n";
  for (auto& s : segs)
    out << "<li><span class=\"swatch\" style=\"background:" << s.colour << "\"></span>" << html_escape(s.label) << " \u2014 "
        << ms_text(s.ms) << " ms (" << pct_text(s.ms / total) << ")</li>\n";
  out << "</ul>\n";
}

const char* kStyle = R"(body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1000px;color:#222;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
.cmd{font-family:ui-monospace,monospace;background:#f4f4f4;padding:2px 6px;border-radius:3px}
.summary{display:flex;flex-wrap:wrap;gap:12px;margin:14px 0}.card{border:1px solid #ddd;border-radius:6px;padding:8px 14px;min-width:150px}
.card b{display:block;font-size:20px}.card span{color:#666;font-size:12px}
.chart{max-width:100%;height:auto;display:block}.grid{stroke:#e4e4e4}.tick,.axis{font-size:11px;fill:#666}
rect.step{fill:#30638e}rect.step.warmup{fill:#edae49}.median{stroke:#d1495b;stroke-dasharray:5 4}
.median-label{font-size:11px;fill:#d1495b;paint-order:stroke;stroke:#fff;stroke-width:4px}.clip{font-size:11px;fill:#a0700c}.seg-label{font-size:12px;fill:#fff;font-weight:600}
.legend{list-style:none;padding:0;margin:6px 0;columns:2}.legend li{margin:2px 0}
.swatch{display:inline-block;width:11px;height:11px;margin-right:6px;vertical-align:-1px;border-radius:2px}
.key{font-size:12px;color:#555}.key i{display:inline-block;width:11px;height:11px;margin:0 4px 0 10px;vertical-align:-1px}
table{border-collapse:collapse;width:100%;table-layout:fixed}col.c-code{width:150px}col.c-n{width:72px}col.c-v{width:120px}th,td{text-align:left;vertical-align:top;padding:6px 8px;border-bottom:1px solid #eee}
th{background:#fafafa;font-weight:600}td.n{text-align:right;white-space:nowrap}
.v{font-weight:600;white-space:nowrap}.v-confirmed{color:#b3261e}.v-negligible{color:#2e7d32}.v-not-reached,.v-not-measurable{color:#777}
pre{background:#f6f8fa;border:1px solid #e5e5e5;border-radius:4px;padding:6px 8px;margin:6px 0;overflow-x:auto;font-size:12.5px}
pre .hit{background:#fff1c2;display:inline-block;width:100%}.ln{color:#999;user-select:none}
.fix{margin-top:4px}.note{color:#555}.muted{color:#777}
)";

}  // namespace

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string run_html(const RunContext& ctx) {
  const Measurement& m = *ctx.m;
  const RunSummary& run = m.run;
  const auto& findings = ctx.lint->findings;
  std::ostringstream out;

  std::string command;
  for (auto& a : ctx.command) command += (command.empty() ? "" : " ") + a;
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
      << "<title>trainlint run: " << html_escape(command) << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n";
  out << "<h1>trainlint run</h1>\n<div><span class=\"cmd\">" << html_escape(command) << "</span></div>\n";

  // ---- summary cards ----------------------------------------------------------------------------
  const ProcessSummary* primary = nullptr;
  for (auto& p : run.processes)
    if (p.pid == run.primary_pid) primary = &p;
  out << "<div class=\"summary\">\n";
  auto card = [&](const std::string& value, const std::string& what) {
    out << "<div class=\"card\"><b>" << html_escape(value) << "</b><span>" << html_escape(what) << "</span></div>\n";
  };
  if (!run.have_records) {
    card("nothing", "was measured");
  } else {
    card(std::to_string(run.steps), run.warmup_excluded ? std::to_string(run.steps_counted) + " counted, warm-up step 1 left out"
                                                        : "steps");
    if (run.median_step_ms) {
      std::string spread = run.p10_step_ms && run.p90_step_ms
                               ? " (p10 " + ms_text(*run.p10_step_ms) + ", p90 " + ms_text(*run.p90_step_ms) + ")"
                               : std::string();
      card(ms_text(*run.median_step_ms) + " ms", "median step" + spread);
    }
    if (run.have_window) card(ms_text(run.mean_step_ms) + " ms", "mean step");
    size_t confirmed = 0;
    for (auto& r : m.findings) confirmed += r.verdict == "confirmed";
    if (run.estimated_step_ms) {
      std::string spread = run.estimated_p10_ms && run.estimated_p90_ms
                               ? " (p10-p90 " + ms_text(*run.estimated_p10_ms) + "-" + ms_text(*run.estimated_p90_ms) + " ms)"
                               : std::string();
      card(ms_text(*run.estimated_step_ms) + " ms",
           confirmed ? "estimated step if the " + std::to_string(confirmed) + " confirmed findings were fixed" + spread
                     : "estimated step (no confirmed finding)");
    }
    if (run.gpu_ok && run.gpu_idle_ms && run.steady_ms > 0)
      card(pct_text(*run.gpu_idle_ms / run.steady_ms), "GPU idle in the counted steps (" + ms_text(*run.gpu_idle_ms) + " ms)");
  }
  out << "</div>\n";
  out << "<p class=\"note\">GPU: ";
  if (run.gpu_ok)
    out << run.kernels << " kernels, " << run.memcpys << " copies (" << run.pageable_htod
        << " host-to-device from pageable memory), " << run.memsets << " memsets on " << run.gpu_devices
        << (run.gpu_devices == 1 ? " device" : " devices");
  else
    out << "not measured \u2014 " << html_escape(gpu_absent(run));
  out << "</p>\n";

  // ---- timeline ---------------------------------------------------------------------------------
  out << "<h2>Step time, every step</h2>\n";
  if (primary && !primary->step_ms.empty()) {
    write_timeline(out, primary->step_ms, run);
    out << "<div class=\"key\"><i style=\"background:#30638e\"></i>counted step";
    if (run.warmup_excluded) out << "<i style=\"background:#edae49\"></i>warm-up (step 1, not counted)";
    if (run.median_step_ms) out << "<i style=\"background:#d1495b;height:2px;vertical-align:3px\"></i>median";
    out << "</div>\n";
    if (run.primary_rank)
      out << "<p class=\"muted\">steps of rank " << *run.primary_rank << " (pid " << run.primary_pid << ")</p>\n";
  } else {
    out << "<p class=\"muted\">no step was recorded</p>\n";
  }

  // ---- where the step goes ----------------------------------------------------------------------
  std::vector<size_t> rows;
  for (size_t i = 0; i < findings.size(); ++i) rows.push_back(i);
  std::stable_sort(rows.begin(), rows.end(), [&](size_t a, size_t b) {
    auto &ra = m.findings[a], &rb = m.findings[b];
    auto rank = [](const std::string& v) { return v == "confirmed" ? 0 : v == "negligible" ? 1 : v == "not-reached" ? 2 : 3; };
    if (rank(ra.verdict) != rank(rb.verdict)) return rank(ra.verdict) < rank(rb.verdict);
    return ra.window_ms > rb.window_ms;
  });
  if (run.have_window && run.mean_step_ms > 0) {
    const double mean = run.mean_step_ms;
    const double per = run.steady_steps > 0 ? 1.0 / static_cast<double>(run.steady_steps) : 0;
    double data_wait = run.data_wait_ms * per, gc = run.gc_ms * per;
    std::vector<Segment> segs;
    size_t colour = 0;
    for (size_t i : rows) {
      const FindingRuntime& r = m.findings[i];
      if (!r.measured() || !r.share || r.share_basis != "steps") continue;
      double v = (r.self_share ? *r.self_share : *r.share) * mean;
      if (v <= 0) continue;
      const std::string& probe = findings[i].probe;
      // data-path findings are part of the data wait, automatic GC of the GC pauses: not twice
      if (probe.rfind("data-wait", 0) == 0) data_wait = std::max(0.0, data_wait - v);
      if (probe == "gc") gc = std::max(0.0, gc - v);
      segs.push_back({findings[i].code + " " + findings[i].path + ":" + std::to_string(findings[i].range.start.line), v,
                      kPalette[colour++ % std::size(kPalette)]});
    }
    if (data_wait > 0) segs.push_back({"data wait (no finding)", data_wait, "#7b8cde"});
    if (gc > 0) segs.push_back({"automatic GC pauses", gc, "#b07aa1"});
    double used = 0;
    for (auto& s : segs) used += s.ms;
    segs.push_back({"the rest of the step", std::max(0.0, mean - used), kRestColour});
    out << "<h2>Where the mean step (" << ms_text(mean) << " ms) goes</h2>\n";
    write_breakdown(out, segs, mean);
  }

  // ---- findings -----------------------------------------------------------------------------------
  out << "<h2>Findings</h2>\n";
  if (rows.empty() && m.runtime_findings.empty()) out << "<p class=\"muted\">no finding in the program</p>\n";
  SourceLines sources;
  if (!rows.empty()) {
    out << "<table id=\"findings\">\n<colgroup><col class=\"c-code\"><col><col class=\"c-n\"><col class=\"c-n\"><col class=\"c-n\">"
        << (run.gpu_ok ? "<col class=\"c-n\">" : "") << "<col class=\"c-v\"></colgroup>\n<thead><tr><th>code</th><th>site and fix</th><th>calls</th><th>ms/step</th>"
        << "<th>% step</th>" << (run.gpu_ok ? "<th>GPU idle ms</th>" : "") << "<th>verdict</th></tr></thead>\n<tbody>\n";
    for (size_t i : rows) {
      const Finding& f = findings[i];
      const FindingRuntime& r = m.findings[i];
      const bool num_ok = r.measured();
      out << "<tr class=\"finding\"><td><b>" << html_escape(f.code) << "</b><br><span class=\"muted\">" << html_escape(f.slug)
          << "</span></td><td><div><code>" << html_escape(f.path) << ":" << f.range.start.line << "</code></div>\n<div>"
          << html_escape(f.message) << "</div>\n";
      if (auto* lines = sources.lines(f.path)) {
        const uint32_t first = f.range.start.line, last = std::max(f.range.stop.line, first);
        const uint32_t from = first > 2 ? first - 2 : 1;
        const uint32_t to = std::min<uint32_t>(static_cast<uint32_t>(lines->size()), std::min(last, first + 8) + 2);
        out << "<pre class=\"src\">";
        for (uint32_t ln = from; ln <= to; ++ln) {
          const bool hit = ln >= first && ln <= last;
          out << (hit ? "<span class=\"hit\">" : "") << "<span class=\"ln\">" << fmt("%5.0f", ln) << "  </span>"
              << html_escape((*lines)[ln - 1]) << (hit ? "</span>" : "") << "\n";
        }
        out << "</pre>\n";
      }
      if (f.fix) out << "<div class=\"fix\"><b>Fix:</b> " << html_escape(f.fix->title) << "</div>\n";
      if (std::string u = use_instead(f.code); !u.empty())
        out << "<div class=\"fix\"><b>Use instead:</b></div><pre class=\"fix-code\">" << html_escape(u) << "</pre>\n";
      out << "</td><td class=\"n\">" << (num_ok || r.calls ? std::to_string(r.calls) : "-") << "</td><td class=\"n\">"
          << (num_ok && r.ms_per_step ? ms_text(*r.ms_per_step) : "-") << "</td><td class=\"n\">"
          << (num_ok && r.share ? pct_text(*r.share) : "-") << "</td>";
      if (run.gpu_ok)
        out << "<td class=\"n\">" << (r.gpu_idle_ms ? ms_text(*r.gpu_idle_ms) : "-") << "</td>";
      out << "<td><span class=\"v v-" << html_escape(r.verdict) << "\">" << html_escape(r.verdict) << "</span>";
      if (r.borderline) out << "<br><span class=\"muted\">borderline: the threshold lies within the step-time spread</span>";
      if (!r.reason.empty()) out << "<br><span class=\"muted\">" << html_escape(r.reason) << "</span>";
      out << "</td></tr>\n";
    }
    out << "</tbody>\n</table>\n";
  }
  if (!m.runtime_findings.empty()) {
    out << "<h2>Runtime-only findings</h2>\n<ul id=\"runtime-findings\">\n";
    for (auto& rf : m.runtime_findings)
      out << "<li><b>" << html_escape(rf.code) << " " << html_escape(rf.slug) << "</b> (" << html_escape(ctx.anchor.path)
          << ":" << ctx.anchor.range.start.line << "): " << html_escape(rf.message) << "</li>\n";
    out << "</ul>\n";
  }
  if (!run.notes.empty()) {
    out << "<h2>Notes</h2>\n<ul class=\"notes\">\n";
    for (auto& n : run.notes) out << "<li>" << html_escape(n) << "</li>\n";
    out << "</ul>\n";
  }
  out << "</body>\n</html>\n";
  return out.str();
}

}  // namespace tl::runtime
