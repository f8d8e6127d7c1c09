#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "sources/s3/credential_provider.hpp"
#include "sources/s3/s3_credentials.hpp"

namespace rulestream {

struct CredentialRefreshOptions {
  // Temporary credentials are fetched again this long before they expire, so that a request
  // signed just before the deadline still reaches S3 in time (the AWS SDKs use 5 to 15 minutes).
  std::chrono::seconds refresh_before{300};
  // After a refresh that failed while the old credentials were still good, or that brought
  // credentials already inside the window, the next try waits at least this long: a provider
  // that is down, or that only hands out short-lived credentials, is not asked on every request.
  std::chrono::seconds retry_after{10};
  // The time now; empty: the system clock. Tests pass a clock they move.
  std::function<std::chrono::system_clock::time_point()> clock;
};

// The credentials an S3Client signs with, fetched again from their provider before they expire.
//
// Concurrency contract: every method may be called from any number of threads at once.
// current() is cheap while the credentials are fresh (a lock held for a pointer copy). Inside
// the refresh window, one caller fetches while the others go on with the old credentials,
// which are still valid; once they have expired, every caller waits for the one fetch, and a
// failed fetch is thrown to each of them. The provider is only ever called by one thread at a
// time. A credentials object, once handed out, never changes: a caller may keep signing with
// it, and tell renew_rejected() which one S3 refused.
class RefreshingCredentials {
 public:
  // Credentials as they are, never fetched again (long-term keys; a test's temporary ones).
  explicit RefreshingCredentials(S3Credentials fixed);
  // Fetches the first credentials now (throwing what the provider throws), and again when they
  // near their expiration. Each set fetched gets `region`.
  RefreshingCredentials(std::unique_ptr<CredentialProvider> provider, std::string region,
                        CredentialRefreshOptions options = {});
  ~RefreshingCredentials();
  RefreshingCredentials(const RefreshingCredentials&) = delete;
  RefreshingCredentials& operator=(const RefreshingCredentials&) = delete;

  // The credentials to sign with now, refreshed first where they are due (see above). Throws
  // StorageError when they have expired and cannot be fetched again.
  std::shared_ptr<const S3Credentials> current() const;

  // S3 refused `rejected` as an expired token: fetches new credentials, unless another caller
  // has done so since `rejected` was handed out. True when there are other credentials to try;
  // false when these cannot be renewed (fixed credentials). Throws StorageError when the
  // provider fails.
  bool renew_rejected(const std::shared_ptr<const S3Credentials>& rejected) const;

  // How many times the provider was asked (the first fetch included).
  std::uint64_t fetches() const;

 private:
  std::chrono::system_clock::time_point now() const;
  // Fetches and publishes new credentials; the caller holds refresh_mutex_.
  std::shared_ptr<const S3Credentials> fetch_locked() const;

  std::unique_ptr<CredentialProvider> provider_;  // null: fixed
  std::string region_;
  CredentialRefreshOptions options_;

  mutable std::mutex refresh_mutex_;  // held while the provider is asked; one fetch at a time
  mutable std::chrono::system_clock::time_point next_try_{};  // guarded by refresh_mutex_
  mutable std::mutex state_mutex_;                            // guards current_ and fetches_
  mutable std::shared_ptr<const S3Credentials> current_;
  mutable std::uint64_t fetches_ = 0;
};

}  // namespace rulestream
