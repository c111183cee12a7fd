// The merge: records of every process -> per-finding runtime figures and verdicts, the run's
// summary, and the runtime-only findings TL901-TL903. Pure: it reads records already parsed
// (records.h) and the plan's sites; the tests feed it hand-written records.
//
// Definitions (process groups, the steps' window, share, GPU idle, the steady state used by
// TL901-TL903, the estimate) are in analyzer/runtime/README.md; in short:
// - every non-worker process roots a group, workers join their parent's; run figures come from
//   the group with the most steps, a finding's from the group where it cost the most;
// - the steps' window runs from the first batch's wait before step 1 to the last step's end;
//   share = ms_per_step / mean step time;
// - GPU idle = the part of a finding's (unioned) main-process intervals that the union of the
//   group's kernel/memcpy/memset records leaves uncovered.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/core/finding.h"
#include "analyzer/runtime/intervals.h"
#include "analyzer/runtime/records.h"

namespace tl::runtime {

// One plan site: a static finding as the bootstrap sees it. `id` is its index in the plan.
struct PlanSite {
  int64_t id = 0;
  std::string code;
  std::string path;  // absolute
  uint32_t line = 0, col = 0;
  std::string probe;
  std::optional<std::string> callee;
  // The statement the call belongs to, timed as a unit (first and last line) when more than the
  // call runs in it: `json.load(open(p))`, `Image.open(p).convert("RGB")`, or a `with` block
  // whose item is the call. 0: the call alone.
  uint32_t unit_start = 0, unit_end = 0;
};

struct MeasureOptions {
  double threshold_pct = 1.0;     // confirmed at or above this share of step time
  double data_stall_pct = 5.0;    // TL901
  double gc_pauses_pct = 1.0;     // TL902
  double gpu_idle_pct = 50.0;     // TL903
  int64_t max_steps = 0;          // what --max-steps asked (0: none)
  bool shim_present = true;       // libtrainlint_shim.so was found and passed to the child
  std::string shim_note;          // why not, when it was not
  bool bootstrap_present = true;  // the bootstrap was built in and injected
  int exit_code = 0;              // the program's exit code (128+N for a signal)
  int term_signal = 0;            // the signal that ended it (0: none)
  // Which runtime-only findings are enabled (--select/--ignore).
  bool tl901 = true, tl902 = true, tl903 = true;
};

struct FindingRuntime {
  std::string verdict;  // confirmed / negligible / not-reached / not-measurable
  std::string reason;   // why not measurable, or a short note on what was measured
  int64_t calls = 0;
  double total_ms = 0;
  std::optional<double> ms_per_step;
  std::optional<double> share;  // fraction (0.25 = 25%) of the steps' wall time
  std::string share_basis = "steps";  // steps / run
  std::optional<double> gpu_idle_ms;
  std::string gpu_idle_reason;  // when gpu_idle_ms is null
  // detail
  int64_t worker_calls = 0;
  double worker_ms = 0;
  int64_t pageable_copies = 0;  // data-wait+memcpy / site+memcpy: HtoD copies from pageable memory
  double pageable_copy_ms = 0;
  int64_t htod_copies = 0;      // site+memcpy: host-to-device copies inside the site's calls
  int64_t group_pid = 0;        // the group (root process) the figures come from
  std::optional<int64_t> rank;
  std::vector<Interval> host;   // the root process's intervals (normalised), for the estimate and trace
  // Its time inside the steps' window (main process and workers): what ms_per_step and share use.
  double window_ms = 0;
  // The threshold lies between its share of a p90 step and its share of a p10 step: a verdict
  // that another run of the same program could flip.
  bool borderline = false;
  // DataLoader built at the site (TL107): its iterators' start-up and first-batch waits, counted
  // in the figures above (time the construction caused, not the constructor's own).
  int64_t loader_starts = 0;
  double loader_start_ms = 0;
  // ... and the copy-on-write faults the workers' fork left on the main process for the rest of
  // each step (`cow` records priced at the `fault_cost` the shim measured), included above.
  int64_t cow_faults = 0;
  double cow_ms = 0;
  std::vector<std::pair<int64_t, double>> cow_at;  // (step end, ms): for the per-step estimate
  // Its share without the time of other findings nested inside it (a forward pass inside an
  // evaluation loop): the self shares of one process add up to at most 100% of the step.
  std::optional<double> self_share;
  // Its share of the step that is left once the confirmed findings larger than it are fixed.
  std::optional<double> share_after;
  bool measured() const { return verdict == "confirmed" || verdict == "negligible"; }
};

struct ProcessSummary {
  int64_t pid = 0, ppid = 0;
  std::string role;
  std::optional<int64_t> rank;
  std::string argv0;
  int64_t steps = 0;
  bool has_end = false;
  std::string end_reason;
  bool clean = false;  // an `end` record with reason exit or max-steps
  std::string note;    // "no end record (killed or crashed)", "os._exit", "signal"...
  size_t bad_lines = 0;
  bool truncated_tail = false;
  // A training process (every non-worker one): each step's duration in order, step 1 (the
  // warm-up) from the process's first record; the mean and median of its counted steps (the same
  // window definition as the run's) and its data wait inside them. For the HTML timeline and
  // `trainlint merge`'s per-rank figures.
  std::vector<double> step_ms;
  std::optional<double> mean_step_ms, median_step_ms;
  double data_wait_ms = 0;
};

struct RuntimeFinding {
  std::string code, slug;
  double pct = 0;     // of the steps' wall time
  double ms = 0;      // total in the window
  int64_t count = 0;  // waits / collections / -
  std::string message;
};

struct RunSummary {
  bool have_records = false;
  int64_t steps = 0;          // optimizer steps of the primary group
  int64_t steps_counted = 0;  // steps inside the window (see above)
  bool have_window = false;
  Interval window;
  double window_ms = 0;
  double mean_step_ms = 0;
  // The typical step: the median time between consecutive step ends (3+ steps), and the steps
  // that took over 10x that (an evaluation, a checkpoint or a log pass inside the loop).
  std::optional<double> median_step_ms;
  std::optional<double> p10_step_ms, p90_step_ms;  // the spread of the counted steps (3+ steps)
  bool warmup_excluded = false;  // step 1 (worker start-up, first batch, lazy init) is not counted
  int64_t long_steps = 0;
  double long_steps_ms = 0;
  double run_ms = 0;  // primary root's first to last record
  int64_t primary_pid = 0;
  std::optional<int64_t> primary_rank;
  int exit_code = 0;
  int term_signal = 0;
  bool stopped_early = false;
  int64_t max_steps = 0;
  // GPU
  bool gpu_ok = false;
  std::string gpu_state;   // ok / no-driver / no-gpu / busy / unavailable / host-only / unknown
  std::string gpu_reason;
  int64_t gpu_devices = 0;  // distinct devices in the records (or reported by the shim)
  int64_t kernels = 0, memcpys = 0, memsets = 0, pageable_htod = 0;
  double gpu_busy_ms = 0;  // inside the steady window
  std::optional<double> gpu_idle_ms;  // inside the steady window
  // The steady state: the window without step 1 when there are 2 steps or more. The data wait,
  // GC and GPU figures below, and TL901-TL903, are measured inside it.
  Interval steady;
  double steady_ms = 0;
  int64_t steady_steps = 0;
  // data / gc (primary root, inside the steady window)
  double data_wait_ms = 0;
  int64_t data_waits = 0;
  double gc_ms = 0;
  int64_t gcs = 0;
  // estimate
  std::optional<double> saved_ms_per_step;
  // With the GPU measured: the confirmed findings' host time per step during which the GPU was
  // busy with work queued before it, which a fix would not save (not in saved_ms_per_step).
  std::optional<double> overlapped_ms_per_step;
  // The estimate, step by step: each counted step's time minus the confirmed findings' time in it;
  // estimated_step_ms is their median (the mean minus the saving with fewer than 2 counted
  // steps), with their p10 and p90.
  std::optional<double> estimated_step_ms;
  std::optional<double> estimated_p10_ms, estimated_p90_ms;
  // The machine: cores the main process may use, and how many it kept busy on average (its CPU
  // time over its run time). With less than one core to spare, DataLoader workers would compete
  // with the main process: data-path findings are then left out of the estimate.
  int64_t cpus = 0;
  std::optional<double> main_cores_busy;
  bool no_spare_core = false;
  // The interpreter of the primary process has no torch: nothing of PyTorch could be measured.
  bool no_torch = false;
  std::string python_executable;
  // TL901's cause: the waits that are a fresh iterator's first batch (a loader iterated anew every
  // step) and the workers of the loaders that waited (-1: unknown).
  double first_batch_wait_ms = 0;
  int64_t loader_iters = 0;
  int64_t loader_workers = -1;
  std::vector<ProcessSummary> processes;
  std::vector<std::string> notes;  // things the reader should know (lost lines, no records...)
};

struct Measurement {
  RunSummary run;
  std::vector<FindingRuntime> findings;  // one per static finding, same order as the sites
  std::vector<RuntimeFinding> runtime_findings;
};

Measurement measure(const std::vector<PlanSite>& sites, const std::vector<ProcessRecords>& procs,
                    const MeasureOptions& opts);

}  // namespace tl::runtime
