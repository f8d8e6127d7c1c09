#pragma once

#include <array>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "pipeline/tensor_value.hpp"
#include "stages/reductions.hpp"

namespace rulestream {

// Decoded tensors and their reductions, keyed by where their record sits (event file, offset).
// Values are kept within a byte budget, least recently used leaving first (a value that left
// is read again from its file when asked for); reductions are small and kept for every record,
// so rules can look at every step of a long job without re-reading it.
// Thread-safe; entries are striped over several locks so parallel decoders rarely meet.
class RecordCache {
 public:
  explicit RecordCache(std::size_t value_budget_bytes);

  std::optional<TensorValue> value(const std::string& file, std::uint64_t start);
  void put_value(const std::string& file, std::uint64_t start, const TensorValue& value);

  std::shared_ptr<const ReductionSet> reductions(const std::string& file, std::uint64_t start);
  void put_reductions(const std::string& file, std::uint64_t start, ReductionSet reductions);

  std::size_t value_bytes() const;
  std::size_t value_budget() const { return budget_; }

 private:
  static constexpr std::size_t kStripes = 16;
  struct Stripe {
    mutable std::mutex mutex;
    // Most recently used first.
    std::list<std::pair<std::string, TensorValue>> values;
    std::unordered_map<std::string, std::list<std::pair<std::string, TensorValue>>::iterator>
        value_index;
    std::size_t value_bytes = 0;
    std::unordered_map<std::string, std::shared_ptr<const ReductionSet>> reductions;
  };
  Stripe& stripe_for(const std::string& key);
  static std::string key_of(const std::string& file, std::uint64_t start);
  static std::size_t bytes_of(const TensorValue& value);

  std::size_t budget_;
  std::array<Stripe, kStripes> stripes_;
};

}  // namespace rulestream
