// A minimal LSP client for tests and the latency benchmark: starts `trainlint lsp` as a child
// process with pipes, sends framed messages (or raw bytes), and receives the server's messages
// on a reader thread, so that a test can wait for one with a timeout.
#pragma once
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyzer/lsp/transport.h"

namespace tl::test {

class LspClient {
 public:
  // Starts `binary lsp` in `cwd`.
  LspClient(const std::string& binary, const std::string& cwd) {
    int to_child[2], from_child[2];
    if (pipe(to_child) != 0 || pipe(from_child) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(to_child[0], 0);
      dup2(from_child[1], 1);
      close(to_child[0]);
      close(to_child[1]);
      close(from_child[0]);
      close(from_child[1]);
      if (chdir(cwd.c_str()) != 0) _exit(127);
      execl(binary.c_str(), binary.c_str(), "lsp", static_cast<char*>(nullptr));
      _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    in_ = to_child[1];
    out_ = from_child[0];
    signal(SIGPIPE, SIG_IGN);
    transport_ = std::make_unique<lsp::Transport>(out_, in_);
    reader_ = std::thread([this] {
      for (;;) {
        lsp::ReadResult r = transport_->read();
        std::lock_guard lk(mu_);
        if (r.kind == lsp::ReadResult::Kind::Eof) {
          eof_ = true;
          cv_.notify_all();
          return;
        }
        if (r.kind == lsp::ReadResult::Kind::Message) {
          inbox_.push_back({std::chrono::steady_clock::now(), r.message});
          cv_.notify_all();
        }
      }
    });
  }
  ~LspClient() {
    close_input();
    if (pid_ > 0 && !exited_) {
      // give it a moment to end on EOF, then kill it
      for (int i = 0; i < 50 && !reaped(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (!exited_) {
        kill(pid_, SIGKILL);
        int st;
        waitpid(pid_, &st, 0);
      }
    }
    if (reader_.joinable()) reader_.join();
    if (out_ >= 0) close(out_);
  }

  bool running() const { return pid_ > 0; }
  void send(const nlohmann::json& msg) { transport_->write(msg); }
  void send_raw(const std::string& bytes) {
    size_t off = 0;
    while (off < bytes.size()) {
      ssize_t n = ::write(in_, bytes.data() + off, bytes.size() - off);
      if (n <= 0) return;
      off += static_cast<size_t>(n);
    }
  }
  void close_input() {
    if (in_ >= 0) {
      close(in_);
      in_ = -1;
    }
  }

  struct Received {
    std::chrono::steady_clock::time_point at;
    nlohmann::json msg;
  };
  // Waits for the first message (in arrival order, including ones received earlier and not yet
  // taken) for which `pred` holds, and takes it out of the inbox.
  std::optional<Received> wait_for(const std::function<bool(const nlohmann::json&)>& pred,
                                   std::chrono::milliseconds timeout = std::chrono::milliseconds(10000)) {
    std::unique_lock lk(mu_);
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      for (auto it = inbox_.begin(); it != inbox_.end(); ++it)
        if (pred(it->msg)) {
          Received r = *it;
          inbox_.erase(it);
          return r;
        }
      if (eof_) return std::nullopt;
      if (cv_.wait_until(lk, deadline) == std::cv_status::timeout) {
        for (auto it = inbox_.begin(); it != inbox_.end(); ++it)
          if (pred(it->msg)) {
            Received r = *it;
            inbox_.erase(it);
            return r;
          }
        return std::nullopt;
      }
    }
  }
  std::vector<nlohmann::json> unclaimed() {
    std::lock_guard lk(mu_);
    std::vector<nlohmann::json> v;
    for (auto& r : inbox_) v.push_back(r.msg);
    return v;
  }
  std::vector<Received> unclaimed_received() {
    std::lock_guard lk(mu_);
    return {inbox_.begin(), inbox_.end()};
  }
  void drop_inbox() {
    std::lock_guard lk(mu_);
    inbox_.clear();
  }
  // Waits for the child to exit; its exit status, or -1 on timeout / signal.
  int wait_exit(std::chrono::milliseconds timeout = std::chrono::milliseconds(10000)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!reaped()) {
      if (std::chrono::steady_clock::now() > deadline) return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return status_;
  }

 private:
  bool reaped() {
    if (exited_) return true;
    int st;
    pid_t r = waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      exited_ = true;
      status_ = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    }
    return exited_;
  }
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;
  bool exited_ = false;
  int status_ = -1;
  std::unique_ptr<lsp::Transport> transport_;
  std::thread reader_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Received> inbox_;
  bool eof_ = false;
};

// Does `actual` contain `pattern`? Objects: every key of the pattern, recursively; arrays: the
// same length, element by element; a string starting with `~`: contains the rest; scalars: equal.
inline bool json_contains(const nlohmann::json& actual, const nlohmann::json& pattern) {
  if (pattern.is_object()) {
    if (!actual.is_object()) return false;
    for (auto& [k, v] : pattern.items())
      if (!actual.contains(k) || !json_contains(actual[k], v)) return false;
    return true;
  }
  if (pattern.is_array()) {
    if (!actual.is_array() || actual.size() != pattern.size()) return false;
    for (size_t i = 0; i < pattern.size(); ++i)
      if (!json_contains(actual[i], pattern[i])) return false;
    return true;
  }
  if (pattern.is_string() && pattern.get<std::string>().rfind("~", 0) == 0)
    return actual.is_string() && actual.get<std::string>().find(pattern.get<std::string>().substr(1)) != std::string::npos;
  if (pattern.is_number() && actual.is_number()) return pattern.get<double>() == actual.get<double>();
  return actual == pattern;
}

}  // namespace tl::test
