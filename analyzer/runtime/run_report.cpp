#include "analyzer/runtime/run_report.h"

#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "analyzer/report/report.h"
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

std::string pad(std::string s, size_t w, bool right = false) {
  if (s.size() >= w) return s;
  return right ? std::string(w - s.size(), ' ') + s : s + std::string(w - s.size(), ' ');
}

std::string signal_name(int sig) {
  switch (sig) {
    case SIGHUP: return "SIGHUP";
    case SIGINT: return "SIGINT";
    case SIGQUIT: return "SIGQUIT";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGKILL: return "SIGKILL";
    case SIGSEGV: return "SIGSEGV";
    case SIGPIPE: return "SIGPIPE";
    case SIGALRM: return "SIGALRM";
    case SIGTERM: return "SIGTERM";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    default: return "signal " + std::to_string(sig);
  }
}

// Why the GPU was not measured, in a few words (the whole reason is in the JSON report).
std::string gpu_absent_text(const RunSummary& run) {
  if (run.gpu_state == "no-driver") return "no NVIDIA driver";
  if (run.gpu_state == "no-gpu") return "no NVIDIA GPU";
  if (run.gpu_state == "host-only") return "the GPU shim (libtrainlint_shim.so) is not installed";
  if (run.gpu_state == "busy") return "torch.profiler took CUPTI";
  if (run.gpu_state == "unavailable") return "CUPTI is not available";
  std::string r = run.gpu_state + (run.gpu_reason.empty() ? "" : ": " + run.gpu_reason);
  return r.size() > 80 ? r.substr(0, 77) + "..." : r;
}

// A short tag for the GPU idle column.
std::string gpu_short(const FindingRuntime& r, const RunSummary& run) {
  if (r.gpu_idle_ms) return ms_text(*r.gpu_idle_ms);
  if (r.verdict == "not-reached") return "-";
  if (r.gpu_idle_reason == "runs in DataLoader worker processes") return "n/a: in workers";
  if (!run.gpu_ok) return "n/a: " + run.gpu_state;
  return "n/a: " + r.gpu_idle_reason.substr(0, 24);
}

int verdict_rank(const std::string& v) {
  if (v == "confirmed") return 0;
  if (v == "negligible") return 1;
  if (v == "not-reached") return 2;
  return 3;
}

std::string site_text(const Finding& f) { return f.path + ":" + std::to_string(f.range.start.line); }

}  // namespace

std::vector<Finding> runtime_only_findings(const RunContext& ctx) {
  std::vector<Finding> out;
  for (auto& rf : ctx.m->runtime_findings) {
    Finding f;
    f.code = rf.code;
    f.slug = rf.slug;
    const RuleInfo* r = find_rule(rf.code);
    f.severity = r ? r->severity : Severity::Warning;
    f.probe = r ? std::string(r->probe) : std::string();
    f.message = rf.message;
    f.path = ctx.anchor.path;
    f.range = ctx.anchor.range;
    f.fingerprint = "runtime-" + rf.code;
    out.push_back(std::move(f));
  }
  return out;
}

void write_run_text(std::ostream& out, const RunContext& ctx) {
  const Measurement& m = *ctx.m;
  const RunSummary& run = m.run;
  const auto& findings = ctx.lint->findings;

  out << "\ntrainlint run: ";
  if (!run.have_records) {
    out << "nothing was measured\n";
  } else {
    out << run.steps << (run.steps == 1 ? " step" : " steps");
    if (run.have_window && run.warmup_excluded) {
      // one definition for every figure below: the counted steps, warm-up step 1 left out
      out << "; " << run.steps_counted << " counted (warm-up step 1 left out) in " << ms_text(run.window_ms) << " ms: ";
      if (run.median_step_ms) {
        out << "median step " << ms_text(*run.median_step_ms) << " ms";
        if (run.p10_step_ms && run.p90_step_ms)
          out << " (p10 " << ms_text(*run.p10_step_ms) << ", p90 " << ms_text(*run.p90_step_ms) << ")";
        out << ", mean " << ms_text(run.mean_step_ms) << " ms";
      } else {
        out << "mean step " << ms_text(run.mean_step_ms) << " ms";
      }
    } else if (run.have_window) {
      out << " in " << ms_text(run.window_ms) << " ms (mean step " << ms_text(run.mean_step_ms) << " ms)";
    } else {
      out << ", " << ms_text(run.run_ms) << " ms recorded";
    }
    if (run.stopped_early) out << ", stopped early by --max-steps";
    size_t ranks = 0;
    for (auto& p : run.processes) ranks += p.role == "rank" ? 1 : 0;
    if (ranks > 1)
      out << "; figures of " << (run.primary_rank ? "rank " + std::to_string(*run.primary_rank) : "process " + std::to_string(run.primary_pid))
          << ", one of " << ranks << " training processes, each finding from the process where it cost most";
    out << "\n";
    if (run.have_window && run.median_step_ms && run.long_steps > 0)
      out << "median step " << ms_text(*run.median_step_ms) << " ms; " << run.long_steps
          << (run.long_steps == 1 ? " step" : " steps") << " took over 10x that (" << ms_text(run.long_steps_ms)
          << " ms in all: an evaluation, a checkpoint or logging inside the loop), counted in the mean and the shares\n";
  }
  out << "GPU: ";
  if (run.gpu_ok) {
    out << run.kernels << " kernels, " << run.memcpys << " copies (" << run.pageable_htod
        << " host-to-device from pageable memory), " << run.memsets << " memsets on " << run.gpu_devices
        << (run.gpu_devices == 1 ? " device" : " devices");
    if (run.gpu_idle_ms && run.steady_ms > 0) out << "; idle " << pct_text(*run.gpu_idle_ms / run.steady_ms) << " of the steps";
    out << "\n";
  } else {
    out << "not measured \u2014 " << gpu_absent_text(run) << "\n";
  }

  // ---- the table ------------------------------------------------------------------------------
  std::vector<size_t> rows, unprobed, unreached;
  for (size_t i = 0; i < findings.size(); ++i) {
    if (findings[i].probe == "none" || findings[i].probe.empty()) unprobed.push_back(i);
    else if (run.no_torch && m.findings[i].verdict == "not-reached") unreached.push_back(i);  // said once below
    else rows.push_back(i);
  }
  const bool gpu_col = run.gpu_ok;
  std::stable_sort(rows.begin(), rows.end(), [&](size_t a, size_t b) {
    auto &ra = m.findings[a], &rb = m.findings[b];
    int va = verdict_rank(ra.verdict) > 1 ? verdict_rank(ra.verdict) : 0;
    int vb = verdict_rank(rb.verdict) > 1 ? verdict_rank(rb.verdict) : 0;
    if (va != vb) return va < vb;
    // what to fix next: the most step time first (the whole run's total without counted steps)
    if (ra.window_ms != rb.window_ms) return ra.window_ms > rb.window_ms;
    return ra.total_ms > rb.total_ms;
  });
  size_t n_confirmed = 0;
  for (size_t i : rows) n_confirmed += m.findings[i].verdict == "confirmed";
  const bool after_col = n_confirmed >= 2 && run.have_window;
  size_t site_w = 4;
  for (size_t i : rows) site_w = std::max(site_w, site_text(findings[i]).size());
  site_w = std::min<size_t>(site_w, 48);
  if (!rows.empty()) {
    out << "\n"
        << pad("code", 7) << pad("site", site_w + 2) << pad("calls", 7, true) << pad("total ms", 11, true)
        << pad("ms/step", 10, true) << pad("% step", 9, true) << (after_col ? pad("% after", 9, true) : "") << "  "
        << (gpu_col ? pad("GPU idle ms", 18) : "") << "verdict\n";
    for (size_t i : rows) {
      const Finding& f = findings[i];
      const FindingRuntime& r = m.findings[i];
      bool num = r.verdict == "confirmed" || r.verdict == "negligible";
      out << pad(f.code, 7) << pad(site_text(f), site_w + 2) << pad(num || r.calls ? std::to_string(r.calls) : "-", 7, true)
          << pad(num ? ms_text(r.total_ms) : "-", 11, true)
          << pad(num && r.ms_per_step ? ms_text(*r.ms_per_step) : "-", 10, true)
          << pad(num && r.share ? pct_text(*r.share) : "-", 9, true)
          << (after_col ? pad(num && r.share_after ? pct_text(*r.share_after) : "-", 9, true) : "") << "  "
          << (gpu_col ? pad(gpu_short(r, run), 18) : "")
          << r.verdict << (r.borderline ? " (borderline: the threshold lies within the step-time spread)" : "");
      if (r.verdict == "not-measurable" && !r.reason.empty()) out << " (" << r.reason << ")";
      else if (num && !r.reason.empty()) out << " (" << r.reason << ")";
      else if (num && r.share_basis == "run") out << " (share of run time: no steps)";
      if (num && r.share && r.self_share && *r.share - *r.self_share > 0.005)
        out << " [" << pct_text(*r.self_share) << " outside the findings nested in it]";
      if (num && r.worker_calls > 0)
        out << " [" << r.worker_calls << " of the calls in DataLoader workers, " << ms_text(r.worker_ms) << " ms]";
      if (num && r.pageable_copies > 0)
        out << " [" << r.pageable_copies << " pageable copies, " << ms_text(r.pageable_copy_ms) << " ms]";
      out << "\n";
    }
    if (run.have_window && run.warmup_excluded)
      out << "calls and total ms: the whole run; ms/step and % step: inside the " << run.steps_counted
          << " counted steps, as shares of the mean step (a finding nested in another counts in both)\n";
    if (after_col)
      out << "% after: its share of the step left once the confirmed findings above it are fixed\n";
  } else if (findings.empty()) {
    out << "\nno static findings in " << ctx.lint->files_analysed << (ctx.lint->files_analysed == 1 ? " file" : " files")
        << " of the program\n";
  }
  if (!unreached.empty())
    out << unreached.size() << (unreached.size() == 1 ? " finding" : " findings")
        << " not reached: the program's interpreter cannot import torch (see the note below)\n";
  if (!unprobed.empty()) {
    out << "not measured (no runtime probe for the rule): ";
    for (size_t k = 0; k < unprobed.size(); ++k) {
      if (k) out << ", ";
      out << findings[unprobed[k]].code << " " << site_text(findings[unprobed[k]]);
    }
    out << "\n";
  }

  // ---- runtime-only ---------------------------------------------------------------------------
  if (run.have_window) {
    out << "\nruntime-only findings:";
    if (m.runtime_findings.empty()) {
      double d = run.steady_ms > 0 ? run.steady_ms : 1;
      out << " none (data wait " << pct_text(run.data_wait_ms / d) << ", GC pauses " << pct_text(run.gc_ms / d)
          << " of step time";
      if (run.gpu_idle_ms) out << ", GPU idle " << pct_text(*run.gpu_idle_ms / d);
      out << ")\n";
    } else {
      out << "\n";
      for (auto& rf : m.runtime_findings)
        out << "  " << rf.code << " " << rf.slug << "  " << ctx.anchor.path << ":" << ctx.anchor.range.start.line << "  "
            << rf.message << "\n";
    }
  }

  // ---- bottom lines ---------------------------------------------------------------------------
  out << "\n";
  if (run.estimated_step_ms) {
    size_t confirmed = 0;
    for (auto& r : m.findings) confirmed += r.verdict == "confirmed";
    // from the median step when there is one (the estimate is a median too), else the mean
    const double base = run.median_step_ms ? *run.median_step_ms : run.mean_step_ms;
    const char* what = run.median_step_ms ? " ms median step" : " ms mean step";
    if (confirmed == 0) {
      out << "estimated step time if the confirmed findings were fixed: " << ms_text(base) << what
          << " (no confirmed finding)\n";
    } else {
      double saved = base - *run.estimated_step_ms;
      out << "estimated step time if the confirmed findings were fixed: " << ms_text(base) << what << " -> "
          << ms_text(*run.estimated_step_ms) << " ms";
      if (run.estimated_p10_ms && run.estimated_p90_ms)
        out << " (p10-p90 " << ms_text(*run.estimated_p10_ms) << "-" << ms_text(*run.estimated_p90_ms) << " ms)";
      if (base > 0) out << ", -" << fmt("%.0f", std::max(0.0, 100.0 * saved / base)) << "%";
      bool in_workers = false;
      for (auto& r : m.findings) in_workers |= r.verdict == "confirmed" && r.worker_calls > 0;
      if (in_workers) out << "; time in DataLoader workers runs beside the steps and is not counted";
      if (run.overlapped_ms_per_step && *run.overlapped_ms_per_step >= 0.005)
        out << "; not counted as saved: " << ms_text(*run.overlapped_ms_per_step)
            << " ms a step of the findings' time during which the GPU was still running work queued before it";
      out << "\n";
    }
  }
  if (run.stopped_early)
    out << "stopped early: --max-steps " << run.max_steps << " ended the program after " << run.steps
        << (run.steps == 1 ? " step" : " steps") << "\n";
  std::vector<std::string> unclean;
  for (auto& p : run.processes)
    if (!p.clean) {
      unclean.push_back("pid " + std::to_string(p.pid) + " (" + p.role +
                        (p.rank ? " " + std::to_string(*p.rank) : std::string()) + "): " + p.note);
    }
  if (!unclean.empty()) {
    out << "processes that ended without a clean record: ";
    for (size_t k = 0; k < unclean.size(); ++k) out << (k ? "; " : "") << unclean[k];
    out << "\n";
  }
  if (run.term_signal)
    out << "the program was ended by " << signal_name(run.term_signal) << " (exit status " << run.exit_code << ")\n";
  else if (run.exit_code != 0)
    out << "the program exited with code " << run.exit_code << "\n";
  for (auto& n : run.notes) out << "note: " << n << "\n";
}

nlohmann::json run_json(const RunContext& ctx) {
  const Measurement& m = *ctx.m;
  const RunSummary& run = m.run;
  LintResult res;
  res.findings = ctx.lint->findings;
  res.messages = ctx.lint->messages;
  res.files_analysed = ctx.lint->files_analysed;
  auto rt = runtime_only_findings(ctx);
  res.findings.insert(res.findings.end(), rt.begin(), rt.end());
  nlohmann::json doc = report::to_json(res);
  auto opt = [](const std::optional<double>& v) -> nlohmann::json { return v ? nlohmann::json(*v) : nlohmann::json(); };
  for (size_t i = 0; i < ctx.lint->findings.size(); ++i) {
    const FindingRuntime& r = m.findings[i];
    const PlanSite& s = (*ctx.sites)[i];
    nlohmann::json j = {{"site_id", s.id},
                        {"callee", s.callee ? nlohmann::json(*s.callee) : nlohmann::json()},
                        {"verdict", r.verdict},
                        {"reason", r.reason.empty() ? nlohmann::json() : nlohmann::json(r.reason)},
                        {"calls", r.calls},
                        {"total_ms", r.total_ms},
                        {"ms_per_step", opt(r.ms_per_step)},
                        {"share", opt(r.share)},
                        {"share_basis", r.share_basis},
                        {"gpu_idle_ms", opt(r.gpu_idle_ms)},
                        {"gpu_idle_reason", r.gpu_idle_ms ? nlohmann::json() : nlohmann::json(r.gpu_idle_reason)},
                        {"window_ms", r.window_ms},
                        {"borderline", r.borderline},
                        {"self_share", opt(r.self_share)},
                        {"share_after", opt(r.share_after)},
                        {"worker_calls", r.worker_calls},
                        {"worker_ms", r.worker_ms},
                        {"pid", r.group_pid},
                        {"rank", r.rank ? nlohmann::json(*r.rank) : nlohmann::json()}};
    if (s.probe == "data-wait+memcpy" || s.probe == "site+memcpy") {
      j["pageable_copies"] = r.pageable_copies;
      j["pageable_copy_ms"] = r.pageable_copy_ms;
    }
    if (s.probe == "site+memcpy") j["htod_copies"] = r.htod_copies;
    if (r.loader_starts) {
      j["loader_starts"] = r.loader_starts;
      j["loader_start_ms"] = r.loader_start_ms;
      if (r.cow_faults) {
        j["cow_faults"] = r.cow_faults;
        j["cow_ms"] = r.cow_ms;
      }
    }
    doc["findings"][i]["runtime"] = std::move(j);
  }
  for (size_t k = 0; k < m.runtime_findings.size(); ++k) {
    auto& rf = m.runtime_findings[k];
    doc["findings"][ctx.lint->findings.size() + k]["runtime"] = {
        {"verdict", "confirmed"},           {"share", rf.pct / 100.0},
        {"total_ms", rf.ms},                {"calls", rf.count},
        {"ms_per_step", run.steady_steps ? nlohmann::json(rf.ms / static_cast<double>(run.steady_steps)) : nlohmann::json()},
        {"runtime_only", true}};
  }
  nlohmann::json procs = nlohmann::json::array();
  for (auto& p : run.processes)
    procs.push_back({{"pid", p.pid},
                     {"ppid", p.ppid},
                     {"role", p.role},
                     {"rank", p.rank ? nlohmann::json(*p.rank) : nlohmann::json()},
                     {"argv0", p.argv0},
                     {"steps", p.steps},
                     {"end", p.has_end ? nlohmann::json(p.end_reason) : nlohmann::json()},
                     {"clean", p.clean},
                     {"note", p.note},
                     {"unreadable_lines", p.bad_lines},
                     {"truncated", p.truncated_tail},
                     {"step_ms", p.step_ms},
                     {"mean_step_ms", opt(p.mean_step_ms)},
                     {"median_step_ms", opt(p.median_step_ms)},
                     {"data_wait_ms", p.data_wait_ms}});
  size_t confirmed = 0;
  for (auto& r : m.findings) confirmed += r.verdict == "confirmed";
  doc["run"] = {
      {"command", ctx.command},
      {"records", run.have_records},
      {"steps", run.steps},
      {"steps_in_window", run.steps_counted},
      {"steps_wall_ms", run.have_window ? nlohmann::json(run.window_ms) : nlohmann::json()},
      {"mean_step_ms", run.have_window ? nlohmann::json(run.mean_step_ms) : nlohmann::json()},
      {"wall_ms", run.run_ms},
      {"exit_code", run.exit_code},
      {"signal", run.term_signal ? nlohmann::json(signal_name(run.term_signal)) : nlohmann::json()},
      {"stopped_early", run.stopped_early},
      {"max_steps", run.max_steps},
      {"threshold_pct", ctx.threshold_pct},
      {"confirmed", confirmed},
      {"steady_steps", run.steady_steps},
      {"steady_wall_ms", run.have_window ? nlohmann::json(run.steady_ms) : nlohmann::json()},
      {"data_wait_ms", run.data_wait_ms},
      {"gc_ms", run.gc_ms},
      {"estimated_step_ms", opt(run.estimated_step_ms)},
      {"saved_ms_per_step", opt(run.saved_ms_per_step)},
      {"overlapped_ms_per_step", opt(run.overlapped_ms_per_step)},
      {"estimated_p10_ms", opt(run.estimated_p10_ms)},
      {"estimated_p90_ms", opt(run.estimated_p90_ms)},
      {"warmup_excluded", run.warmup_excluded},
      {"p10_step_ms", opt(run.p10_step_ms)},
      {"p90_step_ms", opt(run.p90_step_ms)},
      {"torch_available", !run.no_torch},
      {"cpus", run.cpus ? nlohmann::json(run.cpus) : nlohmann::json()},
      {"main_cores_busy", opt(run.main_cores_busy)},
      {"no_spare_core", run.no_spare_core},
      {"first_batch_wait_ms", run.first_batch_wait_ms},
      {"loader_workers", run.loader_workers >= 0 ? nlohmann::json(run.loader_workers) : nlohmann::json()},
      {"gpu",
       {{"status", run.gpu_state},
        {"reason", run.gpu_reason},
        {"measured", run.gpu_ok},
        {"devices", run.gpu_devices},
        {"kernels", run.kernels},
        {"memcpys", run.memcpys},
        {"memsets", run.memsets},
        {"pageable_htod", run.pageable_htod},
        {"busy_ms", run.gpu_ok ? nlohmann::json(run.gpu_busy_ms) : nlohmann::json()},
        {"idle_ms", opt(run.gpu_idle_ms)}}},
      {"median_step_ms", opt(run.median_step_ms)},
      {"long_steps", run.long_steps},
      {"long_steps_ms", run.long_steps_ms},
      {"primary_pid", run.primary_pid},
      {"primary_rank", run.primary_rank ? nlohmann::json(*run.primary_rank) : nlohmann::json()},
      {"processes", procs},
      {"notes", run.notes}};
  return doc;
}

nlohmann::json trace_json(const std::vector<ProcessRecords>& procs, const std::vector<PlanSite>& sites) {
  int64_t t0 = INT64_MAX;
  for (auto& p : procs) {
    if (p.any_time()) t0 = std::min(t0, p.first_ns);
    for (auto& g : p.gpu) t0 = std::min(t0, g.t.start);
    for (auto& b : p.gpu_busy) t0 = std::min(t0, b.t.start);
  }
  if (t0 == INT64_MAX) t0 = 0;
  auto us = [&](int64_t ns) { return static_cast<double>(ns - t0) / 1000.0; };
  size_t omitted_busy = 0;  // gpu_busy intervals past the trace's bound
  nlohmann::json ev = nlohmann::json::array();
  auto complete = [&](const std::string& name, const char* cat, int64_t pid, int64_t tid, Interval t,
                      nlohmann::json args = nlohmann::json::object()) {
    if (t.end < t.start) return;
    ev.push_back({{"name", name}, {"cat", cat}, {"ph", "X"}, {"pid", pid}, {"tid", tid}, {"ts", us(t.start)},
                  {"dur", static_cast<double>(t.end - t.start) / 1000.0}, {"args", std::move(args)}});
  };
  auto meta = [&](const char* what, int64_t pid, std::optional<int64_t> tid, const std::string& name) {
    nlohmann::json j = {{"name", what}, {"ph", "M"}, {"pid", pid}, {"args", {{"name", name}}}};
    if (tid) j["tid"] = *tid;
    ev.push_back(std::move(j));
  };
  for (auto& p : procs) {
    int64_t pid = p.pid;
    std::string pname = p.role + " " + std::to_string(p.pid);
    if (p.rank) pname += " (rank " + std::to_string(*p.rank) + ")";
    meta("process_name", pid, std::nullopt, pname);
    meta("thread_name", pid, 1, "steps");
    meta("thread_name", pid, 2, "data");
    meta("thread_name", pid, 3, "flagged sites");
    meta("thread_name", pid, 4, "gc");
    // steps: each from the previous step's end; step 1 from its first batch's wait, if recorded
    std::vector<StepRec> steps = p.steps;
    std::sort(steps.begin(), steps.end(), [](auto& a, auto& b) { return a.end < b.end; });
    for (size_t i = 0; i < steps.size(); ++i) {
      int64_t start = -1;
      if (i > 0) start = steps[i - 1].end;
      else {
        int64_t lower = INT64_MIN;
        for (auto& it : p.iters)
          if (it.t.start < steps[0].end) lower = std::max(lower, it.t.start);
        for (auto& w : p.waits)
          if (w.t.start < steps[0].end && w.t.start >= lower && (start < 0 || w.t.start < start)) start = w.t.start;
      }
      if (start >= 0) complete("step " + std::to_string(steps[i].n), "step", pid, 1, {start, steps[i].end});
    }
    for (auto& w : p.waits) complete("data wait", "data", pid, 2, w.t);
    for (auto& it : p.iters) complete("iter(loader)", "data", pid, 2, it.t);
    for (auto& s : p.sites) {
      std::string name = "site " + std::to_string(s.id);
      nlohmann::json args = {{"id", s.id}};
      if (s.id >= 0 && s.id < static_cast<int64_t>(sites.size())) {
        const PlanSite& ps = sites[static_cast<size_t>(s.id)];
        name = ps.code + (ps.callee ? " " + *ps.callee : std::string());
        args["path"] = ps.path;
        args["line"] = ps.line;
      }
      complete(name, "site", pid, 3, s.t, args);
    }
    for (auto& g : p.gcs) complete("gc gen " + std::to_string(g.gen), "gc", pid, 4, g.t);
    std::map<std::pair<int64_t, int64_t>, int64_t> tids;
    for (auto& g : p.gpu) {
      auto key = std::make_pair(g.device, g.stream);
      auto it = tids.find(key);
      if (it == tids.end()) {
        int64_t tid = 1000 + static_cast<int64_t>(tids.size());
        it = tids.emplace(key, tid).first;
        meta("thread_name", pid, tid, "GPU " + std::to_string(g.device) + " stream " + std::to_string(g.stream));
      }
      std::string name = g.kind == "kernel" && !g.name.empty() ? g.name : g.kind;
      nlohmann::json args = nlohmann::json::object();
      if (g.kind == "memcpy") {
        name += " " + g.copy + (g.src_kind.empty() ? "" : " (" + g.src_kind + ")");
        args["bytes"] = g.bytes;
      }
      complete(name, "gpu", pid, it->second, g.t, args);
    }
    // past the shim's detail budget: merged busy intervals, one track per device, up to a bound
    // that keeps the trace loadable
    constexpr size_t kMaxBusyEvents = 500000;
    std::map<int64_t, int64_t> busy_tids;
    size_t shown = 0;
    for (auto& b : p.gpu_busy) {
      if (shown == kMaxBusyEvents) {
        omitted_busy += p.gpu_busy.size() - shown;
        break;
      }
      auto it = busy_tids.find(b.device);
      if (it == busy_tids.end()) {
        int64_t tid = 2000 + static_cast<int64_t>(busy_tids.size());
        it = busy_tids.emplace(b.device, tid).first;
        meta("thread_name", pid, tid, "GPU " + std::to_string(b.device) + " busy (merged kernels and memsets)");
      }
      complete("busy", "gpu", pid, it->second, b.t, nlohmann::json::object());
      ++shown;
    }
  }
  nlohmann::json other = {{"tool", "trainlint run"}, {"clock", "CLOCK_MONOTONIC"}, {"t0_ns", t0}};
  if (omitted_busy) other["gpu_busy_intervals_omitted"] = omitted_busy;
  return {{"traceEvents", ev}, {"displayTimeUnit", "ms"}, {"otherData", other}};
}

}  // namespace tl::runtime
