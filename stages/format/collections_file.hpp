#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/collection.hpp"

namespace rulestream {

// A worker's collections file: every collection its hook knew, and the job's worker count.
struct CollectionsFile {
  std::map<std::string, Collection> collections;
  std::optional<int> num_workers;  // from "_meta"
  // What was wrong but did not stop the parse, one sentence each naming the file: an
  // include_regex that does not compile is left out of its collection, which then selects its
  // listed tensor names (and its other regexes).
  std::vector<std::string> problems;

  friend bool operator==(const CollectionsFile&, const CollectionsFile&) = default;
};

// Parses a collections JSON file. Reduction configs are one comma-separated string
// ("min,max,l2_norm,abs_mean,abs_l1_norm"); save_config modes may be null (kept as entries
// without a value). Missing or null fields take smdebug's defaults and unknown keys are ignored,
// as smdebug's from_dict does. Throws FormatError naming `path` and the field at fault, which
// names the collection ("collections.weights.reduction_config.reductions"). A regex that does
// not compile (NameRegex: Python's syntax) is no such error: it goes to `problems`.
CollectionsFile parse_collections_file(std::string_view json, const std::string& path);

// Serialises in smdebug's shape (json.dumps defaults, smdebug's key order, norms spelled
// "l2_norm"). Collections come in name order (smdebug's is Python set order); a collection
// without any save config is written as null.
std::string serialize_collections_file(const CollectionsFile& file);

}  // namespace rulestream
