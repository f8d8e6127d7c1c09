#include "trial/store/name_filter_cache.hpp"

namespace rulestream {

bool NameFilterCache::Verdicts::passes(const std::string& store_name,
                                       const std::function<bool(const std::string&)>& decide) {
  if (const auto it = passes_.find(&store_name); it != passes_.end()) return it->second;
  const bool verdict = decide(store_name);
  passes_.emplace(&store_name, verdict);
  return verdict;
}

std::shared_ptr<const std::vector<std::uint32_t>> NameFilterCache::Verdicts::passing(
    const std::shared_ptr<const StepLayout>& layout,
    const std::function<bool(const std::string&)>& decide) {
  for (const auto& [known, positions] : layouts_) {
    if (known == layout) return positions;
  }
  auto positions = std::make_shared<std::vector<std::uint32_t>>();
  for (std::size_t i = 0; i < layout->size(); ++i) {
    if (passes(*layout->names[i], decide)) positions->push_back(static_cast<std::uint32_t>(i));
  }
  if (layouts_.size() == kLayoutsKept) layouts_.erase(layouts_.begin());
  layouts_.emplace_back(layout, positions);
  return positions;
}

NameFilterCache::Verdicts& NameFilterCache::verdicts(const std::string& key, bool* is_new) {
  std::lock_guard lock(mutex_);
  auto [it, inserted] = filters_.try_emplace(key);
  if (inserted) it->second = std::make_unique<Verdicts>();
  if (is_new != nullptr) *is_new = inserted;
  return *it->second;
}

}  // namespace rulestream
