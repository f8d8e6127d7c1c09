#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "stages/format/tfrecord_reader.hpp"

namespace rulestream {

enum class FooterStyle {
  SmdebugPlaceholder,  // what smdebug writes (kSmdebugPlaceholderFooter)
  PayloadCrc,          // what TensorFlow and TensorBoard write
};

// Appends one framed record to `out`.
void append_record(std::string& out, std::span<const std::byte> payload,
                   FooterStyle footer = FooterStyle::SmdebugPlaceholder);
void append_record(std::string& out, std::string_view payload,
                   FooterStyle footer = FooterStyle::SmdebugPlaceholder);

// Compresses a whole TFRecord stream the way TensorFlow's ZLIB / GZIP options do.
std::string compress_stream(std::string_view stream, Compression compression);

}  // namespace rulestream
