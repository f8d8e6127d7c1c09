#pragma once

#include <cstdint>
#include <string>

namespace rulestream {

class PackedReductions;  // core/memory/packed_reductions.hpp

// An event file of the trial, by a number the cache gives it (file_id): records are looked up
// by number, not by path, millions of times in a long job.
using FileId = std::uint32_t;

// Where a record sits: its event file and the offset of its TFRecord.
struct RecordKey {
  FileId file = 0;
  std::uint64_t start = 0;
  friend bool operator==(const RecordKey&, const RecordKey&) = default;
};

// Where one saved tensor (or saved reduction) sits: a whole TFRecord in an event file.
// A store keeps one for every record of a job (millions), so it holds no strings of its own:
// TrialStore::file_of gives the file's path, and names are the store's.
struct RecordRef {
  FileId file_id = 0;  // the file's number in the store's RecordCache
  // Where the value sits in a raw record the pipeline decoded as it landed: the payload offset
  // of its Summary.Value's tensor field (decode_tensor_at). Reading it again then skips walking
  // the Event to it (a rule comparing runs reads every value of every step). 0: not known.
  // (It fills what would be padding after file_id.)
  std::uint32_t tensor_field = 0;
  std::uint64_t start = 0;
  std::uint64_t length = 0;
  // The tag inside a saved reduction's record (its own name), kept once by the store; null for
  // a raw value, whose tag is the tensor's name.
  const std::string* record_name = nullptr;
  // A raw value's reductions when they were computed as it landed (a pipeline decodes what its
  // rules read): found here without a cache lookup, in a LandedReductions block the store keeps
  // for as long as it lives. Otherwise computed on demand and cached.
  const PackedReductions* reductions = nullptr;

  RecordKey key() const { return {file_id, start}; }
};
static_assert(sizeof(RecordRef) <= 40, "a store keeps a RecordRef for every record of a job");

}  // namespace rulestream
