#include "stages/metrics/metrics_run_loader.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "stages/metrics/csv_records.hpp"
#include "stages/metrics/json_scan.hpp"
#include "stages/metrics/text_numbers.hpp"

namespace rulestream {
namespace {

constexpr double kNoTime = std::numeric_limits<double>::quiet_NaN();
// Rows with no step and bad lines said one by one per file; the rest are counted in one.
constexpr std::uint64_t kRowProblemsSaid = 5;
// What a Git LFS pointer file starts with.
constexpr std::string_view kGitLfsPointer = "version https://git-lfs.github.com/spec/";
// How much of a CSV log's start is read to see whether its header changed.
constexpr std::uint64_t kHeaderLook = std::uint64_t{64} << 10;

std::string_view chars_of(const SharedBytes& bytes) {
  const auto span = bytes.span();
  return {reinterpret_cast<const char*>(span.data()), span.size()};
}

std::string at_offset(const std::string& file, std::uint64_t offset) {
  return file + ": at offset " + std::to_string(offset);
}

std::vector<std::string> header_names(std::vector<std::string> fields) {
  for (std::string& field : fields) field = std::string(strip_spaces(field));
  // A byte order mark some Windows tools write before the first name.
  if (!fields.empty() && fields.front().starts_with("\xEF\xBB\xBF")) {
    fields.front() = std::string(strip_spaces(std::string_view(fields.front()).substr(3)));
  }
  return fields;
}

}  // namespace

MetricsRunLoader::MetricsRunLoader(std::string run) : run_(std::move(run)) {}

MetricsRunLoader::FileState& MetricsRunLoader::state_of(const std::string& file) {
  const auto found = files_.find(file);
  if (found != files_.end()) return found->second;
  FileState& state = files_[file];
  state.kind = text_metrics_kind(file).value_or(TextMetricsKind::Csv);
  return state;
}

std::uint64_t MetricsRunLoader::resume_offset(const std::string& file) const {
  const auto found = files_.find(file);
  return found == files_.end() ? 0 : found->second.resume_offset;
}

bool MetricsRunLoader::file_dead(const std::string& file) const {
  const auto found = files_.find(file);
  return found != files_.end() && found->second.dead;
}

void MetricsRunLoader::abandon(const std::string& file, std::uint64_t offset,
                               const std::string& why) {
  problems_.push_back({file, offset, at_offset(file, offset) + ": " + why});
  state_of(file).dead = true;
}

void MetricsRunLoader::restart(FileState& state) {
  const TextMetricsKind kind = state.kind;
  const std::uint64_t identity = state.identity;
  state = FileState{};
  state.kind = kind;
  state.identity = identity;
}

void MetricsRunLoader::before_read(const Storage& storage, const StoredObject& file) {
  FileState& state = state_of(file.path);
  const bool other_file =
      file.identity != 0 && state.identity != 0 && file.identity != state.identity;
  const bool cut = file.size < state.resume_offset;
  if (file.identity != 0) state.identity = file.identity;
  state.listed_size = file.size;
  state.listed_modified_ns = file.modified_ns;
  switch (state.kind) {
    case TextMetricsKind::TrainerState: {
      // Rewritten whole at each save: read again from its start; the steps each series
      // already took are not taken again, so nothing is said.
      const bool rewritten =
          state.phase == StatePhase::Done &&
          (file.size != state.done_size || file.modified_ns != state.done_modified_ns);
      if (other_file || cut || rewritten) restart(state);
      return;
    }
    case TextMetricsKind::Csv:
    case TextMetricsKind::JsonLines:
      if (other_file || cut) {
        problems_.push_back(
            {file.path, 0,
             file.path +
                 (other_file ? ": replaced by another file of the same name"
                             : ": now " + std::to_string(file.size) + " bytes, shorter than the " +
                                   std::to_string(state.resume_offset) + " already read") +
                 "; it is read again from its start, and its steps count as a restart",
             false});
        restart(state);
        return;
      }
      if (state.kind == TextMetricsKind::Csv) csv_before_read(storage, file, state);
      return;
  }
}

void MetricsRunLoader::csv_before_read(const Storage& storage, const StoredObject& file,
                                       FileState& state) {
  if (!state.header_read || state.dead || file.size <= state.resume_offset) return;
  // A writer that meets a new column rewrites the whole file under a longer header (Lightning,
  // stable-baselines3): the header read before is then no longer the file's start.
  // The header's own bytes first (one small read at each growth); more only when they differ.
  const SharedBytes header = storage.read_range(
      file.path, 0, std::min<std::uint64_t>(file.size, state.header_bytes.size()));
  if (chars_of(header) == state.header_bytes) return;
  const std::uint64_t look = std::min<std::uint64_t>(file.size, kHeaderLook);
  const SharedBytes start = storage.read_range(file.path, 0, look);
  const std::string_view text = chars_of(start);
  std::vector<std::string> fields;
  std::size_t end = 0;
  const bool whole =
      next_csv_record(text, 0, look == file.size, fields, end) == CsvRecordStatus::Record;
  const std::vector<std::string> names = header_names(std::move(fields));
  const bool grew =
      whole && std::all_of(state.names.begin(), state.names.end(), [&](const std::string& name) {
        return std::find(names.begin(), names.end(), name) != names.end();
      });
  const std::uint64_t rows = state.rows;
  restart(state);
  if (grew) {
    state.skip_rows = rows;  // the same rows, written again with the new columns
    return;
  }
  problems_.push_back({file.path, 0,
                       file.path + ": its header changed to one without every column it had; it is "
                                   "read again from its start, and its steps count as a restart",
                       false});
}

void MetricsRunLoader::read_bytes(const std::string& file, const SharedBytes& bytes,
                                  std::uint64_t bytes_offset, bool last_bytes,
                                  SeriesValueSink& sink) {
  FileState& state = state_of(file);
  if (state.dead) return;
  if (state.resume_offset < bytes_offset || state.resume_offset - bytes_offset > bytes.size()) {
    throw std::invalid_argument("MetricsRunLoader::read_bytes: bytes from offset " +
                                std::to_string(bytes_offset) + " do not hold offset " +
                                std::to_string(state.resume_offset) + " of " + file);
  }
  const std::string_view text = chars_of(bytes);
  if (bytes_offset == 0 && state.resume_offset == 0 && text.starts_with(kGitLfsPointer)) {
    // A repository's large file not fetched: what it stands for is not here to read.
    problems_.push_back({file, 0,
                         file + ": a Git LFS pointer, not the file it stands for (git lfs pull "
                                "fetches it); it is not read"});
    state.dead = true;
    return;
  }
  switch (state.kind) {
    case TextMetricsKind::Csv:
      read_csv(file, text, bytes_offset, last_bytes, state, sink);
      return;
    case TextMetricsKind::JsonLines:
      read_json_lines(file, text, bytes_offset, last_bytes, state, sink);
      return;
    case TextMetricsKind::TrainerState:
      read_trainer_state(file, text, bytes_offset, state, sink);
      return;
  }
}

const SeriesTag& MetricsRunLoader::tag_named(const std::string& name) {
  const auto found = tag_index_.find(name);
  if (found != tag_index_.end()) return tags_[found->second];
  const std::size_t index = tags_.size();
  tags_.push_back(
      {.run = run_, .name = name, .kind = TagKind::Scalar, .plugin_name = {}, .index = index});
  tag_index_.emplace(name, index);
  last_step_.emplace_back();
  return tags_.back();
}

const SeriesTag& MetricsRunLoader::tag_at(std::size_t position, const std::string& name) {
  if (position >= tags_by_position_.size()) tags_by_position_.resize(position + 1, nullptr);
  const SeriesTag*& tag = tags_by_position_[position];
  if (tag == nullptr || tag->name != name) tag = &tag_named(name);
  return *tag;
}

void MetricsRunLoader::value(const SeriesTag& tag, std::int64_t step, double time, double value,
                             SeriesValueSink& sink) {
  SummaryReading reading;
  reading.kind = TagKind::Scalar;
  reading.scalar = value;
  sink.on_value(tag, step, time, reading);
}

void MetricsRunLoader::row_problem(const std::string& file, std::uint64_t offset,
                                   std::uint64_t& count, const std::string& why) {
  ++count;
  if (count > kRowProblemsSaid) return;
  problems_.push_back(
      {file, offset,
       at_offset(file, offset) + ": " + why +
           (count == kRowProblemsSaid ? " (further such rows of this file are not said one by one)"
                                      : "")});
}

void MetricsRunLoader::read_csv(const std::string& file, std::string_view text,
                                std::uint64_t offset, bool last_bytes, FileState& state,
                                SeriesValueSink& sink) {
  std::size_t at = state.resume_offset - offset;
  std::vector<std::string> fields;
  std::size_t end = 0;
  if (!state.header_read) {
    if (next_csv_record(text, at, last_bytes, fields, end) != CsvRecordStatus::Record) return;
    state.header_bytes = std::string(text.substr(at, end - at));
    state.names = header_names(std::move(fields));
    state.keys = choose_metrics_keys(state.names, true);
    state.resume_offset = offset + end;
    at = end;
    if (!state.keys.step) {
      problems_.push_back(
          {file, 0,
           file + ": no column is a step (" + metrics_step_names() + "): not read as metrics",
           false});
      state.dead = true;
      return;
    }
    state.header_read = true;
    if (state.keys.time && state.keys.time_kind == MetricsTimeKind::SinceStart) started_ = 0.0;
    state.column_tags.assign(state.names.size(), nullptr);
  }
  const std::size_t step_column = *state.keys.step;
  for (;;) {
    if (next_csv_record(text, at, last_bytes, fields, end) != CsvRecordStatus::Record) return;
    const std::uint64_t row_offset = offset + at;
    const bool cut_short = end == text.size() && text.back() != '\n' && text.back() != '\r' &&
                           fields.size() < state.names.size();
    at = end;
    state.resume_offset = offset + end;
    if (cut_short) {
      // The last row of a finished file, without its newline and some of its cells: a writer
      // stopped in the middle of it. Nothing whole is lost.
      problems_.push_back({file, row_offset,
                           at_offset(file, row_offset) + ": the last row ends after " +
                               std::to_string(fields.size()) + " of " +
                               std::to_string(state.names.size()) + " cells; it is not read",
                           false});
      return;
    }
    if (std::all_of(fields.begin(), fields.end(),
                    [](const std::string& field) { return strip_spaces(field).empty(); })) {
      continue;  // a blank line
    }
    if (++state.rows <= state.skip_rows) continue;
    const auto step_value =
        step_column < fields.size() ? parse_python_float(fields[step_column]) : std::nullopt;
    const auto step = step_value ? integral_step(*step_value) : std::nullopt;
    if (!step) {
      row_problem(file, row_offset, state.rows_without_step,
                  "a row with no whole number in its step column '" + state.names[step_column] +
                      "'; its values are not read");
      continue;
    }
    double time = kNoTime;
    if (state.keys.time && *state.keys.time < fields.size()) {
      time = parse_python_float(fields[*state.keys.time]).value_or(kNoTime);
    }
    const std::size_t cells = std::min(fields.size(), state.names.size());
    for (std::size_t column = 0; column < cells; ++column) {
      // A column without a name (pandas' index written by to_csv) is no series.
      if (column == step_column || column == state.keys.time || state.names[column].empty()) {
        continue;
      }
      const auto number = parse_python_float(fields[column]);
      if (!number) continue;  // empty, or text: no value
      const SeriesTag*& tag = state.column_tags[column];
      if (tag == nullptr) tag = &tag_named(state.names[column]);
      value(*tag, *step, time, *number, sink);
    }
  }
}

void MetricsRunLoader::read_json_lines(const std::string& file, std::string_view text,
                                       std::uint64_t offset, bool last_bytes, FileState& state,
                                       SeriesValueSink& sink) {
  std::size_t at = state.resume_offset - offset;
  std::vector<JsonMember> members;
  std::vector<std::string> names;
  while (at < text.size()) {
    std::size_t newline = text.find('\n', at);
    const bool final_line = newline == std::string_view::npos;
    if (final_line && !last_bytes) return;  // the rest of the line is still being written
    const std::size_t end = final_line ? text.size() : newline + 1;
    const std::string_view line = strip_spaces(text.substr(at, end - at));
    const std::uint64_t line_offset = offset + at;
    at = end;
    state.resume_offset = offset + end;
    if (line.empty()) continue;
    JsonScanner scanner(line);
    const ScanStatus status = scanner.flat_object(members);
    if (status != ScanStatus::Complete || scanner.peek().has_value()) {
      if (final_line) {
        problems_.push_back({file, line_offset,
                             at_offset(file, line_offset) +
                                 ": the last line ends before its object does; it is not read",
                             false});
        return;
      }
      row_problem(file, line_offset, state.bad_lines,
                  "a line that is no JSON object (" +
                      (status == ScanStatus::Invalid ? scanner.error() + " at its byte " +
                                                           std::to_string(scanner.error_position())
                                                     : std::string("it ends inside a value")) +
                      "); it is not read");
      continue;
    }
    names.clear();
    for (const JsonMember& member : members) names.push_back(member.key);
    const MetricsKeys keys = choose_metrics_keys(names, false);
    const auto step = keys.step && members[*keys.step].value.kind == JsonScalar::Kind::Number
                          ? integral_step(members[*keys.step].value.number)
                          : std::nullopt;
    if (!step) {
      row_problem(file, line_offset, state.rows_without_step,
                  "a line with no whole number under a step key (" + metrics_step_names() +
                      "); its values are not read");
      continue;
    }
    double time = kNoTime;
    if (keys.time && members[*keys.time].value.kind == JsonScalar::Kind::Number) {
      time = members[*keys.time].value.number;
      if (keys.time_kind == MetricsTimeKind::SinceStart) started_ = 0.0;
    }
    // OpenMMLab writes a training line with its iteration (`iter`) and a validation line
    // without, its step then counting epochs or validations: once a file has shown `iter`, a
    // line without it is validation, its series named "val/<key>" (a mode of their own, not
    // steps of another unit in the training series of the same name).
    const bool has_iter = std::any_of(members.begin(), members.end(), [](const JsonMember& member) {
      return member.key == "iter";
    });
    state.iterations_seen = state.iterations_seen || has_iter;
    const std::string_view prefix = state.iterations_seen && !has_iter ? "val/" : "";
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (i == keys.step || i == keys.time) continue;
      if (members[i].value.kind != JsonScalar::Kind::Number) continue;
      value(prefix.empty() ? tag_at(i, members[i].key)
                           : tag_named(std::string(prefix) + members[i].key),
            *step, time, members[i].value.number, sink);
    }
  }
}

void MetricsRunLoader::read_trainer_state(const std::string& file, std::string_view text,
                                          std::uint64_t offset, FileState& state,
                                          SeriesValueSink& sink) {
  JsonScanner scanner(text, state.resume_offset - offset);
  const auto consumed = [&] { state.resume_offset = offset + scanner.position(); };
  // What is not JSON ends the file: where the scanner stands, or where it found the fault.
  const auto fail = [&](const std::string& why, bool at_fault = false) {
    const std::uint64_t at = offset + (at_fault ? scanner.error_position() : scanner.position());
    problems_.push_back({file, at,
                         at_offset(file, at) + ": not the JSON of a trainer_state.json (" + why +
                             "); the rest of the file is not read"});
    state.dead = true;
  };
  std::vector<JsonMember> members;
  std::string key;
  for (;;) {
    if (state.phase == StatePhase::Done) {
      state.resume_offset = offset + text.size();  // whatever follows the object
      state.done_size = state.listed_size;
      state.done_modified_ns = state.listed_modified_ns;
      return;
    }
    const auto next = scanner.peek();
    if (!next) return;
    switch (state.phase) {
      case StatePhase::Start:
        if (*next != '{') return fail("it does not start with an object");
        scanner.advance();
        consumed();
        state.phase = StatePhase::Members;
        continue;
      case StatePhase::Members: {
        if (*next == '}') {
          scanner.advance();
          consumed();
          state.phase = StatePhase::Done;
          continue;
        }
        if (*next == ',') {
          scanner.advance();
          consumed();
          continue;
        }
        if (*next != '"') return fail("a member without a key");
        ScanStatus status = scanner.string(key);
        if (status == ScanStatus::Invalid) return fail(scanner.error(), true);
        if (status == ScanStatus::Incomplete) return;
        const auto colon = scanner.peek();
        if (!colon) return;
        if (*colon != ':') return fail("no ':' after a key");
        scanner.advance();
        if (key == "log_history") {
          const auto bracket = scanner.peek();
          if (!bracket) return;
          if (*bracket != '[') return fail("log_history is not a list");
          scanner.advance();
          consumed();
          state.phase = StatePhase::Entries;
          continue;
        }
        JsonScalar skipped;
        status = scanner.value(skipped);
        if (status == ScanStatus::Invalid) return fail(scanner.error(), true);
        if (status == ScanStatus::Incomplete) return;
        consumed();
        continue;
      }
      case StatePhase::Entries: {
        if (*next == ']') {
          scanner.advance();
          consumed();
          state.phase = StatePhase::Members;
          continue;
        }
        if (*next == ',') {
          scanner.advance();
          consumed();
          continue;
        }
        const std::uint64_t entry_offset = offset + scanner.position();
        const ScanStatus status = scanner.flat_object(members);
        if (status == ScanStatus::Invalid) return fail(scanner.error(), true);
        if (status == ScanStatus::Incomplete) return;
        consumed();
        const auto found =
            std::find_if(members.begin(), members.end(),
                         [](const JsonMember& member) { return member.key == "step"; });
        const std::size_t step_at = static_cast<std::size_t>(found - members.begin());
        const auto step = found != members.end() && found->value.kind == JsonScalar::Kind::Number
                              ? integral_step(found->value.number)
                              : std::nullopt;
        if (!step) {
          row_problem(file, entry_offset, state.rows_without_step,
                      "a log_history entry with no whole number as its step; its values are "
                      "not read");
          continue;
        }
        for (std::size_t i = 0; i < members.size(); ++i) {
          const JsonMember& member = members[i];
          if (i == step_at || member.value.kind != JsonScalar::Kind::Number) continue;
          const SeriesTag& tag = tag_at(i, member.key);
          std::optional<std::int64_t>& last = last_step_[tag.index];
          if (last && *step <= *last) continue;  // taken when the file was read before
          last = *step;
          value(tag, *step, kNoTime, member.value.number, sink);
        }
        continue;
      }
      case StatePhase::Done:
        break;
    }
  }
}

}  // namespace rulestream
