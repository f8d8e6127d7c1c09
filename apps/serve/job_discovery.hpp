#pragma once

// Finds jobs: every sub-folder of a root (every sub-prefix of an S3 root) that holds an smdebug
// trial or a TensorBoard logdir. A folder is looked at on every scan until it holds one or the
// other (a job that has not written yet is no job yet), then never again. Scans are a listing
// of each root plus, for each folder not yet a job, the look detect_format takes: polling, not
// inotify, so that a root with thousands of finished jobs costs one directory read (one LIST
// per 1000 sub-prefixes on S3) per scan.

#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/model/storage_options.hpp"
#include "engine/graph/trial_presence.hpp"
#include "sources/open/job_root.hpp"

namespace rulestream {

struct FoundJob {
  std::string id;  // the folder's name; "NAME-2", "NAME-3"... when another root has that name
  // A local folder, or an S3 job's URI ("s3://bucket/jobs/run-1": string() gives it back).
  std::filesystem::path path;
  TrialFormat format = TrialFormat::Smdebug;
  // Set: the job's storage refused to be looked at (S3's 403): it is a job, in Error for this
  // reason, and its format is unknown (left Smdebug). Trying again would not help.
  std::string refused;
};

// Not thread-safe: one thread scans (JobService's supervisor).
class JobDiscovery {
 public:
  // Local folders or s3://bucket/prefix roots, each looked at now: StorageError naming a
  // folder that does not exist, a bucket that does not exist, or a prefix that may not be
  // listed (open_job_root).
  JobDiscovery(const std::vector<std::string>& roots, const StorageOptions& storage);

  // The jobs that appeared since the last scan. A root or folder that cannot be read is
  // skipped this time and its error added to `problems` (one line naming it); a job folder
  // whose storage refuses access is found, with `refused` set.
  std::vector<FoundJob> scan(std::vector<std::string>& problems);

 private:
  // The job at `folder`, or nullopt while it holds neither format (or cannot be looked at now).
  std::optional<FoundJob> look_at(const JobRoot& root, const JobFolder& folder,
                                  std::vector<std::string>& problems);

  std::vector<std::unique_ptr<JobRoot>> roots_;
  std::set<std::string> known_;  // locations already jobs
  std::set<std::string> ids_;
};

}  // namespace rulestream
