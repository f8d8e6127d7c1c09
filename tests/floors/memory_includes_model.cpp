// Built only by the test floors.BuildLetsMemoryIncludeModel, with the memory floor's flags: the
// control for the refusals beside it (same mechanism, an include one floor down, which builds).
#include "core/model/dtype.hpp"

namespace rulestream {
DType memory_floor_probe() {
  return DType::Float32;
}
}  // namespace rulestream
