// Applying findings' fixes to source text (`--fix`, `--unsafe-fixes`) and showing them as a
// unified diff (`--diff`). Language-neutral: the syntax check is supplied by the caller (for
// Python, py::count_syntax_errors in analyzer/python/syntax.h).
//
// One round on one file: the fixes are ordered by where they start; a fix is applied whole or
// not at all; a fix whose edits overlap (or touch) a fix already accepted this round waits for
// the next round, when it is recomputed on the new text. Unsafe fixes are applied only when
// allowed. The fixed text is then checked: if it has more syntax errors than the original, the
// fixes are tried again one at a time, in order, each kept only if the text with it still has no
// more syntax errors than the original, so that one bad fix does not block the good ones; every
// fix dropped this way is reported as a refusal.
#pragma once
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzer/core/finding.h"

namespace tl {

// Counts the syntax errors of a file's text (0 = it parses).
using SyntaxCheck = std::function<size_t(std::string_view text)>;

struct FixOptions {
  bool unsafe = false;         // also apply Applicability::Unsafe fixes (`--unsafe-fixes`)
  SyntaxCheck syntax_errors;   // empty: the result is not checked
};

// A fix that was not applied because its result would not parse, or because its edits are
// malformed (out of the text, overlapping each other).
struct FixRefusal {
  std::string path;
  std::string code;     // the finding's rule code
  std::string title;    // the fix's title
  LineCol where;        // the finding's position
  std::string reason;   // "the fixed file would have 2 syntax errors (it has 0)"
};

// One round of fixes on one file.
struct FileFixResult {
  std::string text;                       // the text after the accepted fixes
  size_t applied = 0;                     // fixes applied (findings fixed)
  std::map<std::string, size_t> by_code;  // fixes applied per rule code
  size_t deferred = 0;                    // fixes left for a later round (overlap)
  size_t unsafe_skipped = 0;              // unsafe fixes not applied because unsafe ones are not allowed
  std::vector<FixRefusal> refusals;
};

// Applies, in one round, the fixes of the findings in `findings` whose path is `path` to `text`
// (the text those findings were computed on). Findings without a fix, and findings of other
// files, are ignored.
FileFixResult apply_fixes(std::string_view path, std::string_view text, const std::vector<Finding>& findings,
                          const FixOptions& opts);

// ---- the lint -> fix -> re-lint loop ----------------------------------------------------

struct SourceText {
  std::string path;
  std::string text;
};

// Lints the given in-memory files (all of them together: the analysis is cross-file) and
// returns the findings that should be fixed (already filtered by suppressions, configuration,
// baseline...).
using LintFn = std::function<std::vector<Finding>(const std::vector<SourceText>& files)>;

struct FixRunResult {
  struct File {
    std::string path;
    std::string original;                   // the text before any fix
    std::string text;                       // the text after every round
    size_t applied = 0;
    std::map<std::string, size_t> by_code;  // fixes applied per rule code, over all rounds
    bool changed() const { return text != original; }
  };
  std::vector<File> files;          // every input file, in input order
  std::vector<FixRefusal> refusals; // each refused fix once, even when it came back every round
  std::vector<Finding> remaining;   // the findings of the last lint, which ran on the final texts
  size_t rounds = 0;                // rounds that applied at least one fix
  bool converged = true;            // false when the round limit stopped the loop with fixes left
  size_t applied() const {
    size_t n = 0;
    for (auto& f : files) n += f.applied;
    return n;
  }
};

inline constexpr size_t kMaxFixRounds = 10;

// lint -> apply -> re-lint until no fix applies or `max_rounds` rounds have applied fixes. The
// last call of `lint` is always on the final texts, so `remaining` (and anything the caller's
// `lint` kept aside from that call) describes them.
FixRunResult fix_until_stable(std::vector<SourceText> files, const LintFn& lint, const FixOptions& opts,
                              size_t max_rounds = kMaxFixRounds);

// ---- unified diff -----------------------------------------------------------------------

// The unified diff of `old_text` -> `new_text` as `git diff` writes it for one file: `--- a/path`,
// `+++ b/path` (each with a trailing tab when the path holds a space, as git writes them), hunks `@@ -a,b +c,d @@` with `context` lines of context (hunks whose contexts
// would meet or overlap are merged into one), "\ No newline at end of file" after a last line
// without one. Lines keep their bytes (a CRLF file's lines end in "\r\n" in the diff too).
// Empty when the texts are equal. The result applies with `git apply` and `patch -p1` from the
// folder `path` is relative to.
std::string unified_diff(std::string_view path, std::string_view old_text, std::string_view new_text,
                         size_t context = 3);

}  // namespace tl
