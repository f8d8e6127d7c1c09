#pragma once

#include <boost/json/value.hpp>
#include <string>
#include <string_view>

namespace rulestream::testing {

// Parses a JSON document like boost::json::parse, but with every floating-point number
// correctly rounded (std::from_chars on the number's text).
//
// Boost.JSON 1.81 converts numbers with a fast algorithm that is off by one ulp for about one
// number in ten of smdebug's expected files (e.g. "1.3477421998977661" parses as
// 1.347742199897766); the conformance suite compares float32/float64 values bit for bit, so it
// needs the exact double Python wrote. Throws std::runtime_error naming `where` on bad JSON.
boost::json::value parse_json_precisely(std::string_view text, const std::string& where);

}  // namespace rulestream::testing
