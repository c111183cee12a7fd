#include "analyzer/runtime/run.h"

#include <signal.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "analyzer/runtime/boot_files.h"
#include "analyzer/runtime/html_report.h"
#include "analyzer/runtime/launcher.h"
#include "analyzer/runtime/measure.h"
#include "analyzer/runtime/plan.h"
#include "analyzer/runtime/records.h"
#include "analyzer/runtime/run_report.h"
#include "rules/registry.h"

namespace fs = std::filesystem;

namespace tl::runtime {
namespace {

// Is the last line of a records file its `end` record? (Reads the last 4 KiB only.)
bool ends_with_end_record(const fs::path& f) {
  std::ifstream in(f, std::ios::binary);
  if (!in) return false;
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  std::streamoff from = size > 4096 ? size - 4096 : 0;
  in.seekg(from);
  std::string tail(static_cast<size_t>(size - from), '\0');
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r')) tail.pop_back();
  size_t nl = tail.rfind('\n');
  std::string last = nl == std::string::npos ? tail : tail.substr(nl + 1);
  return last.find("\"t\":\"end\"") != std::string::npos;
}

// Waits, at most `limit`, until every process with a records file has ended or written its `end`.
void wait_for_recorded_processes(const fs::path& dir, std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    bool busy = false;
    std::error_code ec;
    for (auto& f : record_files(dir.string(), ec)) {
      if (f.pid <= 0) continue;
      bool alive = ::kill(static_cast<pid_t>(f.pid), 0) == 0 || errno == EPERM;
      if (alive && !ends_with_end_record(f.path)) {
        busy = true;
        break;
      }
    }
    if (!busy || std::chrono::steady_clock::now() >= deadline) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}


int g_term_signal = 0;

bool write_text_file(const fs::path& p, std::string_view text, std::string* err) {
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  std::ofstream out(p, std::ios::binary);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) {
    if (err) *err = "cannot write " + p.string();
    return false;
  }
  return true;
}

// Writes the embedded bootstrap into `dir`; true when a sitecustomize.py is there.
bool write_bootstrap(const fs::path& dir, std::string* err) {
  bool have_site = false;
  const BootFile* nested_site = nullptr;
  for (auto& f : boot_files()) {
    if (!write_text_file(dir / std::string(f.path), f.text, err)) return false;
    if (f.path == "sitecustomize.py") have_site = true;
    if (fs::path(std::string(f.path)).filename() == "sitecustomize.py") nested_site = &f;
  }
  // The bootstrap may keep its sitecustomize.py inside the package folder: Python only reads it
  // from a folder on sys.path.
  if (!have_site && nested_site) {
    if (!write_text_file(dir / "sitecustomize.py", nested_site->text, err)) return false;
    have_site = true;
  }
  return have_site;
}

}  // namespace

int run_terminating_signal() { return g_term_signal; }

int run_command(const RunOptions& opts) {
  g_term_signal = 0;
  ScriptChoice sc = find_script(opts.command);
  if (!sc.error.empty()) {
    std::cerr << "trainlint: error: " << sc.error << "\n";
    return 2;
  }
  {
    std::error_code ec;
    if (!fs::is_regular_file(sc.script, ec)) {
      std::cerr << "trainlint: error: cannot read the script `" << sc.script << "`: "
                << (fs::exists(sc.script, ec) ? "not a regular file" : "no such file") << "\n";
      return 2;
    }
  }
  if (opts.format != "text" && opts.format != "json") {
    std::cerr << "trainlint: error: --format must be text or json\n";
    return 2;
  }

  Plan plan;
  try {
    plan = build_plan(sc.script, opts.lint);
  } catch (const std::exception& e) {
    std::cerr << "trainlint: internal error while linting " << sc.script << ": " << e.what() << "\n";
    return 2;
  }
  if (!plan.lint.config_errors.empty()) {
    for (auto& e : plan.lint.config_errors) {
      std::stringstream lines(e);
      for (std::string line; std::getline(lines, line);) std::cerr << "trainlint: error: " << line << "\n";
    }
    return 2;
  }

  std::string err;
  // paths are bytes and may not be UTF-8: replace what JSON cannot hold instead of aborting
  constexpr auto kReplace = nlohmann::json::error_handler_t::replace;
  const std::string plan_text =
      plan_json(plan.sites, opts.max_steps, plan.step_marker, plan.step_loop_path, plan.step_loop_line)
          .dump(1, ' ', false, kReplace) +
      "\n";
  std::optional<TempDir> tmp;
  fs::path records;
  std::string shim, shim_note;
  bool bootstrap = true;
  LaunchResult lr;
  std::error_code ec;
  if (!opts.from_records.empty()) {
    // ---- report again from a kept run: nothing is launched -------------------------------
    fs::path kept(opts.from_records);
    auto read_all = [](const fs::path& p, std::string* text) {
      std::ifstream in(p, std::ios::binary);
      if (!in) return false;
      std::ostringstream ss;
      ss << in.rdbuf();
      *text = ss.str();
      return true;
    };
    std::string kept_plan, status_text;
    if (!fs::is_directory(kept / "records", ec) || !read_all(kept / "plan.json", &kept_plan) ||
        !read_all(kept / "status.json", &status_text)) {
      std::cerr << "trainlint: error: " << kept.string()
                << " is not a folder written by `trainlint run --keep-records` (it needs records/, plan.json and "
                   "status.json)\n";
      return 2;
    }
    if (kept_plan != plan_text) {
      std::cerr << "trainlint: error: the records in " << kept.string()
                << " were made with another plan: the script, the files it imports, the configuration, the rule "
                   "selection or --max-steps changed since; run the program again\n";
      return 2;
    }
    auto status = nlohmann::json::parse(status_text, nullptr, false);
    if (!status.is_object()) {
      std::cerr << "trainlint: error: " << (kept / "status.json").string() << " is not valid JSON\n";
      return 2;
    }
    auto int_of = [&](const char* k) { return status.contains(k) && status[k].is_number_integer() ? status[k].get<int>() : 0; };
    auto str_of = [&](const char* k) {
      return status.contains(k) && status[k].is_string() ? status[k].get<std::string>() : std::string();
    };
    lr.started = true;
    lr.exit_code = int_of("exit_code");
    lr.term_signal = int_of("term_signal");
    shim = str_of("shim");
    shim_note = str_of("shim_note");
    bootstrap = !status.contains("bootstrap") || !status["bootstrap"].is_boolean() || status["bootstrap"].get<bool>();
    records = kept / "records";
  } else {
    auto created = TempDir::create(&err);
    if (!created) {
      std::cerr << "trainlint: error: " << err << "\n";
      return 2;
    }
    tmp.emplace(std::move(*created));
    fs::path root(tmp->path());
    fs::path boot = root / "boot", plan_path = root / "plan.json";
    records = root / "records";
    fs::create_directories(records, ec);
    // An installed trainlint uses its installed bootstrap folder; a build tree writes the
    // embedded copy into the run's folder.
    if (std::string installed = find_installed_bootstrap(); !installed.empty()) {
      boot = installed;
    } else {
      fs::create_directories(boot, ec);
      bootstrap = write_bootstrap(boot, &err);
      if (!err.empty()) {
        std::cerr << "trainlint: error: " << err << "\n";
        return 2;
      }
    }
    if (!write_text_file(plan_path, plan_text, &err)) {
      std::cerr << "trainlint: error: " << err << "\n";
      return 2;
    }
    shim = find_shim(&shim_note);

    std::map<std::string, std::optional<std::string>> env;
    if (bootstrap) env["PYTHONPATH"] = prepend_path(boot.string(), std::getenv("PYTHONPATH"));
    env["TRAINLINT_PLAN"] = plan_path.string();
    env["TRAINLINT_RECORDS"] = records.string();
    env["TRAINLINT_MAX_STEPS"] = std::to_string(opts.max_steps);
    if (shim.empty()) env["TRAINLINT_SHIM"] = std::nullopt;
    else env["TRAINLINT_SHIM"] = shim;

    // said now, not after a run of hours that --max-steps did not shorten
    if (std::string notice = max_steps_notice(plan, opts.max_steps); !notice.empty()) std::cerr << notice << std::flush;
    lr = launch(opts.command, child_environment(env));
    if (!lr.started) {
      std::cerr << "trainlint: error: " << lr.error << "\n";
      return 2;
    }

    // Processes of the program that outlive it (multiprocessing's resource tracker, a worker being
    // torn down) may still be writing their last records: give them a moment.
    wait_for_recorded_processes(records, std::chrono::milliseconds(2000));

    if (!opts.keep_records.empty()) {
      // kept before the merge, so that a merge that fails can be reproduced from them
      fs::path kept(opts.keep_records);
      fs::create_directories(kept, ec);
      fs::remove_all(kept / "records", ec);
      fs::copy(records, kept / "records", fs::copy_options::recursive, ec);
      nlohmann::json status = {{"exit_code", lr.exit_code}, {"term_signal", lr.term_signal}, {"shim", shim},
                               {"shim_note", shim_note}, {"bootstrap", bootstrap}, {"command", opts.command}};
      if (ec || !write_text_file(kept / "plan.json", plan_text, &err) ||
          !write_text_file(kept / "status.json", status.dump(1, ' ', false, kReplace) + "\n", &err))
        std::cerr << "trainlint: error: cannot keep the records in " << kept.string() << ": "
                  << (ec ? ec.message() : err) << "\n";
    }
  }

  // ---- merge and report (whatever happened to the program) -------------------------------
  std::vector<std::string> warnings;
  auto procs = read_records(records.string(), &warnings);
  MeasureOptions mo;
  double threshold_pct = opts.threshold_pct;
  if (const Config* cfg = plan.lint.root_config) {  // [tool.trainlint.run] of the script's project
    if (cfg->run.threshold && !opts.threshold_from_cli) threshold_pct = *cfg->run.threshold;
    if (cfg->run.data_stall) mo.data_stall_pct = *cfg->run.data_stall;
    if (cfg->run.gc_pauses) mo.gc_pauses_pct = *cfg->run.gc_pauses;
    if (cfg->run.gpu_idle) mo.gpu_idle_pct = *cfg->run.gpu_idle;
  }
  mo.threshold_pct = threshold_pct;
  mo.max_steps = opts.max_steps;
  mo.shim_present = !shim.empty();
  mo.shim_note = shim_note;
  mo.bootstrap_present = bootstrap;
  mo.exit_code = lr.exit_code;
  mo.term_signal = lr.term_signal;
  // the runtime-only rules follow the command line and the configuration of the script's project
  auto runtime_rule_on = [&](const char* code, const char* slug) {
    return plan.lint.root_config ? rule_enabled_for(opts.lint, *plan.lint.root_config, "", code, slug)
                                 : rule_enabled(opts.lint, code, slug);
  };
  mo.tl901 = runtime_rule_on("TL901", "data-stall");
  mo.tl902 = runtime_rule_on("TL902", "gc-pauses");
  mo.tl903 = runtime_rule_on("TL903", "gpu-idle");
  Measurement m = measure(plan.sites, procs, mo);
  for (auto& w : warnings) m.run.notes.push_back(w);
  if (plan.step_marker == "backward" && m.run.steps > 0)
    m.run.notes.push_back("the program steps no torch optimizer the analysis can see: a step is one backward() call");
  if (plan.step_marker == "loop" && m.run.steps > 0)
    m.run.notes.push_back("the program steps no optimizer and calls no backward() that the analysis can see: a step is one iteration of the training loop");
  if (!plan.script_found)
    m.run.notes.push_back("the script " + sc.script + " could not be analysed, so nothing was planned");
  for (auto& msg : plan.lint.messages)
    if (msg.kind == FileMessage::Kind::Error) m.run.notes.push_back(msg.path + ": " + msg.message);

  RunContext ctx;
  ctx.lint = &plan.lint;
  ctx.sites = &plan.sites;
  ctx.m = &m;
  ctx.anchor = plan.anchor;
  ctx.command = opts.command;
  ctx.threshold_pct = threshold_pct;
  std::string report;
  if (opts.format == "json") {
    report = run_json(ctx).dump(2, ' ', false, kReplace) + "\n";
  } else {
    std::ostringstream ss;
    write_run_text(ss, ctx);
    report = ss.str();
  }
  if (opts.output.empty()) {
    std::cerr << report << std::flush;
  } else if (!write_text_file(opts.output, report, &err)) {
    std::cerr << "trainlint: error: " << err << "; the report follows\n" << report << std::flush;
  }
  if (!opts.trace.empty()) {
    if (!write_text_file(opts.trace, trace_json(procs, plan.sites).dump(-1, ' ', false, kReplace) + "\n", &err))
      std::cerr << "trainlint: error: " << err << "\n";
  }
  if (!opts.html.empty() && !write_text_file(opts.html, run_html(ctx), &err))
    std::cerr << "trainlint: error: " << err << "\n";
  g_term_signal = opts.from_records.empty() ? lr.term_signal : 0;  // a re-report ends normally
  return lr.exit_code;
}

}  // namespace tl::runtime
