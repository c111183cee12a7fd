#include "analyzer/core/parallel.h"

#include "analyzer/core/limits.h"

#include <pthread.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <utility>

namespace tl {
namespace {
thread_local bool t_analysis = false;
}

bool on_analysis_thread() { return t_analysis; }

size_t analysis_stack_bytes() {
  const std::optional<size_t> limit = address_space_limit();
  return limit ? std::clamp(*limit / 64, size_t{4} << 20, kAnalysisStackBytes) : kAnalysisStackBytes;
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

AnalysisThread::AnalysisThread(std::function<void()> fn) : s_(new State) {
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
