// A stand-in for libcupti, for tests on machines without a GPU (tests/runtime/shim_test.cpp).
// The shim loads it through TRAINLINT_CUPTI exactly as it loads the real one. It exports the
// functions the shim resolves, with the real CUPTI record layouts (the CUPTI headers), and on
// cuptiActivityFlushAll hands the shim one buffer of synthetic records: a kernel on each of two
// streams, a pageable and a pinned host-to-device copy, a memset and a stream synchronisation,
// plus one kernel with no end time (an incomplete record the shim must skip).
//
// FAKE_CUPTI_MODE selects the behaviour:
//   ok       timestamps come from the client's cuptiActivityRegisterTimestampCallback
//   offset   no timestamp callback: CUPTI's own clock is CLOCK_REALTIME (the shim converts)
//   busy     cuptiActivityEnable fails with CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
//   unknown  cuptiActivityEnable fails with CUPTI_ERROR_UNKNOWN (as without a driver)
//   driven   no synthetic records: the program under test says what its "GPU" did through
//            fake_cupti_add() (loaded with ctypes from the same path), and each flush hands the
//            shim those records. Timestamps as in ok mode. Lets a CPU test drive the whole
//            `trainlint run` chain (bootstrap, shim, records, merge, report) with GPU activity
//            placed where a real GPU would have put it.
#include <cupti_activity.h>
#include <cupti_result.h>
#include <time.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

CUpti_BuffersCallbackRequestFunc g_request = nullptr;
CUpti_BuffersCallbackCompleteFunc g_complete = nullptr;
CUpti_TimestampCallbackFunc g_timestamp = nullptr;
bool g_enabled = false;

std::string mode() {
  const char* m = std::getenv("FAKE_CUPTI_MODE");
  return m ? m : "ok";
}

uint64_t fake_now() {
  if (g_timestamp) return g_timestamp();
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

size_t record_size(CUpti_ActivityKind k) {
  size_t s = 0;
  switch (k) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: s = sizeof(CUpti_ActivityKernel10); break;
    case CUPTI_ACTIVITY_KIND_MEMCPY: s = sizeof(CUpti_ActivityMemcpy6); break;
    case CUPTI_ACTIVITY_KIND_MEMSET: s = sizeof(CUpti_ActivityMemset4); break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: s = sizeof(CUpti_ActivitySynchronization2); break;
    default: return 0;
  }
  return (s + 7) & ~size_t(7);
}

const char* const kKernelName = "void fake_kernel<float>(float*, int)";

// driven mode: what the program reported, waiting for the next flush
struct Pending {
  int kind;  // 0 kernel (arg: stream), 1 pageable host-to-device copy, 2 pinned one
  uint64_t start, end;
  int arg;
};
std::mutex g_mu;
std::vector<Pending> g_pending;

// The records both modes hand out (end 0: an incomplete record).
CUpti_ActivityKernel10 kernel(uint64_t start, uint64_t end, uint32_t stream) {
  CUpti_ActivityKernel10 k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = start;
  k.end = end;
  k.deviceId = 0;
  k.contextId = 1;
  k.streamId = stream;
  k.name = kKernelName;
  return k;
}

CUpti_ActivityMemcpy6 htod_copy(uint64_t start, uint64_t end, uint8_t src_kind, uint64_t bytes, uint32_t stream) {
  CUpti_ActivityMemcpy6 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.srcKind = src_kind;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.bytes = bytes;
  m.start = start;
  m.end = end;
  m.deviceId = 0;
  m.contextId = 1;
  m.streamId = stream;
  return m;
}

// Copies a record into an activity buffer at `used`, which moves past it.
template <typename Rec>
void put(uint8_t* buffer, size_t& used, const Rec& rec) {
  std::memcpy(buffer + used, &rec, sizeof rec);
  used += record_size(rec.kind);
}

}  // namespace

FAKE_EXPORT CUptiResult cuptiGetVersion(uint32_t* v) {
  *v = 130001;
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiGetResultString(CUptiResult r, const char** s) {
  switch (r) {
    case CUPTI_SUCCESS: *s = "CUPTI_SUCCESS"; break;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: *s = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"; break;
    case CUPTI_ERROR_UNKNOWN: *s = "CUPTI_ERROR_UNKNOWN"; break;
    default: *s = "CUPTI_ERROR_FAKE"; break;
  }
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiGetTimestamp(uint64_t* t) {
  *t = fake_now();
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
                                                       CUpti_BuffersCallbackCompleteFunc done) {
  g_request = req;
  g_complete = done;
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f) {
  if (mode() != "ok" && mode() != "driven") return CUPTI_ERROR_NOT_SUPPORTED;
  g_timestamp = f;
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind) {
  const std::string m = mode();
  if (m == "busy") return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  if (m == "unknown") return CUPTI_ERROR_UNKNOWN;
  g_enabled = true;
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind) {
  g_enabled = false;
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  *dropped = 0;
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  uint8_t* next = buffer;
  if (*record) {
    auto* cur = reinterpret_cast<uint8_t*>(*record);
    next = cur + record_size((*record)->kind);
  }
  if (next + sizeof(CUpti_Activity) > buffer + valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  auto* rec = reinterpret_cast<CUpti_Activity*>(next);
  size_t size = record_size(rec->kind);
  if (size == 0 || next + size > buffer + valid) return CUPTI_ERROR_INVALID_KIND;
  *record = rec;
  return CUPTI_SUCCESS;
}

// driven mode: the program under test reports an activity of its pretend GPU (CLOCK_MONOTONIC ns).
FAKE_EXPORT void fake_cupti_add(int kind, uint64_t start, uint64_t end, int arg) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_pending.push_back({kind, start, end, arg});
}

namespace {
CUptiResult flush_driven() {
  std::vector<Pending> todo;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    todo.swap(g_pending);
  }
  size_t at = 0;
  while (at < todo.size()) {
    uint8_t* buffer = nullptr;
    size_t size = 0, max_records = 0;
    g_request(&buffer, &size, &max_records);
    if (!buffer) return CUPTI_SUCCESS;
    std::memset(buffer, 0, size);
    size_t used = 0;
    for (; at < todo.size() && used + 256 <= size; ++at) {
      const Pending& p = todo[at];
      if (p.kind == 0)
        put(buffer, used, kernel(p.start, p.end, static_cast<uint32_t>(p.arg)));
      else
        put(buffer, used,
            htod_copy(p.start, p.end,
                      p.kind == 1 ? CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE : CUPTI_ACTIVITY_MEMORY_KIND_PINNED, 8192, 14));
    }
    g_complete(nullptr, 0, buffer, size, used);
  }
  return CUPTI_SUCCESS;
}
}  // namespace

// One buffer of synthetic activity, all of it in the last 10 ms on CUPTI's clock (driven mode:
// what the program reported since the last flush).
FAKE_EXPORT CUptiResult cuptiActivityFlushAll(uint32_t) {
  if (!g_enabled || !g_request || !g_complete) return CUPTI_SUCCESS;
  if (mode() == "driven") return flush_driven();
  uint8_t* buffer = nullptr;
  size_t size = 0, max_records = 0;
  g_request(&buffer, &size, &max_records);
  if (!buffer) return CUPTI_SUCCESS;
  std::memset(buffer, 0, size);
  const uint64_t now = fake_now();
  size_t used = 0;
  for (uint32_t stream : {7u, 13u}) {
    const uint64_t start = now - 9000000 + stream * 1000;
    put(buffer, used, kernel(start, start + 2000000, stream));
  }
  put(buffer, used, kernel(now - 1000, 0, 7));  // incomplete: no end time
  for (uint8_t src : {uint8_t(CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE), uint8_t(CUPTI_ACTIVITY_MEMORY_KIND_PINNED)})
    put(buffer, used, htod_copy(now - 6000000, now - 5000000, src, 4096, 7));
  {
    CUpti_ActivityMemset4 m{};
    m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    m.bytes = 512;
    m.start = now - 4000000;
    m.end = now - 3900000;
    m.deviceId = 0;
    m.contextId = 1;
    m.streamId = 13;
    put(buffer, used, m);
  }
  {
    CUpti_ActivitySynchronization2 y{};
    y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    y.start = now - 3000000;
    y.end = now - 2000000;
    y.contextId = 1;
    y.streamId = 7;
    put(buffer, used, y);
  }
  g_complete(nullptr, 0, buffer, size, used);
  return CUPTI_SUCCESS;
}
