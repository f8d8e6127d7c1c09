#pragma once

// A place whose children are jobs (`serve --jobs ROOT`): a local folder whose sub-folders, or
// an S3 prefix whose sub-prefixes, each hold a job (an smdebug trial or a TensorBoard logdir).

#include <memory>
#include <string>
#include <vector>

#include "core/model/storage.hpp"
#include "core/model/storage_options.hpp"

namespace rulestream {

// One child of a root, as a listing found it.
struct JobFolder {
  std::string name;      // the last component: "run-1"
  std::string location;  // what open_storage takes: "/data/jobs/run-1", "s3://bucket/jobs/run-1"
};

// Thread-safe: list() and open() may be called from any thread (a service scans from one).
class JobRoot {
 public:
  virtual ~JobRoot() = default;

  // "/data/jobs" or "s3://bucket/jobs": for messages.
  virtual std::string describe() const = 0;
  // The children there now, in name order. Throws StorageError naming the root when it
  // cannot be listed.
  virtual std::vector<JobFolder> list() const = 0;
  // A child's storage (an S3 child shares the root's client and credentials).
  virtual std::shared_ptr<const Storage> open(const JobFolder& folder) const = 0;
};

// The root at `root` (a folder or s3://bucket/prefix), looked at once: StorageError naming it
// when the folder does not exist, the bucket does not exist, or listing the prefix is refused.
// An S3 prefix with nothing under it yet is a root (a prefix exists only once written to).
std::unique_ptr<JobRoot> open_job_root(const std::string& root, const StorageOptions& options);

}  // namespace rulestream
