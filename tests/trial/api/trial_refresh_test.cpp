// Trial::refresh from several threads at once (TrialStore::refresh through SharedRefresh): a
// caller that arrives while another thread's refresh runs still sees every file that was there
// when it called, and the refreshes it shares list the storage once each. And the refreshes a
// rule's step needs no more: pinned_for_step and wait_for_steps list a live trial only while it
// has not passed the step. A refresh parses index
// files with oneTBB in-process: left out under ThreadSanitizer (scripts/tsan.sh, TBB_SUITES);
// SharedRefresh's own tests run there.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/model/trial_layout.hpp"
#include "sources/local/local_storage.hpp"
#include "stages/format/trial_writer.hpp"
#include "tests/support/test_support.hpp"
#include "trial/api/trial.hpp"

namespace rulestream {
namespace {

using rulestream::testing::TempDir;

// Local storage that counts listings of the index folder, and can hold the next one after it
// has listed (its result fixed, not yet returned) until the test lets it go.
class HoldingStorage : public Storage {
 public:
  explicit HoldingStorage(const std::filesystem::path& root) : inner_(root) {}

  std::string describe() const override { return inner_.describe(); }
  bool root_exists() const override { return inner_.root_exists(); }
  std::vector<StoredObject> list(std::string_view prefix,
                                 std::string_view start_after) const override {
    auto listed = inner_.list(prefix, start_after);
    if (prefix == kIndexDir) {
      ++index_listings;
      if (hold_next_.exchange(false)) {
        held_.set_value();
        release_future_.wait();
      }
    }
    return listed;
  }
  bool exists(std::string_view path) const override { return inner_.exists(path); }
  SharedBytes read(std::string_view path) const override { return inner_.read(path); }
  SharedBytes read_range(std::string_view path, std::uint64_t offset,
                         std::uint64_t length) const override {
    return inner_.read_range(path, offset, length);
  }

  void hold_next_index_listing() { hold_next_ = true; }
  void wait_until_held() { held_future_.wait(); }
  void let_go() { release_.set_value(); }

  mutable std::atomic<int> index_listings{0};

 private:
  LocalStorage inner_;
  mutable std::atomic<bool> hold_next_{false};
  mutable std::promise<void> held_;
  std::future<void> held_future_ = held_.get_future();
  std::promise<void> release_;
  std::shared_future<void> release_future_ = release_.get_future().share();
};

// A job of `workers` workers that has written nothing yet.
std::vector<std::unique_ptr<TrialWriter>> start_job(const std::filesystem::path& root,
                                                    int workers) {
  std::vector<std::unique_ptr<TrialWriter>> writers;
  for (int w = 0; w < workers; ++w) {
    writers.push_back(std::make_unique<TrialWriter>(
        TrialWriter::Options{.root = root, .worker = "worker_" + std::to_string(w)}));
  }
  CollectionsFile collections;
  collections.num_workers = workers;
  writers.front()->write_collections(collections);
  return writers;
}

void write_step(TrialWriter& writer, std::int64_t step) {
  writer.begin_step(step, Mode::Train, step);
  const std::vector<float> loss{static_cast<float>(step)};
  writer.add_tensor("Loss_output_0", TensorValue::from_values(DType::Float32, Shape{}, loss));
  writer.end_step();
}

// The refresh under way listed the index folder before step 1 was written; a caller that comes
// after step 1 was written must not settle for it.
TEST(TrialRefresh, ACallerArrivingDuringARefreshSeesWhatWasWrittenBeforeItCalled) {
  TempDir dir;
  TrialWriter writer({.root = dir.path(), .worker = "worker_0"});
  CollectionsFile collections;
  collections.num_workers = 1;
  writer.write_collections(collections);
  write_step(writer, 0);

  auto storage = std::make_shared<HoldingStorage>(dir.path());
  TrialOptions options;
  options.auto_refresh = false;  // only the refreshes below list
  const Trial trial = Trial::open_deferred(storage, options);
  storage->index_listings = 0;  // opening looked for the trial's files

  storage->hold_next_index_listing();
  std::thread first([&] { trial.refresh(); });
  storage->wait_until_held();  // the first refresh has listed step 0 alone

  write_step(writer, 1);
  std::atomic<bool> later_returned{false};
  std::vector<std::int64_t> seen_by_later;
  std::thread later([&] {
    trial.refresh();
    seen_by_later = trial.steps();
    later_returned = true;
  });
  // Time for the later caller to reach the running refresh and wait for it (one that comes
  // only after it ended runs a refresh of its own, which must see step 1 just the same).
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(later_returned.load()) << "returned while the refresh it needed was held";
  storage->let_go();
  first.join();
  later.join();

  EXPECT_EQ(seen_by_later, (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(storage->index_listings.load(), 2);
}

// A live trial, refreshing on query, opened and loaded with steps 0-2 of its one worker and a
// gap at 3 (step 4 written); index_listings counts from zero after the load.
class PinnedForStepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    writers_ = start_job(dir_.path(), 1);
    for (const std::int64_t step : {0, 1, 2, 4}) write_step(*writers_[0], step);
    storage_ = std::make_shared<HoldingStorage>(dir_.path());
    trial_ = Trial::open_deferred(storage_);
    trial_->load();
    storage_->index_listings = 0;
  }

  TempDir dir_;
  std::vector<std::unique_ptr<TrialWriter>> writers_;
  std::shared_ptr<HoldingStorage> storage_;
  std::optional<Trial> trial_;
};

TEST_F(PinnedForStepTest, AStepTheTrialHasIsPinnedWithoutListing) {
  const Trial view = trial_->pinned_for_step(2);
  EXPECT_TRUE(view.is_pinned());
  EXPECT_EQ(storage_->index_listings.load(), 0);
  // Written after the pin: the pinned view never sees it, the trial does once it refreshes.
  write_step(*writers_[0], 5);
  EXPECT_EQ(view.steps(), (std::vector<std::int64_t>{0, 1, 2, 4}));
  EXPECT_EQ(trial_->steps(), (std::vector<std::int64_t>{0, 1, 2, 4, 5}));
}

TEST_F(PinnedForStepTest, AStepTheTrialSkippedIsPinnedWithoutListing) {
  // Step 4 was written by the only worker: step 3 will never come.
  const Trial view = trial_->pinned_for_step(3);
  EXPECT_EQ(view.has_passed_step(3), StepState::Unavailable);
  EXPECT_EQ(storage_->index_listings.load(), 0);
}

TEST_F(PinnedForStepTest, AStepTheTrialLacksIsRefreshedForFirst) {
  write_step(*writers_[0], 5);
  const Trial view = trial_->pinned_for_step(5);
  EXPECT_TRUE(view.is_pinned());
  EXPECT_EQ(storage_->index_listings.load(), 1);
  EXPECT_EQ(view.steps(), (std::vector<std::int64_t>{0, 1, 2, 4, 5}));
  // Still missing after the refresh: the view is what the refresh found, and says so.
  EXPECT_EQ(trial_->pinned_for_step(6).has_passed_step(6), StepState::NotYetAvailable);
  EXPECT_EQ(storage_->index_listings.load(), 2);
}

TEST_F(PinnedForStepTest, WaitingForAStepTheTrialHasListsNothing) {
  trial_->wait_for_steps({0, 2, 4});
  EXPECT_EQ(storage_->index_listings.load(), 0);
  write_step(*writers_[0], 5);
  trial_->wait_for_steps({5});
  EXPECT_EQ(storage_->index_listings.load(), 1);
}

// A step one worker of two has written is not settled: the other worker's files may still come,
// so the pin refreshes, and sees them.
TEST(TrialPinnedForStep, AStepNotAllWorkersHaveWrittenIsRefreshedFor) {
  TempDir dir;
  auto writers = start_job(dir.path(), 2);
  write_step(*writers[0], 0);
  auto storage = std::make_shared<HoldingStorage>(dir.path());
  const Trial trial = Trial::open_deferred(storage);
  trial.load();
  ASSERT_EQ(trial.pinned().has_passed_step(0), StepState::NotYetAvailable);
  storage->index_listings = 0;

  write_step(*writers[1], 0);
  const Trial view = trial.pinned_for_step(0);
  EXPECT_EQ(storage->index_listings.load(), 1);
  EXPECT_EQ(view.has_passed_step(0), StepState::Available);
}

}  // namespace
}  // namespace rulestream
