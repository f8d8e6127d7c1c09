#pragma once

#include <string>
#include <vector>

namespace rulestream {

// What a rule reads, so sources can fetch only that (a rule over `losses` must not make the
// pipeline download gradients). No names, regexes or collections means "anything".
struct RequiredTensors {
  std::vector<std::string> names;
  std::vector<std::string> regexes;
  std::vector<std::string> collections;
  // Whether the rule reads whole values (Tensor::value), not only reductions and element counts.
  // The pipeline keeps decoded values (within max_memory) only when some rule does, so a rule that
  // does not should say so: everything it reads is then computed in the one decoding pass.
  bool values = true;
  // The rule reads no tensor at all (it looks only at steps and when they arrived).
  bool nothing = false;
  bool empty() const { return names.empty() && regexes.empty() && collections.empty(); }
};

}  // namespace rulestream
