// TrialStore's ingestion of index files large enough to be spread over the threads
// (trial/store/trial_store_ingest.cpp): every record lands where its index file says, in
// load order, exactly as one thread lands it. Runs oneTBB in-process: left out under
// ThreadSanitizer (scripts/tsan.sh, TBB_SUITES).
#include <gtest/gtest.h>
#include <tbb/task_arena.h>

#include <memory>
#include <string>
#include <vector>

#include "core/model/trial_layout.hpp"
#include "sources/local/local_storage.hpp"
#include "tests/support/test_support.hpp"
#include "trial/store/trial_store.hpp"

namespace rulestream {
namespace {

using rulestream::testing::TempDir;

constexpr int kTensors = 3000;  // a file's positions: far more than one task's worth

std::string weight_name(int k) {
  return "layer" + std::to_string(k) + "/weights";
}

// Where a record sits, made from what it is, so that every expectation below follows from the
// index files alone: (step, worker, position, kind) -> a distinct offset.
std::uint64_t start_of(std::int64_t step, int worker, int position, int kind) {
  return ((static_cast<std::uint64_t>(step) * 2 + worker) * 10'000 + position) * 4 + kind;
}

// One worker's index file at one step. Worker 0 lists the weights in order, worker 1 in reverse
// (its layout never matches worker 0's: every name found by hash at first). Every tenth weight
// also has its saved mean; from step 2 on, 200 new tensors ("late<k>") sit in the middle.
IndexLanding landing(std::int64_t step, int worker) {
  IndexLanding result;
  result.step = step;
  result.worker = "worker_" + std::to_string(worker);
  result.path = "index/" + std::to_string(step) + "_" + result.worker + ".json";
  result.index.mode = step < 3 ? Mode::Train : Mode::Eval;
  result.index.mode_step = step;
  result.index.event_file_name = "events/" + std::to_string(step) + "_" + result.worker;
  std::vector<TensorLocation>& tensors = result.index.tensors;
  for (int i = 0; i < kTensors; ++i) {
    const int k = worker == 0 ? i : kTensors - 1 - i;
    const int position = static_cast<int>(tensors.size());
    tensors.push_back({weight_name(k), start_of(step, worker, position, 0), 100});
    if (k % 10 == 0) {
      tensors.push_back({reduction_tensor_name(weight_name(k), {Reduction::Mean, false}),
                         start_of(step, worker, position + 1, 1), 20});
    }
    if (step >= 2 && i == kTensors / 2) {
      for (int late = 0; late < 200; ++late) {
        tensors.push_back({"late" + std::to_string(late),
                           start_of(step, worker, static_cast<int>(tensors.size()), 2), 50});
      }
    }
  }
  return result;
}

std::vector<IndexLanding> job() {
  std::vector<IndexLanding> files;
  for (std::int64_t step = 0; step < 4; ++step) {
    for (int worker = 0; worker < 2; ++worker) files.push_back(landing(step, worker));
  }
  // Worker 0's step 1 written again: its records move, and its saves are replaced in place.
  IndexLanding again = landing(1, 0);
  for (TensorLocation& location : again.index.tensors) location.start += 3;
  files.push_back(std::move(again));
  return files;
}

std::unique_ptr<TrialStore> ingested_on(int threads, const std::filesystem::path& root) {
  auto store = std::make_unique<TrialStore>(std::make_shared<LocalStorage>(root), TrialOptions{});
  store->set_externally_fed();
  tbb::task_arena arena(threads);
  arena.execute([&] {
    for (const IndexLanding& file : job()) store->ingest(file);
  });
  return store;
}

// Every location of every file (as the rewrite moved worker 0's step 1) is found at its tensor,
// step and worker: the raw record, or the saved mean.
void expect_every_record_in_place(const TrialStore& store) {
  const auto lock = store.read_lock();
  std::vector<IndexLanding> files = job();
  files.pop_back();  // the rewrite: the +3 below stands for it
  for (const IndexLanding& file : files) {
    for (const TensorLocation& location : file.index.tensors) {
      const auto reduction = parse_reduction_tensor_name(location.tensor_name);
      const std::string tensor = reduction ? reduction->first : location.tensor_name;
      const TensorHistory* history = store.find_tensor(tensor);
      ASSERT_NE(history, nullptr) << tensor;
      const TensorStep* at_step = history->steps.find(file.step);
      ASSERT_NE(at_step, nullptr) << tensor << " at step " << file.step;
      const WorkerSave* save = nullptr;
      for (const WorkerSave& candidate : at_step->saves) {
        if (*candidate.worker == file.worker) save = &candidate;
      }
      ASSERT_NE(save, nullptr) << tensor << " at step " << file.step << " of " << file.worker;
      // The rewritten file moved worker 0's step-1 records by 3 bytes.
      const std::uint64_t start =
          location.start + (file.step == 1 && file.worker == "worker_0" ? 3 : 0);
      if (reduction) {
        ASSERT_EQ(save->reductions.size(), 1u) << tensor;
        EXPECT_EQ(save->reductions.begin()->key, reduction->second);
        EXPECT_EQ(save->reductions.begin()->ref.start, start) << location.tensor_name;
        ASSERT_NE(save->reductions.begin()->ref.record_name, nullptr);
        EXPECT_EQ(*save->reductions.begin()->ref.record_name, location.tensor_name);
      } else {
        ASSERT_NE(save->raw(), nullptr) << tensor;
        EXPECT_EQ(save->raw()->start, start) << tensor << " at step " << file.step;
        EXPECT_EQ(save->raw()->length, location.length);
      }
    }
  }
}

TEST(TrialStoreIngest, LargeFilesSpreadOverThreadsLandEveryRecordWhereItsIndexSays) {
  TempDir root;
  const auto store = ingested_on(2, root.path());
  EXPECT_GT(store->parallel_ingest_cpu().count(), 0) << "the files were not spread";
  expect_every_record_in_place(*store);

  const auto lock = store->read_lock();
  // 3,000 weights and 200 late tensors, nothing else (reductions belong to their tensors).
  EXPECT_EQ(store->tensors().size(), static_cast<std::size_t>(kTensors + 200));
  const TensorHistory* late = store->find_tensor("late7");
  ASSERT_NE(late, nullptr);
  EXPECT_EQ(late->steps.size(), 2u);  // steps 2 and 3
  EXPECT_EQ(late->first_seen_in(Mode::Train), late->generation);
  // Saves keep load order: worker 0's file of each step landed before worker 1's (the rewrite
  // of step 1 replaced worker 0's save where it stood).
  const TensorHistory* weights = store->find_tensor(weight_name(1234));
  ASSERT_NE(weights, nullptr);
  ASSERT_EQ(weights->steps.size(), 4u);
  for (const auto& [step, at_step] : weights->steps) {
    ASSERT_EQ(at_step.saves.size(), 2u) << "step " << step;
    EXPECT_EQ(*at_step.saves.begin()->worker, "worker_0");
    EXPECT_EQ(at_step.mode, step < 3 ? Mode::Train : Mode::Eval);
  }
  EXPECT_NE(weights->first_seen_in(Mode::Eval), kNeverSeen);
}

TEST(TrialStoreIngest, SpreadOverThreadsTheStoreHoldsWhatOneThreadMakes) {
  TempDir root;
  const auto spread = ingested_on(2, root.path());
  const auto alone = ingested_on(1, root.path());
  EXPECT_EQ(alone->parallel_ingest_cpu().count(), 0);
  expect_every_record_in_place(*alone);

  const auto spread_lock = spread->read_lock();
  const auto alone_lock = alone->read_lock();
  ASSERT_EQ(spread->tensors().size(), alone->tensors().size());
  for (const auto& [name, history] : alone->tensors()) {
    const TensorHistory* other = spread->find_tensor(name);
    ASSERT_NE(other, nullptr) << name;
    EXPECT_EQ(other->generation, history.generation) << name;
    EXPECT_EQ(other->mode_generation, history.mode_generation) << name;
    ASSERT_EQ(other->steps.size(), history.steps.size()) << name;
    for (const auto& [step, at_step] : history.steps) {
      const TensorStep* other_step = other->steps.find(step);
      ASSERT_NE(other_step, nullptr) << name << " at step " << step;
      ASSERT_EQ(other_step->saves.size(), at_step.saves.size());
      auto other_save = other_step->saves.begin();
      for (const WorkerSave& save : at_step.saves) {
        EXPECT_EQ(*other_save->worker, *save.worker);
        EXPECT_EQ(other_save->generation, save.generation);
        EXPECT_EQ(other_save->raw() == nullptr, save.raw() == nullptr);
        if (save.raw() != nullptr) {
          EXPECT_EQ(other_save->raw()->start, save.raw()->start);
        }
        EXPECT_EQ(other_save->reductions.size(), save.reductions.size());
        ++other_save;
      }
    }
  }
  for (const auto& [step, info] : alone->steps()) {
    EXPECT_EQ(spread->steps().at(step).tensors_changed, info.tensors_changed) << step;
  }
}

// What a decoder asks at every file without the store's lock (latest_collections) is what
// collections(generation()) gives under it: none before a collections file lands, then the
// last one landed, unchanged by index files landing after it.
TEST(TrialStoreIngest, TheLatestCollectionsAreTheLastPublished) {
  TempDir root;
  TrialStore store(std::make_shared<LocalStorage>(root.path()), TrialOptions{});
  store.set_externally_fed();
  EXPECT_EQ(store.latest_collections(), nullptr);
  EXPECT_EQ(store.collections(store.generation()), nullptr);

  auto first = std::make_shared<std::map<std::string, Collection>>();
  (*first)["weights"].name = "weights";
  store.ingest({}, CollectionsLanding{first, 2, {"worker_0"}}, {}, false, false);
  EXPECT_EQ(store.latest_collections(), first);
  EXPECT_EQ(store.collections(store.generation()), first);

  store.ingest(landing(0, 0));  // an index file changes the generation, not the collections
  EXPECT_EQ(store.latest_collections(), first);

  auto second = std::make_shared<std::map<std::string, Collection>>(*first);
  (*second)["gradients"].name = "gradients";
  store.ingest({}, CollectionsLanding{second, 2, {"worker_1"}}, {}, false, false);
  EXPECT_EQ(store.latest_collections(), second);
  EXPECT_EQ(store.collections(store.generation()), second);
  EXPECT_EQ(store.collections(0), nullptr);  // what an earlier generation saw stays as it was
}

}  // namespace
}  // namespace rulestream
