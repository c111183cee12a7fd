#include "analyzer/core/fix.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <unordered_map>

namespace tl {

namespace {

// A fix of one finding, checked and located.
struct Candidate {
  const Finding* finding = nullptr;
  std::vector<Edit> edits;  // sorted by position
  uint32_t min_start = 0, max_end = 0;
  size_t duplicates = 0;    // other findings carrying exactly the same edits
};

bool same_edits(const std::vector<Edit>& a, const std::vector<Edit>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].range.begin != b[i].range.begin || a[i].range.end != b[i].range.end ||
        a[i].replacement != b[i].replacement)
      return false;
  return true;
}

// The text with the edits of `fixes` (which do not overlap each other) applied.
std::string apply_edits(std::string_view text, const std::vector<const Candidate*>& fixes) {
  std::vector<const Edit*> edits;
  for (auto* c : fixes)
    for (auto& e : c->edits) edits.push_back(&e);
  std::stable_sort(edits.begin(), edits.end(),
                   [](const Edit* a, const Edit* b) { return a->range.begin < b->range.begin; });
  std::string out;
  out.reserve(text.size() + 64);
  size_t at = 0;
  for (auto* e : edits) {
    out.append(text.substr(at, e->range.begin - at));
    out.append(e->replacement);
    at = e->range.end;
  }
  out.append(text.substr(at));
  return out;
}

FixRefusal refusal(std::string_view path, const Finding& f, std::string reason) {
  return FixRefusal{std::string(path), f.code, f.fix->title, f.range.start, std::move(reason)};
}

std::string plural(size_t n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); }

}  // namespace

FileFixResult apply_fixes(std::string_view path, std::string_view text, const std::vector<Finding>& findings,
                          const FixOptions& opts) {
  FileFixResult res;
  std::vector<Candidate> cands;
  for (auto& f : findings) {
    if (f.path != path || !f.fix || f.fix->edits.empty()) continue;
    if (f.fix->applicability == Applicability::Unsafe && !opts.unsafe) {
      ++res.unsafe_skipped;
      continue;
    }
    Candidate c;
    c.finding = &f;
    c.edits = f.fix->edits;
    std::stable_sort(c.edits.begin(), c.edits.end(),
                     [](const Edit& a, const Edit& b) { return a.range.begin < b.range.begin; });
    bool ok = true;
    for (size_t i = 0; i < c.edits.size(); ++i) {
      const Range& r = c.edits[i].range;
      if (r.begin > r.end || r.end > text.size()) ok = false;
      if (i > 0 && c.edits[i - 1].range.end > r.begin) ok = false;
    }
    if (!ok) {
      res.refusals.push_back(refusal(path, f, "its edits overlap each other or lie outside the file"));
      continue;
    }
    c.min_start = c.edits.front().range.begin;
    c.max_end = 0;
    for (auto& e : c.edits) c.max_end = std::max(c.max_end, e.range.end);
    cands.push_back(std::move(c));
  }
  if (cands.empty()) {
    res.text = std::string(text);
    return res;
  }
  std::stable_sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
    return std::tie(a.min_start, a.max_end, a.finding->code) < std::tie(b.min_start, b.max_end, b.finding->code);
  });

  // Accept fixes in order; one that overlaps or touches the last accepted one waits for the next
  // round (touching counts: two insertions at one offset have no defined order).
  std::vector<Candidate*> accepted;
  for (auto& c : cands) {
    bool dup = false;
    for (auto* a : accepted)
      if (same_edits(a->edits, c.edits)) {
        ++a->duplicates;  // the same change fixes both findings
        dup = true;
        break;
      }
    if (dup) continue;
    if (!accepted.empty() && c.min_start <= accepted.back()->max_end) {
      ++res.deferred;
      continue;
    }
    accepted.push_back(&c);
  }

  std::vector<const Candidate*> kept(accepted.begin(), accepted.end());
  res.text = apply_edits(text, kept);
  if (opts.syntax_errors) {
    size_t before = opts.syntax_errors(text);
    size_t after = opts.syntax_errors(res.text);
    if (after > before) {
      // Some fix breaks the syntax: keep each fix only if the text with it (and the fixes kept
      // before it) has no more errors than the original.
      kept.clear();
      res.text = std::string(text);
      for (auto* c : accepted) {
        kept.push_back(c);
        std::string t = apply_edits(text, kept);
        size_t n = opts.syntax_errors(t);
        if (n > before) {
          kept.pop_back();
          res.refusals.push_back(refusal(path, *c->finding,
                                         "the fixed file would have " + plural(n, "syntax error") + " (it has " +
                                             std::to_string(before) + ")"));
        } else {
          res.text = std::move(t);
        }
      }
    }
  }
  for (auto* c : kept) {
    res.applied += 1 + c->duplicates;
    res.by_code[c->finding->code] += 1 + c->duplicates;
  }
  return res;
}

FixRunResult fix_until_stable(std::vector<SourceText> files, const LintFn& lint, const FixOptions& opts,
                              size_t max_rounds) {
  FixRunResult r;
  for (auto& f : files) r.files.push_back({f.path, f.text, f.text, 0, {}});
  std::set<std::string> refused;  // what each refused fix would change, to report it once
  auto refusal_key = [](const FixRefusal& x, std::string_view text, const Finding* f) {
    std::string k = x.path + '\0' + x.code + '\0' + x.title + '\0' + x.reason;
    if (f && f->fix)
      for (auto& e : f->fix->edits) {
        if (e.range.begin <= e.range.end && e.range.end <= text.size())
          k += std::string(text.substr(e.range.begin, e.range.end - e.range.begin));
        k += '\0' + e.replacement + '\0';
      }
    return k;
  };
  for (size_t round = 0;; ++round) {
    std::vector<Finding> findings = lint(files);
    bool last = round == max_rounds;
    bool any = false;
    // The findings that carry a fix, by file (most files have none).
    std::unordered_map<std::string_view, std::vector<Finding>> fixable;
    for (auto& f : findings)
      if (f.fix) fixable[f.path].push_back(f);
    for (size_t i = 0; i < files.size() && !fixable.empty(); ++i) {
      auto it = fixable.find(files[i].path);
      if (it == fixable.end()) continue;
      const std::vector<Finding>& mine = it->second;
      FileFixResult fr = apply_fixes(files[i].path, files[i].text, mine, opts);
      if (last) {
        if (fr.applied) r.converged = false;
        continue;
      }
      for (auto& x : fr.refusals) {
        const Finding* src = nullptr;
        for (auto& f : mine)
          if (f.code == x.code && f.range.start.line == x.where.line && f.range.start.col == x.where.col) src = &f;
        if (refused.insert(refusal_key(x, files[i].text, src)).second) r.refusals.push_back(x);
      }
      if (fr.applied == 0) continue;
      any = true;
      files[i].text = std::move(fr.text);
      r.files[i].text = files[i].text;
      r.files[i].applied += fr.applied;
      for (auto& [code, n] : fr.by_code) r.files[i].by_code[code] += n;
    }
    if (last || !any) {
      r.remaining = std::move(findings);
      break;
    }
    ++r.rounds;
  }
  return r;
}

// ---- unified diff -------------------------------------------------------------------------

namespace {

// Lines with their terminators; the last one may lack one.
std::vector<std::string_view> split_lines(std::string_view s) {
  std::vector<std::string_view> out;
  size_t at = 0;
  while (at < s.size()) {
    size_t nl = s.find('\n', at);
    size_t end = nl == std::string_view::npos ? s.size() : nl + 1;
    out.push_back(s.substr(at, end - at));
    at = end;
  }
  return out;
}

enum class Op : uint8_t { Equal, Delete, Insert };

// Myers' O(ND) difference of two line sequences, as a script of operations in order.
// Beyond `max_d` differences it gives up on minimality and replaces the whole range.
std::vector<Op> diff_lines(const std::vector<std::string_view>& a, size_t a0, size_t a1,
                           const std::vector<std::string_view>& b, size_t b0, size_t b1, long max_d = 4000) {
  long n = static_cast<long>(a1 - a0), m = static_cast<long>(b1 - b0);
  std::vector<Op> out;
  if (n == 0 || m == 0) {
    out.insert(out.end(), n, Op::Delete);
    out.insert(out.end(), m, Op::Insert);
    return out;
  }
  long maxd = std::min(n + m, max_d);
  long off = maxd + 1;
  std::vector<long> v(2 * off + 2, 0);
  std::vector<std::vector<long>> trace;  // v[-d..d] before step d
  long found = -1;
  for (long d = 0; d <= maxd && found < 0; ++d) {
    trace.emplace_back(v.begin() + (off - d - 1), v.begin() + (off + d + 2));
    for (long k = -d; k <= d; k += 2) {
      long x = (k == -d || (k != d && v[off + k - 1] < v[off + k + 1])) ? v[off + k + 1] : v[off + k - 1] + 1;
      long y = x - k;
      while (x < n && y < m && a[a0 + x] == b[b0 + y]) ++x, ++y;
      v[off + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
  }
  if (found < 0) {
    out.insert(out.end(), n, Op::Delete);
    out.insert(out.end(), m, Op::Insert);
    return out;
  }
  std::vector<Op> rev;
  long x = n, y = m;
  for (long d = found; d > 0; --d) {
    const std::vector<long>& tv = trace[d];  // covers k in [-d-1, d+1]
    auto at = [&](long k) { return tv[k + d + 1]; };
    long k = x - y;
    long pk = (k == -d || (k != d && at(k - 1) < at(k + 1))) ? k + 1 : k - 1;
    long px = at(pk), py = px - pk;
    while (x > px && y > py) {
      rev.push_back(Op::Equal);
      --x, --y;
    }
    rev.push_back(pk == k + 1 ? Op::Insert : Op::Delete);
    x = px, y = py;
  }
  while (x > 0 && y > 0) {
    rev.push_back(Op::Equal);
    --x, --y;
  }
  out.assign(rev.rbegin(), rev.rend());
  return out;
}

void put_line(std::string& out, char prefix, std::string_view line) {
  out += prefix;
  out.append(line);
  if (line.empty() || line.back() != '\n') out += "\n\\ No newline at end of file\n";
}

std::string hunk_range(size_t start, size_t count) {
  // `start` is 0-based; an empty range names the line before it (GNU and git style)
  if (count == 0) return std::to_string(start) + ",0";
  if (count == 1) return std::to_string(start + 1);
  return std::to_string(start + 1) + "," + std::to_string(count);
}

}  // namespace

std::string unified_diff(std::string_view path, std::string_view old_text, std::string_view new_text,
                         size_t context) {
  if (old_text == new_text) return {};
  auto a = split_lines(old_text), b = split_lines(new_text);
  size_t pre = 0;
  while (pre < a.size() && pre < b.size() && a[pre] == b[pre]) ++pre;
  size_t suf = 0;
  while (suf < a.size() - pre && suf < b.size() - pre && a[a.size() - 1 - suf] == b[b.size() - 1 - suf]) ++suf;
  std::vector<Op> ops(pre, Op::Equal);
  auto mid = diff_lines(a, pre, a.size() - suf, b, pre, b.size() - suf);
  ops.insert(ops.end(), mid.begin(), mid.end());
  ops.insert(ops.end(), suf, Op::Equal);

  // The old and new line index at which each operation starts.
  std::vector<size_t> ai(ops.size() + 1), bi(ops.size() + 1);
  for (size_t i = 0; i < ops.size(); ++i) {
    ai[i + 1] = ai[i] + (ops[i] != Op::Insert);
    bi[i + 1] = bi[i] + (ops[i] != Op::Delete);
  }

  // a name with a space ends with a tab, as git writes it: GNU patch reads the name up to the
  // first space otherwise ("can't find file to patch")
  std::string_view tab = path.find(' ') == std::string_view::npos ? "" : "\t";
  std::string out = "--- a/" + std::string(path) + std::string(tab) + "\n+++ b/" + std::string(path) +
                    std::string(tab) + "\n";
  size_t i = 0;
  while (i < ops.size()) {
    while (i < ops.size() && ops[i] == Op::Equal) ++i;
    if (i == ops.size()) break;
    size_t first = i;  // the first change of the hunk
    size_t last = i;   // one past its last change
    for (size_t j = i; j < ops.size();) {
      if (ops[j] != Op::Equal) {
        last = j + 1;
        ++j;
        continue;
      }
      size_t k = j;
      while (k < ops.size() && ops[k] == Op::Equal) ++k;
      if (k == ops.size() || k - j > 2 * context) break;
      j = k;
    }
    size_t hs = first > context ? first - context : 0;
    size_t he = std::min(ops.size(), last + context);
    size_t old_count = ai[he] - ai[hs], new_count = bi[he] - bi[hs];
    out += "@@ -" + hunk_range(ai[hs], old_count) + " +" + hunk_range(bi[hs], new_count) + " @@\n";
    for (size_t j = hs; j < he; ++j) {
      switch (ops[j]) {
        case Op::Equal: put_line(out, ' ', a[ai[j]]); break;
        case Op::Delete: put_line(out, '-', a[ai[j]]); break;
        case Op::Insert: put_line(out, '+', b[bi[j]]); break;
      }
    }
    i = he;
  }
  return out;
}

}  // namespace tl
