// Reading the records every process of a `trainlint run` wrote (docs/runtime-protocol.md,
// "Records"): one `rec-<pid>.jsonl` per process, one JSON object per line. The reader is
// forgiving: a truncated last line (a process killed mid-write), a line that is not JSON, a record
// with missing fields, a file without `proc` or `end` are all counted and skipped, never fatal.
#pragma once
#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "analyzer/runtime/intervals.h"

namespace tl::runtime {

struct SiteRec {
  int64_t id = -1;
  Interval t;
};

struct StepRec {
  int64_t n = 0;
  int64_t end = 0;
};

struct GcRec {
  Interval t;
  int gen = -1;
};

// A DataLoader `__next__` wait or an `iter(loader)`. `id` is an optional extension: the plan site
// id of the DataLoader the record belongs to, when the bootstrap knows it (-1: unknown).
struct LoaderRec {
  Interval t;
  int64_t id = -1;
  int64_t workers = -1;  // `iter` extension: the loader's num_workers (-1: not recorded)
  // `wait`/`istop` extension `from`: the end of the loader's previous interval (its iterator's
  // start-up, its first batch) when this one followed it in the same statement of the program
  // (`next(iter(loader))`, a `for` line): the time between is the loader's too (0: not joined).
  int64_t joined_from = 0;
};

struct GpuRec {
  std::string kind;  // kernel / memcpy / memset / sync
  Interval t;
  int64_t stream = 0;
  int64_t device = 0;
  int64_t bytes = 0;
  std::string copy;      // memcpy: HtoD / DtoH / DtoD / ...
  std::string src_kind;  // memcpy: pageable / pinned / device / unknown
  std::string name;      // kernel: its (possibly shortened) name
};

// A `gpu_busy` interval: kernels and memsets past the shim's detail budget, merged per device.
struct BusyRec {
  Interval t;
  int64_t device = 0;
};

struct ProcessRecords {
  std::string file;  // rec-<pid>.jsonl (name only)
  bool has_proc = false;
  int64_t pid = 0, ppid = 0;
  std::string role = "main";  // main / worker / rank
  std::optional<int64_t> rank;
  std::string argv0, python;
  std::string executable;    // `proc` extension: sys.executable
  bool torch_missing = false;  // `end` extension `torch: false`: torch cannot be imported here
  int64_t cpus = 0;            // `proc` extension: cores the process may run on (0: unknown)
  int64_t cpu_ms = -1;         // `end` extension: CPU time the process used (-1: unknown)

  std::vector<SiteRec> sites;
  std::vector<StepRec> steps;
  // `bstep` records: backward() ends while no optimizer step had run. They become the steps of a
  // process that recorded no optimizer step at all (a hand-written update), and say so.
  std::vector<StepRec> backward_steps;
  bool steps_from_backward = false;
  std::vector<LoaderRec> waits, iters;
  std::vector<LoaderRec> stops;  // `istop` (extension): an iterator shutting its workers down
  // `cow` (extension): write faults the main thread took in a step outside a tagged iterator's
  // own intervals, from its workers' fork: the copy-on-write that fork left on the process's memory
  // while the workers lived (`live_faults`, between the fork and the shutdown) and after their
  // shutdown (`faults`, to the step's end).
  struct CowRec {
    int64_t at = 0;  // the step's end
    int64_t id = -1;
    int64_t faults = 0;
    int64_t live_faults = 0;
  };
  std::vector<CowRec> cows;
  // `fault_cost` (extension): one such fault's cost, measured at exit (0: none), after the child
  // exited (`ns`) and while it lived (`live_ns`; 0: not measured, priced as `ns`)
  double fault_ns = 0;
  double fault_live_ns = 0;
  std::vector<GcRec> gcs;
  std::vector<GpuRec> gpu;
  std::vector<BusyRec> gpu_busy;
  int64_t busy_kernels = 0, busy_memsets = 0;  // the kernels and memsets inside gpu_busy
  bool has_gpu_status = false;
  std::string gpu_state, gpu_reason;  // the last gpu_status line
  std::optional<int64_t> gpu_devices;  // optional extension: devices the shim saw

  bool has_end = false;
  std::string end_reason;  // exit / max-steps / signal / os-exit
  int64_t end_steps = 0;
  std::string end_exception;  // optional extension: the uncaught exception's type name
  std::vector<std::string> notes;  // `note` records (extension): why a probe was not installed...

  size_t lines = 0;          // non-empty lines read
  size_t bad_lines = 0;      // not JSON, or a record with missing fields (truncated tail included)
  bool truncated_tail = false;  // the last line had no newline and did not parse
  size_t unknown_records = 0;   // well-formed lines of a kind this version does not know

  // earliest and latest timestamp of any record (0/0 when none)
  int64_t first_ns = 0, last_ns = 0;
  bool any_time() const { return last_ns > 0 || first_ns > 0; }
};

// Parses one file's text; `file_name` gives the pid when the file has no `proc` line.
ProcessRecords parse_records(std::istream& in, const std::string& file_name);

// Reads every rec-*.jsonl in `dir`, sorted by file name. Unreadable files add a warning.
// The `rec-<pid>.jsonl` files of a records folder, sorted by path (pid 0: not a number).
struct RecordFile {
  std::string path;
  int64_t pid = 0;
};
std::vector<RecordFile> record_files(const std::string& dir, std::error_code& ec);

std::vector<ProcessRecords> read_records(const std::string& dir, std::vector<std::string>* warnings = nullptr);

}  // namespace tl::runtime
