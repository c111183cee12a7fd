// Names asked about millions of times a run: "is this identifier one of these names?" The link
// passes ask it of every identifier of every module (a function or class name referenced as a
// value, a read of an accelerator device name), and std::unordered_set answered each with
// libstdc++'s byte-at-a-time hash, a division by a prime bucket count and a pointer chase (on
// Debian's torch package: 4% of a run after a one-file edit, in hashing alone).
//
// name_hash(): reads at most the first and last eight bytes of a short name and every word of a
// long one, then mixes; good enough for hash tables, not for anything adversarial.
// StringSet: open addressing over a power-of-two table of (hash, view) slots, insertion order kept
// for iteration. It holds views: insert() keeps the caller's bytes (they must outlive the set),
// insert_copy() keeps a copy of its own.
#pragma once
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace tl {

inline uint64_t name_hash(std::string_view s) {
  const char* p = s.data();
  const size_t n = s.size();
  auto word = [](const char* at) {
    uint64_t w;
    std::memcpy(&w, at, 8);
    return w;
  };
  uint64_t a, b;
  if (n >= 8) {
    a = word(p);
    b = word(p + n - 8);
    for (size_t i = 8; i + 8 < n; i += 8) a = (a ^ word(p + i)) * 0x9E3779B97F4A7C15ull + (a >> 31);
  } else if (n >= 4) {
    uint32_t x, y;
    std::memcpy(&x, p, 4);
    std::memcpy(&y, p + n - 4, 4);
    a = x;
    b = y;
  } else {
    a = n ? (static_cast<uint64_t>(static_cast<unsigned char>(p[0])) |
             static_cast<uint64_t>(static_cast<unsigned char>(p[n / 2])) << 8 |
             static_cast<uint64_t>(static_cast<unsigned char>(p[n - 1])) << 16)
          : 0;
    b = 0;
  }
  uint64_t h = (a ^ 0xBF58476D1CE4E5B9ull) * 0x94D049BB133111EBull;
  h ^= (b + n) * 0x9E3779B97F4A7C15ull;
  h ^= h >> 32;
  h *= 0xD6E8FEB86659FD93ull;
  h ^= h >> 29;
  return h;
}

class StringSet {
 public:
  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  // The names in the order they were first inserted.
  const std::vector<std::string_view>& items() const { return items_; }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }

  bool contains(std::string_view s) const { return find(s) != kEmpty; }
  size_t count(std::string_view s) const { return contains(s) ? 1 : 0; }

  // True when `s` was not in the set. The set keeps the view: its bytes must outlive the set.
  bool insert(std::string_view s) { return add(s, false); }
  // The same, with the bytes copied into the set.
  bool insert_copy(std::string_view s) { return add(s, true); }
  // The set's view of `s`, a copy made now if `s` is new (one copy of many repeated names); do not mix with insert().
  std::string_view intern(std::string_view s) {
    add(s, true);
    return items_[find(s)];
  }

 private:
  static constexpr uint32_t kEmpty = 0xFFFFFFFFu;
  struct Slot {
    uint64_t hash = 0;
    uint32_t item = kEmpty;
  };

  // The index in items_ of `s`, or kEmpty.
  uint32_t find(std::string_view s) const {
    if (items_.empty()) return kEmpty;
    const uint64_t h = name_hash(s);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot& sl = slots_[i];
      if (sl.item == kEmpty || (sl.hash == h && items_[sl.item] == s)) return sl.item;
    }
  }

  bool add(std::string_view s, bool copy) {
    if ((items_.size() + 1) * 4 > slots_.size() * 3) grow();
    const uint64_t h = name_hash(s);
    size_t i = h & mask_;
    for (;; i = (i + 1) & mask_) {
      const Slot& sl = slots_[i];
      if (sl.item == kEmpty) break;
      if (sl.hash == h && items_[sl.item] == s) return false;
    }
    if (copy) s = owned_.emplace_back(s);  // a deque: its strings never move
    slots_[i] = {h, static_cast<uint32_t>(items_.size())};
    items_.push_back(s);
    return true;
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 16 : old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    for (const Slot& sl : old) {
      if (sl.item == kEmpty) continue;
      size_t i = sl.hash & mask_;
      while (slots_[i].item != kEmpty) i = (i + 1) & mask_;
      slots_[i] = sl;
    }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  std::vector<std::string_view> items_;
  std::deque<std::string> owned_;
};

}  // namespace tl
