// The shim library (libtrainlint_shim.so, loaded here with dlopen as the bootstrap does with ctypes)
// and the Python bootstrap (shim/python/trainlint_boot), run for real with Debian's /usr/bin/python3
// and its python3-torch. See docs/runtime-protocol.md.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <time.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace fs = std::filesystem;
using nlohmann::json;
using tl::test::read_file;
using tl::test::source_dir;
using tl::test::TempDir;
using tl::test::write_file;

namespace {

const char* kPython = "/usr/bin/python3";  // Debian's, with python3-torch (not the pyenv one on PATH)

fs::path shim_path() { return fs::path(tl::test::binary()).parent_path() / "libtrainlint_shim.so"; }
fs::path boot_dir() { return fs::path(source_dir()) / "shim" / "python" / "trainlint_boot"; }

int64_t mono_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

// The C ABI, resolved from the built library. RTLD_NODELETE: the shim may have handed CUPTI
// callbacks into its own code, so it must stay mapped for the life of the test process.
struct ShimLib {
  void* h = nullptr;
  int (*start)(const char*) = nullptr;
  const char* (*status)() = nullptr;
  int (*flush)() = nullptr;
  void (*stop)() = nullptr;
  long long (*now_ns)() = nullptr;
  std::string error;

  ShimLib() {
    h = dlopen(shim_path().c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!h) {
      const char* e = dlerror();
      error = e ? e : "dlopen failed";
      return;
    }
    start = reinterpret_cast<int (*)(const char*)>(dlsym(h, "tl_shim_start"));
    status = reinterpret_cast<const char* (*)()>(dlsym(h, "tl_shim_status"));
    flush = reinterpret_cast<int (*)()>(dlsym(h, "tl_shim_flush"));
    stop = reinterpret_cast<void (*)()>(dlsym(h, "tl_shim_stop"));
    now_ns = reinterpret_cast<long long (*)()>(dlsym(h, "tl_shim_now_ns"));
  }
  ~ShimLib() {
    if (h) dlclose(h);
  }
  bool ok() const { return h && start && status && flush && stop && now_ns; }
};

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

struct RunResult {
  int rc = -1;
  std::string out, err;
};

// Runs /usr/bin/python3 with `args` in `cwd`; `env` is set and every other TRAINLINT_*/PYTHONPATH
// variable of the test's own environment is removed, so the baseline run has no bootstrap.
RunResult run_python(const fs::path& cwd, const std::string& args, const std::map<std::string, std::string>& env) {
  TempDir t;
  const std::string outp = (t.path / "out").string(), errp = (t.path / "err").string();
  std::string cmd = "cd " + shell_quote(cwd.string()) + " && env -u PYTHONPATH -u TRAINLINT_PLAN -u TRAINLINT_RECORDS "
                    "-u TRAINLINT_SHIM -u TRAINLINT_MAX_STEPS -u TRAINLINT_CUPTI -u PYTHONSTARTUP -u PYTHONHOME";
  for (auto& [k, v] : env) cmd += " " + k + "=" + shell_quote(v);
  cmd += std::string(" ") + kPython + " " + args + " >" + shell_quote(outp) + " 2>" + shell_quote(errp) + " </dev/null";
  int status = std::system(cmd.c_str());
  RunResult r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(outp);
  r.err = read_file(errp);
  return r;
}

bool python_has(const std::string& modules) {
  std::string cmd = std::string(kPython) + " -c 'import " + modules + "' >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

// Every records file of a folder: file name -> its JSON lines (a line that does not parse fails).
std::map<std::string, std::vector<json>> read_records(const fs::path& dir) {
  std::map<std::string, std::vector<json>> out;
  if (!fs::exists(dir)) return out;
  for (auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    auto& lines = out[name];
    std::string text = read_file(e.path());
    size_t pos = 0;
    while (pos < text.size()) {
      size_t nl = text.find('\n', pos);
      EXPECT_NE(nl, std::string::npos) << name << ": last line not terminated";
      if (nl == std::string::npos) nl = text.size();
      std::string line = text.substr(pos, nl - pos);
      pos = nl + 1;
      try {
        lines.push_back(json::parse(line));
      } catch (const std::exception& ex) {
        ADD_FAILURE() << name << ": not JSON: " << line << " (" << ex.what() << ")";
      }
    }
  }
  return out;
}

std::vector<json> of_type(const std::vector<json>& lines, const std::string& t) {
  std::vector<json> out;
  for (auto& l : lines)
    if (l.value("t", "") == t) out.push_back(l);
  return out;
}

// 1-based line and column where `needle` first occurs in `text`.
std::pair<int, int> locate(const std::string& text, const std::string& needle) {
  size_t at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  int line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < at; ++i)
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  return {line, static_cast<int>(at - line_start) + 1};
}

json site(int id, const std::string& code, const fs::path& script, const std::string& text, const std::string& needle,
          const json& callee, const std::string& probe = "site") {
  auto [line, col] = locate(text, needle);
  return {{"id", id}, {"code", code}, {"path", script.string()}, {"line", line}, {"col", col},
          {"probe", probe}, {"callee", callee}};
}

}  // namespace

// ---- the library ------------------------------------------------------------------------------

TEST(ShimAbi, StartsWithoutAGpuAndSaysWhy) {
  ShimLib shim;
  ASSERT_TRUE(shim.ok()) << "cannot load " << shim_path() << ": " << shim.error
                         << " (build the trainlint_shim target)";
  TempDir t;
  const fs::path records = t.path / "rec-1.jsonl";
  EXPECT_EQ(shim.start(records.c_str()), 0);
  const std::string status = shim.status();
  EXPECT_TRUE(std::regex_match(status, std::regex("ok|(no-driver|no-gpu|busy|unavailable): .+"))) << status;
  bool gpu_node = false;
  for (auto& e : fs::directory_iterator("/dev")) {
    const std::string n = e.path().filename().string();
    if (n.size() > 6 && n.rfind("nvidia", 0) == 0 && std::isdigit(static_cast<unsigned char>(n[6]))) gpu_node = true;
  }
  if (!gpu_node) {
    // This CPU-only machine: no driver (or no CUPTI at all), with the reason spelled out.
    EXPECT_TRUE(status.rfind("no-driver: ", 0) == 0 || status.rfind("unavailable: ", 0) == 0 ||
                status.rfind("no-gpu: ", 0) == 0)
        << status;
    EXPECT_GT(status.size(), std::string("unavailable: ").size() + 10) << status;
  }
  // Idempotent start, flush and stop; flush after stop is a no-op.
  EXPECT_EQ(shim.start(records.c_str()), 0);
  EXPECT_EQ(shim.flush(), 0);
  EXPECT_EQ(shim.flush(), 0);
  shim.stop();
  shim.stop();
  EXPECT_EQ(shim.flush(), 0);
  EXPECT_EQ(std::string(shim.status()), status);
  // Whatever the shim wrote is whole JSON lines.
  for (auto& [name, lines] : read_records(t.path))
    for (auto& l : lines) EXPECT_TRUE(l.contains("t")) << l.dump();
}

TEST(ShimAbi, NowIsClockMonotonic) {
  ShimLib shim;
  ASSERT_TRUE(shim.ok()) << shim.error;
  long long prev = shim.now_ns();
  for (int i = 0; i < 10000; ++i) {
    int64_t before = mono_ns();
    long long now = shim.now_ns();
    int64_t after = mono_ns();
    ASSERT_GE(now, before);
    ASSERT_LE(now, after);
    ASSERT_GE(now, prev);
    prev = now;
  }
}

// ---- the bootstrap ----------------------------------------------------------------------------

namespace {

// A small CPU training loop: PNGs decoded with PIL in __getitem__ (two DataLoader workers), a
// per-step gc.collect() and torch.save(), an optimizer. It stops by itself after three steps and
// prints each step's loss before the optimizer step, so a run cut by TRAINLINT_MAX_STEPS=3 prints
// exactly what a run without the bootstrap prints.
const char* kTrainScript = R"PY(import gc
import os
import sys

import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset


class Pngs(Dataset):
    def __init__(self, root, n):
        self.files = []
        for i in range(n):
            path = os.path.join(root, "img%02d.png" % i)
            Image.new("RGB", (8, 8), (i * 7 % 256, i * 13 % 256, i * 29 % 256)).save(path)
            self.files.append(path)

    def __len__(self):
        return len(self.files)

    def __getitem__(self, index):
        img = Image.open(self.files[index])
        x = torch.tensor(list(img.convert("RGB").getdata()), dtype=torch.float32).flatten() / 255.0
        return x, index % 2


def main():
    torch.manual_seed(0)
    root = sys.argv[1]
    loader = DataLoader(Pngs(root, 16), batch_size=4, num_workers=2)
    model = torch.nn.Linear(8 * 8 * 3, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step, (x, y) in enumerate(loader):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        print("step %d loss %.6f" % (step, loss.item()))
        opt.zero_grad()
        loss.backward()
        opt.step()
        gc.collect()
        torch.save(model.state_dict(), os.path.join(root, "ckpt.pt"))
        if step == 2:
            break


if __name__ == "__main__":
    main()
)PY";

struct BootRun {
  RunResult result;
  std::map<std::string, std::vector<json>> files;
};

}  // namespace

TEST(ShimBootstrap, TrainingLoopIsTransparentAndMeasured) {
  if (!python_has("torch, PIL")) GTEST_SKIP() << kPython << " has no torch/PIL (Debian python3-torch, python3-pil)";
  ASSERT_TRUE(fs::exists(shim_path())) << shim_path() << " (build the trainlint_shim target)";
  TempDir t;
  const fs::path script = t.path / "train.py";
  const std::string text = kTrainScript;
  write_file(script, text);
  json plan = {{"version", 1},
               {"max_steps", 0},
               {"sites",
                {site(0, "TL101", script, text, "gc.collect()", "gc.collect"),
                 site(1, "TL103", script, text, "torch.save(", "torch.save"),
                 site(2, "TL204", script, text, "Image.open(", "PIL.Image.open"),
                 site(3, "TL105", script, text, "loss.item()", ".item"),
                 site(4, "TL106", script, text, "print(\"step", "builtins.print"),
                 // Loader probes: the DataLoader built there names its waits and its iter().
                 site(5, "TL201", script, text, "DataLoader(Pngs", "torch.utils.data.DataLoader", "data-wait"),
                 site(6, "TL203", script, text, "DataLoader(Pngs", "torch.utils.data.DataLoader", "worker-start"),
                 // A call the static pass could not name (TL304's model(x)): a Module call.
                 site(7, "TL304", script, text, "model(x)", nullptr),
                 // No probe: nothing is wrapped for it.
                 site(8, "TL503", script, text, "opt.zero_grad()", ".zero_grad", "none")}}};
  write_file(t.path / "plan.json", plan.dump());

  auto boot_run = [&](const std::string& name, const std::string& max_steps) {
    const fs::path records = t.path / ("records-" + name), data = t.path / ("data-" + name);
    fs::create_directories(records);
    fs::create_directories(data);
    BootRun b;
    b.result = run_python(t.path, "train.py " + shell_quote(data.string()),
                          {{"PYTHONPATH", boot_dir().string()},
                           {"TRAINLINT_PLAN", (t.path / "plan.json").string()},
                           {"TRAINLINT_RECORDS", records.string()},
                           {"TRAINLINT_SHIM", shim_path().string()},
                           {"TRAINLINT_MAX_STEPS", max_steps}});
    b.files = read_records(records);
    return b;
  };

  const fs::path plain_data = t.path / "data-plain";
  fs::create_directories(plain_data);
  RunResult plain = run_python(t.path, "train.py " + shell_quote(plain_data.string()), {});
  ASSERT_EQ(plain.rc, 0) << plain.err;
  ASSERT_TRUE(std::regex_search(plain.out, std::regex("^step 0 loss [0-9.]+\nstep 1 loss [0-9.]+\nstep 2 loss [0-9.]+\n$")))
      << plain.out;

  BootRun cut = boot_run("max", "3");
  // Transparent: same stdout (the same seeded loss values), same stderr, exit code 0.
  EXPECT_EQ(cut.result.rc, 0) << cut.result.err;
  EXPECT_EQ(cut.result.out, plain.out);
  EXPECT_EQ(cut.result.err, plain.err);

  // One main file, two worker files.
  std::vector<std::vector<json>*> mains, workers;
  for (auto& [name, lines] : cut.files) {
    ASSERT_FALSE(lines.empty()) << name;
    ASSERT_EQ(lines.front().value("t", ""), "proc") << name << ": the first line is not `proc`";
    const std::string role = lines.front().value("role", "");
    EXPECT_EQ(name, "rec-" + std::to_string(lines.front().value("pid", 0)) + ".jsonl");
    if (role == "main") mains.push_back(&lines);
    if (role == "worker") workers.push_back(&lines);
  }
  ASSERT_EQ(mains.size(), 1u) << "records files: " << cut.files.size();
  EXPECT_EQ(workers.size(), 2u);
  const auto& main_lines = *mains.front();

  auto sites_of = [](const std::vector<json>& lines, int id) {
    std::vector<json> out;
    for (auto& l : of_type(lines, "site"))
      if (l.value("id", -1) == id) out.push_back(l);
    return out;
  };
  // gc.collect and torch.save ran after steps 1 and 2 (step 3 ended the program at opt.step()).
  for (int id : {0, 1}) {
    auto s = sites_of(main_lines, id);
    EXPECT_EQ(s.size(), 2u) << "site " << id;
    for (auto& r : s) EXPECT_GT(r.value("end", 0LL), r.value("start", 0LL)) << r.dump();
  }
  // loss.item() and print(...) ran in all three steps: Tensor.item and builtins.print are wrapped.
  EXPECT_EQ(sites_of(main_lines, 3).size(), 3u);
  EXPECT_EQ(sites_of(main_lines, 4).size(), 3u);
  EXPECT_TRUE(sites_of(main_lines, 2).empty()) << "Image.open runs in the workers only";
  EXPECT_EQ(sites_of(main_lines, 7).size(), 3u) << "model(x) timed as a Module call";
  for (int id : {5, 6, 8}) EXPECT_TRUE(sites_of(main_lines, id).empty()) << "site " << id << " is not a timed probe";

  auto steps = of_type(main_lines, "step");
  ASSERT_EQ(steps.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(steps[i].value("n", 0), i + 1);
  auto ends = of_type(main_lines, "end");
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(ends[0].value("reason", ""), "max-steps");
  EXPECT_EQ(ends[0].value("steps", 0), 3);
  EXPECT_EQ(main_lines.back().value("t", ""), "end") << "`end` is the last line";

  auto waits = of_type(main_lines, "wait");
  EXPECT_GE(waits.size(), 3u);
  for (auto& w : waits) {
    EXPECT_GE(w.value("end", 0LL), w.value("start", 0LL));
    EXPECT_EQ(w.value("id", -1), 5) << "the wait names the DataLoader's plan site";
  }
  auto iters = of_type(main_lines, "iter");
  ASSERT_EQ(iters.size(), 1u);
  EXPECT_EQ(iters[0].value("id", -1), 5);
  EXPECT_GT(iters[0].value("end", 0LL), iters[0].value("start", 0LL));
  auto status = of_type(main_lines, "gpu_status");
  ASSERT_EQ(status.size(), 1u);
  EXPECT_TRUE(std::regex_match(status[0].value("state", ""), std::regex("ok|no-driver|no-gpu|busy|unavailable")));
  EXPECT_FALSE(status[0].value("reason", "").empty() && status[0].value("state", "") != "ok");

  // Records of a step come in time order and on one clock across processes.
  int64_t first_step_end = steps.front().value("end", 0LL), last_step_end = steps.back().value("end", 0LL);
  EXPECT_LT(first_step_end, last_step_end);

  // The workers decoded the PNGs: PIL.Image.open timed inside them, flushed before they ended.
  size_t decoded = 0;
  for (auto* w : workers) {
    for (auto& r : sites_of(*w, 2)) {
      EXPECT_GT(r.value("end", 0LL), r.value("start", 0LL));
      ++decoded;
    }
    EXPECT_TRUE(of_type(*w, "step").empty());
    EXPECT_TRUE(of_type(*w, "wait").empty());
    EXPECT_EQ(w->front().value("ppid", 0), main_lines.front().value("pid", -1));
  }
  EXPECT_GE(decoded, 12u) << "three batches of four samples at least";

  // Without a step limit the program ends by itself: `end` reason exit after its three steps.
  BootRun full = boot_run("full", "0");
  EXPECT_EQ(full.result.rc, 0) << full.result.err;
  EXPECT_EQ(full.result.out, plain.out);
  bool saw_exit = false;
  for (auto& [name, lines] : full.files) {
    if (lines.empty() || lines.front().value("role", "") != "main") continue;
    EXPECT_EQ(of_type(lines, "step").size(), 3u);
    EXPECT_EQ(sites_of(lines, 0).size(), 3u);
    ASSERT_FALSE(of_type(lines, "end").empty());
    EXPECT_EQ(of_type(lines, "end")[0].value("reason", ""), "exit");
    EXPECT_EQ(of_type(lines, "end")[0].value("steps", 0), 3);
    saw_exit = true;
  }
  EXPECT_TRUE(saw_exit);
}

TEST(ShimBootstrap, ChainsAnExistingSitecustomize) {
  TempDir t;
  write_file(t.path / "other" / "sitecustomize.py",
             "import os\nwith open(os.environ['MARKER'], 'a') as f:\n    f.write('ran\\n')\n");
  write_file(t.path / "prog.py",
             "import sys\nprint('sitecustomize is', sys.modules['sitecustomize'].__file__)\n"
             "print('path has other:', any(p.endswith('other') for p in sys.path))\n");
  const std::string other = (t.path / "other").string();
  RunResult plain = run_python(t.path, "prog.py", {{"PYTHONPATH", other}, {"MARKER", (t.path / "m0").string()}});
  fs::create_directories(t.path / "records");
  RunResult boot = run_python(t.path, "prog.py",
                              {{"PYTHONPATH", boot_dir().string() + ":" + other},
                               {"MARKER", (t.path / "m1").string()},
                               {"TRAINLINT_RECORDS", (t.path / "records").string()}});
  EXPECT_EQ(plain.rc, 0) << plain.err;
  EXPECT_EQ(boot.rc, 0) << boot.err;
  EXPECT_EQ(read_file(t.path / "m0"), "ran\n");
  EXPECT_EQ(read_file(t.path / "m1"), "ran\n") << "the program's own sitecustomize did not run (once)";
  EXPECT_EQ(boot.out, plain.out);
  EXPECT_EQ(boot.err, plain.err);
  // The bootstrap ran too: a records file with its `proc` line and, without a plan, a note.
  auto files = read_records(t.path / "records");
  ASSERT_EQ(files.size(), 1u);
  auto& lines = files.begin()->second;
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.front().value("t", ""), "proc");
  EXPECT_EQ(lines.back().value("t", ""), "end");
}

TEST(ShimBootstrap, EveryExitPathLeavesAnEndRecord) {
  TempDir t;
  const std::string prog =
      "import gc, os, signal, sys, time\n"
      "mode = sys.argv[1]\n"
      "gc.collect()\n"
      "print('start', mode, flush=True)\n"
      "if mode == 'raise':\n"
      "    raise ValueError('boom')\n"
      "if mode == 'os-exit':\n"
      "    os._exit(3)\n"
      "if mode == 'term':\n"
      "    os.kill(os.getpid(), signal.SIGTERM)\n"
      "    time.sleep(5)\n"
      "if mode == 'int':\n"
      "    os.kill(os.getpid(), signal.SIGINT)\n"
      "    time.sleep(5)\n"
      "print('done')\n";
  write_file(t.path / "prog.py", prog);
  json plan = {{"version", 1}, {"max_steps", 0},
               {"sites", {site(0, "TL101", t.path / "prog.py", prog, "gc.collect()", "gc.collect")}}};
  write_file(t.path / "plan.json", plan.dump());
  struct Case {
    std::string mode, reason, exception;
  };
  for (const Case& c : {Case{"exit", "exit", ""}, Case{"raise", "exit", "ValueError"}, Case{"os-exit", "os-exit", ""},
                        Case{"term", "signal", ""}, Case{"int", "signal", "KeyboardInterrupt"}}) {
    SCOPED_TRACE(c.mode);
    const fs::path records = t.path / ("records-" + c.mode);
    fs::create_directories(records);
    RunResult plain = run_python(t.path, "prog.py " + c.mode, {});
    // A shim that cannot be loaded: GPU fields unavailable, host measurements go on.
    RunResult boot = run_python(t.path, "prog.py " + c.mode,
                                {{"PYTHONPATH", boot_dir().string()},
                                 {"TRAINLINT_PLAN", (t.path / "plan.json").string()},
                                 {"TRAINLINT_RECORDS", records.string()},
                                 {"TRAINLINT_SHIM", (t.path / "missing" / "libtrainlint_shim.so").string()}});
    EXPECT_EQ(boot.rc, plain.rc);
    EXPECT_EQ(boot.out, plain.out);
    EXPECT_EQ(boot.err, plain.err) << "a traceback through the bootstrap must look the same";
    auto files = read_records(records);
    ASSERT_EQ(files.size(), 1u);
    auto& lines = files.begin()->second;
    ASSERT_GE(lines.size(), 3u);
    EXPECT_EQ(lines.front().value("t", ""), "proc");
    auto status = of_type(lines, "gpu_status");
    ASSERT_EQ(status.size(), 1u);
    EXPECT_EQ(status[0].value("state", ""), "unavailable");
    EXPECT_NE(status[0].value("reason", "").find("missing"), std::string::npos) << status[0].dump();
    EXPECT_EQ(of_type(lines, "site").size(), 1u);
    EXPECT_TRUE(of_type(lines, "step").empty());
    const json& end = lines.back();
    EXPECT_EQ(end.value("t", ""), "end");
    EXPECT_EQ(end.value("reason", ""), c.reason);
    EXPECT_EQ(end.value("exception", ""), c.exception);
  }
}

// The CUPTI path without a GPU: the shim loads a stand-in libcupti (shim/test/fake_cupti.cpp,
// built next to the shim) through TRAINLINT_CUPTI, as the bootstrap starts it in a real program.
TEST(ShimCupti, ActivityRecordsReachTheRecordsOnTheHostClock) {
  const fs::path fake = shim_path().parent_path() / "libtrainlint_fake_cupti.so";
  if (!fs::exists(fake)) GTEST_SKIP() << fake << " not built (no CUPTI headers: host-only shim)";
  ASSERT_TRUE(fs::exists(shim_path())) << shim_path();
  TempDir t;
  write_file(t.path / "prog.py", "import gc\ngc.collect()\nprint('ok')\n");
  for (const std::string mode : {"ok", "offset", "busy", "unknown"}) {
    SCOPED_TRACE(mode);
    const fs::path records = t.path / ("records-" + mode);
    fs::create_directories(records);
    const int64_t before = mono_ns();
    RunResult r = run_python(t.path, "prog.py",
                             {{"PYTHONPATH", boot_dir().string()},
                              {"TRAINLINT_RECORDS", records.string()},
                              {"TRAINLINT_SHIM", shim_path().string()},
                              {"TRAINLINT_CUPTI", fake.string()},
                              {"FAKE_CUPTI_MODE", mode}});
    const int64_t after = mono_ns();
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, "ok\n");
    EXPECT_EQ(r.err, "");
    auto files = read_records(records);
    ASSERT_EQ(files.size(), 1u);
    auto& lines = files.begin()->second;
    ASSERT_FALSE(lines.empty());
    EXPECT_EQ(lines.front().value("t", ""), "proc");
    EXPECT_EQ(lines.back().value("t", ""), "end");
    auto status = of_type(lines, "gpu_status");
    ASSERT_FALSE(status.empty());
    const std::string last_state = status.back().value("state", "");
    auto gpu = of_type(lines, "gpu");
    if (mode == "busy" || mode == "unknown") {
      EXPECT_EQ(status.size(), 1u);
      EXPECT_EQ(last_state, mode == "busy" ? "busy" : "no-driver");
      EXPECT_NE(status.back().value("reason", "").find(mode == "busy" ? "MULTIPLE_SUBSCRIBERS" : "CUPTI_ERROR_UNKNOWN"),
                std::string::npos)
          << status.back().dump();
      EXPECT_TRUE(gpu.empty());
      continue;
    }
    // Records came, so the last status is ok whatever the start-up checks said.
    EXPECT_EQ(last_state, "ok") << status.back().dump();
    std::map<std::string, int> kinds;
    std::set<int64_t> kernel_streams;
    std::set<std::string> src_kinds;
    for (auto& g : gpu) {
      const std::string kind = g.value("kind", "");
      ++kinds[kind];
      const int64_t s = g.value("start", 0LL), e = g.value("end", 0LL);
      // CLOCK_MONOTONIC, inside the run: in "offset" mode CUPTI's clock was CLOCK_REALTIME.
      EXPECT_GE(s, before) << g.dump();
      EXPECT_LE(e, after) << g.dump();
      EXPECT_GT(e, s) << g.dump();
      if (kind == "kernel") {
        kernel_streams.insert(g.value("stream", -1LL));
        EXPECT_EQ(g.value("device", -1), 0);
        EXPECT_EQ(g.value("name", ""), "void fake_kernel<float>(float*, int)");
      }
      if (kind == "memcpy") {
        EXPECT_EQ(g.value("copy", ""), "HtoD");
        EXPECT_EQ(g.value("bytes", 0), 4096);
        src_kinds.insert(g.value("src_kind", ""));
      }
      if (kind == "memset") EXPECT_EQ(g.value("bytes", 0), 512);
      if (kind == "sync") {
        EXPECT_EQ(g.value("sync", ""), "stream");
        EXPECT_EQ(g.value("device", -1), 0) << "the sync's device is learned from its context";
      }
    }
    // One buffer per CUPTI flush (at exit: tl_shim_stop): two kernels, two copies, a memset, a sync.
    EXPECT_GE(kinds["kernel"], 2);
    EXPECT_EQ(kinds["kernel"] % 2, 0);
    EXPECT_GE(kinds["memcpy"], 2);
    EXPECT_GE(kinds["memset"], 1);
    EXPECT_GE(kinds["sync"], 1);
    EXPECT_EQ(kernel_streams, (std::set<int64_t>{7, 13}));
    EXPECT_EQ(src_kinds, (std::set<std::string>{"pageable", "pinned"}));
    bool incomplete_note = false;
    for (auto& n : of_type(lines, "note"))
      incomplete_note |= n.value("text", "").find("incomplete") != std::string::npos;
    EXPECT_TRUE(incomplete_note) << "the record with no end time is skipped and said so";
  }
}

// Past the detail budget (TRAINLINT_GPU_DETAIL) kernels and memsets are written as merged busy
// intervals per device; copies stay one line each; syncs are counted, not written.
TEST(ShimCupti, PastTheDetailBudgetKernelsAreMergedBusyIntervals) {
  const fs::path fake = shim_path().parent_path() / "libtrainlint_fake_cupti.so";
  if (!fs::exists(fake)) GTEST_SKIP() << fake << " not built (no CUPTI headers: host-only shim)";
  TempDir t;
  write_file(t.path / "prog.py", "import gc\ngc.collect()\nprint('ok')\n");
  const fs::path records = t.path / "records";
  fs::create_directories(records);
  RunResult r = run_python(t.path, "prog.py",
                           {{"PYTHONPATH", boot_dir().string()},
                            {"TRAINLINT_RECORDS", records.string()},
                            {"TRAINLINT_SHIM", shim_path().string()},
                            {"TRAINLINT_CUPTI", fake.string()},
                            {"TRAINLINT_GPU_DETAIL", "0"},
                            {"FAKE_CUPTI_MODE", "ok"}});
  EXPECT_EQ(r.rc, 0) << r.err;
  auto files = read_records(records);
  ASSERT_EQ(files.size(), 1u);
  auto& lines = files.begin()->second;
  std::map<std::string, int> kinds;
  for (auto& g : of_type(lines, "gpu")) ++kinds[g.value("kind", "")];
  EXPECT_EQ(kinds["kernel"], 0);
  EXPECT_EQ(kinds["memset"], 0);
  EXPECT_EQ(kinds["sync"], 0);
  EXPECT_GE(kinds["memcpy"], 2);  // pageable and pinned, one line each
  auto busy = of_type(lines, "gpu_busy");
  ASSERT_FALSE(busy.empty());
  int64_t kernels = 0, memsets = 0;
  for (auto& b : busy) {
    kernels += b.value("kernels", 0LL);
    memsets += b.value("memsets", 0LL);
    ASSERT_TRUE(b["iv"].is_array());
    ASSERT_EQ(b["iv"].size() % 2, 0u);
    // offsets ascending, intervals disjoint (merged where they overlapped: the fake's two kernels
    // on streams 7 and 13 overlap), durations positive
    int64_t prev_end = -1;
    for (size_t i = 0; i < b["iv"].size(); i += 2) {
      int64_t o = b["iv"][i].get<int64_t>(), d = b["iv"][i + 1].get<int64_t>();
      EXPECT_GT(o, prev_end);
      EXPECT_GT(d, 0);
      prev_end = o + d;
    }
  }
  EXPECT_GE(kernels, 2);
  EXPECT_EQ(kernels % 2, 0);
  EXPECT_GE(memsets, 1);
  // per flush: the two overlapping kernels make one interval, the memset another
  EXPECT_EQ(busy.front()["iv"].size(), 4u) << busy.front().dump();
  bool said = false;
  for (auto& n : of_type(lines, "note")) said |= n.value("text", "").find("merged busy intervals") != std::string::npos;
  EXPECT_TRUE(said);
}

// Automatic GC pauses are recorded (TL902); an explicit gc.collect() is its call site's time, not a
// pause. With the shim loaded they are timed in C (the shim's tl_shim_gc_event is the gc callback);
// host-only, by a Python callback. Both write the same `gc` records.
TEST(ShimBootstrap, AutomaticGcPausesAreRecordedExplicitCollectsAreNot) {
  TempDir t;
  const std::string prog =
      "import gc, time\n"
      "class Node:\n"
      "    def __init__(self):\n"
      "        self.me = self\n"
      "for i in range(300000):\n"
      "    Node()  # cyclic garbage: only a collection frees it\n"
      "t0 = time.monotonic_ns()\n"
      "gc.collect()\n"
      "t1 = time.monotonic_ns()\n"
      "open('explicit.txt', 'w').write('%d %d' % (t0, t1))\n";
  write_file(t.path / "prog.py", prog);
  for (const bool with_shim : {true, false}) {
    SCOPED_TRACE(with_shim ? "shim" : "host-only");
    if (with_shim && !fs::exists(shim_path())) continue;
    const fs::path records = t.path / (with_shim ? "records-shim" : "records-host");
    fs::create_directories(records);
    std::map<std::string, std::string> env = {{"PYTHONPATH", boot_dir().string()},
                                              {"TRAINLINT_RECORDS", records.string()}};
    if (with_shim) env["TRAINLINT_SHIM"] = shim_path().string();
    RunResult r = run_python(t.path, "prog.py", env);
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.err, "");
    auto files = read_records(records);
    ASSERT_EQ(files.size(), 1u);
    auto gcs = of_type(files.begin()->second, "gc");
    EXPECT_GE(gcs.size(), 10u) << "300,000 cyclic objects trigger many automatic collections";
    std::istringstream ex(read_file(t.path / "explicit.txt"));
    int64_t e0 = 0, e1 = 0;
    ex >> e0 >> e1;
    for (auto& g : gcs) {
      const int64_t s = g.value("start", 0LL), e = g.value("end", 0LL);
      EXPECT_GE(e, s) << g.dump();
      EXPECT_FALSE(s >= e0 && e <= e1) << "the explicit gc.collect() was recorded as a pause: " << g.dump();
    }
  }
}
