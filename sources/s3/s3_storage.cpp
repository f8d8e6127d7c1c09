#include "sources/s3/s3_storage.hpp"

#include "core/model/exceptions.hpp"
#include "sources/common/relative_path.hpp"
#include "sources/s3/credential_chain.hpp"

namespace rulestream {

S3Storage::S3Storage(S3TrialLocation location, std::shared_ptr<const S3Client> client)
    : location_(std::move(location)), client_(std::move(client)) {}

std::shared_ptr<S3Storage> S3Storage::open(const std::string& uri, const StorageOptions& options,
                                           const EnvironmentLookup& environment) {
  S3TrialLocation location = parse_s3_uri(uri);
  std::shared_ptr<RefreshingCredentials> credentials;
  try {
    credentials = resolve_s3_credentials(environment);
  } catch (const StorageError& error) {
    throw StorageError(uri + ": " + error.what());
  }
  const std::string endpoint_url = !options.s3_endpoint.empty()
                                       ? options.s3_endpoint
                                       : environment("AWS_ENDPOINT_URL").value_or("");
  S3Endpoint endpoint =
      S3Endpoint::resolve(endpoint_url, credentials->current()->region, options.s3_addressing);
  S3ClientOptions client_options;
  if (options.s3_timeout.count() > 0) client_options.request_timeout = options.s3_timeout;
  if (options.s3_attempts > 0) client_options.max_attempts = options.s3_attempts;
  auto client =
      std::make_shared<const S3Client>(std::move(endpoint), std::move(credentials), client_options);
  return std::make_shared<S3Storage>(std::move(location), std::move(client));
}

std::string S3Storage::describe() const {
  return location_.uri();
}

bool S3Storage::root_exists() const {
  try {
    client_->list_page(location_.bucket, location_.prefix, {}, {}, 1);  // throws when it cannot
  } catch (const S3NotFoundError& missing) {
    if (!missing.bucket_missing()) throw;
    // Named with the prefix the user gave, so the one line says where we looked.
    throw StorageError(describe() + ": no such bucket '" + location_.bucket + "' (" +
                       missing.status() + ")");
  }
  return true;
}

std::vector<StoredObject> S3Storage::list(std::string_view prefix,
                                          std::string_view start_after) const {
  std::uint64_t requests = 0;
  return list(prefix, start_after, requests);
}

std::vector<StoredObject> S3Storage::list(std::string_view prefix, std::string_view start_after,
                                          std::uint64_t& requests) const {
  check_relative_path(prefix, describe());
  const std::string key_start_after = start_after.empty() ? std::string() : key_of(start_after);
  std::vector<StoredObject> objects;
  for (auto& object : client_->list(location_.bucket, location_.prefix + std::string(prefix),
                                    key_start_after, &requests)) {
    std::string path = object.key.substr(location_.prefix.size());
    if (path.ends_with(".tmp")) continue;  // being written under a temporary name
    objects.push_back({std::move(path), object.size, object.modified_ns});
  }
  return objects;  // S3 lists in key order, which is path order
}

std::vector<std::string> S3Storage::list_folders() const {
  std::vector<std::string> names;
  for (const std::string& prefix : client_->list_prefixes(location_.bucket, location_.prefix)) {
    // "PREFIX" "NAME" "/": S3 hands back the listing's prefix and the delimiter with the name.
    if (!prefix.starts_with(location_.prefix) || !prefix.ends_with('/')) continue;
    std::string name =
        prefix.substr(location_.prefix.size(), prefix.size() - location_.prefix.size() - 1);
    if (name.empty() || name == "." || name == "..") continue;
    names.push_back(std::move(name));
  }
  return names;
}

std::shared_ptr<S3Storage> S3Storage::child(std::string_view name) const {
  return std::make_shared<S3Storage>(
      S3TrialLocation{location_.bucket, location_.prefix + std::string(name) + "/"}, client_);
}

bool S3Storage::exists(std::string_view path) const {
  return client_->head(location_.bucket, key_of(path)).has_value();
}

SharedBytes S3Storage::read(std::string_view path) const {
  return client_->get(location_.bucket, key_of(path));
}

SharedBytes S3Storage::read_range(std::string_view path, std::uint64_t offset,
                                  std::uint64_t length) const {
  return client_->get_range(location_.bucket, key_of(path), {offset, length});
}

std::string S3Storage::key_of(std::string_view path) const {
  check_relative_path(path, describe());
  return location_.prefix + std::string(path);
}

}  // namespace rulestream
