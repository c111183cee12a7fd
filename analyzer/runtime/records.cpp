#include "analyzer/runtime/records.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;
using nlohmann::json;

namespace tl::runtime {
namespace {

// An integer field (a float is truncated: some writers may emit 1.0e9-style numbers).
bool get_int(const json& j, const char* key, int64_t& out) {
  auto it = j.find(key);
  if (it == j.end()) return false;
  if (it->is_number_integer()) {
    out = it->get<int64_t>();
    return true;
  }
  if (it->is_number_float()) {
    out = static_cast<int64_t>(it->get<double>());
    return true;
  }
  return false;
}

std::string get_str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool get_interval(const json& j, Interval& out) {
  return get_int(j, "start", out.start) && get_int(j, "end", out.end);
}

int64_t pid_from_name(const std::string& name) {
  // rec-<pid>.jsonl
  size_t a = name.find('-'), b = name.find('.');
  if (a == std::string::npos || b == std::string::npos || b <= a + 1) return 0;
  try {
    return std::stoll(name.substr(a + 1, b - a - 1));
  } catch (...) {
    return 0;
  }
}

void see_time(ProcessRecords& p, int64_t t) {
  if (t <= 0) return;
  if (!p.any_time()) p.first_ns = p.last_ns = t;
  p.first_ns = std::min(p.first_ns, t);
  p.last_ns = std::max(p.last_ns, t);
}

// One parsed record; false when its fields are missing.
// `from` of a `wait` or `istop`: kept only when it lies before the interval's start.
void read_joined_from(const json& j, LoaderRec& r) {
  if (get_int(j, "from", r.joined_from) && (r.joined_from <= 0 || r.joined_from > r.t.start)) r.joined_from = 0;
}

bool apply_record(ProcessRecords& p, const json& j) {
  std::string t = get_str(j, "t");
  if (t == "proc") {
    p.has_proc = true;
    get_int(j, "pid", p.pid);
    get_int(j, "ppid", p.ppid);
    if (auto r = get_str(j, "role"); !r.empty()) p.role = r;
    int64_t rank;
    if (get_int(j, "rank", rank)) p.rank = rank;
    p.argv0 = get_str(j, "argv0");
    p.python = get_str(j, "python");
    p.executable = get_str(j, "executable");
    get_int(j, "cpus", p.cpus);
    return true;
  }
  if (t == "role") {
    // A child process found to train after its `proc` line (torch.multiprocessing.spawn's ranks):
    // the role applies to the whole process.
    auto r = get_str(j, "role");
    if (r.empty()) return false;
    p.role = r;
    int64_t rank;
    if (get_int(j, "rank", rank)) p.rank = rank;
    return true;
  }
  if (t == "site") {
    SiteRec s;
    if (!get_int(j, "id", s.id) || !get_interval(j, s.t)) return false;
    see_time(p, s.t.start), see_time(p, s.t.end);
    p.sites.push_back(s);
    return true;
  }
  if (t == "step" || t == "bstep") {
    StepRec s;
    if (!get_int(j, "n", s.n) || !get_int(j, "end", s.end)) return false;
    see_time(p, s.end);
    (t == "step" ? p.steps : p.backward_steps).push_back(s);
    return true;
  }
  if (t == "cow") {
    ProcessRecords::CowRec c;
    if (!get_int(j, "at", c.at) || !get_int(j, "faults", c.faults) || c.faults < 0) return false;
    get_int(j, "id", c.id);
    if (get_int(j, "live_faults", c.live_faults) && c.live_faults < 0) return false;
    see_time(p, c.at);
    p.cows.push_back(c);
    return true;
  }
  if (t == "fault_cost") {
    int64_t ns = 0;
    if (!get_int(j, "ns", ns) || ns <= 0) return false;
    p.fault_ns = static_cast<double>(ns);
    int64_t live = 0;
    if (get_int(j, "live_ns", live) && live > 0) p.fault_live_ns = static_cast<double>(live);
    return true;
  }
  if (t == "istop") {
    LoaderRec r;
    if (!get_interval(j, r.t)) return false;
    get_int(j, "id", r.id);
    read_joined_from(j, r);
    see_time(p, r.t.start), see_time(p, r.t.end);
    p.stops.push_back(r);
    return true;
  }
  if (t == "wait" || t == "iter") {
    LoaderRec r;
    if (!get_interval(j, r.t)) return false;
    get_int(j, "id", r.id);
    get_int(j, "workers", r.workers);
    if (t == "wait") read_joined_from(j, r);
    see_time(p, r.t.start), see_time(p, r.t.end);
    (t == "wait" ? p.waits : p.iters).push_back(r);
    return true;
  }
  if (t == "gc") {
    GcRec g;
    if (!get_interval(j, g.t)) return false;
    int64_t gen;
    if (get_int(j, "gen", gen)) g.gen = static_cast<int>(gen);
    see_time(p, g.t.start), see_time(p, g.t.end);
    p.gcs.push_back(g);
    return true;
  }
  if (t == "gpu") {
    GpuRec g;
    g.kind = get_str(j, "kind");
    if (g.kind.empty() || !get_interval(j, g.t)) return false;
    get_int(j, "stream", g.stream);
    get_int(j, "device", g.device);
    get_int(j, "bytes", g.bytes);
    g.copy = get_str(j, "copy");
    g.src_kind = get_str(j, "src_kind");
    if (g.kind == "kernel") g.name = get_str(j, "name");
    p.gpu.push_back(std::move(g));  // GPU times do not widen the process's host span
    return true;
  }
  if (t == "gpu_busy") {
    int64_t base = 0, device = 0, n = 0;
    auto iv = j.find("iv");
    if (!get_int(j, "base", base) || iv == j.end() || !iv->is_array() || iv->size() % 2 != 0) return false;
    get_int(j, "device", device);
    std::vector<BusyRec> add;
    add.reserve(iv->size() / 2);
    for (size_t i = 0; i < iv->size(); i += 2) {
      const json& o = (*iv)[i];
      const json& d = (*iv)[i + 1];
      if (!o.is_number_integer() || !d.is_number_integer() || d.get<int64_t>() < 0) return false;
      BusyRec b;
      b.t.start = base + o.get<int64_t>();
      b.t.end = b.t.start + d.get<int64_t>();
      b.device = device;
      add.push_back(b);
    }
    p.gpu_busy.insert(p.gpu_busy.end(), add.begin(), add.end());
    if (get_int(j, "kernels", n)) p.busy_kernels += n;
    if (get_int(j, "memsets", n)) p.busy_memsets += n;
    return true;
  }
  if (t == "gpu_status") {
    p.has_gpu_status = true;
    p.gpu_state = get_str(j, "state");
    p.gpu_reason = get_str(j, "reason");
    int64_t d;
    if (get_int(j, "devices", d)) p.gpu_devices = d;
    return !p.gpu_state.empty();
  }
  if (t == "end") {
    p.has_end = true;
    p.end_reason = get_str(j, "reason");
    get_int(j, "steps", p.end_steps);
    p.end_exception = get_str(j, "exception");
    if (auto it = j.find("torch"); it != j.end() && it->is_boolean()) p.torch_missing = !it->get<bool>();
    get_int(j, "cpu_ms", p.cpu_ms);
    return true;
  }
  if (t == "note") {
    std::string text = get_str(j, "text");
    if (!text.empty() && p.notes.size() < 50) p.notes.push_back(std::move(text));
    return true;
  }
  ++p.unknown_records;
  return true;
}

}  // namespace

ProcessRecords parse_records(std::istream& in, const std::string& file_name) {
  ProcessRecords p;
  p.file = file_name;
  p.pid = pid_from_name(file_name);
  std::string line;
  while (std::getline(in, line)) {
    bool had_newline = !in.eof();
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    ++p.lines;
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      ++p.bad_lines;
      if (!had_newline) p.truncated_tail = true;
      continue;
    }
    try {
      if (!apply_record(p, j)) ++p.bad_lines;
    } catch (const std::exception&) {  // a field of an unexpected type
      ++p.bad_lines;
    }
  }
  if (!p.has_proc && p.pid == 0) p.pid = pid_from_name(file_name);
  // Without its `proc` line a process cannot be the program's main process or a rank (those write
  // it first thing): a helper caught before its first write, say. It joins a group as a worker.
  if (!p.has_proc) p.role = "worker";
  if (p.steps.empty() && !p.backward_steps.empty()) {
    p.steps = std::move(p.backward_steps);
    p.backward_steps.clear();
    p.steps_from_backward = true;
  }
  return p;
}

std::vector<RecordFile> record_files(const std::string& dir, std::error_code& ec) {
  std::vector<RecordFile> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.rfind("rec-", 0) == 0 && name.size() > 10 && name.substr(name.size() - 6) == ".jsonl")
      files.push_back({it->path().string(), pid_from_name(name)});
  }
  std::sort(files.begin(), files.end(), [](auto& a, auto& b) { return a.path < b.path; });
  return files;
}

std::vector<ProcessRecords> read_records(const std::string& dir, std::vector<std::string>* warnings) {
  std::error_code ec;
  std::vector<fs::path> files;
  for (auto& rf : record_files(dir, ec)) files.emplace_back(rf.path);
  if (ec && warnings) warnings->push_back("cannot read the records folder: " + ec.message());
  std::vector<ProcessRecords> out;
  for (auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) {
      if (warnings) warnings->push_back("cannot read " + f.filename().string());
      continue;
    }
    ProcessRecords p = parse_records(in, f.filename().string());
    if (p.lines == 0) continue;  // created, nothing written yet: nothing to report
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace tl::runtime
