#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/model/memory_budget.hpp"
#include "core/model/reduction_set.hpp"
#include "core/model/storage.hpp"
#include "core/model/tensor_value.hpp"
#include "trial/store/record_ref.hpp"

namespace rulestream {

// Decoded tensors and their reductions, keyed by where their record sits.
// Values are kept within a byte cap and within the job's MemoryBudget, which they share with
// the inflations of compressed event files: least recently used values leave first, to make
// room for a new one or when work needs the budget's bytes (reclaim); a value the budget has no
// room for even then is not kept. A value that left is read again from its file when asked for.
// Values that sit in a file mapping storage keeps (SharedBytes::in_kept_mapping: local event
// files) are never held, since reading them again costs a lookup and a slice. Reductions are
// small and kept for every record, so rules can look at every step of a long job without
// re-reading it (they are outside the budget, as the store's index is).
// Thread-safe; entries are striped over several locks so parallel decoders rarely meet. The
// cache holds the budget (shared) as long as it lives.
class RecordCache final : private MemoryBudget::Reclaimer {
 public:
  // Values within `value_budget_bytes`, a budget of the cache's own.
  explicit RecordCache(std::size_t value_budget_bytes);
  // Values within `value_cap_bytes` and what `budget`, shared with other holders, has room for.
  RecordCache(std::size_t value_cap_bytes, std::shared_ptr<MemoryBudget> budget);
  ~RecordCache();
  RecordCache(const RecordCache&) = delete;
  RecordCache& operator=(const RecordCache&) = delete;

  // The number of an event file (relative path), the same for the same path. A new one is
  // opened in `storage`, when given, for its record reads (file_handle), unless its name is
  // empty.
  FileId file_id(const std::string& file, const Storage* storage = nullptr);
  // The path file_id gave `id`; valid while the cache lives. Throws std::out_of_range for a
  // number it never gave.
  const std::string& file_name(FileId id) const;
  // The file file_id gave `id`, opened for reads (Storage::open_stored_file); null for an empty
  // name or when file_id was given no storage. Valid while the cache lives: a cache must not
  // outlive the storage it was given. Throws std::out_of_range for a number it never gave.
  const StoredFile* file_handle(FileId id) const;

  std::optional<TensorValue> value(RecordKey key);
  void put_value(RecordKey key, const TensorValue& value);

  std::optional<ReductionSet> reductions(RecordKey key);
  void put_reductions(RecordKey key, const ReductionSet& reductions);

  std::size_t value_bytes() const;
  // The cap on values (the budget they share may hold them to less).
  std::size_t value_budget() const { return budget_; }
  // The most the values held have taken at once (as bytes_of counts them): at most the cap.
  std::size_t peak_value_bytes() const { return peak_value_bytes_.load(); }

 private:
  struct KeyHash {
    std::size_t operator()(const RecordKey& key) const;
  };
  static constexpr std::size_t kStripes = 16;
  struct Stripe {
    mutable std::mutex mutex;
    // Most recently used first.
    std::list<std::pair<RecordKey, TensorValue>> values;
    std::unordered_map<RecordKey, std::list<std::pair<RecordKey, TensorValue>>::iterator, KeyHash>
        value_index;
    std::size_t value_bytes = 0;
    std::unordered_map<RecordKey, ReductionSet, KeyHash> reductions;
  };
  Stripe& stripe_for(RecordKey key);
  // What a value takes once kept (as `detached` keeps it): a copy, or all the buffer it is
  // most of.
  static std::size_t bytes_of(const TensorValue& value);
  // Removes the stripe's least recently used value (the caller holds its lock and gives the
  // bytes back to the budget); returns its bytes.
  std::size_t evict_oldest_locked(Stripe& stripe);
  // Evicts least recently used values, a stripe at a time round the stripes, until `bytes`
  // have gone back to the budget or none is left (MemoryBudget::Reclaimer).
  std::size_t reclaim(std::size_t bytes) override;

  std::size_t budget_;
  std::shared_ptr<MemoryBudget> memory_;
  std::atomic<std::size_t> next_reclaimed_stripe_{0};
  std::array<Stripe, kStripes> stripes_;
  // How many values the stripes hold: value() answers "none" without a lock while it is zero,
  // as it stays for a local replay, whose values are all read straight from local files
  // (put_value).
  std::atomic<std::size_t> values_held_{0};
  std::atomic<std::size_t> value_bytes_total_{0};  // over the stripes (peak_value_bytes)
  std::atomic<std::size_t> peak_value_bytes_{0};

  // Event file names and handles by FileId, read without a lock (every record read asks for its
  // file's): files_'s keys and values (map nodes never move) in chunks that are never moved or
  // freed, each slot written before files_published_ counts it.
  struct File {
    FileId id = 0;
    std::unique_ptr<StoredFile> handle;
  };
  struct FileSlot {
    const std::string* name = nullptr;
    const StoredFile* handle = nullptr;
  };
  static constexpr std::size_t kFileChunk = 4096;
  static constexpr std::size_t kMaxFileChunks = 4096;  // 16,777,216 files
  struct FileChunk {
    std::array<FileSlot, kFileChunk> slots{};
  };
  const FileSlot& file_slot(FileId id) const;

  mutable std::mutex files_mutex_;  // for file_id
  std::unordered_map<std::string, File> files_;
  std::array<std::unique_ptr<FileChunk>, kMaxFileChunks> file_chunks_;
  std::atomic<std::size_t> files_published_{0};
};

}  // namespace rulestream
