#include "apps/serve/job_discovery.hpp"

#include "core/model/exceptions.hpp"

namespace rulestream {

JobDiscovery::JobDiscovery(const std::vector<std::string>& roots, const StorageOptions& storage) {
  for (const auto& root : roots) roots_.push_back(open_job_root(root, storage));
}

std::vector<FoundJob> JobDiscovery::scan(std::vector<std::string>& problems) {
  std::vector<FoundJob> found;
  for (const auto& root : roots_) {
    std::vector<JobFolder> folders;
    try {
      folders = root->list();  // in name order: ids handed out in a stable order
    } catch (const std::exception& failure) {
      problems.push_back(failure.what());  // names the root
      continue;
    }
    for (const JobFolder& folder : folders) {
      if (known_.contains(folder.location)) continue;
      std::optional<FoundJob> job = look_at(*root, folder, problems);
      if (!job) continue;
      known_.insert(folder.location);
      for (int suffix = 2; ids_.contains(job->id); ++suffix) {
        job->id = folder.name + "-" + std::to_string(suffix);
      }
      ids_.insert(job->id);
      found.push_back(std::move(*job));
    }
  }
  return found;
}

std::optional<FoundJob> JobDiscovery::look_at(const JobRoot& root, const JobFolder& folder,
                                              std::vector<std::string>& problems) {
  FoundJob job{folder.name, folder.location, TrialFormat::Smdebug, {}};
  try {
    const std::optional<TrialFormat> format = detect_format(*root.open(folder));
    if (!format) return std::nullopt;
    job.format = *format;
  } catch (const StorageAccessDenied& refused) {
    job.refused = folder.location + ": " + refused.what();  // S3 names only the bucket
  } catch (const std::exception& failure) {
    problems.push_back(folder.location + ": " + failure.what());
    return std::nullopt;
  }
  return job;
}

}  // namespace rulestream
