#include "analyzer/core/parallel.h"

#include "analyzer/core/limits.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

namespace tl {
namespace {
thread_local bool t_analysis = false;
}

bool on_analysis_thread() { return t_analysis; }

size_t analysis_stack_bytes() {
  const std::optional<size_t> limit = address_space_limit();
  return limit ? std::clamp(*limit / 64, size_t{4} << 20, size_t{16} << 20) : kAnalysisStackBytes;
}

unsigned cpus_of_cfs(long long quota_us, long long period_us) {
  if (quota_us <= 0 || period_us <= 0) return 0;
  return static_cast<unsigned>(std::max<long long>(1, (quota_us + period_us - 1) / period_us));
}

unsigned cpus_of_cpu_max(std::string_view text) {
  // "<quota> <period>", the quota "max" where there is none
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  size_t space = text.find(' ');
  if (space == std::string_view::npos) return 0;
  std::string quota(text.substr(0, space)), period(text.substr(space + 1));
  if (quota == "max") return 0;
  char* end = nullptr;
  long long q = std::strtoll(quota.c_str(), &end, 10);
  if (end == quota.c_str() || *end) return 0;
  long long p = std::strtoll(period.c_str(), &end, 10);
  if (end == period.c_str() || *end) return 0;
  return cpus_of_cfs(q, p);
}

unsigned threads_within(size_t limit, size_t stack_bytes) {
  if (stack_bytes == 0) return 1;
  return static_cast<unsigned>(std::clamp<size_t>(limit / 8 / stack_bytes, 1, 1u << 16));
}

namespace {

std::string read_small(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  if (in) std::getline(in, s, '\0');
  return s;
}

// The smallest CPU quota of this process's cgroup and the cgroups above it (a quota is set on a
// container's own group or on one above), 0 where none is set or none can be read.
unsigned cgroup_cpus() {
  unsigned best = 0;
  auto take = [&](unsigned c) {
    if (c && (!best || c < best)) best = c;
  };
  std::ifstream in("/proc/self/cgroup");
  for (std::string line; std::getline(in, line);) {
    // "0::/path" (v2), "4:cpu,cpuacct:/path" (v1)
    size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    bool v2 = line.compare(0, a, "0") == 0 && controllers.empty();
    bool v1_cpu = false;
    for (size_t i = 0; i <= controllers.size();) {
      size_t j = controllers.find(',', i);
      if (j == std::string::npos) j = controllers.size();
      if (controllers.compare(i, j - i, "cpu") == 0) v1_cpu = true;
      i = j + 1;
    }
    if (!v2 && !v1_cpu) continue;
    // from the process's own group up to the root of the mount (inside a container the group's
    // path is often not below the mount; then only the mount's root is read)
    std::string base = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/cpu";
    for (std::string p = path;;) {
      std::string dir = base + (p == "/" ? "" : p);
      if (v2) take(cpus_of_cpu_max(read_small(dir + "/cpu.max")));
      else {
        std::string q = read_small(dir + "/cpu.cfs_quota_us"), per = read_small(dir + "/cpu.cfs_period_us");
        if (!q.empty() && !per.empty()) take(cpus_of_cfs(std::atoll(q.c_str()), std::atoll(per.c_str())));
      }
      if (p.empty() || p == "/") break;
      size_t slash = p.rfind('/');
      p = slash == 0 || slash == std::string::npos ? "/" : p.substr(0, slash);
    }
  }
  return best;
}

}  // namespace

unsigned default_threads() {
  static const unsigned n = [] {
    unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) cpus = std::max(1, CPU_COUNT(&set));
    if (unsigned quota = cgroup_cpus()) cpus = std::min(cpus, quota);
    return threads_under_limit(cpus);
  }();
  return n;
}

unsigned threads_under_limit(unsigned requested) {
  const auto limit = address_space_limit();
  unsigned n = limit ? std::min(requested, threads_within(*limit, analysis_stack_bytes())) : requested;
  return std::max(1u, n);
}

struct AnalysisThread::State {
  std::function<void()> fn;
  std::exception_ptr error;
  pthread_t id{};
  bool joined = false;

  static void* entry(void* p) {
    auto* s = static_cast<State*>(p);
    t_analysis = true;
    try {
      s->fn();
    } catch (...) {
      s->error = std::current_exception();
    }
    return nullptr;
  }
};

namespace {
std::atomic<int> g_starts_left{-1};  // refuse_thread_starts_after_for_testing; -1: no limit
}

void refuse_thread_starts_after_for_testing(int n) { g_starts_left = n < 0 ? -1 : n; }

AnalysisThread::AnalysisThread(std::function<void()> fn) {
  for (int left = g_starts_left.load(); left >= 0;) {
    if (left == 0) throw ThreadStartError("cannot start an analysis thread: refused for a test");
    if (g_starts_left.compare_exchange_weak(left, left - 1)) break;
  }
  s_ = new State;
  s_->fn = std::move(fn);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  int rc = pthread_attr_setstacksize(&attr, analysis_stack_bytes());
  if (rc == 0) rc = pthread_create(&s_->id, &attr, &State::entry, s_);
  pthread_attr_destroy(&attr);
  if (rc != 0) rc = pthread_create(&s_->id, nullptr, &State::entry, s_);  // address space is short
  if (rc != 0) {
    delete s_;
    s_ = nullptr;
    throw ThreadStartError(std::string("cannot start an analysis thread: ") + std::strerror(rc));
  }
}

AnalysisThread::AnalysisThread(AnalysisThread&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}

void AnalysisThread::join() {
  if (!s_ || s_->joined) return;
  pthread_join(s_->id, nullptr);
  s_->joined = true;
  if (s_->error) std::rethrow_exception(std::exchange(s_->error, nullptr));
}

AnalysisThread::~AnalysisThread() {
  if (!s_) return;
  if (!s_->joined) pthread_join(s_->id, nullptr);
  delete s_;
}

void on_analysis_stack(const std::function<void()>& fn) {
  if (t_analysis) return fn();
  AnalysisThread t(fn);
  t.join();
}

}  // namespace tl
