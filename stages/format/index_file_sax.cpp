#include "stages/format/index_file_sax.hpp"

#include <algorithm>
#include <array>
#include <boost/json/array.hpp>
#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/error.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse_options.hpp>
#include <boost/json/string.hpp>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "stages/format/json_document.hpp"

namespace rulestream {
namespace {

// Keys and the mode name are a few characters: kept inline, so reading them never allocates.
// Longer text is remembered only as too long: no key we read, and a mode name left to the
// document reader.
class ShortText {
 public:
  void append(std::string_view part) {
    if (part.size() > data_.size() - size_) {
      too_long_ = true;
      return;
    }
    std::memcpy(data_.data() + size_, part.data(), part.size());
    size_ += part.size();
  }
  void clear() {
    size_ = 0;
    too_long_ = false;
  }
  bool too_long() const { return too_long_; }
  std::string_view view() const { return {data_.data(), size_}; }

 private:
  std::array<char, 24> data_{};
  std::size_t size_ = 0;
  bool too_long_ = false;
};

// Which object or array the parser is in. What the reader reads nests at most four deep and each
// place has exactly one possible parent, so the place alone says where an end event returns to;
// values under unknown keys are only counted into and out of (skip_depth_).
enum class Place : std::uint8_t {
  Document,    // before the top-level value
  Top,         // the top-level object
  Meta,        // "meta"
  TensorList,  // "tensor_payload"
  Tensor,      // one of its entries
  ShapeList,   // "shape_payload"
  Shape,       // one of its entries
  Dims,        // an entry's "shape"
  Skipped,     // inside the value of a key the reader does not know
  Done,        // after the top-level object
};

// The member a value belongs to, one bit each for the `seen` mask of its object: a repeated key
// (the document keeps the last) or a missing required one is left to the document reader.
enum class Field : std::uint16_t {
  Unknown = 0,
  Meta = 1 << 0,
  TensorPayload = 1 << 1,
  ShapePayload = 1 << 2,
  Mode = 1 << 3,
  ModeStep = 1 << 4,
  EventFileName = 1 << 5,
  TensorName = 1 << 6,
  StartIdx = 1 << 7,
  Length = 1 << 8,
  OriginalName = 1 << 9,
  ShapeDims = 1 << 10,
};

constexpr std::uint16_t bits(Field field) {
  return static_cast<std::uint16_t>(field);
}
template <typename... Fields>
constexpr std::uint16_t bits(Field first, Fields... rest) {
  return static_cast<std::uint16_t>(bits(first) | bits(rest...));
}

class IndexFileHandler {
 public:
  // The same limits as boost::json::parser's own handler, so both readers refuse the same
  // documents.
  static constexpr std::size_t max_object_size = boost::json::object::max_size();
  static constexpr std::size_t max_array_size = boost::json::array::max_size();
  static constexpr std::size_t max_key_size = boost::json::string::max_size();
  static constexpr std::size_t max_string_size = boost::json::string::max_size();

  explicit IndexFileHandler(std::size_t entries_bound) : entries_bound_(entries_bound) {}

  // The index read, once the parse succeeded; nullopt when anything was left unchecked.
  std::optional<IndexFile> finish() && {
    if (place_ != Place::Done || (top_seen_ & bits(Field::Meta)) == 0) {
      return std::nullopt;
    }
    if (!index_.tensors.empty() && !index_.event_file_name) return std::nullopt;
    return std::move(index_);
  }

  bool on_document_begin(boost::system::error_code&) { return true; }
  bool on_document_end(boost::system::error_code&) { return true; }

  bool on_object_begin(boost::system::error_code& ec) {
    switch (place_) {
      case Place::Document:
        place_ = Place::Top;
        return true;
      case Place::Top:
        if (pending_ == Field::Meta) {
          place_ = Place::Meta;
          seen_ = 0;
          return true;
        }
        return skip_or_decline(ec);
      case Place::TensorList:
        index_.tensors.emplace_back();
        place_ = Place::Tensor;
        seen_ = 0;
        return true;
      case Place::ShapeList:
        index_.shapes->emplace_back();
        place_ = Place::Shape;
        seen_ = 0;
        return true;
      default:
        return skip_or_decline(ec);
    }
  }

  bool on_object_end(std::size_t, boost::system::error_code& ec) {
    switch (place_) {
      case Place::Top:
        place_ = Place::Done;
        return true;
      case Place::Meta:
        if ((seen_ & bits(Field::Mode, Field::ModeStep)) != bits(Field::Mode, Field::ModeStep)) {
          return decline(ec);
        }
        place_ = Place::Top;
        return true;
      case Place::Tensor: {
        const TensorLocation& tensor = index_.tensors.back();
        if (seen_ != bits(Field::TensorName, Field::StartIdx, Field::Length) ||
            tensor.start + tensor.length < tensor.start) {
          return decline(ec);
        }
        place_ = Place::TensorList;
        return true;
      }
      case Place::Shape:
        if (seen_ != bits(Field::TensorName, Field::OriginalName, Field::ShapeDims)) {
          return decline(ec);
        }
        place_ = Place::ShapeList;
        return true;
      default:
        return leave_skipped(ec);
    }
  }

  bool on_array_begin(boost::system::error_code& ec) {
    switch (place_) {
      case Place::Top:
        if (pending_ == Field::TensorPayload) {
          index_.tensors.reserve(entries_bound_);
          place_ = Place::TensorList;
          return true;
        }
        if (pending_ == Field::ShapePayload) {
          // Tensor entries come first in smdebug's files; the braces left are the shapes.
          index_.shapes.emplace().reserve(entries_bound_ -
                                          std::min(entries_bound_, index_.tensors.size()));
          place_ = Place::ShapeList;
          return true;
        }
        return skip_or_decline(ec);
      case Place::Shape:
        if (pending_ == Field::ShapeDims) {
          place_ = Place::Dims;
          return true;
        }
        return skip_or_decline(ec);
      default:
        return skip_or_decline(ec);
    }
  }

  bool on_array_end(std::size_t, boost::system::error_code& ec) {
    switch (place_) {
      case Place::TensorList:
      case Place::ShapeList:
        place_ = Place::Top;
        return true;
      case Place::Dims:
        place_ = Place::Shape;
        return true;
      default:
        return leave_skipped(ec);
    }
  }

  bool on_key_part(std::string_view part, std::size_t, boost::system::error_code&) {
    if (place_ != Place::Skipped) key_.append(part);
    return true;
  }

  bool on_key(std::string_view part, std::size_t, boost::system::error_code& ec) {
    if (place_ == Place::Skipped) return true;
    key_.append(part);
    pending_ = key_.too_long() ? Field::Unknown : field_named(key_.view());
    key_.clear();
    if (pending_ == Field::Unknown) return true;
    std::uint16_t& seen = place_ == Place::Top ? top_seen_ : seen_;
    if ((seen & bits(pending_)) != 0) return decline(ec);
    seen |= bits(pending_);
    return true;
  }

  bool on_string_part(std::string_view part, std::size_t, boost::system::error_code& ec) {
    return take_text(part, ec);
  }

  bool on_string(std::string_view part, std::size_t, boost::system::error_code& ec) {
    if (!take_text(part, ec)) return false;
    if (place_ == Place::Meta && pending_ == Field::Mode) return take_mode(ec);
    return true;
  }

  bool on_number_part(std::string_view, boost::system::error_code&) { return true; }

  bool on_int64(std::int64_t value, std::string_view, boost::system::error_code& ec) {
    if (value < 0) return ignore_or_decline(ec);
    return take_integer(static_cast<std::uint64_t>(value), ec);
  }

  bool on_uint64(std::uint64_t value, std::string_view, boost::system::error_code& ec) {
    return take_integer(value, ec);
  }

  bool on_double(double, std::string_view, boost::system::error_code& ec) {
    return ignore_or_decline(ec);
  }

  bool on_bool(bool, boost::system::error_code& ec) { return ignore_or_decline(ec); }

  bool on_null(boost::system::error_code& ec) {
    // A null payload or event file name reads as absent, as in the document reader.
    if (place_ == Place::Top &&
        (pending_ == Field::TensorPayload || pending_ == Field::ShapePayload)) {
      return true;
    }
    if (place_ == Place::Meta && pending_ == Field::EventFileName) return true;
    return ignore_or_decline(ec);
  }

  bool on_comment_part(std::string_view, boost::system::error_code&) { return true; }
  bool on_comment(std::string_view, boost::system::error_code&) { return true; }

 private:
  static bool decline(boost::system::error_code& ec) {
    // Not reported anywhere: any error makes parse_index_file ask the document reader.
    ec = boost::json::error::exception;
    return false;
  }

  Field field_named(std::string_view key) const {
    switch (place_) {
      case Place::Top:
        if (key == "meta") return Field::Meta;
        if (key == "tensor_payload") return Field::TensorPayload;
        if (key == "shape_payload") return Field::ShapePayload;
        break;
      case Place::Meta:
        if (key == "mode") return Field::Mode;
        if (key == "mode_step") return Field::ModeStep;
        if (key == "event_file_name") return Field::EventFileName;
        break;
      case Place::Tensor:
        if (key == "tensorname") return Field::TensorName;
        if (key == "start_idx") return Field::StartIdx;
        if (key == "length") return Field::Length;
        break;
      case Place::Shape:
        if (key == "tensorname") return Field::TensorName;
        if (key == "originalname") return Field::OriginalName;
        if (key == "shape") return Field::ShapeDims;
        break;
      default:
        break;
    }
    return Field::Unknown;
  }

  // Only the members of objects the reader knows may hold values it does not read.
  bool in_known_object() const {
    return place_ == Place::Top || place_ == Place::Meta || place_ == Place::Tensor ||
           place_ == Place::Shape;
  }

  // A scalar the reader has no use for: fine under an unknown key, else a fault.
  bool ignore_or_decline(boost::system::error_code& ec) const {
    if (place_ == Place::Skipped || (in_known_object() && pending_ == Field::Unknown)) {
      return true;
    }
    return decline(ec);
  }

  // An object or array the reader has no use for: skipped whole under an unknown key (one level
  // deeper when inside a skipped value already), else a fault.
  bool skip_or_decline(boost::system::error_code& ec) {
    if (place_ == Place::Skipped) {
      ++skip_depth_;
      return true;
    }
    if (!in_known_object() || pending_ != Field::Unknown) return decline(ec);
    skip_return_ = place_;
    place_ = Place::Skipped;
    skip_depth_ = 1;
    return true;
  }

  // The end of an object or array inside a skipped value.
  bool leave_skipped(boost::system::error_code& ec) {
    if (place_ != Place::Skipped) return decline(ec);  // the grammar allows no other end here
    if (--skip_depth_ == 0) place_ = skip_return_;
    return true;
  }

  bool take_text(std::string_view part, boost::system::error_code& ec) {
    switch (place_) {
      case Place::Meta:
        if (pending_ == Field::Mode) {
          mode_.append(part);
          return true;
        }
        if (pending_ == Field::EventFileName) {
          if (!index_.event_file_name) index_.event_file_name.emplace();
          index_.event_file_name->append(part);
          return true;
        }
        break;
      case Place::Tensor:
        if (pending_ == Field::TensorName) {
          index_.tensors.back().tensor_name.append(part);
          return true;
        }
        break;
      case Place::Shape:
        if (pending_ == Field::TensorName) {
          index_.shapes->back().tensor_name.append(part);
          return true;
        }
        if (pending_ == Field::OriginalName) {
          index_.shapes->back().original_name.append(part);
          return true;
        }
        break;
      default:
        break;
    }
    return ignore_or_decline(ec);
  }

  bool take_mode(boost::system::error_code& ec) {
    if (mode_.too_long()) return decline(ec);
    const std::string_view name = strip_python_whitespace(mode_.view());
    for (const Mode mode : kAllModes) {
      if (mode_name(mode) == name) {
        index_.mode = mode;
        return true;
      }
    }
    return decline(ec);
  }

  bool take_integer(std::uint64_t value, boost::system::error_code& ec) {
    constexpr auto kInt64Max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    switch (place_) {
      case Place::Meta:
        if (pending_ != Field::ModeStep) break;
        if (value > kInt64Max) return decline(ec);
        index_.mode_step = static_cast<std::int64_t>(value);
        return true;
      case Place::Tensor:
        if (pending_ == Field::StartIdx) {
          index_.tensors.back().start = value;
          return true;
        }
        if (pending_ == Field::Length) {
          index_.tensors.back().length = value;
          return true;
        }
        break;
      case Place::Dims:
        if (value > kInt64Max) return decline(ec);
        index_.shapes->back().shape.push_back(static_cast<std::int64_t>(value));
        return true;
      default:
        break;
    }
    return ignore_or_decline(ec);
  }

  IndexFile index_;
  std::size_t entries_bound_;
  Place place_ = Place::Document;
  Field pending_ = Field::Unknown;
  std::uint16_t top_seen_ = 0;
  std::uint16_t seen_ = 0;  // of the meta object or the entry being read
  Place skip_return_ = Place::Document;
  std::size_t skip_depth_ = 0;
  ShortText key_;
  ShortText mode_;
};

}  // namespace

std::size_t index_entries_bound(std::string_view json) {
  // memchr jumps from brace to brace (about a hundred bytes apart): a byte-by-byte count cost a
  // quarter of the whole parse.
  std::size_t braces = 0;
  const char* at = json.data();
  const char* const end = json.data() + json.size();
  while (at != end) {
    const void* found = std::memchr(at, '{', static_cast<std::size_t>(end - at));
    if (found == nullptr) break;
    ++braces;
    at = static_cast<const char*>(found) + 1;
  }
  return braces > 2 ? braces - 2 : 0;  // less the top object and meta
}

std::optional<IndexFile> parse_index_file_fast(std::string_view json) {
  boost::json::basic_parser<IndexFileHandler> parser(boost::json::parse_options{},
                                                     index_entries_bound(json));
  boost::system::error_code ec;
  // Like boost::json::parser::write: the final buffer, and nothing may follow the value.
  const std::size_t consumed = parser.write_some(false, json.data(), json.size(), ec);
  if (ec || consumed != json.size()) return std::nullopt;
  return std::move(parser.handler()).finish();
}

}  // namespace rulestream
