#include "stages/format/index_file.hpp"

#include <array>
#include <boost/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "core/model/exceptions.hpp"
#include "core/model/python_json.hpp"
#include "stages/format/index_file_canonical.hpp"
#include "stages/format/index_file_sax.hpp"
#include "stages/format/json_document.hpp"

namespace rulestream {
namespace {

Mode parse_mode(const JsonFieldReader& reader, const boost::json::value& value,
                const JsonField& field) {
  const std::string_view name = strip_python_whitespace(reader.as_string(value, field));
  // Exactly the ModeKeys names, as smdebug's reader requires (mode_from_name is looser).
  for (const Mode mode : kAllModes) {
    if (mode_name(mode) == name) return mode;
  }
  reader.fail(field, "names an unknown mode \"" + std::string(name) +
                         "\" (expected TRAIN, EVAL, PREDICT or GLOBAL)");
}

std::vector<TensorLocation> parse_tensor_payload(const JsonFieldReader& reader,
                                                 const boost::json::value& value,
                                                 const JsonField& field) {
  const boost::json::array& entries = reader.as_array(value, field);
  std::vector<TensorLocation> tensors;
  tensors.reserve(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const JsonField entry_field = field.element(i);
    const boost::json::object& entry = reader.as_object(entries[i], entry_field);
    const JsonField name_field = entry_field.member("tensorname");
    const JsonField start_field = entry_field.member("start_idx");
    const JsonField length_field = entry_field.member("length");
    TensorLocation& tensor = tensors.emplace_back();
    tensor.tensor_name =
        reader.as_string(reader.require(entry, "tensorname", name_field), name_field);
    tensor.start = reader.as_uint64(reader.require(entry, "start_idx", start_field), start_field);
    tensor.length = reader.as_uint64(reader.require(entry, "length", length_field), length_field);
    if (tensor.start + tensor.length < tensor.start) {
      reader.fail(length_field, "runs past 2^64 bytes");
    }
  }
  return tensors;
}

std::vector<ShapeEntry> parse_shape_payload(const JsonFieldReader& reader,
                                            const boost::json::value& value,
                                            const JsonField& field) {
  const boost::json::array& entries = reader.as_array(value, field);
  std::vector<ShapeEntry> shapes;
  shapes.reserve(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const JsonField entry_field = field.element(i);
    const boost::json::object& entry = reader.as_object(entries[i], entry_field);
    const JsonField name_field = entry_field.member("tensorname");
    const JsonField original_field = entry_field.member("originalname");
    const JsonField shape_field = entry_field.member("shape");
    ShapeEntry& shape = shapes.emplace_back();
    shape.tensor_name =
        reader.as_string(reader.require(entry, "tensorname", name_field), name_field);
    shape.original_name =
        reader.as_string(reader.require(entry, "originalname", original_field), original_field);
    const boost::json::array& dims =
        reader.as_array(reader.require(entry, "shape", shape_field), shape_field);
    shape.shape.reserve(dims.size());
    for (std::size_t d = 0; d < dims.size(); ++d) {
      shape.shape.push_back(reader.as_non_negative_int64(dims[d], shape_field.element(d)));
    }
  }
  return shapes;
}

}  // namespace

IndexFile parse_index_file(std::string_view json, const std::string& path) {
  if (std::optional<IndexFile> index = parse_index_file_canonical(json)) return std::move(*index);
  if (std::optional<IndexFile> index = parse_index_file_fast(json)) return std::move(*index);
  return parse_index_file_document(json, path);
}

IndexFile parse_index_file_document(std::string_view json, const std::string& path) {
  // Index files are small and parsed once: a monotonic arena makes the parse nearly free of
  // allocator calls, and everything is copied out before it goes.
  std::array<unsigned char, 16384> arena;
  boost::json::monotonic_resource resource(arena.data(), arena.size());
  const boost::json::value document = parse_json_document(json, path, &resource);

  const JsonFieldReader reader(path);
  const JsonField root = JsonField::root();
  const boost::json::object& top = reader.as_object(document, root);

  IndexFile index;
  const JsonField meta_field = root.member("meta");
  const boost::json::object& meta =
      reader.as_object(reader.require(top, "meta", meta_field), meta_field);
  const JsonField mode_field = meta_field.member("mode");
  index.mode = parse_mode(reader, reader.require(meta, "mode", mode_field), mode_field);
  const JsonField mode_step_field = meta_field.member("mode_step");
  index.mode_step = reader.as_non_negative_int64(reader.require(meta, "mode_step", mode_step_field),
                                                 mode_step_field);
  const JsonField event_file_field = meta_field.member("event_file_name");
  if (const auto* value = JsonFieldReader::find(meta, "event_file_name");
      value != nullptr && !value->is_null()) {
    index.event_file_name = std::string(reader.as_string(*value, event_file_field));
  }

  // Older writers may leave the tensor payload out when a step saved only shapes.
  const JsonField tensors_field = root.member("tensor_payload");
  if (const auto* value = JsonFieldReader::find(top, "tensor_payload");
      value != nullptr && !value->is_null()) {
    index.tensors = parse_tensor_payload(reader, *value, tensors_field);
  }
  if (!index.tensors.empty() && !index.event_file_name) {
    reader.fail(event_file_field, "is missing, but tensor_payload lists " +
                                      std::to_string(index.tensors.size()) + " tensors");
  }

  const JsonField shapes_field = root.member("shape_payload");
  if (const auto* value = JsonFieldReader::find(top, "shape_payload");
      value != nullptr && !value->is_null()) {
    index.shapes = parse_shape_payload(reader, *value, shapes_field);
  }
  return index;
}

std::string serialize_index_file(const IndexFile& index) {
  boost::json::object meta;
  meta["mode"] = mode_name(index.mode);
  meta["mode_step"] = index.mode_step;
  if (index.event_file_name) meta["event_file_name"] = *index.event_file_name;

  boost::json::array tensors;
  tensors.reserve(index.tensors.size());
  for (const TensorLocation& tensor : index.tensors) {
    tensors.push_back(boost::json::object{{"tensorname", tensor.tensor_name},
                                          {"start_idx", tensor.start},
                                          {"length", tensor.length}});
  }

  boost::json::object document;
  document["meta"] = std::move(meta);
  document["tensor_payload"] = std::move(tensors);
  if (index.shapes) {
    boost::json::array shapes;
    shapes.reserve(index.shapes->size());
    for (const ShapeEntry& shape : *index.shapes) {
      shapes.push_back(boost::json::object{{"tensorname", shape.tensor_name},
                                           {"originalname", shape.original_name},
                                           {"shape", boost::json::value_from(shape.shape)}});
    }
    document["shape_payload"] = std::move(shapes);
  }
  return dump_python_json(document);
}

}  // namespace rulestream
