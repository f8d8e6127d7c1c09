#include "tests/support/smdebug_index_peek.hpp"

#include <boost/json/parse.hpp>
#include <cstdio>

#include "tests/support/test_support.hpp"

namespace rulestream::testing {
namespace {

namespace json = boost::json;

bool payload_names(const json::object& index, std::string_view payload, const std::string& tensor) {
  const json::value* entries = index.if_contains(payload);
  if (entries == nullptr || !entries->is_array()) return false;
  for (const auto& entry : entries->get_array()) {
    const json::value* name =
        entry.is_object() ? entry.get_object().if_contains("tensorname") : nullptr;
    if (name != nullptr && name->is_string() && name->get_string() == tensor) return true;
  }
  return false;
}

}  // namespace

bool index_lists_value_and_shape(const std::filesystem::path& trial_dir, std::int64_t step,
                                 const std::string& worker, const std::string& tensor) {
  // FORMAT.md: index/<step // 1000 as 9 digits>/<step as 12 digits>_<worker>.json
  char name[64];
  std::snprintf(name, sizeof name, "%09lld/%012lld_", static_cast<long long>(step / 1000),
                static_cast<long long>(step));
  const std::filesystem::path file = trial_dir / "index" / (name + worker + ".json");
  if (!std::filesystem::exists(file)) return false;
  const json::value index = json::parse(read_text_file(file));
  if (!index.is_object()) return false;
  return payload_names(index.get_object(), "tensor_payload", tensor) &&
         payload_names(index.get_object(), "shape_payload", tensor);
}

}  // namespace rulestream::testing
