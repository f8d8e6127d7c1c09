#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/model/mode.hpp"
#include "core/model/reduction.hpp"

namespace rulestream {

// When a collection is saved in one mode (smdebug's SaveConfigMode).
struct SaveConfigMode {
  std::int64_t save_interval = 500;
  std::vector<std::int64_t> save_steps;
  std::int64_t start_step = 0;
  std::optional<std::int64_t> end_step;

  friend bool operator==(const SaveConfigMode&, const SaveConfigMode&) = default;
};

// Which reductions a collection saves instead of (or beside) its raw tensors.
struct ReductionConfig {
  bool save_raw_tensor = true;
  std::vector<ReductionKey> reductions;  // in the order the config names them
  bool save_shape = false;

  friend bool operator==(const ReductionConfig&, const ReductionConfig&) = default;
};

// A named group of tensors, as the training job's hook declared it.
struct Collection {
  std::string name;
  std::vector<std::string> include_regex;
  std::set<std::string> tensor_names;
  ReductionConfig reduction_config;
  // A mode the user never configured is absent (smdebug writes null).
  std::map<Mode, std::optional<SaveConfigMode>> save_config;
  bool save_histogram = true;

  friend bool operator==(const Collection&, const Collection&) = default;
};

}  // namespace rulestream
