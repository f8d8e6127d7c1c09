#include "stages/format/collections_file.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "core/model/exceptions.hpp"
#include "core/model/python_json.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using ::testing::HasSubstr;

const std::string kPath = "trial/collections/000000000/worker_0_collections.json";

FormatError parse_error(std::string_view json) {
  try {
    parse_collections_file(json, kPath);
  } catch (const FormatError& error) {
    return error;
  }
  ADD_FAILURE() << "no FormatError for: " << json;
  return FormatError("", "");
}

// One collection in smdebug's shape, with the given reduction_config and save_config JSON.
std::string file_with(std::string_view reduction_config, std::string_view save_config) {
  return R"({"collections": {"weights": {"name": "weights", "include_regex": ["^(?!gradient).*weight"], "tensor_names": ["MLP_fc1.weight"], "reduction_config": )" +
         std::string(reduction_config) + R"(, "save_config": )" + std::string(save_config) +
         R"(, "save_histogram": true}}, "_meta": {"num_workers": 1}})";
}

constexpr std::string_view kNoReductions =
    R"({"save_raw_tensor": true, "reductions": "", "save_shape": false})";
constexpr std::string_view kTrainOnly =
    R"({"TRAIN": {"save_interval": 5, "save_steps": [], "start_step": 0, "end_step": null}, "EVAL": null, "PREDICT": null, "GLOBAL": null})";

// The sample with its collections re-ordered by name: the order a std::map gives back.
boost::json::value with_sorted_collections(boost::json::value document) {
  boost::json::object& collections = document.at("collections").as_object();
  std::vector<std::string> names;
  for (const auto& member : collections) names.emplace_back(member.key());
  std::sort(names.begin(), names.end());
  boost::json::object sorted;
  for (const auto& name : names) sorted[name] = collections.at(name);
  collections = std::move(sorted);
  return document;
}

TEST(CollectionsFileTest, EverySampleFileRoundTrips) {
  const auto samples = testing::samples_dir();
  if (!samples) GTEST_SKIP() << "smdebug-samples not found (set RULESTREAM_SAMPLES)";
  const auto files = testing::sample_files(*samples, "collections", "_collections.json");
  ASSERT_GE(files.size(), 7u);
  for (const auto& file : files) {
    const std::string text = testing::read_text_file(file);
    const CollectionsFile parsed = parse_collections_file(text, file.string());
    const std::string written = serialize_collections_file(parsed);
    const boost::json::value original = boost::json::parse(text);
    // Same JSON value: every field of every collection survives.
    EXPECT_EQ(boost::json::parse(written), original) << file;
    // Same bytes too, except that collections come back sorted by name (smdebug's order is
    // Python set order, which the model does not keep).
    EXPECT_EQ(dump_python_json(original), text) << file;
    EXPECT_EQ(written, dump_python_json(with_sorted_collections(original))) << file;
    EXPECT_EQ(parse_collections_file(written, file.string()), parsed) << file;
  }
}

TEST(CollectionsFileTest, ReadsReductionConfigsOfTheReductionsSample) {
  const auto samples = testing::samples_dir();
  if (!samples) GTEST_SKIP() << "smdebug-samples not found (set RULESTREAM_SAMPLES)";
  const auto file =
      *samples / "trials/pt-mlp-reductions/collections/000000000/worker_0_collections.json";
  const CollectionsFile parsed =
      parse_collections_file(testing::read_text_file(file), file.string());
  EXPECT_EQ(parsed.num_workers, 1);
  ASSERT_TRUE(parsed.collections.contains("weights"));
  const Collection& weights = parsed.collections.at("weights");
  EXPECT_EQ(weights.name, "weights");
  EXPECT_EQ(weights.include_regex, std::vector<std::string>{"^(?!gradient).*weight"});
  EXPECT_EQ(weights.tensor_names,
            (std::set<std::string>{"MLP_fc1.weight", "MLP_fc2.weight", "MLP_fc3.weight"}));
  EXPECT_FALSE(weights.reduction_config.save_raw_tensor);
  EXPECT_TRUE(weights.reduction_config.save_shape);
  // "min,max,mean,l2_norm,abs_mean,abs_l1_norm"
  const std::vector<ReductionKey> expected = {{Reduction::Min, false},  {Reduction::Max, false},
                                              {Reduction::Mean, false}, {Reduction::L2, false},
                                              {Reduction::Mean, true},  {Reduction::L1, true}};
  EXPECT_EQ(weights.reduction_config.reductions, expected);
  EXPECT_EQ(parsed.collections.at("gradients").reduction_config.reductions.size(), 12u);
  EXPECT_TRUE(parsed.collections.at("losses").reduction_config.reductions.empty());
  EXPECT_FALSE(parsed.collections.at("losses").save_histogram);
  const auto& train = weights.save_config.at(Mode::Train);
  ASSERT_TRUE(train.has_value());
  EXPECT_EQ(train->save_interval, 4);
  EXPECT_TRUE(train->save_steps.empty());
  EXPECT_EQ(train->start_step, 0);
  EXPECT_FALSE(train->end_step.has_value());
}

TEST(CollectionsFileTest, ReadsNullSaveConfigModesOfTheDdpSample) {
  const auto samples = testing::samples_dir();
  if (!samples) GTEST_SKIP() << "smdebug-samples not found (set RULESTREAM_SAMPLES)";
  const auto file =
      *samples / "trials/pt-ddp-2workers/collections/000000000/worker_1_collections.json";
  const CollectionsFile parsed =
      parse_collections_file(testing::read_text_file(file), file.string());
  EXPECT_EQ(parsed.num_workers, 2);
  const auto& save_config = parsed.collections.at("losses").save_config;
  ASSERT_EQ(save_config.size(), 4u);
  EXPECT_EQ(save_config.at(Mode::Eval)->save_interval, 2);
  EXPECT_FALSE(save_config.at(Mode::Predict).has_value());
  EXPECT_FALSE(save_config.at(Mode::Global).has_value());
}

TEST(CollectionsFileTest, SerializesInSmdebugsShape) {
  CollectionsFile file;
  Collection losses;
  losses.name = "losses";
  losses.include_regex = {"[Ll]oss_(?!input).*output"};
  losses.tensor_names = {"b_loss", "a_loss"};
  losses.reduction_config.save_raw_tensor = true;
  losses.reduction_config.reductions = {{Reduction::Min, false},
                                        {Reduction::L2, false},
                                        {Reduction::Variance, true},
                                        {Reduction::L1, true}};
  losses.save_config[Mode::Train] = SaveConfigMode{5, {1, 7}, 2, 100};
  losses.save_config[Mode::Eval] = std::nullopt;
  losses.save_histogram = false;
  file.collections["losses"] = losses;
  file.num_workers = 3;
  EXPECT_EQ(
      serialize_collections_file(file),
      R"({"collections": {"losses": {"name": "losses", "include_regex": ["[Ll]oss_(?!input).*output"], )"
      R"("tensor_names": ["a_loss", "b_loss"], "reduction_config": {"save_raw_tensor": true, )"
      R"("reductions": "min,l2_norm,abs_variance,abs_l1_norm", "save_shape": false}, )"
      R"("save_config": {"TRAIN": {"save_interval": 5, "save_steps": [1, 7], "start_step": 2, "end_step": 100}, )"
      R"("EVAL": null}, "save_histogram": false}}, "_meta": {"num_workers": 3}})");
}

TEST(CollectionsFileTest, EmptyReductionsStringMeansNone) {
  const CollectionsFile parsed =
      parse_collections_file(file_with(kNoReductions, kTrainOnly), kPath);
  EXPECT_TRUE(parsed.collections.at("weights").reduction_config.reductions.empty());
  EXPECT_EQ(serialize_collections_file(parsed), file_with(kNoReductions, kTrainOnly));
}

TEST(CollectionsFileTest, ReductionsAreTrimmedAndEmptyPiecesSkippedLikeSmdebugsSplit) {
  const CollectionsFile parsed = parse_collections_file(
      file_with(
          R"({"save_raw_tensor": false, "reductions": " min , abs_l2_norm,, l1 ", "save_shape": false})",
          kTrainOnly),
      kPath);
  const std::vector<ReductionKey> expected = {
      {Reduction::Min, false}, {Reduction::L2, true}, {Reduction::L1, false}};
  EXPECT_EQ(parsed.collections.at("weights").reduction_config.reductions, expected);
  // Norms are written the way smdebug spells them in configs.
  EXPECT_THAT(serialize_collections_file(parsed),
              HasSubstr(R"("reductions": "min,abs_l2_norm,l1_norm")"));
}

TEST(CollectionsFileTest, NullSaveConfigModesRoundTrip) {
  const std::string text = file_with(kNoReductions, kTrainOnly);
  const CollectionsFile parsed = parse_collections_file(text, kPath);
  const auto& save_config = parsed.collections.at("weights").save_config;
  EXPECT_TRUE(save_config.at(Mode::Train).has_value());
  EXPECT_TRUE(save_config.contains(Mode::Eval));
  EXPECT_FALSE(save_config.at(Mode::Eval).has_value());
  EXPECT_EQ(serialize_collections_file(parsed), text);
}

TEST(CollectionsFileTest, NullSaveConfigAndMissingFieldsTakeSmdebugsDefaults) {
  const CollectionsFile parsed = parse_collections_file(
      R"({"collections": {"c": {"save_config": null, "reduction_config": null}}, "unknown": [1]})",
      kPath);
  EXPECT_FALSE(parsed.num_workers.has_value());
  const Collection& c = parsed.collections.at("c");
  EXPECT_EQ(c.name, "c");
  EXPECT_TRUE(c.include_regex.empty());
  EXPECT_TRUE(c.tensor_names.empty());
  EXPECT_TRUE(c.save_config.empty());
  EXPECT_EQ(c.reduction_config, ReductionConfig{});
  EXPECT_TRUE(c.save_histogram);
  EXPECT_THAT(serialize_collections_file(parsed), HasSubstr(R"("save_config": null)"));
  EXPECT_EQ(parse_collections_file(serialize_collections_file(parsed), kPath), parsed);
}

TEST(CollectionsFileTest, UnknownKeysAreIgnored) {
  const CollectionsFile parsed = parse_collections_file(
      R"({"collections": {"w": {"name": "w", "future": {"x": 1}, "reduction_config": {"reductions": "max", "version": 2}}}, "_meta": {"num_workers": 4, "framework": "pytorch"}, "extra": null})",
      kPath);
  EXPECT_EQ(parsed.num_workers, 4);
  const ReductionConfig& config = parsed.collections.at("w").reduction_config;
  EXPECT_FALSE(config.save_raw_tensor);  // smdebug's default when the key is absent
  EXPECT_EQ(config.reductions, (std::vector<ReductionKey>{{Reduction::Max, false}}));
}

TEST(CollectionsFileTest, KeysCollectionsByTheirOwnNameLikeSmdebug) {
  const CollectionsFile parsed =
      parse_collections_file(R"({"collections": {"outer": {"name": "inner"}}})", kPath);
  EXPECT_FALSE(parsed.collections.contains("outer"));
  EXPECT_EQ(parsed.collections.at("inner").name, "inner");
}

TEST(CollectionsFileTest, UnknownReductionNamesTheCollection) {
  const FormatError error = parse_error(file_with(
      R"({"save_raw_tensor": true, "reductions": "min,median", "save_shape": false})", kTrainOnly));
  EXPECT_EQ(error.where(), kPath);
  EXPECT_THAT(error.what(), HasSubstr(kPath));
  EXPECT_THAT(error.what(), HasSubstr("collection 'weights'"));
  EXPECT_THAT(error.what(), HasSubstr("\"median\""));
  EXPECT_THAT(error.what(), HasSubstr("collections.weights.reduction_config.reductions"));
  EXPECT_THAT(parse_error(file_with(R"({"reductions": "abs_"})", kTrainOnly)).what(),
              HasSubstr("unknown reduction \"abs_\""));
}

TEST(CollectionsFileTest, MalformedInputsNameTheField) {
  EXPECT_THAT(parse_error(R"({"collections": {"w": )").what(), HasSubstr("malformed JSON"));
  EXPECT_THAT(parse_error(R"({"_meta": {"num_workers": 1}})").what(),
              HasSubstr("field 'collections' is missing"));
  EXPECT_THAT(parse_error(R"({"collections": []})").what(),
              HasSubstr("field 'collections' must be an object"));
  EXPECT_THAT(parse_error(R"({"collections": {"w": {"tensor_names": ["a", 5]}}})").what(),
              HasSubstr("field 'collections.w.tensor_names[1]' must be a string, got 5"));
  EXPECT_THAT(parse_error(R"({"collections": {"w": {"include_regex": "^a"}}})").what(),
              HasSubstr("field 'collections.w.include_regex' must be an array"));
  EXPECT_THAT(parse_error(R"({"collections": {"w": {"save_histogram": "yes"}}})").what(),
              HasSubstr("field 'collections.w.save_histogram' must be true or false"));
  EXPECT_THAT(
      parse_error(file_with(R"({"save_raw_tensor": 1, "reductions": ""})", kTrainOnly)).what(),
      HasSubstr("field 'collections.weights.reduction_config.save_raw_tensor'"));
  EXPECT_THAT(parse_error(file_with(kNoReductions, R"({"TRAINING": null})")).what(),
              HasSubstr("field 'collections.weights.save_config.TRAINING' is not a mode"));
  EXPECT_THAT(parse_error(file_with(kNoReductions, R"({"TRAIN": 5})")).what(),
              HasSubstr("field 'collections.weights.save_config.TRAIN' must be an object"));
  EXPECT_THAT(parse_error(file_with(kNoReductions, R"({"TRAIN": {"save_interval": 0}})")).what(),
              HasSubstr("field 'collections.weights.save_config.TRAIN.save_interval' must be at "
                        "least 1"));
  EXPECT_THAT(parse_error(file_with(kNoReductions, R"({"EVAL": {"save_steps": [1, -3]}})")).what(),
              HasSubstr("field 'collections.weights.save_config.EVAL.save_steps[1]' must be a "
                        "non-negative integer"));
  EXPECT_THAT(parse_error(file_with(kNoReductions, R"({"EVAL": {"end_step": -1}})")).what(),
              HasSubstr("collections.weights.save_config.EVAL.end_step"));
  EXPECT_THAT(parse_error(R"({"collections": {}, "_meta": {"num_workers": 0}})").what(),
              HasSubstr("field '_meta.num_workers' must be between 1 and"));
  EXPECT_THAT(parse_error(R"({"collections": {}, "_meta": {"num_workers": -2}})").what(),
              HasSubstr("field '_meta.num_workers' must be a non-negative integer"));
  EXPECT_THAT(parse_error(R"({"collections": {}, "_meta": []})").what(),
              HasSubstr("field '_meta' must be an object"));
}

}  // namespace
}  // namespace rulestream
