#include "core/model/trial_layout.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <string>

#include "stages/format/index_file.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

TEST(TrialLayoutTest, BuildsSmdebugsPaths) {
  EXPECT_EQ(event_file_path(12, "worker_0"), "events/000000000012/000000000012_worker_0.tfevents");
  EXPECT_EQ(index_file_path(12, "worker_0"), "index/000000000/000000000012_worker_0.json");
  EXPECT_EQ(index_file_path(1234, "worker_1"), "index/000000001/000000001234_worker_1.json");
  EXPECT_EQ(collections_file_path("worker_0"), "collections/000000000/worker_0_collections.json");
  // Python's format(n, "012d") widens rather than truncates.
  EXPECT_EQ(event_file_path(12345678901234, "w"),
            "events/12345678901234/12345678901234_w.tfevents");
}

TEST(TrialLayoutTest, IndexBucketsHoldAThousandSteps) {
  EXPECT_EQ(index_bucket_path(0), "index/000000000/");
  EXPECT_EQ(index_bucket_path(999), "index/000000000/");
  EXPECT_EQ(index_bucket_path(1000), "index/000000001/");
  EXPECT_EQ(index_bucket_path(1999), "index/000000001/");
  EXPECT_EQ(index_bucket_path(123456789), "index/000123456/");
  EXPECT_TRUE(index_file_path(2500, "w").starts_with(index_bucket_path(2500)));
}

TEST(TrialLayoutTest, NegativeStepsAreRejected) {
  EXPECT_THROW(event_file_path(-1, "worker_0"), std::invalid_argument);
  EXPECT_THROW(index_file_path(-1, "worker_0"), std::invalid_argument);
  EXPECT_THROW(index_bucket_path(-1000), std::invalid_argument);
}

TEST(TrialLayoutTest, ParsesStepAndWorkerFromFileNames) {
  const auto index = parse_step_file_name("index/000000000/000000000012_worker_0.json");
  ASSERT_TRUE(index.has_value());
  EXPECT_EQ(index->step, 12);
  EXPECT_EQ(index->worker, "worker_0");

  const auto event =
      parse_step_file_name("/data/trial/events/000000001234/000000001234_worker_1_gpu.tfevents");
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ(event->step, 1234);
  EXPECT_EQ(event->worker, "worker_1_gpu");

  const auto csv = parse_step_file_name("index/000000000/000000000003_worker_0.csv");
  ASSERT_TRUE(csv.has_value());
  EXPECT_EQ(csv->step, 3);
}

TEST(TrialLayoutTest, KeepsSerializedTfDeviceWorkerNamesAsWritten) {
  const std::string worker = "_job:worker_replica:0_task:1_device:GPU:0";
  const auto parsed = parse_step_file_name(event_file_path(40, worker));
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->step, 40);
  EXPECT_EQ(parsed->worker, worker);
  const auto from_index = parse_step_file_name(index_file_path(40, worker));
  ASSERT_TRUE(from_index.has_value());
  EXPECT_EQ(from_index->worker, worker);
}

TEST(TrialLayoutTest, RejectsNamesTheRegexRejects) {
  // r".+/(\d+)_(.+)\.(json|csv|tfevents)$"
  EXPECT_FALSE(parse_step_file_name("000000000012_worker_0.json"));   // no folder
  EXPECT_FALSE(parse_step_file_name("/000000000012_worker_0.json"));  // `.+` before '/' is empty
  EXPECT_FALSE(parse_step_file_name("index/000000000/000000000012_worker_0.json.tmp"));
  EXPECT_FALSE(parse_step_file_name("index/000000000/000000000012_worker_0.JSON"));
  EXPECT_FALSE(parse_step_file_name("index/000000000/worker_0.json"));
  EXPECT_FALSE(parse_step_file_name("index/000000000/000000000012worker.json"));
  EXPECT_FALSE(parse_step_file_name("index/000000000/000000000012_.json"));
  EXPECT_FALSE(parse_step_file_name("index/000000000/x000000000012_w.json"));
  EXPECT_FALSE(parse_step_file_name("index/000000000/000000000012_w\n.json"));
  // A step beyond int64 cannot be represented.
  EXPECT_FALSE(parse_step_file_name("index/000000000/99999999999999999999_w.json"));
}

TEST(TrialLayoutTest, BacktracksLikeTheRegex) {
  // When the last name does not start with digits, `.+/` gives back an earlier '/', and the
  // worker group then spans folders: what re.match does.
  const auto parsed = parse_step_file_name("trial/12_x/foo.json");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->step, 12);
  EXPECT_EQ(parsed->worker, "x/foo");
}

TEST(TrialLayoutTest, ParsesEverySampleFileName) {
  const auto samples = testing::samples_dir();
  if (!samples) GTEST_SKIP() << "smdebug-samples not found (set RULESTREAM_SAMPLES)";
  int checked = 0;
  for (const auto& trial : std::filesystem::directory_iterator(*samples / "trials")) {
    for (const char* folder : {"index", "events"}) {
      if (!std::filesystem::is_directory(trial.path() / folder)) continue;
      for (const auto& entry :
           std::filesystem::recursive_directory_iterator(trial.path() / folder)) {
        if (!entry.is_regular_file()) continue;
        const std::string relative =
            std::filesystem::relative(entry.path(), trial.path()).generic_string();
        const auto parsed = parse_step_file_name(relative);
        ASSERT_TRUE(parsed.has_value()) << relative;
        const std::string rebuilt = std::string(folder) == "index"
                                        ? index_file_path(parsed->step, parsed->worker)
                                        : event_file_path(parsed->step, parsed->worker);
        EXPECT_EQ(rebuilt, relative);
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 700);
}

TEST(TrialLayoutTest, ParsesCollectionsWorkers) {
  EXPECT_EQ(parse_collections_worker("collections/000000000/worker_0_collections.json"),
            "worker_0");
  EXPECT_EQ(
      parse_collections_worker("/data/job/collections/000000000/worker_1_gpu_collections.json"),
      "worker_1_gpu");
  EXPECT_EQ(
      parse_collections_worker(collections_file_path("_job:worker_replica:0_task:1_device:GPU:0")),
      "_job:worker_replica:0_task:1_device:GPU:0");
  EXPECT_EQ(parse_collections_worker("collections/000000000/worker_0_collections.ts"), "worker_0");
  EXPECT_EQ(parse_collections_worker(collections_file_path("worker_0")), "worker_0");
  // re.match does not anchor at the end: callers list only finished files (LocalStorage skips
  // *.tmp), as smdebug's reader does.
  EXPECT_EQ(parse_collections_worker("collections/000000000/worker_0_collections.json.tmp"),
            "worker_0");
  // The greedy group takes the last "_collections".
  EXPECT_EQ(parse_collections_worker("collections/0/a_collections_b_collections.json"),
            "a_collections_b");
}

TEST(TrialLayoutTest, RejectsNonCollectionFiles) {
  EXPECT_FALSE(parse_collections_worker("collections/worker_0_collections.json"));  // no subfolder
  EXPECT_FALSE(parse_collections_worker("xcollections/0/worker_0_collections.json"));
  EXPECT_FALSE(parse_collections_worker("collections/000000000/worker_0.json"));
  EXPECT_FALSE(parse_collections_worker("collections/000000000/_collections.json"));
  EXPECT_FALSE(parse_collections_worker("collections/000000000/worker_0_collections.txt"));
  EXPECT_FALSE(parse_collections_worker("index/000000000/000000000012_worker_0.json"));
}

TEST(TrialLayoutTest, NamesReductionTensorsAsSmdebugDoes) {
  EXPECT_EQ(reduction_tensor_name("MLP_fc1.weight", {Reduction::Min, false}),
            "smdebug/reductions/min/MLP_fc1.weight");
  EXPECT_EQ(reduction_tensor_name("gradient/MLP_fc1.weight", {Reduction::Mean, true}),
            "smdebug/reductions/abs_mean/gradient/MLP_fc1.weight");
  EXPECT_EQ(reduction_tensor_name("x", {Reduction::L2, false}), "smdebug/reductions/l2/x");
  EXPECT_EQ(reduction_tensor_name("x", {Reduction::L1, true}), "smdebug/reductions/abs_l1/x");
  // re.sub(r":\d+", "", name): every output index goes, not just a trailing one.
  EXPECT_EQ(reduction_tensor_name("dense/bias:0", {Reduction::Max, false}),
            "smdebug/reductions/max/dense/bias");
  EXPECT_EQ(reduction_tensor_name("a:1/b:22", {Reduction::Sum, false}),
            "smdebug/reductions/sum/a/b");
  EXPECT_EQ(reduction_tensor_name("a::1:x:", {Reduction::Sum, false}),
            "smdebug/reductions/sum/a::x:");
}

TEST(TrialLayoutTest, ParsesReductionTensorNames) {
  const auto parsed =
      parse_reduction_tensor_name("smdebug/reductions/abs_mean/gradient/MLP_fc1.weight");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->first, "gradient/MLP_fc1.weight");
  EXPECT_EQ(parsed->second, (ReductionKey{Reduction::Mean, true}));
  for (int i = 0; i < kReductionKeyCount; ++i) {
    const ReductionKey key = ReductionKey::from_index(i);
    const auto round_trip = parse_reduction_tensor_name(reduction_tensor_name("t/u.v", key));
    ASSERT_TRUE(round_trip.has_value()) << reduction_key_name(key);
    EXPECT_EQ(round_trip->first, "t/u.v");
    EXPECT_EQ(round_trip->second, key);
  }
}

TEST(TrialLayoutTest, RejectsOtherTensorNames) {
  EXPECT_FALSE(parse_reduction_tensor_name("MLP_fc1.weight"));
  EXPECT_FALSE(parse_reduction_tensor_name("smdebug/reductions/min"));
  EXPECT_FALSE(parse_reduction_tensor_name("smdebug/reductions/min/"));
  EXPECT_FALSE(parse_reduction_tensor_name("smdebug/reductions/median/x"));
  EXPECT_FALSE(parse_reduction_tensor_name("smdebug/reductions/l2_norm/x"));
  EXPECT_FALSE(parse_reduction_tensor_name("prefix/smdebug/reductions/min/x"));
}

TEST(TrialLayoutTest, EverySavedReductionInTheSamplesParses) {
  const auto samples = testing::samples_dir();
  if (!samples) GTEST_SKIP() << "smdebug-samples not found (set RULESTREAM_SAMPLES)";
  const auto dir = *samples / "trials/pt-mlp-reductions/index";
  int reductions = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    const IndexFile index =
        parse_index_file(testing::read_text_file(entry.path()), entry.path().string());
    for (const TensorLocation& tensor : index.tensors) {
      if (!tensor.tensor_name.starts_with(kReductionTensorPrefix)) continue;
      const auto parsed = parse_reduction_tensor_name(tensor.tensor_name);
      ASSERT_TRUE(parsed.has_value()) << tensor.tensor_name;
      EXPECT_EQ(reduction_tensor_name(parsed->first, parsed->second), tensor.tensor_name);
      ++reductions;
    }
  }
  EXPECT_GT(reductions, 100);
}

}  // namespace
}  // namespace rulestream
