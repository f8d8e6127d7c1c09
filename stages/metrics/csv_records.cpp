#include "stages/metrics/csv_records.hpp"

namespace rulestream {

CsvRecordStatus next_csv_record(std::string_view text, std::size_t begin, bool text_is_all,
                                std::vector<std::string>& fields, std::size_t& end) {
  fields.clear();
  if (begin >= text.size()) return CsvRecordStatus::Incomplete;
  std::string field;
  bool quoted = false;         // inside a quoted part of the field
  bool field_started = false;  // a quote opened this field (what follows it is literal)
  std::size_t at = begin;
  while (at < text.size()) {
    const char c = text[at];
    if (quoted) {
      if (c == '"') {
        if (at + 1 >= text.size()) {
          if (!text_is_all) return CsvRecordStatus::Incomplete;  // a doubled quote, or the end?
          quoted = false;
          ++at;
          continue;
        }
        if (text[at + 1] == '"') {
          field.push_back('"');
          at += 2;
          continue;
        }
        quoted = false;
        ++at;
        continue;
      }
      field.push_back(c);
      ++at;
      continue;
    }
    if (c == ',') {
      fields.push_back(std::move(field));
      field.clear();
      field_started = false;
      ++at;
      continue;
    }
    if (c == '\n' || c == '\r') {
      fields.push_back(std::move(field));
      std::size_t next = at + 1;
      if (c == '\r') {
        if (next >= text.size() && !text_is_all) return CsvRecordStatus::Incomplete;
        if (next < text.size() && text[next] == '\n') ++next;
      }
      end = next;
      return CsvRecordStatus::Record;
    }
    if (c == '"' && field.empty() && !field_started) {
      quoted = true;
      field_started = true;
      ++at;
      continue;
    }
    field.push_back(c);
    ++at;
  }
  if (!text_is_all) return CsvRecordStatus::Incomplete;
  fields.push_back(std::move(field));
  end = text.size();
  return CsvRecordStatus::Record;
}

}  // namespace rulestream
