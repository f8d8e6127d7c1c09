// EventFileLoader against the job's one MemoryBudget: a compressed event file's inflation takes
// its bytes from the budget the value cache holds too. Short of bytes it evicts cached values,
// then waits for another inflation to end; a file the whole budget cannot hold is a problem
// naming it. Every value is read either way, and the budget never holds more than its limit.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <latch>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/model/growing_reservation.hpp"
#include "core/model/memory_budget.hpp"
#include "core/model/trial_layout.hpp"
#include "sources/open/storage_factory.hpp"
#include "stages/format/index_file.hpp"
#include "stages/format/trial_writer.hpp"
#include "stages/load/event_file_loader.hpp"
#include "tests/support/test_support.hpp"
#include "trial/store/record_cache.hpp"

namespace rulestream {
namespace {

using rulestream::testing::TempDir;
using namespace std::chrono_literals;

constexpr std::size_t kBudget = std::size_t{16} << 20;
// 12 tensors of 800 KiB: each step's event file inflates to 9.4 MiB, 59% of the budget.
constexpr int kTensors = 12;
constexpr std::int64_t kElements = 204800;

float fill_of(std::int64_t step, int tensor) {
  return static_cast<float>(step) * 100 + static_cast<float>(tensor);
}

// Steps 0..steps-1 of a gzip-compressed one-worker trial; every element of tensor i at step s
// is fill_of(s, i).
void write_trial(const std::filesystem::path& root, std::int64_t steps) {
  TrialWriter writer({.root = root, .compression = Compression::Gzip});
  for (std::int64_t step = 0; step < steps; ++step) {
    writer.begin_step(step, Mode::Train, step);
    for (int tensor = 0; tensor < kTensors; ++tensor) {
      writer.add_tensor(
          "t" + std::to_string(tensor),
          TensorValue::from_values(DType::Float32, Shape{kElements},
                                   std::vector<float>(kElements, fill_of(step, tensor))));
    }
    writer.end_step();
  }
}

// The store's value cache on the job's budget, checking each value the loader hands it.
class CheckingKeeper final : public DecodedValueKeeper {
 public:
  explicit CheckingKeeper(std::shared_ptr<MemoryBudget> budget)
      : cache(kBudget, std::move(budget)) {}
  std::uint32_t file_number(const std::string& file) override { return cache.file_id(file); }
  void keep(std::uint32_t file_number, std::uint64_t start, const TensorValue& value) override {
    float first = 0, last = 0;
    std::memcpy(&first, value.bytes().data(), 4);
    std::memcpy(&last, value.bytes().data() + value.bytes().size() - 4, 4);
    {
      std::lock_guard lock(mutex_);
      firsts.push_back(first);
      if (first != last || value.size() != kElements) ++damaged;
    }
    cache.put_value({file_number, start}, value);
  }
  // Fills the cache with small values until the budget is full, as a long replay leaves it.
  void fill() {
    const std::vector<std::byte> bytes(4096);
    for (std::uint64_t i = 0; cache.value_bytes() + 4096 <= kBudget && i < 100000; ++i) {
      cache.put_value({999, i * 4096},
                      TensorValue(DType::Float32, {1024}, SharedBytes::copy_of(bytes)));
    }
  }

  RecordCache cache;
  std::vector<float> firsts;
  int damaged = 0;

 private:
  std::mutex mutex_;
};

class EventFileLoaderBudget : public ::testing::Test {
 protected:
  void SetUp() override {
    write_trial(dir_.path(), 2);
    storage_ = open_storage(dir_.path().string());
    for (std::int64_t step = 0; step < 2; ++step) {
      const std::string path = index_file_path(step, "worker_0");
      indexes_.push_back(parse_index_file(storage_->read(path).as_string_view(), path));
    }
  }

  EventFileLoader loader(std::shared_ptr<MemoryBudget> budget) {
    return EventFileLoader(
        storage_, std::make_shared<RecordArena>(), true, std::move(budget),
        [this](std::string path, std::string message) {
          std::lock_guard lock(problems_mutex_);
          problems_.push_back(path + ": " + message);
        },
        LoadCounters{.event_bytes = &event_bytes_, .tensors_decoded = &tensors_decoded_});
  }

  // Loads step `step`'s event file, every record's value wanted; how many records it reduced.
  std::size_t load(const EventFileLoader& loader, std::int64_t step, DecodedValueKeeper& keeper) {
    const IndexFile& index = indexes_.at(static_cast<std::size_t>(step));
    const std::vector<DecodeSelection::Use> uses(index.tensors.size(),
                                                 DecodeSelection::Use::Values);
    const auto landed = loader.load(index, uses, keeper);
    if (!landed) return 0;
    return static_cast<std::size_t>(
        std::count(landed->computed.begin(), landed->computed.end(), std::uint8_t{1}));
  }

  TempDir dir_;
  std::shared_ptr<const Storage> storage_;
  std::vector<IndexFile> indexes_;
  std::mutex problems_mutex_;
  std::vector<std::string> problems_;
  std::atomic<std::uint64_t> event_bytes_{0};
  std::atomic<std::int64_t> tensors_decoded_{0};
};

// The case the budget exists for: two files each inflating to 59% of it, on two threads at once,
// beside a value cache already full. Together they would hold 2.2 budgets; they hold at most one,
// and every value is read.
TEST_F(EventFileLoaderBudget, TwoInflationsAndAFullValueCacheShareOneBudget) {
  auto budget = std::make_shared<MemoryBudget>(kBudget);
  CheckingKeeper keeper(budget);
  keeper.fill();
  ASSERT_GT(budget->reserved(), kBudget - 4096);
  const EventFileLoader files = loader(budget);
  std::latch start(2);
  std::vector<std::future<std::size_t>> reduced;
  for (std::int64_t step = 0; step < 2; ++step) {
    reduced.push_back(std::async(std::launch::async, [&, step] {
      start.arrive_and_wait();
      return load(files, step, keeper);
    }));
  }
  for (auto& each : reduced) EXPECT_EQ(each.get(), static_cast<std::size_t>(kTensors));
  EXPECT_TRUE(problems_.empty()) << problems_.front();
  EXPECT_EQ(keeper.firsts.size(), 2u * kTensors);
  EXPECT_EQ(keeper.damaged, 0);
  EXPECT_LE(budget->peak_reserved(), kBudget);
  EXPECT_FALSE(keeper.cache.value({999, 0}).has_value()) << "no cached value made room";
}

// Another inflation holds most of the budget: this one waits for it to end rather than be
// refused or take more than the budget, and then reads the file whole.
TEST_F(EventFileLoaderBudget, AnInflationWaitsForAnotherToEnd) {
  auto budget = std::make_shared<MemoryBudget>(kBudget);
  CheckingKeeper keeper(budget);
  const EventFileLoader files = loader(budget);
  auto other = std::make_unique<GrowingReservation>(*budget);  // older: it started first
  ASSERT_EQ(other->grow(kBudget / 2), GrowingReservation::Grant::Granted);
  auto reduced = std::async(std::launch::async, [&] { return load(files, 0, keeper); });
  while (budget->waits() == 0) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(reduced.wait_for(50ms), std::future_status::timeout) << "it did not wait";
  EXPECT_LE(budget->reserved(), kBudget);
  other.reset();
  EXPECT_EQ(reduced.get(), static_cast<std::size_t>(kTensors));
  EXPECT_TRUE(problems_.empty()) << problems_.front();
  EXPECT_EQ(keeper.damaged, 0);
  EXPECT_EQ(keeper.firsts.size(), static_cast<std::size_t>(kTensors));
}

// A file that inflates past the whole budget can never be read within it: a problem naming the
// file says so, nothing is thrown, and every byte goes back.
TEST_F(EventFileLoaderBudget, AFileLargerThanTheBudgetIsAProblemNamingIt) {
  auto budget = std::make_shared<MemoryBudget>(std::size_t{4} << 20);
  CheckingKeeper keeper(budget);
  const EventFileLoader files = loader(budget);
  EXPECT_EQ(load(files, 1, keeper), 0u);
  ASSERT_EQ(problems_.size(), 1u);
  EXPECT_NE(problems_[0].find(event_file_path(1, "worker_0")), std::string::npos) << problems_[0];
  EXPECT_NE(problems_[0].find("the memory budget"), std::string::npos) << problems_[0];
  EXPECT_EQ(budget->reserved(), 0u);
  EXPECT_EQ(budget->waits(), 0u);
}

}  // namespace
}  // namespace rulestream
