#include "stages/format/tfrecord_writer.hpp"

#include <zlib.h>

#include <algorithm>
#include <limits>
#include <new>
#include <stdexcept>

#include "stages/format/crc32c.hpp"

namespace rulestream {
namespace {

void store_le(char* out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out[i] = static_cast<char>((value >> (8 * i)) & 0xffu);
}

}  // namespace

void append_record(std::string& out, std::span<const std::byte> payload, FooterStyle footer) {
  char header[kRecordHeaderSize];
  store_le(header, payload.size(), 8);
  store_le(header + 8, mask_crc(crc32c(std::as_bytes(std::span(header, 8)))), 4);

  char footer_bytes[kRecordFooterSize];
  store_le(
      footer_bytes,
      footer == FooterStyle::PayloadCrc ? mask_crc(crc32c(payload)) : kSmdebugPlaceholderFooter, 4);

  out.reserve(out.size() + sizeof header + payload.size() + sizeof footer_bytes);
  out.append(header, sizeof header);
  out.append(reinterpret_cast<const char*>(payload.data()), payload.size());
  out.append(footer_bytes, sizeof footer_bytes);
}

void append_record(std::string& out, std::string_view payload, FooterStyle footer) {
  append_record(out, std::as_bytes(std::span(payload.data(), payload.size())), footer);
}

std::string compress_stream(std::string_view stream, Compression compression) {
  if (compression == Compression::None) return std::string(stream);

  // TensorFlow's ZlibCompressionOptions: default level and strategy, memLevel 9, a 32 KiB
  // window; GZIP is the same deflate stream in a gzip container.
  z_stream z{};
  const int window_bits = compression == Compression::Gzip ? 16 + MAX_WBITS : MAX_WBITS;
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, window_bits, 9, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    throw std::bad_alloc();
  }
  struct StreamEnd {
    z_stream* stream;
    ~StreamEnd() { deflateEnd(stream); }
  } stream_end{&z};

  constexpr std::size_t kMaxChunk = std::numeric_limits<uInt>::max();
  std::string out;
  out.resize(deflateBound(&z, static_cast<uLong>(std::min(stream.size(), kMaxChunk))) + 64);
  std::size_t produced = 0;
  const char* in = stream.data();
  std::size_t in_left = stream.size();

  for (;;) {
    if (z.avail_in == 0 && in_left > 0) {
      const std::size_t chunk = std::min(in_left, kMaxChunk);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in));
      z.avail_in = static_cast<uInt>(chunk);
      in += chunk;
      in_left -= chunk;
    }
    if (produced == out.size()) out.resize(out.size() * 2);
    const std::size_t room = std::min(out.size() - produced, kMaxChunk);
    z.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
    z.avail_out = static_cast<uInt>(room);
    const int flush = in_left == 0 ? Z_FINISH : Z_NO_FLUSH;
    const int status = deflate(&z, flush);
    produced += room - z.avail_out;
    if (status == Z_STREAM_END) break;
    if (status != Z_OK && status != Z_BUF_ERROR) {
      throw std::runtime_error("compress_stream: deflate failed with status " +
                               std::to_string(status));
    }
  }
  out.resize(produced);
  return out;
}

}  // namespace rulestream
