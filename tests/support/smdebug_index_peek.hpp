#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace rulestream::testing {

// Whether the index file of (global step, worker) lists `tensor` both in tensor_payload (its
// raw value was saved) and in shape_payload (its shape was saved too).
//
// smdebug's IndexReader._update_tensors_from_json keeps one entry per (tensor, step, worker)
// and replaces it with each payload entry it reads, so the shape entry (read second)
// replaces the raw value's location: smdebug then raises TensorUnavailableForStep for a value
// that was saved, and cannot compute reductions from it. rulestream keeps both. The suite
// reads the index file itself to tell that smdebug accident from a value really missing.
bool index_lists_value_and_shape(const std::filesystem::path& trial_dir, std::int64_t step,
                                 const std::string& worker, const std::string& tensor);

}  // namespace rulestream::testing
