#include "analyzer/core/gitdiff.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

extern char** environ;

namespace fs = std::filesystem;

namespace tl {

bool ChangedLines::touches(const std::string& abs, uint32_t first, uint32_t last) const {
  if (whole_files.count(abs)) return true;
  if (auto it = ranges.find(abs); it != ranges.end())
    for (auto [a, b] : it->second)
      if (a <= last && first <= b) return true;
  if (auto it = deletions.find(abs); it != deletions.end())
    for (uint32_t c : it->second)
      if (first <= c && c < last) return true;
  return false;
}

int run_capture(const std::vector<std::string>& argv, const fs::path& cwd, std::string& out, std::string& err) {
  int po[2], pe[2];
  if (pipe2(po, O_CLOEXEC) != 0) {
    err = std::strerror(errno);
    return -1;
  }
  if (pipe2(pe, O_CLOEXEC) != 0) {
    err = std::strerror(errno);
    close(po[0]);
    close(po[1]);
    return -1;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, po[1], 1);
  posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(po[1]);
  close(pe[1]);
  if (rc != 0) {
    err = std::string("cannot run ") + argv[0] + ": " + std::strerror(rc);
    close(po[0]);
    close(pe[0]);
    return -1;
  }
  pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) (i == 0 ? out : err).append(buf, static_cast<size_t>(n));
      else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

namespace {

// A path as git prints it: plain, or C-quoted ("a\tb", octal escapes for bytes).
std::string unquote_git_path(std::string_view s) {
  if (s.size() < 2 || s.front() != '"' || s.back() != '"') return std::string(s);
  std::string out;
  for (size_t i = 1; i + 1 < s.size(); ++i) {
    char c = s[i];
    if (c != '\\' || i + 2 >= s.size()) {
      out.push_back(c);
      continue;
    }
    char e = s[++i];
    switch (e) {
      case 'n': out.push_back('\n'); break;
      case 't': out.push_back('\t'); break;
      case 'r': out.push_back('\r'); break;
      case 'a': out.push_back('\a'); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'v': out.push_back('\v'); break;
      case '"': case '\\': out.push_back(e); break;
      default:
        if (e >= '0' && e <= '7' && i + 2 < s.size()) {
          int v = (e - '0') * 64 + (s[i + 1] - '0') * 8 + (s[i + 2] - '0');
          out.push_back(static_cast<char>(v));
          i += 2;
        } else {
          out.push_back(e);
        }
    }
  }
  return out;
}

std::string trim_right(std::string s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  return s;
}

}  // namespace

void parse_unified_zero_diff(const std::string& diff, const fs::path& root, ChangedLines& out) {
  std::istringstream in(diff);
  std::string line, current;
  size_t body = 0;  // lines of the current hunk still to come: they are content, never headers
  auto number = [&](size_t& i, uint32_t& v) {
    v = 0;
    while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) v = v * 10 + (line[i++] - '0');
  };
  while (std::getline(in, line)) {
    if (body > 0) {
      // an added line "++ x" reads "+++ x" here: it must not be taken for the next file's header
      if (line.rfind("\\", 0) != 0) --body;  // "\ No newline at end of file" is not a line
      continue;
    }
    if (line.rfind("+++ ", 0) == 0) {
      std::string p = trim_right(line.substr(4));
      if (p == "/dev/null") {
        current.clear();
        continue;
      }
      p = unquote_git_path(p);
      if (p.rfind("b/", 0) == 0) p = p.substr(2);
      current = (root / p).lexically_normal().string();
    } else if (line.rfind("@@ ", 0) == 0) {
      // @@ -a[,b] +c[,d] @@
      auto minus = line.find(" -");
      auto plus = line.find(" +");
      if (minus == std::string::npos || plus == std::string::npos) continue;
      uint32_t a = 0, b = 1, c = 0, d = 1;
      size_t i = minus + 2;
      number(i, a);
      if (i < line.size() && line[i] == ',') number(++i, b);
      i = plus + 2;
      number(i, c);
      if (i < line.size() && line[i] == ',') number(++i, d);
      body = static_cast<size_t>(b) + d;
      if (current.empty()) continue;
      if (d > 0) out.ranges[current].emplace_back(c, c + d - 1);
      else out.deletions[current].push_back(c);  // only deletions, after line c: no line is new
    }
  }
}

std::optional<ChangedLines> changed_lines_since(const std::string& ref, const fs::path& dir, std::string* error) {
  std::string out, err;
  int rc = run_capture({"git", "rev-parse", "--show-toplevel"}, dir, out, err);
  if (rc == -1) {
    *error = "--diff-base needs git: " + err;
    return std::nullopt;
  }
  if (rc != 0) {
    *error = "--diff-base needs a git repository, and " + dir.string() + " is not in one";
    return std::nullopt;
  }
  fs::path root = fs::path(trim_right(out.substr(0, out.find('\n'))));
  out.clear();
  err.clear();
  rc = run_capture({"git", "rev-parse", "--verify", "--quiet", ref + "^{commit}"}, root, out, err);
  if (rc != 0) {
    *error = "--diff-base " + ref + ": not a commit in the repository at " + root.string();
    return std::nullopt;
  }
  out.clear();
  err.clear();
  // explicit prefixes: diff.mnemonicPrefix / diff.noprefix would otherwise change "b/"; no textconv
  // filter may renumber the lines
  rc = run_capture({"git", "-c", "core.quotePath=true", "diff", "--no-color", "--no-ext-diff", "--no-textconv",
                    "--no-renames", "--src-prefix=a/", "--dst-prefix=b/", "--unified=0", ref, "--"},
                   root, out, err);
  if (rc != 0) {
    *error = "git diff " + ref + " failed: " + trim_right(err);
    return std::nullopt;
  }
  ChangedLines cl;
  parse_unified_zero_diff(out, root, cl);
  out.clear();
  err.clear();
  rc = run_capture({"git", "ls-files", "-z", "--others", "--exclude-standard"}, root, out, err);
  if (rc == 0) {
    size_t s = 0;
    while (s < out.size()) {
      size_t e = out.find('\0', s);
      if (e == std::string::npos) e = out.size();
      if (e > s) cl.whole_files.insert((root / out.substr(s, e - s)).lexically_normal().string());
      s = e + 1;
    }
  }
  return cl;
}

}  // namespace tl
