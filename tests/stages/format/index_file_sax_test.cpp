#include "stages/format/index_file_sax.hpp"

#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/model/exceptions.hpp"
#include "core/model/python_json.hpp"
#include "stages/format/index_file.hpp"
#include "stages/format/index_file_canonical.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

const std::string kPath = "trial/index/000000000/000000000007_worker_0.json";

// What the document reader makes of a text: the index, or the message it throws.
struct DocumentOutcome {
  std::optional<IndexFile> index;
  std::string error;
};

DocumentOutcome read_as_document(std::string_view json) {
  try {
    return {parse_index_file_document(json, kPath), {}};
  } catch (const FormatError& error) {
    return {std::nullopt, error.what()};
  }
}

std::string describe(const IndexFile& index) {
  return serialize_index_file(index) + (index.event_file_name ? "" : " (no event file name)");
}

// The fast reader's contract: the document reader's index or nothing, never an index where the
// document reader throws. And parse_index_file returns the same index, or throws the same
// message, as the document reader.
::testing::AssertionResult agrees_with_document(std::string_view json) {
  const DocumentOutcome document = read_as_document(json);
  // Both readers in front of the document reader are held to the same contract.
  const std::pair<const char*, std::optional<IndexFile>> readers[] = {
      {"the fast reader", parse_index_file_fast(json)},
      {"the canonical reader", parse_index_file_canonical(json)}};
  for (const auto& [reader, read] : readers) {
    if (read && !document.index) {
      return ::testing::AssertionFailure() << reader << " accepts what the document reader "
                                           << "refuses with \"" << document.error << "\": " << json;
    }
    if (read && *read != *document.index) {
      return ::testing::AssertionFailure()
             << reader << " reads " << describe(*read) << "\nthe document reader "
             << describe(*document.index) << "\nfrom: " << json;
    }
  }
  try {
    const IndexFile index = parse_index_file(json, kPath);
    if (!document.index) {
      return ::testing::AssertionFailure()
             << "parse_index_file accepts what the document reader refuses: " << json;
    }
    if (index != *document.index) {
      return ::testing::AssertionFailure() << "parse_index_file reads " << describe(index)
                                           << "\nthe document reader " << describe(*document.index);
    }
  } catch (const FormatError& error) {
    if (document.index) {
      return ::testing::AssertionFailure()
             << "parse_index_file throws \"" << error.what() << "\" on: " << json;
    }
    if (error.what() != document.error) {
      return ::testing::AssertionFailure()
             << "parse_index_file says \"" << error.what() << "\"\nthe document reader \""
             << document.error << "\"";
    }
  }
  return ::testing::AssertionSuccess();
}

// The text is read by the fast path itself, to the document reader's index.
void expect_fast_reads(std::string_view json) {
  EXPECT_TRUE(agrees_with_document(json));
  EXPECT_TRUE(parse_index_file_fast(json).has_value()) << "the fast reader declines: " << json;
}

// The fast path declines the text and leaves it to the document reader, which `accepts` it or
// refuses it (parse_index_file then throws its message, checked by agrees_with_document).
void expect_fast_declines(std::string_view json, bool accepts) {
  EXPECT_TRUE(agrees_with_document(json));
  EXPECT_FALSE(parse_index_file_fast(json).has_value()) << "the fast reader accepts: " << json;
  EXPECT_EQ(read_as_document(json).index.has_value(), accepts) << json;
}

std::string with_meta(std::string_view meta, std::string_view rest = R"(, "tensor_payload": [])") {
  return R"({"meta": )" + std::string(meta) + std::string(rest) + "}";
}

std::string with_tensors(std::string_view tensors) {
  return R"({"meta": {"mode": "TRAIN", "mode_step": 0, "event_file_name": "e"}, "tensor_payload": )" +
         std::string(tensors) + "}";
}

std::string with_shapes(std::string_view shapes) {
  return R"({"meta": {"mode": "TRAIN", "mode_step": 0}, "tensor_payload": [], "shape_payload": )" +
         std::string(shapes) + "}";
}

TEST(IndexFileSaxTest, EverySampleIndexFileIsReadByTheFastPathAsByTheDocument) {
  const auto samples = testing::samples_dir();
  if (!samples) GTEST_SKIP() << "smdebug-samples not found (set RULESTREAM_SAMPLES)";
  const auto files = testing::sample_files(*samples, "index", ".json");
  ASSERT_GT(files.size(), 300u);
  std::size_t with_shapes = 0;
  for (const auto& file : files) {
    const std::string text = testing::read_text_file(file);
    const std::optional<IndexFile> fast = parse_index_file_fast(text);
    ASSERT_TRUE(fast.has_value()) << file;
    EXPECT_EQ(*fast, parse_index_file_document(text, file.string())) << file;
    if (fast->shapes && !fast->shapes->empty()) ++with_shapes;
  }
  EXPECT_GT(with_shapes, 0u) << "no sample exercises shape_payload entries";
}

// A random index file, written in one of several spellings, and the index it must read as.
struct GeneratedFile {
  std::string text;
  IndexFile index;
};

class IndexFileGenerator {
 public:
  explicit IndexFileGenerator(std::uint64_t seed) : random_(seed) {}

  GeneratedFile next() {
    GeneratedFile file;
    IndexFile& index = file.index;
    index.mode = kAllModes[pick(kAllModes.size())];
    index.mode_step = coin() ? static_cast<std::int64_t>(pick(1000)) : INT64_MAX - pick(3);
    const std::size_t tensors = coin() ? pick(5) : pick(800);
    if (tensors > 0 || coin()) index.event_file_name = name();
    std::uint64_t offset = coin() ? 0 : UINT64_MAX - (std::uint64_t{1} << 40);
    for (std::size_t i = 0; i < tensors; ++i) {
      const std::uint64_t length = pick(5000);
      index.tensors.push_back({name(), offset, length});
      offset += length;
    }
    if (coin()) {
      index.shapes.emplace();
      for (std::size_t i = pick(6); i > 0; --i) {
        Shape dims;
        for (std::size_t d = pick(5); d > 0; --d) {
          dims.push_back(coin() ? static_cast<std::int64_t>(pick(100)) : INT64_MAX);
        }
        index.shapes->push_back({name(), name(), dims});
      }
    }
    file.text = write(index);
    return file;
  }

 private:
  std::size_t pick(std::size_t bound) {
    return std::uniform_int_distribution<std::size_t>(0, bound - 1)(random_);
  }
  bool coin() { return pick(2) == 0; }

  std::string name() {
    static const std::vector<std::string> kParts = {"MLP_fc1.weight",
                                                    "gradient/",
                                                    "smdebug/reductions/abs_mean/",
                                                    "",
                                                    "\xc3\xa9",
                                                    "\xe6\x97\xa5\xe6\x9c\xac",
                                                    "\xf0\x9f\x98\x80",
                                                    "\"quoted\"",
                                                    "back\\slash",
                                                    "tab\tnew\nline",
                                                    "nul\x01",
                                                    "meta",
                                                    "tensorname",
                                                    "{\"start_idx\": [1]}"};
    std::string text;
    for (std::size_t i = pick(4); i > 0; --i) text += kParts[pick(kParts.size())];
    // Now and then longer than the parser's buffer for decoded escapes, so it arrives in parts.
    if (pick(50) == 0) text += std::string(5000 + pick(5000), coin() ? 'x' : '"');
    return text;
  }

  // Raw UTF-8 with minimal escapes, or json.dumps's \u escapes.
  void append_string(std::string& out, std::string_view text) {
    if (coin()) {
      out += boost::json::serialize(boost::json::string_view(text.data(), text.size()));
    } else {
      append_python_json_string(out, text);
    }
  }

  void append_space(std::string& out) {
    static const std::vector<std::string> kSpaces = {"", "", " ", "\n  ", "\t", "\r\n"};
    out += kSpaces[pick(kSpaces.size())];
  }

  // A key the reader does not know, with a value of any shape (nesting known keys inside).
  void maybe_append_unknown(std::string& out) {
    static const std::vector<std::string> kUnknown = {
        R"("version": "v2")",
        R"("extra": null)",
        R"("x": -12.5e3)",
        R"("flag": true)",
        R"("nested": {"meta": {"mode": 3}, "tensorname": [1, {"length": -1}], "shape": [[[]]]})",
        R"("list": [{"start_idx": "no"}, [], {}, null, false, -0, 1e400])",
        R"("a_key_much_longer_than_any_key_the_reader_knows": {"tensor_payload": 7})",
        R"("mod\u0065_st": 5)"};
    if (pick(4) != 0) return;
    append_space(out);
    out += kUnknown[pick(kUnknown.size())];
    out += ',';
  }

  void append_key(std::string& out, std::string_view key) {
    append_space(out);
    if (pick(8) == 0 && key.size() > 2) {
      // The same key with an escaped letter.
      out += '"';
      out += key.substr(0, 1);
      out += "\\u00" + std::string(1, "0123456789abcdef"[key[1] >> 4]) +
             std::string(1, "0123456789abcdef"[key[1] & 0xf]);
      out += key.substr(2);
      out += '"';
    } else {
      append_string(out, key);
    }
    append_space(out);
    out += ':';
    append_space(out);
  }

  // `"key": value,` with the value written as text, or as a JSON string.
  void append_member(std::string& out, std::string_view key, std::string_view number) {
    append_key(out, key);
    out += number;
    out += ',';
  }
  void append_string_member(std::string& out, std::string_view key, std::string_view text) {
    append_key(out, key);
    append_string(out, text);
    out += ',';
  }

  // Ends an object or array whose members each ended with ','.
  static void close(std::string& out, char bracket) {
    if (out.back() == ',') out.pop_back();
    out += bracket;
  }

  // A payload left out, or written as null.
  void maybe_append_null(std::string& out, std::string_view key) {
    if (coin()) append_member(out, key, "null");
  }

  std::string write(const IndexFile& index) {
    std::string out = "{";
    maybe_append_unknown(out);
    append_key(out, "meta");
    out += '{';
    std::vector<int> order = {0, 1, 2};
    std::shuffle(order.begin(), order.end(), random_);
    for (const int member : order) {
      maybe_append_unknown(out);
      if (member == 0) {
        static const std::vector<std::string> kPadding = {"", "", " ", "\n", " \t\r\f\v"};
        append_string_member(out, "mode",
                             kPadding[pick(kPadding.size())] + std::string(mode_name(index.mode)) +
                                 kPadding[pick(kPadding.size())]);
      } else if (member == 1) {
        append_member(out, "mode_step", std::to_string(index.mode_step));
      } else if (index.event_file_name) {
        append_string_member(out, "event_file_name", *index.event_file_name);
      } else {
        maybe_append_null(out, "event_file_name");
      }
    }
    maybe_append_unknown(out);
    close(out, '}');
    out += ',';

    if (!index.tensors.empty() || pick(3) != 0) {
      append_key(out, "tensor_payload");
      out += '[';
      for (const TensorLocation& tensor : index.tensors) {
        append_space(out);
        out += '{';
        maybe_append_unknown(out);
        append_string_member(out, "tensorname", tensor.tensor_name);
        append_member(out, "start_idx", std::to_string(tensor.start));
        append_member(out, "length", std::to_string(tensor.length));
        maybe_append_unknown(out);
        close(out, '}');
        out += ',';
      }
      close(out, ']');
      out += ',';
    } else {
      maybe_append_null(out, "tensor_payload");
    }

    if (index.shapes) {
      append_key(out, "shape_payload");
      out += '[';
      for (const ShapeEntry& shape : *index.shapes) {
        out += '{';
        append_string_member(out, "tensorname", shape.tensor_name);
        maybe_append_unknown(out);
        append_string_member(out, "originalname", shape.original_name);
        append_key(out, "shape");
        out += '[';
        for (const std::int64_t dim : shape.shape) out += std::to_string(dim) + ",";
        close(out, ']');
        out += "},";
      }
      close(out, ']');
      out += ',';
    } else {
      maybe_append_null(out, "shape_payload");
    }
    maybe_append_unknown(out);
    close(out, '}');
    append_space(out);
    return out;
  }

  std::mt19937_64 random_;
};

TEST(IndexFileSaxTest, GeneratedFilesReadAsWritten) {
  IndexFileGenerator generator(20261124);
  for (int i = 0; i < 400; ++i) {
    const GeneratedFile file = generator.next();
    SCOPED_TRACE(file.text);
    const std::optional<IndexFile> fast = parse_index_file_fast(file.text);
    ASSERT_TRUE(fast.has_value());
    EXPECT_EQ(describe(*fast), describe(file.index));
    EXPECT_EQ(*fast, file.index);
    EXPECT_EQ(parse_index_file_document(file.text, kPath), file.index);
  }
}

TEST(IndexFileSaxTest, ManyTensorsAndShapes) {
  IndexFile index;
  index.mode = Mode::Eval;
  index.mode_step = 41;
  index.event_file_name = "events/000000000041/000000000041_worker_3.tfevents";
  std::uint64_t offset = 0;
  for (std::uint64_t i = 0; i < 5000; ++i) {
    index.tensors.push_back({"layer" + std::to_string(i) + ".weight", offset, 100 + i % 7});
    offset += 100 + i % 7;
  }
  index.shapes.emplace();
  for (int i = 0; i < 300; ++i) index.shapes->push_back({"s" + std::to_string(i), "o", {i, 3, 1}});
  const std::string text = serialize_index_file(index);
  ASSERT_EQ(parse_index_file_fast(text), index);
  expect_fast_reads(text);
}

TEST(IndexFileSaxTest, PayloadsThatAreNullOrAbsent) {
  const std::string meta = R"({"mode": "PREDICT", "mode_step": 2})";
  expect_fast_reads(with_meta(meta, ""));
  expect_fast_reads(with_meta(meta, R"(, "tensor_payload": null)"));
  expect_fast_reads(with_meta(meta, R"(, "tensor_payload": null, "shape_payload": null)"));
  expect_fast_reads(with_meta(meta, R"(, "shape_payload": [])"));
  expect_fast_reads(with_meta(R"({"mode": "PREDICT", "mode_step": 2, "event_file_name": null})"));
  EXPECT_FALSE(parse_index_file_fast(with_meta(meta, R"(, "shape_payload": null)"))->shapes);
  EXPECT_EQ(parse_index_file_fast(with_meta(meta, R"(, "shape_payload": [])"))->shapes,
            std::vector<ShapeEntry>{});
  // The shape payload before the tensor payload, and a 0-d shape.
  const std::string shapes_first =
      R"({"shape_payload": [{"shape": [], "originalname": "b:0", "tensorname": "b"}], "meta": {"event_file_name": "e", "mode_step": 2, "mode": "GLOBAL"}, "tensor_payload": [{"length": 3, "start_idx": 9, "tensorname": "b"}]})";
  expect_fast_reads(shapes_first);
  const IndexFile index = *parse_index_file_fast(shapes_first);
  EXPECT_EQ(index.shapes->at(0), (ShapeEntry{"b", "b:0", {}}));
  EXPECT_EQ(index.tensors.at(0), (TensorLocation{"b", 9, 3}));
}

TEST(IndexFileSaxTest, EscapedAndUnicodeNamesAndKeys) {
  const std::string text = with_tensors(
      R"([{"tensorname": "\u00e9/\u65e5\u672c/\ud83d\ude00\"\\\n\/", "start_idx": 0, "length": 1},)"
      R"( {"tensor\u006eame": "é/日本/😀", "start_id\u0078": 1, "len\u0067th": 2}])");
  expect_fast_reads(text);
  const IndexFile index = *parse_index_file_fast(text);
  EXPECT_EQ(index.tensors.at(0).tensor_name,
            "\xc3\xa9/\xe6\x97\xa5\xe6\x9c\xac/\xf0\x9f\x98\x80\"\\\n/");
  EXPECT_EQ(index.tensors.at(1),
            (TensorLocation{"\xc3\xa9/\xe6\x97\xa5\xe6\x9c\xac/\xf0\x9f\x98\x80", 1, 2}));
  // A name of escapes longer than the parser's buffer arrives in several parts.
  std::string long_name;
  std::string escaped;
  for (int i = 0; i < 9000; ++i) {
    long_name += i % 2 == 0 ? "\xc3\xa9" : "\"";
    escaped += i % 2 == 0 ? "\\u00e9" : "\\\"";
  }
  const std::string long_text =
      with_tensors(R"([{"tensorname": ")" + escaped + R"(", "start_idx": 0, "length": 1}])");
  expect_fast_reads(long_text);
  EXPECT_EQ(parse_index_file_fast(long_text)->tensors.at(0).tensor_name, long_name);
  // Keys that only look like known ones are other keys.
  expect_fast_reads(
      with_meta(R"({"mode": "EVAL", "mode_step": 1, "mode ": 7, "Mode": 2, "mode\u0000": 1})"));
  // Invalid UTF-8 and lone surrogates are the parser's errors, for both readers.
  expect_fast_declines(
      with_tensors("[{\"tensorname\": \"\xff\", \"start_idx\": 0, \"length\": 1}]"), false);
  expect_fast_declines(with_tensors(R"([{"tensorname": "\ud800", "start_idx": 0, "length": 1}])"),
                       false);
}

TEST(IndexFileSaxTest, LargeNumbersAndNumberSpellings) {
  expect_fast_reads(with_meta(R"({"mode": "TRAIN", "mode_step": 9223372036854775807})"));
  EXPECT_EQ(
      parse_index_file_fast(with_meta(R"({"mode": "TRAIN", "mode_step": 9223372036854775807})"))
          ->mode_step,
      INT64_MAX);
  expect_fast_declines(with_meta(R"({"mode": "TRAIN", "mode_step": 9223372036854775808})"), false);
  expect_fast_reads(with_meta(R"({"mode": "TRAIN", "mode_step": -0})"));
  const std::string biggest =
      with_tensors(R"([{"tensorname": "t", "start_idx": 18446744073709551615, "length": 0}])");
  expect_fast_reads(biggest);
  EXPECT_EQ(parse_index_file_fast(biggest)->tensors.at(0).start, UINT64_MAX);
  expect_fast_reads(with_tensors(
      R"([{"tensorname": "t", "start_idx": 9223372036854775807, "length": 9223372036854775808}])"));
  expect_fast_reads(with_shapes(
      R"([{"tensorname": "a", "originalname": "a", "shape": [9223372036854775807, 0]}])"));
  expect_fast_declines(
      with_shapes(R"([{"tensorname": "a", "originalname": "a", "shape": [9223372036854775808]}])"),
      false);
  // The document reader wants integers as Python writes them: no fraction, no exponent.
  for (const std::string number :
       {"3.0", "3e0", "1E2", "0.5", "18446744073709551616", "-1", "1e400"}) {
    expect_fast_declines(with_meta(R"({"mode": "TRAIN", "mode_step": )" + number + "}"), false);
    expect_fast_declines(
        with_tensors(R"([{"tensorname": "t", "start_idx": )" + number + R"(, "length": 1}])"),
        false);
    expect_fast_declines(
        with_shapes(R"([{"tensorname": "a", "originalname": "a", "shape": [)" + number + "]}]"),
        false);
  }
  // start + length past 2^64.
  expect_fast_declines(
      with_tensors(R"([{"tensorname": "t", "start_idx": 18446744073709551615, "length": 1}])"),
      false);
}

TEST(IndexFileSaxTest, RepeatedKeysAreLeftToTheDocumentWhichKeepsTheLast) {
  // The document keeps the last of repeated keys, even after a value it would refuse.
  expect_fast_declines(
      R"({"meta": 3, "meta": {"mode": "EVAL", "mode_step": 1}, "tensor_payload": []})", true);
  expect_fast_declines(with_meta(R"({"mode": "TRAINING", "mode_step": 1, "mode": "EVAL"})"), true);
  expect_fast_declines(with_meta(R"({"mode": "EVAL", "mode_step": -1, "mode_step": 4})"), true);
  expect_fast_declines(
      with_meta(
          R"({"mode": "EVAL", "mode_step": 1, "event_file_name": "a", "event_file_name": null})"),
      true);
  expect_fast_declines(
      R"({"meta": {"mode": "EVAL", "mode_step": 1, "event_file_name": "e"}, "tensor_payload": [{"tensorname": "a", "start_idx": 0, "length": 1}], "tensor_payload": []})",
      true);
  expect_fast_declines(
      with_tensors(R"([{"tensorname": "a", "tensorname": "b", "start_idx": 0, "length": 1}])"),
      true);
  expect_fast_declines(
      with_tensors(R"([{"tensorname": "a", "start_idx": -3, "length": 1, "start_idx": 0}])"), true);
  expect_fast_declines(
      with_shapes(R"([{"tensorname": "a", "originalname": "a", "shape": [1], "shape": [2, 3]}])"),
      true);
  expect_fast_declines(with_meta(R"({"mode": "EVAL", "mode_step": 1})",
                                 R"(, "shape_payload": [], "shape_payload": null)"),
                       true);
  // Repeated keys the reader does not read change nothing.
  expect_fast_reads(with_meta(R"({"mode": "EVAL", "x": 1, "mode_step": 1, "x": [2]})",
                              R"(, "v": 1, "tensor_payload": [], "v": {"w": 2})"));
}

TEST(IndexFileSaxTest, UnknownKeysAreSkippedWholeAtEveryLevel) {
  const std::string nested =
      R"({"meta": {"mode": "TRAIN", "mode_step": 1}, "tensor_payload": [{"tensorname": "x", "start_idx": "x", "length": -1}], "shape_payload": {"a": [[[[{}]]]]}})";
  const std::string text =
      R"({"z": )" + nested + R"(, "meta": {"zz": [)" + nested +
      R"(, 1, "s", null, true, -2.5], "mode": "EVAL", "mode_step": 7, "event_file_name": "e", "w": {}},)"
      R"( "tensor_payload": [{"q": {"tensorname": 5}, "tensorname": "t", "start_idx": 4, "length": 5, "r": [[], [{}]]}],)"
      R"( "shape_payload": [{"tensorname": "t", "shape": [2], "originalname": "t:0", "u": {"shape": "no"}}], "end": [)" +
      nested + "]}";
  expect_fast_reads(text);
  const IndexFile index = *parse_index_file_fast(text);
  EXPECT_EQ(index.mode, Mode::Eval);
  EXPECT_EQ(index.mode_step, 7);
  EXPECT_EQ(index.tensors, (std::vector<TensorLocation>{{"t", 4, 5}}));
  EXPECT_EQ(index.shapes, (std::vector<ShapeEntry>{{"t", "t:0", {2}}}));
  // Deeper than the parser's limit (32) is an error for both, even under an unknown key.
  expect_fast_declines(with_meta(R"({"mode": "TRAIN", "mode_step": 1, "deep": )" +
                                 std::string(40, '[') + std::string(40, ']') + "}"),
                       false);
}

TEST(IndexFileSaxTest, ModeNamesAsTheDocumentReadsThem) {
  expect_fast_reads(with_meta(R"({"mode": " \tEVAL\n", "mode_step": 1})"));
  EXPECT_EQ(parse_index_file_fast(with_meta(R"({"mode": " \tEVAL\n", "mode_step": 1})"))->mode,
            Mode::Eval);
  // Padding beyond the fast reader's few characters: left to the document, which accepts it.
  expect_fast_declines(
      with_meta(R"({"mode": ")" + std::string(40, ' ') + R"(PREDICT", "mode_step": 1})"), true);
  for (const std::string mode :
       {"TRAINING", "train", "", " ", R"(TRAIN\u0000)", R"(EVAL\u00a0)", "4"}) {
    expect_fast_declines(with_meta(R"({"mode": ")" + mode + R"(", "mode_step": 1})"), false);
  }
  // A known name, then more than the fast reader keeps: not that name.
  expect_fast_declines(
      with_meta(R"({"mode": "TRAIN\u0020)" + std::string(40, 'X') + R"(", "mode_step": 1})"),
      false);
}

TEST(IndexFileSaxTest, MalformedFilesGiveTheDocumentReadersMessage) {
  const std::vector<std::string> texts = {
      "",
      " ",
      "[]",
      "null",
      "3",
      R"("meta")",
      R"({})",
      R"({"meta": {"mode": "TRAIN", "mode_st)",
      "{\"meta\": {},\n \"tensor_payload\": [1,, 2]}",
      R"({"meta": {"mode": "TRAIN", "mode_step": 0}} trailing)",
      R"({"meta": {"mode": "TRAIN", "mode_step": 0}} {})",
      R"({"meta": {"mode": "TRAIN", "mode_step": 0},})",
      R"({"meta": {"mode": "TRAIN", "mode_step": 0} /* comment */})",
      R"({"meta": {"mode": "TRAIN", "mode_step": 0}, "tensor_payload": [],})",
      R"({"meta": null})",
      R"({"meta": []})",
      R"({"tensor_payload": []})",
      R"({"meta": {"mode_step": 0}})",
      R"({"meta": {"mode": "TRAIN"}})",
      R"({"meta": {"mode": 1, "mode_step": 0}})",
      R"({"meta": {"mode": null, "mode_step": 0}})",
      R"({"meta": {"mode": ["TRAIN"], "mode_step": 0}})",
      R"({"meta": {"mode": "TRAIN", "mode_step": "3"}})",
      R"({"meta": {"mode": "TRAIN", "mode_step": true}})",
      R"({"meta": {"mode": "TRAIN", "mode_step": null}})",
      R"({"meta": {"mode": "TRAIN", "mode_step": {}}})",
      R"({"meta": {"mode": "TRAIN", "mode_step": 0, "event_file_name": 3}})",
      R"({"meta": {"mode": "TRAIN", "mode_step": 0, "event_file_name": ["e"]}})",
      R"({"meta": {"mode": "TRAIN", "mode_step": 0}, "tensor_payload": {}})",
      R"({"meta": {"mode": "TRAIN", "mode_step": 0}, "tensor_payload": "[]"})",
      R"({"meta": {"mode": "TRAIN", "mode_step": 0}, "shape_payload": {}})",
      R"({"meta": {"mode": "TRAIN", "mode_step": 0}, "shape_payload": 0})",
      with_tensors(R"([{"tensorname": "t", "start_idx": 0}])"),
      with_tensors(R"([{"start_idx": 0, "length": 1}])"),
      with_tensors(R"([{"tensorname": "t", "length": 1}])"),
      with_tensors(R"([{"tensorname": "t", "start_idx": 0, "length": 1}, 7])"),
      with_tensors(R"([null])"),
      with_tensors(R"([[]])"),
      with_tensors(R"([{"tensorname": null, "start_idx": 0, "length": 1}])"),
      with_tensors(R"([{"tensorname": 5, "start_idx": 0, "length": 1}])"),
      with_tensors(R"([{"tensorname": {}, "start_idx": 0, "length": 1}])"),
      with_tensors(R"([{"tensorname": "t", "start_idx": "0", "length": 1}])"),
      with_tensors(R"([{"tensorname": "t", "start_idx": [0], "length": 1}])"),
      with_tensors(R"([{"tensorname": "t", "start_idx": 0, "length": false}])"),
      with_tensors(R"([{"tensorname": "t", "start_idx": -5, "length": 5}])"),
      with_tensors(R"([{"tensorname": "t", "start_idx": 0, "length": -1}])"),
      with_tensors(R"([{"tensorname": "t", "start_idx": -1, "length": 0}])"),
      R"({"meta": {"mode": "TRAIN", "mode_step": 0}, "tensor_payload": [{"tensorname": "a", "start_idx": 0, "length": 5}]})",
      R"({"meta": {"mode": "TRAIN", "mode_step": 0, "event_file_name": null}, "tensor_payload": [{"tensorname": "a", "start_idx": 0, "length": 5}]})",
      with_shapes(R"([{"tensorname": "a", "originalname": "a", "shape": [3, -2]}])"),
      with_shapes(R"([{"tensorname": "a", "originalname": "a"}])"),
      with_shapes(R"([{"tensorname": "a", "shape": []}])"),
      with_shapes(R"([{"originalname": "a", "shape": []}])"),
      with_shapes(R"([{"tensorname": "a", "originalname": 1, "shape": []}])"),
      with_shapes(R"([{"tensorname": "a", "originalname": "a", "shape": null}])"),
      with_shapes(R"([{"tensorname": "a", "originalname": "a", "shape": {}}])"),
      with_shapes(R"([{"tensorname": "a", "originalname": "a", "shape": [[1]]}])"),
      with_shapes(R"([{"tensorname": "a", "originalname": "a", "shape": ["1"]}])"),
      with_shapes(R"([{"tensorname": "a", "originalname": "a", "shape": [null]}])"),
      with_shapes(R"(["a"])"),
  };
  for (const std::string& text : texts) expect_fast_declines(text, false);
}

TEST(IndexFileSaxTest, EveryPrefixOfAFileAgrees) {
  IndexFileGenerator generator(7);
  GeneratedFile file = generator.next();
  while (file.text.size() < 300 || file.text.size() > 3000 || !file.index.shapes) {
    file = generator.next();
  }
  for (std::size_t size = 0; size <= file.text.size(); ++size) {
    ASSERT_TRUE(agrees_with_document(std::string_view(file.text).substr(0, size)));
  }
}

// `text` with 1 to `most_edits` random edits: a byte deleted, or replaced by one of
// `replacements`.
std::string mutated(std::string text, int most_edits, const std::string& replacements,
                    std::mt19937_64& random) {
  for (int edits = 1 + static_cast<int>(random() % most_edits); edits > 0; --edits) {
    if (text.empty()) break;
    const std::size_t at = random() % text.size();
    if (random() % 3 == 0) {
      text.erase(at, 1);
    } else {
      text[at] = replacements[random() % replacements.size()];
    }
  }
  return text;
}

TEST(IndexFileSaxTest, MutatedFilesAgree) {
  IndexFileGenerator generator(99);
  std::mt19937_64 random(5);
  static const std::string kReplacements = "{}[]\":,-.0123456789eEtrunlfas \\x";
  std::size_t refused = 0;
  for (int i = 0; i < 3000; ++i) {
    GeneratedFile file = generator.next();
    while (file.text.size() > 4000) file = generator.next();
    const std::string text = mutated(file.text, 3, kReplacements, random);
    ASSERT_TRUE(agrees_with_document(text));
    if (!read_as_document(text).index) ++refused;
  }
  // The mutations must reach the error paths, not only harmless bytes inside names.
  EXPECT_GT(refused, 1000u);
}

// smdebug's own spelling (serialize_index_file writes it as json.dumps does) is read by the
// canonical reader; every other text is left to the readers behind it, as the tests above check
// through agrees_with_document.
IndexFile canonical_index(std::size_t tensors, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  IndexFile index;
  index.mode = kAllModes[random() % std::size(kAllModes)];
  index.mode_step = static_cast<std::int64_t>(random() % 100000);
  index.event_file_name = "events/000000000041/000000000041_worker_3.tfevents";
  std::uint64_t offset = 0;
  for (std::size_t i = 0; i < tensors; ++i) {
    const std::uint64_t length = 1 + random() % 5000;
    index.tensors.push_back({"gradients/layer" + std::to_string(i) + "/{w}", offset, length});
    offset += length;
  }
  if (random() % 2 == 0) {
    index.shapes.emplace();
    for (std::size_t i = 0; i < tensors; ++i) {
      Shape shape;
      for (std::uint64_t d = random() % 4; d > 0; --d) shape.push_back(1 + random() % 500);
      index.shapes->push_back({"s" + std::to_string(i), "o" + std::to_string(i), shape});
    }
  }
  return index;
}

TEST(IndexFileCanonicalTest, EverySampleIndexFileIsReadByIt) {
  const auto samples = testing::samples_dir();
  if (!samples) GTEST_SKIP() << "smdebug-samples not found (set RULESTREAM_SAMPLES)";
  std::size_t with_shapes = 0;
  for (const auto& file : testing::sample_files(*samples, "index", ".json")) {
    const std::string text = testing::read_text_file(file);
    const IndexFile document = parse_index_file_document(text, file.string());
    const std::optional<IndexFile> canonical = parse_index_file_canonical(text);
    ASSERT_TRUE(canonical.has_value()) << file;
    EXPECT_EQ(*canonical, document) << file;
    if (document.shapes && !document.shapes->empty()) ++with_shapes;
  }
  EXPECT_GT(with_shapes, 0u) << "no sample exercises shape_payload entries";
}

TEST(IndexFileCanonicalTest, ReadsWhatSerializeWrites) {
  for (const std::size_t tensors : {0, 1, 2, 3000}) {
    const IndexFile index = canonical_index(tensors, tensors);
    const std::string text = serialize_index_file(index);
    EXPECT_EQ(parse_index_file_canonical(text), index) << text.substr(0, 200);
    EXPECT_EQ(parse_index_file_canonical(text + "\n"), index);  // a trailing newline
    EXPECT_TRUE(agrees_with_document(text));
  }
  IndexFile without_event_file;
  without_event_file.mode_step = 12;
  EXPECT_EQ(parse_index_file_canonical(serialize_index_file(without_event_file)),
            without_event_file);
}

TEST(IndexFileCanonicalTest, EveryPrefixAgreesAndOnlyTheWholeIsRead) {
  const std::string text = serialize_index_file(canonical_index(4, 3));
  for (std::size_t size = 0; size < text.size(); ++size) {
    const std::string_view prefix = std::string_view(text).substr(0, size);
    ASSERT_TRUE(agrees_with_document(prefix));
    EXPECT_FALSE(parse_index_file_canonical(prefix).has_value()) << prefix;
  }
}

TEST(IndexFileCanonicalTest, OtherSpellingsAreLeftToTheOtherReaders) {
  const std::string meta = R"({"meta": {"mode": "TRAIN", "mode_step": 3, "event_file_name": "e"})";
  const std::string entry = R"({"tensorname": "w", "start_idx": 10, "length": 20})";
  ASSERT_TRUE(parse_index_file_canonical(meta + R"(, "tensor_payload": [)" + entry + "]}"));
  // JSON's whitespace after the document is no other spelling.
  EXPECT_TRUE(parse_index_file_canonical(meta + R"(, "tensor_payload": [)" + entry + "]} \r\n"));
  // Each reads to an index (the other readers read it) but not in smdebug's spelling.
  for (
      const std::string& text : std::vector<std::string>{
          " " + meta + R"(, "tensor_payload": [)" + entry + "]}",  // leading space
          meta + R"(,"tensor_payload": [)" + entry + "]}",         // separators
          meta + R"(, "tensor_payload": [{"tensorname": "wé", "start_idx": 1, "length": 2}]})",
          meta + R"(, "tensor_payload": [{"tensorname": "w\"", "start_idx": 1, "length": 2}]})",
          meta + R"(, "tensor_payload": [{"tensorname": "w\u00e9", "start_idx": 1, "length": 2}]})",
          meta + R"(, "tensor_payload": [{"start_idx": 1, "tensorname": "w", "length": 2}]})",
          meta +
              R"(, "tensor_payload": [{"tensorname": "w", "start_idx": 1, "length": 2, "x": 1}]})",
          meta +
              R"(, "tensor_payload": [{"tensorname": "w", "start_idx": 1234567890123456789, "length": 2}]})",
          meta + R"(, "tensor_payload": null})",
          meta + R"(, "shape_payload": [], "tensor_payload": []})",
          meta +
              R"(, "tensor_payload": [], "shape_payload": [{"tensorname": "s", "shape": [1], "originalname": "o"}]})",
          R"({"meta": {"mode": " TRAIN", "mode_step": 3}})",
          R"({"meta": {"mode_step": 3, "mode": "TRAIN"}})",
          R"({"tensor_payload": [], "meta": {"mode": "TRAIN", "mode_step": 3}})",
      }) {
    SCOPED_TRACE(text);
    EXPECT_TRUE(agrees_with_document(text));
    EXPECT_FALSE(parse_index_file_canonical(text).has_value());
    EXPECT_TRUE(read_as_document(text).index.has_value());
  }
  // And what the document reader refuses, it declines.
  for (const std::string& text : std::vector<std::string>{
           meta + R"(, "tensor_payload": [{"tensorname": "w", "start_idx": 01, "length": 2}]})",
           meta + R"(, "tensor_payload": [{"tensorname": "w", "start_idx": -1, "length": 2}]})",
           meta + R"(, "tensor_payload": [{"tensorname": "w", "start_idx": 1e3, "length": 2}]})",
           meta + R"(, "tensor_payload": [{"tensorname": "w", "start_idx": 1.0, "length": 2}]})",
           meta + R"(, "tensor_payload": [{"tensorname": "w", "start_idx": 1}]})",
           R"({"meta": {"mode": "TRAINING", "mode_step": 3}})",
           R"({"meta": {"mode": "TRAIN", "mode_step": 3}, "tensor_payload": [)" + entry + "]}",
           meta + R"(, "tensor_payload": [)" + entry + "]}}",
       }) {
    SCOPED_TRACE(text);
    EXPECT_TRUE(agrees_with_document(text));
    EXPECT_FALSE(parse_index_file_canonical(text).has_value());
    EXPECT_FALSE(read_as_document(text).index.has_value());
  }
}

TEST(IndexFileCanonicalTest, MutatedCanonicalFilesAgree) {
  std::mt19937_64 random(11);
  static const std::string kReplacements = "{}[]\":,-.0123456789eE \\x\x7f\x80\n";
  std::size_t still_read = 0;
  std::size_t refused = 0;
  for (int i = 0; i < 3000; ++i) {
    const std::string text =
        mutated(serialize_index_file(canonical_index(1 + random() % 6, random())), 2, kReplacements,
                random);
    ASSERT_TRUE(agrees_with_document(text));
    if (parse_index_file_canonical(text)) ++still_read;
    if (!read_as_document(text).index) ++refused;
  }
  // Both sides of the contract are reached: edits it reads (inside names and numbers) and
  // edits that break the file.
  EXPECT_GT(still_read, 100u);
  EXPECT_GT(refused, 1000u);
}

}  // namespace
}  // namespace rulestream
