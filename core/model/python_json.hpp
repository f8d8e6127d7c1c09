#pragma once

#include <boost/json/value.hpp>
#include <string>
#include <string_view>

namespace rulestream {

// smdebug writes its JSON files with Python's json.dumps defaults: separators ", " and ": ",
// keys in insertion order, ensure_ascii=True (everything outside printable ASCII as \uXXXX,
// lowercase hex, astral code points as surrogate pairs), floats as repr() does, NaN/Infinity
// bare. Writing the same bytes lets a trial made by rulestream be compared byte for byte with
// one made by smdebug.

// What a string that is not valid UTF-8 gets: refused (std::invalid_argument), for files that
// must be smdebug's; or, for names read from a file system, each stray byte written as Python
// writes a name os.listdir gave it (surrogateescape: byte 0xff is "\udcff"), so one odd
// folder name neither fails the document nor loses what the name was.
enum class InvalidUtf8 { Refuse, SurrogateEscape };

// Appends `value` as json.dumps(value) would. Objects keep their insertion order.
void append_python_json(std::string& out, const boost::json::value& value,
                        InvalidUtf8 invalid = InvalidUtf8::Refuse);
std::string dump_python_json(const boost::json::value& value,
                             InvalidUtf8 invalid = InvalidUtf8::Refuse);

// Appends the quoted, escaped string.
void append_python_json_string(std::string& out, std::string_view utf8,
                               InvalidUtf8 invalid = InvalidUtf8::Refuse);

// Appends repr(value) as json.dumps writes it: "1.0", "0.0001", "1e-05", "1e+16", "NaN",
// "Infinity", "-Infinity".
void append_python_float(std::string& out, double value);

}  // namespace rulestream
