#include "analyzer/lsp/server.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "analyzer/core/config.h"
#include "analyzer/python/add_noqa.h"
#include "analyzer/report/locate.h"
#include "analyzer/report/report.h"
#include "rules/docs.h"
#include "rules/registry.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace tl::lsp {

namespace {

constexpr int kLogError = 1, kLogWarning = 2, kLogInfo = 3;
constexpr const char* kExplainCommand = "trainlint.explain";

std::string normal_abs(const std::string& p) {
  std::error_code ec;
  fs::path a = fs::absolute(p, ec);
  return (ec ? fs::path(p) : a).lexically_normal().string();
}

int64_t mtime_of(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return 0;
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

bool analysable(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".py" || ext == ".pyw" || ext == ".pyi";
}

DiagnosticSeverity to_lsp(Severity s) {
  switch (s) {
    case Severity::Error: return DiagnosticSeverity::Error;
    case Severity::Warning: return DiagnosticSeverity::Warning;
    default: return DiagnosticSeverity::Information;
  }
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> string_list(const json& v, const char* key, std::string* error) {
  std::vector<std::string> out;
  if (v.is_string()) {
    std::stringstream ss(v.get<std::string>());
    std::string part;
    while (std::getline(ss, part, ','))
      if (!part.empty()) out.push_back(part);
  } else if (v.is_array()) {
    for (auto& e : v)
      if (e.is_string()) out.push_back(e.get<std::string>());
      else if (error) *error += std::string(key) + ": expected a list of strings; ";
  } else if (error) {
    *error += std::string(key) + ": expected a list of strings; ";
  }
  return out;
}

// The sections of a rule doc a hover shows.
std::string hover_sections(std::string_view doc) {
  std::string out;
  bool keep = false;
  size_t pos = 0;
  while (pos < doc.size()) {
    size_t nl = doc.find('\n', pos);
    std::string_view line = doc.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? doc.size() : nl + 1;
    if (line.rfind("## ", 0) == 0) {
      std::string_view title = line.substr(3);
      keep = title == "What it does" || title == "Why is this bad?" || title == "Use instead";
      if (keep) out += "#### " + std::string(title) + "\n";
      continue;
    }
    if (line.rfind("# ", 0) == 0) continue;
    if (keep) {
      out += line;
      out += '\n';
    }
  }
  return out;
}

std::string fmt(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// "measured: 38% of step time, 120 ms/step (confirmed, run of 2024-05-01 14:03)"
std::string measured_text(const json& rt, const std::string& date) {
  std::string verdict = rt.value("verdict", "");
  std::string s = "measured: ";
  std::vector<std::string> parts;
  if (rt.contains("share") && rt["share"].is_number()) parts.push_back(fmt(rt["share"].get<double>() * 100.0, rt["share"].get<double>() < 0.1 ? 1 : 0) + "% of step time");
  if (rt.contains("ms_per_step") && rt["ms_per_step"].is_number())
    parts.push_back(fmt(rt["ms_per_step"].get<double>(), rt["ms_per_step"].get<double>() < 10 ? 2 : 0) + " ms/step");
  if (parts.empty() && rt.contains("calls") && rt["calls"].is_number()) parts.push_back(std::to_string(rt["calls"].get<long long>()) + " calls");
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "") + parts[i];
  if (parts.empty()) s += "no cost recorded";
  s += " (" + verdict + ", run of " + date + ")";
  return s;
}

}  // namespace

Settings parse_settings(const json& j, Settings s, std::string* error) {
  if (!j.is_object()) return s;
  auto str = [&](const char* key, std::string& out) {
    if (!j.contains(key) || j[key].is_null()) return;
    if (j[key].is_string()) out = j[key].get<std::string>();
    else if (error) *error += std::string(key) + ": expected a string; ";
  };
  if (j.contains("select")) s.select = string_list(j["select"], "select", error);
  if (j.contains("extendSelect")) s.extend_select = string_list(j["extendSelect"], "extendSelect", error);
  if (j.contains("ignore")) s.ignore = string_list(j["ignore"], "ignore", error);
  str("configFile", s.config_file);
  str("runReport", s.run_report);
  str("docsBaseUri", s.docs_base);
  if (j.contains("isolated")) {
    if (j["isolated"].is_boolean()) s.isolated = j["isolated"].get<bool>();
    else if (error) *error += "isolated: expected a boolean; ";
  }
  if (j.contains("debounceMs")) {
    if (j["debounceMs"].is_number()) s.debounce_ms = std::clamp(j["debounceMs"].get<int>(), 0, 10000);
    else if (error) *error += "debounceMs: expected a number; ";
  }
  if (j.contains("maxBufferBytes")) {
    if (j["maxBufferBytes"].is_number_unsigned()) s.max_buffer_bytes = j["maxBufferBytes"].get<size_t>();
    else if (error) *error += "maxBufferBytes: expected a number; ";
  }
  return s;
}

Server::Server(Transport& transport) : transport_(transport) {}

Server::~Server() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Server::log(int type, const std::string& message) {
  send(notification("window/logMessage", {{"type", type}, {"message", "trainlint: " + message}}));
}

int Server::run() {
  for (;;) {
    ReadResult r = transport_.read();
    switch (r.kind) {
      case ReadResult::Kind::Eof:
        // the client went away without `exit`
        return 1;
      case ReadResult::Kind::BadHeader:
        log(kLogError, "dropped a message: " + r.error);
        send(error_response(nullptr, InvalidRequest, r.error));
        continue;
      case ReadResult::Kind::ParseError:
        send(error_response(nullptr, ParseError, r.error));
        continue;
      case ReadResult::Kind::Message: break;
    }
    const json& msg = r.message;
    // (`method` may be anything a client sent: handle() answers a method that is not a string)
    if (msg.is_object() && !msg.contains("id") && msg.contains("method") && msg["method"] == "exit") return shutdown_ ? 0 : 1;
    try {
      handle(msg);
    } catch (const std::exception& e) {
      // a bug in a handler must not take the server down
      if (msg.is_object() && msg.contains("id") && msg.contains("method"))
        send(error_response(msg["id"], InternalError, e.what()));
      else
        log(kLogError, std::string("internal error: ") + e.what());
    }
  }
}

void Server::handle(const json& msg) {
  if (!msg.is_object()) {
    send(error_response(nullptr, InvalidRequest, "a JSON-RPC message must be an object"));
    return;
  }
  bool has_id = msg.contains("id");
  if (has_id && !msg["id"].is_string() && !msg["id"].is_number_integer() && !msg["id"].is_null()) {
    send(error_response(nullptr, InvalidRequest, "id must be a number or a string"));
    return;
  }
  if (!msg.contains("method")) {
    // a response to a request of ours (registerCapability, refresh, showDocument): nothing to do
    if (has_id && (msg.contains("result") || msg.contains("error"))) return;
    send(error_response(has_id ? msg["id"] : json(nullptr), InvalidRequest, "a message without a method"));
    return;
  }
  if (!msg["method"].is_string()) {
    if (has_id) send(error_response(msg["id"], InvalidRequest, "method must be a string"));
    return;
  }
  std::string method = msg["method"].get<std::string>();
  json params = msg.contains("params") ? msg["params"] : json::object();
  if (has_id) {
    json id = msg["id"];
    try {
      handle_request(id, method, params);
    } catch (const json::exception& e) {
      send(error_response(id, InvalidParams, std::string("invalid params for ") + method + ": " + e.what()));
    }
  } else {
    try {
      handle_notification(method, params);
    } catch (const json::exception& e) {
      log(kLogWarning, "ignored " + method + " with invalid params: " + e.what());
    }
  }
}

void Server::handle_request(const json& id, const std::string& method, const json& params) {
  if (method == "initialize") {
    if (initialized_) {
      send(error_response(id, InvalidRequest, "initialize was already received"));
      return;
    }
    send(response(id, initialize(params)));
    return;
  }
  if (!initialized_) {
    send(error_response(id, ServerNotInitialized, "the server is not initialized: send initialize first"));
    return;
  }
  if (shutdown_) {
    send(error_response(id, InvalidRequest, "the server is shutting down"));
    return;
  }
  if (method == "shutdown") {
    shutdown_ = true;
    {
      std::lock_guard lk(mu_);
      for (auto& p : pending_) send(error_response(p.id, RequestCancelled, "the server is shutting down"));
      pending_.clear();
    }
    send(response(id, nullptr));
  } else if (method == "textDocument/codeAction") {
    send(response(id, code_actions(params)));
  } else if (method == "textDocument/hover") {
    send(response(id, hover(params)));
  } else if (method == "workspace/executeCommand") {
    send(response(id, execute_command(params)));
  } else if (method == "textDocument/diagnostic" && pull_) {
    pull_document(id, params);
  } else if (method == "workspace/diagnostic" && pull_) {
    pull_workspace(id, params);
  } else {
    send(error_response(id, MethodNotFound, "method not found: " + method));
  }
}

void Server::handle_notification(const std::string& method, const json& params) {
  if (!initialized_) return;  // notifications before initialize are dropped (exit is handled in run())
  if (method == "initialized") {
    // ask for the files whose change matters: configuration, Python sources, the runtime report
    std::string report = settings_.run_report.empty() ? "**/.trainlint/run.json" : settings_.run_report;
    json watchers = json::array({{{"globPattern", "**/pyproject.toml"}}, {{"globPattern", "**/.trainlint.toml"}},
                                 {{"globPattern", "**/*.py"}}, {{"globPattern", report}}});
    if (watch_dynamic_)
      send(request("trainlint-watch-" + std::to_string(next_request_id_++), "client/registerCapability",
                   {{"registrations", json::array({{{"id", "trainlint-watched-files"},
                                                    {"method", "workspace/didChangeWatchedFiles"},
                                                    {"registerOptions", {{"watchers", watchers}}}}})}}));
  } else if (method == "textDocument/didOpen") {
    did_open(params);
  } else if (method == "textDocument/didChange") {
    did_change(params);
  } else if (method == "textDocument/didSave") {
    std::string path = normal_abs(uri_to_path(params.at("textDocument").at("uri").get<std::string>()));
    std::lock_guard lk(mu_);
    if (docs_.count(path)) mark_dirty_locked(path);  // the report may now be older than the file
    cv_.notify_all();
  } else if (method == "textDocument/didClose") {
    did_close(params);
  } else if (method == "workspace/didChangeWatchedFiles") {
    did_change_watched(params);
  } else if (method == "workspace/didChangeConfiguration") {
    json s = params.contains("settings") && params["settings"].is_object() && params["settings"].contains("trainlint")
                 ? params["settings"]["trainlint"]
                 : json();
    if (s.is_object()) {
      std::string err;
      std::lock_guard lk(mu_);
      settings_ = parse_settings(s, settings_, &err);
      if (!err.empty()) log(kLogWarning, "settings: " + err);
      report_.mtime = -1;  // the report path may have changed
      mark_all_dirty_locked();
      cv_.notify_all();
    }
  } else if (method == "$/cancelRequest") {
    cancel(params);
  }
  // other notifications ($/setTrace, $/progress...) are ignored, as the spec allows
}

json Server::initialize(const json& params) {
  initialized_ = true;
  const json caps = params.contains("capabilities") && params["capabilities"].is_object() ? params["capabilities"] : json::object();
  auto at = [&](std::initializer_list<const char*> keys) -> json {
    const json* cur = &caps;
    for (auto k : keys) {
      if (!cur->is_object() || !cur->contains(k)) return nullptr;
      cur = &(*cur)[k];
    }
    return *cur;
  };
  // position encoding: the first of the client's list that we support (UTF-16 when none)
  json encs = at({"general", "positionEncodings"});
  if (encs.is_array())
    for (auto& e : encs)
      if (e.is_string())
        if (auto enc = parse_encoding(e.get<std::string>())) {
          enc_ = *enc;
          break;
        }
  pull_ = at({"textDocument", "diagnostic"}).is_object();
  refresh_support_ = at({"workspace", "diagnostics", "refreshSupport"}) == json(true);
  show_document_ = at({"window", "showDocument", "support"}) == json(true);
  // Diagnostic.relatedInformation is sent only to a client that says it accepts it (LSP 3.17
  // declares it under publishDiagnostics; 3.18 also under the pull model's `diagnostic`); any other
  // client gets the notes as lines of the message, so that the step loop and the call are not lost.
  related_support_ = at({"textDocument", "publishDiagnostics", "relatedInformation"}) == json(true) ||
                     at({"textDocument", "diagnostic", "relatedInformation"}) == json(true);
  watch_dynamic_ = at({"workspace", "didChangeWatchedFiles", "dynamicRegistration"}) == json(true);
  if (params.contains("workspaceFolders") && params["workspaceFolders"].is_array())
    for (auto& f : params["workspaceFolders"])
      if (f.is_object() && f.contains("uri") && f["uri"].is_string()) {
        std::string p = uri_to_path(f["uri"].get<std::string>());
        if (!p.empty()) workspace_roots_.push_back(p);
      }
  if (workspace_roots_.empty() && params.contains("rootUri") && params["rootUri"].is_string()) {
    std::string p = uri_to_path(params["rootUri"].get<std::string>());
    if (!p.empty()) workspace_roots_.push_back(p);
  }
  std::string err;
  {
    std::lock_guard lk(mu_);
    if (params.contains("initializationOptions")) settings_ = parse_settings(params["initializationOptions"], settings_, &err);
    report_.mtime = -1;
  }
  if (!err.empty()) log(kLogWarning, "initializationOptions: " + err);
  thread_ = std::thread([this] { worker(); });

  json capabilities = {
      {"positionEncoding", encoding_name(enc_)},
      {"textDocumentSync", {{"openClose", true}, {"change", 2}, {"save", {{"includeText", false}}}}},
      {"codeActionProvider", {{"codeActionKinds", {"quickfix"}}}},
      {"hoverProvider", true},
      {"executeCommandProvider", {{"commands", {kExplainCommand}}}},
  };
  if (pull_)
    capabilities["diagnosticProvider"] = {
        {"identifier", "trainlint"}, {"interFileDependencies", true}, {"workspaceDiagnostics", true}};
  return {{"capabilities", capabilities}, {"serverInfo", {{"name", "trainlint"}, {"version", "0.1.0"}}}};
}

// ---- document sync ------------------------------------------------------------------------------

std::string Server::project_key(const std::string& abs_path) const {
  fs::path dir = fs::path(abs_path).parent_path();
  fs::path root = find_project_root(dir);
  return root.empty() ? dir.string() : root.string();
}

void Server::mark_dirty_locked(const std::string& path) {
  dirty_.insert(project_key(path));
  prev_edit_ = last_edit_;
  last_edit_ = std::chrono::steady_clock::now();
}

void Server::mark_all_dirty_locked() {
  for (auto& [p, d] : docs_) dirty_.insert(project_key(p));
}

void Server::did_open(const json& params) {
  const json& td = params.at("textDocument");
  std::string uri = td.at("uri").get<std::string>();
  std::string path = uri_to_path(uri);
  if (path.empty()) return;  // untitled:, vscode-notebook-cell: ... are not files
  path = normal_abs(path);
  std::lock_guard lk(mu_);
  Doc& d = docs_[path];
  d.uri = uri;
  d.text = td.at("text").get<std::string>();
  d.version = td.contains("version") && td["version"].is_number_integer() ? td["version"].get<int64_t>() : 0;
  d.generation = ++generation_;
  closed_.erase(path);
  mark_dirty_locked(path);
  cv_.notify_all();
}

void Server::did_change(const json& params) {
  const json& td = params.at("textDocument");
  std::string path = normal_abs(uri_to_path(td.at("uri").get<std::string>()));
  auto changes = params.at("contentChanges").get<std::vector<ContentChange>>();
  std::lock_guard lk(mu_);
  auto it = docs_.find(path);
  if (it == docs_.end()) {
    log(kLogWarning, "didChange for a document that is not open: " + td.at("uri").get<std::string>());
    return;
  }
  for (auto& c : changes) apply_change(it->second.text, c, enc_);
  if (td.contains("version") && td["version"].is_number_integer()) it->second.version = td["version"].get<int64_t>();
  it->second.generation = ++generation_;
  mark_dirty_locked(path);
  cv_.notify_all();
}

void Server::did_close(const json& params) {
  std::string uri = params.at("textDocument").at("uri").get<std::string>();
  std::string path = normal_abs(uri_to_path(uri));
  std::lock_guard lk(mu_);
  if (!docs_.count(path)) return;
  // the rest of its project now reads the file from disk again
  mark_dirty_locked(path);
  docs_.erase(path);
  analysed_.erase(path);
  if (!pull_) closed_[path] = uri;
  cv_.notify_all();
}

void Server::did_change_watched(const json& params) {
  std::lock_guard lk(mu_);
  for (auto& ch : params.at("changes")) {
    std::string path = normal_abs(uri_to_path(ch.at("uri").get<std::string>()));
    std::string name = fs::path(path).filename().string();
    if (name == "pyproject.toml" || name == ".trainlint.toml") {
      mark_all_dirty_locked();  // a configuration may govern any open document
    } else if (path == report_.path || name == "run.json" || fs::path(path).extension() == ".json") {
      report_.mtime = -1;  // reload on the next pass
      mark_all_dirty_locked();
    } else if (analysable(path)) {
      // a file changed on disk (git checkout, a formatter): the documents of its project may change
      std::string key = project_key(path);
      for (auto& [p, d] : docs_)
        if (project_key(p) == key) dirty_.insert(key);
    }
  }
  cv_.notify_all();
}

void Server::cancel(const json& params) {
  if (!params.contains("id")) return;
  json id = params["id"];
  std::lock_guard lk(mu_);
  for (auto it = pending_.begin(); it != pending_.end(); ++it)
    if (it->id == id) {
      send(error_response(id, RequestCancelled, "cancelled"));
      pending_.erase(it);
      return;
    }
}

// ---- the runtime report ---------------------------------------------------------------------------

void Server::load_report_locked() {
  std::string path = settings_.run_report;
  if (path.empty()) {
    // the workspace configuration's [run] report, when it names one
    std::string err;
    if (auto cs = make_config_set(settings_.config_file, settings_.isolated, &err))
      for (auto& root : workspace_roots_)
        if (auto& c = cs->for_dir(fs::path(normal_abs(root))); c.run.report) {
          path = *c.run.report;
          break;
        }
  }
  if (path.empty()) {
    for (auto& root : workspace_roots_) {
      std::string cand = (fs::path(root) / ".trainlint" / "run.json").string();
      if (fs::exists(cand)) {
        path = cand;
        break;
      }
    }
  } else if (fs::path(path).is_relative() && !workspace_roots_.empty()) {
    path = (fs::path(workspace_roots_.front()) / path).lexically_normal().string();
  }
  int64_t mt = path.empty() ? 0 : mtime_of(path);
  if (path == report_.path && mt == report_.mtime) return;
  report_ = RunReport{};
  report_.path = path;
  report_.mtime = mt;
  if (mt == 0) return;
  json doc = json::parse(read_all(path), nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("findings") || !doc["findings"].is_array()) {
    log(kLogWarning, "cannot read the runtime report " + path + ": not a `trainlint run --format json` report");
    return;
  }
  for (auto& f : doc["findings"])
    if (f.is_object() && f.contains("fingerprint") && f["fingerprint"].is_string() && f.contains("runtime") &&
        f["runtime"].is_object())
      report_.by_fingerprint[f["fingerprint"].get<std::string>()] = f;
  std::time_t secs = static_cast<std::time_t>(mt / 1000000000);
  std::tm tm{};
  localtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
  report_.date = buf;
  log(kLogInfo, "runtime report " + path + ": " + std::to_string(report_.by_fingerprint.size()) + " measured findings");
}

// ---- analysis -----------------------------------------------------------------------------------

namespace {
// Where the rule docs are: beside this executable, installed (bin/../share/doc/trainlint/rules/) or
// in a build folder inside the source tree (build/../rules/docs/); else the build's default base.
std::string local_docs_base() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path bin = exe.parent_path();
    for (fs::path dir : {bin / ".." / "share" / "doc" / "trainlint" / "rules", bin / ".." / "rules" / "docs"})
      if (fs::exists(dir / "TL101-gc-collect-per-step.md", ec)) return path_to_uri(dir.lexically_normal().string()) + "/";
  }
  return std::string(report::default_help_uri_base());
}
}  // namespace

std::string doc_href(std::string_view code, const std::string& base) {
  static const std::string local = local_docs_base();
  for (auto& d : rule_docs())
    if (d.code == code) return (base.empty() ? local : base) + std::string(d.file);
  return {};
}

void Server::worker() {
  std::unique_lock lk(mu_);
  for (;;) {
    cv_.wait_for(lk, std::chrono::seconds(2), [&] { return stop_ || !dirty_.empty() || !closed_.empty(); });
    if (stop_) return;
    // a new or changed runtime report re-annotates every open document
    {
      std::string before = report_.path;
      int64_t before_mt = report_.mtime;
      load_report_locked();
      if (report_.path != before || report_.mtime != before_mt) mark_all_dirty_locked();
    }
    for (auto& [path, uri] : closed_)
      send(notification("textDocument/publishDiagnostics", {{"uri", uri}, {"diagnostics", json::array()}}));
    closed_.clear();
    if (dirty_.empty()) {
      answer_pending_locked();
      continue;
    }
    // Leading-edge debounce: the first edit after a quiet spell is analysed at once; an edit that
    // follows another within debounceMs waits until debounceMs after the last one, so a burst
    // (typing, a formatter's edits) is analysed once, at its end.
    auto window = std::chrono::milliseconds(settings_.debounce_ms);
    auto due = last_edit_ - prev_edit_ < window ? last_edit_ + window : last_edit_;
    if (std::chrono::steady_clock::now() < due) {
      cv_.wait_until(lk, due, [&] { return stop_; });
      continue;  // later edits moved last_edit_: the loop waits again
    }
    std::string key = *dirty_.begin();
    dirty_.erase(dirty_.begin());
    std::vector<std::string> paths;
    for (auto& [p, d] : docs_)
      if (project_key(p) == key) paths.push_back(p);
    if (paths.empty()) continue;
    busy_ = true;
    lk.unlock();
    analyse_group(key, paths);
    lk.lock();
    busy_ = false;
    answer_pending_locked();
  }
}

void Server::analyse_group(const std::string& key, const std::vector<std::string>& paths) {
  // snapshot
  std::map<std::string, std::string> texts;  // the group's documents
  std::map<std::string, uint64_t> gens;
  LintOptions opts;
  // C++ in the editor: the fast path only, even where a compile_commands.json would turn the
  // typed path on for the command line (Clang takes seconds a file: not per keystroke)
  opts.cpp_fast_only = true;
  Settings settings;
  RunReport report;
  {
    std::lock_guard lk(mu_);
    settings = settings_;
    report = report_;
    for (auto& [p, d] : docs_) {
      if (d.text.size() <= settings.max_buffer_bytes) opts.overlays[p] = d.text;
    }
    for (auto& p : paths) {
      auto it = docs_.find(p);
      if (it == docs_.end()) return;  // closed meanwhile: its project is dirty again
      texts[p] = it->second.text;
      gens[p] = it->second.generation;
    }
  }
  opts.select = settings.select;
  opts.extend_select = settings.extend_select;
  opts.ignore = settings.ignore;
  opts.config_file = settings.config_file;
  opts.isolated = settings.isolated;
  opts.threads = 2;
  opts.parse_cache = parse_cache_;
  opts.max_file_bytes = settings.max_buffer_bytes;

  struct Out {
    std::vector<Finding> findings;
    std::vector<Diagnostic> extra;  // file messages
    std::shared_ptr<LintResult> lint;
  };
  std::map<std::string, Out> out;
  std::vector<std::string> on_disk, config_errors;
  for (auto& p : paths) {
    out[p];
    if (!analysable(p)) continue;
    if (texts[p].size() > settings.max_buffer_bytes) {
      Diagnostic d;
      d.severity = DiagnosticSeverity::Information;
      d.message = "not analysed: the buffer has " + std::to_string(texts[p].size()) + " bytes, over the limit of " +
                  std::to_string(settings.max_buffer_bytes) + " (initializationOptions.maxBufferBytes)";
      out[p].extra.push_back(d);
      continue;
    }
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) on_disk.push_back(p);
  }
  auto absorb = [&](LintResult res) {
    auto shared = std::make_shared<LintResult>(std::move(res));
    for (auto& e : shared->config_errors) config_errors.push_back(e);
    std::map<std::string, std::string> abs_of;  // display path -> absolute
    for (auto& [disp, fi] : shared->files) abs_of[disp] = fi.abs_path;
    for (auto& f : shared->findings) {
      auto it = abs_of.find(f.path);
      std::string abs = it != abs_of.end() ? it->second : normal_abs(f.path);
      if (out.count(abs)) out[abs].findings.push_back(f);
    }
    for (auto& m : shared->messages) {
      std::string abs = abs_of.count(m.path) ? abs_of[m.path] : normal_abs(m.path);
      if (!out.count(abs) || m.message.rfind("syntax error", 0) == 0) continue;  // editors show syntax errors already
      Diagnostic d;
      d.severity = DiagnosticSeverity::Warning;
      d.message = m.message;
      if (m.where) {
        d.range.start = d.range.end = {m.where->line ? m.where->line - 1 : 0, 0};
      }
      out[abs].extra.push_back(d);
    }
    for (auto& [disp, fi] : shared->files)
      if (auto it = out.find(fi.abs_path); it != out.end()) it->second.lint = shared;
  };
  try {
    if (!on_disk.empty()) absorb(lint_paths(on_disk, opts));
    for (auto& p : paths) {
      if (!analysable(p) || texts[p].size() > settings.max_buffer_bytes) continue;
      if (std::find(on_disk.begin(), on_disk.end(), p) != on_disk.end()) continue;
      // a buffer not saved yet: linted as standard input named by its path
      LintOptions one = opts;
      one.stdin_text = texts[p];
      one.stdin_filename = p;
      absorb(lint_paths({"-"}, one));
    }
  } catch (const std::exception& e) {
    log(kLogError, std::string("analysis failed: ") + e.what());
  }

  // diagnostics
  std::map<std::string, std::string> note_texts;  // other files' texts, for note positions
  auto text_of = [&](const std::string& abs, const LintResult* lint) -> const std::string* {
    if (texts.count(abs)) return &texts[abs];
    if (auto it = note_texts.find(abs); it != note_texts.end()) return &it->second;
    if (lint && lint->model)
      for (auto& m : lint->model->modules())
        if (m->src && m->src->abs_path() == abs) return &(note_texts[abs] = m->src->text());
    return &(note_texts[abs] = read_all(abs));
  };
  std::map<std::string, Analysed> results;
  for (auto& [p, o] : out) {
    Analysed a;
    a.text = texts[p];
    a.generation = gens[p];
    a.lint = o.lint;
    LineIndex idx(a.text);
    bool stale_checked = false, stale = false;
    for (auto& f : o.findings) {
      Diagnostic d;
      d.range = {idx.position(f.range.begin, enc_), idx.position(f.range.end, enc_)};
      d.severity = to_lsp(f.severity);
      d.code = f.code;
      d.href = doc_href(f.code, settings.docs_base);
      d.message = f.message;
      d.data = {{"fingerprint", f.fingerprint}, {"slug", f.slug}};
      for (auto& n : f.notes) {
        std::string abs = normal_abs(n.path);
        if (o.lint)
          for (auto& [disp, fi] : o.lint->files)
            if (disp == n.path) abs = fi.abs_path;
        if (!related_support_) {  // as the command line shows a place: relative to the workspace folder
          std::string shown = abs;
          for (auto& root : workspace_roots_)
            if (auto rel = report::path_inside(abs, root)) {
              shown = *rel;
              break;
            }
          const SourceFile* src = o.lint ? o.lint->source(n.path) : nullptr;
          d.message += "\n" + report::shown_location(shown, report::shown_pos(src, n.range.start)) + ": " + n.message;
          continue;
        }
        const std::string* t = text_of(abs, o.lint.get());
        LineIndex nidx(*t);
        RelatedInformation ri;
        ri.location.uri = path_to_uri(abs);
        ri.location.range = {nidx.position(n.range.begin, enc_), nidx.position(n.range.end, enc_)};
        ri.message = n.message;
        d.related.push_back(ri);
      }
      json rt;
      if (auto it = report.by_fingerprint.find(f.fingerprint); it != report.by_fingerprint.end()) {
        rt = it->second["runtime"];
        std::string verdict = rt.value("verdict", "");
        d.message += "\n" + measured_text(rt, report.date);
        if (!stale_checked) {
          stale_checked = true;
          stale = mtime_of(p) > report.mtime || read_all(p) != a.text;
        }
        if (stale) d.message += "; the report is older than this file's last change";
        if (verdict == "confirmed")
          d.severity = d.severity == DiagnosticSeverity::Information ? DiagnosticSeverity::Warning : DiagnosticSeverity::Error;
        else if (verdict == "negligible")
          d.severity = DiagnosticSeverity::Hint;
        rt["report_date"] = report.date;
        rt["report_stale"] = stale;
      }
      a.runtime.push_back(rt);
      a.findings.push_back(f);
      a.diagnostics.push_back(std::move(d));
    }
    for (auto& d : o.extra) a.diagnostics.push_back(d);
    results[p] = std::move(a);
  }

  std::vector<json> outgoing;  // sent after the lock is released: a slow client never blocks the message thread
  std::unique_lock lk(mu_);
  for (auto& e : config_errors) log(kLogError, "configuration: " + e);
  // a document of the group changed (or closed) while this ran: a newer analysis is due, and this
  // one must not replace what the client has
  for (auto& p : paths) {
    auto it = docs_.find(p);
    if (it == docs_.end() || it->second.generation != gens[p]) return;
  }
  bool others_changed = false;
  for (auto& [p, a] : results) {
    auto prev = analysed_.find(p);
    bool changed = prev == analysed_.end() || prev->second.diagnostics != a.diagnostics;
    a.result_id = changed ? std::to_string(++result_counter_) : prev->second.result_id;
    a.published = prev != analysed_.end() && prev->second.published && !changed;
    if (!pull_ && !a.published) {
      json params = {{"uri", docs_[p].uri}, {"version", docs_[p].version}, {"diagnostics", a.diagnostics}};
      outgoing.push_back(notification("textDocument/publishDiagnostics", params));
      a.published = true;
    }
    if (changed) others_changed = true;
    analysed_[p] = std::move(a);
  }
  if (pull_ && others_changed && refresh_support_)
    outgoing.push_back(request("trainlint-refresh-" + std::to_string(next_request_id_++), "workspace/diagnostic/refresh", nullptr));
  lk.unlock();
  for (auto& m : outgoing) send(m);
}

// ---- pull diagnostics -------------------------------------------------------------------------------

json Server::document_report_locked(const std::string& path, const std::string& previous_result_id) {
  auto it = analysed_.find(path);
  if (it == analysed_.end()) return {{"kind", "full"}, {"items", json::array()}};
  if (!previous_result_id.empty() && previous_result_id == it->second.result_id)
    return {{"kind", "unchanged"}, {"resultId", it->second.result_id}};
  return {{"kind", "full"}, {"resultId", it->second.result_id}, {"items", it->second.diagnostics}};
}

void Server::answer_pending_locked() {
  bool all_clean = dirty_.empty() && !busy_;
  for (auto it = pending_.begin(); it != pending_.end();) {
    bool ready;
    if (it->path.empty()) {
      ready = all_clean;
    } else {
      auto d = docs_.find(it->path);
      auto a = analysed_.find(it->path);
      ready = d == docs_.end() || (a != analysed_.end() && a->second.generation == d->second.generation &&
                                   !dirty_.count(project_key(it->path)));
    }
    if (!ready) {
      ++it;
      continue;
    }
    if (it->path.empty()) {
      json items = json::array();
      std::map<std::string, std::string> prev;
      if (it->previous.is_array())
        for (auto& p : it->previous)
          if (p.is_object() && p.contains("uri") && p.contains("value") && p["uri"].is_string() && p["value"].is_string())
            prev[normal_abs(uri_to_path(p["uri"].get<std::string>()))] = p["value"].get<std::string>();
      for (auto& [p, d] : docs_) {
        json r = document_report_locked(p, prev.count(p) ? prev[p] : "");
        r["uri"] = d.uri;
        r["version"] = d.version;
        items.push_back(r);
      }
      send(response(it->id, {{"items", items}}));
    } else {
      send(response(it->id, document_report_locked(it->path, it->previous_result_id)));
    }
    it = pending_.erase(it);
  }
}

void Server::pull_document(const json& id, const json& params) {
  std::string path = normal_abs(uri_to_path(params.at("textDocument").at("uri").get<std::string>()));
  std::string prev = params.contains("previousResultId") && params["previousResultId"].is_string()
                         ? params["previousResultId"].get<std::string>()
                         : "";
  std::lock_guard lk(mu_);
  pending_.push_back({id, path, prev, nullptr});
  answer_pending_locked();
}

void Server::pull_workspace(const json& id, const json& params) {
  std::lock_guard lk(mu_);
  pending_.push_back({id, "", "", params.contains("previousResultIds") ? params["previousResultIds"] : json()});
  answer_pending_locked();
}

// ---- code actions, hover, commands ----------------------------------------------------------------

json Server::code_actions(const json& params) {
  std::string uri = params.at("textDocument").at("uri").get<std::string>();
  std::string path = normal_abs(uri_to_path(uri));
  Range range = params.at("range").get<Range>();
  json actions = json::array();
  std::lock_guard lk(mu_);
  auto d = docs_.find(path);
  auto a = analysed_.find(path);
  if (d == docs_.end() || a == analysed_.end() || a->second.generation != d->second.generation) return actions;
  const Analysed& an = a->second;
  LineIndex idx(an.text);
  uint32_t lo = idx.offset(range.start, enc_), hi = idx.offset(range.end, enc_);
  if (hi < lo) std::swap(lo, hi);
  const py::Module* mod = nullptr;
  if (an.lint && an.lint->model)
    for (auto& m : an.lint->model->modules())
      if (m->src && m->src->abs_path() == path) mod = m.get();
  auto edits_json = [&](const std::vector<Edit>& edits) {
    json arr = json::array();
    for (auto& e : edits)
      arr.push_back(TextEdit{{idx.position(e.range.begin, enc_), idx.position(e.range.end, enc_)}, e.replacement});
    return arr;
  };
  for (size_t i = 0; i < an.findings.size(); ++i) {
    const Finding& f = an.findings[i];
    // the finding's range, or its whole statement's lines, meets the requested range
    uint32_t fb = std::min(f.range.begin, f.statement.begin), fe = std::max(f.range.end, f.statement.end);
    if (fe < lo || fb > hi) continue;
    json diag = an.diagnostics[i];
    if (f.fix && !f.fix->edits.empty()) {
      actions.push_back({{"title", f.fix->title + " (" + f.code + ")"},
                         {"kind", "quickfix"},
                         {"diagnostics", {diag}},
                         {"isPreferred", f.fix->applicability == Applicability::Safe},
                         {"edit", {{"changes", {{d->second.uri, edits_json(f.fix->edits)}}}}}});
    }
    if (mod && f.code != "TL001") {
      py::NoqaEdits ne = py::add_noqa_edits(*mod, {&f});
      if (!ne.edits.empty())
        actions.push_back({{"title", "Suppress " + f.code + " on this line"},
                           {"kind", "quickfix"},
                           {"diagnostics", {diag}},
                           {"edit", {{"changes", {{d->second.uri, edits_json(ne.edits)}}}}}});
    }
    actions.push_back({{"title", "Explain " + f.code + " (" + f.slug + ")"},
                       {"kind", "quickfix"},
                       {"diagnostics", {diag}},
                       {"command", {{"title", "Explain " + f.code}, {"command", kExplainCommand}, {"arguments", {f.code}}}}});
  }
  return actions;
}

json Server::hover(const json& params) {
  std::string path = normal_abs(uri_to_path(params.at("textDocument").at("uri").get<std::string>()));
  Position pos = params.at("position").get<Position>();
  std::lock_guard lk(mu_);
  auto d = docs_.find(path);
  auto a = analysed_.find(path);
  if (d == docs_.end() || a == analysed_.end() || a->second.generation != d->second.generation) return nullptr;
  const Analysed& an = a->second;
  LineIndex idx(an.text);
  uint32_t off = idx.offset(pos, enc_);
  std::string md;
  std::optional<Range> range;
  for (size_t i = 0; i < an.findings.size(); ++i) {
    const Finding& f = an.findings[i];
    if (off < f.range.begin || off > f.range.end) continue;
    if (!md.empty()) md += "\n---\n\n";
    md += "**" + f.code + " " + f.slug + "** — " + an.diagnostics[i].message + "\n\n";
    const json& rt = an.runtime[i];
    if (rt.is_object()) {
      md += "#### Measured by `trainlint run` (" + rt.value("report_date", std::string()) + ")\n\n";
      md += "| calls | total ms | ms/step | % step | GPU idle ms | verdict |\n| --- | --- | --- | --- | --- | --- |\n";
      auto num = [&](const char* k, int digits, double scale = 1.0) -> std::string {
        return rt.contains(k) && rt[k].is_number() ? fmt(rt[k].get<double>() * scale, digits) : "n/a";
      };
      std::string idle = num("gpu_idle_ms", 1);
      if (idle == "n/a" && rt.contains("gpu_idle_reason") && rt["gpu_idle_reason"].is_string())
        idle += ": " + rt["gpu_idle_reason"].get<std::string>();
      md += "| " + num("calls", 0) + " | " + num("total_ms", 1) + " | " + num("ms_per_step", 2) + " | " +
            num("share", 1, 100.0) + "% | " + idle + " | " + rt.value("verdict", "") + " |\n\n";
      if (rt.value("report_stale", false)) md += "The report is older than this file's last change.\n\n";
    }
    md += hover_sections(rule_doc(f.code));
    if (!range) range = an.diagnostics[i].range;
  }
  if (md.empty()) return nullptr;
  json r = {{"contents", {{"kind", "markdown"}, {"value", md}}}};
  if (range) r["range"] = *range;
  return r;
}

json Server::execute_command(const json& params) {
  std::string cmd = params.at("command").get<std::string>();
  if (cmd != kExplainCommand) throw json::other_error::create(501, "unknown command " + cmd, &params);
  const json& args = params.at("arguments");
  std::string code = args.at(0).get<std::string>();
  const RuleInfo* r = find_rule(code);
  if (!r) throw json::other_error::create(501, "unknown rule " + code, &params);
  std::string href;
  {
    std::lock_guard lk(mu_);
    href = doc_href(r->code, settings_.docs_base);
  }
  if (show_document_ && !href.empty())
    send(request("trainlint-show-" + std::to_string(next_request_id_++), "window/showDocument",
                 {{"uri", href}, {"takeFocus", true}}));
  else
    send(notification("window/showMessage", {{"type", kLogInfo}, {"message", std::string(rule_doc(r->code))}}));
  return {{"code", r->code}, {"uri", href}, {"doc", std::string(rule_doc(r->code))}};
}

int serve_stdio() {
  ::signal(SIGPIPE, SIG_IGN);  // a client that went away ends the loop through EOF, not a signal
  Transport t(0, 1);
  Server s(t);
  return s.run();
}

}  // namespace tl::lsp
