// Starting the user's program for `trainlint run`: a temporary folder owned by the run, the
// child's environment (docs/runtime-protocol.md, "Environment the launcher sets"), fork/exec with
// stdin/stdout/stderr inherited, SIGINT/SIGTERM forwarded, and the exit status kept.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tl::runtime {

// A folder made with mkdtemp and removed (recursively) when the object dies.
class TempDir {
 public:
  // Creates `$TMPDIR/trainlint-run-XXXXXX` (or /tmp); null with `err` set on failure.
  static std::optional<TempDir> create(std::string* err);
  TempDir(TempDir&& o) noexcept : path_(std::move(o.path_)) { o.path_.clear(); }
  TempDir& operator=(TempDir&&) = delete;
  TempDir(const TempDir&) = delete;
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  explicit TempDir(std::string p) : path_(std::move(p)) {}
  std::string path_;
};

// libtrainlint_shim.so: $TRAINLINT_SHIM_PATH when set, else next to the running executable
// (/proc/self/exe: the build tree), else where `cmake --install` puts it relative to the
// executable (bin/../lib/trainlint). Empty when absent, with `note` saying where it looked.
std::string find_shim(std::string* note);

// The installed bootstrap package folder (bin/../share/trainlint/trainlint_boot, holding
// __init__.py and sitecustomize.py), usable as a PYTHONPATH entry as it is; empty when this
// trainlint is not an installed one (then the embedded copy is written out instead).
std::string find_installed_bootstrap();

// The current environment with `changes` applied (a nullopt value removes the variable), as
// "NAME=value" strings for execve.
std::vector<std::string> child_environment(const std::map<std::string, std::optional<std::string>>& changes);

// `dir` prepended to a PYTHONPATH value (which may be absent or empty).
std::string prepend_path(const std::string& dir, const char* existing);

struct LaunchResult {
  bool started = false;
  std::string error;    // why it could not be started
  int exit_code = 0;    // the child's exit code, or 128+N when a signal N ended it
  int term_signal = 0;  // N, or 0
};

// Runs argv (argv[0] searched in PATH) with `env`; stdin/stdout/stderr are inherited. SIGINT and
// SIGTERM sent to trainlint by another process (kill, a job scheduler) are forwarded to the child;
// the ones a terminal sends reach the child directly (same process group) and are not sent twice.
LaunchResult launch(const std::vector<std::string>& argv, const std::vector<std::string>& env);

}  // namespace tl::runtime
