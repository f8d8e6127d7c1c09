#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "core/model/storage.hpp"

namespace rulestream::cli {

struct TensorBoardInspectRequest {
  bool json = false;
  std::optional<std::string> run;  // with `tag`: that tag of that run
  std::optional<std::string> tag;  // every value of one tag, in file order
};

// `rulestream inspect LOGDIR` for a TensorBoard logdir. The summary: runs, tags by kind with
// their value counts and step ranges, and the problems found. With a tag, its every value in
// file order. --json prints the contract docs/tensorboard.md states (counts and points include
// duplicates and restarts: this is the raw view, not what rules see). Throws RulestreamError
// for a listing that fails, and std::invalid_argument for a run or tag the logdir lacks.
void inspect_tensorboard(const Storage& storage, const TensorBoardInspectRequest& request,
                         std::ostream& out);

}  // namespace rulestream::cli
