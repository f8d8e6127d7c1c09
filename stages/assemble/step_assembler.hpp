#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace rulestream {

// Joins the workers of a distributed job step by step and lets steps go, in global-step order
// and each once, when rules may look at them:
// - every worker the job declared has written the step; or
// - a later step is complete (smdebug's rule: the missing workers will never write it); or
// - the job ended (or the replay ran out of files); or
// - a grace period passed since the step's first worker wrote it (the step goes out marked
//   incomplete: a silent worker must not stall the rules forever).
// Not thread-safe: the pipeline drives it from one serial node.
class StepAssembler {
 public:
  using Clock = std::chrono::steady_clock;
  struct Ready {
    std::int64_t step = 0;
    bool incomplete = false;  // released before every worker wrote it
    friend bool operator==(const Ready&, const Ready&) = default;
  };

  // grace <= 0: wait for every worker until the job ends.
  explicit StepAssembler(std::chrono::milliseconds grace);

  void set_num_workers(int workers) { num_workers_ = workers > 0 ? workers : 1; }
  // A worker's files for a step have landed (and been decoded). A step below the last one
  // released is late: it is counted and not released again.
  void landed(std::int64_t step, const std::string& worker, Clock::time_point now);
  // Nothing more will land: every pending step may go.
  void end_of_job() { ended_ = true; }

  // What can go now, in order. `held_from`: a step whose files are still being read (announced
  // by the source, not landed yet); it and later steps wait, whatever else they have.
  std::vector<Ready> take_ready(Clock::time_point now,
                                std::optional<std::int64_t> held_from = std::nullopt);

  std::int64_t last_released() const { return last_released_; }
  std::size_t pending() const { return pending_.size(); }
  std::size_t late_landings() const { return late_; }

 private:
  struct Pending {
    std::set<std::string> workers;
    Clock::time_point first_seen;
  };

  std::chrono::milliseconds grace_;
  int num_workers_ = 1;
  bool ended_ = false;
  std::int64_t last_released_ = -1;
  std::size_t late_ = 0;
  std::map<std::int64_t, Pending> pending_;
};

}  // namespace rulestream
