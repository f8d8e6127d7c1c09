// Trial::values_at (and TrialStore::read_records under it): the values of many tensors at one
// step, each what Tensor::value gives, read with one storage read per event file; and
// Trial::encoded_values_at, the same records read but not decoded.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/model/exceptions.hpp"
#include "sources/local/local_storage.hpp"
#include "stages/format/trial_writer.hpp"
#include "tests/support/test_support.hpp"
#include "trial/api/tensor.hpp"
#include "trial/api/trial.hpp"

namespace rulestream {
namespace {

using rulestream::testing::TempDir;

TensorValue floats(std::vector<float> values, Shape shape) {
  return TensorValue::from_values(DType::Float32, std::move(shape), values);
}

TrialOptions quick_options() {
  TrialOptions options;
  options.end_of_job_grace = std::chrono::milliseconds(0);
  return options;
}

// Local storage that counts the reads a trial makes of event files, by kind. Without
// `maps_records`, it reads record ranges as storage that cannot map does (S3: Storage's own
// read_records_range, a read_range of the whole range).
class CountingStorage : public Storage {
 public:
  CountingStorage(const std::filesystem::path& root, std::uint64_t map_threshold,
                  bool maps_records = true)
      : inner_(root, map_threshold), maps_records_(maps_records) {}

  std::string describe() const override { return inner_.describe(); }
  bool root_exists() const override { return inner_.root_exists(); }
  std::vector<StoredObject> list(std::string_view prefix,
                                 std::string_view start_after) const override {
    return inner_.list(prefix, start_after);
  }
  bool exists(std::string_view path) const override { return inner_.exists(path); }
  SharedBytes read(std::string_view path) const override {
    if (is_event_file(path)) ++whole_reads;
    return inner_.read(path);
  }
  SharedBytes read_range(std::string_view path, std::uint64_t offset,
                         std::uint64_t length) const override {
    if (is_event_file(path)) ++range_reads;
    return inner_.read_range(path, offset, length);
  }
  SharedBytes read_records_range(std::string_view path, std::uint64_t offset,
                                 std::uint64_t length) const override {
    if (is_event_file(path)) ++records_range_reads;
    if (!maps_records_) return Storage::read_records_range(path, offset, length);
    return inner_.read_records_range(path, offset, length);
  }

  mutable std::atomic<int> range_reads{0};
  mutable std::atomic<int> records_range_reads{0};
  mutable std::atomic<int> whole_reads{0};

 private:
  static bool is_event_file(std::string_view path) { return path.ends_with(".tfevents"); }
  LocalStorage inner_;
  bool maps_records_;
};

// Two workers, three steps (two TRAIN, one EVAL), 40 tensors per step whose values encode the
// tensor, the step and the worker; "z_only_reduced" is saved as reductions alone, and "z_late"
// only from step 1.
struct ManyTensorJob {
  static constexpr int kTensors = 40;

  static std::string name(int i) { return "layer" + std::to_string(10 + i) + ".weight"; }

  explicit ManyTensorJob(Compression compression = Compression::None) {
    for (const float worker : {0.0f, 0.5f}) {
      TrialWriter writer({.root = dir.path(),
                          .worker = worker == 0.0f ? "worker_0" : "worker_1",
                          .compression = compression});
      for (std::int64_t step = 0; step < 3; ++step) {
        writer.begin_step(step, step < 2 ? Mode::Train : Mode::Eval, step < 2 ? step : 0);
        for (int i = 0; i < kTensors; ++i) {
          const auto base = static_cast<float>((i + 1) * 100 + step * 10) + worker;
          writer.add_tensor(name(i), floats({base, base + 1, base + 2}, {3}));
        }
        writer.add_reduction("z_only_reduced", {Reduction::Max, false},
                             floats({static_cast<float>(step)}, {}));
        if (step >= 1) writer.add_tensor("z_late", floats({static_cast<float>(step)}, {}));
        writer.end_step();
      }
      CollectionsFile collections;
      collections.num_workers = 2;
      writer.write_collections(collections);
    }
    TrialWriter({.root = dir.path()}).write_end_marker();
  }

  TempDir dir;
};

std::vector<std::optional<double>> first_elements(
    const std::vector<std::optional<TensorValue>>& values) {
  std::vector<std::optional<double>> out;
  for (const auto& value : values) {
    out.push_back(value ? std::optional(value->as_double(0)) : std::nullopt);
  }
  return out;
}

TEST(TrialValues, EachValueIsWhatTensorValueReads) {
  ManyTensorJob job;
  const Trial trial = Trial::open(job.dir.path().string(), quick_options());
  const std::vector<TensorRef> refs = trial.tensor_refs();
  ASSERT_EQ(refs.size(), static_cast<std::size_t>(ManyTensorJob::kTensors + 2));
  for (std::int64_t step = 0; step < 3; ++step) {
    const auto values = trial.values_at(refs, step);
    ASSERT_EQ(values.size(), refs.size());
    for (std::size_t i = 0; i < refs.size(); ++i) {
      std::optional<TensorValue> expected;
      try {
        expected = trial.tensor(refs[i]).value(step);
      } catch (const TensorUnavailableForStep&) {
      }
      ASSERT_EQ(values[i].has_value(), expected.has_value()) << refs[i].name() << " " << step;
      if (expected) {
        EXPECT_EQ(values[i]->shape(), expected->shape());
        EXPECT_EQ(values[i]->bytes().as_string_view(), expected->bytes().as_string_view())
            << refs[i].name() << " at step " << step;
      }
    }
  }
  // worker_0's value (the lexicographically first worker), by name and by position.
  const auto at_1 = trial.values_at(refs, 1);
  EXPECT_EQ(at_1[0]->as_double(0), 110.0);  // layer10.weight
  const auto position = [&](const std::string& name) {
    return static_cast<std::size_t>(
        std::find_if(refs.begin(), refs.end(),
                     [&](const TensorRef& ref) { return ref.name() == name; }) -
        refs.begin());
  };
  EXPECT_FALSE(at_1[position("z_only_reduced")].has_value()) << "only reductions were saved";
  EXPECT_FALSE(trial.values_at(refs, 0)[position("z_late")].has_value()) << "not saved yet";
  EXPECT_EQ(at_1[position("z_late")]->as_double(0), 1.0);

  // Steps of a mode: EVAL step 0 is global step 2.
  EXPECT_EQ(first_elements(trial.values_at(std::span(refs).first(2), 0, Mode::Eval)),
            (std::vector<std::optional<double>>{120.0, 220.0}));
  // A step nobody saved, and a mode that has none: nothing, not an exception.
  EXPECT_EQ(first_elements(trial.values_at(std::span(refs).first(1), 7)),
            (std::vector<std::optional<double>>{std::nullopt}));
  EXPECT_EQ(first_elements(trial.values_at(std::span(refs).first(1), 0, Mode::Predict)),
            (std::vector<std::optional<double>>{std::nullopt}));
  EXPECT_TRUE(trial.values_at({}, 0).empty());
}

// encoded_values_at reads the records values_at reads, and each decodes to the same value.
TEST(TrialValues, EachEncodedValueDecodesToWhatValuesAtReads) {
  ManyTensorJob job;
  const Trial trial = Trial::open(job.dir.path().string(), quick_options());
  const std::vector<TensorRef> refs = trial.tensor_refs();
  for (std::int64_t step = 0; step < 3; ++step) {
    const auto values = trial.values_at(refs, step);
    const auto encoded = trial.encoded_values_at(refs, step);
    ASSERT_EQ(encoded.size(), values.size());
    for (std::size_t i = 0; i < refs.size(); ++i) {
      ASSERT_EQ(encoded[i].has_value(), values[i].has_value()) << refs[i].name() << " " << step;
      if (!encoded[i]) continue;
      EXPECT_FALSE(encoded[i]->checked()) << "read from files, not decoded as they landed";
      EXPECT_FALSE(encoded[i]->encoded().empty());
      EXPECT_EQ(encoded[i]->dtype(), DType::Float32);
      const TensorValue decoded = encoded[i]->decode();
      EXPECT_EQ(decoded.shape(), values[i]->shape());
      EXPECT_EQ(decoded.bytes().as_string_view(), values[i]->bytes().as_string_view())
          << refs[i].name() << " at step " << step;
    }
  }
  // Steps of a mode, a budget, and a step nobody saved, as values_at.
  EXPECT_EQ(
      trial.encoded_values_at(std::span(refs).first(2), 0, Mode::Eval)[1]->decode().as_double(0),
      220.0);
  EXPECT_EQ(trial.encoded_values_at(refs, 1, Mode::Global, 1).size(), 1u);
  EXPECT_FALSE(trial.encoded_values_at(std::span(refs).first(1), 7)[0].has_value());
}

// An encoding is the TensorProto alone: records of the same value compare equal whatever their
// step, worker or trial, and records of different values do not.
TEST(TrialValues, EqualValuesHaveEqualEncodings) {
  ManyTensorJob job;
  TempDir rerun_dir;
  {
    // One tensor, saved at step 5 with step 1's value for worker_0 of the job.
    TrialWriter writer({.root = rerun_dir.path(), .worker = "worker_0"});
    writer.begin_step(5, Mode::Train, 5);
    writer.add_tensor(ManyTensorJob::name(0), floats({110, 111, 112}, {3}));
    writer.end_step();
    writer.write_collections(CollectionsFile{});
  }
  const Trial trial = Trial::open(job.dir.path().string(), quick_options());
  const Trial rerun = Trial::open(rerun_dir.path().string(), quick_options());
  const std::vector<TensorRef> refs = trial.tensor_refs({.step = 1});
  const auto bytes_of = [](const std::optional<EncodedValue>& value) {
    const auto span = value.value().encoded();
    return std::string(reinterpret_cast<const char*>(span.data()), span.size());
  };
  const auto theirs = rerun.encoded_values_at(std::span(refs).first(1), 5);
  EXPECT_EQ(bytes_of(trial.encoded_values_at(std::span(refs).first(1), 1)[0]), bytes_of(theirs[0]));
  EXPECT_NE(bytes_of(trial.encoded_values_at(std::span(refs).first(1), 0)[0]), bytes_of(theirs[0]))
      << "step 0's value differs";
  EXPECT_NE(bytes_of(trial.encoded_values_at(std::span(refs).subspan(1, 1), 1)[0]),
            bytes_of(theirs[0]))
      << "another tensor's value differs";
}

// A compressed event file's record offsets count inflated bytes: reading a record inflates the
// whole file. It is inflated once for all the records read from it, not once per record, and
// the values are those of the same job uncompressed.
TEST(TrialValues, ACompressedFileIsInflatedOnceForTheRecordsReadFromIt) {
  ManyTensorJob plain;
  for (const Compression compression : {Compression::Gzip, Compression::Zlib}) {
    ManyTensorJob job(compression);
    auto storage = std::make_shared<CountingStorage>(job.dir.path(), LocalStorage::kNeverMap);
    const Trial trial = Trial::open(storage, quick_options());
    const Trial expected = Trial::open(plain.dir.path().string(), quick_options());
    const std::vector<TensorRef> refs = trial.tensor_refs({.step = 1});
    ASSERT_GT(refs.size(), 40u);

    const int before = storage->whole_reads.load();
    const auto values = trial.values_at(refs, 1);
    EXPECT_EQ(storage->whole_reads.load() - before, 1) << "worker_0's file of step 1, once";
    const auto plain_values = expected.values_at(expected.tensor_refs({.step = 1}), 1);
    ASSERT_EQ(values.size(), plain_values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      ASSERT_EQ(values[i].has_value(), plain_values[i].has_value()) << refs[i].name();
      if (!values[i]) continue;
      EXPECT_EQ(values[i]->bytes().as_string_view(), plain_values[i]->bytes().as_string_view())
          << refs[i].name();
    }
    // Value by value, as a rule reading one tensor at a time does: still one inflation per
    // file, for both workers' files of step 0.
    const int before_each = storage->whole_reads.load();
    for (const TensorRef& ref : refs) {
      if (ref.name() == "z_only_reduced" || ref.name() == "z_late") continue;
      EXPECT_EQ(trial.tensor(ref).value(0).as_double(0),
                expected.tensor(ref.name()).value(0).as_double(0));
      EXPECT_EQ(trial.tensor(ref).value(0, Mode::Global, "worker_1").as_double(0),
                expected.tensor(ref.name()).value(0, Mode::Global, "worker_1").as_double(0));
    }
    EXPECT_EQ(storage->whole_reads.load() - before_each, 2);
  }
}

TEST(TrialValues, RefsFromAnotherTrialAreTakenByName) {
  ManyTensorJob job;
  ManyTensorJob other_job;
  const auto storage =
      std::make_shared<CountingStorage>(job.dir.path(), LocalStorage::kDefaultMapThreshold);
  const Trial trial = Trial::open(storage, quick_options());
  const Trial other = Trial::open(other_job.dir.path().string(), quick_options());
  const std::vector<TensorRef> theirs = other.tensor_refs({.step = 1});
  storage->records_range_reads = 0;
  const auto values = trial.values_at(theirs, 1);
  ASSERT_EQ(values.size(), theirs.size());
  EXPECT_EQ(values[0]->as_double(0), 110.0);
  EXPECT_EQ(storage->records_range_reads.load(), 1) << "read from this trial's files";
}

TEST(TrialValues, OneReadPerEventFileNotOnePerValue) {
  ManyTensorJob job;
  for (const std::uint64_t threshold :
       {LocalStorage::kDefaultMapThreshold, LocalStorage::kNeverMap}) {
    const auto storage = std::make_shared<CountingStorage>(job.dir.path(), threshold);
    const Trial trial = Trial::open(storage, quick_options());
    const std::vector<TensorRef> refs = trial.tensor_refs({.step = 1});
    storage->range_reads = 0;
    storage->records_range_reads = 0;
    const auto values = trial.values_at(refs, 1);
    EXPECT_EQ(values[0]->as_double(0), 110.0);
    // worker_0's file holds all 41 values read: one read of it.
    EXPECT_EQ(storage->records_range_reads.load(), 1) << "threshold " << threshold;
    EXPECT_EQ(storage->range_reads.load(), 0) << "threshold " << threshold;
    // Cut from a buffer storage recycles, a value has bytes of its own: it may be kept while
    // later reads go into that buffer.
    EXPECT_FALSE(values[0]->bytes().recycled()) << "threshold " << threshold;
    const auto step_0 = trial.values_at(refs, 0);
    EXPECT_EQ(step_0[0]->as_double(0), 100.0);
    EXPECT_EQ(values[0]->as_double(0), 110.0) << "threshold " << threshold;

    // One value alone is read as Tensor::value reads it.
    storage->records_range_reads = 0;
    const auto one = trial.values_at(std::span(refs).first(1), 0);
    EXPECT_EQ(one[0]->as_double(0), 100.0);
    EXPECT_EQ(storage->records_range_reads.load(), 0);
  }
}

// Where storage cannot map (S3), the values of one file cost one range read (one request), not
// one per value: 4,195 GETs against 35 for SimilarAcrossRuns over a 10-step job on S3.
TEST(TrialValues, StorageThatCannotMapReadsEachFileOnce) {
  ManyTensorJob job;
  const auto storage =
      std::make_shared<CountingStorage>(job.dir.path(), LocalStorage::kNeverMap, false);
  const Trial trial = Trial::open(storage, quick_options());
  const std::vector<TensorRef> refs = trial.tensor_refs({.step = 1});
  storage->range_reads = 0;
  const auto values = trial.values_at(refs, 1);
  EXPECT_EQ(values[0]->as_double(0), 110.0);
  EXPECT_EQ(values[refs.size() - 2]->as_double(0), 1.0);  // z_late, after z_only_reduced's record
  EXPECT_EQ(storage->range_reads.load(), 1);
  EXPECT_FALSE(values[0]->bytes().in_kept_mapping());
}

TEST(TrialValues, ABudgetReadsAPrefixOfAtLeastOneTensor) {
  ManyTensorJob job;
  const Trial trial = Trial::open(job.dir.path().string(), quick_options());
  const std::vector<TensorRef> refs = trial.tensor_refs({.step = 1});
  const auto all = trial.values_at(refs, 1);
  // A record of three floats is well over 12 bytes and under 200.
  const auto first = trial.values_at(refs, 1, Mode::Global, 1);
  ASSERT_EQ(first.size(), 1u) << "at least one tensor, however small the budget";
  EXPECT_EQ(first[0]->as_double(0), 110.0);
  const auto some = trial.values_at(refs, 1, Mode::Global, 1'000);
  ASSERT_GT(some.size(), 1u);
  ASSERT_LT(some.size(), refs.size());
  for (std::size_t i = 0; i < some.size(); ++i) {
    EXPECT_EQ(some[i]->as_double(0), all[i]->as_double(0));
  }
  // The rest, read from where the prefix ended, completes the list.
  std::size_t done = 0;
  while (done < refs.size()) {
    const auto part = trial.values_at(std::span(refs).subspan(done), 1, Mode::Global, 1'000);
    ASSERT_FALSE(part.empty());
    for (std::size_t i = 0; i < part.size(); ++i) {
      EXPECT_EQ(part[i].has_value(), all[done + i].has_value());
    }
    done += part.size();
  }
  EXPECT_EQ(done, refs.size());
}

TEST(TrialValues, APinnedViewReadsOnlyWhatItSaw) {
  TempDir dir;
  TrialWriter writer({.root = dir.path()});
  writer.begin_step(0, Mode::Train, 0);
  writer.add_tensor("a", floats({1.0f}, {}));
  writer.end_step();
  writer.write_collections({});
  const Trial trial = Trial::open(dir.path().string(), quick_options());
  const Trial before = trial.pinned();
  writer.begin_step(1, Mode::Train, 1);
  writer.add_tensor("a", floats({2.0f}, {}));
  writer.end_step();
  const std::vector<TensorRef> refs = before.tensor_refs();
  EXPECT_EQ(first_elements(before.values_at(refs, 1)),
            (std::vector<std::optional<double>>{std::nullopt}));
  // An auto-refreshing handle picks the new step up first, as value() would.
  EXPECT_EQ(first_elements(trial.values_at(refs, 1)), (std::vector<std::optional<double>>{2.0}));
}

TEST(TrialValues, ACorruptRecordIsAnErrorNamingItsFileAndOffset) {
  ManyTensorJob job;
  const auto event_file = job.dir.path() / "events/000000000001/000000000001_worker_0.tfevents";
  {
    std::fstream file(event_file, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(2);
    file.put('\x7f');  // inside the first record's length
  }
  const Trial trial = Trial::open(job.dir.path().string(), quick_options());
  const std::vector<TensorRef> refs = trial.tensor_refs({.step = 1});
  const auto expect_error_naming_the_record = [](const auto& read) {
    try {
      read();
      ADD_FAILURE() << "a corrupt record must not be read";
    } catch (const FormatError& error) {
      EXPECT_NE(std::string(error.what()).find("000000000001_worker_0.tfevents at offset 0"),
                std::string::npos)
          << error.what();
    }
  };
  expect_error_naming_the_record([&] { trial.values_at(refs, 1); });
  // Read but not decoded, the record still cannot be framed: the same error.
  expect_error_naming_the_record([&] { trial.encoded_values_at(refs, 1); });
  // The other records of the file, and the other steps, still read.
  EXPECT_EQ(trial.values_at(std::span(refs).subspan(1), 1)[0]->as_double(0), 210.0);
  EXPECT_EQ(trial.encoded_values_at(std::span(refs).subspan(1), 1)[0]->decode().as_double(0),
            210.0);
  EXPECT_EQ(trial.values_at(refs, 0)[0]->as_double(0), 100.0);
}

}  // namespace
}  // namespace rulestream
