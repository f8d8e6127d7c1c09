#include "apps/serve/lingering_sinks.hpp"

#include <algorithm>
#include <thread>

namespace rulestream {

LingeringSinks::~LingeringSinks() {
  // At most kLettingGoThreads at once, each letting go of every kLettingGoThreads-th sink: a
  // thousand jobs' webhooks to one dead peer must not become a thousand threads.
  constexpr std::size_t kLettingGoThreads = 16;
  std::vector<std::jthread> letting_go;
  for (std::size_t first = 0; first < std::min(kLettingGoThreads, kept_.size()); ++first) {
    letting_go.emplace_back([this, first] {
      for (std::size_t i = first; i < kept_.size(); i += kLettingGoThreads) kept_[i].sink.reset();
    });
  }
}  // joined here

void LingeringSinks::keep(std::string trial, std::shared_ptr<Sink> sink) {
  std::vector<std::shared_ptr<Sink>> settled;  // let go outside the lock
  {
    const std::lock_guard lock(mutex_);
    for (auto it = kept_.begin(); it != kept_.end();) {
      if (it->sink->undelivered(it->trial) == 0) {
        settled.push_back(std::move(it->sink));
        it = kept_.erase(it);
      } else {
        ++it;
      }
    }
    if (sink->undelivered(trial) > 0) kept_.push_back({std::move(trial), std::move(sink)});
  }
}

std::int64_t LingeringSinks::undelivered(std::string_view trial) const {
  const std::lock_guard lock(mutex_);
  std::int64_t count = 0;
  for (const Kept& kept : kept_) {
    if (kept.trial == trial) count += kept.sink->undelivered(trial);
  }
  return count;
}

std::size_t LingeringSinks::size() const {
  const std::lock_guard lock(mutex_);
  return kept_.size();
}

}  // namespace rulestream
