// Trial::refresh from several threads at once (TrialStore::refresh through SharedRefresh): a
// caller that arrives while another thread's refresh runs still sees every file that was there
// when it called, and the refreshes it shares list the storage once each. A refresh parses index
// files with oneTBB in-process: left out under ThreadSanitizer (scripts/tsan.sh, TBB_SUITES);
// SharedRefresh's own tests run there.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <memory>
#include <thread>
#include <vector>

#include "pipeline/model/trial_layout.hpp"
#include "pipeline/trial/trial.hpp"
#include "sources/local/local_storage.hpp"
#include "stages/format/trial_writer.hpp"
#include "tests/support/test_support.hpp"

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

}  // namespace
}  // namespace rulestream
