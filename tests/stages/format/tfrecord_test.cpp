#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/model/exceptions.hpp"
#include "core/model/shared_bytes.hpp"
#include "stages/format/crc32c.hpp"
#include "stages/format/tfrecord_reader.hpp"
#include "stages/format/tfrecord_writer.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::TempDir;

std::span<const std::byte> bytes_of(std::string_view text) {
  return std::as_bytes(std::span(text.data(), text.size()));
}

std::vector<std::string> sample_payloads() {
  return {"first", "", std::string(1000, 'x'), "\x00\x01\x02 binary\xff", "last one"};
}

// A stream of records and where each one starts.
struct Stream {
  std::string bytes;
  std::vector<std::uint64_t> offsets;
};

Stream make_stream(const std::vector<std::string>& payloads,
                   FooterStyle footer = FooterStyle::SmdebugPlaceholder) {
  Stream stream;
  for (const std::string& payload : payloads) {
    stream.offsets.push_back(stream.bytes.size());
    append_record(stream.bytes, payload, footer);
  }
  return stream;
}

std::vector<std::string> payloads_of(const RecordScan& scan) {
  std::vector<std::string> payloads;
  for (const RecordPayload& record : scan.records) {
    payloads.emplace_back(record.payload.as_string_view());
  }
  return payloads;
}

std::string header_for_length(std::uint64_t length, bool valid_crc) {
  std::string header;
  for (int i = 0; i < 8; ++i) header.push_back(static_cast<char>((length >> (8 * i)) & 0xff));
  std::uint32_t crc = mask_crc(crc32c(bytes_of(header)));
  if (!valid_crc) crc ^= 1;
  for (int i = 0; i < 4; ++i) header.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  return header;
}

TEST(TfRecordWriterTest, FramesLikeSmdebug) {
  // The first record header of pt-mlp-reductions' worker 0 file (FORMAT.md): a 93-byte payload.
  std::string out;
  append_record(out, std::string(93, 'p'));
  ASSERT_EQ(out.size(), kRecordHeaderSize + 93 + kRecordFooterSize);
  EXPECT_EQ(out.substr(0, 12), std::string("\x5d\0\0\0\0\0\0\0\x61\x5b\xbb\xb9", 12));
  EXPECT_EQ(out.substr(12 + 93), "\xb3\xc0\x2d\x06");
}

TEST(TfRecordWriterTest, PayloadCrcFooterIsTheMaskedCrcOfThePayload) {
  std::string out;
  append_record(out, std::string_view("hello world"), FooterStyle::PayloadCrc);
  const std::uint32_t expected = mask_crc(0xC99465AAu);
  std::string footer;
  for (int i = 0; i < 4; ++i) footer.push_back(static_cast<char>((expected >> (8 * i)) & 0xff));
  EXPECT_EQ(out.substr(12 + 11), footer);
}

TEST(TfRecordReaderTest, FramesGoodRecordsWithEitherFooter) {
  for (const FooterStyle footer : {FooterStyle::SmdebugPlaceholder, FooterStyle::PayloadCrc}) {
    const Stream stream = make_stream(sample_payloads(), footer);
    const SharedBytes file = SharedBytes::from_string(stream.bytes);
    const RecordScan scan = scan_records(file, 0, "good.tfevents");
    EXPECT_EQ(payloads_of(scan), sample_payloads());
    EXPECT_TRUE(scan.issues.empty());
    EXPECT_FALSE(scan.file_dead);
    EXPECT_EQ(scan.resume_offset, file.size());
    for (std::size_t i = 0; i < scan.records.size(); ++i) {
      EXPECT_EQ(scan.records[i].offset, stream.offsets[i]);
      // Payloads point into the file buffer instead of copying it.
      EXPECT_EQ(scan.records[i].payload.data(),
                file.data() + stream.offsets[i] + kRecordHeaderSize);
    }
  }
}

TEST(TfRecordReaderTest, FrameRecordAtReportsTheNextOffset) {
  const Stream stream = make_stream(sample_payloads(), FooterStyle::PayloadCrc);
  const Frame frame = frame_record_at(bytes_of(stream.bytes), stream.offsets[2]);
  EXPECT_EQ(frame.status, FrameStatus::Record);
  EXPECT_EQ(frame.offset, stream.offsets[2]);
  EXPECT_EQ(frame.next_offset, stream.offsets[3]);
  EXPECT_EQ(frame.payload.size(), 1000u);
}

TEST(TfRecordReaderTest, EmptyOrExhaustedBufferIsIncomplete) {
  const SharedBytes empty;
  const RecordScan scan = scan_records(empty, 0, "empty.tfevents");
  EXPECT_TRUE(scan.records.empty());
  EXPECT_TRUE(scan.issues.empty());
  EXPECT_EQ(scan.resume_offset, 0u);

  const Stream stream = make_stream({"a"});
  EXPECT_EQ(frame_record_at(bytes_of(stream.bytes), stream.bytes.size()).status,
            FrameStatus::Incomplete);
  EXPECT_EQ(frame_record_at(bytes_of(stream.bytes), stream.bytes.size() + 100).status,
            FrameStatus::Incomplete);
}

TEST(TfRecordReaderTest, TruncatedLastRecordResumesWhenTheRestArrives) {
  const std::vector<std::string> payloads = sample_payloads();
  const Stream stream = make_stream(payloads, FooterStyle::PayloadCrc);
  const SharedBytes whole = SharedBytes::from_string(stream.bytes);
  const std::uint64_t last = stream.offsets.back();

  for (std::size_t cut = last; cut < stream.bytes.size(); ++cut) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    const SharedBytes partial = SharedBytes::from_string(stream.bytes.substr(0, cut));
    EXPECT_EQ(frame_record_at(partial.span(), last).status, FrameStatus::Incomplete);

    const RecordScan first = scan_records(partial, 0, "growing.tfevents");
    EXPECT_EQ(payloads_of(first), std::vector<std::string>(payloads.begin(), payloads.end() - 1));
    EXPECT_TRUE(first.issues.empty());
    EXPECT_FALSE(first.file_dead);
    EXPECT_EQ(first.resume_offset, last);

    const RecordScan rest = scan_records(whole, first.resume_offset, "growing.tfevents");
    EXPECT_EQ(payloads_of(rest), std::vector<std::string>{payloads.back()});
    ASSERT_EQ(rest.records.size(), 1u);
    EXPECT_EQ(rest.records[0].offset, last);
    EXPECT_TRUE(rest.issues.empty());
    EXPECT_EQ(rest.resume_offset, whole.size());
  }
}

TEST(TfRecordReaderTest, TruncationInsideEarlierRecordsResumesThere) {
  const std::vector<std::string> payloads = sample_payloads();
  const Stream stream = make_stream(payloads);
  const SharedBytes whole = SharedBytes::from_string(stream.bytes);
  for (std::size_t cut = 0; cut < stream.bytes.size(); ++cut) {
    const SharedBytes partial = SharedBytes::from_string(stream.bytes.substr(0, cut));
    const RecordScan first = scan_records(partial, 0, "growing.tfevents");
    const RecordScan rest = scan_records(whole, first.resume_offset, "growing.tfevents");
    std::vector<std::string> joined = payloads_of(first);
    for (std::string& payload : payloads_of(rest)) joined.push_back(std::move(payload));
    EXPECT_EQ(joined, payloads) << "cut at " << cut;
    EXPECT_LE(first.resume_offset, cut);
  }
}

TEST(TfRecordReaderTest, CorruptPayloadSkipsOnlyThatRecord) {
  const std::vector<std::string> payloads = sample_payloads();
  Stream stream = make_stream(payloads, FooterStyle::PayloadCrc);
  stream.bytes[stream.offsets[2] + kRecordHeaderSize + 500] ^= 0x20;
  const SharedBytes file = SharedBytes::from_string(stream.bytes);

  const RecordScan scan = scan_records(file, 0, "corrupt-payload.tfevents");
  EXPECT_EQ(payloads_of(scan),
            (std::vector<std::string>{payloads[0], payloads[1], payloads[3], payloads[4]}));
  EXPECT_FALSE(scan.file_dead);
  EXPECT_EQ(scan.resume_offset, file.size());
  ASSERT_EQ(scan.issues.size(), 1u);
  EXPECT_EQ(scan.issues[0].status, FrameStatus::BadDataCrc);
  EXPECT_EQ(scan.issues[0].offset, stream.offsets[2]);
  EXPECT_NE(scan.issues[0].message.find("corrupt-payload.tfevents"), std::string::npos)
      << scan.issues[0].message;
  EXPECT_NE(scan.issues[0].message.find("offset " + std::to_string(stream.offsets[2])),
            std::string::npos)
      << scan.issues[0].message;

  const Frame frame = frame_record_at(file.span(), stream.offsets[2]);
  EXPECT_EQ(frame.status, FrameStatus::BadDataCrc);
  EXPECT_EQ(frame.next_offset, stream.offsets[3]);
}

TEST(TfRecordReaderTest, DataCrcCheckCanBeTurnedOff) {
  Stream stream = make_stream(sample_payloads(), FooterStyle::PayloadCrc);
  stream.bytes[stream.offsets[0] + kRecordHeaderSize] = 'F';
  const SharedBytes file = SharedBytes::from_string(stream.bytes);

  const RecordScan unchecked = scan_records(file, 0, "f.tfevents", {.check_data_crc = false});
  EXPECT_EQ(unchecked.records.size(), sample_payloads().size());
  EXPECT_EQ(unchecked.records[0].payload.as_string_view(), "First");
  EXPECT_TRUE(unchecked.issues.empty());

  const RecordScan checked = scan_records(file, 0, "f.tfevents", {.check_data_crc = true});
  EXPECT_EQ(checked.records.size(), sample_payloads().size() - 1);
  EXPECT_EQ(checked.issues.size(), 1u);
}

TEST(TfRecordReaderTest, PlaceholderFooterIsAcceptedWithoutCheckingThePayload) {
  // smdebug's footer carries no information about the payload, so corruption there cannot be
  // seen; the length CRC is all that protects such a file.
  Stream stream = make_stream({"payload"}, FooterStyle::SmdebugPlaceholder);
  stream.bytes[kRecordHeaderSize] = 'P';
  const Frame frame = frame_record_at(bytes_of(stream.bytes), 0, {.check_data_crc = true});
  EXPECT_EQ(frame.status, FrameStatus::Record);
}

TEST(TfRecordReaderTest, CorruptLengthKillsTheFileAndKeepsEarlierRecords) {
  const std::vector<std::string> payloads = sample_payloads();
  for (const std::size_t byte_in_header : {0, 3, 7, 8, 11}) {
    Stream stream = make_stream(payloads);
    stream.bytes[stream.offsets[3] + byte_in_header] ^= 0x01;
    const SharedBytes file = SharedBytes::from_string(stream.bytes);

    const RecordScan scan = scan_records(file, 0, "corrupt-length.tfevents");
    EXPECT_EQ(payloads_of(scan), std::vector<std::string>(payloads.begin(), payloads.begin() + 3));
    EXPECT_TRUE(scan.file_dead);
    EXPECT_EQ(scan.resume_offset, stream.offsets[3]);
    ASSERT_EQ(scan.issues.size(), 1u);
    EXPECT_EQ(scan.issues[0].status, FrameStatus::BadLengthCrc);
    EXPECT_EQ(scan.issues[0].offset, stream.offsets[3]);
    EXPECT_NE(scan.issues[0].message.find("corrupt-length.tfevents at offset " +
                                          std::to_string(stream.offsets[3])),
              std::string::npos)
        << scan.issues[0].message;
  }
}

TEST(TfRecordReaderTest, ALengthARecordCanHaveWaitsForTheRest) {
  // Up to protobuf's limit on a message, a length with a valid CRC may be a record still being
  // written: the scan stops there and resumes when more bytes come.
  const std::string good = make_stream({"ok"}).bytes;
  for (const std::uint64_t length :
       {std::uint64_t{100}, std::uint64_t{1} << 30, (std::uint64_t{1} << 31) - 1}) {
    SCOPED_TRACE("length " + std::to_string(length));
    const std::string bytes = good + header_for_length(length, true) + std::string(64, 'z');
    const RecordScan scan = scan_records(SharedBytes::from_string(bytes), 0, "long.tfevents");
    EXPECT_EQ(payloads_of(scan), std::vector<std::string>{"ok"});
    EXPECT_FALSE(scan.file_dead);
    EXPECT_TRUE(scan.issues.empty());
    EXPECT_EQ(scan.resume_offset, good.size());
  }
}

TEST(TfRecordReaderTest, ALengthNoRecordCanHaveIsCorruptNotIncomplete) {
  // 2^31 bytes and more is no Event (protobuf refuses such messages): waiting for the rest, as
  // a watch did for a 2^63 length, would wait for ever. Lengths near 2^64 must not wrap either.
  const std::string good = make_stream({"ok"}).bytes;
  for (const std::uint64_t length :
       {std::uint64_t{1} << 31, std::uint64_t{1} << 40, std::uint64_t{1} << 63, ~std::uint64_t{0},
        ~std::uint64_t{0} - 20, ~std::uint64_t{0} - good.size()}) {
    SCOPED_TRACE("length " + std::to_string(length));
    const std::string bytes = good + header_for_length(length, true) + std::string(64, 'z');
    const RecordScan scan = scan_records(SharedBytes::from_string(bytes), 0, "huge.tfevents");
    EXPECT_EQ(payloads_of(scan), std::vector<std::string>{"ok"});
    EXPECT_TRUE(scan.file_dead);
    ASSERT_EQ(scan.issues.size(), 1u);
    EXPECT_EQ(scan.issues[0].status, FrameStatus::ImpossibleLength);
    EXPECT_NE(scan.issues[0].message.find("huge.tfevents at offset " + std::to_string(good.size())),
              std::string::npos)
        << scan.issues[0].message;
    EXPECT_NE(scan.issues[0].message.find(std::to_string(length)), std::string::npos);
  }
}

TEST(TfRecordReaderTest, HugeLengthWithBadCrcIsCorrupt) {
  const std::string bytes = header_for_length(~std::uint64_t{0}, false) + std::string(64, 'z');
  const RecordScan scan = scan_records(SharedBytes::from_string(bytes), 0, "bogus.tfevents");
  EXPECT_TRUE(scan.records.empty());
  EXPECT_TRUE(scan.file_dead);
  ASSERT_EQ(scan.issues.size(), 1u);
  EXPECT_EQ(scan.issues[0].status, FrameStatus::BadLengthCrc);
}

TEST(TfRecordCompressionTest, DetectsTheContainer) {
  const std::string plain = make_stream(sample_payloads()).bytes;
  EXPECT_EQ(detect_compression(bytes_of(plain)), Compression::None);
  EXPECT_EQ(detect_compression(bytes_of(compress_stream(plain, Compression::Zlib))),
            Compression::Zlib);
  EXPECT_EQ(detect_compression(bytes_of(compress_stream(plain, Compression::Gzip))),
            Compression::Gzip);
  EXPECT_EQ(detect_compression({}), Compression::None);
  // A record still being written: too short to check, and no compression magic.
  EXPECT_EQ(detect_compression(bytes_of(plain.substr(0, 5))), Compression::None);
}

// A megabyte of gzip can inflate to a gigabyte: a hostile or broken file in a watched folder must
// cost no more than the memory budget (the issue's 1 MB file peaked at 3.3 GB).
TEST(TfRecordCompressionTest, InflatingStopsAtTheMemoryBudget) {
  const std::string zeros(std::size_t{4} << 20, '\0');
  for (const Compression compression : {Compression::Zlib, Compression::Gzip}) {
    const std::string compressed = compress_stream(zeros, compression);
    EXPECT_LT(compressed.size() * 100, zeros.size());  // highly compressible, as the attack is
    try {
      decompress_file(SharedBytes::from_string(compressed), compression, "bomb.tfrecord",
                      std::uint64_t{1} << 20);
      ADD_FAILURE() << "inflated past its budget";
    } catch (const FormatError& error) {
      EXPECT_EQ(error.where(), "bomb.tfrecord");
      EXPECT_EQ(error.detail(),
                "inflates to more than 1048576 bytes, the memory budget; not read (a larger "
                "budget reads it: --max-memory)");
    }
    // Within its budget the same file inflates whole.
    const SharedBytes inflated = decompress_file(SharedBytes::from_string(compressed), compression,
                                                 "bomb.tfrecord", 8 << 20);
    EXPECT_EQ(inflated.size(), zeros.size());
  }
}

TEST(TfRecordCompressionTest, RoundTripsThroughBothContainers) {
  const std::string plain = make_stream(sample_payloads(), FooterStyle::PayloadCrc).bytes;
  for (const Compression compression : {Compression::Zlib, Compression::Gzip}) {
    const std::string compressed = compress_stream(plain, compression);
    EXPECT_LT(compressed.size(), plain.size());
    const SharedBytes inflated =
        decompress_file(SharedBytes::from_string(compressed), compression, "c.tfrecord");
    EXPECT_EQ(inflated.as_string_view(), plain);
    const RecordScan scan = scan_records(inflated, 0, "c.tfrecord");
    EXPECT_EQ(payloads_of(scan), sample_payloads());
    EXPECT_TRUE(scan.issues.empty());
  }
  const SharedBytes same =
      decompress_file(SharedBytes::from_string(plain), Compression::None, "plain.tfrecord");
  EXPECT_EQ(same.as_string_view(), plain);
}

TEST(TfRecordCompressionTest, ContainersAreWhatZlibItselfReads) {
  const std::string plain = make_stream(sample_payloads()).bytes;

  const std::string zlib_stream = compress_stream(plain, Compression::Zlib);
  std::string out(plain.size(), '\0');
  uLongf out_size = out.size();
  ASSERT_EQ(uncompress(reinterpret_cast<Bytef*>(out.data()), &out_size,
                       reinterpret_cast<const Bytef*>(zlib_stream.data()), zlib_stream.size()),
            Z_OK);
  EXPECT_EQ(out, plain);

  const std::string gzip_stream = compress_stream(plain, Compression::Gzip);
  EXPECT_EQ(gzip_stream.substr(0, 3), "\x1f\x8b\x08");
  TempDir dir;
  const auto path = dir.path() / "stream.gz";
  testing::write_text_file(path, gzip_stream);
  gzFile gz = gzopen(path.c_str(), "rb");
  ASSERT_NE(gz, nullptr);
  std::string read_back(plain.size() + 16, '\0');
  const int got = gzread(gz, read_back.data(), static_cast<unsigned>(read_back.size()));
  gzclose(gz);
  ASSERT_GE(got, 0);
  read_back.resize(static_cast<std::size_t>(got));
  EXPECT_EQ(read_back, plain);
}

TEST(TfRecordCompressionTest, StreamCutShortYieldsAPrefix) {
  std::vector<std::string> payloads;
  for (int i = 0; i < 40; ++i) payloads.push_back("record " + std::to_string(i * 7919));
  const std::string plain = make_stream(payloads).bytes;
  for (const Compression compression : {Compression::Zlib, Compression::Gzip}) {
    const std::string compressed = compress_stream(plain, compression);
    std::size_t records_seen = 0;
    for (std::size_t cut = 0; cut < compressed.size(); ++cut) {
      const SharedBytes inflated = decompress_file(
          SharedBytes::from_string(compressed.substr(0, cut)), compression, "cut.tfrecord");
      ASSERT_EQ(inflated.as_string_view(), std::string_view(plain).substr(0, inflated.size()))
          << "cut at " << cut;
      const RecordScan scan = scan_records(inflated, 0, "cut.tfrecord");
      EXPECT_TRUE(scan.issues.empty());
      EXPECT_GE(scan.records.size(), records_seen);
      records_seen = scan.records.size();
    }
    EXPECT_GT(records_seen, 0u);
  }
}

TEST(TfRecordCompressionTest, CorruptDataThrowsNamingTheFile) {
  const std::string plain = make_stream(sample_payloads()).bytes;
  for (const Compression compression : {Compression::Zlib, Compression::Gzip}) {
    std::string bad_check = compress_stream(plain, compression);
    bad_check[bad_check.size() - 3] ^= 0x55;  // inside the Adler-32 / length trailer
    try {
      decompress_file(SharedBytes::from_string(bad_check), compression, "broken.tfrecord");
      ADD_FAILURE() << "a stream with a wrong check value was accepted ("
                    << static_cast<int>(compression) << ")";
    } catch (const FormatError& error) {
      EXPECT_EQ(error.where(), "broken.tfrecord");
      EXPECT_NE(std::string(error.what()).find("broken.tfrecord"), std::string::npos);
    }
  }
  // A zlib header followed by a deflate block of the reserved type 3.
  const std::string invalid_block("\x78\x9c\xff\xff\xff\xff", 6);
  EXPECT_THROW(decompress_file(SharedBytes::from_string(invalid_block), Compression::Zlib,
                               "broken.tfrecord"),
               FormatError);
  // Not a gzip header at all.
  EXPECT_THROW(
      decompress_file(SharedBytes::from_string(plain), Compression::Gzip, "broken.tfrecord"),
      FormatError);
}

TEST(TfRecordCompressionTest, ConcatenatedGzipMembersReadAsOneStream) {
  const std::string first = make_stream({"one", "two"}).bytes;
  const std::string second = make_stream({"three"}).bytes;
  const std::string members =
      compress_stream(first, Compression::Gzip) + compress_stream(second, Compression::Gzip);
  const SharedBytes inflated =
      decompress_file(SharedBytes::from_string(members), Compression::Gzip, "m.tfrecord");
  EXPECT_EQ(inflated.as_string_view(), first + second);
}

TEST(TfRecordSampleTest, SmdebugEventFileFramesCleanly) {
  const auto samples = testing::samples_dir();
  if (!samples) GTEST_SKIP() << "smdebug-samples not found (set RULESTREAM_SAMPLES)";
  const auto path =
      *samples / "trials/pt-mlp-basic/events/000000000000/000000000000_worker_0.tfevents";
  const SharedBytes file = SharedBytes::from_string(testing::read_text_file(path));
  ASSERT_FALSE(file.empty());
  EXPECT_EQ(detect_compression(file.span()), Compression::None);

  const RecordScan scan = scan_records(file, 0, path.string());
  EXPECT_FALSE(scan.records.empty());
  EXPECT_TRUE(scan.issues.empty());
  EXPECT_FALSE(scan.file_dead);
  EXPECT_EQ(scan.resume_offset, file.size());

  // Every record carries the placeholder footer, so our writer reproduces the file exactly.
  std::string rewritten;
  for (const RecordPayload& record : scan.records) {
    EXPECT_EQ(record.offset, rewritten.size());
    append_record(rewritten, record.payload.span(), FooterStyle::SmdebugPlaceholder);
  }
  EXPECT_EQ(rewritten, file.as_string_view());
}

}  // namespace
}  // namespace rulestream
