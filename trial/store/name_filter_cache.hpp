#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "trial/store/step_tensors_cache.hpp"

namespace rulestream {

struct TensorHistory;  // trial/store/trial_store.hpp

// Remembers which tensor names pass a name filter (a query's regexes, a collection's names and
// include_regex), so that rules asking the same question at every step of a long job match
// each name once instead of running the regexes over every name at every step.
// Thread-safe: each filter's verdicts have their own lock.
class NameFilterCache {
 public:
  // The verdicts of one filter. Use under lock(); `decide` is called for names not seen yet.
  // Names are the store's own strings (its tensor map's keys: one per tensor, never moved or
  // freed while the store lives), and are remembered by address: rules ask about every tensor
  // at every step, and hashing each name was most of what a filtered query cost.
  // The tensors of a store that pass a filter, in name order (the store's names and
  // histories), as worked out when the store held `of_tensors` tensors.
  struct PassingTensors {
    std::size_t of_tensors = 0;
    std::vector<std::pair<const std::string*, const TensorHistory*>> tensors;
  };

  class Verdicts {
   public:
    std::unique_lock<std::mutex> lock() { return std::unique_lock(mutex_); }
    bool passes(const std::string& store_name,
                const std::function<bool(const std::string&)>& decide);
    // The positions in `layout` of the names that pass, worked out once per layout: the steps
    // of a job share a few layouts, so a rule's filter costs nothing per step after the first.
    std::shared_ptr<const std::vector<std::uint32_t>> passing(
        const std::shared_ptr<const StepLayout>& layout,
        const std::function<bool(const std::string&)>& decide);

    // Kept for the filter, under lock(): Trial::tensor_refs works them out again when the
    // store holds more tensors than they were worked out from.
    PassingTensors& passing_tensors() { return passing_tensors_; }

   private:
    // Layouts remembered (most recent last); each entry keeps its layout alive, so an address
    // is never mistaken for a later layout's.
    static constexpr std::size_t kLayoutsKept = 4;

    std::mutex mutex_;
    std::unordered_map<const std::string*, bool> passes_;
    std::vector<std::pair<std::shared_ptr<const StepLayout>,
                          std::shared_ptr<const std::vector<std::uint32_t>>>>
        layouts_;
    PassingTensors passing_tensors_;
  };

  // The verdicts for the filter `key` (which must identify the filter exactly: its regexes and
  // the collection definition it reads); `is_new` tells whether it was just created.
  Verdicts& verdicts(const std::string& key, bool* is_new = nullptr);

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, std::unique_ptr<Verdicts>> filters_;
};

}  // namespace rulestream
