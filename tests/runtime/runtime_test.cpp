// `trainlint run`: records, merge and verdicts from hand-written record files (no Python needed),
// the plan written for examples/train_bad.py, the reports, and the launcher through the binary
// (stdout/stdin/exit code pass through, a program that cannot start). The end-to-end tests at the
// bottom run the real bootstrap on the examples with Debian's /usr/bin/python3 and torch.
#include <gtest/gtest.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "analyzer/runtime/boot_files.h"
#include "analyzer/runtime/measure.h"
#include "analyzer/runtime/plan.h"
#include "analyzer/runtime/records.h"
#include "analyzer/runtime/run_report.h"
#include "support/test_support.h"

namespace fs = std::filesystem;
namespace rt = tl::runtime;
using nlohmann::json;
using tl::test::read_file;
using tl::test::TempDir;
using tl::test::write_file;

namespace {

constexpr int64_t kMs = 1'000'000;  // ns

// ---- writing records ------------------------------------------------------------------------

struct Rec {
  std::string text;
  Rec& line(const json& j) {
    text += j.dump() + "\n";
    return *this;
  }
  Rec& proc(int64_t pid, int64_t ppid, const char* role, json rank = nullptr) {
    return line({{"t", "proc"}, {"pid", pid}, {"ppid", ppid}, {"role", role}, {"rank", rank}, {"argv0", "train.py"},
                 {"python", "3.11.2"}});
  }
  Rec& site(int64_t id, double s_ms, double e_ms) {
    return line({{"t", "site"}, {"id", id}, {"start", ns(s_ms)}, {"end", ns(e_ms)}});
  }
  Rec& step(int64_t n, double end_ms) { return line({{"t", "step"}, {"n", n}, {"end", ns(end_ms)}}); }
  Rec& wait(double s_ms, double e_ms, int64_t id = -1) {
    json j = {{"t", "wait"}, {"start", ns(s_ms)}, {"end", ns(e_ms)}};
    if (id >= 0) j["id"] = id;
    return line(j);
  }
  Rec& iter(double s_ms, double e_ms, int64_t id = -1) {
    json j = {{"t", "iter"}, {"start", ns(s_ms)}, {"end", ns(e_ms)}};
    if (id >= 0) j["id"] = id;
    return line(j);
  }
  Rec& gc(double s_ms, double e_ms) { return line({{"t", "gc"}, {"start", ns(s_ms)}, {"end", ns(e_ms)}, {"gen", 2}}); }
  Rec& kernel(double s_ms, double e_ms, int64_t stream, int64_t device = 0) {
    return line({{"t", "gpu"}, {"kind", "kernel"}, {"start", ns(s_ms)}, {"end", ns(e_ms)}, {"stream", stream},
                 {"device", device}});
  }
  Rec& memcpy(double s_ms, double e_ms, const char* copy, const char* src_kind, int64_t stream = 14) {
    return line({{"t", "gpu"}, {"kind", "memcpy"}, {"start", ns(s_ms)}, {"end", ns(e_ms)}, {"stream", stream},
                 {"device", 0}, {"bytes", 4096}, {"copy", copy}, {"src_kind", src_kind}});
  }
  Rec& gpu_status(const char* state, const char* reason) {
    return line({{"t", "gpu_status"}, {"state", state}, {"reason", reason}});
  }
  Rec& end(const char* reason, int64_t steps) { return line({{"t", "end"}, {"reason", reason}, {"steps", steps}}); }
  static int64_t ns(double ms) { return static_cast<int64_t>(ms * kMs + 0.5) + 1'000'000'000'000; }
};

rt::PlanSite site(int64_t id, const char* code, const char* probe, uint32_t line, uint32_t col = 5,
                  std::optional<std::string> callee = std::nullopt) {
  rt::PlanSite s;
  s.id = id;
  s.code = code;
  s.path = "/abs/train.py";
  s.line = line;
  s.col = col;
  s.probe = probe;
  s.callee = std::move(callee);
  return s;
}

std::vector<rt::ProcessRecords> read_dir(const TempDir& d, const std::vector<std::pair<std::string, std::string>>& files) {
  for (auto& [name, text] : files) write_file(d.path / name, text);
  return rt::read_records(d.path.string());
}

// Findings for a RunContext, matching the sites (path, line, code, probe).
tl::LintResult lint_for(const std::vector<rt::PlanSite>& sites) {
  tl::LintResult r;
  for (auto& s : sites) {
    tl::Finding f;
    f.code = s.code;
    f.slug = "slug";
    f.path = "train.py";
    f.range.start = {s.line, s.col};
    f.range.stop = {s.line, s.col + 4};
    f.probe = s.probe;
    f.message = "message";
    r.findings.push_back(f);
  }
  r.files_analysed = 1;
  return r;
}

// ---- scenario A: a host-only run (no GPU), a main process and one DataLoader worker ----------
//
// 4 steps of 10 ms: step k waits for its batch in [10(k-1)+1, +2], calls gc.collect in
// [10(k-1)+5, +7] and torch.save in [10(k-1)+8, +8.05]; the step ends at 10k+1. The steps' window
// is [1, 41] ms. The worker decodes 8 images of 0.5 ms each. One automatic GC pause of 0.5 ms.
struct ScenarioA {
  std::vector<rt::PlanSite> sites = {
      site(0, "TL101", "site", 150, 17, "gc.collect"),
      site(1, "TL103", "site", 149, 17, "torch.save"),
      site(2, "TL201", "data-wait", 124, 18, "torch.utils.data.DataLoader"),
      site(3, "TL202", "data-wait+memcpy", 124, 18, "torch.utils.data.DataLoader"),
      site(4, "TL304", "site", 110, 18, "torch.nn.Module.__call__"),
      site(5, "TL401", "none", 109, 9, ".to"),
      site(6, "TL301", "data-parallel", 128, 17, "torch.nn.DataParallel"),
      site(7, "TL204", "site", 81, 17, "PIL.Image.open"),
      site(8, "TL203", "worker-start", 125, 22, "torch.utils.data.DataLoader"),
  };
  std::string main_text, worker_text;
  ScenarioA() {
    Rec m;
    m.proc(100, 99, "main").gpu_status("no-gpu", "no CUDA device").iter(0.2, 0.9, 2);
    for (int k = 1; k <= 4; ++k) {
      double b = 10.0 * (k - 1);
      m.wait(b + 1, b + 2, 2).site(0, b + 5, b + 7).site(1, b + 8, b + 8.05).step(k, 10.0 * k + 1);
    }
    m.gc(25, 25.5).end("exit", 4);
    main_text = m.text;
    Rec w;
    w.proc(101, 100, "worker");
    for (int k = 0; k < 8; ++k) w.site(7, 0.5 + 5 * k, 1.0 + 5 * k);  // one decode every 5 ms
    worker_text = w.text + R"({"t":"site","id":7,"sta)";  // killed mid-write: a truncated last line
  }
};

}  // namespace

// ---- records ----------------------------------------------------------------------------------

TEST(RuntimeRecords, TruncatedLinesMissingProcAndGarbage) {
  std::string text =
      "{\"t\":\"step\",\"n\":1,\"end\":5000}\r\n"
      "not json at all\n"
      "{\"t\":\"site\",\"id\":3}\n"  // missing start/end
      "{\"t\":\"wait\",\"start\":100,\"end\":300}\n"
      "\n"
      "{\"t\":\"mystery\",\"x\":1}\n"
      "{\"t\":\"gc\",\"start\":4000,\"end\":40";
  std::istringstream in(text);
  auto p = rt::parse_records(in, "rec-4242.jsonl");
  EXPECT_EQ(p.pid, 4242);  // from the file name: no proc line
  EXPECT_FALSE(p.has_proc);
  EXPECT_EQ(p.role, "worker");  // never the program's main process: that one writes `proc` first
  EXPECT_FALSE(p.has_end);
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(p.steps[0].end, 5000);
  ASSERT_EQ(p.waits.size(), 1u);
  EXPECT_TRUE(p.sites.empty());
  EXPECT_TRUE(p.gcs.empty());
  EXPECT_EQ(p.bad_lines, 3u);  // garbage, missing fields, truncated tail
  EXPECT_TRUE(p.truncated_tail);
  EXPECT_EQ(p.unknown_records, 1u);
  EXPECT_EQ(p.first_ns, 100);
  EXPECT_EQ(p.last_ns, 5000);
}

TEST(RuntimeRecords, ReadsEveryRecordFileOfAFolder) {
  TempDir d;
  ScenarioA a;
  write_file(d.path / "other.txt", "ignored");
  auto procs = read_dir(d, {{"rec-100.jsonl", a.main_text}, {"rec-101.jsonl", a.worker_text}});
  ASSERT_EQ(procs.size(), 2u);
  EXPECT_EQ(procs[0].pid, 100);
  EXPECT_EQ(procs[0].role, "main");
  EXPECT_TRUE(procs[0].has_end);
  EXPECT_EQ(procs[0].gpu_state, "no-gpu");
  EXPECT_EQ(procs[1].role, "worker");
  EXPECT_EQ(procs[1].ppid, 100);
  EXPECT_EQ(procs[1].sites.size(), 8u);
  EXPECT_TRUE(procs[1].truncated_tail);
  EXPECT_TRUE(rt::read_records((d.path / "missing").string()).empty());
  // a file created but not written yet (a helper still starting when the program ended): skipped
  write_file(d.path / "rec-102.jsonl", "");
  EXPECT_EQ(rt::read_records(d.path.string()).size(), 2u);
}

// ---- merge and verdicts ------------------------------------------------------------------------

TEST(RuntimeMerge, HostOnlyVerdictsSharesAndWindow) {
  TempDir d;
  ScenarioA a;
  auto procs = read_dir(d, {{"rec-100.jsonl", a.main_text}, {"rec-101.jsonl", a.worker_text}});
  rt::MeasureOptions o;
  auto m = rt::measure(a.sites, procs, o);
  const auto& run = m.run;
  EXPECT_TRUE(run.have_records);
  EXPECT_EQ(run.steps, 4);
  EXPECT_TRUE(run.have_window);
  // one window for every figure: step 1 (ending at 11 ms) is the warm-up, then 3 steps to 41 ms
  EXPECT_EQ(run.window.length(), 30 * kMs);
  EXPECT_EQ(run.steps_counted, 3);
  EXPECT_TRUE(run.warmup_excluded);
  EXPECT_DOUBLE_EQ(run.mean_step_ms, 10.0);
  EXPECT_FALSE(run.gpu_ok);
  EXPECT_EQ(run.gpu_state, "no-gpu");
  ASSERT_EQ(m.findings.size(), a.sites.size());

  auto& gc = m.findings[0];  // TL101: 3 x 2 ms of the 30 ms counted (4 calls, 8 ms in the whole run)
  EXPECT_EQ(gc.verdict, "confirmed");
  EXPECT_EQ(gc.calls, 4);
  EXPECT_NEAR(gc.total_ms, 8.0, 1e-6);
  EXPECT_NEAR(gc.window_ms, 6.0, 1e-6);
  EXPECT_NEAR(*gc.ms_per_step, 2.0, 1e-6);
  EXPECT_NEAR(*gc.share, 0.2, 1e-6);
  EXPECT_FALSE(gc.gpu_idle_ms);
  EXPECT_NE(gc.gpu_idle_reason.find("no-gpu"), std::string::npos);

  auto& save = m.findings[1];  // TL103: 0.15 ms of 30 ms = 0.5% < 1%
  EXPECT_EQ(save.verdict, "negligible");
  EXPECT_NEAR(*save.share, 0.005, 1e-6);

  auto& wait = m.findings[2];  // TL201: the four waits; 3 ms of them in the counted steps
  EXPECT_EQ(wait.verdict, "confirmed");
  EXPECT_EQ(wait.calls, 4);
  EXPECT_NEAR(*wait.share, 0.1, 1e-6);

  EXPECT_EQ(m.findings[3].verdict, "not-measurable");  // TL202 without a GPU
  EXPECT_NE(m.findings[3].reason.find("GPU"), std::string::npos);
  EXPECT_EQ(m.findings[4].verdict, "not-reached");  // TL304 never ran
  EXPECT_EQ(m.findings[5].verdict, "not-measurable");  // TL401: no probe
  EXPECT_EQ(m.findings[5].reason, "this rule has no runtime probe");
  EXPECT_EQ(m.findings[6].verdict, "not-measurable");  // TL301 needs 2 GPUs
  EXPECT_NE(m.findings[6].reason.find("2 or more GPUs"), std::string::npos);

  auto& pil = m.findings[7];  // TL204 decoded in the worker: 8 x 0.5 ms, 5 of them (2.5 ms) in the counted steps
  EXPECT_EQ(pil.verdict, "confirmed");
  EXPECT_EQ(pil.calls, 8);
  EXPECT_EQ(pil.worker_calls, 8);
  EXPECT_NEAR(pil.total_ms, 4.0, 1e-6);
  EXPECT_NEAR(*pil.share, 2.5 / 30.0, 1e-6);  // under the 1 ms per step the main process waited

  // TL203: the only iter() belongs to the TL201 DataLoader (id 2), not to the one at line 125
  EXPECT_EQ(m.findings[8].verdict, "not-reached");

  // runtime-only, in the steady window [11, 41] ms (step 1 is warm-up): 3 ms of waits = 10% > 5%;
  // 0.5 ms of GC = 1.7% > 1%; no GPU, no TL903
  EXPECT_EQ(run.steady.length(), 30 * kMs);
  ASSERT_EQ(m.runtime_findings.size(), 2u);
  EXPECT_EQ(m.runtime_findings[0].code, "TL901");
  EXPECT_NEAR(m.runtime_findings[0].pct, 10.0, 1e-6);
  EXPECT_EQ(m.runtime_findings[0].count, 3);
  EXPECT_EQ(m.runtime_findings[1].code, "TL902");
  EXPECT_NEAR(m.runtime_findings[1].pct, 100.0 * 0.5 / 30.0, 1e-6);

  // the estimate: TL101 (8 ms) and TL201 (4 ms) in the main process, per step: 10 - 3 = 7 ms
  ASSERT_TRUE(run.estimated_step_ms);
  EXPECT_NEAR(*run.estimated_step_ms, 7.0, 1e-6);

  // the worker has no end record (normal for workers) and a truncated line
  ASSERT_EQ(run.processes.size(), 2u);
  EXPECT_TRUE(run.processes[0].clean);
  EXPECT_FALSE(run.processes[1].clean);
  bool noted = false;
  for (auto& n : run.notes) noted |= n.find("rec-101.jsonl") != std::string::npos && n.find("truncated") != std::string::npos;
  EXPECT_TRUE(noted);
}

// A DataLoader built every step (TL107): its iterators' start-up, first batch and shutdown are
// its cost, with the time between them when one statement of the program drove them (`from`), and
// so are the copy-on-write faults their fork left outside those intervals, priced by kind: while
// the workers lived (`live_faults`, at `live_ns`) and after their shutdown (`faults`, at `ns`).
// Records of an older bootstrap (no `from`, `live_faults`, `live_ns`) still read.
TEST(RuntimeMerge, CopyOnWriteFaultsOfALoaderBuiltEveryStepArePricedByKind) {
  for (bool old_bootstrap : {false, true}) {
    TempDir d;
    std::vector<rt::PlanSite> sites = {site(0, "TL107", "site", 19, 18, "torch.utils.data.DataLoader")};
    Rec m;
    m.proc(100, 99, "main").gpu_status("no-gpu", "no CUDA device");
    for (int k = 1; k <= 4; ++k) {
      double b = 10.0 * (k - 1);
      m.site(0, b + 0.5, b + 0.6).iter(b + 0.7, b + 2.5, 0);
      json wait = {{"t", "wait"}, {"start", Rec::ns(b + 3)}, {"end", Rec::ns(b + 4.5)}, {"id", 0}};
      json stop = {{"t", "istop"}, {"start", Rec::ns(b + 5)}, {"end", Rec::ns(b + 6)}, {"id", 0}};
      if (!old_bootstrap) {
        // `next(iter(loader))`: the first batch and the shutdown follow in the program's statement
        wait["from"] = Rec::ns(b + 2.5);
        stop["from"] = Rec::ns(b + 4.5);
      }
      m.line(wait).line(stop);
      json cow = {{"t", "cow"}, {"at", Rec::ns(10.0 * k)}, {"id", 0}, {"faults", 100}};
      if (!old_bootstrap) cow["live_faults"] = 20;
      m.line(cow).step(k, 10.0 * k);
    }
    json cost = {{"t", "fault_cost"}, {"ns", 10000}};
    if (!old_bootstrap) cost["live_ns"] = 20000;
    m.line(cost).end("exit", 4);
    auto procs = read_dir(d, {{"rec-100.jsonl", m.text}});
    auto res = rt::measure(sites, procs, rt::MeasureOptions{});
    ASSERT_EQ(res.findings.size(), 1u);
    const auto& f = res.findings[0];
    EXPECT_EQ(f.loader_starts, 4);
    // per step: 100 faults x 10 us after the shutdown, 20 x 20 us while the workers lived
    const double cow_step = old_bootstrap ? 1.0 : 1.4;
    EXPECT_EQ(f.cow_faults, old_bootstrap ? 400 : 480);
    EXPECT_NEAR(f.cow_ms, 4 * cow_step, 1e-6);
    // each 10 ms step less its construction (0.1), start-up (1.8), first batch (1.5),
    // shutdown (1.0), the gaps the statement joined (2 x 0.5) and copy-on-write
    const double joined = old_bootstrap ? 0.0 : 1.0;
    EXPECT_NEAR(f.loader_start_ms, 4 * (1.8 + 1.5 + 1.0 + joined), 1e-6);
    ASSERT_TRUE(res.run.estimated_step_ms);
    EXPECT_NEAR(*res.run.estimated_step_ms, 10.0 - 4.4 - joined - cow_step, 1e-6) << old_bootstrap;
  }
}

TEST(RuntimeMerge, ThresholdAndSelectChangeVerdicts) {
  TempDir d;
  ScenarioA a;
  auto procs = read_dir(d, {{"rec-100.jsonl", a.main_text}, {"rec-101.jsonl", a.worker_text}});
  rt::MeasureOptions o;
  o.threshold_pct = 0.4;  // TL103's 0.5% is now confirmed
  o.tl902 = false;
  auto m = rt::measure(a.sites, procs, o);
  EXPECT_EQ(m.findings[1].verdict, "confirmed");
  ASSERT_EQ(m.runtime_findings.size(), 1u);
  EXPECT_EQ(m.runtime_findings[0].code, "TL901");
  o.threshold_pct = 25;  // nothing reaches 25%
  m = rt::measure(a.sites, procs, o);
  for (auto& r : m.findings) EXPECT_NE(r.verdict, "confirmed");
}

// A GPU run: kernels on two streams of device 0 and one on device 1, a pageable host-to-device copy.
TEST(RuntimeMerge, GpuIdleInsideSitesPageableCopiesAndGpuIdleFinding) {
  std::vector<rt::PlanSite> sites = {
      site(0, "TL101", "site", 150, 17, "gc.collect"),
      site(1, "TL202", "data-wait+memcpy", 124, 18, "torch.utils.data.DataLoader"),
      site(2, "TL303", "gpu-used", 143, 17, ".backward"),
      site(3, "TL301", "data-parallel", 128, 17, "torch.nn.DataParallel"),
      site(4, "TL305", "site+memcpy", 141, 25, ".to"),
  };
  Rec m;
  m.proc(200, 1, "main").gpu_status("ok", "");
  m.wait(1, 2).kernel(0, 12, 7).kernel(11, 15, 13).site(0, 10, 20).step(1, 22);
  m.wait(23, 24).site(4, 29, 33).memcpy(30, 32, "HtoD", "pageable").memcpy(32.5, 32.8, "HtoD", "pinned");
  m.kernel(40, 41, 7, 1).step(2, 44).end("exit", 2);
  TempDir d;
  auto procs = read_dir(d, {{"rec-200.jsonl", m.text}});
  auto res = rt::measure(sites, procs, {});
  EXPECT_TRUE(res.run.gpu_ok);
  EXPECT_EQ(res.run.gpu_devices, 2);
  EXPECT_EQ(res.run.kernels, 3);
  EXPECT_EQ(res.run.memcpys, 2);
  EXPECT_EQ(res.run.pageable_htod, 1);
  EXPECT_NEAR(res.run.window_ms, 22.0, 1e-6);  // [22, 44]: warm-up step 1 left out

  // TL101 in [10, 20]: the kernels cover [0, 15] (streams 7 and 13 overlap): idle 5 ms
  ASSERT_TRUE(res.findings[0].gpu_idle_ms);
  EXPECT_NEAR(*res.findings[0].gpu_idle_ms, 5.0, 1e-6);
  // TL202: 2 ms of waits + 2 ms of pageable copies; GPU idle inside the waits: [1,2] busy, [23,24] idle
  auto& pin = res.findings[1];
  EXPECT_EQ(pin.verdict, "confirmed");
  EXPECT_EQ(pin.pageable_copies, 1);
  EXPECT_NEAR(pin.pageable_copy_ms, 2.0, 1e-6);
  EXPECT_NEAR(pin.total_ms, 4.0, 1e-6);
  EXPECT_NEAR(*pin.gpu_idle_ms, 1.0, 1e-6);
  // TL303: kernels ran
  EXPECT_EQ(res.findings[2].verdict, "negligible");
  // TL301: 2 devices, but no DataParallel internals recorded
  EXPECT_EQ(res.findings[3].verdict, "not-reached");
  // TL305: its call covers one pageable and one pinned host-to-device copy
  EXPECT_EQ(res.findings[4].htod_copies, 2);
  EXPECT_EQ(res.findings[4].pageable_copies, 1);
  EXPECT_NEAR(*res.findings[4].gpu_idle_ms, 4.0 - 2.0 - 0.3, 1e-6);

  // TL903 in the steady window [22, 44]: busy 2 + 0.3 + 1 ms, idle 18.7 of 22 ms
  ASSERT_TRUE(res.run.gpu_idle_ms);
  EXPECT_NEAR(*res.run.gpu_idle_ms, 22.0 - 3.3, 1e-6);
  bool tl903 = false;
  for (auto& rf : res.runtime_findings) tl903 |= rf.code == "TL903";
  EXPECT_TRUE(tl903);
}

TEST(RuntimeMerge, GpuUsedConfirmedWhenNoKernelRan) {
  std::vector<rt::PlanSite> sites = {site(0, "TL303", "gpu-used", 10)};
  Rec m;
  m.proc(300, 1, "main").gpu_status("ok", "").wait(0, 1).step(1, 10).step(2, 20).end("exit", 2);
  TempDir d;
  auto res = rt::measure(sites, read_dir(d, {{"rec-300.jsonl", m.text}}), {});
  EXPECT_EQ(res.findings[0].verdict, "confirmed");
  // and without a measured GPU it cannot be told
  Rec n;
  n.proc(301, 1, "main").gpu_status("busy", "another CUPTI subscriber").step(1, 10).end("exit", 1);
  TempDir d2;
  res = rt::measure(sites, read_dir(d2, {{"rec-301.jsonl", n.text}}), {});
  EXPECT_EQ(res.findings[0].verdict, "not-measurable");
  EXPECT_EQ(res.run.gpu_state, "busy");
  EXPECT_EQ(res.run.gpu_reason, "another CUPTI subscriber");
}

TEST(RuntimeMerge, ShimAbsentMeansHostOnly) {
  std::vector<rt::PlanSite> sites = {site(0, "TL101", "site", 10, 5, "gc.collect")};
  Rec m;
  m.proc(400, 1, "main").wait(0, 1).site(0, 2, 4).step(1, 10).end("exit", 1);
  TempDir d;
  rt::MeasureOptions o;
  o.shim_present = false;
  o.shim_note = "libtrainlint_shim.so was not found";
  auto res = rt::measure(sites, read_dir(d, {{"rec-400.jsonl", m.text}}), o);
  EXPECT_EQ(res.run.gpu_state, "host-only");
  EXPECT_EQ(res.findings[0].verdict, "confirmed");  // host times still measured
  EXPECT_FALSE(res.findings[0].gpu_idle_ms);
}

TEST(RuntimeMerge, NoRecordsNothingMeasured) {
  std::vector<rt::PlanSite> sites = {site(0, "TL101", "site", 10), site(1, "TL401", "none", 11)};
  auto res = rt::measure(sites, {}, {});
  EXPECT_FALSE(res.run.have_records);
  EXPECT_EQ(res.findings[0].verdict, "not-measurable");
  EXPECT_EQ(res.findings[1].reason, "this rule has no runtime probe");
  ASSERT_FALSE(res.run.notes.empty());
  EXPECT_NE(res.run.notes[0].find("no records"), std::string::npos);
}

TEST(RuntimeMerge, WindowWithoutWaitsAndWithoutSteps) {
  std::vector<rt::PlanSite> sites = {site(0, "TL101", "site", 10)};
  // steps only: the window runs from step 1's end, and counts one step fewer
  Rec m;
  m.proc(500, 1, "main").site(0, 12, 14).step(1, 10).step(2, 20).step(3, 30).end("exit", 3);
  TempDir d;
  auto res = rt::measure(sites, read_dir(d, {{"rec-500.jsonl", m.text}}), {});
  EXPECT_EQ(res.run.steps_counted, 2);
  EXPECT_DOUBLE_EQ(res.run.mean_step_ms, 10.0);
  EXPECT_NEAR(*res.findings[0].ms_per_step, 1.0, 1e-9);  // 2 ms inside the 2 counted steps
  EXPECT_NEAR(*res.findings[0].share, 0.1, 1e-9);
  // an evaluation pass (iter + waits) before training does not stretch step 1
  Rec e;
  e.proc(501, 1, "main").iter(0, 1).wait(1, 2).wait(2, 3).iter(50, 51).wait(51, 52).step(1, 60).step(2, 70).end("exit", 2);
  TempDir d3;
  res = rt::measure(sites, read_dir(d3, {{"rec-501.jsonl", e.text}}), {});
  EXPECT_EQ(res.run.window.length(), 10 * kMs);  // [60, 70]: neither the evaluation nor warm-up step 1
  // no optimizer step: shares are of the recorded run time
  Rec n;
  n.proc(502, 1, "main").site(0, 0, 5).site(0, 15, 20).end("exit", 0);
  TempDir d2;
  res = rt::measure(sites, read_dir(d2, {{"rec-502.jsonl", n.text}}), {});
  EXPECT_FALSE(res.run.have_window);
  EXPECT_EQ(res.findings[0].share_basis, "run");
  EXPECT_NEAR(*res.findings[0].share, 0.5, 1e-9);
  EXPECT_EQ(res.findings[0].verdict, "confirmed");
}

// torchrun: a launcher process without steps, two ranks. Run figures come from rank 0; a finding
// reports the rank where it cost the most; each rank's worker joins its rank.
TEST(RuntimeMerge, RanksAreGroupedAndTheSlowestRankReports) {
  std::vector<rt::PlanSite> sites = {site(0, "TL103", "site", 10), site(1, "TL204", "site", 20)};
  Rec launcher, r0, r1, w1;
  launcher.proc(600, 1, "main").end("exit", 0);
  r0.proc(601, 600, "rank", 0).wait(0, 1).site(0, 2, 3).step(1, 10).site(0, 12, 13).step(2, 20).end("exit", 2);
  r1.proc(602, 600, "rank", 1).wait(0, 1).site(0, 2, 6).step(1, 10).site(0, 12, 16).step(2, 20).end("exit", 2);
  w1.proc(603, 602, "worker").site(1, 1, 2).end("exit", 0);
  TempDir d;
  auto res = rt::measure(sites, read_dir(d, {{"rec-600.jsonl", launcher.text}, {"rec-601.jsonl", r0.text},
                                            {"rec-602.jsonl", r1.text}, {"rec-603.jsonl", w1.text}}), {});
  EXPECT_EQ(res.run.primary_pid, 601);
  EXPECT_EQ(res.run.steps, 2);
  EXPECT_EQ(res.findings[0].group_pid, 602);
  ASSERT_TRUE(res.findings[0].rank);
  EXPECT_EQ(*res.findings[0].rank, 1);
  EXPECT_NEAR(res.findings[0].total_ms, 8.0, 1e-6);
  EXPECT_EQ(res.findings[1].group_pid, 602);  // the worker of rank 1
  EXPECT_EQ(res.findings[1].worker_calls, 1);
}

TEST(RuntimeMerge, UncleanEndsAndMaxSteps) {
  std::vector<rt::PlanSite> sites = {site(0, "TL101", "site", 10)};
  Rec m;
  m.proc(700, 1, "main").wait(0, 1).step(1, 10).site(0, 12, 13).step(2, 20);  // killed: no end
  TempDir d;
  rt::MeasureOptions o;
  o.exit_code = 137;
  o.term_signal = SIGKILL;
  auto res = rt::measure(sites, read_dir(d, {{"rec-700.jsonl", m.text}}), o);
  ASSERT_EQ(res.run.processes.size(), 1u);
  EXPECT_FALSE(res.run.processes[0].clean);
  EXPECT_NE(res.run.processes[0].note.find("killed or crashed"), std::string::npos);
  EXPECT_EQ(res.findings[0].verdict, "confirmed");  // what it wrote is still reported
  EXPECT_FALSE(res.run.stopped_early);

  Rec s;
  s.proc(701, 1, "main").wait(0, 1).step(1, 10).step(2, 20).end("max-steps", 2);
  TempDir d2;
  o = {};
  o.max_steps = 2;
  res = rt::measure(sites, read_dir(d2, {{"rec-701.jsonl", s.text}}), o);
  EXPECT_TRUE(res.run.stopped_early);
  EXPECT_TRUE(res.run.processes[0].clean);
}

// ---- reports ------------------------------------------------------------------------------------

TEST(RuntimeReport, TextTableJsonAndTrace) {
  TempDir d;
  ScenarioA a;
  auto procs = read_dir(d, {{"rec-100.jsonl", a.main_text}, {"rec-101.jsonl", a.worker_text}});
  rt::MeasureOptions o;
  o.max_steps = 4;
  auto m = rt::measure(a.sites, procs, o);
  auto lint = lint_for(a.sites);
  rt::RunContext ctx;
  ctx.lint = &lint;
  ctx.sites = &a.sites;
  ctx.m = &m;
  ctx.anchor.path = "train.py";
  ctx.anchor.range.start = {138, 13};
  ctx.command = {"/usr/bin/python3", "train.py"};

  std::ostringstream out;
  rt::write_run_text(out, ctx);
  std::string t = out.str();
  EXPECT_NE(t.find("4 steps; 3 counted (warm-up step 1 left out) in 30.0 ms: median step 10.0 ms (p10 10.0, p90 10.0), "
                   "mean 10.0 ms"),
            std::string::npos)
      << t;
  // a run without a measured GPU says so once, and has no GPU column
  EXPECT_NE(t.find("GPU: not measured \u2014 no NVIDIA GPU\n"), std::string::npos) << t;
  EXPECT_EQ(t.find("GPU idle ms"), std::string::npos);
  EXPECT_EQ(t.find("n/a"), std::string::npos);
  // ranked by measured cost: TL101 (8 ms) before TL201 (4 ms) and TL204, TL103 last of the measured
  size_t p101 = t.find("TL101  train.py:150"), p201 = t.find("TL201  train.py:124"), p103 = t.find("TL103  train.py:149"),
         p304 = t.find("TL304  train.py:110");
  ASSERT_NE(p101, std::string::npos) << t;
  EXPECT_LT(p101, p201);
  EXPECT_LT(p201, p103);
  EXPECT_LT(p103, p304);
  EXPECT_NE(t.find("20.0%"), std::string::npos);
  EXPECT_NE(t.find("TL901 data-stall  train.py:138"), std::string::npos);
  EXPECT_NE(t.find("estimated step time if the confirmed findings were fixed: 10.0 ms median step -> 7.00 ms"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("stopped early: --max-steps 4"), std::string::npos);
  EXPECT_NE(t.find("not measured (no runtime probe for the rule): TL401 train.py:109"), std::string::npos);

  json j = rt::run_json(ctx);
  EXPECT_EQ(j["schema_version"], 1);
  ASSERT_EQ(j["findings"].size(), a.sites.size() + 2);  // + TL901, TL902
  EXPECT_EQ(j["findings"][0]["code"], "TL101");
  EXPECT_EQ(j["findings"][0]["runtime"]["verdict"], "confirmed");
  EXPECT_EQ(j["findings"][0]["runtime"]["calls"], 4);
  EXPECT_NEAR(j["findings"][0]["runtime"]["share"].get<double>(), 0.2, 1e-9);
  EXPECT_TRUE(j["findings"][0]["runtime"]["gpu_idle_ms"].is_null());
  EXPECT_EQ(j["findings"][0]["runtime"]["callee"], "gc.collect");
  EXPECT_EQ(j["findings"][a.sites.size()]["code"], "TL901");
  EXPECT_EQ(j["findings"][a.sites.size()]["range"]["start"]["line"], 138);
  EXPECT_TRUE(j["findings"][a.sites.size()]["runtime"]["runtime_only"].get<bool>());
  EXPECT_EQ(j["run"]["steps"], 4);
  EXPECT_EQ(j["run"]["exit_code"], 0);
  EXPECT_TRUE(j["run"]["stopped_early"].get<bool>());
  EXPECT_EQ(j["run"]["gpu"]["status"], "no-gpu");
  EXPECT_EQ(j["run"]["processes"].size(), 2u);

  json tr = rt::trace_json(procs, a.sites);
  ASSERT_TRUE(tr["traceEvents"].is_array());
  int steps = 0, gc_site = 0, waits = 0, worker_sites = 0;
  for (auto& e : tr["traceEvents"]) {
    if (e["ph"] != "X") continue;
    EXPECT_GE(e["ts"].get<double>(), 0.0);
    if (e["cat"] == "step") ++steps;
    if (e["name"] == "TL101 gc.collect") ++gc_site;
    if (e["name"] == "data wait") ++waits;
    if (e["pid"] == 101 && e["cat"] == "site") ++worker_sites;
  }
  EXPECT_EQ(steps, 4);
  EXPECT_EQ(gc_site, 4);
  EXPECT_EQ(waits, 4);
  EXPECT_EQ(worker_sites, 8);
}

TEST(RuntimeReport, TraceHasOneTrackPerGpuStream) {
  Rec m;
  m.proc(800, 1, "main").kernel(1, 2, 7).kernel(1.5, 3, 13).kernel(4, 5, 7).memcpy(5, 6, "HtoD", "pageable");
  TempDir d;
  auto procs = read_dir(d, {{"rec-800.jsonl", m.text}});
  json tr = rt::trace_json(procs, {});
  std::set<std::string> names;
  std::map<int64_t, int> per_tid;
  for (auto& e : tr["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") names.insert(e["args"]["name"].get<std::string>());
    if (e["ph"] == "X" && e["cat"] == "gpu") ++per_tid[e["tid"].get<int64_t>()];
  }
  EXPECT_TRUE(names.count("GPU 0 stream 7"));
  EXPECT_TRUE(names.count("GPU 0 stream 13"));
  EXPECT_TRUE(names.count("GPU 0 stream 14"));
  EXPECT_EQ(per_tid.size(), 3u);
  EXPECT_EQ(per_tid[1000], 2);  // stream 7, first seen
}

// ---- the plan -----------------------------------------------------------------------------------

TEST(RuntimePlan, FindsTheScriptInACommand) {
  EXPECT_EQ(rt::find_script({"/usr/bin/python3", "train.py", "--epochs", "1"}).script, "train.py");
  EXPECT_EQ(rt::find_script({"python3.11", "-u", "-W", "ignore", "-X", "dev", "-Bq", "t.py", "x.py"}).script, "t.py");
  EXPECT_EQ(rt::find_script({"python", "-Wignore", "t.py"}).script, "t.py");
  EXPECT_EQ(rt::find_script({"./train.py", "--lr", "1"}).script, "./train.py");
  EXPECT_EQ(rt::find_script({"torchrun", "--nproc_per_node=2", "train.py", "--x"}).script, "train.py");
  // launcher modules: the first *.py argument after the module
  EXPECT_EQ(rt::find_script({"python3", "-m", "torch.distributed.run", "--nproc_per_node", "2", "train.py", "--lr", "1"})
                .script,
            "train.py");
  EXPECT_EQ(rt::find_script({"python3", "-u", "-mcProfile", "-o", "p.out", "t.py"}).script, "t.py");
  // a module of the working folder: its file
  {
    TempDir d;
    fs::create_directories(d.path / "src" / "app");
    write_file(d.path / "src" / "train.py", "print(1)\n");
    write_file(d.path / "src" / "app" / "__main__.py", "print(1)\n");
    auto old_cwd = fs::current_path();
    fs::current_path(d.path);
    EXPECT_EQ(rt::find_script({"python3", "-m", "src.train", "--epochs", "1"}).script, "src/train.py");
    EXPECT_EQ(rt::find_script({"python3", "-m", "src.app"}).script, "src/app/__main__.py");
    auto m = rt::find_script({"python3", "-m", "json.tool", "data.json"});
    EXPECT_TRUE(m.script.empty());
    EXPECT_NE(m.error.find("-m json.tool` is not supported"), std::string::npos) << m.error;
    fs::current_path(old_cwd);
  }
  EXPECT_NE(rt::find_script({"python3", "-c", "print(1)"}).error.find("-c CODE"), std::string::npos);
  EXPECT_FALSE(rt::find_script({"python3"}).error.empty());
  EXPECT_FALSE(rt::find_script({"bash", "run.sh"}).error.empty());
  EXPECT_TRUE(rt::is_python_interpreter("/usr/bin/python3"));
  EXPECT_TRUE(rt::is_python_interpreter("python3.11"));
  EXPECT_FALSE(rt::is_python_interpreter("python3-config"));
  EXPECT_FALSE(rt::is_python_interpreter("torchrun"));
}

TEST(RuntimePlan, TrainBadHasTheGcCollectSiteWithItsCallee) {
  std::string script = tl::test::source_dir() + "/examples/train_bad.py";
  std::string text = read_file(script);
  // the line of `gc.collect()  # TL101`
  size_t at = text.find("gc.collect()  # TL101");
  ASSERT_NE(at, std::string::npos);
  uint32_t line = 1 + static_cast<uint32_t>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
  tl::LintOptions o;
  o.threads = 1;
  auto plan = rt::build_plan(script, o);
  ASSERT_TRUE(plan.script_found);
  ASSERT_EQ(plan.sites.size(), plan.lint.findings.size());
  const rt::PlanSite* gc = nullptr;
  for (auto& s : plan.sites)
    if (s.code == "TL101") gc = &s;
  ASSERT_NE(gc, nullptr);
  EXPECT_EQ(gc->line, line);
  EXPECT_EQ(gc->probe, "site");
  ASSERT_TRUE(gc->callee);
  EXPECT_EQ(*gc->callee, "gc.collect");
  EXPECT_TRUE(fs::path(gc->path).is_absolute());
  EXPECT_TRUE(fs::equivalent(gc->path, script));
  // other callees: a resolved name, a method of an unknown receiver, a DataLoader for data waits
  std::map<std::string, std::string> callee_by_code;
  for (auto& s : plan.sites) callee_by_code[s.code] = s.callee.value_or("null");
  EXPECT_EQ(callee_by_code["TL103"], "torch.save");
  EXPECT_EQ(callee_by_code["TL201"], "torch.utils.data.DataLoader");
  EXPECT_EQ(callee_by_code["TL204"], "PIL.Image.open");
  // runtime-only findings point at the training step loop
  EXPECT_EQ(plan.anchor.range.start.line,
            1 + static_cast<uint32_t>(std::count(text.begin(), text.begin() + static_cast<long>(text.find("            for i, (images, labels) in enumerate(loader):")), '\n')));

  json pj = rt::plan_json(plan.sites, 5);
  EXPECT_EQ(pj["version"], 1);
  EXPECT_EQ(pj["max_steps"], 5);
  bool found = false;
  for (auto& s : pj["sites"]) {
    EXPECT_TRUE(s.contains("callee"));
    if (s["code"] == "TL101") {
      found = true;
      EXPECT_EQ(s["callee"], "gc.collect");
      EXPECT_EQ(s["line"], line);
      EXPECT_EQ(s["col"], gc->col);
    }
  }
  EXPECT_TRUE(found);
}

// Only the findings of the script's program: a sibling script with its own findings is left out,
// a module the script imports is kept.
TEST(RuntimePlan, KeepsOnlyTheScriptsProgram) {
  TempDir d;
  write_file(d.path / "helpers.py", "import gc\n\ndef tidy():\n    gc.collect()\n");
  write_file(d.path / "train.py",
             "import torch\nfrom helpers import tidy\n\n"
             "def main(model, loader, opt):\n"
             "    for x, y in loader:\n"
             "        loss = model(x).sum()\n"
             "        loss.backward()\n"
             "        opt.step()\n"
             "        torch.save(model.state_dict(), 'c.pt')\n"
             "        tidy()\n\n"
             "if __name__ == '__main__':\n    main(None, [], None)\n");
  write_file(d.path / "other.py",
             "import torch\n\ndef main(model, loader, opt):\n    for x in loader:\n        model(x).sum().backward()\n"
             "        opt.step()\n        torch.save(model, 'o.pt')\n\nif __name__ == '__main__':\n    main(None, [], None)\n");
  tl::LintOptions o;
  o.threads = 1;
  auto plan = rt::build_plan((d.path / "train.py").string(), o);
  std::set<std::string> files;
  for (auto& f : plan.lint.findings) files.insert(fs::path(f.path).filename().string());
  EXPECT_TRUE(files.count("train.py"));
  EXPECT_TRUE(files.count("helpers.py"));
  EXPECT_FALSE(files.count("other.py"));
}

// ---- the launcher, through the binary -------------------------------------------------------------

namespace {

struct Proc {
  int rc = -1;
  int sig = 0;
  std::string out, err;
};

// Runs `trainlint ARGS` in `cwd` with stdin from `in` (a file or /dev/null) and extra environment.
Proc run_tl(const std::string& args, const std::string& cwd, const std::string& in = "/dev/null",
            const std::string& env = "") {
  TempDir t;
  std::string outp = (t.path / "out").string(), errp = (t.path / "err").string();
  std::string cmd = "cd '" + cwd + "' && " + env + " '" + tl::test::binary() + "' " + args + " >'" + outp + "' 2>'" +
                    errp + "' <'" + in + "'";
  int status = std::system(cmd.c_str());
  Proc r;
  if (WIFEXITED(status)) r.rc = WEXITSTATUS(status);
  r.out = read_file(outp);
  r.err = read_file(errp);
  return r;
}

bool bootstrap_built_in() { return !rt::boot_files().empty(); }

}  // namespace

TEST(RuntimeLauncher, PassesStdoutStdinAndExitCodeThrough) {
  TempDir d;
  write_file(d.path / "echo.py",
             "import sys\n"
             "data = sys.stdin.read()\n"
             "sys.stdout.write('got:' + data.upper())\n"
             "sys.stderr.write('program stderr\\n')\n"
             "sys.exit(3)\n");
  write_file(d.path / "input.txt", "hello\nworld\n");
  TempDir tmp;
  Proc r = run_tl("run -- /usr/bin/python3 echo.py", d.path.string(), (d.path / "input.txt").string(),
                  "TMPDIR='" + tmp.path.string() + "'");
  EXPECT_EQ(r.rc, 3);
  EXPECT_EQ(r.out, "got:HELLO\nWORLD\n");  // the program's stdout, and nothing else
  EXPECT_EQ(r.err.rfind("program stderr\n", 0), 0u) << r.err;  // its stderr first, the report after
  EXPECT_NE(r.err.find("trainlint run:"), std::string::npos);
  EXPECT_NE(r.err.find("the program exited with code 3"), std::string::npos) << r.err;
  // the temporary folder is gone
  EXPECT_TRUE(fs::is_empty(tmp.path)) << "left behind in " << tmp.path;
}

TEST(RuntimeLauncher, ReportToAFileAndJson) {
  TempDir d;
  write_file(d.path / "ok.py", "print('fine')\n");
  Proc r = run_tl("run --format json --output report.json --trace trace.json -- /usr/bin/python3 ok.py", d.path.string());
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out, "fine\n");
  EXPECT_EQ(r.err, "");  // the report went to the file
  json j = json::parse(read_file(d.path / "report.json"));
  EXPECT_EQ(j["run"]["exit_code"], 0);
  EXPECT_EQ(j["run"]["command"][1], "ok.py");
  EXPECT_TRUE(j["findings"].is_array());
  json tr = json::parse(read_file(d.path / "trace.json"));
  EXPECT_TRUE(tr["traceEvents"].is_array());
}

// --keep-records keeps what a run measured; --from-records reports it again without running the
// program, and refuses records made with another plan.
TEST(RuntimeLauncher, KeptRecordsReportAgainWithoutRunning) {
  TempDir d;
  write_file(d.path / "t.py",
             "import os, signal, sys\n"
             "print('ran')\n"
             "if len(sys.argv) > 1: os.kill(os.getpid(), signal.SIGTERM)\n"
             "sys.exit(3)\n");
  Proc first = run_tl("run --format json --output first.json --keep-records kept -- /usr/bin/python3 t.py", d.path.string());
  EXPECT_EQ(first.rc, 3);
  EXPECT_EQ(first.out, "ran\n");
  ASSERT_TRUE(fs::is_regular_file(d.path / "kept" / "plan.json"));
  ASSERT_TRUE(fs::is_regular_file(d.path / "kept" / "status.json"));
  ASSERT_FALSE(fs::is_empty(d.path / "kept" / "records"));
  Proc again = run_tl("run --format json --output again.json --from-records kept -- /usr/bin/python3 t.py", d.path.string());
  EXPECT_EQ(again.rc, 3) << again.err;
  EXPECT_EQ(again.out, "");  // nothing ran
  EXPECT_EQ(json::parse(read_file(d.path / "again.json")), json::parse(read_file(d.path / "first.json")));
  // another plan (--max-steps is part of it), a folder that is not a kept run: errors, nothing runs
  Proc other = run_tl("run --max-steps 2 --from-records kept -- /usr/bin/python3 t.py", d.path.string());
  EXPECT_EQ(other.rc, 2);
  EXPECT_EQ(other.out, "");
  EXPECT_NE(other.err.find("were made with another plan"), std::string::npos) << other.err;
  Proc none = run_tl("run --from-records nowhere -- /usr/bin/python3 t.py", d.path.string());
  EXPECT_EQ(none.rc, 2);
  EXPECT_NE(none.err.find("is not a folder written by `trainlint run --keep-records`"), std::string::npos) << none.err;
  // a program ended by a signal: the re-report says so, with the same exit status
  Proc killed = run_tl("run --keep-records kept2 -- /usr/bin/python3 t.py die", d.path.string());
  EXPECT_EQ(killed.rc, 128 + SIGTERM) << killed.err;
  Proc rekilled = run_tl("run --from-records kept2 -- /usr/bin/python3 t.py die", d.path.string());
  EXPECT_EQ(rekilled.rc, 128 + SIGTERM) << rekilled.err;
  EXPECT_NE(rekilled.err.find("SIGTERM"), std::string::npos) << rekilled.err;
}

TEST(RuntimeLauncher, ProgramThatCannotStart) {
  TempDir d;
  write_file(d.path / "t.py", "print(1)\n");
  Proc r = run_tl("run -- /nonexistent/bin/python3 t.py", d.path.string());
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("cannot start `/nonexistent/bin/python3`: No such file or directory"), std::string::npos) << r.err;
  // a script that is not there, -m, nothing to run: usage errors
  r = run_tl("run -- /usr/bin/python3 missing.py", d.path.string());
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("cannot read the script `missing.py`"), std::string::npos) << r.err;
  r = run_tl("run -- /usr/bin/python3 -m json.tool", d.path.string());
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("is not supported"), std::string::npos);
  r = run_tl("run", d.path.string());
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("no program to run"), std::string::npos);
  // a file that is not executable
  write_file(d.path / "prog.py", "print(1)\n");
  r = run_tl("run -- ./prog.py", d.path.string());
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("Permission denied"), std::string::npos) << r.err;
}

TEST(RuntimeLauncher, ArgumentsAfterDashesAreTheProgramsVerbatim) {
  TempDir d;
  write_file(d.path / "args.py", "import sys\nprint(sys.argv[1:])\n");
  Proc r = run_tl("run --max-steps 2 -- /usr/bin/python3 args.py --max-steps 9 -- -x", d.path.string());
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out, "['--max-steps', '9', '--', '-x']\n");
}

namespace {

// Starts `trainlint run --output report.txt -- /usr/bin/python3 SCRIPT` in `cwd`, stdio on
// /dev/null and SIGINT at its default, as from a terminal (a shell's background job, ctest under
// `&`, would pass SIGINT on ignored). `shim_path` set: TRAINLINT_SHIM_PATH.
pid_t start_run(const fs::path& cwd, const std::string& script, const char* shim_path = nullptr) {
  pid_t pid = fork();
  if (pid == 0) {
    if (chdir(cwd.c_str()) != 0) _exit(99);
    if (shim_path) setenv("TRAINLINT_SHIM_PATH", shim_path, 1);
    signal(SIGINT, SIG_DFL);
    int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
    std::string bin = tl::test::binary();
    execl(bin.c_str(), bin.c_str(), "run", "--output", "report.txt", "--", "/usr/bin/python3", script.c_str(),
          static_cast<char*>(nullptr));
    _exit(98);
  }
  return pid;
}

bool wait_for_file(const fs::path& f, std::chrono::seconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!fs::exists(f) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return fs::exists(f);
}

}  // namespace

// SIGTERM sent to trainlint reaches the program; trainlint still reports, then ends the same way.
TEST(RuntimeLauncher, ForwardsSigtermAndStillReports) {
  TempDir d;
  write_file(d.path / "sleepy.py",
             "import pathlib, time\npathlib.Path('ready').write_text('1')\ntime.sleep(30)\n");
  pid_t pid = start_run(d.path, "sleepy.py");
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(wait_for_file(d.path / "ready", std::chrono::seconds(20)));
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << (WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  std::string report = read_file(d.path / "report.txt");
  EXPECT_NE(report.find("ended by SIGTERM"), std::string::npos) << report;
}

// ---- end to end, with the real bootstrap (Debian's python3-torch) -----------------------------------

namespace {

json run_example(const std::string& script, const std::string& extra = "") {
  TempDir t;
  std::string out = (t.path / "r.json").string();
  Proc r = run_tl("run --max-steps 5 " + extra + " --format json --output '" + out + "' -- /usr/bin/python3 " + script,
                  tl::test::source_dir());
  EXPECT_EQ(r.rc, 0) << r.err;
  return json::parse(read_file(out));
}

const json* finding(const json& doc, const std::string& code) {
  for (auto& f : doc["findings"])
    if (f["code"] == code) return &f;
  return nullptr;
}

}  // namespace

TEST(RuntimeEndToEnd, TrainBadConfirmsGcCollectCheckpointAndDataWait) {
  if (!bootstrap_built_in()) GTEST_SKIP() << "the bootstrap (shim/python) was not in the tree at build time";
  // A per-step torch.save of this model costs about 3 % of a step here; under a loaded CI machine
  // (ctest -j) the share shrinks, so confirm at 0.5 % rather than the 1 % default.
  json doc = run_example("examples/train_bad.py", "--threshold 0.5");
  EXPECT_EQ(doc["run"]["steps"], 5);
  EXPECT_TRUE(doc["run"]["stopped_early"].get<bool>());
  for (const char* code : {"TL101", "TL103", "TL201"}) {
    const json* f = finding(doc, code);
    ASSERT_NE(f, nullptr) << code;
    const json& r = (*f)["runtime"];
    EXPECT_EQ(r["verdict"], "confirmed") << code << ": " << r.dump();
    EXPECT_GT(r["calls"].get<int64_t>(), 0) << code;
    EXPECT_GT(r["total_ms"].get<double>(), 0.0) << code;
    ASSERT_TRUE(r["share"].is_number()) << code;
    EXPECT_GT(r["share"].get<double>(), 0.0) << code;
  }
  EXPECT_EQ((*finding(doc, "TL101"))["runtime"]["callee"], "gc.collect");
}

TEST(RuntimeEndToEnd, TrainGoodHasNoConfirmedFinding) {
  if (!bootstrap_built_in()) GTEST_SKIP() << "the bootstrap (shim/python) was not in the tree at build time";
  json doc = run_example("examples/train_good.py");
  EXPECT_EQ(doc["run"]["steps"], 5);
  for (auto& f : doc["findings"]) {
    if (f["runtime"].value("runtime_only", false)) continue;  // TL9xx describe the run, not a finding of the code
    EXPECT_NE(f["runtime"]["verdict"], "confirmed") << f["code"];
  }
}

// ---- distributed: ranks that torchrun names, and ranks that torch.multiprocessing.spawn does not ----

namespace {

// A DDP loop on the CPU (gloo), one epoch of 8 steps per rank, gc.collect() every step, a
// DataLoader without workers over a dataset that makes its samples (TL201). `head` sets
// up the process group; the rest is the same for both launchers.
std::string ddp_body(const std::string& head) {
  return "import gc, os, socket, sys\n"
         "import torch\n"
         "import torch.distributed as dist\n"
         "import torch.multiprocessing as mp\n"
         "import torch.nn as nn\n"
         "from torch.nn.parallel import DistributedDataParallel as DDP\n"
         "from torch.utils.data import DataLoader, Dataset\n"
         "from torch.utils.data.distributed import DistributedSampler\n"
         "\n"
         "\n"
         "class Synthetic(Dataset):  # makes each sample when asked: loading work for TL201's probe\n"
         "    def __len__(self):\n"
         "        return 256\n"
         "\n"
         "    def __getitem__(self, i):\n"
         "        g = torch.Generator().manual_seed(i)\n"
         "        return torch.randn(16, generator=g), torch.randn(1, generator=g)\n"
         "\n"
         "\n"
         "def train(rank, world, port):\n" +
         head +
         "    torch.manual_seed(0)\n"
         "    ds = Synthetic()\n"
         "    loader = DataLoader(ds, batch_size=16, sampler=DistributedSampler(ds))\n"
         "    model = DDP(nn.Linear(16, 1))\n"
         "    opt = torch.optim.SGD(model.parameters(), lr=0.01)\n"
         "    for x, y in loader:\n"
         "        opt.zero_grad()\n"
         "        loss = nn.functional.mse_loss(model(x), y)\n"
         "        loss.backward()\n"
         "        opt.step()\n"
         "        gc.collect()\n"
         "    sys.stdout.write('rank %d done\\n' % dist.get_rank())  # one write: PYTHONUNBUFFERED may be set\n"
         "    sys.stdout.flush()\n"
         "    dist.destroy_process_group()\n";
}

void expect_two_ranks_of_eight_steps(const json& doc) {
  const json& run = doc["run"];
  std::set<int64_t> ranks;
  for (auto& p : run["processes"])
    if (p["role"] == "rank") {
      ASSERT_TRUE(p["rank"].is_number()) << p.dump();
      ranks.insert(p["rank"].get<int64_t>());
      EXPECT_EQ(p["steps"], 8) << p.dump();
    }
  EXPECT_EQ(ranks, (std::set<int64_t>{0, 1})) << run["processes"].dump();
  EXPECT_EQ(run["steps"], 8);
  ASSERT_TRUE(run["primary_rank"].is_number());
  const json* gc = finding(doc, "TL101");
  ASSERT_NE(gc, nullptr);
  EXPECT_EQ((*gc)["runtime"]["calls"], 8) << (*gc)["runtime"].dump();  // one rank's calls, not both
  EXPECT_GT((*gc)["runtime"]["total_ms"].get<double>(), 0.0);
  ASSERT_TRUE((*gc)["runtime"]["rank"].is_number());
  const json* wait = finding(doc, "TL201");
  ASSERT_NE(wait, nullptr);
  EXPECT_NE((*wait)["runtime"]["verdict"], "not-reached") << (*wait)["runtime"].dump();
  EXPECT_GE((*wait)["runtime"]["calls"].get<int64_t>(), 8);
}

}  // namespace

// torch.multiprocessing.spawn: the children have no RANK in their environment. They are found to be
// ranks when they join the process group, and their steps, waits and sites count as a rank's.
TEST(RuntimeDistributed, SpawnedRanksAreRanksNotWorkers) {
  if (!bootstrap_built_in()) GTEST_SKIP() << "the bootstrap (shim/python) was not in the tree at build time";
  TempDir d;
  write_file(d.path / "train_spawn.py",
             ddp_body("    dist.init_process_group('gloo', rank=rank, world_size=world,\n"
                      "                            init_method='tcp://127.0.0.1:%d' % port)\n") +
                 "\n\nif __name__ == '__main__':\n"
                 "    s = socket.socket()\n"
                 "    s.bind(('127.0.0.1', 0))\n"
                 "    port = s.getsockname()[1]\n"
                 "    s.close()\n"
                 "    mp.spawn(train, args=(2, port), nprocs=2)\n");
  Proc r = run_tl("run --format json --output r.json -- /usr/bin/python3 train_spawn.py", d.path.string());
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("rank 0 done"), std::string::npos) << "stdout:\n" << r.out << "\nstderr:\n" << r.err;
  EXPECT_NE(r.out.find("rank 1 done"), std::string::npos);
  json doc = json::parse(read_file(d.path / "r.json"));
  expect_two_ranks_of_eight_steps(doc);
  // the spawning parent is the program's main process, with no step of its own
  int mains = 0;
  for (auto& p : doc["run"]["processes"])
    if (p["role"] == "main") {
      ++mains;
      EXPECT_EQ(p["steps"], 0);
    }
  EXPECT_EQ(mains, 1) << doc["run"]["processes"].dump(1);
}

// torchrun starts each rank as a subprocess with RANK/LOCAL_RANK/WORLD_SIZE set. Debian's own
// torchrun (torch 1.13) fails on Python 3.11 before it starts anything (Std.from_str("0") is None),
// so a stand-in with the same process tree does its job: a Python launcher that is not the script,
// then one `python3 train_ddp.py` per rank.
TEST(RuntimeDistributed, TorchrunStyleRanksFromTheEnvironment) {
  if (!bootstrap_built_in()) GTEST_SKIP() << "the bootstrap (shim/python) was not in the tree at build time";
  TempDir d;
  write_file(d.path / "train_ddp.py",
             ddp_body("    dist.init_process_group('gloo')\n") +
                 "\n\nif __name__ == '__main__':\n"
                 "    train(int(os.environ['RANK']), int(os.environ['WORLD_SIZE']), None)\n");
  write_file(d.path / "torchrun",
             "#!/usr/bin/python3\n"
             "import os, socket, subprocess, sys\n"
             "n = int(sys.argv[1].split('=')[1])\n"
             "s = socket.socket()\n"
             "s.bind(('127.0.0.1', 0))\n"
             "port = s.getsockname()[1]\n"
             "s.close()\n"
             "procs = []\n"
             "for r in range(n):\n"
             "    env = dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(n),\n"
             "               MASTER_ADDR='127.0.0.1', MASTER_PORT=str(port))\n"
             "    procs.append(subprocess.Popen([sys.executable] + sys.argv[2:], env=env))\n"
             "sys.exit(max(p.wait() for p in procs))\n");
  fs::permissions(d.path / "torchrun", fs::perms::owner_all);
  Proc r = run_tl("run --format json --output r.json -- ./torchrun --nproc_per_node=2 train_ddp.py", d.path.string());
  ASSERT_EQ(r.rc, 0) << r.err;
  json doc = json::parse(read_file(d.path / "r.json"));
  expect_two_ranks_of_eight_steps(doc);
}

// ---- programs without an optimizer step ---------------------------------------------------------

TEST(RuntimeRecords, BackwardStepsCountOnlyWithoutOptimizerSteps) {
  {
    std::istringstream in(
        "{\"t\":\"proc\",\"pid\":7,\"ppid\":1,\"role\":\"main\"}\n"
        "{\"t\":\"bstep\",\"n\":1,\"end\":100}\n"
        "{\"t\":\"bstep\",\"n\":2,\"end\":200}\n");
    auto p = rt::parse_records(in, "rec-7.jsonl");
    ASSERT_EQ(p.steps.size(), 2u);
    EXPECT_TRUE(p.steps_from_backward);
    EXPECT_EQ(p.steps[1].end, 200);
  }
  {
    // gradient accumulation: backward() calls before the first optimizer step are not steps
    std::istringstream in(
        "{\"t\":\"bstep\",\"n\":1,\"end\":100}\n"
        "{\"t\":\"bstep\",\"n\":2,\"end\":200}\n"
        "{\"t\":\"step\",\"n\":1,\"end\":300}\n");
    auto p = rt::parse_records(in, "rec-8.jsonl");
    ASSERT_EQ(p.steps.size(), 1u);
    EXPECT_FALSE(p.steps_from_backward);
    EXPECT_EQ(p.steps[0].end, 300);
  }
}

TEST(RuntimePlan, StepMarkerIsBackwardOnlyWithoutAnyOptimizerStep) {
  TempDir d;
  const std::string loop =
      "import torch\n\n"
      "def main(model, loader, opt=None):\n"
      "    for x, y in loader:\n"
      "        model.zero_grad()\n"
      "        loss = torch.nn.functional.mse_loss(model(x), y)\n"
      "        loss.backward()\n";
  write_file(d.path / "sgd.py", loop +
                                    "        for p in model.parameters():\n"
                                    "            p.data.add_(p.grad, alpha=-0.1)\n");
  write_file(d.path / "opt.py", loop +
                                    "        if opt is not None:\n"
                                    "            opt.step()\n");
  tl::LintOptions o;
  o.threads = 1;
  EXPECT_EQ(rt::build_plan((d.path / "sgd.py").string(), o).step_marker, "backward");
  EXPECT_EQ(rt::build_plan((d.path / "opt.py").string(), o).step_marker, "optimizer");
  EXPECT_EQ(rt::plan_json({}, 0, "backward")["step_marker"], "backward");
}

// End to end: a hand-written SGD update (steps marked at backward(), --max-steps stops it), and an
// optional optimizer left off (steps found from backward() afterwards, --max-steps cannot stop it).
TEST(RuntimeEndToEnd, ProgramsWithoutAnOptimizerStepStillHaveSteps) {
  if (!bootstrap_built_in()) GTEST_SKIP() << "the bootstrap (shim/python) was not in the tree at build time";
  TempDir d;
  const std::string head =
      "import gc, sys\n"
      "import torch\n\n"
      "def main(steps=12):\n"
      "    torch.manual_seed(0)\n"
      "    model = torch.nn.Linear(8, 1)\n"
      "    opt = torch.optim.SGD(model.parameters(), lr=0.1) if '--opt' in sys.argv else None\n"
      "    for i in range(steps):\n"
      "        x, y = torch.randn(32, 8), torch.randn(32, 1)\n"
      "        model.zero_grad()\n"
      "        loss = torch.nn.functional.mse_loss(model(x), y)\n"
      "        loss.backward()\n";
  const std::string tail =
      "        gc.collect()\n"
      "    print('done', i + 1)\n\n"
      "main()\n";
  write_file(d.path / "sgd.py", head +
                                    "        with torch.no_grad():\n"
                                    "            for p in model.parameters():\n"
                                    "                p -= 0.1 * p.grad\n" +
                                    tail);
  write_file(d.path / "optional.py", head +
                                         "        if opt is not None:\n"
                                         "            opt.step()\n"
                                         "        else:\n"
                                         "            with torch.no_grad():\n"
                                         "                for p in model.parameters():\n"
                                         "                    p -= 0.1 * p.grad\n" +
                                         tail);
  Proc r = run_tl("run --max-steps 5 --format json --output a.json -- /usr/bin/python3 sgd.py", d.path.string());
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "");  // stopped at step 5, before its print
  json a = json::parse(read_file(d.path / "a.json"));
  EXPECT_EQ(a["run"]["steps"], 5);
  EXPECT_TRUE(a["run"]["stopped_early"].get<bool>());
  EXPECT_NE(a["run"]["notes"].dump().find("a step is one backward() call"), std::string::npos) << a["run"]["notes"];
  const json* gc = finding(a, "TL101");
  ASSERT_NE(gc, nullptr);
  EXPECT_EQ((*gc)["runtime"]["share_basis"], "steps");

  r = run_tl("run --max-steps 5 --format json --output b.json -- /usr/bin/python3 optional.py", d.path.string());
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "done 12\n");
  json b = json::parse(read_file(d.path / "b.json"));
  EXPECT_EQ(b["run"]["steps"], 12);
  EXPECT_FALSE(b["run"]["stopped_early"].get<bool>());
  EXPECT_NE(b["run"]["notes"].dump().find("did not stop the program"), std::string::npos) << b["run"]["notes"];

  // with the optimizer on, backward() calls are not steps: 5 optimizer steps, then stop
  r = run_tl("run --max-steps 5 --format json --output c.json -- /usr/bin/python3 optional.py --opt", d.path.string());
  EXPECT_EQ(r.rc, 0) << r.err;
  json c = json::parse(read_file(d.path / "c.json"));
  EXPECT_EQ(c["run"]["steps"], 5);
  EXPECT_EQ(c["run"]["notes"].dump().find("backward() call"), std::string::npos) << c["run"]["notes"];
}

// An evaluation inside the loop (after step 2) stretches one step: the mean counts it, the median
// does not, and the report says which.
TEST(RuntimeMerge, MedianStepAndLongSteps) {
  std::vector<rt::PlanSite> sites = {site(0, "TL101", "site", 10)};
  Rec m;
  m.proc(700, 1, "main").wait(0, 1).step(1, 10).step(2, 20).site(0, 21, 22).step(3, 520).step(4, 530).step(5, 540)
      .end("exit", 5);
  TempDir d;
  auto res = rt::measure(sites, read_dir(d, {{"rec-700.jsonl", m.text}}), {});
  ASSERT_TRUE(res.run.median_step_ms);
  EXPECT_DOUBLE_EQ(*res.run.median_step_ms, 10.0);  // gaps 10, 500, 10, 10
  EXPECT_EQ(res.run.long_steps, 1);
  EXPECT_DOUBLE_EQ(res.run.long_steps_ms, 500.0);
  EXPECT_DOUBLE_EQ(res.run.mean_step_ms, 132.5);  // [10, 540] over the 4 steps after warm-up step 1
  rt::RunContext ctx;
  auto lint = lint_for(sites);
  ctx.lint = &lint;
  ctx.sites = &sites;
  ctx.m = &res;
  ctx.anchor.path = "train.py";
  std::ostringstream out;
  rt::write_run_text(out, ctx);
  std::string text = out.str();
  EXPECT_NE(text.find("median step 10.0 ms; 1 step took over 10x that (500.0 ms in all"), std::string::npos) << text;
  json j = rt::run_json(ctx);
  EXPECT_EQ(j["run"]["long_steps"], 1);
  EXPECT_DOUBLE_EQ(j["run"]["median_step_ms"].get<double>(), 10.0);
  // two steps: no median
  Rec s;
  s.proc(701, 1, "main").wait(0, 1).step(1, 10).step(2, 20).end("exit", 2);
  TempDir d2;
  res = rt::measure(sites, read_dir(d2, {{"rec-701.jsonl", s.text}}), {});
  EXPECT_FALSE(res.run.median_step_ms);
  EXPECT_EQ(res.run.long_steps, 0);
}

// ---- the GPU side of the whole chain, without a GPU ----------------------------------------------

// `trainlint run` with the stand-in libcupti in "driven" mode: the program reports what a GPU would
// have done (kernels while a step computes, a pageable copy per batch, nothing during its per-step
// gc.collect()). Everything after that is the real chain: the bootstrap starts the shim, the shim
// flushes CUPTI buffers into the records, the merge puts GPU idle time on the gc.collect() site and
// counts the pageable copies against the DataLoader, TL903 fires, and the trace has GPU tracks.
TEST(RuntimeEndToEnd, GpuSideThroughTheWholeChainWithAStandInCupti) {
  if (!bootstrap_built_in()) GTEST_SKIP() << "the bootstrap (shim/python) was not in the tree at build time";
  const fs::path bin_dir = fs::path(tl::test::binary()).parent_path();
  const fs::path fake = bin_dir / "libtrainlint_fake_cupti.so";
  if (!fs::exists(fake)) GTEST_SKIP() << fake << " not built (no CUPTI headers: host-only shim)";
  TempDir d;
  write_file(d.path / "train.py",
             "import ctypes, gc, os, time\n"
             "import torch\n"
             "from torch.utils.data import DataLoader, TensorDataset\n"
             "\n"
             "fake = ctypes.CDLL(os.environ['TRAINLINT_CUPTI'])\n"
             "fake.fake_cupti_add.argtypes = [ctypes.c_int, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int]\n"
             "\n"
             "\n"
             "def main():\n"
             "    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
             "    torch.manual_seed(0)\n"
             "    data = TensorDataset(torch.randn(640, 64), torch.randn(640, 1))\n"
             "    loader = DataLoader(data, batch_size=32)\n"
             "    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 1)).to(device)\n"
             "    opt = torch.optim.SGD(model.parameters(), lr=0.01)\n"
             "    junk = [[i] for i in range(200000)]  # something for gc.collect() to walk\n"
             "    for x, y in loader:\n"
             "        t0 = time.monotonic_ns()\n"
             "        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)\n"
             "        fake.fake_cupti_add(1, t0, time.monotonic_ns() + 1000, 0)\n"
             "        t1 = time.monotonic_ns()\n"
             "        opt.zero_grad()\n"
             "        loss = torch.nn.functional.mse_loss(model(x), y)\n"
             "        loss.backward()\n"
             "        opt.step()\n"
             "        fake.fake_cupti_add(0, t1, time.monotonic_ns(), 7)\n"
             "        gc.collect()\n"
             "    print('steps done', len(junk) > 0)\n"
             "\n"
             "\n"
             "if __name__ == '__main__':\n"
             "    main()\n");
  // all 20 kernels one by one, then only the first 5 (TRAINLINT_GPU_DETAIL): the rest arrive as
  // merged busy intervals and every figure below must come out the same
  for (const std::string detail : {"100000", "5"}) {
  SCOPED_TRACE("TRAINLINT_GPU_DETAIL=" + detail);
  Proc r = run_tl("run --format json --output r.json --trace trace.json -- /usr/bin/python3 train.py", d.path.string(),
                  "/dev/null", "TRAINLINT_CUPTI='" + fake.string() + "' FAKE_CUPTI_MODE=driven TRAINLINT_GPU_DETAIL=" + detail);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "steps done True\n");
  json doc = json::parse(read_file(d.path / "r.json"));
  const json& gpu = doc["run"]["gpu"];
  EXPECT_EQ(gpu["status"], "ok") << gpu.dump();
  EXPECT_TRUE(gpu["measured"].get<bool>());
  EXPECT_EQ(gpu["kernels"], 20);
  EXPECT_EQ(gpu["memcpys"], 20);
  EXPECT_EQ(gpu["pageable_htod"], 20);
  EXPECT_EQ(doc["run"]["steps"], 20);

  // gc.collect(): the GPU did nothing during it, so its GPU idle time is its whole time
  const json* gc = finding(doc, "TL101");
  ASSERT_NE(gc, nullptr);
  const json& g = (*gc)["runtime"];
  EXPECT_EQ(g["verdict"], "confirmed") << g.dump();
  ASSERT_TRUE(g["gpu_idle_ms"].is_number()) << g.dump();
  EXPECT_GT(g["total_ms"].get<double>(), 0.0);
  EXPECT_NEAR(g["gpu_idle_ms"].get<double>(), g["total_ms"].get<double>(), 0.01 * g["total_ms"].get<double>()) << g.dump();

  // TL202: measured now (a GPU was there), with the pageable copies counted beside its data waits
  const json* pin = finding(doc, "TL202");
  ASSERT_NE(pin, nullptr);
  const json& p = (*pin)["runtime"];
  EXPECT_NE(p["verdict"], "not-measurable") << p.dump();
  EXPECT_EQ(p["pageable_copies"], 20) << p.dump();

  // TL903: a GPU idle for most of the steps (the step computes for well under a gc.collect())
  const json* idle = finding(doc, "TL903");
  ASSERT_NE(idle, nullptr) << doc["run"].dump();
  EXPECT_TRUE((*idle)["runtime"].value("runtime_only", false));

  // the trace shows the GPU activity beside the host intervals
  json tr = json::parse(read_file(d.path / "trace.json"));
  int kernels = 0, busy = 0;
  for (auto& e : tr["traceEvents"]) {
    if (e.value("ph", "") == "X" && e.value("cat", "") == "gpu" && e.value("name", "") == "void fake_kernel<float>(float*, int)")
      ++kernels;
    if (e.value("ph", "") == "X" && e.value("cat", "") == "gpu" && e.value("name", "") == "busy") ++busy;
  }
  EXPECT_EQ(kernels, detail == "5" ? 5 : 20) << tr.dump().substr(0, 2000);
  EXPECT_EQ(busy, detail == "5" ? 15 : 0);  // the step's kernel and the next gc.collect() never touch
  }
}

// torch.profiler with CUDA activities needs CUPTI for itself (one CUPTI per process, its activity
// callbacks process-wide): the shim flushes and steps aside before Kineto prepares its trace, the
// GPU is reported not measured with the reason, host measurements go on. (A CPU build of torch
// drops the CUDA activity, so the program asks for it the way a GPU build would keep it.)
TEST(RuntimeEndToEnd, TorchProfilerTakesCuptiAndTheShimStepsAside) {
  if (!bootstrap_built_in()) GTEST_SKIP() << "the bootstrap (shim/python) was not in the tree at build time";
  const fs::path fake = fs::path(tl::test::binary()).parent_path() / "libtrainlint_fake_cupti.so";
  if (!fs::exists(fake)) GTEST_SKIP() << fake << " not built (no CUPTI headers: host-only shim)";
  TempDir d;
  write_file(d.path / "prof.py",
             "import gc\n"
             "import os\n"
             "import torch\n"
             "from torch.profiler import ProfilerActivity\n"
             "\n"
             "model = torch.nn.Linear(8, 1)\n"
             "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
             "steps = int(os.environ.get('STEPS', '6'))\n"
             "for i in range(steps):\n"
             "    opt.zero_grad()\n"
             "    model(torch.randn(4, 8)).sum().backward()\n"
             "    opt.step()\n"
             "    gc.collect()\n"
             "    if i == 2:\n"
             "        p = torch.autograd.profiler.profile()\n"
             "        p.kineto_activities = {ProfilerActivity.CPU, ProfilerActivity.CUDA}\n"
             "        try:\n"
             "            p._prepare_trace()\n"
             "        except Exception:\n"
             "            pass\n"
             "print('done')\n");
  Proc r = run_tl("run --format json --output r.json -- /usr/bin/python3 prof.py", d.path.string(), "/dev/null",
                  "TRAINLINT_CUPTI='" + fake.string() + "' FAKE_CUPTI_MODE=driven");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "done\n");
  json doc = json::parse(read_file(d.path / "r.json"));
  EXPECT_EQ(doc["run"]["gpu"]["status"], "busy") << doc["run"]["gpu"].dump();
  EXPECT_NE(doc["run"]["gpu"]["reason"].get<std::string>().find("torch.profiler"), std::string::npos);
  EXPECT_EQ(doc["run"]["steps"], 6);
  const json* gc = finding(doc, "TL101");
  ASSERT_NE(gc, nullptr);
  EXPECT_EQ((*gc)["runtime"]["verdict"], "confirmed");
  EXPECT_TRUE((*gc)["runtime"]["gpu_idle_ms"].is_null());
}

TEST(RuntimeRecords, GpuBusyLinesAreIntervalsOfTheirDevice) {
  std::istringstream in(
      "{\"t\":\"gpu_busy\",\"device\":1,\"kernels\":7,\"memsets\":1,\"base\":1000,\"iv\":[0,10,20,5]}\n"
      "{\"t\":\"gpu_busy\",\"device\":1,\"kernels\":0,\"memsets\":0,\"base\":2000,\"iv\":[0,1,2]}\n"  // odd: bad
      "{\"t\":\"gpu_busy\",\"device\":0,\"kernels\":2,\"base\":3000,\"iv\":[5,-1]}\n");          // negative: bad
  auto p = rt::parse_records(in, "rec-9.jsonl");
  ASSERT_EQ(p.gpu_busy.size(), 2u);
  EXPECT_EQ(p.gpu_busy[0].t.start, 1000);
  EXPECT_EQ(p.gpu_busy[0].t.end, 1010);
  EXPECT_EQ(p.gpu_busy[1].t.start, 1020);
  EXPECT_EQ(p.gpu_busy[1].t.end, 1025);
  EXPECT_EQ(p.gpu_busy[1].device, 1);
  EXPECT_EQ(p.busy_kernels, 7);
  EXPECT_EQ(p.busy_memsets, 1);
  EXPECT_EQ(p.bad_lines, 2u);
}

// ^C (SIGINT to trainlint, forwarded) reaches a program that spends nearly all its time inside
// gc.collect(): the KeyboardInterrupt must not be raised inside a gc callback of ours, where
// CPython swallows it. trainlint reports, then ends by SIGINT like the program.
TEST(RuntimeLauncher, SigintReachesAProgramThatLivesInGcCollect) {
  if (!bootstrap_built_in()) GTEST_SKIP() << "the bootstrap (shim/python) was not in the tree at build time";
  TempDir d;
  write_file(d.path / "gcloop.py",
             "import gc, pathlib, time\n"
             "junk = [[i] for i in range(1000000)]\n"
             "t_end = time.monotonic() + 30\n"
             "n = 0\n"
             "while time.monotonic() < t_end:\n"
             "    gc.collect()\n"
             "    n += 1\n"
             "    if n == 3:\n"
             "        pathlib.Path('ready').write_text('1')\n"
             "print('not interrupted')\n");
  // with the shim (GC pauses timed in C), and host-only (a Python gc callback, whose swallowed
  // KeyboardInterrupt the bootstrap sends again); three times each
  for (int trial = 0; trial < 6; ++trial) {
    const bool host_only = trial >= 3;
    SCOPED_TRACE(std::string(host_only ? "host-only " : "shim ") + std::to_string(trial % 3));
    fs::remove(d.path / "ready");
    pid_t pid = start_run(d.path, "gcloop.py", host_only ? "/nonexistent/libtrainlint_shim.so" : nullptr);
    ASSERT_GT(pid, 0);
    ASSERT_TRUE(wait_for_file(d.path / "ready", std::chrono::seconds(20)));
    auto sent = std::chrono::steady_clock::now();
    kill(pid, SIGINT);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << (WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    EXPECT_EQ(WTERMSIG(status), SIGINT);
    EXPECT_LT(std::chrono::steady_clock::now() - sent, std::chrono::seconds(10)) << "the ^C was not delivered";
    std::string report = read_file(d.path / "report.txt");
    EXPECT_NE(report.find("ended by SIGINT"), std::string::npos) << report;
    EXPECT_EQ(report.find("GPU: not measured \u2014 the GPU shim (libtrainlint_shim.so) is not installed") != std::string::npos,
              host_only)
        << report;
  }
}

// `[tool.trainlint.run]` of the script's project sets the thresholds; the command line's
// --threshold wins; the configuration's rule selection applies; a broken configuration stops the
// run before the program starts.
TEST(RuntimeEndToEnd, ConfigurationSetsThresholdsAndRules) {
  if (!bootstrap_built_in()) GTEST_SKIP() << "the bootstrap (shim/python) was not in the tree at build time";
  TempDir d;
  write_file(d.path / "train.py",
             "import gc\nimport torch\n\n"
             "def main(steps=8):\n"
             "    model = torch.nn.Linear(8, 1)\n"
             "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
             "    for i in range(steps):\n"
             "        loss = model(torch.randn(32, 8)).pow(2).mean()\n"
             "        opt.zero_grad()\n"
             "        loss.backward()\n"
             "        opt.step()\n"
             "        gc.collect()\n"
             "        print('step', i, loss.item())\n\n"
             "main()\n");
  write_file(d.path / "pyproject.toml",
             "[project]\nname = \"t\"\n\n[tool.trainlint]\nignore = [\"TL106\"]\n\n"
             "[tool.trainlint.run]\nthreshold = 100\ngc-pauses = 100\n");
  Proc r = run_tl("run --max-steps 4 --format json --output a.json -- /usr/bin/python3 train.py", d.path.string());
  ASSERT_EQ(r.rc, 0) << r.err;
  json a = json::parse(read_file(d.path / "a.json"));
  EXPECT_EQ(a["run"]["threshold_pct"], 100.0);
  const json* gc = finding(a, "TL101");
  ASSERT_NE(gc, nullptr);
  EXPECT_EQ((*gc)["runtime"]["verdict"], "negligible") << "nothing costs 100 % of a step";
  EXPECT_EQ(finding(a, "TL106"), nullptr) << "ignored by the configuration";
  EXPECT_EQ(finding(a, "TL902"), nullptr) << "gc-pauses = 100: automatic GC never reaches it";
  r = run_tl("run --threshold 0 --max-steps 4 --format json --output b.json -- /usr/bin/python3 train.py", d.path.string());
  ASSERT_EQ(r.rc, 0) << r.err;
  json b = json::parse(read_file(d.path / "b.json"));
  EXPECT_EQ(b["run"]["threshold_pct"], 0.0);
  EXPECT_EQ((*finding(b, "TL101"))["runtime"]["verdict"], "confirmed");
  write_file(d.path / "pyproject.toml", "[tool.trainlint.run]\nthreshhold = 2\n");
  r = run_tl("run -- /usr/bin/python3 train.py", d.path.string());
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.out, "") << "the program did not run";
  EXPECT_NE(r.err.find("pyproject.toml:2: unknown key 'threshhold' in [tool.trainlint.run]"), std::string::npos) << r.err;
}

// ---- issue 12: figures that hold (each test failed before its fix) --------------------------------

namespace {

std::string programs_dir() { return tl::test::source_dir() + "/tests/runtime/programs"; }

// `trainlint run --format json` on a program of tests/runtime/programs; the JSON report, and what
// the program and trainlint wrote.
json run_program(const std::string& script, const std::string& extra, Proc* proc = nullptr) {
  TempDir t;
  std::string out = (t.path / "r.json").string();
  Proc r = run_tl("run " + extra + " --format json --output '" + out + "' -- /usr/bin/python3 " + script,
                  programs_dir());
  EXPECT_EQ(r.rc, 0) << r.err;
  if (proc) *proc = r;
  return json::parse(read_file(out));
}

const rt::PlanSite* plan_site(const rt::Plan& plan, const std::string& code) {
  for (size_t i = 0; i < plan.lint.findings.size(); ++i)
    if (plan.lint.findings[i].code == code) return &plan.sites[i];
  return nullptr;
}

rt::Plan plan_of(const std::string& program) {
  tl::LintOptions o;
  o.threads = 1;
  return rt::build_plan(programs_dir() + "/" + program, o);
}

}  // namespace

// Defect 1: a class of the entry script runs as `__main__.FeatureNet`, not `<module>.FeatureNet`.
TEST(RuntimePlan, ClassesOfTheEntryScriptAreMainAtRunTime) {
  auto plan = plan_of("model_every_step.py");
  const rt::PlanSite* s = plan_site(plan, "TL107");
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->callee);
  EXPECT_EQ(*s->callee, "__main__.FeatureNet");
}

TEST(RuntimeEndToEnd, AModelClassOfTheEntryScriptBuiltEveryStepIsMeasured) {
  if (!bootstrap_built_in()) GTEST_SKIP() << "the bootstrap (shim/python) was not in the tree at build time";
  json doc = run_program("model_every_step.py", "--max-steps 4");
  const json* f = finding(doc, "TL107");
  ASSERT_NE(f, nullptr);
  const json& r = (*f)["runtime"];
  EXPECT_EQ(r["verdict"], "confirmed") << r.dump();  // was not-reached
  EXPECT_EQ(r["calls"], 4) << r.dump();
  EXPECT_GT(r["share"].get<double>(), 0.05) << r.dump();
}

// Defect 3: the statement is the unit. `with open(...) as f: index = json.load(f)`: the parse on
// the same `with` is the cost, not the open().
TEST(RuntimePlan, AWithStatementIsTimedAsAUnit) {
  auto plan = plan_of("json_in_getitem.py");
  const rt::PlanSite* s = plan_site(plan, "TL205");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->line, 32u);
  EXPECT_EQ(s->unit_start, 32u);
  EXPECT_EQ(s->unit_end, 33u);
  // a call alone in its statement is its own cost: no unit
  auto bad = rt::build_plan(tl::test::source_dir() + "/examples/train_bad.py", {});
  for (size_t i = 0; i < bad.sites.size(); ++i)
    if (bad.sites[i].callee && *bad.sites[i].callee == "gc.collect") EXPECT_EQ(bad.sites[i].unit_start, 0u);
}

TEST(RuntimeEndToEnd, TheParseOnTheFlaggedWithStatementIsItsCost) {
  if (!bootstrap_built_in()) GTEST_SKIP() << "the bootstrap (shim/python) was not in the tree at build time";
  json doc = run_program("json_in_getitem.py", "--max-steps 4");
  const json* load = finding(doc, "TL205");
  const json* wait = finding(doc, "TL201");
  ASSERT_NE(load, nullptr);
  ASSERT_NE(wait, nullptr);
  // every item parses the index inside the main process's wait for its batch: the statement's time
  // is most of that wait (the open() alone was about 1% of it)
  double load_ms = (*load)["runtime"]["window_ms"].get<double>(), wait_ms = (*wait)["runtime"]["window_ms"].get<double>();
  EXPECT_GT(load_ms, 0.5 * wait_ms) << (*load)["runtime"].dump() << "\n" << (*wait)["runtime"].dump();
  EXPECT_LE(load_ms, wait_ms * 1.05);
  EXPECT_EQ((*load)["runtime"]["calls"], 32);  // 4 batches of 8 items
}

// Defect 2: a DataLoader built every step costs its iterators' start-up and first batch; TL901 does
// not tell a loader that has workers to use workers.
TEST(RuntimeEndToEnd, ADataLoaderBuiltEveryStepCostsItsWorkersStartUp) {
  if (!bootstrap_built_in()) GTEST_SKIP() << "the bootstrap (shim/python) was not in the tree at build time";
  json doc = run_program("loader_every_step.py", "--max-steps 5");
  const json* f = finding(doc, "TL107");
  ASSERT_NE(f, nullptr);
  const json& r = (*f)["runtime"];
  EXPECT_EQ(r["verdict"], "confirmed") << r.dump();  // was negligible: the constructor alone
  EXPECT_EQ(r["loader_starts"], 5) << r.dump();
  EXPECT_GT(r["share"].get<double>(), 0.3) << r.dump();
  // the rest of each step pays the copy-on-write its workers' fork left (the shim prices one
  // fault at exit, in a child that must not measure again: it once forked without end)
  EXPECT_GT(r.value("cow_faults", 0), 0) << r.dump();
  EXPECT_GT(r.value("cow_ms", 0.0), 0.0) << r.dump();
  EXPECT_NE(r["reason"].get<std::string>().find("copy-on-write"), std::string::npos) << r.dump();
  const json* stall = finding(doc, "TL901");
  ASSERT_NE(stall, nullptr) << doc["run"].dump();
  std::string msg = (*stall)["message"];
  EXPECT_EQ(msg.find("use DataLoader workers"), std::string::npos) << msg;
  EXPECT_NE(msg.find("first batch of 4 DataLoader iterators"), std::string::npos) << msg;
  EXPECT_NE(msg.find("2 workers"), std::string::npos) << msg;
}

// Defect 6: a GAN steps two optimizers per iteration; that is one step, and --max-steps 4 runs
// four whole iterations.
TEST(RuntimeEndToEnd, TwoOptimizersInOneIterationAreOneStep) {
  if (!bootstrap_built_in()) GTEST_SKIP() << "the bootstrap (shim/python) was not in the tree at build time";
  Proc p;
  json doc = run_program("gan.py", "--max-steps 4", &p);
  EXPECT_EQ(doc["run"]["steps"], 4);
  EXPECT_TRUE(doc["run"]["stopped_early"].get<bool>());
  EXPECT_NE(p.out.find("begin 4\n"), std::string::npos) << p.out;  // was: stopped in iteration 2
  EXPECT_EQ(p.out.find("begin 5"), std::string::npos) << p.out;
  // to its end: 512 samples in batches of 32
  doc = run_program("gan.py", "");
  EXPECT_EQ(doc["run"]["steps"], 16);
}

// Defect 6: --max-steps that nothing can count is said before the program starts.
TEST(RuntimeLauncher, MaxStepsThatCannotBeHonouredIsSaidAtTheStart) {
  TempDir d;
  write_file(d.path / "embed.py",
             "import sys\n"
             "\n"
             "\n"
             "def embed(rows):\n"
             "    return [sum(r) / len(r) for r in rows]\n"
             "\n"
             "\n"
             "if __name__ == '__main__':\n"
             "    sys.stderr.write('embedding\\n')\n"
             "    print(embed([[1, 2], [3, 4]]))\n");
  Proc r = run_tl("run --max-steps 3 -- /usr/bin/python3 embed.py", d.path.string());
  EXPECT_EQ(r.rc, 0) << r.err;
  size_t notice = r.err.find("--max-steps 3 cannot be honoured");
  ASSERT_NE(notice, std::string::npos) << r.err;
  EXPECT_LT(notice, r.err.find("embedding\n")) << r.err;  // before the program's own output
}

// Defect 7: one definition of a step for every figure; the estimate is a median with its spread; a
// share whose verdict depends on the step's spread is borderline.
TEST(RuntimeMerge, OneStepDefinitionMedianEstimateAndBorderline) {
  std::vector<rt::PlanSite> sites = {site(0, "TL101", "site", 10), site(1, "TL106", "site", 20)};
  Rec m;
  // step 1 is a slow warm-up (100 ms); then steps of 8, 10, 12, 10, 10 ms; gc.collect 4 ms in
  // each, a log call of 0.11 ms in each (1.1% of a 10 ms step; 0.98% of the p90 step)
  m.proc(900, 1, "main").wait(0, 1).step(1, 100);
  double t = 100;
  int64_t n = 1;
  for (double len : {8.0, 10.0, 12.0, 10.0, 10.0}) {
    m.site(0, t + 1, t + 5).site(1, t + 6, t + 6.11);
    t += len;
    m.step(++n, t);
  }
  m.site(0, 500, 600);  // a final collection after the last step: in the totals, not in the steps
  m.end("exit", 6);
  TempDir d;
  auto res = rt::measure(sites, read_dir(d, {{"rec-900.jsonl", m.text}}), {});
  EXPECT_EQ(res.run.steps, 6);
  EXPECT_EQ(res.run.steps_counted, 5);
  EXPECT_DOUBLE_EQ(res.run.mean_step_ms, 10.0);  // not 25: the warm-up step is left out
  ASSERT_TRUE(res.run.median_step_ms);
  EXPECT_DOUBLE_EQ(*res.run.median_step_ms, 10.0);
  EXPECT_NEAR(*res.run.p10_step_ms, 8.8, 1e-9);
  EXPECT_NEAR(*res.run.p90_step_ms, 11.2, 1e-9);
  auto& gc = res.findings[0];
  EXPECT_EQ(gc.calls, 6);
  EXPECT_NEAR(gc.total_ms, 120.0, 1e-6);
  EXPECT_NEAR(*gc.ms_per_step, 4.0, 1e-6);  // was 120 / 6 = 20 ms "per step"
  EXPECT_NEAR(*gc.share, 0.4, 1e-6);
  EXPECT_FALSE(gc.borderline);
  auto& log = res.findings[1];
  EXPECT_EQ(log.verdict, "confirmed");
  EXPECT_TRUE(log.borderline);
  // the estimate: each step minus its 4.11 ms; the median, with p10-p90
  ASSERT_TRUE(res.run.estimated_step_ms);
  EXPECT_NEAR(*res.run.estimated_step_ms, 5.89, 1e-6);
  EXPECT_NEAR(*res.run.estimated_p10_ms, 4.69, 1e-6);
  EXPECT_NEAR(*res.run.estimated_p90_ms, 7.09, 1e-6);
  auto lint = lint_for(sites);
  rt::RunContext ctx;
  ctx.lint = &lint;
  ctx.sites = &sites;
  ctx.m = &res;
  ctx.anchor.path = "train.py";
  std::ostringstream out;
  rt::write_run_text(out, ctx);
  std::string text = out.str();
  EXPECT_NE(text.find("6 steps; 5 counted (warm-up step 1 left out) in 50.0 ms: median step 10.0 ms (p10 8.80, p90 11.2)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("confirmed (borderline"), std::string::npos) << text;
  EXPECT_NE(text.find("10.0 ms median step -> 5.89 ms (p10-p90 4.69-7.09 ms), -41%"), std::string::npos) << text;
}

// Defect 5: nothing that cannot save step time is confirmed: worker start-up once per run (one
// epoch), work in DataLoader workers while the main process did not wait for it.
TEST(RuntimeMerge, NothingThatCannotSaveStepTimeIsConfirmed) {
  std::vector<rt::PlanSite> sites = {site(0, "TL203", "worker-start", 30, 14, "torch.utils.data.DataLoader"),
                                     site(1, "TL204", "site", 40, 15, "PIL.Image.open")};
  Rec m, w;
  m.proc(910, 1, "main").iter(0, 300).wait(300, 310).step(1, 320);
  for (int k = 2; k <= 5; ++k) m.wait(310.0 + 10 * (k - 1), 310.5 + 10 * (k - 1)).step(k, 320.0 + 10 * (k - 1));
  m.end("exit", 5);
  w.proc(911, 910, "worker");
  for (int k = 0; k < 16; ++k) w.site(1, 300 + 3.0 * k, 302.0 + 3.0 * k);  // 2 ms of decode every 3 ms
  TempDir d;
  auto res = rt::measure(sites, read_dir(d, {{"rec-910.jsonl", m.text}, {"rec-911.jsonl", w.text}}), {});
  EXPECT_DOUBLE_EQ(res.run.mean_step_ms, 10.0);
  auto& start = res.findings[0];  // 300 ms of worker start-up, once, before the counted steps
  EXPECT_EQ(start.verdict, "negligible");
  EXPECT_NE(start.reason.find("once per run cannot be avoided"), std::string::npos) << start.reason;
  auto& decode = res.findings[1];  // 4.5 ms of decode per step in a worker; the steps waited 0.5 ms
  EXPECT_EQ(decode.verdict, "confirmed");
  EXPECT_NEAR(*decode.share, 0.05, 1e-6);
  EXPECT_NE(decode.reason.find("which is all a fix can save"), std::string::npos) << decode.reason;
}

// Defect 11: a CPU run says once that the GPU was not measured; a program whose interpreter has no
// torch says that once instead of a row per finding.
TEST(RuntimeReport, ACpuRunAndAnInterpreterWithoutTorchAreSaidOnce) {
  std::vector<rt::PlanSite> sites = {site(0, "TL101", "site", 10), site(1, "TL103", "site", 20),
                                     site(2, "TL201", "data-wait", 30)};
  Rec m;
  m.proc(920, 1, "main")
      .gpu_status("no-driver", "libcuda.so.1: cannot open shared object file: No such file or directory; CUPTI "
                               "cannot start without the NVIDIA driver (cuptiActivityEnable returned "
                               "CUPTI_ERROR_NOT_INITIALIZED)")
      .line({{"t", "end"}, {"reason", "exit"}, {"steps", 0}, {"torch", false}});
  TempDir d;
  auto res = rt::measure(sites, read_dir(d, {{"rec-920.jsonl", m.text}}), {});
  EXPECT_TRUE(res.run.no_torch);
  auto lint = lint_for(sites);
  rt::RunContext ctx;
  ctx.lint = &lint;
  ctx.sites = &sites;
  ctx.m = &res;
  ctx.anchor.path = "train.py";
  std::ostringstream out;
  rt::write_run_text(out, ctx);
  std::string text = out.str();
  EXPECT_NE(text.find("GPU: not measured \u2014 no NVIDIA driver\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("CUPTI_ERROR"), std::string::npos) << text;
  EXPECT_EQ(text.find("not-reached"), std::string::npos) << text;
  EXPECT_NE(text.find("3 findings not reached: the program's interpreter cannot import torch"), std::string::npos) << text;
  size_t first = text.find("cannot import torch: nothing PyTorch does was measured");
  ASSERT_NE(first, std::string::npos) << text;
  EXPECT_EQ(text.find("cannot import torch: nothing PyTorch does was measured", first + 1), std::string::npos);
}

TEST(RuntimeEndToEnd, AnInterpreterWithoutTorchIsSaidOnce) {
  if (!bootstrap_built_in()) GTEST_SKIP() << "the bootstrap (shim/python) was not in the tree at build time";
  TempDir v;
  ASSERT_EQ(std::system(("/usr/bin/python3 -m venv --without-pip '" + (v.path / "env").string() + "'").c_str()), 0);
  Proc r = run_tl("run -- '" + (v.path / "env/bin/python").string() + "' examples/train_bad.py", tl::test::source_dir());
  EXPECT_EQ(r.rc, 1);  // the program's own ModuleNotFoundError
  EXPECT_NE(r.err.find("No module named 'torch'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cannot import torch"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("not-reached"), std::string::npos) << r.err;
}

// Defect 8: nested sites (a forward pass inside an evaluation inside the step) do not add up to
// more than the step; defect 9: each finding's share once the larger confirmed ones are fixed.
TEST(RuntimeMerge, NestedSharesAddUpAndSharesAfterTheLargerFixes) {
  std::vector<rt::PlanSite> sites = {site(0, "TL302", "site", 10), site(1, "TL304", "site", 20),
                                     site(2, "TL101", "site", 30), site(3, "TL106", "site", 40)};
  Rec m;
  m.proc(930, 1, "main").wait(0, 1).step(1, 10);
  for (int k = 1; k <= 4; ++k) {
    double b = 10.0 * k;
    // evaluation [b+1, b+6] with its forward pass [b+2, b+5] inside; gc.collect [b+6, b+8]; a log
    // call of 0.5 ms
    m.site(0, b + 1, b + 6).site(1, b + 2, b + 5).site(2, b + 6, b + 8).site(3, b + 8, b + 8.5).step(k + 1, b + 10);
  }
  m.end("exit", 5);
  TempDir d;
  auto res = rt::measure(sites, read_dir(d, {{"rec-930.jsonl", m.text}}), {});
  ASSERT_DOUBLE_EQ(res.run.mean_step_ms, 10.0);
  auto& eval = res.findings[0];
  auto& fwd = res.findings[1];
  EXPECT_NEAR(*eval.share, 0.5, 1e-9);
  EXPECT_NEAR(*fwd.share, 0.3, 1e-9);
  ASSERT_TRUE(eval.self_share);
  EXPECT_NEAR(*eval.self_share, 0.2, 1e-9);  // its time outside the forward pass
  EXPECT_NEAR(*fwd.self_share, 0.3, 1e-9);
  double sum = 0;
  for (auto& r : res.findings) sum += r.self_share.value_or(0);
  EXPECT_LE(sum, 1.0 + 1e-9);  // was 0.5 + 0.3 + 0.2 + 0.05 counted as 105% of the step
  // after the larger confirmed fixes: the log call is 0.5 ms of the 10 - 5 - 2 = 3 ms left
  auto& log = res.findings[3];
  ASSERT_TRUE(log.share_after);
  EXPECT_NEAR(*log.share_after, 0.5 / 3.0, 1e-9);
  ASSERT_TRUE(eval.share_after);
  EXPECT_NEAR(*eval.share_after, 0.5, 1e-9);  // the largest: nothing larger to fix first
  // the text report ranks by step time, says what the shares are of, and shows both
  auto lint = lint_for(sites);
  rt::RunContext ctx;
  ctx.lint = &lint;
  ctx.sites = &sites;
  ctx.m = &res;
  ctx.anchor.path = "train.py";
  std::ostringstream out;
  rt::write_run_text(out, ctx);
  std::string text = out.str();
  EXPECT_NE(text.find("% after"), std::string::npos) << text;
  EXPECT_NE(text.find("[20.0% outside the findings nested in it]"), std::string::npos) << text;
  EXPECT_LT(text.find("TL302"), text.find("TL304")) << text;
  EXPECT_LT(text.find("TL304"), text.find("TL101")) << text;
}

// Defect 4: on a machine whose cores the main process already keeps busy, DataLoader workers
// cannot remove the data wait: the estimate does not promise it.
TEST(RuntimeMerge, TheEstimateRespectsTheCoresTheMainProcessUses) {
  std::vector<rt::PlanSite> sites = {site(0, "TL201", "data-wait", 30, 14, "torch.utils.data.DataLoader"),
                                     site(1, "TL101", "site", 40, 9, "gc.collect")};
  auto records = [](int64_t cpu_ms) {
    Rec m;
    m.line({{"t", "proc"}, {"pid", 940}, {"ppid", 1}, {"role", "main"}, {"rank", nullptr}, {"argv0", "t.py"}, {"cpus", 2}});
    m.wait(0, 1).step(1, 10);
    for (int k = 1; k <= 4; ++k) m.wait(10.0 * k, 10.0 * k + 3).site(1, 10.0 * k + 5, 10.0 * k + 6).step(k + 1, 10.0 * k + 10);
    m.line({{"t", "end"}, {"reason", "exit"}, {"steps", 5}, {"cpu_ms", cpu_ms}});
    return m.text;
  };
  TempDir d, d2;
  auto busy = rt::measure(sites, read_dir(d, {{"rec-940.jsonl", records(95)}}), {});  // 1.9 of 2 cores over 50 ms
  EXPECT_TRUE(busy.run.no_spare_core);
  EXPECT_EQ(busy.findings[0].verdict, "confirmed");
  EXPECT_NE(busy.findings[0].reason.find("not in the estimate"), std::string::npos) << busy.findings[0].reason;
  EXPECT_NEAR(*busy.run.estimated_step_ms, 9.0, 1e-6);  // only gc.collect's 1 ms; was 6 ms
  auto idle = rt::measure(sites, read_dir(d2, {{"rec-940.jsonl", records(25)}}), {});  // half a core
  EXPECT_FALSE(idle.run.no_spare_core);
  EXPECT_NEAR(*idle.run.estimated_step_ms, 6.0, 1e-6);
}

// On a GPU, a host stall costs step time only while the GPU has nothing queued: the part of a
// confirmed finding's time during which the GPU still runs earlier work is not saved by a fix.
TEST(RuntimeMerge, TheEstimateCountsOnlyTheGpuIdlePartOfAFindingsTime) {
  std::vector<rt::PlanSite> sites = {site(0, "TL101", "site", 40, 9, "gc.collect")};
  // steps of 10 ms: the host queues work for 1 ms, the GPU runs it from 0.5 to 6.5, gc.collect
  // holds the host 8 ms (from 1 to 9) of which the GPU is busy 5.5 ms: a fix saves 2.5 ms, not 8
  auto records = [](bool gpu) {
    Rec m;
    m.proc(950, 1, "main").gpu_status(gpu ? "ok" : "no-gpu", "");
    m.step(1, 10);
    for (int k = 1; k <= 4; ++k) {
      double t = 10.0 * k;
      if (gpu) m.kernel(t + 0.5, t + 6.5, 7);
      m.site(0, t + 1, t + 9).step(k + 1, t + 10);
    }
    m.end("exit", 5);
    return m.text;
  };
  TempDir d, d2;
  auto with_gpu = rt::measure(sites, read_dir(d, {{"rec-950.jsonl", records(true)}}), {});
  ASSERT_TRUE(with_gpu.run.estimated_step_ms);
  EXPECT_NEAR(*with_gpu.run.estimated_step_ms, 7.5, 1e-6);
  ASSERT_TRUE(with_gpu.run.overlapped_ms_per_step);
  EXPECT_NEAR(*with_gpu.run.overlapped_ms_per_step, 5.5, 1e-6);
  EXPECT_EQ(with_gpu.findings[0].verdict, "confirmed");  // the verdict is still the wall-time share
  EXPECT_NEAR(*with_gpu.findings[0].gpu_idle_ms, 4 * 2.5, 1e-6);
  rt::RunContext ctx;
  auto lint = lint_for(sites);
  ctx.lint = &lint;
  ctx.sites = &sites;
  ctx.m = &with_gpu;
  std::ostringstream out;
  rt::write_run_text(out, ctx);
  EXPECT_NE(out.str().find("not counted as saved: 5.50 ms a step"), std::string::npos) << out.str();
  // without a measured GPU, all of the host time is the saving, as before
  auto no_gpu = rt::measure(sites, read_dir(d2, {{"rec-950.jsonl", records(false)}}), {});
  EXPECT_NEAR(*no_gpu.run.estimated_step_ms, 2.0, 1e-6);
  EXPECT_FALSE(no_gpu.run.overlapped_ms_per_step);
}

// Records of real runs on an NVIDIA H200 (torch 2.11, CUPTI 13; tests/runtime/records/README.md):
// gc.collect() every step of a loop that never waits for the GPU, 12 counted steps each. The
// fixed twins (no gc.collect) measured 9.38 ms and 76.24 ms a step on the same machine; before
// the GPU-idle accounting the estimates were 2.9 ms (-69%) and 3.4 ms (-96%).
TEST(RuntimeMerge, RealGpuRecordsEstimateTheirFixedTwins) {
  struct Case {
    const char* dir;
    double twin_ms;
  };
  for (const Case& c : {Case{"h200_gc_collect_gpu_short", 9.38}, Case{"h200_gc_collect_gpu_long", 76.24}}) {
    std::vector<rt::PlanSite> sites = {site(0, "TL502", "none", 30, 9, ".backward"),
                                       site(1, "TL101", "site", 32, 9, "gc.collect")};
    std::string dir = std::string(TRAINLINT_SOURCE_DIR) + "/tests/runtime/records/" + c.dir;
    std::vector<std::string> warnings;
    auto procs = rt::read_records(dir, &warnings);
    EXPECT_TRUE(warnings.empty()) << c.dir << ": " << (warnings.empty() ? "" : warnings[0]);
    auto m = rt::measure(sites, procs, {});
    EXPECT_TRUE(m.run.gpu_ok) << c.dir;
    EXPECT_EQ(m.run.steps_counted, 12) << c.dir;
    EXPECT_EQ(m.findings[1].verdict, "confirmed") << c.dir;
    ASSERT_TRUE(m.run.estimated_step_ms) << c.dir;
    EXPECT_NEAR(*m.run.estimated_step_ms / c.twin_ms, 1.0, 0.10) << c.dir << ": " << *m.run.estimated_step_ms;
    ASSERT_TRUE(m.findings[1].gpu_idle_ms) << c.dir;
    EXPECT_LT(*m.findings[1].gpu_idle_ms, m.findings[1].total_ms) << c.dir;
  }
}

// The third GPU truth mix, recorded on an NVIDIA H100 (tests/runtime/records/README.md): a
// `loss.item()` that waits for the step's kernels, then `gc.collect()`. Both sites are confirmed;
// the `.item()` wait is GPU time the host waits for, not GPU idle, so the estimate subtracts only
// what the GPU sat idle in, and lands on the fixed twin (which reads the loss once, at the end).
TEST(RuntimeMerge, RealGpuRecordsOfASyncThenACollection) {
  std::vector<rt::PlanSite> sites = {site(0, "TL502", "none", 31, 9, ".backward"), site(1, "TL105", "site", 33, 18, ".item"),
                                     site(2, "TL101", "site", 34, 9, "gc.collect")};
  std::string dir = std::string(TRAINLINT_SOURCE_DIR) + "/tests/runtime/records/h100_item_and_gc";
  std::vector<std::string> warnings;
  auto procs = rt::read_records(dir, &warnings);
  EXPECT_TRUE(warnings.empty()) << (warnings.empty() ? "" : warnings[0]);
  auto m = rt::measure(sites, procs, {});
  EXPECT_TRUE(m.run.gpu_ok);
  EXPECT_EQ(m.run.steps_counted, 12);
  EXPECT_EQ(m.findings[1].verdict, "confirmed");
  EXPECT_EQ(m.findings[2].verdict, "confirmed");
  ASSERT_TRUE(m.run.estimated_step_ms);
  EXPECT_NEAR(*m.run.estimated_step_ms / 9.39, 1.0, 0.10) << *m.run.estimated_step_ms;
  // the collection ran with nothing queued: nearly all of it was GPU idle
  ASSERT_TRUE(m.findings[2].gpu_idle_ms);
  EXPECT_GT(*m.findings[2].gpu_idle_ms, 0.9 * m.findings[2].total_ms);
}

// Defect 10: whose figures the header shows when several processes train without ranks (hogwild).
TEST(RuntimeReport, HogwildHeaderSaysWhoseFigures) {
  std::vector<rt::PlanSite> sites = {site(0, "TL101", "site", 10)};
  Rec parent, a, b;
  parent.proc(950, 1, "main").end("exit", 0);
  a.proc(951, 950, "rank").wait(0, 1).step(1, 10).step(2, 20).step(3, 30).end("exit", 3);
  b.proc(952, 950, "rank").wait(0, 1).step(1, 12).step(2, 24).end("exit", 2);
  TempDir d;
  auto res = rt::measure(sites, read_dir(d, {{"rec-950.jsonl", parent.text}, {"rec-951.jsonl", a.text}, {"rec-952.jsonl", b.text}}), {});
  auto lint = lint_for(sites);
  rt::RunContext ctx;
  ctx.lint = &lint;
  ctx.sites = &sites;
  ctx.m = &res;
  ctx.anchor.path = "train.py";
  std::ostringstream out;
  rt::write_run_text(out, ctx);
  EXPECT_NE(out.str().find("figures of process 951, one of 2 training processes"), std::string::npos) << out.str();
}

// Defect 10: a forked checkpoint writer is a helper, not a DataLoader worker.
TEST(RuntimeEndToEnd, AForkedCheckpointWriterIsAHelper) {
  if (!bootstrap_built_in()) GTEST_SKIP() << "the bootstrap (shim/python) was not in the tree at build time";
  TempDir d;
  write_file(d.path / "train_async_ckpt.py",
             "import multiprocessing as mp\n"
             "import os\n"
             "\n"
             "import torch\n"
             "import torch.nn as nn\n"
             "\n"
             "\n"
             "def write_checkpoint(state, path):\n"
             "    torch.save(state, path)\n"
             "\n"
             "\n"
             "def main(steps=3):\n"
             "    model = nn.Linear(8, 1)\n"
             "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
             "    writers = []\n"
             "    for step in range(steps):\n"
             "        loss = model(torch.randn(4, 8)).pow(2).mean()\n"
             "        opt.zero_grad()\n"
             "        loss.backward()\n"
             "        opt.step()\n"
             "        w = mp.get_context('fork').Process(target=write_checkpoint,\n"
             "                                           args=(model.state_dict(), 'ckpt-%d.pt' % step))\n"
             "        w.start()\n"
             "        writers.append(w)\n"
             "    for w in writers:\n"
             "        w.join()\n"
             "\n"
             "\n"
             "if __name__ == '__main__':\n"
             "    main()\n");
  Proc r = run_tl("run --format json --output r.json -- /usr/bin/python3 train_async_ckpt.py", d.path.string());
  ASSERT_EQ(r.rc, 0) << r.err;
  json doc = json::parse(read_file(d.path / "r.json"));
  int helpers = 0;
  for (auto& p : doc["run"]["processes"]) {
    EXPECT_NE(p["role"], "worker") << p.dump();
    helpers += p["role"] == "helper";
  }
  EXPECT_GE(helpers, 3) << doc["run"]["processes"].dump();  // the three writers (and any resource tracker)
  EXPECT_EQ(doc["run"]["steps"], 3);
}
