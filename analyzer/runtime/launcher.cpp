#include "analyzer/runtime/launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

extern char** environ;

namespace fs = std::filesystem;

namespace tl::runtime {

std::optional<TempDir> TempDir::create(std::string* err) {
  std::string base = "/tmp";
  if (const char* t = std::getenv("TMPDIR"); t && *t) {
    std::error_code ec;
    if (fs::is_directory(t, ec)) base = t;
  }
  std::string tmpl = base + "/trainlint-run-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) {
    if (err) *err = "cannot create a temporary folder in " + base + ": " + std::strerror(errno);
    return std::nullopt;
  }
  return TempDir(std::string(buf.data()));
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
}

// Where `cmake --install` puts the shim and the bootstrap, relative to the installed executable's
// folder (computed from GNUInstallDirs at configure time, cmake/Install.cmake).
#ifndef TRAINLINT_INSTALL_SHIM_DIR
#define TRAINLINT_INSTALL_SHIM_DIR ""
#endif
#ifndef TRAINLINT_INSTALL_BOOT_DIR
#define TRAINLINT_INSTALL_BOOT_DIR ""
#endif

namespace {

// The folder of the running executable, or empty with `note` set.
fs::path exe_dir(std::string* note) {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) {
    if (note) *note = "cannot find the trainlint executable (/proc/self/exe) to look for libtrainlint_shim.so beside it";
    return {};
  }
  return exe.parent_path();
}

}  // namespace

std::string find_shim(std::string* note) {
  if (const char* p = std::getenv("TRAINLINT_SHIM_PATH"); p && *p) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return fs::absolute(p, ec).string();
    if (note) *note = std::string("TRAINLINT_SHIM_PATH names ") + p + ", which does not exist";
    return "";
  }
  fs::path dir = exe_dir(note);
  if (dir.empty()) return "";
  std::error_code ec;
  fs::path shim = dir / "libtrainlint_shim.so";  // the build tree
  if (fs::is_regular_file(shim, ec)) return shim.string();
  std::string looked = shim.string();
  if (*TRAINLINT_INSTALL_SHIM_DIR) {
    fs::path installed = (dir / TRAINLINT_INSTALL_SHIM_DIR / "libtrainlint_shim.so").lexically_normal();
    if (fs::is_regular_file(installed, ec)) return installed.string();
    looked += " or " + installed.string();
  }
  if (note) *note = "libtrainlint_shim.so was not found at " + looked + " (set TRAINLINT_SHIM_PATH)";
  return "";
}

std::string find_installed_bootstrap() {
  if (!*TRAINLINT_INSTALL_BOOT_DIR) return "";
  fs::path dir = exe_dir(nullptr);
  if (dir.empty()) return "";
  fs::path boot = (dir / TRAINLINT_INSTALL_BOOT_DIR).lexically_normal();
  std::error_code ec;
  if (fs::is_regular_file(boot / "sitecustomize.py", ec) && fs::is_regular_file(boot / "__init__.py", ec))
    return boot.string();
  return "";
}

std::string prepend_path(const std::string& dir, const char* existing) {
  if (!existing || !*existing) return dir;
  return dir + ":" + existing;
}

std::vector<std::string> child_environment(const std::map<std::string, std::optional<std::string>>& changes) {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    std::string name = kv.substr(0, kv.find('='));
    if (changes.count(name)) continue;
    out.push_back(std::move(kv));
  }
  for (auto& [k, v] : changes)
    if (v) out.push_back(k + "=" + *v);
  return out;
}

namespace {

std::atomic<pid_t> g_child{0};

void forward(int sig, siginfo_t* info, void*) {
  // A terminal's ^C reaches every process of the foreground group, the child included: only
  // signals that another process sent to trainlint itself are passed on.
  if (info && info->si_code > 0) return;
  pid_t c = g_child.load();
  if (c > 0) kill(c, sig);
}

}  // namespace

LaunchResult launch(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  LaunchResult res;
  if (argv.empty()) {
    res.error = "no program to run";
    return res;
  }
  std::vector<char*> cargv, cenv;
  for (auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (auto& e : env) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    res.error = std::string("cannot create a pipe: ") + std::strerror(errno);
    return res;
  }
  struct sigaction sa {}, old_int{}, old_term{};
  sa.sa_sigaction = forward;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigset_t block, old_mask;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  sigprocmask(SIG_BLOCK, &block, &old_mask);  // no signal is lost between fork and g_child
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  std::fflush(nullptr);

  pid_t pid = fork();
  if (pid == 0) {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    close(fds[0]);
    execvpe(cargv[0], cargv.data(), cenv.data());
    int e = errno;
    ssize_t w = write(fds[1], &e, sizeof e);
    (void)w;
    _exit(127);
  }
  int fork_errno = errno;
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    res.error = std::string("cannot start `") + argv[0] + "`: fork failed: " + std::strerror(fork_errno);
    return res;
  }
  g_child.store(pid);
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);

  int exec_errno = 0;
  ssize_t n;
  do n = read(fds[0], &exec_errno, sizeof exec_errno);
  while (n < 0 && errno == EINTR);
  close(fds[0]);

  int status = 0;
  pid_t w;
  do w = waitpid(pid, &status, 0);
  while (w < 0 && errno == EINTR);
  g_child.store(0);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);

  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    res.error = std::string("cannot start `") + argv[0] + "`: " + std::strerror(exec_errno);
    return res;
  }
  res.started = true;
  if (w < 0) {
    res.error = std::string("lost track of the program: ") + std::strerror(errno);
    res.exit_code = 1;
  } else if (WIFEXITED(status)) {
    res.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    res.term_signal = WTERMSIG(status);
    res.exit_code = 128 + res.term_signal;
  }
  return res;
}

}  // namespace tl::runtime
