// RefreshingCredentials: when temporary credentials are fetched again, by whom, and what a
// failed fetch does, with a clock the tests move and a provider that counts its fetches.
#include "sources/s3/refreshing_credentials.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "core/model/exceptions.hpp"

namespace rulestream {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;
using Clock = std::chrono::system_clock;

const Clock::time_point kStart = Clock::from_time_t(1'900'000'000);

// A clock the test moves.
struct TestClock {
  std::atomic<Clock::rep> ticks{kStart.time_since_epoch().count()};
  Clock::time_point now() const { return Clock::time_point(Clock::duration(ticks.load())); }
  void set(Clock::time_point time) { ticks = time.time_since_epoch().count(); }
};

// Hands out "AKIDFETCH<n>" credentials expiring `lifetime` after the test clock's now, or
// throws while `failing`; counts its calls and how many ran at once.
class CountingProvider final : public CredentialProvider {
 public:
  struct Shared {
    TestClock* clock = nullptr;
    std::chrono::seconds lifetime{3600};
    std::chrono::milliseconds delay{0};
    std::atomic<bool> failing{false};
    std::atomic<int> calls{0};
    std::atomic<int> running{0};
    std::atomic<int> most_at_once{0};
  };
  explicit CountingProvider(Shared& shared) : shared_(shared) {}

  S3Credentials fetch() override {
    const int now_running = ++shared_.running;
    int most = shared_.most_at_once.load();
    while (now_running > most && !shared_.most_at_once.compare_exchange_weak(most, now_running)) {
    }
    std::this_thread::sleep_for(shared_.delay);
    const int call = ++shared_.calls;
    --shared_.running;
    if (shared_.failing) throw StorageError("counting provider: the agent is down");
    S3Credentials credentials;
    credentials.access_key_id = "AKIDFETCH" + std::to_string(call);
    credentials.secret_access_key = "secret-" + std::to_string(call);
    credentials.session_token = "token-" + std::to_string(call);
    credentials.source = "counting provider";
    credentials.expiration = shared_.clock->now() + shared_.lifetime;
    return credentials;
  }

 private:
  Shared& shared_;
};

class RefreshingCredentialsTest : public ::testing::Test {
 protected:
  RefreshingCredentialsTest() { shared_.clock = &clock_; }

  std::unique_ptr<RefreshingCredentials> make(std::chrono::seconds refresh_before = 300s,
                                              std::chrono::seconds retry_after = 10s) {
    CredentialRefreshOptions options;
    options.refresh_before = refresh_before;
    options.retry_after = retry_after;
    options.clock = [this] { return clock_.now(); };
    return std::make_unique<RefreshingCredentials>(std::make_unique<CountingProvider>(shared_),
                                                   "eu-west-3", options);
  }

  TestClock clock_;
  CountingProvider::Shared shared_;
};

TEST_F(RefreshingCredentialsTest, FreshCredentialsAreNotFetchedAgain) {
  const auto holder = make();
  const auto first = holder->current();
  EXPECT_EQ(first->access_key_id, "AKIDFETCH1");
  EXPECT_EQ(first->region, "eu-west-3");
  clock_.set(kStart + 3600s - 301s);  // just outside the window
  EXPECT_EQ(holder->current(), first);
  EXPECT_EQ(holder->fetches(), 1u);
  EXPECT_EQ(shared_.calls, 1);
}

TEST_F(RefreshingCredentialsTest, InsideTheWindowTheyAreFetchedOnceAndThenUsed) {
  const auto holder = make();
  clock_.set(kStart + 3600s - 299s);
  const auto renewed = holder->current();
  EXPECT_EQ(renewed->access_key_id, "AKIDFETCH2");
  EXPECT_EQ(renewed->region, "eu-west-3");
  EXPECT_EQ(*renewed->expiration, clock_.now() + 3600s);
  EXPECT_EQ(holder->current(), renewed);
  EXPECT_EQ(shared_.calls, 2);
}

TEST_F(RefreshingCredentialsTest, InsideTheWindowOthersGoOnWithTheOldOnesWhileOneFetches) {
  const auto holder = make();
  const auto first = holder->current();
  shared_.delay = 300ms;
  clock_.set(kStart + 3600s - 60s);
  std::atomic<int> old_ones{0};
  std::thread refresher([&] { holder->current(); });
  while (shared_.running == 0) std::this_thread::yield();
  std::vector<std::thread> signers;
  for (int i = 0; i < 8; ++i) {
    signers.emplace_back([&] {
      if (holder->current() == first) ++old_ones;
    });
  }
  for (auto& signer : signers) signer.join();
  refresher.join();
  EXPECT_EQ(old_ones, 8);  // none of them waited for the fetch
  EXPECT_EQ(shared_.calls, 2);
  EXPECT_EQ(holder->current()->access_key_id, "AKIDFETCH2");
}

TEST_F(RefreshingCredentialsTest, ExpiredCredentialsAreFetchedOnceForAllWaitingSigners) {
  const auto holder = make();
  shared_.delay = 100ms;
  clock_.set(kStart + 3600s);  // expired
  std::vector<std::shared_ptr<const S3Credentials>> seen(16);
  std::vector<std::thread> signers;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    signers.emplace_back([&, i] { seen[i] = holder->current(); });
  }
  for (auto& signer : signers) signer.join();
  for (const auto& credentials : seen) EXPECT_EQ(credentials->access_key_id, "AKIDFETCH2");
  EXPECT_EQ(shared_.calls, 2);
  EXPECT_EQ(shared_.most_at_once, 1);
}

TEST_F(RefreshingCredentialsTest, AFailedRefreshKeepsTheOldOnesUntilTheyExpireAndTriesLater) {
  const auto holder = make(300s, 10s);
  const auto first = holder->current();
  shared_.failing = true;
  clock_.set(kStart + 3600s - 100s);
  EXPECT_EQ(holder->current(), first);  // tried, failed, kept
  EXPECT_EQ(shared_.calls, 2);
  clock_.set(kStart + 3600s - 95s);
  EXPECT_EQ(holder->current(), first);  // within retry_after: not asked again
  EXPECT_EQ(shared_.calls, 2);
  clock_.set(kStart + 3600s - 89s);
  EXPECT_EQ(holder->current(), first);  // asked again, failed again
  EXPECT_EQ(shared_.calls, 3);

  clock_.set(kStart + 3601s);
  try {
    holder->current();
    ADD_FAILURE() << "expired credentials were handed out";
  } catch (const StorageError& error) {
    EXPECT_THAT(error.what(), HasSubstr("counting provider expired at 2030-03-17T18:46:40Z"));
    EXPECT_THAT(error.what(), HasSubstr("the agent is down"));
    EXPECT_THAT(error.what(), Not(HasSubstr("secret-1")));
    EXPECT_THAT(error.what(), Not(HasSubstr("token-1")));
  }
  shared_.failing = false;
  EXPECT_EQ(holder->current()->access_key_id, "AKIDFETCH5");
}

TEST_F(RefreshingCredentialsTest, ShortLivedCredentialsAreNotFetchedOnEveryRequest) {
  shared_.lifetime = 120s;  // already inside a 300 s window when they arrive
  const auto holder = make(300s, 10s);
  const auto first = holder->current();
  clock_.set(kStart + 5s);
  EXPECT_EQ(holder->current(), first);
  EXPECT_EQ(shared_.calls, 1);
  clock_.set(kStart + 11s);
  EXPECT_EQ(holder->current()->access_key_id, "AKIDFETCH2");
}

TEST_F(RefreshingCredentialsTest, RenewRejectedFetchesOnceForCredentialsStillCurrent) {
  const auto holder = make();
  const auto rejected = holder->current();
  EXPECT_TRUE(holder->renew_rejected(rejected));
  EXPECT_EQ(holder->current()->access_key_id, "AKIDFETCH2");
  EXPECT_TRUE(holder->renew_rejected(rejected));  // renewed already: nothing fetched
  EXPECT_EQ(shared_.calls, 2);

  shared_.failing = true;
  try {
    holder->renew_rejected(holder->current());
    ADD_FAILURE() << "no error";
  } catch (const StorageError& error) {
    EXPECT_THAT(error.what(), HasSubstr("session token from counting provider has expired"));
    EXPECT_THAT(error.what(), HasSubstr("the agent is down"));
  }
}

TEST_F(RefreshingCredentialsTest, FixedCredentialsAreNeverFetchedOrRenewed) {
  S3Credentials keys{.access_key_id = "AKIDFIXED", .secret_access_key = "s", .region = "r"};
  const RefreshingCredentials fixed(keys);
  EXPECT_FALSE(fixed.renew_rejected(fixed.current()));
  EXPECT_EQ(fixed.current()->access_key_id, "AKIDFIXED");
  EXPECT_EQ(fixed.fetches(), 0u);

  const RefreshingCredentials from_provider(std::make_unique<FixedCredentialProvider>(keys), "r");
  EXPECT_FALSE(from_provider.renew_rejected(from_provider.current()));
  EXPECT_EQ(from_provider.fetches(), 1u);
}

}  // namespace
}  // namespace rulestream
