// `trainlint lsp`: the Language Server Protocol 3.17 server. It owns the lifecycle, the store of
// open documents and the scheduling of analyses; diagnostics come from the lint engine
// (analyzer/engine/engine.h), which reads open buffers from memory (LintOptions::overlays) and the
// other files of each project from disk. See docs/lsp.md for the methods implemented.
//
// Threads: the message thread (run()) reads and answers every message; one analysis thread
// re-lints the projects of edited documents, debounced, and publishes. A result is published only
// when no document of its project changed while it was computed, so a stale analysis never
// replaces a newer one.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyzer/engine/engine.h"
#include "analyzer/lsp/protocol.h"
#include "analyzer/lsp/transport.h"

namespace tl::lsp {

// Settings from `initializationOptions` (and `workspace/didChangeConfiguration`'s
// `settings.trainlint`); every key is optional. See docs/lsp.md.
struct Settings {
  std::vector<std::string> select, extend_select, ignore;
  std::string config_file;   // configFile: one configuration for every file
  bool isolated = false;     // isolated: no configuration files
  std::string run_report;    // runReport: a `trainlint run --format json` report (default .trainlint/run.json)
  int debounce_ms = 50;      // debounceMs: an edit within this long of the previous one waits this long (a burst is analysed once)
  std::string docs_base;     // docsBaseUri: base URI of the rule docs (codeDescription.href)
  size_t max_buffer_bytes = 8u << 20;  // maxBufferBytes: larger buffers are not analysed
};
// The URI of a rule's doc (codeDescription.href, "explain"): `base` + its file name; with an
// empty base, the docs installed beside this executable (file://), else the build's default.
std::string doc_href(std::string_view code, const std::string& base);
// Reads the keys it knows; `error` lists the values of a wrong type.
Settings parse_settings(const nlohmann::json& j, Settings base, std::string* error);

class Server {
 public:
  explicit Server(Transport& transport);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Serves until `exit` or the end of the input. Returns the process exit status the spec asks
  // for: 0 after `shutdown` then `exit`, 1 otherwise.
  int run();

 private:
  struct Doc {
    std::string uri;
    std::string text;
    int64_t version = 0;
    uint64_t generation = 0;  // bumps on every change (open, change, close)
  };
  // What the last analysis of a document found, kept for code actions, hover and pull requests.
  struct Analysed {
    std::string text;        // the text the findings were computed on
    uint64_t generation = 0;
    std::vector<Finding> findings;
    std::vector<Diagnostic> diagnostics;
    std::vector<nlohmann::json> runtime;  // per finding: the report's runtime row (or null)
    std::shared_ptr<LintResult> lint;     // the model of its project (for suppression comments)
    std::string result_id;
    bool published = false;
  };
  struct Pending {  // a pull request waiting for an analysis
    nlohmann::json id;
    std::string path;  // empty: workspace/diagnostic
    std::string previous_result_id;
    nlohmann::json previous;  // workspace: previousResultIds
  };
  struct RunReport {
    std::string path;
    int64_t mtime = 0;  // seconds since the epoch; 0 = not loaded
    std::map<std::string, nlohmann::json> by_fingerprint;  // finding JSON with its runtime row
    std::string date;   // "2024-05-01 14:03"
  };

  void handle(const nlohmann::json& msg);
  void handle_request(const nlohmann::json& id, const std::string& method, const nlohmann::json& params);
  void handle_notification(const std::string& method, const nlohmann::json& params);
  nlohmann::json initialize(const nlohmann::json& params);
  void did_open(const nlohmann::json& params);
  void did_change(const nlohmann::json& params);
  void did_close(const nlohmann::json& params);
  void did_change_watched(const nlohmann::json& params);
  nlohmann::json code_actions(const nlohmann::json& params);
  nlohmann::json hover(const nlohmann::json& params);
  nlohmann::json execute_command(const nlohmann::json& params);
  void pull_document(const nlohmann::json& id, const nlohmann::json& params);
  void pull_workspace(const nlohmann::json& id, const nlohmann::json& params);
  void cancel(const nlohmann::json& params);

  // analysis thread
  void worker();
  void analyse_group(const std::string& root, const std::vector<std::string>& paths);
  void answer_pending_locked();
  nlohmann::json document_report_locked(const std::string& path, const std::string& previous_result_id);
  void load_report_locked();
  std::string project_key(const std::string& abs_path) const;
  void mark_dirty_locked(const std::string& path);
  void mark_all_dirty_locked();

  void log(int type, const std::string& message);
  void send(const nlohmann::json& msg) { transport_.write(msg); }

  Transport& transport_;
  // lifecycle (message thread only)
  bool initialized_ = false, shutdown_ = false;
  // client capabilities
  bool pull_ = false, refresh_support_ = false, show_document_ = false, related_support_ = false;
  Encoding enc_ = Encoding::Utf16;
  std::vector<std::string> workspace_roots_;
  bool watch_dynamic_ = false;
  std::atomic<int64_t> next_request_id_{1};  // ids of our requests to the client

  // shared with the analysis thread
  mutable std::mutex mu_;
  std::condition_variable cv_;
  Settings settings_;
  std::map<std::string, Doc> docs_;           // by absolute path
  std::map<std::string, Analysed> analysed_;  // by absolute path (open documents)
  // The workspace files parsed by the last analyses: an edit re-parses incrementally.
  std::shared_ptr<py::ParseCache> parse_cache_ = std::make_shared<py::ParseCache>();
  std::set<std::string> dirty_;               // project keys to re-analyse
  std::map<std::string, std::string> closed_; // closed documents whose diagnostics must be cleared: path -> uri
  std::vector<Pending> pending_;
  std::chrono::steady_clock::time_point last_edit_{}, prev_edit_{};
  bool busy_ = false;                         // the analysis thread is analysing
  bool stop_ = false;
  uint64_t generation_ = 0;
  uint64_t result_counter_ = 0;
  RunReport report_;
  std::thread thread_;
};

// `trainlint lsp`: serves on standard input and output; returns the exit status.
int serve_stdio();

}  // namespace tl::lsp
