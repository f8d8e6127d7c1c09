#pragma once

// Finds jobs: every sub-folder of a root that holds an smdebug trial or a TensorBoard logdir.
// A folder is looked at on every scan until it holds one or the other (a job that has not
// written yet is no job yet), then never again. Scans are a listing of each root plus, for each
// folder not yet a job, the look detect_format takes: polling, not inotify, so that a root with
// thousands of finished jobs costs one directory read per scan.

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "pipeline/graph/trial_presence.hpp"
#include "pipeline/model/storage_options.hpp"

namespace rulestream {

struct FoundJob {
  std::string id;  // the folder's name; "NAME-2", "NAME-3"... when another root has that name
  std::filesystem::path path;
  TrialFormat format = TrialFormat::Smdebug;
};

// Not thread-safe: one thread scans (JobService's supervisor).
class JobDiscovery {
 public:
  // Local folders; each must exist (StorageError naming it otherwise).
  JobDiscovery(std::vector<std::filesystem::path> roots, StorageOptions storage);

  // The jobs that appeared since the last scan. A root or folder that cannot be read is
  // skipped this time and its error added to `problems` (one line naming it).
  std::vector<FoundJob> scan(std::vector<std::string>& problems);

 private:
  std::vector<std::filesystem::path> roots_;
  StorageOptions storage_;
  std::set<std::filesystem::path> known_;  // folders already jobs
  std::set<std::string> ids_;
};

}  // namespace rulestream
