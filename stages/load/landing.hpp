#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/memory/packed_reductions.hpp"
#include "core/memory/record_arena.hpp"
#include "core/model/collection.hpp"
#include "stages/format/index_file.hpp"

namespace rulestream {

// What the loader hands the trial store (TrialStore::ingest): the landings of index and
// collections files, and the reductions of the records it decoded as they landed.

// Reductions of an index file's values, computed as they landed: one block per file rather than
// an allocation per record (a small-tensor job has millions of records). Only the records a
// pipeline decoded have a set, so a rule over one loss does not cost a set per gradient.
// The block lives in the store's RecordArena (huge pages where the kernel has them), which it
// keeps alive.
class LandedReductions {
 public:
  LandedReductions(std::size_t count, std::shared_ptr<RecordArena> arena);

  std::span<PackedReductions> sets;
  std::span<std::uint32_t> records;        // the index's tensor position of each set, ascending
  std::span<std::uint8_t> computed;        // 1 where the record decoded and its set was filled
  std::span<std::uint32_t> tensor_fields;  // RecordRef::tensor_field of each decoded record

 private:
  std::shared_ptr<RecordArena> arena_;
};

// An index file that landed: what one worker saved at one global step.
struct IndexLanding {
  std::string path;
  std::int64_t step = 0;
  std::string worker;
  IndexFile index;
  // Reductions of some of index.tensors' values, computed as they landed; null when none were.
  std::shared_ptr<const LandedReductions> reductions;
  // When the file arrived: the time a live pipeline saw it, or the file's modification time
  // for a listing (replay, Trial::open). nullopt when unknown.
  std::optional<std::chrono::system_clock::time_point> arrival;
};

// Collections files that landed: the first defines the collections, each names a worker.
struct CollectionsLanding {
  std::shared_ptr<const std::map<std::string, Collection>> collections;
  std::optional<int> num_workers;
  std::vector<std::string> workers;
};

}  // namespace rulestream
