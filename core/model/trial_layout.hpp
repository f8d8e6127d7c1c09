#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/model/reduction.hpp"

namespace rulestream {

// Where smdebug puts things inside a trial folder (see smdebug-samples/FORMAT.md).
inline constexpr std::string_view kEventsDir = "events/";
inline constexpr std::string_view kIndexDir = "index/";
inline constexpr std::string_view kCollectionsDir = "collections/";
inline constexpr std::string_view kEndOfJobMarker = "training_job_end.ts";
inline constexpr std::int64_t kStepsPerIndexBucket = 1000;

// "events/000000000012/000000000012_worker_0.tfevents"
std::string event_file_path(std::int64_t global_step, std::string_view worker);
// "index/000000000/000000000012_worker_0.json"
std::string index_file_path(std::int64_t global_step, std::string_view worker);
// "index/000000001/" for steps 1000..1999
std::string index_bucket_path(std::int64_t global_step);
// "collections/000000000/worker_0_collections.json"
std::string collections_file_path(std::string_view worker);

// The step and worker of an index or event file, from its name, as smdebug's reader takes them
// (r".+/\d+_(.+)\.(json|csv|tfevents)$": worker names may contain '_'). Worker names come back
// as written in the file name: a serialized TF device name is not turned back into a device.
struct StepFileName {
  std::int64_t step = 0;
  std::string worker;
};
std::optional<StepFileName> parse_step_file_name(std::string_view path);

// The worker of a collections file (r".*/collections/.+/(.+)_collections.(json|ts)", matched
// from the start but, as re.match, not to the end). A path relative to the trial root
// ("collections/000000000/...") is matched as if the root's '/' stood before it.
std::optional<std::string> parse_collections_worker(std::string_view path);

// Saved reductions are tensors named "smdebug/reductions/<r>/<tensor>" or
// "smdebug/reductions/abs_<r>/<tensor>", with every ":<digits>" in the tensor name removed
// (smdebug's re.sub(r":\d+", "", ...)). Parsing splits after the prefix at the first '/' and
// accepts only the spellings smdebug writes ("l2", not the config's "l2_norm").
inline constexpr std::string_view kReductionTensorPrefix = "smdebug/reductions/";
std::string reduction_tensor_name(std::string_view tensor, ReductionKey key);
std::optional<std::pair<std::string, ReductionKey>> parse_reduction_tensor_name(
    std::string_view name);

}  // namespace rulestream
