#include "pipeline/name_filter_cache.hpp"

namespace rulestream {

bool NameFilterCache::Verdicts::passes(const std::string& store_name,
                                       const std::function<bool(const std::string&)>& decide) {
  if (const auto it = passes_.find(&store_name); it != passes_.end()) return it->second;
  const bool verdict = decide(store_name);
  passes_.emplace(&store_name, verdict);
  return verdict;
}

NameFilterCache::Verdicts& NameFilterCache::verdicts(const std::string& key, bool* is_new) {
  std::lock_guard lock(mutex_);
  auto [it, inserted] = filters_.try_emplace(key);
  if (inserted) it->second = std::make_unique<Verdicts>();
  if (is_new != nullptr) *is_new = inserted;
  return *it->second;
}

}  // namespace rulestream
