// --add-noqa: the edits that put `# trainlint: ignore[CODES]` on the line of every finding of a
// module, so that a team can adopt trainlint on an old code base in one commit. The comment goes
// on the flagged statement's first line, or on its last line when the first ends inside a
// multi-line string or with a backslash continuation; an existing `# trainlint: ignore[...]` on
// that line gains the new codes; any other comment is kept and the directive follows it. TL001
// (unused suppression) is skipped: no comment can silence it, `--fix` removes what it reports.
#pragma once
#include <string>
#include <vector>

#include "analyzer/core/finding.h"
#include "analyzer/python/model.h"

namespace tl::py {

struct NoqaEdits {
  std::vector<Edit> edits;       // sorted, non-overlapping
  size_t suppressed = 0;         // findings the edits suppress
  std::vector<std::string> skipped;  // "LINE: why" for findings no comment can be put beside
};

NoqaEdits add_noqa_edits(const Module& m, const std::vector<const Finding*>& findings);

// Applies sorted, non-overlapping edits to a text.
std::string apply_edits(const std::string& text, const std::vector<Edit>& edits);

}  // namespace tl::py
