#include "stages/tensorboard/run_reader.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "stages/format/crc32c.hpp"
#include "stages/format/proto/event.pb.h"
#include "stages/format/tfrecord_writer.hpp"

namespace rulestream {
namespace {

using ::testing::HasSubstr;
namespace tfproto = rulestream::tfproto;

const std::string kFile = "train/events.out.tfevents.1.host";

struct Seen {
  std::string tag;
  TagKind tag_kind;
  std::int64_t step;
  SummaryReading reading;
};

class Recorder final : public SeriesValueSink {
 public:
  void on_value(const SeriesTag& tag, std::int64_t step, double,
                const SummaryReading& reading) override {
    seen.push_back({tag.name, tag.kind, step, reading});
  }
  std::vector<Seen> seen;
};

std::string scalar_event(const std::string& tag, std::int64_t step, float value) {
  tfproto::Event event;
  event.set_step(step);
  auto* summary_value = event.mutable_summary()->add_value();
  summary_value->set_tag(tag);
  summary_value->set_simple_value(value);
  return event.SerializeAsString();
}

std::string framed(const std::vector<std::string>& payloads) {
  std::string out;
  for (const auto& payload : payloads) append_record(out, payload, FooterStyle::PayloadCrc);
  return out;
}

SharedBytes bytes_of(const std::string& text) {
  return SharedBytes::from_string(text);
}

TEST(RunReaderTest, AFileReadAsItGrowsYieldsEveryValueOnce) {
  const std::string file = framed({scalar_event("loss", 0, 3.0F), scalar_event("loss", 1, 2.0F),
                                   scalar_event("loss", 2, 1.0F)});
  const std::size_t cut = file.size() - 7;  // inside the last record
  RunReader reader("train");
  Recorder recorder;
  reader.read(kFile, bytes_of(file.substr(0, cut)), 0, recorder);
  ASSERT_EQ(recorder.seen.size(), 2U);
  const std::uint64_t resume = reader.resume_offset(kFile);
  EXPECT_LT(resume, cut);
  EXPECT_TRUE(reader.problems().empty());  // a record cut short is not an error
  reader.read(kFile, bytes_of(file.substr(resume)), resume, recorder);
  ASSERT_EQ(recorder.seen.size(), 3U);
  EXPECT_EQ(recorder.seen[2].step, 2);
  EXPECT_EQ(recorder.seen[2].reading.scalar, 1.0);
  EXPECT_EQ(reader.resume_offset(kFile), file.size());
  EXPECT_TRUE(reader.problems().empty());
}

TEST(RunReaderTest, TextWrittenIntoAFileEndsThatFileOnlyAndIsReported) {
  std::string broken = framed({scalar_event("loss", 0, 1.0F)});
  const std::size_t first_record_end = broken.size();
  broken += "WARNING:werkzeug: * Debugger is active!\n";
  broken += framed({scalar_event("loss", 1, 2.0F)});
  RunReader reader("train");
  Recorder recorder;
  reader.read(kFile, bytes_of(broken), 0, recorder);
  reader.read("train/events.out.tfevents.2.host", bytes_of(framed({scalar_event("loss", 5, 9.0F)})),
              0, recorder);
  ASSERT_EQ(recorder.seen.size(), 2U);  // the first record, and the other file
  EXPECT_EQ(recorder.seen[1].step, 5);
  EXPECT_TRUE(reader.file_dead(kFile));
  ASSERT_EQ(reader.problems().size(), 1U);
  EXPECT_EQ(reader.problems()[0].file, kFile);
  EXPECT_EQ(reader.problems()[0].offset, first_record_end);
  EXPECT_THAT(reader.problems()[0].message, HasSubstr(kFile));
  EXPECT_THAT(reader.problems()[0].message,
              HasSubstr("offset " + std::to_string(first_record_end)));
  reader.read(kFile, bytes_of(broken), 0, recorder);  // a dead file is not read again
  EXPECT_EQ(recorder.seen.size(), 2U);
  EXPECT_EQ(reader.problems().size(), 1U);
}

TEST(RunReaderTest, ADataChecksumThatFailsEndsTheFile) {
  std::string file = framed({scalar_event("loss", 0, 1.0F), scalar_event("loss", 1, 2.0F)});
  file[file.size() - 1] ^= 0x01;  // the last record's footer
  RunReader reader("train");
  Recorder recorder;
  reader.read(kFile, bytes_of(file), 0, recorder);
  EXPECT_EQ(recorder.seen.size(), 1U);
  ASSERT_EQ(reader.problems().size(), 1U);
  EXPECT_THAT(reader.problems()[0].message, HasSubstr("data checksum"));
  EXPECT_TRUE(reader.file_dead(kFile));
}

TEST(RunReaderTest, ATagKeepsThePluginOfItsFirstValue) {
  // TF2 writes the plugin with a tag's first value only; later values are bare tensors.
  auto scalar_tensor = [](std::int64_t step, float value, bool with_metadata) {
    tfproto::Event event;
    event.set_step(step);
    auto* summary_value = event.mutable_summary()->add_value();
    summary_value->set_tag("epoch_loss");
    if (with_metadata) {
      summary_value->mutable_metadata()->add_plugin_data()->set_plugin_name("scalars");
    }
    summary_value->mutable_tensor()->set_dtype(tfproto::DT_FLOAT);
    summary_value->mutable_tensor()->add_float_val(value);
    return event.SerializeAsString();
  };
  RunReader reader("train");
  Recorder recorder;
  reader.read(kFile,
              bytes_of(framed({scalar_tensor(0, 0.5F, true), scalar_tensor(1, 0.25F, false)})), 0,
              recorder);
  ASSERT_EQ(recorder.seen.size(), 2U);
  EXPECT_EQ(recorder.seen[1].reading.kind, TagKind::Scalar);
  EXPECT_EQ(recorder.seen[1].reading.scalar, 0.25);
  ASSERT_EQ(reader.tags().size(), 1U);
  EXPECT_EQ(reader.tags()[0].plugin_name, "scalars");
  EXPECT_EQ(reader.tags()[0].kind, TagKind::Scalar);
  EXPECT_EQ(reader.tags()[0].run, "train");
}

TEST(RunReaderTest, AnEventThatDoesNotDecodeIsReportedAndTheNextIsRead) {
  const std::string file = framed({std::string("\x0a\x05tr", 4), scalar_event("loss", 1, 2.0F)});
  RunReader reader("train");
  Recorder recorder;
  reader.read(kFile, bytes_of(file), 0, recorder);
  ASSERT_EQ(recorder.seen.size(), 1U);
  EXPECT_EQ(recorder.seen[0].step, 1);
  ASSERT_EQ(reader.problems().size(), 1U);
  EXPECT_EQ(reader.problems()[0].offset, 0U);
  EXPECT_THAT(reader.problems()[0].message, HasSubstr("not an Event"));
  EXPECT_FALSE(reader.file_dead(kFile));
}

TEST(RunReaderTest, DuplicatesAndRestartsArePassedOnAsWritten) {
  const std::string file = framed({scalar_event("loss", 5, 1.0F), scalar_event("loss", 6, 2.0F),
                                   scalar_event("loss", 5, 3.0F), scalar_event("loss", 5, 4.0F)});
  RunReader reader("train");
  Recorder recorder;
  reader.read(kFile, bytes_of(file), 0, recorder);
  ASSERT_EQ(recorder.seen.size(), 4U);
  EXPECT_EQ(recorder.seen[2].step, 5);
  EXPECT_EQ(recorder.seen[3].reading.scalar, 4.0);
}

// A length whose checksum holds but that no record can have (2^63) is corruption: the file ends
// there with a problem that says so, rather than waiting for bytes that never come.
TEST(RunReaderTest, ALengthNoRecordCanHaveEndsTheFileAsCorrupt) {
  std::string file = framed({scalar_event("loss", 0, 1.0F)});
  const std::size_t corrupt_at = file.size();
  // A length of 2^63 with its checksum right, as the reproducer's file has it.
  const std::uint64_t length = std::uint64_t{1} << 63;
  std::string header(reinterpret_cast<const char*>(&length), sizeof(length));
  std::string bytes = file + header;
  const std::uint32_t length_crc = mask_crc(crc32c(std::as_bytes(std::span(header))));
  bytes.append(reinterpret_cast<const char*>(&length_crc), sizeof(length_crc));
  bytes += framed({scalar_event("loss", 1, 2.0F)});
  RunReader reader("train");
  Recorder recorder;
  reader.read(kFile, bytes_of(bytes), 0, recorder);
  EXPECT_EQ(recorder.seen.size(), 1U);
  EXPECT_TRUE(reader.file_dead(kFile));
  ASSERT_EQ(reader.problems().size(), 1U);
  EXPECT_EQ(reader.problems()[0].offset, corrupt_at);
  EXPECT_TRUE(reader.problems()[0].values_lost);
  EXPECT_THAT(reader.problems()[0].message, HasSubstr("9223372036854775808 bytes"));
  EXPECT_THAT(reader.problems()[0].message, HasSubstr("more than any record can hold"));
}

// A file replaced under its name is read again from its start: by a new identity (renamed over
// it), or by a size below what was read (cut and rewritten). A problem says so; no value is
// counted as lost.
TEST(RunReaderTest, AFileReplacedUnderItsNameIsReadAgainFromItsStart) {
  const std::string first = framed({scalar_event("loss", 0, 1.0F), scalar_event("loss", 1, 1.0F)});
  for (const bool renamed : {true, false}) {
    SCOPED_TRACE(renamed ? "renamed over" : "cut and rewritten");
    RunReader reader("train");
    Recorder recorder;
    EXPECT_FALSE(reader.check_replaced(kFile, first.size(), 7));
    reader.read(kFile, bytes_of(first), 0, recorder);
    EXPECT_FALSE(reader.check_replaced(kFile, first.size(), 7));  // the same file, no growth
    // The replacement holds one value: shorter when cut, as long (another inode) when renamed.
    const std::string second =
        renamed ? framed({scalar_event("loss", 0, 5.0F), scalar_event("loss", 1, 6.0F)})
                : framed({scalar_event("loss", 0, 5.0F)});
    EXPECT_TRUE(reader.check_replaced(kFile, second.size(), renamed ? 8 : 7));
    EXPECT_EQ(reader.resume_offset(kFile), 0U);
    reader.read(kFile, bytes_of(second), 0, recorder);
    ASSERT_EQ(recorder.seen.size(), renamed ? 4U : 3U);
    EXPECT_EQ(recorder.seen[2].reading.scalar, 5.0);
    ASSERT_EQ(reader.problems().size(), 1U);
    EXPECT_FALSE(reader.problems()[0].values_lost);
    EXPECT_THAT(reader.problems()[0].message,
                HasSubstr(renamed ? "replaced by another file" : "shorter than the"));
  }
}

// Storage that cannot tell files apart (identity 0, S3) still sees a file cut short.
TEST(RunReaderTest, WithoutIdentitiesOnlyAShorterFileIsAReplacement) {
  const std::string file = framed({scalar_event("loss", 0, 1.0F)});
  RunReader reader("train");
  Recorder recorder;
  reader.read(kFile, bytes_of(file), 0, recorder);
  EXPECT_FALSE(reader.check_replaced(kFile, file.size() + 10, 0));
  EXPECT_TRUE(reader.check_replaced(kFile, file.size() - 1, 0));
}

TEST(RunReaderTest, BytesThatDoNotHoldTheResumeOffsetAreRefused) {
  const std::string file = framed({scalar_event("loss", 0, 1.0F)});
  RunReader reader("train");
  Recorder recorder;
  EXPECT_THROW(reader.read(kFile, bytes_of(file), 5, recorder), std::invalid_argument);
}

}  // namespace
}  // namespace rulestream
