#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "core/model/storage.hpp"
#include "engine/graph/trial_presence.hpp"

namespace rulestream::cli {

struct TensorBoardInspectRequest {
  bool json = false;
  std::optional<std::string> run;  // with `tag`: that tag of that run
  std::optional<std::string> tag;  // every value of one tag, in file order
};

// `rulestream inspect PATH` for a job of a series format (a TensorBoard logdir, a folder of text
// metrics). The summary: runs, tags by kind with their value counts and step ranges, and the
// problems found. With a tag, its every value in file order. --json prints the contract
// docs/tensorboard.md states, for either format (counts and points include duplicates and
// restarts: this is the raw view, not what rules see; a value with no time has a wall_time of
// NaN). Throws RulestreamError for a listing that fails, and std::invalid_argument for a run or
// tag the job lacks.
void inspect_series(const Storage& storage, TrialFormat format,
                    const TensorBoardInspectRequest& request, std::ostream& out);

}  // namespace rulestream::cli
