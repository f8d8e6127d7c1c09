#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/memory/record_arena.hpp"
#include "core/model/growing_reservation.hpp"
#include "core/model/memory_budget.hpp"
#include "core/model/shared_bytes.hpp"
#include "core/model/storage.hpp"
#include "core/model/tensor_value.hpp"
#include "stages/format/index_file.hpp"
#include "stages/load/decode_selection.hpp"
#include "stages/load/landing.hpp"

namespace rulestream {

// Where the values a loader decodes for rules go: the trial store's value cache, which sits
// above this floor (trial/store). Called from the loader's threads, concurrently.
class DecodedValueKeeper {
 public:
  virtual ~DecodedValueKeeper() = default;
  // The number the keeper gives `file` (asked once per event file that has records to decode).
  virtual std::uint32_t file_number(const std::string& file) = 0;
  // Keeps the value of the record at `start` of file `file_number`, for rules to read.
  virtual void keep(std::uint32_t file_number, std::uint64_t start, const TensorValue& value) = 0;
};

// Counters the loader adds to as it goes, for progress reports (the pipeline's own).
struct LoadCounters {
  std::atomic<std::uint64_t>* event_bytes = nullptr;     // bytes of event files read
  std::atomic<std::int64_t>* tensors_decoded = nullptr;  // records decoded and reduced
};

// Reads the records of an index file's event file that the rules use, frames, decodes and
// reduces them in one pass (in parallel), and hands back their reductions as a LandedReductions
// block in the store's arena; values rules read whole go to the DecodedValueKeeper.
//
// How it reads, cheapest first: from a local file, cache-sized batches of nearby records into a
// reused buffer (stages/load/record_batches.hpp); where that cannot be (S3, a compressed file),
// the ranges around the wanted records when they are a small share of the file, else the whole
// file (inflated when compressed). A local file whose values rules will read much of stays
// mapped by storage (Storage::map_whole), so their reads are slices rather than cached copies.
//
// A record that cannot be read, framed or decoded is reported (file, offset and tensor) and
// left without reductions: the rule that asks for it gets the precise error. Nothing thrown
// leaves load(). Thread-safe: the graph's loader node calls it from several threads at once.
class EventFileLoader {
 public:
  using ProblemReport = std::function<void(std::string path, std::string message)>;

  // `storage` and `arena` must outlive the loader's calls; `report` is called from any thread.
  // A compressed event file is inflated whole, its bytes taken from `budget` (the job's, which
  // the value cache draws on too) for as long as its records are decoded: when the budget is
  // short the inflation evicts cached values, then waits for another thread's inflation to end;
  // one that cannot fit even then is reported and not read (GrowingReservation).
  EventFileLoader(std::shared_ptr<const Storage> storage, std::shared_ptr<RecordArena> arena,
                  bool check_data_crc, std::shared_ptr<MemoryBudget> budget, ProblemReport report,
                  LoadCounters counters);

  // The reductions of the records of `index` whose use (uses[i] for index.tensors[i], from
  // DecodeSelection) is not None; values of those marked Values go to `keeper`. Null when the
  // index names no event file or no record is wanted.
  std::shared_ptr<const LandedReductions> load(const IndexFile& index,
                                               std::span<const DecodeSelection::Use> uses,
                                               DecodedValueKeeper& keeper) const;

 private:
  // A record of the event file the rules use; `keep_value`: they read its value, not only its
  // reductions.
  struct WantedRecord {
    const TensorLocation* location;
    bool keep_value;
  };
  // Bytes of an event file from offset `start`: the whole file, or a range around wanted records.
  struct FilePart {
    std::uint64_t start = 0;
    SharedBytes bytes;
    // Holds the budget's bytes for `bytes` when they were inflated, as long as the part lives.
    std::optional<GrowingReservation> inflation;
  };
  // What one load() works on, passed down its steps.
  struct Job {
    const std::string& file;
    const std::string& where;  // "<storage>/<file>", for problems
    std::uint32_t file_number;
    DecodedValueKeeper& keeper;
    LandedReductions& landed;
  };

  // Maps the whole file and has storage keep the mapping (Storage::map_whole), for the rules to
  // read the values they ask for from it (the value cache keeps no copies of such values).
  // false when nothing was kept: storage that does not map (S3), or a compressed file.
  bool keep_mapped_for_rules(const std::string& file) const;
  // Reads the records a cache-sized batch at a time. false where storage cannot (S3) or the
  // file is compressed: then decode_from_parts.
  bool decode_in_batches(const std::vector<WantedRecord>& wanted, const Job& job) const;
  // Reads the file whole, or the ranges around the records (read_parts).
  void decode_from_parts(const IndexFile& index, const std::vector<WantedRecord>& wanted,
                         bool keep_mapped, const Job& job) const;
  // Decodes the record framed `offset` bytes into `bytes` into landed's entry i, and keeps its
  // value when the rules read it. `bytes_owned`: whether `bytes` keep their buffer alive.
  void reduce_record(const SharedBytes& bytes, std::uint64_t offset, bool bytes_owned,
                     const WantedRecord& wanted, std::size_t i, const Job& job) const;
  // The bytes of the file the `wanted` records sit in (StorageError, FormatError);
  // `keep_mapped`: rules will read much of it as values, so storage should keep it mapped.
  std::vector<FilePart> read_parts(const IndexFile& index,
                                   const std::vector<const TensorLocation*>& wanted,
                                   bool keep_mapped, const Job& job) const;
  static const FilePart* part_holding(const std::vector<FilePart>& parts, std::uint64_t offset);

  std::shared_ptr<const Storage> storage_;
  std::shared_ptr<RecordArena> arena_;
  bool check_data_crc_;
  std::shared_ptr<MemoryBudget> budget_;
  ProblemReport report_;
  LoadCounters counters_;
};

}  // namespace rulestream
