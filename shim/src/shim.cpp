// libtrainlint_shim: the C ABI that the Python bootstrap loads with ctypes (docs/runtime-protocol.md,
// "Shim C ABI"). It measures the GPU side of a run with CUPTI's Activity API and writes `gpu` records
// as JSON lines.
//
// Design notes
// - CUPTI is never linked. tl_shim_start() dlopen()s it (TRAINLINT_CUPTI first, then a copy already
//   loaded in the process, then libcupti.so / libcupti.so.13 / /usr/local/cuda/...) and resolves every
//   function with dlsym, so the library loads on machines without CUDA. Without the CUPTI headers at
//   build time (TRAINLINT_HAVE_CUPTI undefined) the library is host-only and says so in its status.
// - Records file: the shim appends to the SAME file as the bootstrap (rec-<pid>.jsonl), opened with
//   O_APPEND. Every write() the shim issues holds whole lines only, and so does every os.write() of
//   the bootstrap; with O_APPEND on a regular file each write lands at the end in one piece, so the
//   two writers never interleave inside a line and need no shared lock. Inside the shim a mutex
//   serialises the CUPTI thread and the caller's thread.
// - Clock: records are in CLOCK_MONOTONIC nanoseconds. When the CUPTI in use exports
//   cuptiActivityRegisterTimestampCallback, CUPTI takes its timestamps from our CLOCK_MONOTONIC
//   callback and no conversion is needed. Otherwise the offset between cuptiGetTimestamp() and
//   CLOCK_MONOTONIC is measured at start and again at every flush, and timestamps are converted by
//   interpolating between those samples.
// - Degradation: one status string, "ok" or "<state>: <reason>" with state no-driver, no-gpu, busy or
//   unavailable. The bootstrap writes it into the records as the `gpu_status` line.
// - Nothing throws across the ABI: every entry point catches everything. Handles (records fd, CUPTI
//   buffers, library handles) are owned by RAII types. The shim state is a heap singleton that is
//   never destroyed, so a CUPTI thread still delivering a buffer during process exit never touches a
//   destroyed object; its resources are released by tl_shim_stop(). After fork() the child's copy is
//   inert (every call checks the owner pid): CUPTI does not follow a fork.
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#if TRAINLINT_HAVE_CUPTI
#include <cupti_activity.h>
#include <cupti_result.h>
#include <cupti_version.h>
#endif

#define TL_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

int64_t mono_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

// ---- RAII handles ------------------------------------------------------------------------------

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  ~UniqueFd() { reset(); }
  void reset() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// A dlopen() handle. `pin()` keeps the library loaded for the life of the process: once CUPTI has
// our callbacks registered (or has hooked the driver), unloading it would leave dangling code.
class Library {
 public:
  Library() = default;
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  Library(Library&& o) noexcept : h_(std::exchange(o.h_, nullptr)), pinned_(o.pinned_), path_(std::move(o.path_)) {}
  Library& operator=(Library&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, nullptr);
      pinned_ = o.pinned_;
      path_ = std::move(o.path_);
    }
    return *this;
  }
  ~Library() { reset(); }
  bool open(const std::string& path, int flags, std::string* err) {
    reset();
    dlerror();
    h_ = dlopen(path.c_str(), flags);
    if (!h_) {
      const char* e = dlerror();
      if (err) *err = e ? e : (path + ": dlopen failed");
      return false;
    }
    path_ = path;
    return true;
  }
  void* sym(const char* name) const { return h_ ? dlsym(h_, name) : nullptr; }
  void pin() noexcept { pinned_ = true; }
  void reset() noexcept {
    if (h_ && !pinned_) dlclose(h_);
    h_ = nullptr;
  }
  explicit operator bool() const noexcept { return h_ != nullptr; }
  const std::string& path() const { return path_; }
  // Where the library really lives (resolves libcupti.so -> /usr/local/cuda/lib64/libcupti.so.13).
  std::string real_path(const char* any_symbol) const {
    Dl_info info{};
    void* s = sym(any_symbol);
    if (s && dladdr(s, &info) && info.dli_fname) return info.dli_fname;
    return path_;
  }

 private:
  void* h_ = nullptr;
  bool pinned_ = false;
  std::string path_;
};

struct FreeDeleter {
  void operator()(uint8_t* p) const noexcept { std::free(p); }
};
using ActivityBuffer = std::unique_ptr<uint8_t, FreeDeleter>;

// ---- JSON helpers ------------------------------------------------------------------------------

void append_int(std::string& out, int64_t v) {
  char buf[32];
  int n = std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  out.append(buf, static_cast<size_t>(n));
}

void append_json_string(std::string& out, const char* s, size_t max_bytes = 4096) {
  out.push_back('"');
  size_t n = 0;
  for (const unsigned char* p = reinterpret_cast<const unsigned char*>(s); p && *p && n < max_bytes; ++p, ++n) {
    unsigned char c = *p;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  // Never cut a UTF-8 sequence in the middle: drop a trailing partial sequence.
  if (n == max_bytes) {
    size_t end = out.size();
    size_t i = end;
    while (i > 0 && (static_cast<unsigned char>(out[i - 1]) & 0xC0) == 0x80) --i;
    if (i > 0 && static_cast<unsigned char>(out[i - 1]) >= 0xC0) out.resize(i - 1);
  }
  out.push_back('"');
}

// ---- the records file --------------------------------------------------------------------------

class RecordSink {
 public:
  bool open(const char* path, std::string* err) {
    int fd = ::open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      if (err) *err = std::string("cannot open records file ") + path + ": " + std::strerror(errno);
      return false;
    }
    fd_ = UniqueFd(fd);
    return true;
  }
  // `lines` holds whole '\n'-terminated lines. Each write() carries whole lines only (split at line
  // ends past 64 KiB), so it never interleaves inside a line with the bootstrap's own writes.
  void write_lines(const std::string& lines) noexcept {
    if (!fd_ || lines.empty()) return;
    size_t pos = 0;
    while (pos < lines.size()) {
      size_t len = lines.size() - pos;
      if (len > kChunk) {
        size_t cut = lines.rfind('\n', pos + kChunk);
        len = (cut == std::string::npos || cut < pos) ? len : cut + 1 - pos;
      }
      if (!write_all(lines.data() + pos, len)) return;
      pos += len;
    }
  }
  void close() noexcept { fd_.reset(); }
  bool is_open() const noexcept { return static_cast<bool>(fd_); }

 private:
  static constexpr size_t kChunk = 64 * 1024;
  bool write_all(const char* p, size_t n) noexcept {
    while (n > 0) {
      ssize_t w = ::write(fd_.get(), p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        return false;  // disk full or similar: GPU records are lost, the program goes on
      }
      p += w;
      n -= static_cast<size_t>(w);
    }
    return true;
  }
  UniqueFd fd_;
};

// ---- CUPTI -------------------------------------------------------------------------------------

#if TRAINLINT_HAVE_CUPTI
#if CUPTI_API_VERSION >= 130000
using KernelRecord = CUpti_ActivityKernel10;
using MemcpyRecord = CUpti_ActivityMemcpy6;
using SyncRecord = CUpti_ActivitySynchronization2;
#else
using KernelRecord = CUpti_ActivityKernel9;
using MemcpyRecord = CUpti_ActivityMemcpy5;
using SyncRecord = CUpti_ActivitySynchronization;
#endif
using MemsetRecord = CUpti_ActivityMemset4;

// A CUPTI newer than these headers writes a newer record version (CUDA 13.2 has Kernel11). Each
// version so far only appended fields, so the fields read here sit at the same offsets in every
// version since CUDA 6.5's Kernel4 / Memcpy / Memset2 / Synchronization; the build fails if a
// header ever moves one of them.
#define TL_SAME_OFFSET(A, B, f) static_assert(offsetof(A, f) == offsetof(B, f), #A "." #f " moved since " #B)
TL_SAME_OFFSET(KernelRecord, CUpti_ActivityKernel4, start);
TL_SAME_OFFSET(KernelRecord, CUpti_ActivityKernel4, end);
TL_SAME_OFFSET(KernelRecord, CUpti_ActivityKernel4, deviceId);
TL_SAME_OFFSET(KernelRecord, CUpti_ActivityKernel4, contextId);
TL_SAME_OFFSET(KernelRecord, CUpti_ActivityKernel4, streamId);
TL_SAME_OFFSET(KernelRecord, CUpti_ActivityKernel4, name);
TL_SAME_OFFSET(MemcpyRecord, CUpti_ActivityMemcpy, copyKind);
TL_SAME_OFFSET(MemcpyRecord, CUpti_ActivityMemcpy, srcKind);
TL_SAME_OFFSET(MemcpyRecord, CUpti_ActivityMemcpy, dstKind);
TL_SAME_OFFSET(MemcpyRecord, CUpti_ActivityMemcpy, bytes);
TL_SAME_OFFSET(MemcpyRecord, CUpti_ActivityMemcpy, start);
TL_SAME_OFFSET(MemcpyRecord, CUpti_ActivityMemcpy, end);
TL_SAME_OFFSET(MemcpyRecord, CUpti_ActivityMemcpy, deviceId);
TL_SAME_OFFSET(MemcpyRecord, CUpti_ActivityMemcpy, contextId);
TL_SAME_OFFSET(MemcpyRecord, CUpti_ActivityMemcpy, streamId);
TL_SAME_OFFSET(MemsetRecord, CUpti_ActivityMemset2, bytes);
TL_SAME_OFFSET(MemsetRecord, CUpti_ActivityMemset2, start);
TL_SAME_OFFSET(MemsetRecord, CUpti_ActivityMemset2, end);
TL_SAME_OFFSET(MemsetRecord, CUpti_ActivityMemset2, deviceId);
TL_SAME_OFFSET(MemsetRecord, CUpti_ActivityMemset2, contextId);
TL_SAME_OFFSET(MemsetRecord, CUpti_ActivityMemset2, streamId);
TL_SAME_OFFSET(SyncRecord, CUpti_ActivitySynchronization, type);
TL_SAME_OFFSET(SyncRecord, CUpti_ActivitySynchronization, start);
TL_SAME_OFFSET(SyncRecord, CUpti_ActivitySynchronization, end);
TL_SAME_OFFSET(SyncRecord, CUpti_ActivitySynchronization, contextId);
TL_SAME_OFFSET(SyncRecord, CUpti_ActivitySynchronization, streamId);
#undef TL_SAME_OFFSET

struct CuptiApi {
  CUptiResult (*GetVersion)(uint32_t*) = nullptr;
  CUptiResult (*GetResultString)(CUptiResult, const char**) = nullptr;
  CUptiResult (*GetTimestamp)(uint64_t*) = nullptr;
  CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc) = nullptr;
  CUptiResult (*ActivityRegisterTimestampCallback)(CUpti_TimestampCallbackFunc) = nullptr;  // optional
  CUptiResult (*ActivityEnable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*ActivityDisable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*ActivityFlushAll)(uint32_t) = nullptr;
  CUptiResult (*ActivityGetNextRecord)(uint8_t*, size_t, CUpti_Activity**) = nullptr;
  CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t*) = nullptr;

  // Resolves every function; returns the name of the first required one that is missing.
  const char* resolve(const Library& lib) {
    auto get = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(lib.sym(name));
      return fn != nullptr;
    };
    if (!get(GetVersion, "cuptiGetVersion")) return "cuptiGetVersion";
    if (!get(GetResultString, "cuptiGetResultString")) return "cuptiGetResultString";
    if (!get(GetTimestamp, "cuptiGetTimestamp")) return "cuptiGetTimestamp";
    if (!get(ActivityRegisterCallbacks, "cuptiActivityRegisterCallbacks")) return "cuptiActivityRegisterCallbacks";
    if (!get(ActivityEnable, "cuptiActivityEnable")) return "cuptiActivityEnable";
    if (!get(ActivityDisable, "cuptiActivityDisable")) return "cuptiActivityDisable";
    if (!get(ActivityFlushAll, "cuptiActivityFlushAll")) return "cuptiActivityFlushAll";
    if (!get(ActivityGetNextRecord, "cuptiActivityGetNextRecord")) return "cuptiActivityGetNextRecord";
    if (!get(ActivityGetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords")) return "cuptiActivityGetNumDroppedRecords";
    get(ActivityRegisterTimestampCallback, "cuptiActivityRegisterTimestampCallback");
    return nullptr;
  }
};

const char* copy_kind_name(uint8_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
    default: return "unknown";
  }
}

const char* memory_kind_name(uint8_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return "pageable";
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return "pinned";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC: return "device";
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY: return "array";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC: return "managed";
    default: return "unknown";
  }
}

const char* sync_type_name(uint32_t t) {
  switch (t) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return "event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return "stream-wait-event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return "stream";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return "context";
    default: return "unknown";
  }
}

uint64_t CUPTIAPI tl_cupti_timestamp() { return static_cast<uint64_t>(mono_ns()); }
#endif  // TRAINLINT_HAVE_CUPTI

// ---- the shim ----------------------------------------------------------------------------------

class Shim {
 public:
  static Shim& get() {
    static Shim* s = new Shim();  // never destroyed: see the design notes at the top
    return *s;
  }

  int start(const char* records_path) noexcept;
  const char* status() noexcept;
  int flush() noexcept;
  void stop() noexcept;
  void release_cupti() noexcept;  // CUPTI flushed and let go (torch.profiler wants it); records go on
  // Automatic GC pauses, timed in C: gc.callbacks holds the exported tl_shim_gc_event itself (a
  // ctypes function object), so no Python bytecode runs inside a gc callback, where CPython would
  // swallow an exception a signal handler raises there (a ^C's KeyboardInterrupt).
  void gc_event() noexcept;
  void gc_record(bool on) noexcept;
  void gc_explicit(int delta) noexcept;

#if TRAINLINT_HAVE_CUPTI
  static void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records);
  static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t size, size_t valid);
#endif

 private:
  enum class Phase { idle, running, stopped };

  bool owned_here() const noexcept { return owner_pid_ == getpid(); }
  void set_status(const char* state, const std::string& reason) {
    status_ = reason.empty() ? std::string(state) : std::string(state) + ": " + reason;
  }
  void note(const std::string& text);  // a `note` line in the records, written now

#if TRAINLINT_HAVE_CUPTI
  void start_cupti();
  bool load_cupti(std::string* tried);
  std::string result_text(CUptiResult r) const;
  void measure_offset();
  int64_t to_mono(uint64_t ts) const;
  void process_buffer(uint8_t* buffer, size_t valid, CUcontext ctx, uint32_t stream);
  void format_record(const CUpti_Activity* rec, std::string& out);
  void flush_cupti(bool forced);

  CuptiApi api_;
  Library cupti_;
  bool clock_callback_ = false;                       // CUPTI timestamps are CLOCK_MONOTONIC
  std::vector<std::pair<uint64_t, int64_t>> offsets_;  // (cupti ts, mono - cupti), ascending
  std::vector<CUpti_ActivityKind> enabled_;
  std::map<uint32_t, uint32_t> context_device_;  // contextId -> deviceId, learned from records
  std::atomic<int> outstanding_buffers_{0};
  uint64_t records_written_ = 0, records_incomplete_ = 0;
  // Detail budget: the first `detail_left_` kernel / memset / sync records are written one line
  // each (names included, for the trace); after that, kernels and memsets are written per buffer
  // as merged busy intervals per device (`gpu_busy`), and syncs are only counted. Copies are
  // always written one by one: they are few, and TL202 needs each one's source memory kind.
  int64_t detail_left_ = 100000;
  bool aggregated_ = false;
  uint64_t syncs_skipped_ = 0;
  struct Busy {
    std::vector<std::pair<int64_t, int64_t>> iv;
    int64_t kernels = 0, memsets = 0;
  };
  std::map<uint32_t, Busy> busy_;  // device -> this buffer's intervals past the budget
  void write_busy(std::string& out);
  size_t dropped_ = 0;
#endif

  void flush_gc() noexcept;  // writes gc_buf_ (takes gc_mu_, then mu_)
  std::mutex gc_mu_;         // guards the gc_ fields; taken before mu_, never the other way round
  bool gc_on_ = false;
  int gc_explicit_ = 0;
  uint64_t gc_calls_ = 0;  // gc calls its callbacks in pairs: start, stop
  int64_t gc_t0_ = 0;
  std::string gc_buf_;
  bool cupti_released_ = false;

  std::mutex mu_;  // guards everything below and the sink
  Phase phase_ = Phase::idle;
  bool stopping_ = false;
  pid_t owner_pid_ = 0;
  RecordSink sink_;
  std::string status_ = "unavailable: tl_shim_start was not called";
  std::string status_copy_;  // returned by tl_shim_status(); stable until the next status call
};

void Shim::note(const std::string& text) {
  std::string line = "{\"t\":\"note\",\"source\":\"shim\",\"text\":";
  append_json_string(line, text.c_str());
  line += "}\n";
  sink_.write_lines(line);
}

int Shim::start(const char* records_path) noexcept {
  try {
    std::lock_guard<std::mutex> lock(mu_);
    if (phase_ != Phase::idle && owned_here()) return phase_ == Phase::running ? 0 : -1;
    if (phase_ != Phase::idle) {
      // A forked child calling start: CUPTI state is the parent's; measure nothing here.
      set_status("unavailable", "the shim was started in the parent process; CUPTI does not follow fork()");
      return -1;
    }
    owner_pid_ = getpid();
    phase_ = Phase::running;
    if (!records_path || !*records_path) {
      set_status("unavailable", "no records path given to tl_shim_start");
      return -1;
    }
    std::string err;
    if (!sink_.open(records_path, &err)) {
      set_status("unavailable", err);
      return -1;
    }
#if TRAINLINT_HAVE_CUPTI
    start_cupti();
#else
    set_status("unavailable", "the shim was built without the CUPTI headers (host-only build)");
#endif
    return 0;
  } catch (...) {
    status_ = "unavailable: internal error in tl_shim_start";
    return -1;
  }
}

const char* Shim::status() noexcept {
  try {
    std::lock_guard<std::mutex> lock(mu_);
    status_copy_ = status_;
    return status_copy_.c_str();
  } catch (...) {
    return "unavailable: internal error in tl_shim_status";
  }
}

int Shim::flush() noexcept {
  try {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (phase_ != Phase::running || stopping_ || !owned_here()) return 0;
    }
    flush_gc();
#if TRAINLINT_HAVE_CUPTI
    bool released;
    {
      std::lock_guard<std::mutex> lock(mu_);
      released = cupti_released_;
    }
    if (!released) flush_cupti(/*forced=*/false);
#endif
    return 0;
  } catch (...) {
    return -1;
  }
}

void Shim::stop() noexcept {
  try {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (phase_ != Phase::running || stopping_ || !owned_here()) return;
    }
    release_cupti();
    flush_gc();
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;  // a concurrent flush() or stop() now returns at once
    phase_ = Phase::stopped;
    sink_.close();
  } catch (...) {
  }
}

void Shim::release_cupti() noexcept {
  try {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (phase_ != Phase::running || stopping_ || cupti_released_ || !owned_here()) return;
      cupti_released_ = true;  // flush() leaves CUPTI alone from now on
    }
#if TRAINLINT_HAVE_CUPTI
    // Neither under mu_: CUPTI may deliver buffers on this thread, and buffer_completed takes mu_.
    flush_cupti(/*forced=*/true);
    for (auto k : enabled_) api_.ActivityDisable(k);
    std::lock_guard<std::mutex> lock(mu_);
    enabled_.clear();
    if (dropped_ > 0) note("CUPTI dropped " + std::to_string(dropped_) + " activity records (buffers full)");
    if (aggregated_)
      note("after the first GPU activity records, kernels and memsets were written as merged busy intervals per "
           "device (TRAINLINT_GPU_DETAIL sets how many are written one by one)" +
           (syncs_skipped_ ? "; " + std::to_string(syncs_skipped_) + " synchronisation records were counted, not written"
                           : std::string()));
    if (records_incomplete_ > 0)
      note(std::to_string(records_incomplete_) + " GPU activity records were incomplete (no end time) and were skipped");
#endif
  } catch (...) {
  }
}

void Shim::gc_record(bool on) noexcept {
  std::lock_guard<std::mutex> lock(gc_mu_);
  gc_on_ = on;
}

void Shim::gc_explicit(int delta) noexcept {
  std::lock_guard<std::mutex> lock(gc_mu_);
  gc_explicit_ += delta;
}

void Shim::gc_event() noexcept {
  try {
    const int64_t now = mono_ns();
    bool full = false;
    {
      std::lock_guard<std::mutex> lock(gc_mu_);
      if ((gc_calls_++ & 1) == 0) {
        gc_t0_ = gc_explicit_ > 0 ? 0 : now;  // an explicit gc.collect() is its call site's, not a pause
        return;
      }
      if (!gc_on_ || gc_t0_ == 0) return;
      gc_buf_ += "{\"t\":\"gc\",\"start\":";
      append_int(gc_buf_, gc_t0_);
      gc_buf_ += ",\"end\":";
      append_int(gc_buf_, now);
      gc_buf_ += "}\n";
      gc_t0_ = 0;
      full = gc_buf_.size() > 64 * 1024;
    }
    if (full) flush_gc();
  } catch (...) {
  }
}

void Shim::flush_gc() noexcept {
  try {
    std::string lines;
    {
      std::lock_guard<std::mutex> lock(gc_mu_);
      lines.swap(gc_buf_);
    }
    if (lines.empty()) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (phase_ == Phase::running && owned_here()) sink_.write_lines(lines);
  } catch (...) {
  }
}

#if TRAINLINT_HAVE_CUPTI

std::string Shim::result_text(CUptiResult r) const {
  const char* s = nullptr;
  std::string name = "CUPTI error";
  if (api_.GetResultString && api_.GetResultString(r, &s) == CUPTI_SUCCESS && s) name = s;
  return name + " (" + std::to_string(static_cast<int>(r)) + ")";
}

bool Shim::load_cupti(std::string* tried) {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("TRAINLINT_CUPTI"); env && *env) candidates.push_back(env);
  // A CUPTI the program (torch) already loaded: use the same copy, never a second one.
  for (const char* soname : {"libcupti.so.13", "libcupti.so.12", "libcupti.so"}) {
    Library lib;
    if (lib.open(soname, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD, nullptr)) {
      candidates.insert(candidates.begin() + (candidates.empty() ? 0 : 1), soname);
      break;
    }
  }
  for (const char* p : {"libcupti.so", "libcupti.so.13", "/usr/local/cuda/lib64/libcupti.so",
                        "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so", "libcupti.so.12"})
    candidates.push_back(p);
  for (const auto& c : candidates) {
    std::string err;
    if (cupti_.open(c, RTLD_NOW | RTLD_LOCAL, &err)) {
      if (const char* missing = api_.resolve(cupti_)) {
        *tried += (tried->empty() ? "" : "; ") + c + ": no symbol " + missing;
        cupti_.reset();
        continue;
      }
      return true;
    }
    *tried += (tried->empty() ? "" : "; ") + err;
  }
  return false;
}

void Shim::measure_offset() {
  // Three tries; keep the tightest bracket around cuptiGetTimestamp().
  int64_t best_width = INT64_MAX, best_offset = 0;
  uint64_t best_ts = 0;
  for (int i = 0; i < 3; ++i) {
    uint64_t ts = 0;
    int64_t a = mono_ns();
    if (api_.GetTimestamp(&ts) != CUPTI_SUCCESS) return;
    int64_t b = mono_ns();
    if (b - a < best_width) {
      best_width = b - a;
      best_ts = ts;
      best_offset = a + (b - a) / 2 - static_cast<int64_t>(ts);
    }
  }
  if (!offsets_.empty() && best_ts <= offsets_.back().first) return;
  offsets_.emplace_back(best_ts, best_offset);
}

int64_t Shim::to_mono(uint64_t ts) const {
  if (clock_callback_ || offsets_.empty()) return static_cast<int64_t>(ts);
  // Interpolate the offset between the samples around ts (they are ascending in cupti time).
  auto it = std::upper_bound(offsets_.begin(), offsets_.end(), ts,
                             [](uint64_t v, const std::pair<uint64_t, int64_t>& s) { return v < s.first; });
  if (it == offsets_.begin()) return static_cast<int64_t>(ts) + it->second;
  if (it == offsets_.end()) return static_cast<int64_t>(ts) + offsets_.back().second;
  const auto& lo = *(it - 1);
  const auto& hi = *it;
  double f = static_cast<double>(ts - lo.first) / static_cast<double>(hi.first - lo.first);
  int64_t off = lo.second + static_cast<int64_t>(f * static_cast<double>(hi.second - lo.second));
  return static_cast<int64_t>(ts) + off;
}

void Shim::start_cupti() {
  if (const char* d = std::getenv("TRAINLINT_GPU_DETAIL"); d && *d) {
    char* end = nullptr;
    long long v = std::strtoll(d, &end, 10);
    if (end && *end == '\0' && v >= 0) detail_left_ = v;
  }
  std::string tried;
  if (!load_cupti(&tried)) {
    set_status("unavailable", "libcupti not found (tried " + tried + ")");
    return;
  }
  // From here on CUPTI may hold our callbacks: never unload it.
  cupti_.pin();
  uint32_t version = 0;
  api_.GetVersion(&version);
  const std::string where = "CUPTI API " + std::to_string(version) + " from " + cupti_.real_path("cuptiGetVersion");

  // Is there a driver at all? (No cuInit here: initialising CUDA before the program forks its
  // DataLoader workers would change what the program can do.)
  std::string driver_err;
  bool have_driver = false;
  {
    Library cuda;
    have_driver = cuda.open("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD, nullptr) ||
                  cuda.open("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL, &driver_err);
  }

  if (api_.ActivityRegisterTimestampCallback &&
      api_.ActivityRegisterTimestampCallback(&tl_cupti_timestamp) == CUPTI_SUCCESS)
    clock_callback_ = true;
  measure_offset();

  CUptiResult r = api_.ActivityRegisterCallbacks(&Shim::buffer_requested, &Shim::buffer_completed);
  if (r != CUPTI_SUCCESS) {
    set_status("unavailable", "cuptiActivityRegisterCallbacks: " + result_text(r) + "; " + where);
    return;
  }
  r = api_.ActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (r != CUPTI_SUCCESS) {
    const std::string what = "cuptiActivityEnable(CONCURRENT_KERNEL): " + result_text(r);
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
      set_status("busy", "another CUPTI subscriber (a profiler) is attached: " + what);
    } else if (!have_driver) {
      set_status("no-driver", "libcuda.so.1 cannot be loaded (" + driver_err + "); " + what + "; " + where);
    } else if (r == CUPTI_ERROR_UNKNOWN || r == CUPTI_ERROR_NOT_INITIALIZED) {
      set_status("no-driver", "the CUDA driver is not usable: " + what + "; " + where);
    } else if (r == CUPTI_ERROR_INVALID_DEVICE) {
      set_status("no-gpu", what + "; " + where);
    } else {
      set_status("unavailable", what + "; " + where);
    }
    return;
  }
  enabled_.push_back(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  std::string partial;
  for (auto [kind, name] : {std::pair{CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY"}, std::pair{CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET"},
                            std::pair{CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "SYNCHRONIZATION"}}) {
    r = api_.ActivityEnable(kind);
    if (r == CUPTI_SUCCESS)
      enabled_.push_back(kind);
    else
      partial += std::string(partial.empty() ? "" : ", ") + name + ": " + result_text(r);
  }
  if (!partial.empty()) note("some CUPTI activity kinds could not be enabled: " + partial);

  // A driver without any GPU node: CUPTI enables fine but nothing will ever run.
  const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES");
  bool gpu_node = false;
  if (DIR* d = opendir("/dev")) {
    while (dirent* e = readdir(d)) {
      const char* n = e->d_name;
      if ((std::strncmp(n, "nvidia", 6) == 0 && n[6] >= '0' && n[6] <= '9') || std::strcmp(n, "dxg") == 0) gpu_node = true;
    }
    closedir(d);
  }
  if (!have_driver) {
    // Only a CUPTI that is not the real one gets this far without a driver.
    set_status("no-driver", "libcuda.so.1 cannot be loaded (" + driver_err + "); " + where);
  } else if (cvd && (std::strcmp(cvd, "") == 0 || std::strcmp(cvd, "-1") == 0)) {
    set_status("no-gpu", std::string("CUDA_VISIBLE_DEVICES='") + cvd + "' hides every GPU; " + where);
  } else if (!gpu_node) {
    set_status("no-gpu", "no /dev/nvidia<N> device node (driver present, no GPU visible); " + where);
  } else {
    status_ = "ok";
    note(std::string("CUPTI activity tracing on: ") + where +
         (clock_callback_ ? "; timestamps from CLOCK_MONOTONIC via cuptiActivityRegisterTimestampCallback"
                          : "; timestamps converted with a measured cuptiGetTimestamp offset"));
  }
}

void CUPTIAPI Shim::buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  constexpr size_t kSize = 2 * 1024 * 1024;
  *max_records = 0;
  ActivityBuffer b(static_cast<uint8_t*>(std::aligned_alloc(8, kSize)));
  if (!b) {
    *buffer = nullptr;
    *size = 0;
    return;  // CUPTI drops the records; counted through cuptiActivityGetNumDroppedRecords
  }
  get().outstanding_buffers_.fetch_add(1);
  *size = kSize;
  *buffer = b.release();  // owned by CUPTI until buffer_completed hands it back
}

void CUPTIAPI Shim::buffer_completed(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t, size_t valid) {
  ActivityBuffer owned(buffer);  // freed however we leave
  Shim& s = get();
  s.outstanding_buffers_.fetch_sub(1);
  try {
    s.process_buffer(owned.get(), valid, ctx, stream);
  } catch (...) {
  }
}

void Shim::format_record(const CUpti_Activity* rec, std::string& out) {
  auto head = [&](const char* kind, uint64_t start, uint64_t end) -> bool {
    if (start == 0 || end == 0 || end < start) {
      ++records_incomplete_;
      return false;
    }
    out += "{\"t\":\"gpu\",\"kind\":\"";
    out += kind;
    out += "\",\"start\":";
    append_int(out, to_mono(start));
    out += ",\"end\":";
    append_int(out, to_mono(end));
    return true;
  };
  // the stream and device fields every kernel / memcpy / memset record carries
  auto where = [&](uint32_t context, uint32_t stream, uint32_t device) {
    context_device_[context] = device;
    out += ",\"stream\":";
    append_int(out, stream);
    out += ",\"device\":";
    append_int(out, device);
  };
  // past the detail budget: into this buffer's busy intervals
  auto divert = [&](uint64_t start, uint64_t end, uint32_t context, uint32_t device, bool kernel) -> bool {
    if (detail_left_ > 0) {
      --detail_left_;
      return false;
    }
    if (start == 0 || end == 0 || end < start) {
      ++records_incomplete_;
      return true;
    }
    aggregated_ = true;
    context_device_[context] = device;
    Busy& b = busy_[device];
    b.iv.emplace_back(to_mono(start), to_mono(end));
    ++(kernel ? b.kernels : b.memsets);
    ++records_written_;
    return true;
  };
  switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      auto* k = reinterpret_cast<const KernelRecord*>(rec);
      if (divert(k->start, k->end, k->contextId, k->deviceId, true)) return;
      if (!head("kernel", k->start, k->end)) return;
      where(k->contextId, k->streamId, k->deviceId);
      out += ",\"name\":";
      append_json_string(out, k->name ? k->name : "", 160);
      out += "}\n";
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      auto* m = reinterpret_cast<const MemcpyRecord*>(rec);
      if (!head("memcpy", m->start, m->end)) return;
      where(m->contextId, m->streamId, m->deviceId);
      out += ",\"bytes\":";
      append_int(out, static_cast<int64_t>(m->bytes));
      out += ",\"copy\":\"";
      out += copy_kind_name(m->copyKind);
      out += "\",\"src_kind\":\"";
      out += memory_kind_name(m->srcKind);
      out += "\",\"dst_kind\":\"";
      out += memory_kind_name(m->dstKind);
      out += "\"}\n";
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      auto* m = reinterpret_cast<const MemsetRecord*>(rec);
      if (divert(m->start, m->end, m->contextId, m->deviceId, false)) return;
      if (!head("memset", m->start, m->end)) return;
      where(m->contextId, m->streamId, m->deviceId);
      out += ",\"bytes\":";
      append_int(out, static_cast<int64_t>(m->bytes));
      out += "}\n";
      break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      auto* y = reinterpret_cast<const SyncRecord*>(rec);
      if (detail_left_ <= 0) {
        ++syncs_skipped_;
        return;
      }
      --detail_left_;
      if (!head("sync", y->start, y->end)) return;
      out += ",\"stream\":";
      if (y->streamId == CUPTI_SYNCHRONIZATION_INVALID_VALUE)
        out += "null";
      else
        append_int(out, y->streamId);
      out += ",\"device\":";
      auto it = context_device_.find(y->contextId);
      if (it == context_device_.end())
        out += "null";
      else
        append_int(out, it->second);
      out += ",\"sync\":\"";
      out += sync_type_name(static_cast<uint32_t>(y->type));
      out += "\"}\n";
      break;
    }
    default:
      return;
  }
  ++records_written_;
}

void Shim::process_buffer(uint8_t* buffer, size_t valid, CUcontext ctx, uint32_t stream) {
  std::lock_guard<std::mutex> lock(mu_);
  if (phase_ != Phase::running || !owned_here()) return;
  std::string out;
  out.reserve(valid / 2 + 256);
  CUpti_Activity* rec = nullptr;
  while (valid > 0 && api_.ActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
    format_record(rec, out);
    if (out.size() > (1u << 20)) {
      sink_.write_lines(out);
      out.clear();
    }
  }
  write_busy(out);
  sink_.write_lines(out);
  // Activity records prove a working GPU, whatever the start-up checks guessed.
  if (records_written_ > 0 && (status_.rfind("no-gpu", 0) == 0 || status_.rfind("no-driver", 0) == 0)) status_ = "ok";
  size_t dropped = 0;
  if (api_.ActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS) dropped_ += dropped;
}

// One or more `gpu_busy` lines per device: the buffer's diverted intervals, sorted and merged where
// they overlap or touch (the union is exact: a gap of even 1 ns stays a gap), as offsets from
// `base` and durations, so a saturated GPU costs a few bytes per kernel instead of a line.
void Shim::write_busy(std::string& out) {
  constexpr size_t kPerLine = 4096;
  for (auto& [device, b] : busy_) {
    if (b.iv.empty()) continue;
    std::sort(b.iv.begin(), b.iv.end());
    std::vector<std::pair<int64_t, int64_t>> merged;
    for (auto& iv : b.iv) {
      if (!merged.empty() && iv.first <= merged.back().second)
        merged.back().second = std::max(merged.back().second, iv.second);
      else
        merged.push_back(iv);
    }
    for (size_t at = 0; at < merged.size(); at += kPerLine) {
      const size_t stop = std::min(merged.size(), at + kPerLine);
      const int64_t base = merged[at].first;
      out += "{\"t\":\"gpu_busy\",\"device\":";
      append_int(out, device);
      out += ",\"kernels\":";
      append_int(out, at == 0 ? b.kernels : 0);  // the counts go with the first line
      out += ",\"memsets\":";
      append_int(out, at == 0 ? b.memsets : 0);
      out += ",\"base\":";
      append_int(out, base);
      out += ",\"iv\":[";
      for (size_t i = at; i < stop; ++i) {
        if (i > at) out += ',';
        append_int(out, merged[i].first - base);
        out += ',';
        append_int(out, merged[i].second - merged[i].first);
      }
      out += "]}\n";
    }
    b = Busy{};
  }
}

void Shim::flush_cupti(bool forced) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (enabled_.empty()) return;
    if (!clock_callback_) measure_offset();
  }
  // Not under mu_: cuptiActivityFlushAll calls buffer_completed on this thread, which takes mu_.
  api_.ActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

#endif  // TRAINLINT_HAVE_CUPTI

}  // namespace

// ---- the C ABI ---------------------------------------------------------------------------------

TL_EXPORT int tl_shim_start(const char* records_path) { return Shim::get().start(records_path); }

TL_EXPORT const char* tl_shim_status(void) { return Shim::get().status(); }

TL_EXPORT int tl_shim_flush(void) { return Shim::get().flush(); }

TL_EXPORT void tl_shim_stop(void) { Shim::get().stop(); }

TL_EXPORT void tl_shim_release_cupti(void) { Shim::get().release_cupti(); }

// gc.callbacks entry (ctypes, argtypes py_object x2: the phase and info objects are not read; gc
// calls every callback at the start and at the stop of each collection).
TL_EXPORT void tl_shim_gc_event(void*, void*) { Shim::get().gc_event(); }

TL_EXPORT void tl_shim_gc_record(int on) { Shim::get().gc_record(on != 0); }

TL_EXPORT void tl_shim_gc_explicit(int delta) { Shim::get().gc_explicit(delta); }

TL_EXPORT long long tl_shim_now_ns(void) { return static_cast<long long>(mono_ns()); }
