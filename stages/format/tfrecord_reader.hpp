#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/model/compression.hpp"
#include "core/model/growing_reservation.hpp"
#include "core/model/shared_bytes.hpp"

namespace rulestream {

// TFRecord framing: uint64 LE length | uint32 LE masked CRC32C(length) | payload |
// uint32 LE footer. The footer is a masked CRC32C of the payload in files TensorFlow writes;
// smdebug writes kSmdebugPlaceholderFooter instead, which is always accepted.
inline constexpr std::size_t kRecordHeaderSize = 12;
inline constexpr std::size_t kRecordFooterSize = 4;
// The longest payload a record can hold: every record of these formats is a serialized protobuf
// message (an Event), and protobuf refuses messages of 2 GiB or more.
inline constexpr std::uint64_t kMaxRecordPayload = (std::uint64_t{1} << 31) - 1;

struct FramingOptions {
  // Check real payload CRCs (footers other than smdebug's placeholder). Off trades safety for
  // speed; the length CRC is always checked.
  bool check_data_crc = true;
};

// What was found at one offset of a buffer.
enum class FrameStatus {
  Record,        // a whole, valid record
  Incomplete,    // the buffer ends inside the record: a file still being written; resume here
  BadLengthCrc,  // the length cannot be trusted: nothing after this offset can be framed
  // The length's CRC holds but no record can be that long (kMaxRecordPayload): the file is
  // corrupt there, and a reader that waited for the rest would wait for ever.
  ImpossibleLength,
  BadDataCrc,  // the record is whole but its payload CRC is wrong: skip it
};

struct Frame {
  FrameStatus status = FrameStatus::Incomplete;
  std::uint64_t offset = 0;       // where the record starts
  std::uint64_t next_offset = 0;  // where the next record starts (Record, BadDataCrc)
  std::span<const std::byte> payload;
};

// Frames the record that starts at `offset` of `buffer`.
Frame frame_record_at(std::span<const std::byte> buffer, std::uint64_t offset,
                      const FramingOptions& options = {});

// A record's payload, kept alive by the buffer it came from, and where it was in its file.
struct RecordPayload {
  std::uint64_t offset = 0;
  SharedBytes payload;
};

// A problem found while framing; `message` names the file and offset.
struct FramingIssue {
  std::uint64_t offset = 0;
  FrameStatus status = FrameStatus::BadDataCrc;
  std::string message;
};

// Every record from `start_offset` to the end of `file_bytes`, the offset to resume from when
// more bytes arrive (a truncated tail is not an error), and the problems met. A bad data CRC
// skips that record; a bad length CRC or an impossible length ends the scan and marks the file
// dead.
struct RecordScan {
  std::vector<RecordPayload> records;
  std::uint64_t resume_offset = 0;
  bool file_dead = false;
  std::vector<FramingIssue> issues;
};
RecordScan scan_records(const SharedBytes& file_bytes, std::uint64_t start_offset,
                        const std::string& file_name, const FramingOptions& options = {});

// What decompress_file inflates at most when given a byte count rather than a budget: the
// pipeline's default memory budget (--max-memory).
inline constexpr std::uint64_t kDefaultMaxInflatedBytes = std::uint64_t{512} << 20;

// Guesses the compression of a file from its first bytes: a valid uncompressed record header
// wins; then gzip's and zlib's magic numbers.
Compression detect_compression(std::span<const std::byte> file_start);

// Inflates a compressed TFRecord file, taking the bytes it writes from `reservation` as it goes
// (a file is inflated whole, since record offsets count inflated bytes: a hostile megabyte of
// gzip could otherwise take gigabytes). When the budget is short the reservation evicts caches
// and waits for other work (GrowingReservation); told to yield, the inflation gives back what it
// wrote, waits, and starts again. On return the reservation holds what the bytes take: keep it
// as long as they are kept (or settle it into the cache that keeps them). A stream cut short (a
// file still being written) yields what could be inflated so far; corrupt data throws
// FormatError naming `file_name`, and so does a file the budget cannot hold.
SharedBytes decompress_file(const SharedBytes& compressed, Compression compression,
                            const std::string& file_name, GrowingReservation& reservation);
// The same within a budget of `max_bytes` of its own: for callers that keep nothing else
// (tools, tests). What it returns is counted nowhere.
SharedBytes decompress_file(const SharedBytes& compressed, Compression compression,
                            const std::string& file_name,
                            std::uint64_t max_bytes = kDefaultMaxInflatedBytes);

}  // namespace rulestream
