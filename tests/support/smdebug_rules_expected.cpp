#include "tests/support/smdebug_rules_expected.hpp"

#include <boost/json/serialize.hpp>
#include <stdexcept>

#include "tests/support/precise_json.hpp"
#include "tests/support/smdebug_expected.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream::testing {

namespace json = boost::json;

std::string quote_non_finite_literals(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 64);
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out.push_back(c);
      if (c == '\\' && i + 1 < text.size()) {
        out.push_back(text[++i]);
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      out.push_back(c);
      continue;
    }
    bool replaced = false;
    for (const std::string_view literal : {"NaN", "Infinity", "-Infinity"}) {
      if (text.substr(i, literal.size()) == literal) {
        out += '"';
        out += literal;
        out += '"';
        i += literal.size() - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out.push_back(c);
  }
  return out;
}

std::string ExpectedRuleRun::describe() const {
  std::string text = rule;
  for (const auto& [key, value] : params) {
    text += " " + std::string(key) + "=" + json::serialize(value);
  }
  return text;
}

std::vector<ExpectedRuleRun> load_expected_rule_runs(const std::filesystem::path& file) {
  const std::string where = file.string();
  const json::value document =
      parse_json_precisely(quote_non_finite_literals(read_text_file(file)), where);
  std::vector<ExpectedRuleRun> runs;
  const auto& rules = as_array(member(as_object(document, where), "rules", where), where);
  for (std::size_t index = 0; index < rules.size(); ++index) {
    const std::string at = where + " rules[" + std::to_string(index) + "]";
    const json::object& entry = as_object(rules[index], at);
    ExpectedRuleRun run;
    run.rule = json_string(member(entry, "rule", at), at);
    run.params = as_object(member(entry, "params", at), at);
    const json::object& args = as_object(member(entry, "invoke_rule_args", at), at);
    run.start_step = json_int(member(args, "start_step", at), at);
    if (const json::value& end = member(args, "end_step", at); !end.is_null()) {
      run.end_step = json_int(end, at);
    }
    run.ended_with = json_string(member(entry, "invoke_rule_ended_with", at), at);
    run.triggered_steps = json_ints(member(entry, "triggered_steps", at), at);
    for (const auto& [step, outcome] : as_object(member(entry, "per_step_outcome", at), at)) {
      run.per_step_outcome[std::stoll(std::string(step))] = json_string(outcome, at);
    }
    if (const json::value* comparisons = entry.if_contains("comparisons")) {
      for (const json::value& item : as_array(*comparisons, at)) {
        const json::object& c = as_object(item, at);
        run.comparisons.push_back(
            {json_string(member(c, "tensor", at), at), json_int(member(c, "step", at), at),
             json_int(member(c, "base_step", at), at), json_double(member(c, "loss", at), at),
             json_double(member(c, "base_loss", at), at), member(c, "triggered", at).as_bool()});
      }
    }
    runs.push_back(std::move(run));
  }
  return runs;
}

}  // namespace rulestream::testing
