#include "stages/format/collections_file.hpp"

#include <boost/json.hpp>
#include <climits>
#include <string>

#include "core/model/exceptions.hpp"
#include "core/model/name_regex.hpp"
#include "core/model/python_json.hpp"
#include "stages/format/json_document.hpp"

namespace rulestream {
namespace {

// A missing or null member: smdebug's from_dict falls back to a default for both.
const boost::json::value* find_present(const boost::json::object& object, std::string_view key) {
  const boost::json::value* value = JsonFieldReader::find(object, key);
  return value == nullptr || value->is_null() ? nullptr : value;
}

// "min,max,l2_norm,abs_mean" -> keys in that order; pieces are trimmed and empty ones skipped,
// as smdebug's split() leaves them.
std::vector<ReductionKey> parse_reductions(const JsonFieldReader& reader, std::string_view text,
                                           const JsonField& field, std::string_view collection) {
  std::vector<ReductionKey> keys;
  while (true) {
    const std::size_t comma = text.find(',');
    const std::string_view piece = strip_python_whitespace(text.substr(0, comma));
    if (!piece.empty()) {
      const auto key = reduction_key_from_name(piece);
      if (!key) {
        reader.fail(field, "of collection '" + std::string(collection) +
                               "' names an unknown reduction \"" + std::string(piece) + "\"");
      }
      keys.push_back(*key);
    }
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return keys;
}

ReductionConfig parse_reduction_config(const JsonFieldReader& reader,
                                       const boost::json::value& value, const JsonField& field,
                                       std::string_view collection) {
  const boost::json::object& object = reader.as_object(value, field);
  ReductionConfig config;
  // smdebug's ReductionConfig.from_dict reads a missing save_raw_tensor as False.
  config.save_raw_tensor = false;
  if (const auto* raw = find_present(object, "save_raw_tensor")) {
    config.save_raw_tensor = reader.as_bool(*raw, field.member("save_raw_tensor"));
  }
  if (const auto* reductions = find_present(object, "reductions")) {
    const JsonField reductions_field = field.member("reductions");
    config.reductions = parse_reductions(reader, reader.as_string(*reductions, reductions_field),
                                         reductions_field, collection);
  }
  if (const auto* shape = find_present(object, "save_shape")) {
    config.save_shape = reader.as_bool(*shape, field.member("save_shape"));
  }
  return config;
}

SaveConfigMode parse_save_config_mode(const JsonFieldReader& reader,
                                      const boost::json::value& value, const JsonField& field) {
  const boost::json::object& object = reader.as_object(value, field);
  SaveConfigMode mode;
  if (const auto* interval = find_present(object, "save_interval")) {
    const JsonField interval_field = field.member("save_interval");
    mode.save_interval = reader.as_non_negative_int64(*interval, interval_field);
    if (mode.save_interval == 0) reader.fail(interval_field, "must be at least 1, got 0");
  }
  if (const auto* steps = find_present(object, "save_steps")) {
    const JsonField steps_field = field.member("save_steps");
    const boost::json::array& array = reader.as_array(*steps, steps_field);
    mode.save_steps.reserve(array.size());
    for (std::size_t i = 0; i < array.size(); ++i) {
      mode.save_steps.push_back(reader.as_non_negative_int64(array[i], steps_field.element(i)));
    }
  }
  if (const auto* start = find_present(object, "start_step")) {
    mode.start_step = reader.as_non_negative_int64(*start, field.member("start_step"));
  }
  if (const auto* end = find_present(object, "end_step")) {
    mode.end_step = reader.as_non_negative_int64(*end, field.member("end_step"));
  }
  return mode;
}

std::map<Mode, std::optional<SaveConfigMode>> parse_save_config(const JsonFieldReader& reader,
                                                                const boost::json::value& value,
                                                                const JsonField& field) {
  std::map<Mode, std::optional<SaveConfigMode>> modes;
  for (const auto& member : reader.as_object(value, field)) {
    const JsonField mode_field = field.member(member.key());
    std::optional<Mode> mode;
    for (const Mode candidate : kAllModes) {
      if (mode_name(candidate) == member.key()) mode = candidate;
    }
    if (!mode) reader.fail(mode_field, "is not a mode (expected TRAIN, EVAL, PREDICT or GLOBAL)");
    // null: a mode the user never configured.
    modes[*mode] = member.value().is_null()
                       ? std::nullopt
                       : std::optional(parse_save_config_mode(reader, member.value(), mode_field));
  }
  return modes;
}

Collection parse_collection(const JsonFieldReader& reader, const boost::json::value& value,
                            const JsonField& field, std::string_view key) {
  const boost::json::object& object = reader.as_object(value, field);
  Collection collection;
  collection.name = key;
  if (const auto* name = find_present(object, "name")) {
    collection.name = reader.as_string(*name, field.member("name"));
  }
  if (const auto* regexes = find_present(object, "include_regex")) {
    const JsonField regex_field = field.member("include_regex");
    const boost::json::array& array = reader.as_array(*regexes, regex_field);
    collection.include_regex.reserve(array.size());
    for (std::size_t i = 0; i < array.size(); ++i) {
      collection.include_regex.emplace_back(reader.as_string(array[i], regex_field.element(i)));
    }
  }
  if (const auto* names = find_present(object, "tensor_names")) {
    const JsonField names_field = field.member("tensor_names");
    const boost::json::array& array = reader.as_array(*names, names_field);
    for (std::size_t i = 0; i < array.size(); ++i) {
      collection.tensor_names.emplace(reader.as_string(array[i], names_field.element(i)));
    }
  }
  if (const auto* config = find_present(object, "reduction_config")) {
    collection.reduction_config =
        parse_reduction_config(reader, *config, field.member("reduction_config"), collection.name);
  }
  if (const auto* config = find_present(object, "save_config")) {
    collection.save_config = parse_save_config(reader, *config, field.member("save_config"));
  }
  if (const auto* histogram = find_present(object, "save_histogram")) {
    collection.save_histogram = reader.as_bool(*histogram, field.member("save_histogram"));
  }
  return collection;
}

// smdebug spells norms "l1_norm" / "abs_l2_norm" in configs (its reader rejects a bare "l1").
std::string config_reduction_name(ReductionKey key) {
  std::string name = reduction_key_name(key);
  if (key.reduction == Reduction::L1 || key.reduction == Reduction::L2) name += "_norm";
  return name;
}

boost::json::value reduction_config_json(const ReductionConfig& config) {
  std::string reductions;
  for (const ReductionKey key : config.reductions) {
    if (!reductions.empty()) reductions += ',';
    reductions += config_reduction_name(key);
  }
  return boost::json::object{{"save_raw_tensor", config.save_raw_tensor},
                             {"reductions", reductions},
                             {"save_shape", config.save_shape}};
}

boost::json::value save_config_json(const std::map<Mode, std::optional<SaveConfigMode>>& modes) {
  // smdebug writes a collection without any save config as null; with one, every mode.
  if (modes.empty()) return nullptr;
  boost::json::object object;
  for (const auto& [mode, config] : modes) {
    if (!config) {
      object[mode_name(mode)] = nullptr;
      continue;
    }
    boost::json::value end_step = nullptr;
    if (config->end_step) end_step = *config->end_step;
    object[mode_name(mode)] =
        boost::json::object{{"save_interval", config->save_interval},
                            {"save_steps", boost::json::value_from(config->save_steps)},
                            {"start_step", config->start_step},
                            {"end_step", std::move(end_step)}};
  }
  return object;
}

boost::json::value collection_json(const Collection& collection) {
  boost::json::array tensor_names;
  tensor_names.reserve(collection.tensor_names.size());
  for (const std::string& name : collection.tensor_names) tensor_names.emplace_back(name);
  return boost::json::object{
      {"name", collection.name},
      {"include_regex", boost::json::value_from(collection.include_regex)},
      {"tensor_names", std::move(tensor_names)},
      {"reduction_config", reduction_config_json(collection.reduction_config)},
      {"save_config", save_config_json(collection.save_config)},
      {"save_histogram", collection.save_histogram}};
}

}  // namespace

CollectionsFile parse_collections_file(std::string_view json, const std::string& path) {
  const boost::json::value document = parse_json_document(json, path);
  const JsonFieldReader reader(path);
  const JsonField root = JsonField::root();
  const boost::json::object& top = reader.as_object(document, root);

  CollectionsFile file;
  const JsonField collections_field = root.member("collections");
  const boost::json::object& collections =
      reader.as_object(reader.require(top, "collections", collections_field), collections_field);
  for (const auto& member : collections) {
    Collection collection = parse_collection(reader, member.value(),
                                             collections_field.member(member.key()), member.key());
    // A trial written by smdebug must stay readable whatever its regexes: one that does not
    // compile is reported and left out, never an error for the whole file.
    std::erase_if(collection.include_regex, [&](const std::string& pattern) {
      try {
        const NameRegex compiled(pattern);
        return false;
      } catch (const RegexError& error) {
        file.problems.push_back(path + ": collection '" + collection.name +
                                "': include_regex left out, it selects its listed tensor names (" +
                                error.what() + ")");
        return true;
      }
    });
    // Like smdebug's CollectionManager, key by the collection's own name.
    std::string name = collection.name;
    file.collections.insert_or_assign(std::move(name), std::move(collection));
  }

  const JsonField meta_field = root.member("_meta");
  if (const auto* meta_value = find_present(top, "_meta")) {
    const boost::json::object& meta = reader.as_object(*meta_value, meta_field);
    if (const auto* workers = find_present(meta, "num_workers")) {
      const JsonField workers_field = meta_field.member("num_workers");
      const std::int64_t count = reader.as_non_negative_int64(*workers, workers_field);
      if (count < 1 || count > INT_MAX) {
        reader.fail(workers_field, "must be between 1 and " + std::to_string(INT_MAX) + ", got " +
                                       std::to_string(count));
      }
      file.num_workers = static_cast<int>(count);
    }
  }
  return file;
}

std::string serialize_collections_file(const CollectionsFile& file) {
  boost::json::object collections;
  for (const auto& [name, collection] : file.collections) {
    collections[name] = collection_json(collection);
  }
  boost::json::object document;
  document["collections"] = std::move(collections);
  if (file.num_workers) document["_meta"] = boost::json::object{{"num_workers", *file.num_workers}};
  return dump_python_json(document);
}

}  // namespace rulestream
