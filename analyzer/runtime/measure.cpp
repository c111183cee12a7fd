#include "analyzer/runtime/measure.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
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
  std::vector<Interval> step_ivs;              // the counted steps (2+ steps: steps 2..N)
  bool warmup_excluded = false;
  double p10_step_ms = 0, p90_step_ms = 0;     // spread of the counted steps (0: unknown)
  double wait_window_ms = 0;                   // the root's data waits inside the window
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

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  double pos = q * static_cast<double>(v.size() - 1);
  size_t lo = static_cast<size_t>(pos);
  size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

// The steps' window. One definition for every figure: with 2 steps or more, from step 1's end to
// the last step's end (step 1, the warm-up: worker start-up, the first batch, lazy initialisation,
// is left out and the report says so); with one step, from its first batch's wait (or the
// process's first record) to its end.
void compute_window(Group& g) {
  g.run_ms = g.root->any_time() ? ms(g.root->last_ns - g.root->first_ns) : 0;
  if (g.steps.empty()) return;
  int64_t first_end = g.steps.front().end, last_end = g.steps.back().end;
  if (g.steps.size() >= 2) {
    g.window = {first_end, last_end};
    g.steps_counted = static_cast<int64_t>(g.steps.size()) - 1;
    g.warmup_excluded = true;
    std::vector<double> d;
    for (size_t i = 1; i < g.steps.size(); ++i) {
      g.step_ivs.push_back({g.steps[i - 1].end, g.steps[i].end});
      d.push_back(ms(g.steps[i].end - g.steps[i - 1].end));
    }
    if (d.size() >= 2) {
      g.p10_step_ms = quantile(d, 0.1);
      g.p90_step_ms = quantile(d, 0.9);
    }
    g.have_window = g.window.length() > 0;
    if (g.have_window) g.mean_step_ms = ms(g.window.length()) / static_cast<double>(g.steps_counted);
    return;
  }
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
  } else if (g.root->any_time() && g.root->first_ns < last_end) {
    g.window = {g.root->first_ns, last_end};
    g.steps_counted = 1;
  }
  g.have_window = g.window.length() > 0 && g.steps_counted > 0;
  if (g.have_window) g.mean_step_ms = ms(g.window.length()) / static_cast<double>(g.steps_counted);
}

void compute_waits(Group& g) {
  if (!g.have_window) return;
  std::vector<Interval> w;
  for (auto& x : g.root->waits) w.push_back(x.t);
  g.wait_window_ms = ms(covered(normalize(std::move(w)), g.window));
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
    r.ms_per_step = r.window_ms / static_cast<double>(g.steps_counted);
    r.share = *r.ms_per_step / g.mean_step_ms;
    r.share_basis = "steps";
    // near the threshold: its share of a slow (p90) step and of a fast (p10) step fall either side
    if (g.p10_step_ms > 0 && g.p90_step_ms > 0 && r.worker_calls == 0) {
      double hi = 100.0 * *r.ms_per_step / g.p10_step_ms, lo = 100.0 * *r.ms_per_step / g.p90_step_ms;
      r.borderline = lo < opts.threshold_pct && opts.threshold_pct <= hi;
    }
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
  if (r.share && r.worker_calls > 0 && r.host.empty() && g.have_window && r.share_basis == "steps") {
    // All of it ran in DataLoader workers, beside the steps: a fix saves step time only where the
    // main process waited for a batch, so the step time it can save is at most that wait.
    double wait_per_step = g.wait_window_ms / static_cast<double>(g.steps_counted);
    if (wait_per_step < *r.ms_per_step) {
      r.share = wait_per_step / g.mean_step_ms;
      r.reason = "runs in DataLoader workers (" + fmt("%.2f", *r.ms_per_step) + " ms of work per step); the steps waited " +
                 fmt("%.2f", wait_per_step) + " ms per step for data, which is all a fix can save";
    }
  }
  if (r.verdict.empty()) r.verdict = *r.share * 100.0 >= opts.threshold_pct ? "confirmed" : "negligible";
  if (r.verdict == "negligible" && r.calls > 0 && r.window_ms == 0 && g.have_window && r.reason.empty())
    r.reason = "every call ran outside the counted steps (setup, warm-up step 1 or after the last step): fixing it saves no step time";
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
  // the main process's time inside the window (its intervals' union), plus workers' time there
  double worker_window_ms = 0;
  auto window_of_host = [&] {
    r.window_ms = g.have_window ? ms(covered(r.host, g.window)) + worker_window_ms : 0;
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
          if (g.have_window) worker_window_ms += ms(covered({g.window}, rec.t));
        }
      }
    r.calls += r.worker_calls;
    r.total_ms += r.worker_ms;
    if (s.callee && (s.callee->ends_with(".DataLoader") || *s.callee == "DataLoader")) {
      // A DataLoader built at the site (every step: TL107) costs little to construct; its workers
      // start at iter() and its first batch comes after them. Both are this construction's cost.
      std::vector<const LoaderRec*> its;
      for (auto& it : g.root->iters)
        if (it.id >= 0 && loader_matches(it.id, s, sites)) its.push_back(&it);
      std::sort(its.begin(), its.end(), [](auto* a, auto* b) { return a->t.start < b->t.start; });
      auto take = [&](Interval t) {  // one of the loader's intervals: its time is the loader's
        host.push_back(t);
        r.loader_start_ms += ms(t.length());
      };
      for (size_t k = 0; k < its.size(); ++k) {
        int64_t next = k + 1 < its.size() ? its[k + 1]->t.start : INT64_MAX;
        take(its[k]->t);
        ++r.loader_starts;
        const LoaderRec* first = nullptr;
        for (auto& w : g.root->waits)
          if (w.id >= 0 && loader_matches(w.id, s, sites) && w.t.start >= its[k]->t.start && w.t.start < next &&
              (!first || w.t.start < first->t.start))
            first = &w;
        if (first) {
          take(first->t);
          // iter() then next() in one statement of the program: the time between is the loader's
          if (first->joined_from >= its[k]->t.end) take({first->joined_from, first->t.start});
        }
      }
      for (auto& st : g.root->stops)
        if (st.id >= 0 && loader_matches(st.id, s, sites)) {
          take(st.t);
          // the shutdown in the statement that took the first batch
          if (st.joined_from > 0) take({st.joined_from, st.t.start});
        }
      // After the fork the process's pages stay copy-on-write: every page the step writes outside
      // the loader's intervals takes a fault (tens of microseconds in a virtual machine), while
      // the workers live (the shim's and the program's code between the intervals) and after they
      // are gone (the rest of the step): time the fork caused but no interval holds. Priced at
      // the costs the shim measured at exit.
      if (g.root->fault_ns > 0)
        for (auto& c : g.root->cows)
          if (c.id >= 0 && loader_matches(c.id, s, sites)) {
            const double live_ns = g.root->fault_live_ns > 0 ? g.root->fault_live_ns : g.root->fault_ns;
            double cms = (static_cast<double>(c.faults) * g.root->fault_ns + static_cast<double>(c.live_faults) * live_ns) / 1e6;
            r.cow_faults += c.faults + c.live_faults;
            r.cow_ms += cms;
            r.cow_at.emplace_back(c.at, cms);
          }
      r.total_ms += r.loader_start_ms + r.cow_ms;
      if (r.loader_starts) {
        r.reason = "with its iterators' worker start-up, first batch and shutdown (" + std::to_string(r.loader_starts) +
                   " iterators)";
        if (r.cow_faults)
          r.reason += " and the copy-on-write faults their fork left on the rest of the steps (" +
                      std::to_string(r.cow_faults) + " faults, " + fmt("%.1f", r.cow_ms) + " ms)";
      }
    }
    r.host = normalize(host);
    window_of_host();
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
    window_of_host();
    if (probe == "data-wait+memcpy") {
      for (auto* p : g.members)
        for (auto& c : p->gpu)
          if (c.kind == "memcpy" && c.copy == "HtoD" && c.src_kind == "pageable") {
            ++r.pageable_copies;
            r.pageable_copy_ms += ms(c.t.length());
            if (g.have_window) r.window_ms += ms(covered({g.window}, c.t));
          }
      r.total_ms += r.pageable_copy_ms;
      r.reason = "data wait plus host-to-device copies from pageable memory";
    }
  } else if (probe == "worker-start") {
    for (auto& it : g.root->iters)
      if (loader_matches(it.id, s, sites)) add_root(it.t, host);
    r.host = normalize(host);
    window_of_host();
    if (r.calls > 0 && r.window_ms == 0 && g.have_window)
      r.reason = "the workers started " + std::to_string(r.calls) +
                 (r.calls == 1 ? " time, before the counted steps: once per run cannot be avoided"
                               : " times, all before the counted steps");
  } else if (probe == "gc") {
    for (auto& c : g.root->gcs) add_root(c.t, host);
    r.host = normalize(host);
    window_of_host();
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
    if (p.role == "worker" || p.role == "helper")
      return "no end record (killed, or left through os._exit); a " + p.role +
             " flushes every record, so nothing it measured is lost";
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
    if (p.role != "worker" && p.role != "helper") {  // helpers join their parent's group, like workers
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
    compute_waits(g);
    compute_gpu(g, opts);
  }
  for (auto& g : groups)
    for (auto& s : run.processes) {
      if (s.pid != g.root->pid) continue;
      int64_t prev = g.root->any_time() ? g.root->first_ns : (g.steps.empty() ? 0 : g.steps.front().end);
      s.step_ms.clear();
      for (auto& st : g.steps) {
        s.step_ms.push_back(ms(st.end - std::min(prev, st.end)));
        prev = st.end;
      }
      if (g.have_window) s.mean_step_ms = g.mean_step_ms;
      if (g.step_ivs.size() >= 2) {
        std::vector<double> d;
        for (auto& iv : g.step_ivs) d.push_back(ms(iv.length()));
        s.median_step_ms = quantile(d, 0.5);
      }
      s.data_wait_ms = g.wait_window_ms;
      break;
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

  // ---- shares that add up, and shares after the larger fixes ---------------------------------
  if (pg.have_window) {
    const double steps = static_cast<double>(pg.steps_counted);
    std::vector<std::vector<Interval>> in(sites.size());
    for (size_t i = 0; i < sites.size(); ++i)
      if (m.findings[i].measured() && m.findings[i].group_pid == pg.root->pid)
        in[i] = clip(m.findings[i].host, pg.window);
    for (size_t i = 0; i < sites.size(); ++i) {
      auto& r = m.findings[i];
      if (!r.measured() || !r.share) continue;
      if (in[i].empty()) {
        r.self_share = r.share;
        continue;
      }
      // intervals of other findings that lie inside one of its own (ties: the earlier site keeps it)
      std::vector<Interval> nested;
      for (size_t j = 0; j < sites.size(); ++j) {
        if (j == i) continue;
        for (auto& x : in[j]) {
          auto it = std::upper_bound(in[i].begin(), in[i].end(), x.start, [](int64_t v, const Interval& y) { return v < y.start; });
          if (it == in[i].begin()) continue;
          const Interval& y = *std::prev(it);
          if (y.start <= x.start && x.end <= y.end && (x.length() < y.length() || j > i)) nested.push_back(x);
        }
      }
      double self_ms = ms(total_length(in[i]) - union_length(std::move(nested)));
      r.self_share = std::min(*r.share, (self_ms / steps) / pg.mean_step_ms);
    }
    std::vector<size_t> confirmed;
    for (size_t i = 0; i < sites.size(); ++i)
      if (m.findings[i].verdict == "confirmed" && !in[i].empty()) confirmed.push_back(i);
    std::stable_sort(confirmed.begin(), confirmed.end(),
                     [&](size_t a, size_t b) { return m.findings[a].window_ms > m.findings[b].window_ms; });
    for (size_t i = 0; i < sites.size(); ++i) {
      auto& r = m.findings[i];
      if (!r.measured() || !r.share || in[i].empty()) continue;
      std::vector<Interval> larger;
      for (size_t c : confirmed) {
        if (c == i || m.findings[c].window_ms <= r.window_ms) continue;
        larger.insert(larger.end(), in[c].begin(), in[c].end());
      }
      std::vector<Interval> fixed = normalize(std::move(larger));
      double left_step = pg.mean_step_ms - ms(total_length(fixed)) / steps;
      double own_left = ms(total_length(in[i]) - total_length(intersect(in[i], fixed))) / steps;
      if (left_step > 0) r.share_after = std::min(1.0, own_left / left_step);
    }
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
  run.warmup_excluded = pg.warmup_excluded;
  if (pg.step_ivs.size() >= 2) {
    std::vector<double> d;
    for (auto& iv : pg.step_ivs) d.push_back(ms(iv.length()));
    const double med = quantile(d, 0.5);
    run.median_step_ms = med;
    run.p10_step_ms = pg.p10_step_ms;
    run.p90_step_ms = pg.p90_step_ms;
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
      if (p->has_end && p->end_reason == "max-steps" && p->role != "worker" && p->role != "helper")
        run.stopped_early = true;
  // (a process killed before its `end` line: its step count says it reached --max-steps; steps
  // found from backward() calls are not what --max-steps counts)
  if (opts.max_steps > 0 && run.steps >= opts.max_steps && !pg.root->steps_from_backward) run.stopped_early = true;

  if (pg.have_window) {
    // One window for every figure (the steady state: step 1 left out when there are 2 or more).
    run.steady = pg.window;
    run.steady_steps = pg.steps_counted;
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
    run.cpus = pg.root->cpus;
    if (pg.root->cpu_ms >= 0 && pg.run_ms > 0) run.main_cores_busy = static_cast<double>(pg.root->cpu_ms) / pg.run_ms;
    run.no_spare_core = run.cpus > 0 && run.main_cores_busy && static_cast<double>(run.cpus) - *run.main_cores_busy < 1.0;
    std::vector<Interval> saved;
    std::vector<std::pair<int64_t, double>> saved_spread;  // costs no interval holds (copy-on-write)
    for (size_t i = 0; i < sites.size(); ++i) {
      auto& r = m.findings[i];
      if (r.verdict != "confirmed" || r.group_pid != pg.root->pid) continue;
      if (run.no_spare_core && (sites[i].probe == "data-wait" || sites[i].probe == "data-wait+memcpy")) {
        // its fix is workers, and workers need a core the main process does not already use
        r.reason = "not in the estimate: DataLoader workers need spare cores, and the main process already keeps " +
                   fmt("%.1f", *run.main_cores_busy) + " of this machine's " + std::to_string(run.cpus) + " busy";
        continue;
      }
      saved.insert(saved.end(), r.host.begin(), r.host.end());
      saved_spread.insert(saved_spread.end(), r.cow_at.begin(), r.cow_at.end());
    }
    std::vector<Interval> saved_set = normalize(saved);
    // With the GPU measured, a host stall costs step time only while the GPU has nothing queued:
    // while it still runs kernels the host queued before the stall, removing the stall would only
    // make the host wait for them later (a GPU-bound step stays as long). So the saving is the
    // findings' time during which the GPU was idle; the part that overlapped GPU work is said.
    std::vector<Interval> overlapped = pg.gpu_ok ? intersect(saved_set, pg.busy) : std::vector<Interval>{};
    auto saved_in = [&](const Interval& iv) { return ms(covered(saved_set, iv) - covered(overlapped, iv)); };
    // a spread cost belongs to the step that ends at its time stamp
    auto spread_in = [&](const Interval& iv) {
      double sum = 0;
      for (auto& [at, cms] : saved_spread)
        if (at > iv.start && at <= iv.end) sum += cms;
      return sum;
    };
    double saved_ms = saved_in(pg.window) + spread_in(pg.window);
    run.saved_ms_per_step = saved_ms / static_cast<double>(pg.steps_counted);
    if (pg.gpu_ok) run.overlapped_ms_per_step = ms(covered(overlapped, pg.window)) / static_cast<double>(pg.steps_counted);
    run.estimated_step_ms = std::max(0.0, run.mean_step_ms - *run.saved_ms_per_step);
    if (pg.step_ivs.size() >= 2) {
      // step by step: each counted step minus the confirmed findings' time inside it
      std::vector<double> est;
      for (auto& iv : pg.step_ivs)
        est.push_back(std::max(0.0, ms(iv.length()) - saved_in(iv) - spread_in(iv)));
      run.estimated_step_ms = quantile(est, 0.5);
      run.estimated_p10_ms = quantile(est, 0.1);
      run.estimated_p90_ms = quantile(est, 0.9);
    }

    // TL901's cause: fresh iterators' first batches (a loader iterated anew inside the loop) or
    // loaders whose workers do not keep up, or no workers at all.
    {
      std::vector<const LoaderRec*> its;
      for (auto& it : pg.root->iters) its.push_back(&it);
      std::sort(its.begin(), its.end(), [](auto* a, auto* b) { return a->t.start < b->t.start; });
      std::vector<Interval> firsts;
      for (size_t k = 0; k < its.size(); ++k) {
        if (covered({run.steady}, its[k]->t) > 0) ++run.loader_iters;
        if (its[k]->workers >= 0) run.loader_workers = std::max(run.loader_workers, its[k]->workers);
        int64_t next = k + 1 < its.size() ? its[k + 1]->t.start : INT64_MAX;
        const LoaderRec* first = nullptr;
        for (auto& w : pg.root->waits)
          if (w.t.start >= its[k]->t.start && w.t.start < next && (!first || w.t.start < first->t.start)) first = &w;
        if (first) firsts.push_back(first->t);
      }
      run.first_batch_wait_ms = ms(covered(normalize(firsts), run.steady));
    }
    double wpct = run.steady_ms > 0 ? 100.0 * run.data_wait_ms / run.steady_ms : 0;
    if (opts.tl901 && wpct > opts.data_stall_pct) {
      std::string head = "waiting for the next batch took " + fmt("%.1f", wpct) + "% of step time (" +
                         fmt("%.1f", run.data_wait_ms) + " ms in " + std::to_string(run.data_waits) + " waits): ";
      std::string cause;
      if (run.loader_iters >= 2 && run.first_batch_wait_ms >= 0.5 * run.data_wait_ms)
        cause = "most of it (" + fmt("%.1f", run.first_batch_wait_ms) + " ms) is the first batch of " +
                std::to_string(run.loader_iters) + " DataLoader iterators started during the steps" +
                (run.loader_workers > 0 ? ", each starting its " + std::to_string(run.loader_workers) + " workers" : "") +
                ": build the DataLoader once, outside the loop, and iterate it (persistent_workers=True keeps its workers)";
      else if (run.no_spare_core)
        cause = "the machine has no core to spare for DataLoader workers (the main process keeps " +
                fmt("%.1f", *run.main_cores_busy) + " of " + std::to_string(run.cpus) +
                " busy): make __getitem__ cheaper, cache decoded samples, or run on a machine with more cores";
      else if (run.loader_workers > 0)
        cause = "the loader's " + std::to_string(run.loader_workers) +
                " workers do not keep up: make __getitem__ cheaper (decode, augmentation), cache decoded samples, or add "
                "workers if the machine has idle cores";
      else
        cause = "the input pipeline does not keep up; use DataLoader workers, pinned memory, a cheaper decode or a cached "
                "dataset";
      m.runtime_findings.push_back({"TL901", "data-stall", wpct, run.data_wait_ms, run.data_waits, head + cause});
    }
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
  run.python_executable = pg.root->executable;
  if (pg.root->torch_missing) {
    run.no_torch = true;
    run.notes.push_back("the program's interpreter" +
                        (pg.root->executable.empty() ? std::string() : " (" + pg.root->executable + ")") +
                        " cannot import torch: nothing PyTorch does was measured; run it with the Python that has torch");
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
