#include "stages/load/decode_selection.hpp"

#include <algorithm>

#include "core/model/trial_layout.hpp"

namespace rulestream {

void TensorMatcher::add(const RequiredTensors& needs) {
  if (needs.nothing) return;
  if (needs.empty()) all_ = true;
  if (all_) return;
  names_.insert(needs.names.begin(), needs.names.end());
  for (const auto& pattern : needs.regexes) regexes_.emplace_back(pattern);
  collections_.insert(needs.collections.begin(), needs.collections.end());
}

bool TensorMatcher::matches(const std::string& tensor,
                            const std::map<std::string, Collection>* collections) const {
  if (all_ || names_.contains(tensor)) return true;
  if (any_found_in(regexes_, tensor)) return true;
  if (collections == nullptr) return !collections_.empty();  // unknown yet: be generous
  if (collections != bound_collections_) bind(collections);
  return std::any_of(bound_names_.begin(), bound_names_.end(),
                     [&](const auto* names) { return names->contains(tensor); }) ||
         any_found_in(bound_regexes_, tensor);
}

void TensorMatcher::bind(const std::map<std::string, Collection>* collections) const {
  bound_collections_ = collections;
  bound_names_.clear();
  bound_regexes_.clear();
  for (const auto& name : collections_) {
    const auto it = collections->find(name);
    if (it == collections->end()) continue;
    bound_names_.push_back(&it->second.tensor_names);
    for (const auto& pattern : it->second.include_regex) bound_regexes_.emplace_back(pattern);
  }
}

DecodeSelection::DecodeSelection(std::vector<RequiredTensors> required)
    : required_(std::move(required)) {
  for (const RequiredTensors& each : required_) decode_.add(each);
}

std::vector<DecodeSelection::Use> DecodeSelection::uses(
    const std::vector<TensorLocation>& tensors,
    const std::shared_ptr<const std::map<std::string, Collection>>& collections,
    const std::vector<bool>& reading) const {
  std::vector<Use> result;
  result.reserve(tensors.size());
  std::lock_guard lock(memo_mutex_);
  if (collections != memo_collections_ || reading != memo_reading_) {
    memo_.clear();
    memo_collections_ = collections;
    memo_reading_ = reading;
    values_ = TensorMatcher{};
    for (std::size_t i = 0; i < required_.size() && i < reading.size(); ++i) {
      if (reading[i] && required_[i].values) values_.add(required_[i]);
    }
  }
  for (const auto& location : tensors) {
    auto [it, inserted] = memo_.try_emplace(location.tensor_name, Use::None);
    if (inserted) it->second = decide(location.tensor_name, collections.get());
    result.push_back(it->second);
  }
  return result;
}

DecodeSelection::Use DecodeSelection::decide(
    const std::string& tensor, const std::map<std::string, Collection>* collections) const {
  if (parse_reduction_tensor_name(tensor)) return Use::None;  // saved reductions: on demand
  if (values_.matches(tensor, collections)) return Use::Values;
  return decode_.matches(tensor, collections) ? Use::Reductions : Use::None;
}

}  // namespace rulestream
