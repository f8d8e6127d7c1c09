#pragma once

#include <memory>
#include <string>

#include "core/model/storage.hpp"
#include "core/model/storage_options.hpp"
#include "sources/s3/s3_client.hpp"
#include "sources/s3/s3_location.hpp"

namespace rulestream {

// A trial under an S3 prefix (s3://bucket/prefix). Trial paths are keys below the prefix;
// listing maps keys back to trial paths and leaves out *.tmp, as LocalStorage does. Objects
// are written whole, so a listed object is always complete: a replaced one is read as it is
// now. Thread-safe (the client is).
class S3Storage final : public Storage {
 public:
  S3Storage(S3TrialLocation location, std::shared_ptr<const S3Client> client);

  // Credentials and region from the AWS SDKs' chain (resolve_s3_credentials), renewed before
  // they expire; the endpoint from options.s3_endpoint, else AWS_ENDPOINT_URL, else AWS. Throws
  // StorageError naming the URI when it is malformed or no credentials are found.
  static std::shared_ptr<S3Storage> open(
      const std::string& uri, const StorageOptions& options,
      const EnvironmentLookup& environment = process_environment());

  std::string describe() const override;
  // Whether the bucket exists and may be listed. A prefix has no existence of its own (it
  // appears with its first object), and a watch may start before the job has written anything,
  // as a local watch may start on an empty folder; replay and Trial::open still require trial
  // files. Throws StorageError for a missing bucket ("s3://bucket/prefix: no such bucket
  // 'bucket' (HTTP 404 NoSuchBucket)") or denied access, so that the message says which.
  bool root_exists() const override;
  std::vector<StoredObject> list(std::string_view prefix,
                                 std::string_view start_after = {}) const override;
  // The same, adding the LIST requests it made to `requests` (a watcher's cost per poll).
  std::vector<StoredObject> list(std::string_view prefix, std::string_view start_after,
                                 std::uint64_t& requests) const;
  // The names of the sub-prefixes directly under the root ("run-1" for
  // s3://bucket/jobs/run-1/...), in name order: a listing with delimiter '/', which costs one
  // LIST per 1000 of them however many objects they hold. A name that would not make a
  // prefix of its own (empty, "." or "..", from keys such as "jobs//x") is left out.
  std::vector<std::string> list_folders() const;
  // The storage of the sub-prefix `name` (as list_folders() gives it), sharing this one's
  // client, connections and credentials.
  std::shared_ptr<S3Storage> child(std::string_view name) const;

  bool exists(std::string_view path) const override;
  SharedBytes read(std::string_view path) const override;
  SharedBytes read_range(std::string_view path, std::uint64_t offset,
                         std::uint64_t length) const override;

  const S3TrialLocation& location() const { return location_; }
  const S3Client& client() const { return *client_; }

 private:
  std::string key_of(std::string_view path) const;

  S3TrialLocation location_;
  std::shared_ptr<const S3Client> client_;
};

}  // namespace rulestream
