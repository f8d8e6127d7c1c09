#include "apps/serve/job_own_sinks.hpp"

#include <stdexcept>

#include "apps/serve/state_folder.hpp"
#include "core/model/exceptions.hpp"
#include "engine/graph/rules_file.hpp"
#include "engine/graph/sink_factory.hpp"
#include "sources/open/storage_factory.hpp"

namespace rulestream {
namespace {

// How long a rules file that could not be used is not read again.
constexpr std::chrono::seconds kRetryFailureAfter{5};

}  // namespace

JobOwnSinks::JobOwnSinks(std::string rules_file, StorageOptions storage, std::ostream& out,
                         ServiceMetrics& metrics, std::chrono::milliseconds idle,
                         std::filesystem::path state_dir)
    : rules_file_(std::move(rules_file)),
      storage_(std::move(storage)),
      out_(out),
      metrics_(metrics),
      idle_(idle),
      state_dir_(std::move(state_dir)) {}

std::string JobOwnSinks::rules_file_of(const std::string& job_place) const {
  return job_place + (job_place.ends_with('/') ? "" : "/") + rules_file_;
}

JobOwnSinks::Job& JobOwnSinks::job(const std::string& job_place,
                                   std::chrono::steady_clock::time_point now) {
  auto found = jobs_.find(job_place);
  if (found != jobs_.end() &&
      (!found->second.failure || now - found->second.last_used < kRetryFailureAfter)) {
    if (!found->second.failure) found->second.last_used = now;
    return found->second;
  }
  Job job;
  job.last_used = now;
  try {
    const auto storage = open_storage(job_place, storage_);
    if (!storage->exists(rules_file_)) {
      throw StorageError(rules_file_of(job_place) + " is not there any more");
    }
    RulesFile file =
        parse_rules_file(storage->read(rules_file_).as_string_view(), rules_file_of(job_place));
    job.configs = std::move(file.sinks);
    if (!state_dir_.empty()) place_dead_letters(job.configs, state_dir_);
    job.sinks.resize(job.configs.size());
  } catch (const std::exception& error) {  // named: the reader's errors name the file
    job.failure = error.what();
  }
  return jobs_.insert_or_assign(job_place, std::move(job)).first->second;
}

Sink& JobOwnSinks::sink(const std::string& job_place, std::size_t index,
                        std::chrono::steady_clock::time_point now) {
  Job& job = this->job(job_place, now);
  if (job.failure) {
    throw StorageError("the sinks of the job's own rules file: " + *job.failure);
  }
  if (index >= job.configs.size()) {
    throw std::invalid_argument(rules_file_of(job_place) + " has " +
                                std::to_string(job.configs.size()) + " sink(s), not a sink " +
                                std::to_string(index + 1) + " (was it changed while the job ran?)");
  }
  if (!job.sinks[index]) {
    try {
      job.sinks[index] =
          std::make_unique<CountedSink>(make_sink(job.configs[index], out_), metrics_);
    } catch (const std::exception& error) {
      throw std::invalid_argument(rules_file_of(job_place) + ", sink " + std::to_string(index + 1) +
                                  ": " + error.what());
    }
  }
  return *job.sinks[index];
}

void JobOwnSinks::let_go_of_idle(std::chrono::steady_clock::time_point now) {
  std::erase_if(jobs_, [&](const auto& entry) {
    const Job& job = entry.second;
    return now - job.last_used >=
           (job.failure ? std::chrono::milliseconds(kRetryFailureAfter) : idle_);
  });
}

}  // namespace rulestream
