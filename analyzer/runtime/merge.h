// `trainlint merge node-*.json`: the `trainlint run --format json` reports of the nodes of one
// multi-node job (each node ran `trainlint run --output node-K.json -- torchrun --nnodes N
// --node_rank K ...`) as one report: every rank's figures, the slowest rank named, the stragglers
// shown, and the findings of all nodes with the node and rank where each cost most.
//
// Figures per rank come from the `processes` of each node's `run` object (role `rank`): its
// steps, its median and mean step over the counted steps (warm-up step 1 left out) and its data
// wait inside them. Synchronous training (DDP) evens step times out (every rank waits for the
// slowest at each all-reduce), so:
// - the slowest rank is the one with the longest median step when the ranks' steps differ by more
//   than 5 %; otherwise the one that waited longest for its data per step (the others wait for it);
// - a straggler is a rank whose median step is over 10 % above the ranks' median, or whose data
//   wait per step exceeds the ranks' median wait by more than 10 % of the median step.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tl::runtime {

struct NodeReport {
  std::string file;    // as given on the command line
  nlohmann::json doc;  // the `trainlint run --format json` document
};

// The merged document, or an error (a report that is not a `trainlint run` JSON report).
struct MergeResult {
  nlohmann::json doc;
  std::string error;
};
MergeResult merge_reports(const std::vector<NodeReport>& nodes);

void write_merge_text(std::ostream& out, const nlohmann::json& merged);

struct MergeOptions {
  std::vector<std::string> files;
  std::string format = "text";  // text / json
  std::string output;           // empty: stdout
};

// Reads the files, merges, writes. 0, or 2 when a file cannot be read or is not a run report.
int merge_command(const MergeOptions& opts);

}  // namespace tl::runtime
