#include "analyzer/runtime/measure.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <unordered_map>

namespace tl::runtime {
namespace {

constexpr double kNsPerMs = 1e6;
double ms(int64_t ns) { return static_cast<double>(ns) / kNsPerMs; }

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

struct Group {
  const ProcessRecords* root = nullptr;
  std::vector<const ProcessRecords*> members;  // root first
  std::vector<StepRec> steps;                  // sorted by end, one per n
  bool have_window = false;
  Interval window;
  int64_t steps_counted = 0;
  double mean_step_ms = 0;
  double run_ms = 0;
  std::vector<Interval> busy;  // union of GPU activity
  bool gpu_ok = false;
  std::string gpu_state, gpu_reason;
  int64_t devices = 0;
  bool is_primary = false;

  std::string gpu_why() const {
    if (gpu_state.empty()) return "no GPU status was recorded";
    return gpu_reason.empty() ? gpu_state : gpu_state + ": " + gpu_reason;
  }
};

std::vector<StepRec> clean_steps(const std::vector<StepRec>& in) {
  std::vector<StepRec> v = in;
  std::stable_sort(v.begin(), v.end(), [](const StepRec& a, const StepRec& b) { return a.end < b.end; });
  std::set<int64_t> seen;
  std::vector<StepRec> out;
  for (auto& s : v)
    if (seen.insert(s.n).second) out.push_back(s);
  return out;
}

void compute_window(Group& g) {
  g.run_ms = g.root->any_time() ? ms(g.root->last_ns - g.root->first_ns) : 0;
  if (g.steps.empty()) return;
  int64_t first_end = g.steps.front().end, last_end = g.steps.back().end;
  // The epoch's `iter(loader)` that precedes step 1 bounds the search for its first batch's wait,
  // so that an evaluation pass or a warm-up before training is not counted as a step.
  int64_t lower = INT64_MIN;
  for (auto& it : g.root->iters)
    if (it.t.start < first_end) lower = std::max(lower, it.t.start);
  int64_t ws = INT64_MAX;
  for (auto& w : g.root->waits)
    if (w.t.start < first_end && w.t.start >= lower) ws = std::min(ws, w.t.start);
  if (ws != INT64_MAX) {
    g.window = {ws, last_end};
    g.steps_counted = static_cast<int64_t>(g.steps.size());
  } else if (g.steps.size() >= 2) {
    g.window = {first_end, last_end};
    g.steps_counted = static_cast<int64_t>(g.steps.size()) - 1;
  } else if (g.root->any_time() && g.root->first_ns < last_end) {
    g.window = {g.root->first_ns, last_end};
    g.steps_counted = 1;
  }
  g.have_window = g.window.length() > 0 && g.steps_counted > 0;
  if (g.have_window) g.mean_step_ms = ms(g.window.length()) / static_cast<double>(g.steps_counted);
}

void compute_gpu(Group& g, const MeasureOptions& opts) {
  std::vector<Interval> busy;
  std::set<int64_t> devices;
  for (auto* p : g.members)
    for (auto& r : p->gpu)
      if (r.kind == "kernel" || r.kind == "memcpy" || r.kind == "memset") {
        busy.push_back(r.t);
        devices.insert(r.device);
      }
  for (auto* p : g.members)
    for (auto& b : p->gpu_busy) {
      busy.push_back(b.t);
      devices.insert(b.device);
    }
  g.busy = normalize(std::move(busy));
  g.devices = static_cast<int64_t>(devices.size());
  const ProcessRecords* st = g.root->has_gpu_status ? g.root : nullptr;
  if (!st)
    for (auto* p : g.members)
      if (p->has_gpu_status) {
        st = p;
        break;
      }
  if (st) {
    g.gpu_state = st->gpu_state;
    g.gpu_reason = st->gpu_reason;
    if (st->gpu_devices) g.devices = std::max(g.devices, *st->gpu_devices);
  }
  if (!opts.shim_present) {
    g.gpu_state = "host-only";
    g.gpu_reason = opts.shim_note.empty() ? "libtrainlint_shim.so was not found" : opts.shim_note;
  }
  g.gpu_ok = g.gpu_state == "ok";
}

// Does loader record `id` (a plan site id or -1) belong to the DataLoader of site `s`?
bool loader_matches(int64_t id, const PlanSite& s, const std::vector<PlanSite>& sites) {
  if (id < 0) return true;
  if (id >= static_cast<int64_t>(sites.size())) return false;
  const PlanSite& o = sites[static_cast<size_t>(id)];
  return o.path == s.path && o.line == s.line && o.col == s.col;
}

FindingRuntime not_measurable(std::string why) {
  FindingRuntime r;
  r.verdict = "not-measurable";
  r.reason = std::move(why);
  r.gpu_idle_reason = "not measured";
  return r;
}

void finish(FindingRuntime& r, const Group& g, const MeasureOptions& opts) {
  r.group_pid = g.root->pid;
  r.rank = g.root->rank;
  if (!r.verdict.empty()) return;
  if (r.calls == 0 && r.worker_calls == 0 && r.pageable_copies == 0) {
    r.verdict = "not-reached";
    r.gpu_idle_reason = "not reached";
    return;
  }
  if (g.have_window) {
    r.ms_per_step = r.total_ms / static_cast<double>(g.steps.size());
    r.share = *r.ms_per_step / g.mean_step_ms;
    r.share_basis = "steps";
  } else if (g.run_ms > 0) {
    if (!g.steps.empty()) r.ms_per_step = r.total_ms / static_cast<double>(g.steps.size());
    r.share = r.total_ms / g.run_ms;
    r.share_basis = "run";
  } else {
    r.verdict = "not-measurable";
    r.reason = "no step or run time was recorded to compare it with";
  }
  // A call made after the last step (the loop's tail) can lift a share over the whole step by a
  // hair; time in the main process is at most all of it. (Worker time runs beside the steps: work
  // per step, which 2+ workers can take past 100%.)
  if (r.share && r.worker_calls == 0 && *r.share > 1.0) r.share = 1.0;
  if (r.verdict.empty()) r.verdict = *r.share * 100.0 >= opts.threshold_pct ? "confirmed" : "negligible";
  if (!g.gpu_ok) {
    r.gpu_idle_reason = g.gpu_state.empty() ? "no GPU status was recorded" : "GPU not measured (" + g.gpu_state + ")";
  } else if (r.host.empty()) {
    r.gpu_idle_reason = r.worker_calls > 0 ? "runs in DataLoader worker processes" : "no host interval";
  } else {
    r.gpu_idle_ms = ms(idle_within(g.busy, r.host));
  }
}

FindingRuntime measure_in(const PlanSite& s, const Group& g, const std::vector<PlanSite>& sites,
                          const MeasureOptions& opts) {
  FindingRuntime r;
  const std::string& probe = s.probe;
  auto add_root = [&](Interval t, std::vector<Interval>& host) {
    ++r.calls;
    r.total_ms += ms(t.length());
    host.push_back(t);
  };
  std::vector<Interval> host;
  if (probe == "site" || probe == "site+memcpy" || probe == "data-parallel") {
    for (auto* p : g.members)
      for (auto& rec : p->sites) {
        if (rec.id != s.id) continue;
        if (p == g.root) add_root(rec.t, host);
        else {
          ++r.worker_calls;
          r.worker_ms += ms(rec.t.length());
        }
      }
    r.calls += r.worker_calls;
    r.total_ms += r.worker_ms;
    r.host = normalize(host);
    if (probe == "data-parallel" && g.devices < 2) {
      // With fewer than 2 GPUs DataParallel calls the module directly: there is no overhead to see.
      FindingRuntime nm = not_measurable("DataParallel overhead needs 2 or more GPUs; this run saw " +
                                         std::to_string(g.devices));
      finish(nm, g, opts);
      return nm;
    }
    if (probe == "site+memcpy") {
      if (g.gpu_ok) {
        for (auto* p : g.members)
          for (auto& c : p->gpu)
            if (c.kind == "memcpy" && c.copy == "HtoD" && covered(r.host, {c.t.start, c.t.start + 1}) > 0) {
              ++r.htod_copies;
              if (c.src_kind == "pageable") {
                ++r.pageable_copies;
                r.pageable_copy_ms += ms(c.t.length());
              }
            }
      } else {
        r.reason = "site time only; its host-to-device copies need a measured GPU (" +
                   (g.gpu_state.empty() ? std::string("no status") : g.gpu_state) + ")";
      }
    }
  } else if (probe == "data-wait" || probe == "data-wait+memcpy") {
    if (probe == "data-wait+memcpy" && !g.gpu_ok) {
      FindingRuntime nm = not_measurable("pinned memory only matters for copies to a GPU; the GPU was not measured (" +
                                         (g.gpu_state.empty() ? std::string("no status") : g.gpu_state) + ")");
      finish(nm, g, opts);
      return nm;
    }
    for (auto& w : g.root->waits)
      if (loader_matches(w.id, s, sites)) add_root(w.t, host);
    r.host = normalize(host);
    if (probe == "data-wait+memcpy") {
      for (auto* p : g.members)
        for (auto& c : p->gpu)
          if (c.kind == "memcpy" && c.copy == "HtoD" && c.src_kind == "pageable") {
            ++r.pageable_copies;
            r.pageable_copy_ms += ms(c.t.length());
          }
      r.total_ms += r.pageable_copy_ms;
      r.reason = "data wait plus host-to-device copies from pageable memory";
    }
  } else if (probe == "worker-start") {
    for (auto& it : g.root->iters)
      if (loader_matches(it.id, s, sites)) add_root(it.t, host);
    r.host = normalize(host);
  } else if (probe == "gc") {
    for (auto& c : g.root->gcs) add_root(c.t, host);
    r.host = normalize(host);
  } else if (probe == "gpu-used") {
    if (!g.gpu_ok) {
      FindingRuntime nm = not_measurable("needs a measured GPU (" + (g.gpu_state.empty() ? std::string("no status") : g.gpu_state) + ")");
      finish(nm, g, opts);
      return nm;
    }
    int64_t kernels = 0;
    for (auto* p : g.members) {
      for (auto& c : p->gpu) kernels += c.kind == "kernel";
      kernels += p->busy_kernels;
    }
    r.calls = kernels;
    if (kernels == 0) {
      r.verdict = "confirmed";
      r.reason = "no CUDA kernel ran while a GPU was present";
      r.share = 1.0;
      if (g.have_window) r.gpu_idle_ms = ms(g.window.length());
    } else {
      r.verdict = "negligible";
      r.reason = std::to_string(kernels) + " kernels ran on the GPU";
      r.gpu_idle_reason = "the program used the GPU";
    }
    finish(r, g, opts);
    return r;
  } else {
    FindingRuntime nm = not_measurable(probe == "none" || probe.empty() ? "this rule has no runtime probe"
                                                                        : "unknown probe `" + probe + "`");
    finish(nm, g, opts);
    return nm;
  }
  finish(r, g, opts);
  return r;
}

std::string process_note(const ProcessRecords& p) {
  if (!p.has_end) {
    if (p.role == "worker") return "no end record (killed, or left through os._exit); a worker flushes every record, so nothing it measured is lost";
    return "no end record: killed or crashed; what it wrote before is reported";
  }
  if (p.end_reason == "os-exit") return "ended through os._exit";
  if (p.end_reason == "signal") return "ended by a signal";
  if (p.end_reason == "max-steps") return "stopped by --max-steps";
  if (!p.end_exception.empty()) return "ended with an uncaught " + p.end_exception;
  return "";
}

}  // namespace

Measurement measure(const std::vector<PlanSite>& sites, const std::vector<ProcessRecords>& procs,
                    const MeasureOptions& opts) {
  Measurement m;
  RunSummary& run = m.run;
  run.exit_code = opts.exit_code;
  run.term_signal = opts.term_signal;
  run.max_steps = opts.max_steps;
  run.have_records = !procs.empty();

  for (auto& p : procs) {
    ProcessSummary s;
    s.pid = p.pid;
    s.ppid = p.ppid;
    s.role = p.role;
    s.rank = p.rank;
    s.argv0 = p.argv0;
    s.steps = static_cast<int64_t>(clean_steps(p.steps).size());
    s.has_end = p.has_end;
    s.end_reason = p.end_reason;
    s.clean = p.has_end && (p.end_reason == "exit" || p.end_reason == "max-steps") && p.end_exception.empty();
    s.note = process_note(p);
    s.bad_lines = p.bad_lines;
    s.truncated_tail = p.truncated_tail;
    run.processes.push_back(std::move(s));
    for (auto& n : p.notes) {
      std::string line = "pid " + std::to_string(p.pid) + ": " + n;
      if (std::find(run.notes.begin(), run.notes.end(), line) == run.notes.end()) run.notes.push_back(line);
    }
    if (p.bad_lines)
      run.notes.push_back(std::to_string(p.bad_lines) + (p.bad_lines == 1 ? " line" : " lines") + " of " + p.file +
                          " could not be read" +
                          (p.truncated_tail ? " (a truncated last line: the process ended while writing)" : ""));
  }

  if (procs.empty()) {
    std::string why = !opts.bootstrap_present
                          ? "this trainlint was built without the Python bootstrap (shim/python), so nothing was measured"
                          : "the program wrote no records: it is not a Python program, Python ran with -E/-I/-S "
                            "(which skip sitecustomize), or it ended before the bootstrap loaded";
    run.notes.push_back(why);
    run.gpu_state = opts.shim_present ? "unknown" : "host-only";
    run.gpu_reason = opts.shim_present ? "no records" : opts.shim_note;
    for (auto& s : sites) {
      FindingRuntime r = not_measurable(s.probe == "none" || s.probe.empty() ? "this rule has no runtime probe"
                                                                             : "no records (see the note below)");
      m.findings.push_back(std::move(r));
    }
    return m;
  }

  // ---- groups ---------------------------------------------------------------------------
  std::unordered_map<int64_t, size_t> by_pid;
  for (size_t i = 0; i < procs.size(); ++i) by_pid.emplace(procs[i].pid, i);
  std::vector<Group> groups;
  std::unordered_map<const ProcessRecords*, size_t> group_of_root;
  for (auto& p : procs)
    if (p.role != "worker") {
      group_of_root[&p] = groups.size();
      Group g;
      g.root = &p;
      g.members.push_back(&p);
      groups.push_back(std::move(g));
    }
  if (groups.empty()) {  // only workers recorded: the earliest stands in for the main process
    const ProcessRecords* first = &procs.front();
    for (auto& p : procs)
      if (p.any_time() && (!first->any_time() || p.first_ns < first->first_ns)) first = &p;
    group_of_root[first] = 0;
    Group g;
    g.root = first;
    g.members.push_back(first);
    groups.push_back(std::move(g));
  }
  for (auto& g : groups) g.steps = clean_steps(g.root->steps);
  size_t primary = 0;
  auto better = [&](const Group& a, const Group& b) {  // is a a better primary than b?
    if (a.steps.size() != b.steps.size()) return a.steps.size() > b.steps.size();
    int64_t ra = a.root->rank.value_or(INT64_MAX), rb = b.root->rank.value_or(INT64_MAX);
    if (ra != rb) return ra < rb;
    if (a.root->any_time() != b.root->any_time()) return a.root->any_time();
    return a.root->first_ns < b.root->first_ns;
  };
  for (size_t i = 1; i < groups.size(); ++i)
    if (better(groups[i], groups[primary])) primary = i;
  groups[primary].is_primary = true;
  for (auto& p : procs) {
    if (group_of_root.count(&p)) continue;
    size_t gi = primary;
    int64_t cur = p.ppid;
    for (int depth = 0; depth < 32; ++depth) {
      auto it = by_pid.find(cur);
      if (it == by_pid.end()) break;
      const ProcessRecords* anc = &procs[it->second];
      if (auto r = group_of_root.find(anc); r != group_of_root.end()) {
        gi = r->second;
        break;
      }
      if (anc->ppid == cur) break;
      cur = anc->ppid;
    }
    groups[gi].members.push_back(&p);
  }
  for (auto& g : groups) {
    compute_window(g);
    compute_gpu(g, opts);
  }
  const Group& pg = groups[primary];

  // ---- per finding --------------------------------------------------------------------------
  for (auto& s : sites) {
    FindingRuntime best = measure_in(s, pg, sites, opts);
    for (size_t i = 0; i < groups.size(); ++i) {
      if (i == primary) continue;
      FindingRuntime r = measure_in(s, groups[i], sites, opts);
      if (r.measured() && (!best.measured() || r.total_ms > best.total_ms)) best = std::move(r);
    }
    m.findings.push_back(std::move(best));
  }

  // ---- the run ----------------------------------------------------------------------------
  run.primary_pid = pg.root->pid;
  run.primary_rank = pg.root->rank;
  run.steps = static_cast<int64_t>(pg.steps.size());
  run.steps_counted = pg.steps_counted;
  run.have_window = pg.have_window;
  run.window = pg.window;
  run.window_ms = pg.have_window ? ms(pg.window.length()) : 0;
  run.mean_step_ms = pg.mean_step_ms;
  if (pg.steps.size() >= 3) {
    std::vector<double> d;
    for (size_t i = 1; i < pg.steps.size(); ++i) d.push_back(ms(pg.steps[i].end - pg.steps[i - 1].end));
    std::vector<double> sorted = d;
    std::sort(sorted.begin(), sorted.end());
    const size_t n = sorted.size();
    const double med = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    run.median_step_ms = med;
    for (double x : d)
      if (med > 0 && x > 10 * med) {
        ++run.long_steps;
        run.long_steps_ms += x;
      }
  }
  run.run_ms = pg.run_ms;
  run.gpu_ok = pg.gpu_ok;
  run.gpu_state = pg.gpu_state.empty() ? "unknown" : pg.gpu_state;
  run.gpu_reason = pg.gpu_state.empty() ? "no GPU status was recorded" : pg.gpu_reason;
  run.gpu_devices = pg.devices;
  for (auto* p : pg.members) {
    for (auto& c : p->gpu) {
      if (c.kind == "kernel") ++run.kernels;
      else if (c.kind == "memcpy") {
        ++run.memcpys;
        if (c.copy == "HtoD" && c.src_kind == "pageable") ++run.pageable_htod;
      } else if (c.kind == "memset") ++run.memsets;
    }
    run.kernels += p->busy_kernels;
    run.memsets += p->busy_memsets;
  }
  for (auto& g : groups)
    for (auto* p : g.members)
      if (p->has_end && p->end_reason == "max-steps" && p->role != "worker") run.stopped_early = true;
  // (a process killed before its `end` line: its step count says it reached --max-steps; steps
  // found from backward() calls are not what --max-steps counts)
  if (opts.max_steps > 0 && run.steps >= opts.max_steps && !pg.root->steps_from_backward) run.stopped_early = true;

  if (pg.have_window) {
    // The runtime-only findings look at the steady state: without step 1 (worker start-up, the
    // first batch, lazy initialisation) when there are two steps or more, so that a short
    // --max-steps profile is not dominated by warm-up.
    run.steady = pg.window;
    run.steady_steps = pg.steps_counted;
    if (pg.steps.size() >= 2 && pg.steps.front().end > pg.window.start) {
      run.steady = {pg.steps.front().end, pg.steps.back().end};
      run.steady_steps = static_cast<int64_t>(pg.steps.size()) - 1;
    }
    run.steady_ms = ms(run.steady.length());
    std::vector<Interval> waits, gcs;
    for (auto& w : pg.root->waits) waits.push_back(w.t);
    for (auto& c : pg.root->gcs) gcs.push_back(c.t);
    for (auto& w : waits) run.data_waits += covered({w}, run.steady) > 0;
    for (auto& c : gcs) run.gcs += covered({c}, run.steady) > 0;
    run.data_wait_ms = ms(covered(normalize(waits), run.steady));
    run.gc_ms = ms(covered(normalize(gcs), run.steady));
    if (pg.gpu_ok) {
      run.gpu_busy_ms = ms(covered(pg.busy, run.steady));
      run.gpu_idle_ms = run.steady_ms - run.gpu_busy_ms;
    }
    // Estimated step time without the confirmed findings: the union of their host intervals in
    // the primary process (so a PIL decode inside a data wait is not counted twice), per step.
    std::vector<Interval> saved;
    for (size_t i = 0; i < sites.size(); ++i) {
      auto& r = m.findings[i];
      if (r.verdict == "confirmed" && r.group_pid == pg.root->pid)
        saved.insert(saved.end(), r.host.begin(), r.host.end());
    }
    double saved_ms = ms(covered(normalize(saved), pg.window));
    run.saved_ms_per_step = saved_ms / static_cast<double>(pg.steps_counted);
    run.estimated_step_ms = std::max(0.0, run.mean_step_ms - *run.saved_ms_per_step);

    double wpct = run.steady_ms > 0 ? 100.0 * run.data_wait_ms / run.steady_ms : 0;
    if (opts.tl901 && wpct > opts.data_stall_pct)
      m.runtime_findings.push_back(
          {"TL901", "data-stall", wpct, run.data_wait_ms, run.data_waits,
           "waiting for the next batch took " + fmt("%.1f", wpct) + "% of step time (" + fmt("%.1f", run.data_wait_ms) +
               " ms in " + std::to_string(run.data_waits) + " waits): the input pipeline does not keep up; use "
               "DataLoader workers, pinned memory, a cheaper decode or a cached dataset"});
    double gpct = run.steady_ms > 0 ? 100.0 * run.gc_ms / run.steady_ms : 0;
    if (opts.tl902 && gpct > opts.gc_pauses_pct)
      m.runtime_findings.push_back(
          {"TL902", "gc-pauses", gpct, run.gc_ms, run.gcs,
           "automatic garbage collection paused the program for " + fmt("%.1f", gpct) + "% of step time (" +
               std::to_string(run.gcs) + " collections, " + fmt("%.1f", run.gc_ms) +
               " ms): call gc.freeze() after setup, or raise the thresholds with gc.set_threshold"});
    if (opts.tl903 && pg.gpu_ok && run.gpu_idle_ms) {
      double ipct = run.steady_ms > 0 ? 100.0 * *run.gpu_idle_ms / run.steady_ms : 0;
      if (ipct > opts.gpu_idle_pct)
        m.runtime_findings.push_back(
            {"TL903", "gpu-idle", ipct, *run.gpu_idle_ms, run.kernels,
             "the GPU was idle for " + fmt("%.1f", ipct) + "% of the steps' wall time (" +
                 fmt("%.1f", *run.gpu_idle_ms) + " ms of " + fmt("%.1f", run.steady_ms) +
                 " ms): the host does not keep it fed; see the findings above for where the time goes"});
    }
  }
  if (pg.root->steps_from_backward)
    run.notes.push_back("no optimizer step ran: a step is one backward() call (a hand-written update)" +
                        std::string(opts.max_steps > 0 && !run.stopped_early
                                        ? "; --max-steps counts optimizer steps and did not stop the program"
                                        : ""));
  if (!run.have_window) {
    run.notes.push_back(run.steps == 0 ? "no optimizer step was recorded: shares are of the recorded run time"
                                       : "the steps' wall time could not be delimited: shares are of the recorded run time");
  }
  return m;
}

}  // namespace tl::runtime
