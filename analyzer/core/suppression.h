// Suppression comments, read from the comments of a file:
//   Python  `# noqa` / `# noqa: TL101, TL105` (the word noqa in any case, as flake8 and ruff),
//           `# trainlint: ignore` / `# trainlint: ignore[TL101, host-sync-per-step]` on the
//           flagged line (for a multi-line statement: its first or last line),
//           `# trainlint: ignore-file` / `# trainlint: ignore-file[TL201]` anywhere in the file;
//   C++     `// NOLINT` / `// NOLINT(TL103)` on the flagged line, `// NOLINTNEXTLINE(TL103)` on
//           the line before it (clang-tidy's syntax).
// Codes of other tools in the same comment (`# noqa: E501, TL101`) are left to those tools.
// A suppression that suppresses nothing is TL001 unused-suppression.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzer/core/finding.h"
#include "analyzer/core/source_file.h"

namespace tl {

struct SuppressionCode {
  std::string written;  // as written ("TL101", "host-sync-per-step", "tl105")
  std::string code;     // the canonical code; empty when unknown
  uint32_t begin = 0, end = 0;  // bytes of the code in the file
  bool used = false;
};

struct Suppression {
  enum class Kind : uint8_t { Line, NextLine, File } kind = Kind::Line;
  enum class Syntax : uint8_t { Noqa, Trainlint, Nolint } syntax = Syntax::Noqa;
  uint32_t line = 0;                       // the comment's 1-based line
  uint32_t begin = 0, end = 0;             // the directive ("noqa: TL101", "trainlint: ignore[...]")
  uint32_t comment_begin = 0, comment_end = 0;  // the whole comment token
  bool all = false;                        // no codes: every rule
  bool used_all = false;                   // (all) suppressed something
  std::vector<SuppressionCode> codes;      // only our codes (TL..., slugs); others are kept out
  // codes of other tools written in the same list (`E501`): their byte ranges, so that a fix
  // removing ours leaves theirs well-formed
  std::vector<std::pair<uint32_t, uint32_t>> foreign;
};

// Maps a written code or slug to the canonical code (empty if unknown); lives above core.
using CodeCanon = std::string (*)(std::string_view);

// Python: the comment tokens of the file (byte ranges of `#...` up to the line end).
std::vector<Suppression> parse_python_suppressions(const SourceFile& src,
                                                   const std::vector<std::pair<uint32_t, uint32_t>>& comments,
                                                   CodeCanon canon);
// C++: finds `//` and `/* */` comments itself (skipping string and character literals).
std::vector<Suppression> parse_cpp_suppressions(const SourceFile& src, CodeCanon canon);

// Is `f` suppressed? Marks the codes (or the blanket) that suppress it as used. `lines`: the lines
// a line suppression may sit on (the finding's line, its statement's first and last lines).
bool apply_suppressions(std::vector<Suppression>& sups, const Finding& f);

// TL001 findings for the suppressions of one file that suppressed nothing. `judged(code)` says
// whether the rule ran on this file (only then can its code be called unused). Blanket `# noqa`
// and `// NOLINT` without codes are never reported (they may be there for other tools). Each
// finding carries a safe fix that removes the unused codes, or the whole comment when nothing
// else is left in it.
template <class Judged>
std::vector<Finding> unused_suppressions(const SourceFile& src, const std::vector<Suppression>& sups, Judged judged);

// ---- implementation details for the template --------------------------------------------------
Finding make_unused_suppression(const SourceFile& src, const Suppression& s, const std::vector<size_t>& unused);

template <class Judged>
std::vector<Finding> unused_suppressions(const SourceFile& src, const std::vector<Suppression>& sups, Judged judged) {
  std::vector<Finding> out;
  for (auto& s : sups) {
    if (s.all) {
      if (s.syntax == Suppression::Syntax::Trainlint && !s.used_all) out.push_back(make_unused_suppression(src, s, {}));
      continue;
    }
    std::vector<size_t> unused;
    for (size_t i = 0; i < s.codes.size(); ++i) {
      const auto& c = s.codes[i];
      if (c.used) continue;
      if (c.code.empty() || judged(c.code)) unused.push_back(i);
    }
    if (!unused.empty()) out.push_back(make_unused_suppression(src, s, unused));
  }
  return out;
}

}  // namespace tl
