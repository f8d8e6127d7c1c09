#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace rulestream {

// A read-only view of bytes that keeps whatever owns them alive: a heap buffer, a mapped file
// or a slice of a larger record. Copying is cheap (a shared_ptr and a span), so decoded
// tensors can point into the buffer they were read from instead of copying their data.
class SharedBytes {
 public:
  SharedBytes() = default;
  // `bytes` is all that `owner` keeps alive (a whole buffer or mapping).
  SharedBytes(std::shared_ptr<const void> owner, std::span<const std::byte> bytes)
      : owner_(std::move(owner)), bytes_(bytes), owner_size_(bytes.size()) {}

  // Bytes of a whole file that storage keeps for further reads (LocalStorage::map_whole): its
  // mapping, or for a small file a copy. Reading them again costs a lookup.
  static SharedBytes of_kept_mapping(std::shared_ptr<const void> owner,
                                     std::span<const std::byte> bytes);
  // Bytes just copied out of a local file into a buffer storage hands out again once nothing
  // holds it (LocalStorage::read_records_range): what is kept for long should be copied out.
  static SharedBytes of_recycled_copy(std::shared_ptr<const void> owner,
                                      std::span<const std::byte> bytes);

  static SharedBytes copy_of(std::span<const std::byte> bytes);
  static SharedBytes from_vector(std::vector<std::byte> bytes);
  static SharedBytes from_string(std::string bytes);

  std::span<const std::byte> span() const { return bytes_; }
  const std::byte* data() const { return bytes_.data(); }
  std::size_t size() const { return bytes_.size(); }
  bool empty() const { return bytes_.empty(); }
  std::string_view as_string_view() const {
    return {reinterpret_cast<const char*>(bytes_.data()), bytes_.size()};
  }

  // A sub-range sharing the same owner. Throws std::out_of_range when it does not fit.
  SharedBytes slice(std::size_t offset, std::size_t length) const;

  // The same bytes through a reference count of their own, which holds one reference to the
  // owner: what is sliced from the result counts on it, apart from the owner's other holders.
  // Every slice takes a reference and gives it back, so threads slicing one file's mapping at
  // once (rules reading the same step's values) would otherwise all write the mapping's one
  // counter, whose cache line then moves between their cores at every slice. For a reader
  // about to cut many slices; costs one allocation.
  SharedBytes counted_apart() const;

  // How many bytes the owner keeps alive: the whole buffer or mapping a slice was cut from. A
  // small slice of a large owner holds on to all of it (RecordCache copies such slices).
  std::size_t owner_size() const { return owner_size_; }

  // Whether these bytes (or the bytes they were sliced from) came from of_kept_mapping.
  bool in_kept_mapping() const { return in_kept_mapping_; }
  // Whether they are a local file's bytes as it holds them now: of_kept_mapping or
  // of_recycled_copy (not a copy that went through a cache, a network or a decompressor).
  // Reading them again costs little, so caches need not hold on to them (RecordCache).
  bool from_local_file() const { return in_kept_mapping_ || recycled_; }
  // Whether they came from of_recycled_copy.
  bool recycled() const { return recycled_; }

 private:
  std::shared_ptr<const void> owner_;
  std::span<const std::byte> bytes_;
  std::size_t owner_size_ = 0;
  bool in_kept_mapping_ = false;
  bool recycled_ = false;
};

}  // namespace rulestream
