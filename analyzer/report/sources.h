// The analysed SourceFile of each path in a LintResult, for reporters: the text reporter's source
// excerpt, and a notebook's positions read as cell and line in the cell (SourceFile::cell_line).
// One class, tl::report::SourceIndex, declared in locate.h: a second inline definition here broke
// the one-definition rule (the two differed, and the linker kept one of them for both).
#pragma once
#include "analyzer/report/locate.h"
