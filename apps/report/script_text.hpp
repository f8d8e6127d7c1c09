#pragma once

// Text that goes inside a page's <script> element. The HTML parser ends a script at the first
// "</script" whatever the JavaScript around it means, and "<!--" can switch it into a state
// where that end is missed; so neither may appear inside.

#include <boost/json/value.hpp>
#include <string>
#include <string_view>

namespace rulestream {

// JSON for a <script type="application/json"> element: serialized, then every '<', '>' and
// '&' written as its \u escape (which can only occur inside JSON strings, where the escape
// means the same character), and U+2028/U+2029 too (line terminators in older JavaScript).
// JSON.parse of the element's text gives back the same value.
std::string script_safe_json(const boost::json::value& value);

// JavaScript source to inline as it is (a library file): returned unchanged, or
// std::invalid_argument naming `what` when it holds "</script" or "<!--" (any case), which
// no rewriting could make safe without parsing the JavaScript.
std::string_view checked_script_source(std::string_view source, const std::string& what);

// Text for HTML element content and attribute values: &, <, >, " and ' as character references.
std::string html_escape(std::string_view text);

}  // namespace rulestream
