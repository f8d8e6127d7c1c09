#pragma once

// The loader stage of text metrics (stages/series/run_loader.hpp): reads one run's metrics
// files as their writers write them, into the series every format shares. A value is a
// (column or key, step, time) of a row:
// - CSV logs (Lightning's metrics.csv, Ultralytics' results.csv, stable-baselines3's
//   progress.csv, Keras' CSVLogger) grow by rows. The header names the columns (padded names
//   are stripped); metrics_keys.hpp chooses the step and the time; empty cells and cells that
//   are no number hold no value; "nan", "inf" and their spellings are values. A header that
//   gains columns (Lightning and stable-baselines3 rewrite the whole file then) is read again
//   from the start, the rows already read skipped. A CSV without a step column is not a metrics
//   file: a problem says so and it is not read.
// - JSON lines (OpenMMLab's scalars.json) grow by lines, each an object; its numbers are values.
//   Once a file has shown OpenMMLab's `iter`, a line without it is a validation line: its series
//   are named "val/<key>".
// - trainer_state.json (Hugging Face Trainer, also TRL and axolotl) is rewritten at each
//   checkpoint: each entry of its log_history is a step's values, and each series takes a step
//   once, the first time it is read (a rewrite adds only the steps beyond).
// A row cut short while being written waits for the rest (a replay's last row without its
// newline is read when it has every cell). Numbers are read as Python reads them
// (text_numbers.hpp). Times are seconds, NaN where a row has none.

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/model/file_filter.hpp"
#include "stages/metrics/metrics_keys.hpp"
#include "stages/series/run_loader.hpp"

namespace rulestream {

class MetricsRunLoader final : public RunLoader {
 public:
  explicit MetricsRunLoader(std::string run);

  const std::string& run() const override { return run_; }
  void before_read(const Storage& storage, const StoredObject& file) override;
  void read_bytes(const std::string& file, const SharedBytes& bytes, std::uint64_t bytes_offset,
                  bool last_bytes, SeriesValueSink& sink) override;
  void abandon(const std::string& file, std::uint64_t offset, const std::string& why) override;
  std::uint64_t resume_offset(const std::string& file) const override;
  bool file_dead(const std::string& file) const override;
  const std::deque<SeriesTag>& tags() const override { return tags_; }
  const std::vector<SeriesProblem>& problems() const override { return problems_; }
  // 0 once a file's times are seconds since its start; nullopt otherwise.
  std::optional<double> started() const override { return started_; }

 private:
  // Where a trainer_state.json's reading stands: its members are read one by one until
  // log_history, whose entries are read one by one, then the members after it.
  enum class StatePhase : unsigned char { Start, Members, Entries, Done };

  struct FileState {
    TextMetricsKind kind = TextMetricsKind::Csv;
    std::uint64_t resume_offset = 0;
    bool dead = false;
    std::uint64_t identity = 0;  // as last listed; 0 when storage cannot tell
    std::uint64_t listed_size = 0;
    std::int64_t listed_modified_ns = 0;
    // CSV: the header as written, its names, and the step and time among them.
    bool header_read = false;
    std::string header_bytes;
    std::vector<std::string> names;
    MetricsKeys keys;
    std::vector<const SeriesTag*> column_tags;  // by column, made at its first value
    std::uint64_t rows = 0;                     // rows read from the file's start
    std::uint64_t skip_rows = 0;  // rows read before the header was rewritten: not again
    // CSV and JSON lines: rows with no step, lines that are no JSON object (the first few are
    // problems; the rest are counted in one).
    std::uint64_t rows_without_step = 0;
    std::uint64_t bad_lines = 0;
    // JSON lines: a line with an `iter` key was read (OpenMMLab's training lines).
    bool iterations_seen = false;
    // trainer_state.json
    StatePhase phase = StatePhase::Start;
    std::uint64_t done_size = 0;  // its size and time when read to its end
    std::int64_t done_modified_ns = 0;
  };

  FileState& state_of(const std::string& file);
  void restart(FileState& state);
  void csv_before_read(const Storage& storage, const StoredObject& file, FileState& state);
  void read_csv(const std::string& file, std::string_view text, std::uint64_t offset,
                bool last_bytes, FileState& state, SeriesValueSink& sink);
  void read_json_lines(const std::string& file, std::string_view text, std::uint64_t offset,
                       bool last_bytes, FileState& state, SeriesValueSink& sink);
  void read_trainer_state(const std::string& file, std::string_view text, std::uint64_t offset,
                          FileState& state, SeriesValueSink& sink);
  const SeriesTag& tag_named(const std::string& name);
  // tag_named for the member at `position` of an object: objects of one log mostly hold the
  // same keys in the same order, so the tag found there last time is tried first.
  const SeriesTag& tag_at(std::size_t position, const std::string& name);
  void value(const SeriesTag& tag, std::int64_t step, double time, double value,
             SeriesValueSink& sink);
  // A row with no step, a line that is no JSON object: said for the first few of a file.
  void row_problem(const std::string& file, std::uint64_t offset, std::uint64_t& count,
                   const std::string& why);

  std::string run_;
  std::map<std::string, FileState, std::less<>> files_;
  std::deque<SeriesTag> tags_;
  std::unordered_map<std::string, std::size_t> tag_index_;
  std::vector<const SeriesTag*> tags_by_position_;  // tag_at's memory
  // trainer_state.json: the last step each tag took, by tag index.
  std::vector<std::optional<std::int64_t>> last_step_;
  std::vector<SeriesProblem> problems_;
  std::optional<double> started_;
};

}  // namespace rulestream
