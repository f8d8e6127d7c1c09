#include "stages/format/tfrecord_reader.hpp"

#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <iomanip>
#include <limits>
#include <new>
#include <optional>
#include <sstream>

#include "core/model/exceptions.hpp"
#include "stages/format/crc32c.hpp"

namespace rulestream {
namespace {

template <typename Integer>
Integer load_le(const std::byte* p) {
  Integer value = 0;
  for (int i = sizeof(Integer) - 1; i >= 0; --i) {
    value = static_cast<Integer>((value << 8) | std::to_integer<Integer>(p[i]));
  }
  return value;
}

std::string hex32(std::uint32_t value) {
  std::ostringstream out;
  out << "0x" << std::hex << std::setw(8) << std::setfill('0') << value;
  return out.str();
}

std::string where(const std::string& file_name, std::uint64_t offset) {
  return file_name + " at offset " + std::to_string(offset);
}

// Recomputes what a rejected record should have carried, for a message a person can act on.
std::string describe_bad_frame(std::span<const std::byte> buffer, const Frame& frame,
                               const std::string& file_name) {
  const std::byte* header = buffer.data() + frame.offset;
  if (frame.status == FrameStatus::BadLengthCrc) {
    return where(file_name, frame.offset) + ": record length CRC mismatch (length field " +
           std::to_string(load_le<std::uint64_t>(header)) + ", stored CRC " +
           hex32(load_le<std::uint32_t>(header + 8)) + ", computed " +
           hex32(mask_crc(crc32c(buffer.subspan(frame.offset, 8)))) +
           "); the rest of the file cannot be framed";
  }
  if (frame.status == FrameStatus::ImpossibleLength) {
    return where(file_name, frame.offset) + ": record length " +
           std::to_string(load_le<std::uint64_t>(header)) +
           " is more than any record can hold (2 GiB); the rest of the file cannot be framed";
  }
  const std::uint32_t footer = load_le<std::uint32_t>(frame.payload.data() + frame.payload.size());
  return where(file_name, frame.offset) + ": record payload CRC mismatch (" +
         std::to_string(frame.payload.size()) + "-byte payload, footer " + hex32(footer) +
         ", computed " + hex32(mask_crc(crc32c(frame.payload))) + "); record skipped";
}

// Where inflated bytes go: an anonymous mapping that grows in place (mremap) rather than a
// vector that doubles. A vector's growth copies what it holds into a buffer twice its size and
// zero-fills the new half, so inflating up to the budget peaked at 1.5x the budget and touched
// pages never written; a mapping's pages cost memory only once written, and moving it to grow
// copies no byte. Returned as SharedBytes that unmap it when the last view goes.
class InflateBuffer {
 public:
  explicit InflateBuffer(std::size_t capacity) { reserve(capacity); }
  ~InflateBuffer() {
    if (data_ != nullptr) ::munmap(data_, capacity_);
  }
  InflateBuffer(const InflateBuffer&) = delete;
  InflateBuffer& operator=(const InflateBuffer&) = delete;

  std::byte* data() const { return static_cast<std::byte*>(data_); }
  std::size_t capacity() const { return capacity_; }

  void reserve(std::size_t capacity) {
    capacity = round_up_to_page(std::max<std::size_t>(capacity, 1));
    if (capacity <= capacity_) return;
    void* grown = data_ == nullptr ? ::mmap(nullptr, capacity, PROT_READ | PROT_WRITE,
                                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                                   : ::mremap(data_, capacity_, capacity, MREMAP_MAYMOVE);
    if (grown == MAP_FAILED) throw std::bad_alloc();
    data_ = grown;
    capacity_ = capacity;
  }

  // The first `size` bytes, which now own the mapping; the pages past them are given back.
  SharedBytes release(std::size_t size) {
    const std::size_t kept = round_up_to_page(std::max<std::size_t>(size, 1));
    if (kept < capacity_) {
      ::munmap(static_cast<std::byte*>(data_) + kept, capacity_ - kept);
      capacity_ = kept;
    }
    const std::size_t length = capacity_;
    std::shared_ptr<const void> owner(
        data_, [length](const void* mapped) { ::munmap(const_cast<void*>(mapped), length); });
    const std::span<const std::byte> bytes(static_cast<const std::byte*>(data_), size);
    data_ = nullptr;
    capacity_ = 0;
    return SharedBytes(std::move(owner), bytes);
  }

 private:
  static std::size_t round_up_to_page(std::size_t bytes) {
    static const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    return (bytes + page - 1) / page * page;
  }

  void* data_ = nullptr;
  std::size_t capacity_ = 0;
};

bool has_valid_length_crc(std::span<const std::byte> bytes) {
  return bytes.size() >= kRecordHeaderSize &&
         mask_crc(crc32c(bytes.first(8))) == load_le<std::uint32_t>(bytes.data() + 8);
}

}  // namespace

Frame frame_record_at(std::span<const std::byte> buffer, std::uint64_t offset,
                      const FramingOptions& options) {
  Frame frame;
  frame.offset = offset;
  if (offset > buffer.size() || buffer.size() - offset < kRecordHeaderSize) return frame;

  const std::span<const std::byte> rest = buffer.subspan(offset);
  if (!has_valid_length_crc(rest)) {
    frame.status = FrameStatus::BadLengthCrc;
    return frame;
  }
  // A length no protobuf message can have is corruption, not a record still being written: a
  // watch waiting for its 2^63 bytes would wait for ever.
  const std::uint64_t length = load_le<std::uint64_t>(rest.data());
  if (length > kMaxRecordPayload) {
    frame.status = FrameStatus::ImpossibleLength;
    return frame;
  }
  // Compare against what is left rather than computing the record's end: never wrap around.
  const std::uint64_t available = rest.size() - kRecordHeaderSize;
  if (available < kRecordFooterSize || length > available - kRecordFooterSize) return frame;

  frame.payload = rest.subspan(kRecordHeaderSize, length);
  frame.next_offset = offset + kRecordHeaderSize + length + kRecordFooterSize;
  // Unchecked, the footer is not even loaded: a reader that frames records out of order (a
  // rule reading values) would otherwise take a cache miss at the end of every record.
  if (!options.check_data_crc) {
    frame.status = FrameStatus::Record;
    return frame;
  }
  const std::uint32_t footer = load_le<std::uint32_t>(frame.payload.data() + length);
  const bool footer_ok =
      footer == kSmdebugPlaceholderFooter || footer == mask_crc(crc32c(frame.payload));
  frame.status = footer_ok ? FrameStatus::Record : FrameStatus::BadDataCrc;
  return frame;
}

RecordScan scan_records(const SharedBytes& file_bytes, std::uint64_t start_offset,
                        const std::string& file_name, const FramingOptions& options) {
  RecordScan scan;
  const std::span<const std::byte> buffer = file_bytes.span();
  std::uint64_t offset = start_offset;
  for (;;) {
    const Frame frame = frame_record_at(buffer, offset, options);
    switch (frame.status) {
      case FrameStatus::Record:
        scan.records.push_back(
            {offset, file_bytes.slice(offset + kRecordHeaderSize, frame.payload.size())});
        offset = frame.next_offset;
        continue;
      case FrameStatus::BadDataCrc:
        scan.issues.push_back({offset, frame.status, describe_bad_frame(buffer, frame, file_name)});
        offset = frame.next_offset;
        continue;
      case FrameStatus::BadLengthCrc:
      case FrameStatus::ImpossibleLength:
        scan.issues.push_back({offset, frame.status, describe_bad_frame(buffer, frame, file_name)});
        scan.file_dead = true;
        break;
      case FrameStatus::Incomplete:
        break;
    }
    scan.resume_offset = offset;
    return scan;
  }
}

Compression detect_compression(std::span<const std::byte> file_start) {
  if (has_valid_length_crc(file_start)) return Compression::None;
  if (file_start.size() >= 2) {
    const auto first = std::to_integer<unsigned>(file_start[0]);
    const auto second = std::to_integer<unsigned>(file_start[1]);
    if (first == 0x1f && second == 0x8b) return Compression::Gzip;
    // RFC 1950: deflate (CM 8) with a window of at most 32 KiB, and a header check that makes
    // the first two bytes, read big-endian, a multiple of 31.
    if ((first & 0x0fu) == 8 && (first >> 4) <= 7 && ((first << 8) | second) % 31 == 0) {
      return Compression::Zlib;
    }
  }
  return Compression::None;
}

namespace {

// How many bytes an inflation reserves at a time: small steps of the budget, so that what it
// holds is never much more than what it wrote, and few enough that reserving costs nothing
// beside inflating (a lock per 4 MiB at most).
std::size_t reservation_step(std::size_t limit) {
  return std::clamp<std::size_t>(limit / 64, 4096, std::size_t{4} << 20);
}

std::string container_name(Compression compression) {
  return compression == Compression::Gzip ? "gzip" : "zlib";
}

// One attempt at inflating `compressed` whole within `reservation`'s budget; nullopt when the
// reservation was told to yield (what was written is given back with the buffer).
std::optional<SharedBytes> inflate_within(const SharedBytes& compressed, Compression compression,
                                          const std::string& file_name,
                                          GrowingReservation& reservation) {
  z_stream stream{};
  const int window_bits = compression == Compression::Gzip ? 16 + MAX_WBITS : MAX_WBITS;
  if (inflateInit2(&stream, window_bits) != Z_OK) throw std::bad_alloc();
  struct StreamEnd {
    z_stream* stream;
    ~StreamEnd() { inflateEnd(stream); }
  } stream_end{&stream};

  // zlib counts in uInt: feed and drain at most this much at a time.
  constexpr std::size_t kMaxChunk = std::numeric_limits<uInt>::max();
  const std::size_t limit = reservation.budget().limit();
  const std::size_t step = reservation_step(limit);
  // The buffer's capacity is address space; what is written (and so resident) is what the
  // reservation covers, a step at a time.
  InflateBuffer out(std::min(limit, std::max<std::size_t>(compressed.size() * 4, 64 * 1024)));
  std::size_t covered = 0;  // bytes of `out` the reservation holds for this attempt
  std::size_t produced = 0;
  const std::byte* in = compressed.data();
  std::size_t in_left = compressed.size();

  for (;;) {
    if (stream.avail_in == 0) {
      const std::size_t chunk = std::min(in_left, kMaxChunk);
      stream.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in));
      stream.avail_in = static_cast<uInt>(chunk);
      in += chunk;
      in_left -= chunk;
    }
    if (produced == covered) {
      const std::size_t more = std::min(step, limit - reservation.bytes());
      const GrowingReservation::Grant grant =
          more == 0 ? GrowingReservation::Grant::Refused : reservation.grow(more);
      if (grant == GrowingReservation::Grant::Yield) return std::nullopt;
      if (grant == GrowingReservation::Grant::Refused) {
        if (more == 0) {
          throw FormatError(file_name, "inflates to more than " + std::to_string(limit) +
                                           " bytes, the memory budget; not read (a larger "
                                           "budget reads it: --max-memory)");
        }
        throw FormatError(file_name, "inflates to more than " + std::to_string(covered) +
                                         " bytes, all that the memory budget of " +
                                         std::to_string(limit) +
                                         " bytes has free; not read (a larger budget reads "
                                         "it: --max-memory)");
      }
      covered += more;
      if (out.capacity() < covered) out.reserve(std::min(limit, std::max(covered, produced * 2)));
    }
    const std::size_t room = std::min(std::min(out.capacity(), covered) - produced, kMaxChunk);
    stream.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
    stream.avail_out = static_cast<uInt>(room);

    const int status = inflate(&stream, Z_NO_FLUSH);
    produced += room - stream.avail_out;
    const bool input_exhausted = stream.avail_in == 0 && in_left == 0;

    if (status == Z_STREAM_END) {
      // Concatenated gzip members (or zlib streams) read as one file, as gunzip does.
      if (input_exhausted) break;
      if (inflateReset(&stream) != Z_OK) throw std::bad_alloc();
      continue;
    }
    if (status == Z_OK) continue;
    if (status == Z_BUF_ERROR) {
      // No progress possible: either the output is full (grow it) or the input ran out
      // mid-stream, which is a file still being written.
      if (stream.avail_out == 0) continue;
      if (input_exhausted) break;
      continue;
    }
    if (status == Z_MEM_ERROR) throw std::bad_alloc();
    const std::uint64_t consumed = compressed.size() - in_left - stream.avail_in;
    throw FormatError(file_name, "corrupt " + container_name(compression) +
                                     " data near compressed offset " + std::to_string(consumed) +
                                     ": " +
                                     (stream.msg != nullptr ? stream.msg : "inflate failed"));
  }
  return out.release(produced);
}

}  // namespace

SharedBytes decompress_file(const SharedBytes& compressed, Compression compression,
                            const std::string& file_name, GrowingReservation& reservation) {
  if (compression == Compression::None) return compressed;
  for (;;) {
    if (std::optional<SharedBytes> inflated =
            inflate_within(compressed, compression, file_name, reservation)) {
      return std::move(*inflated);
    }
    // Older work needs the bytes: it ends before this one starts again.
    reservation.yield_and_wait();
  }
}

SharedBytes decompress_file(const SharedBytes& compressed, Compression compression,
                            const std::string& file_name, std::uint64_t max_bytes) {
  MemoryBudget budget(static_cast<std::size_t>(
      std::min<std::uint64_t>(max_bytes, std::numeric_limits<std::size_t>::max())));
  GrowingReservation reservation(budget);
  return decompress_file(compressed, compression, file_name, reservation);
}

}  // namespace rulestream
