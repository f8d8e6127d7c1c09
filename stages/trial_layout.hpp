#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "pipeline/reduction.hpp"

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
// (r".+/\d+_(.+)\.(json|csv|tfevents)$": worker names may contain '_').
struct StepFileName {
  std::int64_t step = 0;
  std::string worker;
};
std::optional<StepFileName> parse_step_file_name(std::string_view path);

// The worker of a collections file (r".*/collections/.+/(.+)_collections.(json|ts)").
std::optional<std::string> parse_collections_worker(std::string_view path);

// Saved reductions are tensors named "smdebug/reductions/<r>/<tensor>" or
// "smdebug/reductions/abs_<r>/<tensor>" (any ":<digits>" suffix of the tensor stripped).
inline constexpr std::string_view kReductionTensorPrefix = "smdebug/reductions/";
std::string reduction_tensor_name(std::string_view tensor, ReductionKey key);
std::optional<std::pair<std::string, ReductionKey>> parse_reduction_tensor_name(
    std::string_view name);

}  // namespace rulestream
