#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace rulestream {

// Remembers which tensor names pass a name filter (a query's regexes, a collection's names and
// include_regex), so that rules asking the same question at every step of a long job match
// each name once instead of running std::regex over every name at every step.
// Thread-safe: each filter's verdicts have their own lock.
class NameFilterCache {
 public:
  // The verdicts of one filter. Use under lock(); `decide` is called for names not seen yet.
  // Names are the store's own strings (its tensor map's keys: one per tensor, never moved or
  // freed while the store lives), and are remembered by address: rules ask about every tensor
  // at every step, and hashing each name was most of what a filtered query cost.
  class Verdicts {
   public:
    std::unique_lock<std::mutex> lock() { return std::unique_lock(mutex_); }
    bool passes(const std::string& store_name,
                const std::function<bool(const std::string&)>& decide);

   private:
    std::mutex mutex_;
    std::unordered_map<const std::string*, bool> passes_;
  };

  // The verdicts for the filter `key` (which must identify the filter exactly: its regexes and
  // the collection definition it reads); `is_new` tells whether it was just created.
  Verdicts& verdicts(const std::string& key, bool* is_new = nullptr);

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, std::unique_ptr<Verdicts>> filters_;
};

}  // namespace rulestream
