#include "stages/format/trial_writer.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>

#include "core/model/exceptions.hpp"
#include "core/model/trial_layout.hpp"
#include "stages/format/crc32c.hpp"
#include "stages/format/event_codec.hpp"
#include "stages/format/tfrecord_reader.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::read_text_file;
using testing::TempDir;

TensorValue floats(Shape shape, std::vector<float> values) {
  return TensorValue::from_values(DType::Float32, std::move(shape), values);
}

TensorValue scalar(float value) {
  return floats({}, {value});
}

TrialWriter make_writer(const fs::path& root, std::string worker = "worker_0") {
  TrialWriter::Options options;
  options.root = root;
  options.worker = std::move(worker);
  return TrialWriter(options);
}

// Every file under `root`, relative, sorted.
std::vector<std::string> files_under(const fs::path& root) {
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file()) files.push_back(fs::relative(entry.path(), root).string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

SharedBytes file_bytes(const fs::path& path) {
  return SharedBytes::from_string(read_text_file(path));
}

// One record of an event file, framed and decoded through the index entry that points at it.
DecodedTensor record_at(const SharedBytes& file, const TensorLocation& location) {
  const Frame frame = frame_record_at(file.span(), location.start);
  EXPECT_EQ(frame.status, FrameStatus::Record) << location.tensor_name;
  EXPECT_EQ(frame.next_offset, location.start + location.length) << location.tensor_name;
  const auto offset = static_cast<std::size_t>(frame.payload.data() - file.data());
  auto decoded = decode_event(file.slice(offset, frame.payload.size()), location.tensor_name);
  EXPECT_EQ(decoded.size(), 1u);
  if (decoded.empty()) throw std::runtime_error("no tensor at " + location.tensor_name);
  return decoded.front();
}

IndexFile read_index(const fs::path& root, std::int64_t step, const std::string& worker) {
  const auto path = root / index_file_path(step, worker);
  return parse_index_file(read_text_file(path), path.string());
}

TEST(TrialWriter, LaysOutFilesAsSmdebugDoes) {
  TempDir dir;
  auto writer = make_writer(dir.path());
  writer.begin_step(0, Mode::Train, 0);
  writer.add_tensor("MLP_fc1.bias", floats({2}, {1, 2}));
  writer.end_step();
  writer.begin_step(1005, Mode::Eval, 3);
  writer.add_tensor("MLP_fc1.bias", floats({2}, {3, 4}));
  writer.end_step();
  writer.write_collections(CollectionsFile{});
  writer.write_end_marker();

  EXPECT_THAT(files_under(dir.path()),
              ElementsAre("collections/000000000/worker_0_collections.json",
                          "events/000000000000/000000000000_worker_0.tfevents",
                          "events/000000001005/000000001005_worker_0.tfevents",
                          "index/000000000/000000000000_worker_0.json",
                          "index/000000001/000000001005_worker_0.json", "training_job_end.ts"));
  EXPECT_EQ(fs::file_size(dir.path() / "training_job_end.ts"), 0u);
}

TEST(TrialWriter, IndexNamesEveryRecordByItsOffsets) {
  TempDir dir;
  auto writer = make_writer(dir.path());
  const auto weight = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  const auto loss = scalar(0.5f);
  const TensorValue text(Shape{2}, std::vector<std::string>{"a", "bc"});
  writer.begin_step(7, Mode::Train, 7);
  writer.add_tensor("MLP_fc1.weight", weight);
  writer.add_tensor("CrossEntropyLoss_output_0", loss);
  writer.add_tensor("notes", text);
  writer.end_step();

  const auto index = read_index(dir.path(), 7, "worker_0");
  EXPECT_EQ(index.mode, Mode::Train);
  EXPECT_EQ(index.mode_step, 7);
  EXPECT_EQ(index.event_file_name, "events/000000000007/000000000007_worker_0.tfevents");
  EXPECT_EQ(index.shapes, std::vector<ShapeEntry>{});
  ASSERT_EQ(index.tensors.size(), 3u);

  const auto file = file_bytes(dir.path() / *index.event_file_name);
  std::uint64_t expected_start = 0;
  const std::map<std::string, TensorValue> written{
      {"MLP_fc1.weight", weight}, {"CrossEntropyLoss_output_0", loss}, {"notes", text}};
  for (const auto& location : index.tensors) {
    SCOPED_TRACE(location.tensor_name);
    EXPECT_EQ(location.start, expected_start);  // contiguous, the first at offset 0
    expected_start += location.length;
    const auto decoded = record_at(file, location);
    EXPECT_EQ(decoded.name, location.tensor_name);
    EXPECT_EQ(decoded.step, 7);
    EXPECT_EQ(decoded.mode, Mode::Train);
    EXPECT_EQ(decoded.mode_step, 7);
    EXPECT_TRUE(decoded.value.identical_to(written.at(location.tensor_name)));
  }
  EXPECT_EQ(expected_start, file.size());
  EXPECT_EQ(writer.event_bytes_written(), file.size());
}

TEST(TrialWriter, IndexJsonIsSmdebugsOneLine) {
  TempDir dir;
  auto writer = make_writer(dir.path());
  writer.begin_step(0, Mode::Train, 0);
  // A float32 0-d reduction record is 109 bytes for this name, as in pt-mlp-reductions.
  writer.add_reduction("MLP_fc1.weight", {Reduction::Min, false}, scalar(-0.2f));
  writer.end_step();
  EXPECT_EQ(read_text_file(dir.path() / "index/000000000/000000000000_worker_0.json"),
            R"({"meta": {"mode": "TRAIN", "mode_step": 0, "event_file_name": )"
            R"("events/000000000000/000000000000_worker_0.tfevents"}, "tensor_payload": )"
            R"([{"tensorname": "smdebug/reductions/min/MLP_fc1.weight", "start_idx": 0, )"
            R"("length": 109}], "shape_payload": []})");
}

TEST(TrialWriter, ReductionsPrecedeTheirRawTensor) {
  TempDir dir;
  auto writer = make_writer(dir.path());
  writer.begin_step(4, Mode::Train, 4);
  writer.add_reduction("relu1_input_0", {Reduction::Mean, true}, scalar(0.5f));
  writer.add_tensor("relu1_input_0", floats({2}, {-1, 0}));  // the hook's order already
  writer.add_tensor("MLP_fc1.bias", floats({2}, {-1, 3}));
  writer.add_reduction("MLP_fc1.bias", {Reduction::Max, false}, scalar(3));  // moved before
  writer.add_reduction("MLP_fc1.bias", {Reduction::L2, false}, scalar(3.1622777f));
  writer.add_reduction("MLP_fc1.weight", {Reduction::Mean, true}, scalar(0.25f));
  writer.add_reduction("MLP_fc1.weight:0", {Reduction::Min, false}, scalar(-1));
  writer.end_step();

  const auto index = read_index(dir.path(), 4, "worker_0");
  std::vector<std::string> names;
  for (const auto& location : index.tensors) names.push_back(location.tensor_name);
  EXPECT_THAT(names, ElementsAre("smdebug/reductions/abs_mean/relu1_input_0", "relu1_input_0",
                                 "smdebug/reductions/max/MLP_fc1.bias",
                                 "smdebug/reductions/l2/MLP_fc1.bias", "MLP_fc1.bias",
                                 "smdebug/reductions/abs_mean/MLP_fc1.weight",
                                 "smdebug/reductions/min/MLP_fc1.weight"));

  const auto file = file_bytes(dir.path() / *index.event_file_name);
  const auto abs_mean = record_at(file, index.tensors[5]);
  EXPECT_TRUE(abs_mean.value.shape().empty());
  EXPECT_EQ(abs_mean.value.as_double(0), 0.25);
}

TEST(TrialWriter, TensorSavedTwiceInAStepGivesTwoRecordsInCallOrder) {
  // smdebug does this (pt-dtypes, PREDICT step 14); a reader takes the later one.
  TempDir dir;
  auto writer = make_writer(dir.path());
  writer.begin_step(14, Mode::Predict, 0);
  writer.add_tensor("dt_float16", scalar(1));
  writer.add_tensor("loss", scalar(2));
  writer.add_tensor("dt_float16", scalar(3));
  writer.add_tensor("dt_float16", scalar(4));
  writer.end_step();
  const auto index = read_index(dir.path(), 14, "worker_0");
  const auto file = file_bytes(dir.path() / *index.event_file_name);
  std::vector<std::string> records;
  for (const auto& location : index.tensors) {
    records.push_back(location.tensor_name + "=" +
                      std::to_string(record_at(file, location).value.as_double(0)));
  }
  EXPECT_THAT(records, ElementsAre("dt_float16=1.000000", "loss=2.000000", "dt_float16=3.000000",
                                   "dt_float16=4.000000"));
}

TEST(TrialWriter, SavedShapesAreIndexed) {
  TempDir dir;
  auto writer = make_writer(dir.path());
  writer.begin_step(0, Mode::Train, 0);
  writer.add_reduction("MLP_fc1.weight", {Reduction::Min, false}, scalar(-1));
  writer.add_shape("MLP_fc1.weight", {32, 20});
  writer.add_shape("CrossEntropyLoss_output_0", {});
  writer.end_step();
  writer.begin_step(1, Mode::Train, 1);
  writer.add_tensor("x", scalar(1));
  writer.end_step();

  const auto with_shapes = read_index(dir.path(), 0, "worker_0");
  ASSERT_TRUE(with_shapes.shapes.has_value());
  EXPECT_THAT(
      *with_shapes.shapes,
      ElementsAre(ShapeEntry{"MLP_fc1.weight", "MLP_fc1.weight", {32, 20}},
                  ShapeEntry{"CrossEntropyLoss_output_0", "CrossEntropyLoss_output_0", {}}));
  EXPECT_THAT(read_text_file(dir.path() / index_file_path(0, "worker_0")),
              HasSubstr(R"("shape_payload": [{"tensorname": "MLP_fc1.weight", )"
                        R"("originalname": "MLP_fc1.weight", "shape": [32, 20]}, )"));
  // As smdebug does, a step without shapes still has the key.
  EXPECT_THAT(read_text_file(dir.path() / index_file_path(1, "worker_0")),
              ::testing::EndsWith(R"(], "shape_payload": []})"));
}

TEST(TrialWriter, ShapePayloadCanBeLeftOutWhenNoShapeIsSaved) {
  TempDir dir;
  TrialWriter::Options options;
  options.root = dir.path();
  options.always_write_shape_payload = false;
  TrialWriter writer(options);
  writer.begin_step(0, Mode::Eval, 0);
  writer.add_tensor("x", scalar(1));
  writer.end_step();
  writer.begin_step(1, Mode::Eval, 1);
  writer.add_tensor("x", floats({2}, {1, 2}));
  writer.add_shape("x", {2});
  writer.end_step();
  EXPECT_FALSE(read_index(dir.path(), 0, "worker_0").shapes.has_value());
  EXPECT_THAT(read_text_file(dir.path() / index_file_path(0, "worker_0")),
              ::testing::Not(HasSubstr("shape_payload")));
  const auto with_shape = read_index(dir.path(), 1, "worker_0");
  ASSERT_TRUE(with_shape.shapes.has_value());
  EXPECT_THAT(*with_shape.shapes, ElementsAre(ShapeEntry{"x", "x", {2}}));
}

TEST(TrialWriter, StepWithoutTensorsWritesOnlyItsIndex) {
  TempDir dir;
  auto writer = make_writer(dir.path());
  writer.begin_step(3, Mode::Predict, 0);
  writer.add_shape("only_shape", {4});
  writer.end_step();

  EXPECT_THAT(files_under(dir.path()), ElementsAre("index/000000000/000000000003_worker_0.json"));
  const auto index = read_index(dir.path(), 3, "worker_0");
  EXPECT_EQ(index.mode, Mode::Predict);
  EXPECT_FALSE(index.event_file_name.has_value());
  EXPECT_TRUE(index.tensors.empty());
  EXPECT_EQ(writer.event_bytes_written(), 0u);
}

TEST(TrialWriter, ModesAndModeStepsReachIndexAndRecords) {
  TempDir dir;
  auto writer = make_writer(dir.path());
  std::int64_t global = 0;
  for (const Mode mode : kAllModes) {
    writer.begin_step(global, mode, 10 + global);
    writer.add_tensor("t", scalar(static_cast<float>(global)));
    writer.end_step();
    ++global;
  }
  for (std::int64_t step = 0; step < 4; ++step) {
    SCOPED_TRACE(step);
    const auto index = read_index(dir.path(), step, "worker_0");
    const Mode mode = kAllModes[static_cast<std::size_t>(step)];
    EXPECT_EQ(index.mode, mode);
    EXPECT_EQ(index.mode_step, 10 + step);
    const auto record =
        record_at(file_bytes(dir.path() / *index.event_file_name), index.tensors.at(0));
    EXPECT_EQ(record.mode, mode);
    EXPECT_EQ(record.mode_step, 10 + step);
    EXPECT_EQ(record.step, step);
  }
}

TEST(TrialWriter, CollectionsFileRoundTrips) {
  TempDir dir;
  auto writer = make_writer(dir.path(), "worker_1");
  CollectionsFile collections;
  collections.num_workers = 2;
  Collection weights;
  weights.name = "weights";
  weights.include_regex = {"^(?!gradient).*weight"};
  weights.tensor_names = {"MLP_fc1.weight", "MLP_fc2.weight"};
  weights.reduction_config.save_raw_tensor = false;
  weights.reduction_config.reductions = {{Reduction::Min, false}, {Reduction::L1, true}};
  weights.save_config[Mode::Train] = SaveConfigMode{5, {}, 0, std::nullopt};
  weights.save_config[Mode::Eval] = std::nullopt;
  collections.collections["weights"] = weights;
  writer.write_collections(collections);

  const auto path = dir.path() / "collections/000000000/worker_1_collections.json";
  const auto text = read_text_file(path);
  EXPECT_EQ(text, serialize_collections_file(collections));
  EXPECT_EQ(parse_collections_file(text, path.string()), collections);
}

TEST(TrialWriter, LeavesNoTemporaryFilesBehind) {
  TempDir dir;
  auto writer = make_writer(dir.path());
  for (std::int64_t step = 0; step < 3; ++step) {
    writer.begin_step(step, Mode::Train, step);
    writer.add_tensor("t", scalar(1));
    writer.end_step();
  }
  writer.write_collections(CollectionsFile{});
  writer.write_end_marker();
  for (const auto& file : files_under(dir.path())) {
    EXPECT_FALSE(file.ends_with(".tmp")) << file;
  }
  EXPECT_EQ(files_under(dir.path()).size(), 3u * 2 + 2);
}

TEST(TrialWriter, WritingInPlaceGivesTheSameFiles) {
  TempDir atomic_dir;
  TempDir in_place_dir;
  TrialWriter::Options options;
  options.root = in_place_dir.path();
  options.atomic_rename = false;
  TrialWriter in_place(options);
  auto atomic = make_writer(atomic_dir.path());
  for (auto* writer : {&atomic, &in_place}) {
    writer->begin_step(2, Mode::Train, 2);
    writer->add_tensor("t", floats({3}, {1, 2, 3}));
    writer->end_step();
  }
  EXPECT_EQ(files_under(atomic_dir.path()), files_under(in_place_dir.path()));
  EXPECT_EQ(read_text_file(atomic_dir.path() / index_file_path(2, "worker_0")),
            read_text_file(in_place_dir.path() / index_file_path(2, "worker_0")));
}

TEST(TrialWriter, SeveralWorkersShareTheTrial) {
  TempDir dir;
  auto worker_0 = make_writer(dir.path(), "worker_0");
  auto worker_1 = make_writer(dir.path(), "worker_1");
  for (auto* writer : {&worker_0, &worker_1}) {
    writer->begin_step(5, Mode::Train, 5);
    writer->add_tensor("loss", scalar(writer == &worker_0 ? 0.0f : 1.0f));
    writer->end_step();
    writer->write_collections(CollectionsFile{{}, 2});
  }
  EXPECT_THAT(files_under(dir.path()),
              ElementsAre("collections/000000000/worker_0_collections.json",
                          "collections/000000000/worker_1_collections.json",
                          "events/000000000005/000000000005_worker_0.tfevents",
                          "events/000000000005/000000000005_worker_1.tfevents",
                          "index/000000000/000000000005_worker_0.json",
                          "index/000000000/000000000005_worker_1.json"));
  const auto index = read_index(dir.path(), 5, "worker_1");
  EXPECT_EQ(index.event_file_name, "events/000000000005/000000000005_worker_1.tfevents");
  const auto record =
      record_at(file_bytes(dir.path() / *index.event_file_name), index.tensors.at(0));
  EXPECT_EQ(record.value.as_double(0), 1.0);
}

TEST(TrialWriter, FooterIsSmdebugsPlaceholderOrThePayloadCrc) {
  for (const FooterStyle style : {FooterStyle::SmdebugPlaceholder, FooterStyle::PayloadCrc}) {
    TempDir dir;
    TrialWriter::Options options;
    options.root = dir.path();
    options.footer = style;
    TrialWriter writer(options);
    writer.begin_step(0, Mode::Train, 0);
    writer.add_tensor("t", floats({2}, {1, 2}));
    writer.end_step();

    const auto index = read_index(dir.path(), 0, "worker_0");
    const auto file = read_text_file(dir.path() / *index.event_file_name);
    ASSERT_GE(file.size(), 16u);
    std::uint32_t footer = 0;
    std::memcpy(&footer, file.data() + file.size() - 4, 4);
    const auto payload = std::as_bytes(std::span(file.data() + 12, file.size() - 16));
    EXPECT_EQ(footer, style == FooterStyle::PayloadCrc ? mask_crc(crc32c(payload))
                                                       : kSmdebugPlaceholderFooter);
  }
}

TEST(TrialWriter, CompressedEventFilesInflateToTheIndexedStream) {
  for (const Compression compression : {Compression::Gzip, Compression::Zlib}) {
    TempDir dir;
    TrialWriter::Options options;
    options.root = dir.path();
    options.compression = compression;
    TrialWriter writer(options);
    writer.begin_step(0, Mode::Train, 0);
    writer.add_tensor("a", floats({64}, std::vector<float>(64, 1.0f)));
    writer.add_tensor("b", scalar(2));
    writer.end_step();

    const auto index = read_index(dir.path(), 0, "worker_0");
    const auto path = dir.path() / *index.event_file_name;
    const auto compressed = file_bytes(path);
    EXPECT_EQ(writer.event_bytes_written(), compressed.size());
    EXPECT_EQ(detect_compression(compressed.span()), compression);
    const auto stream = decompress_file(compressed, compression, path.string());
    ASSERT_EQ(index.tensors.size(), 2u);
    EXPECT_EQ(record_at(stream, index.tensors[1]).value.as_double(0), 2.0);
    EXPECT_EQ(index.tensors[1].start + index.tensors[1].length, stream.size());
  }
}

TEST(TrialWriter, MisuseIsALogicError) {
  TempDir dir;
  auto writer = make_writer(dir.path());
  EXPECT_THROW(writer.add_tensor("t", scalar(1)), std::logic_error);
  EXPECT_THROW(writer.add_reduction("t", {Reduction::Min, false}, scalar(1)), std::logic_error);
  EXPECT_THROW(writer.add_shape("t", {1}), std::logic_error);
  EXPECT_THROW(writer.end_step(), std::logic_error);
  writer.begin_step(0, Mode::Train, 0);
  EXPECT_THROW(writer.begin_step(1, Mode::Train, 1), std::logic_error);
  EXPECT_THROW(writer.add_reduction("t", {Reduction::Min, false}, floats({2}, {1, 2})),
               std::invalid_argument);
  writer.end_step();
  EXPECT_THROW(writer.begin_step(-1, Mode::Train, 0), std::invalid_argument);
  EXPECT_THROW(make_writer(dir.path(), ""), std::invalid_argument);
  EXPECT_THAT(files_under(dir.path()), ElementsAre("index/000000000/000000000000_worker_0.json"));
}

TEST(TrialWriter, UnwritableRootIsAStorageErrorNamingThePath) {
  TempDir dir;
  // A regular file where the trial folder should be: nothing can be created below it, even
  // for root (who ignores permission bits).
  const auto root = dir.path() / "not_a_folder";
  testing::write_text_file(root, "x");
  auto writer = make_writer(root);
  writer.begin_step(0, Mode::Train, 0);
  writer.add_tensor("t", scalar(1));
  try {
    writer.end_step();
    ADD_FAILURE() << "no StorageError";
  } catch (const StorageError& error) {
    EXPECT_THAT(error.what(), HasSubstr((root / "events/000000000000").string()));
  }
  // The failed step is closed: the writer can go on (and fail again, clearly).
  EXPECT_NO_THROW(writer.begin_step(1, Mode::Train, 1));
  EXPECT_THROW(writer.end_step(), StorageError);
  EXPECT_THROW(writer.write_end_marker(), StorageError);
  EXPECT_THROW(writer.write_collections(CollectionsFile{}), StorageError);
}

TEST(TrialWriter, TemporaryFileInTheWayIsAStorageError) {
  TempDir dir;
  // A folder squatting on the ".tmp" name: the write fails and names that path.
  fs::create_directories(dir.path() / "training_job_end.ts.tmp");
  auto writer = make_writer(dir.path());
  try {
    writer.write_end_marker();
    ADD_FAILURE() << "no StorageError";
  } catch (const StorageError& error) {
    EXPECT_THAT(error.what(), HasSubstr("training_job_end.ts.tmp"));
  }
  EXPECT_FALSE(fs::exists(dir.path() / "training_job_end.ts"));
}

// --- against real smdebug output ------------------------------------------------------------

// Rewrites every step of a real trial's worker through TrialWriter, from the decoded records
// and the saved shapes, and expects the same index files, byte for byte, and event files that
// differ only in their wall times.
void rewrite_and_compare(const fs::path& trial, const std::string& worker) {
  TempDir dir;
  auto writer = make_writer(dir.path(), worker);
  std::size_t steps = 0;
  for (const auto& entry : fs::recursive_directory_iterator(trial / "index")) {
    const auto name = parse_step_file_name(entry.path().string());
    if (!name || name->worker != worker) continue;
    ++steps;
    const auto original_index_text = read_text_file(entry.path());
    const auto original = parse_index_file(original_index_text, entry.path().string());
    writer.begin_step(name->step, original.mode, original.mode_step);
    if (original.event_file_name) {
      const auto events = file_bytes(trial / *original.event_file_name);
      for (const auto& location : original.tensors) {
        const auto record = record_at(events, location);
        if (const auto reduction = parse_reduction_tensor_name(record.name)) {
          writer.add_reduction(reduction->first, reduction->second, record.value);
        } else {
          writer.add_tensor(record.name, record.value);
        }
      }
    }
    if (original.shapes) {
      for (const auto& shape : *original.shapes) writer.add_shape(shape.tensor_name, shape.shape);
    }
    writer.end_step();

    const auto relative = fs::relative(entry.path(), trial);
    ASSERT_EQ(read_text_file(dir.path() / relative), original_index_text) << relative;
    if (!original.event_file_name) continue;
    auto ours = read_text_file(dir.path() / *original.event_file_name);
    const auto theirs = read_text_file(trial / *original.event_file_name);
    ASSERT_EQ(ours.size(), theirs.size()) << *original.event_file_name;
    for (const auto& location : original.tensors) {
      // Event.wall_time: tag 0x09 then 8 bytes, first in each payload.
      const auto wall_time = location.start + kRecordHeaderSize;
      ASSERT_EQ(ours[wall_time], '\x09');
      std::memcpy(ours.data() + wall_time + 1, theirs.data() + wall_time + 1, 8);
    }
    EXPECT_EQ(ours, theirs) << *original.event_file_name;
  }
  EXPECT_GT(steps, 0u);
}

class RealTrials : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto samples = testing::samples_dir();
    if (!samples) GTEST_SKIP() << "smdebug samples not found (set RULESTREAM_SAMPLES)";
    trials_ = *samples / "trials";
  }
  fs::path trials_;
};

TEST_F(RealTrials, RewritingEveryTrialReproducesItsFiles) {
  std::size_t workers = 0;
  for (const auto& trial : fs::directory_iterator(trials_)) {
    for (const auto& collections : fs::directory_iterator(trial.path() / "collections/000000000")) {
      const auto worker = parse_collections_worker(collections.path().string());
      ASSERT_TRUE(worker.has_value()) << collections.path();
      SCOPED_TRACE(trial.path().filename().string() + " " + *worker);
      rewrite_and_compare(trial.path(), *worker);
      ++workers;
    }
  }
  EXPECT_GE(workers, 7u);  // six trials, one of them with two workers
}

TEST_F(RealTrials, RewrittenCollectionsFileMatches) {
  const auto path = trials_ / "pt-mlp-reductions/collections/000000000/worker_0_collections.json";
  const auto original = parse_collections_file(read_text_file(path), path.string());
  TempDir dir;
  auto writer = make_writer(dir.path());
  writer.write_collections(original);
  // Same content; not the same bytes: smdebug keeps the hook's collection order, while
  // CollectionsFile holds a sorted map.
  const auto written = dir.path() / collections_file_path("worker_0");
  EXPECT_EQ(parse_collections_file(read_text_file(written), written.string()), original);
}

}  // namespace
}  // namespace rulestream
