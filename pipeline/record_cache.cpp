#include "pipeline/record_cache.hpp"

#include <functional>

namespace rulestream {

RecordCache::RecordCache(std::size_t value_budget_bytes) : budget_(value_budget_bytes) {}

std::string RecordCache::key_of(const std::string& file, std::uint64_t start) {
  std::string key = file;
  key += '@';
  key += std::to_string(start);
  return key;
}

RecordCache::Stripe& RecordCache::stripe_for(const std::string& key) {
  return stripes_[std::hash<std::string>{}(key) % kStripes];
}

std::size_t RecordCache::bytes_of(const TensorValue& value) {
  if (!value.is_string()) return value.bytes().size();
  std::size_t bytes = 0;
  for (const auto& text : value.strings()) bytes += text.size() + sizeof(std::string);
  return bytes;
}

std::optional<TensorValue> RecordCache::value(const std::string& file, std::uint64_t start) {
  const std::string key = key_of(file, start);
  Stripe& stripe = stripe_for(key);
  std::lock_guard lock(stripe.mutex);
  const auto it = stripe.value_index.find(key);
  if (it == stripe.value_index.end()) return std::nullopt;
  stripe.values.splice(stripe.values.begin(), stripe.values, it->second);
  return it->second->second;
}

void RecordCache::put_value(const std::string& file, std::uint64_t start,
                            const TensorValue& value) {
  const std::size_t bytes = bytes_of(value);
  const std::size_t stripe_budget = budget_ / kStripes;
  if (bytes > stripe_budget) return;  // would evict everything else for one value
  const std::string key = key_of(file, start);
  Stripe& stripe = stripe_for(key);
  std::lock_guard lock(stripe.mutex);
  if (stripe.value_index.contains(key)) return;
  stripe.values.emplace_front(key, value);
  stripe.value_index[key] = stripe.values.begin();
  stripe.value_bytes += bytes;
  while (stripe.value_bytes > stripe_budget && !stripe.values.empty()) {
    auto& oldest = stripe.values.back();
    stripe.value_bytes -= bytes_of(oldest.second);
    stripe.value_index.erase(oldest.first);
    stripe.values.pop_back();
  }
}

std::shared_ptr<const ReductionSet> RecordCache::reductions(const std::string& file,
                                                            std::uint64_t start) {
  const std::string key = key_of(file, start);
  Stripe& stripe = stripe_for(key);
  std::lock_guard lock(stripe.mutex);
  const auto it = stripe.reductions.find(key);
  return it == stripe.reductions.end() ? nullptr : it->second;
}

void RecordCache::put_reductions(const std::string& file, std::uint64_t start,
                                 ReductionSet reductions) {
  const std::string key = key_of(file, start);
  Stripe& stripe = stripe_for(key);
  auto shared = std::make_shared<const ReductionSet>(std::move(reductions));
  std::lock_guard lock(stripe.mutex);
  stripe.reductions.emplace(key, std::move(shared));
}

std::size_t RecordCache::value_bytes() const {
  std::size_t total = 0;
  for (const auto& stripe : stripes_) {
    std::lock_guard lock(stripe.mutex);
    total += stripe.value_bytes;
  }
  return total;
}

}  // namespace rulestream
