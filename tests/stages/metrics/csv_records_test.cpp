// CSV records as Python's csv.reader (excel dialect) splits them.

#include "stages/metrics/csv_records.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rulestream {
namespace {

std::vector<std::vector<std::string>> all_records(std::string_view text, bool text_is_all) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> fields;
  std::size_t at = 0;
  std::size_t end = 0;
  while (next_csv_record(text, at, text_is_all, fields, end) == CsvRecordStatus::Record) {
    records.push_back(fields);
    at = end;
  }
  return records;
}

using Records = std::vector<std::vector<std::string>>;

TEST(CsvRecords, SplitsAsPythonsCsvReader) {
  // list(csv.reader(io.StringIO('a,b,c\r\n1,"x,y",""\n"q""q",,3\n', newline='')))
  EXPECT_EQ(all_records("a,b,c\r\n1,\"x,y\",\"\"\n\"q\"\"q\",,3\n", false),
            (Records{{"a", "b", "c"}, {"1", "x,y", ""}, {"q\"q", "", "3"}}));
  // A quoted newline is part of the field; a quote inside an unquoted field is literal.
  EXPECT_EQ(all_records("\"two\nlines\",a\"b\n", false), (Records{{"two\nlines", "a\"b"}}));
  // Padded cells are kept as written (the loader strips them).
  EXPECT_EQ(all_records("  epoch,   train/box_loss\n", false),
            (Records{{"  epoch", "   train/box_loss"}}));
}

TEST(CsvRecords, ARecordWithoutItsNewlineWaitsUnlessTheFileIsWhole) {
  EXPECT_EQ(all_records("a,b\n1,2", false), (Records{{"a", "b"}}));
  EXPECT_EQ(all_records("a,b\n1,2", true), (Records{{"a", "b"}, {"1", "2"}}));
  // Inside quotes the record goes on, whatever follows.
  EXPECT_EQ(all_records("a,\"b\n", false), Records{});
  // A CR alone may be the start of a CRLF.
  EXPECT_EQ(all_records("a,b\r", false), Records{});
  EXPECT_EQ(all_records("a,b\r", true), (Records{{"a", "b"}}));
}

}  // namespace
}  // namespace rulestream
