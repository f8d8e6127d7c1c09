#include "stages/format/index_file.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/model/exceptions.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using ::testing::HasSubstr;

const std::string kPath = "trial/index/000000000/000000000007_worker_0.json";

// The FormatError a malformed index file raises (fails the test if none is raised).
FormatError parse_error(std::string_view json) {
  try {
    parse_index_file(json, kPath);
  } catch (const FormatError& error) {
    return error;
  }
  ADD_FAILURE() << "no FormatError for: " << json;
  return FormatError("", "");
}

TEST(IndexFileTest, EverySampleIndexFileRoundTripsByteForByte) {
  const auto samples = testing::samples_dir();
  if (!samples) GTEST_SKIP() << "smdebug-samples not found (set RULESTREAM_SAMPLES)";
  const auto files = testing::sample_files(*samples, "index", ".json");
  ASSERT_GT(files.size(), 300u);
  for (const auto& file : files) {
    const std::string text = testing::read_text_file(file);
    const IndexFile index = parse_index_file(text, file.string());
    EXPECT_EQ(serialize_index_file(index), text) << file;
    // smdebug writes the step's records back to back from offset 0.
    std::uint64_t next = 0;
    for (const TensorLocation& tensor : index.tensors) {
      EXPECT_EQ(tensor.start, next) << file << " " << tensor.tensor_name;
      next = tensor.start + tensor.length;
    }
  }
}

TEST(IndexFileTest, ReadsTheFieldsOfASampleWithShapes) {
  const auto samples = testing::samples_dir();
  if (!samples) GTEST_SKIP() << "smdebug-samples not found (set RULESTREAM_SAMPLES)";
  const auto file =
      *samples / "trials/pt-mlp-reductions/index/000000000/000000000000_worker_0.json";
  const IndexFile index = parse_index_file(testing::read_text_file(file), file.string());
  EXPECT_EQ(index.mode, Mode::Train);
  EXPECT_EQ(index.mode_step, 0);
  EXPECT_EQ(index.event_file_name, "events/000000000000/000000000000_worker_0.tfevents");
  ASSERT_GE(index.tensors.size(), 8u);
  EXPECT_EQ(index.tensors[0], (TensorLocation{"smdebug/reductions/min/MLP_fc1.weight", 0, 109}));
  EXPECT_EQ(index.tensors[7], (TensorLocation{"MLP_fc1.bias", 769, 233}));
  ASSERT_TRUE(index.shapes.has_value());
  ASSERT_FALSE(index.shapes->empty());
  EXPECT_EQ(index.shapes->front(), (ShapeEntry{"MLP_fc1.weight", "MLP_fc1.weight", {32, 20}}));
}

TEST(IndexFileTest, ReadsEvalAndPredictModes) {
  const std::string eval =
      R"({"meta": {"mode": "EVAL", "mode_step": 4, "event_file_name": "e.tfevents"}, "tensor_payload": []})";
  EXPECT_EQ(parse_index_file(eval, kPath).mode, Mode::Eval);
  EXPECT_EQ(parse_index_file(eval, kPath).mode_step, 4);
  const std::string predict =
      R"({"meta": {"mode": "PREDICT", "mode_step": 0}, "tensor_payload": []})";
  EXPECT_EQ(parse_index_file(predict, kPath).mode, Mode::Predict);
  const std::string global =
      R"({"meta": {"mode": "GLOBAL", "mode_step": 9}, "tensor_payload": []})";
  EXPECT_EQ(parse_index_file(global, kPath).mode, Mode::Global);
}

TEST(IndexFileTest, StripsWhitespaceAroundTheModeLikeSmdebug) {
  const std::string json =
      R"({"meta": {"mode": " TRAIN\n", "mode_step": 1}, "tensor_payload": []})";
  EXPECT_EQ(parse_index_file(json, kPath).mode, Mode::Train);
}

TEST(IndexFileTest, MissingShapePayloadDiffersFromAnEmptyOne) {
  const std::string without =
      R"({"meta": {"mode": "TRAIN", "mode_step": 3}, "tensor_payload": []})";
  const std::string empty =
      R"({"meta": {"mode": "TRAIN", "mode_step": 3}, "tensor_payload": [], "shape_payload": []})";
  const IndexFile a = parse_index_file(without, kPath);
  const IndexFile b = parse_index_file(empty, kPath);
  EXPECT_FALSE(a.shapes.has_value());
  ASSERT_TRUE(b.shapes.has_value());
  EXPECT_TRUE(b.shapes->empty());
  EXPECT_FALSE(a.event_file_name.has_value());
  EXPECT_EQ(serialize_index_file(a), without);
  EXPECT_EQ(serialize_index_file(b), empty);
}

TEST(IndexFileTest, MissingTensorPayloadMeansNoTensors) {
  const IndexFile index = parse_index_file(
      R"({"meta": {"mode": "TRAIN", "mode_step": 2}, "shape_payload": [{"tensorname": "a", "originalname": "a:0", "shape": []}]})",
      kPath);
  EXPECT_TRUE(index.tensors.empty());
  ASSERT_TRUE(index.shapes.has_value());
  EXPECT_EQ(index.shapes->at(0), (ShapeEntry{"a", "a:0", {}}));
  // Written back the way smdebug's writer always writes it: with the (empty) payload.
  EXPECT_EQ(
      serialize_index_file(index),
      R"({"meta": {"mode": "TRAIN", "mode_step": 2}, "tensor_payload": [], "shape_payload": [{"tensorname": "a", "originalname": "a:0", "shape": []}]})");
}

TEST(IndexFileTest, IgnoresUnknownKeys) {
  const IndexFile index = parse_index_file(
      R"({"meta": {"mode": "TRAIN", "mode_step": 2, "extra": 1}, "tensor_payload": [], "version": "v2"})",
      kPath);
  EXPECT_EQ(index.mode_step, 2);
}

TEST(IndexFileTest, KeepsDuplicateTensorEntriesInOrder) {
  const IndexFile index = parse_index_file(
      R"({"meta": {"mode": "TRAIN", "mode_step": 0, "event_file_name": "e"}, "tensor_payload": [{"tensorname": "t", "start_idx": 0, "length": 20}, {"tensorname": "t", "start_idx": 20, "length": 30}]})",
      kPath);
  ASSERT_EQ(index.tensors.size(), 2u);
  EXPECT_EQ(index.tensors[1], (TensorLocation{"t", 20, 30}));
}

TEST(IndexFileTest, SerializesLikeJsonDumps) {
  IndexFile index;
  index.mode = Mode::Eval;
  index.mode_step = 12;
  index.event_file_name = "events/000000000050/000000000050_worker_1.tfevents";
  index.tensors = {{"relu1_input_0", 0, 233}, {"CrossEntropyLoss_output_0", 233, 97}};
  EXPECT_EQ(
      serialize_index_file(index),
      R"({"meta": {"mode": "EVAL", "mode_step": 12, "event_file_name": "events/000000000050/000000000050_worker_1.tfevents"}, )"
      R"("tensor_payload": [{"tensorname": "relu1_input_0", "start_idx": 0, "length": 233}, )"
      R"({"tensorname": "CrossEntropyLoss_output_0", "start_idx": 233, "length": 97}]})");
  index.shapes = std::vector<ShapeEntry>{{"relu1_input_0", "relu1_input_0", {64, 32}}};
  EXPECT_THAT(
      serialize_index_file(index),
      ::testing::EndsWith(
          R"(, "shape_payload": [{"tensorname": "relu1_input_0", "originalname": "relu1_input_0", "shape": [64, 32]}]})"));
}

TEST(IndexFileTest, EscapesNonAsciiNamesAsJsonDumpsDoes) {
  IndexFile index;
  index.event_file_name = "e";
  // "é/日本/😀" with a quote, a backslash and a newline: Python's json.dumps(ensure_ascii=True).
  index.tensors = {{"\xc3\xa9/\xe6\x97\xa5\xe6\x9c\xac/\xf0\x9f\x98\x80\"\\\n", 0, 16}};
  const std::string text = serialize_index_file(index);
  EXPECT_THAT(text, HasSubstr(R"("tensorname": "\u00e9/\u65e5\u672c/\ud83d\ude00\"\\\n")"));
  EXPECT_EQ(parse_index_file(text, kPath), index);
}

TEST(IndexFileTest, LargeOffsetsSurvive) {
  IndexFile index;
  index.event_file_name = "e";
  index.tensors = {{"t", 1ull << 40, 1ull << 33}};
  EXPECT_EQ(parse_index_file(serialize_index_file(index), kPath), index);
}

TEST(IndexFileTest, MalformedJsonNamesThePathAndPosition) {
  const FormatError truncated = parse_error(R"({"meta": {"mode": "TRAIN", "mode_st)");
  EXPECT_EQ(truncated.where(), kPath);
  EXPECT_THAT(truncated.what(), HasSubstr(kPath));
  EXPECT_THAT(truncated.what(), HasSubstr("malformed JSON"));
  EXPECT_THAT(truncated.what(), HasSubstr("line 1"));

  const FormatError second_line = parse_error("{\"meta\": {},\n \"tensor_payload\": [1,, 2]}");
  EXPECT_THAT(second_line.what(), HasSubstr("line 2, column 23 (byte 35)"));
  EXPECT_THAT(second_line.what(), HasSubstr("syntax error"));

  EXPECT_THAT(parse_error("").what(), HasSubstr("malformed JSON"));
  EXPECT_THAT(parse_error(R"({"meta": {}} trailing)").what(), HasSubstr("extra data"));
}

TEST(IndexFileTest, MissingOrMistypedFieldsAreNamed) {
  EXPECT_THAT(parse_error("[]").what(), HasSubstr("must be an object"));
  EXPECT_THAT(parse_error(R"({"tensor_payload": []})").what(),
              HasSubstr("field 'meta' is missing"));
  EXPECT_THAT(parse_error(R"({"meta": {"mode_step": 0}})").what(),
              HasSubstr("field 'meta.mode' is missing"));
  EXPECT_THAT(parse_error(R"({"meta": {"mode": 1, "mode_step": 0}})").what(),
              HasSubstr("field 'meta.mode' must be a string, got 1"));
  EXPECT_THAT(parse_error(R"({"meta": {"mode": "TRAIN"}})").what(),
              HasSubstr("field 'meta.mode_step' is missing"));
  EXPECT_THAT(parse_error(R"({"meta": {"mode": "TRAIN", "mode_step": "3"}})").what(),
              HasSubstr("field 'meta.mode_step' must be a non-negative integer"));
  EXPECT_THAT(parse_error(R"({"meta": {"mode": "TRAIN", "mode_step": 1.0}})").what(),
              HasSubstr("field 'meta.mode_step'"));
  EXPECT_THAT(
      parse_error(R"({"meta": {"mode": "TRAIN", "mode_step": 0, "event_file_name": 3}})").what(),
      HasSubstr("field 'meta.event_file_name' must be a string"));
  EXPECT_THAT(
      parse_error(R"({"meta": {"mode": "TRAIN", "mode_step": 0}, "tensor_payload": {}})").what(),
      HasSubstr("field 'tensor_payload' must be an array"));
  EXPECT_THAT(
      parse_error(
          R"({"meta": {"mode": "TRAIN", "mode_step": 0, "event_file_name": "e"}, "tensor_payload": [{"tensorname": "t", "start_idx": 0}]})")
          .what(),
      HasSubstr("field 'tensor_payload[0].length' is missing"));
  EXPECT_THAT(
      parse_error(
          R"({"meta": {"mode": "TRAIN", "mode_step": 0, "event_file_name": "e"}, "tensor_payload": [{"tensorname": "t", "start_idx": 0, "length": 1}, 7]})")
          .what(),
      HasSubstr("field 'tensor_payload[1]' must be an object, got 7"));
}

TEST(IndexFileTest, UnknownModeIsAnError) {
  const FormatError error =
      parse_error(R"({"meta": {"mode": "TRAINING", "mode_step": 0}, "tensor_payload": []})");
  EXPECT_THAT(error.what(), HasSubstr(kPath));
  EXPECT_THAT(error.what(), HasSubstr("meta.mode"));
  EXPECT_THAT(error.what(), HasSubstr("TRAINING"));
  // smdebug's ModeKeys[...] is case-sensitive.
  EXPECT_THAT(parse_error(R"({"meta": {"mode": "train", "mode_step": 0}})").what(),
              HasSubstr("unknown mode"));
}

TEST(IndexFileTest, NegativeNumbersAreErrors) {
  EXPECT_THAT(
      parse_error(R"({"meta": {"mode": "TRAIN", "mode_step": -1}})").what(),
      HasSubstr("field 'meta.mode_step' must be a non-negative integer below 2^63, got -1"));
  EXPECT_THAT(
      parse_error(
          R"({"meta": {"mode": "TRAIN", "mode_step": 0, "event_file_name": "e"}, "tensor_payload": [{"tensorname": "a", "start_idx": 0, "length": 5}, {"tensorname": "b", "start_idx": -5, "length": 5}]})")
          .what(),
      HasSubstr("field 'tensor_payload[1].start_idx' must be a non-negative integer"));
  EXPECT_THAT(
      parse_error(
          R"({"meta": {"mode": "TRAIN", "mode_step": 0}, "tensor_payload": [], "shape_payload": [{"tensorname": "a", "originalname": "a", "shape": [3, -2]}]})")
          .what(),
      HasSubstr("field 'shape_payload[0].shape[1]' must be a non-negative integer"));
}

TEST(IndexFileTest, TensorsWithoutAnEventFileAreAnError) {
  EXPECT_THAT(
      parse_error(
          R"({"meta": {"mode": "TRAIN", "mode_step": 0}, "tensor_payload": [{"tensorname": "a", "start_idx": 0, "length": 5}]})")
          .what(),
      HasSubstr("field 'meta.event_file_name' is missing, but tensor_payload lists 1 tensors"));
}

TEST(IndexFileTest, OffsetsThatOverflowAreAnError) {
  EXPECT_THAT(
      parse_error(
          R"({"meta": {"mode": "TRAIN", "mode_step": 0, "event_file_name": "e"}, "tensor_payload": [{"tensorname": "a", "start_idx": 18446744073709551615, "length": 5}]})")
          .what(),
      HasSubstr("tensor_payload[0].length"));
}

}  // namespace
}  // namespace rulestream
