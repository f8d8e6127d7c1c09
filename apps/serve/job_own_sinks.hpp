#pragma once

// The sinks of jobs' own rules files, on the instance that delivers their events from the
// stream (event_delivery.hpp). The job's owner publishes those events instead of writing them
// (StreamSink), so that a takeover's replay, which makes every event again, delivers none of
// them twice; whichever instance reads such an event makes the sink from the job's rules file
// when the first event for it arrives, as the owner's pipeline would have.

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "apps/serve/job_sinks.hpp"
#include "apps/serve/service_metrics.hpp"
#include "core/model/storage_options.hpp"
#include "engine/graph/pipeline_config.hpp"

namespace rulestream {

// Not thread-safe: the delivering thread's alone.
class JobOwnSinks {
 public:
  // `rules_file`: the name of a job's own rules file in its folder or prefix (serve's
  // --job-rules); `storage`: how to reach a job on S3; stdout sinks write to `out`. A job's
  // sinks are let go of (flushed and closed) after `idle` without an event for them. Their
  // sinks that name no dead-letter file dead-letter into `state_dir` (when not empty).
  JobOwnSinks(std::string rules_file, StorageOptions storage, std::ostream& out,
              ServiceMetrics& metrics, std::chrono::milliseconds idle,
              std::filesystem::path state_dir = {});
  JobOwnSinks(const JobOwnSinks&) = delete;
  JobOwnSinks& operator=(const JobOwnSinks&) = delete;

  // Sink `index` of the rules file of the job at `job_place` (counted from its first sink).
  // Throws RulestreamError or std::invalid_argument, naming the rules file, when the file
  // cannot be read or parsed, has no such sink, or the sink cannot be made (a file sink that
  // cannot be opened). A failure is remembered for a few seconds: a batch of a hundred events
  // for a job whose file is gone reads it once.
  Sink& sink(const std::string& job_place, std::size_t index,
             std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());
  // Lets go of the sinks of jobs that had no event for the idle time (after the caller has
  // flushed what it wrote to them).
  void let_go_of_idle(std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());
  std::size_t jobs_held() const { return jobs_.size(); }

 private:
  struct Job {
    std::vector<SinkConfig> configs;                  // the rules file's sinks, in order
    std::vector<std::unique_ptr<CountedSink>> sinks;  // made when first written to
    std::optional<std::string> failure;               // the file could not be used
    std::chrono::steady_clock::time_point last_used;
  };
  // The job's rules file's sinks, or its failure (read afresh once a failure is old enough).
  Job& job(const std::string& job_place, std::chrono::steady_clock::time_point now);
  std::string rules_file_of(const std::string& job_place) const;

  const std::string rules_file_;
  const StorageOptions storage_;
  std::ostream& out_;
  ServiceMetrics& metrics_;
  const std::chrono::milliseconds idle_;
  const std::filesystem::path state_dir_;
  std::map<std::string, Job> jobs_;  // by job place
};

}  // namespace rulestream
