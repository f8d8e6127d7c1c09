#include "sources/s3/refreshing_credentials.hpp"

#include "core/model/exceptions.hpp"
#include "core/model/utc_time.hpp"

namespace rulestream {

RefreshingCredentials::RefreshingCredentials(S3Credentials fixed)
    : region_(fixed.region), current_(std::make_shared<const S3Credentials>(std::move(fixed))) {}

RefreshingCredentials::RefreshingCredentials(std::unique_ptr<CredentialProvider> provider,
                                             std::string region, CredentialRefreshOptions options)
    : provider_(std::move(provider)), region_(std::move(region)), options_(std::move(options)) {
  const std::lock_guard refresh(refresh_mutex_);
  fetch_locked();
}

RefreshingCredentials::~RefreshingCredentials() = default;

std::chrono::system_clock::time_point RefreshingCredentials::now() const {
  return options_.clock ? options_.clock() : std::chrono::system_clock::now();
}

std::shared_ptr<const S3Credentials> RefreshingCredentials::fetch_locked() const {
  S3Credentials fresh = provider_->fetch();
  fresh.region = region_;
  auto published = std::make_shared<const S3Credentials>(std::move(fresh));
  const auto time = now();
  // Credentials that arrive already inside the window are used, but not fetched again at once.
  next_try_ = published->expiration && *published->expiration - options_.refresh_before <= time
                  ? time + options_.retry_after
                  : std::chrono::system_clock::time_point{};
  const std::lock_guard state(state_mutex_);
  current_ = published;
  ++fetches_;
  return published;
}

std::shared_ptr<const S3Credentials> RefreshingCredentials::current() const {
  std::shared_ptr<const S3Credentials> held;
  {
    const std::lock_guard state(state_mutex_);
    held = current_;
  }
  if (!provider_ || !held->expiration) return held;
  const auto expiration = *held->expiration;
  if (now() < expiration - options_.refresh_before) return held;

  if (now() < expiration) {
    // Still valid: one caller refreshes, the others carry on with these.
    std::unique_lock refresh(refresh_mutex_, std::try_to_lock);
    if (!refresh.owns_lock() || now() < next_try_) return held;
    {
      const std::lock_guard state(state_mutex_);
      if (current_ != held) return current_;  // refreshed since we looked
    }
    try {
      return fetch_locked();
    } catch (const StorageError&) {
      next_try_ = now() + options_.retry_after;
      return held;  // good until they expire; the next try after retry_after
    }
  }

  // Expired: everyone waits for one fetch.
  const std::lock_guard refresh(refresh_mutex_);
  {
    const std::lock_guard state(state_mutex_);
    if (current_ != held) return current_;
  }
  try {
    return fetch_locked();
  } catch (const StorageError& error) {
    throw StorageError("the credentials from " + held->source + " expired at " +
                       iso8601_utc_seconds(expiration) +
                       " and could not be renewed: " + error.what());
  }
}

bool RefreshingCredentials::renew_rejected(
    const std::shared_ptr<const S3Credentials>& rejected) const {
  if (!provider_ || !provider_->renewable()) return false;
  const std::lock_guard refresh(refresh_mutex_);
  {
    const std::lock_guard state(state_mutex_);
    if (current_ != rejected) return true;  // another caller renewed them already
  }
  try {
    fetch_locked();
  } catch (const StorageError& error) {
    throw StorageError("S3 said the session token from " + rejected->source +
                       " has expired, and renewing it failed: " + error.what());
  }
  return true;
}

std::uint64_t RefreshingCredentials::fetches() const {
  const std::lock_guard state(state_mutex_);
  return fetches_;
}

}  // namespace rulestream
