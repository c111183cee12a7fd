#include "analyzer/engine/cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <system_error>

#include <nlohmann/json.hpp>

#include "analyzer/cpp/typed_path.h"

#ifndef TRAINLINT_VERSION
#define TRAINLINT_VERSION "0.1.0"
#endif

namespace fs = std::filesystem;
using nlohmann::json;

namespace tl::cache {
namespace {

constexpr uint64_t kFormat = 3;  // bump when an entry's layout or its hash changes

inline uint64_t mix(uint64_t x) {
  x ^= x >> 32;
  x *= 0xD6E8FEB86659FD93ull;
  x ^= x >> 32;
  x *= 0xD6E8FEB86659FD93ull;
  x ^= x >> 32;
  return x;
}

// A whole file in memory, read with read(2) into an uninitialised buffer: no zero-filling, and no
// mmap, whose mapping and unmapping per file would take the process's memory-map lock that the
// other threads' page faults wait on.
class WholeFile {
 public:
  explicit WholeFile(const fs::path& p) {
    int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st;
    if (::fstat(fd, &st) == 0 && st.st_size > 0) {
      size_t n = static_cast<size_t>(st.st_size), got = 0;
      data_.reset(new char[n]);
      while (got < n) {
        ssize_t r = ::read(fd, data_.get() + got, n - got);
        if (r <= 0) break;
        got += static_cast<size_t>(r);
      }
      if (got == n) size_ = n;
      else data_.reset();
    }
    ::close(fd);
  }
  bool ok() const { return data_ != nullptr; }
  std::string_view view() const { return {data_.get(), size_}; }

 private:
  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
};

// An entry on disk: a header naming the format and the payload's length and hash, then the payload.
std::string frame(std::string_view payload) {
  Hash h = Hasher().add(payload).finish();
  std::string out = "TLC" + std::to_string(kFormat) + " " + std::to_string(payload.size()) + " " + h.hex() + "\n";
  out += payload;
  return out;
}

std::optional<std::string_view> unframe(std::string_view bytes) {
  size_t nl = bytes.find('\n');
  if (nl == std::string_view::npos || nl > 80) return std::nullopt;
  std::istringstream head{std::string(bytes.substr(0, nl))};
  std::string magic, hex;
  size_t len = 0;
  if (!(head >> magic >> len >> hex) || magic != "TLC" + std::to_string(kFormat)) return std::nullopt;
  std::string_view payload = bytes.substr(nl + 1);
  if (payload.size() != len || Hasher().add(payload).finish().hex() != hex) return std::nullopt;
  return payload;
}

json range_json(const Range& r) {
  return json::array({r.begin, r.end, r.start.line, r.start.col, r.stop.line, r.stop.col});
}
Range range_of(const json& j) {
  Range r;
  r.begin = j.at(0).get<uint32_t>();
  r.end = j.at(1).get<uint32_t>();
  r.start = {j.at(2).get<uint32_t>(), j.at(3).get<uint32_t>()};
  r.stop = {j.at(4).get<uint32_t>(), j.at(5).get<uint32_t>()};
  return r;
}

json finding_json(const Finding& f) {
  json j = {{"code", f.code},       {"slug", f.slug},         {"severity", static_cast<int>(f.severity)},
            {"message", f.message}, {"path", f.path},         {"range", range_json(f.range)},
            {"probe", f.probe},     {"scope", f.scope},       {"statement", range_json(f.statement)},
            {"fingerprint", f.fingerprint}};
  json notes = json::array();
  for (auto& n : f.notes) notes.push_back({{"path", n.path}, {"range", range_json(n.range)}, {"message", n.message}});
  j["notes"] = std::move(notes);
  if (f.fix) {
    json edits = json::array();
    for (auto& e : f.fix->edits) edits.push_back({{"range", range_json(e.range)}, {"replacement", e.replacement}});
    j["fix"] = {{"title", f.fix->title}, {"edits", std::move(edits)},
                {"applicability", static_cast<int>(f.fix->applicability)}};
  }
  return j;
}

Finding finding_of(const json& j) {
  Finding f;
  f.code = j.at("code").get<std::string>();
  f.slug = j.at("slug").get<std::string>();
  int sev = j.at("severity").get<int>();
  if (sev < 0 || sev > 2) throw std::runtime_error("bad severity");
  f.severity = static_cast<Severity>(sev);
  f.message = j.at("message").get<std::string>();
  f.path = j.at("path").get<std::string>();
  f.range = range_of(j.at("range"));
  f.probe = j.at("probe").get<std::string>();
  f.scope = j.at("scope").get<std::string>();
  f.statement = range_of(j.at("statement"));
  f.fingerprint = j.at("fingerprint").get<std::string>();
  for (auto& n : j.at("notes")) f.notes.push_back({n.at("path").get<std::string>(), range_of(n.at("range")), n.at("message").get<std::string>()});
  if (j.contains("fix")) {
    const json& x = j["fix"];
    Fix fx;
    fx.title = x.at("title").get<std::string>();
    for (auto& e : x.at("edits")) fx.edits.push_back({range_of(e.at("range")), e.at("replacement").get<std::string>()});
    int a = x.at("applicability").get<int>();
    if (a < 0 || a > 1) throw std::runtime_error("bad applicability");
    fx.applicability = static_cast<Applicability>(a);
    f.fix = std::move(fx);
  }
  return f;
}

// Recently used entries are touched, so that pruning by modification time removes the least
// recently used ones.
void touch(const fs::path& p) {
  std::error_code ec;
  fs::last_write_time(p, fs::file_time_type::clock::now(), ec);
}

}  // namespace

std::string Hash::hex() const {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(a), static_cast<unsigned long long>(b));
  return buf;
}

Hasher& Hasher::add(std::string_view bytes) {
  // 16 bytes at a time, 8 into each of two lanes with different multipliers (the lanes' chains run
  // side by side: half the instructions of feeding every word to both), then the lanes mixed into
  // each other so that both halves of the hash depend on every byte; the length goes in last so
  // that ("ab","c") and ("a","bc") differ.
  const char* p = bytes.data();
  size_t n = bytes.size();
  uint64_t a = a_, b = b_;
  auto word = [](const char* at) {
    uint64_t w;
    std::memcpy(&w, at, 8);
    return w;
  };
  auto step = [&](uint64_t wa, uint64_t wb) {
    a = (a ^ wa) * 0x9E3779B97F4A7C15ull;
    a ^= a >> 29;
    b = (b + wb) * 0xC2B2AE3D27D4EB4Full;
    b ^= b >> 31;
  };
  for (; n >= 16; p += 16, n -= 16) step(word(p), word(p + 8));
  if (n >= 8) {  // a last whole word goes to both lanes
    step(word(p), word(p));
    p += 8;
    n -= 8;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, p, n);
  a = mix(a ^ tail ^ (uint64_t{bytes.size()} << 3));
  b = mix(b + tail + bytes.size() * 0x165667B19E3779F9ull + a);
  a = mix(a ^ b);
  a_ = a;
  b_ = b;
  return *this;
}

Hasher& Hasher::add(uint64_t v) {
  char buf[8];
  std::memcpy(buf, &v, 8);
  return add(std::string_view(buf, 8));
}

const std::string& build_identity() {
  static const std::string id = [] {
    std::string s = std::string("trainlint ") + TRAINLINT_VERSION + " format " + std::to_string(kFormat);
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
      auto size = fs::file_size(exe, ec);
      auto mtime = fs::last_write_time(exe, ec);
      if (!ec)
        s += " exe " + exe.string() + " " + std::to_string(size) + " " +
             std::to_string(mtime.time_since_epoch().count());
    }
    // the typed C++ path is a separate file (trainlint-clang.so) that can be rebuilt or pointed
    // elsewhere (TRAINLINT_CLANG_MODULE) without the executable changing
    s += " " + cpp::typed_path_module_identity();
    return s;
  }();
  return id;
}

std::unique_ptr<DiskCache> DiskCache::open(const fs::path& dir, size_t max_bytes, std::string* error) {
  std::error_code ec;
  fs::create_directories(dir / "trees", ec);
  if (!ec) fs::create_directories(dir / "runs", ec);
  if (ec) {
    if (error) *error = "cannot create the cache folder: " + ec.message();
    return nullptr;
  }
  // Like other tools' caches: invisible to git, and tagged so that backup tools skip it.
  if (!fs::exists(dir / ".gitignore", ec)) {
    std::ofstream(dir / ".gitignore") << "# Created by trainlint automatically.\n*\n";
  }
  if (!fs::exists(dir / "CACHEDIR.TAG", ec)) {
    std::ofstream(dir / "CACHEDIR.TAG") << "Signature: 8a477f597d28d172789f06886806bc55\n"
                                           "# This file is a cache directory tag created by trainlint.\n";
  }
  return std::unique_ptr<DiskCache>(new DiskCache(dir, max_bytes));
}

fs::path DiskCache::tree_path(const SourceFile& src) const {
  Hash h = Hasher().add(build_identity()).add("python-tree").add(src.text()).finish();
  return dir_ / "trees" / h.hex();
}

bool DiskCache::write_atomic(const fs::path& p, std::string_view bytes) {
  thread_local std::mt19937_64 rng{std::random_device{}() ^ static_cast<uint64_t>(::getpid())};
  fs::path tmp = p;
  tmp += ".tmp" + std::to_string(::getpid()) + "-" + std::to_string(rng());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out || !out.write(bytes.data(), static_cast<std::streamsize>(bytes.size())) || !out.flush()) {
      std::error_code ec;
      fs::remove(tmp, ec);
      return false;
    }
  }
  std::error_code ec;
  fs::rename(tmp, p, ec);  // atomic: a reader sees the old entry, the new one or none
  if (ec) fs::remove(tmp, ec);
  return !ec;
}

std::optional<py::Tree> DiskCache::load(const SourceFile& src) {
  fs::path p = tree_path(src);
  WholeFile bytes(p);
  std::optional<std::string_view> payload = bytes.ok() ? unframe(bytes.view()) : std::nullopt;
  std::optional<py::Tree> t = payload ? py::Tree::decode(src, *payload) : std::nullopt;
  if (!t) {
    ++tree_misses_;
    return std::nullopt;
  }
  ++tree_hits_;
  touch(p);
  return t;
}

void DiskCache::save(const SourceFile& src, const py::Tree& tree) { write_atomic(tree_path(src), frame(tree.encode())); }

std::optional<RunResult> DiskCache::load_run(const Hash& key) {
  fs::path p = dir_ / "runs" / (key.hex() + ".json");
  WholeFile bytes(p);
  if (!bytes.ok()) return std::nullopt;
  auto payload = unframe(bytes.view());
  if (!payload) return std::nullopt;
  try {
    json j = json::parse(*payload);
    RunResult r;
    for (auto& f : j.at("findings")) r.findings.push_back(finding_of(f));
    for (auto& m : j.at("messages")) {
      FileMessage fm;
      fm.kind = m.at("kind").get<int>() == 0 ? FileMessage::Kind::Error : FileMessage::Kind::Warning;
      fm.path = m.at("path").get<std::string>();
      fm.message = m.at("message").get<std::string>();
      if (m.contains("where")) fm.where = LineCol{m["where"].at(0).get<uint32_t>(), m["where"].at(1).get<uint32_t>()};
      r.messages.push_back(std::move(fm));
    }
    r.files_analysed = j.at("files_analysed").get<size_t>();
    r.context_files = j.at("context_files").get<size_t>();
    touch(p);
    return r;
  } catch (const std::exception&) {
    return std::nullopt;  // not an entry this build wrote: analysed afresh, then overwritten
  }
}

void DiskCache::save_run(const Hash& key, const RunResult& r) {
  json j;
  json fs_ = json::array();
  for (auto& f : r.findings) fs_.push_back(finding_json(f));
  j["findings"] = std::move(fs_);
  json ms = json::array();
  for (auto& m : r.messages) {
    json jm = {{"kind", m.kind == FileMessage::Kind::Error ? 0 : 1}, {"path", m.path}, {"message", m.message}};
    if (m.where) jm["where"] = {m.where->line, m.where->col};
    ms.push_back(std::move(jm));
  }
  j["messages"] = std::move(ms);
  j["files_analysed"] = r.files_analysed;
  j["context_files"] = r.context_files;
  write_atomic(dir_ / "runs" / (key.hex() + ".json"), frame(j.dump(-1, ' ', false, json::error_handler_t::replace)));
}

void DiskCache::prune() {
  struct E {
    fs::path p;
    fs::file_time_type t;
    uintmax_t size;
  };
  std::vector<E> all;
  uintmax_t total = 0;
  std::error_code ec;
  // clang/: the typed C++ path's precompiled headers (torch-*.pch, each with the .hpp it was built
  // from, which Clang checks when it reads the header: the pair goes together). The typed path
  // touches a header each time it reuses one, so their times are last uses too. The newest is
  // never removed here: a bound smaller than one header would otherwise rebuild it every run.
  fs::path newest_pch;
  fs::file_time_type newest_pch_t{};
  for (const char* sub : {"trees", "runs", "clang"}) {
    ec.clear();
    for (fs::directory_iterator it(dir_ / sub, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code e2;
      if (!it->is_regular_file(e2)) continue;
      uintmax_t sz = it->file_size(e2);
      auto t = it->last_write_time(e2);
      if (e2) continue;
      bool clang = std::string_view(sub) == "clang";
      if (clang && it->path().extension() == ".hpp") continue;  // counted with its .pch
      if (clang && it->path().extension() == ".pch") {
        fs::path src = it->path();
        src += ".hpp";
        uintmax_t src_size = fs::file_size(src, e2);
        if (!e2) sz += src_size;
        if (newest_pch.empty() || t > newest_pch_t) {
          newest_pch = it->path();
          newest_pch_t = t;
        }
      }
      // a temporary file an interrupted run left behind, over a minute old (a header being
      // precompiled by a concurrent run takes longer: ten)
      if (it->path().filename().string().find(".tmp") != std::string::npos &&
          t < fs::file_time_type::clock::now() - (clang ? std::chrono::minutes(10) : std::chrono::minutes(1))) {
        fs::remove(it->path(), e2);
        continue;
      }
      all.push_back({it->path(), t, sz});
      total += sz;
    }
  }
  if (total <= max_bytes_) return;
  std::sort(all.begin(), all.end(), [](const E& x, const E& y) { return x.t < y.t; });
  uintmax_t goal = max_bytes_ / 10 * 8;  // some room, so that every run does not prune
  for (auto& e : all) {
    if (total <= goal) break;
    if (e.p == newest_pch) continue;
    std::error_code e2;
    if (fs::remove(e.p, e2)) {
      total -= e.size;
      if (e.p.extension() == ".pch") {
        fs::path src = e.p;
        src += ".hpp";
        fs::remove(src, e2);
      }
    }
  }
}

DiskCache::Stats DiskCache::stats() const {
  return {tree_hits_.load(), tree_misses_.load()};
}

}  // namespace tl::cache
