#include "trial/store/record_cache.hpp"

#include <stdexcept>
#include <string>

namespace rulestream {

RecordCache::RecordCache(std::size_t value_budget_bytes)
    : RecordCache(value_budget_bytes, std::make_shared<MemoryBudget>(value_budget_bytes)) {}

RecordCache::RecordCache(std::size_t value_cap_bytes, std::shared_ptr<MemoryBudget> budget)
    : budget_(value_cap_bytes), memory_(std::move(budget)) {
  memory_->add_reclaimer(*this);
}

RecordCache::~RecordCache() {
  // Out of the budget's reach before the values go, then their bytes back to it.
  memory_->remove_reclaimer(*this);
  memory_->release(value_bytes_total_.load());
}

FileId RecordCache::file_id(const std::string& file, const Storage* storage) {
  std::lock_guard lock(files_mutex_);
  if (const auto it = files_.find(file); it != files_.end()) return it->second.id;
  const std::size_t id = files_.size();
  if (id >= kFileChunk * kMaxFileChunks) {
    throw std::length_error("a trial of more than " + std::to_string(kFileChunk * kMaxFileChunks) +
                            " event files: " + file);
  }
  const auto it =
      files_
          .emplace(file, File{static_cast<FileId>(id), file.empty() || storage == nullptr
                                                           ? nullptr
                                                           : storage->open_stored_file(file)})
          .first;
  std::unique_ptr<FileChunk>& chunk = file_chunks_[id / kFileChunk];
  if (!chunk) chunk = std::make_unique<FileChunk>();
  chunk->slots[id % kFileChunk] = {&it->first, it->second.handle.get()};
  files_published_.store(id + 1, std::memory_order_release);
  return it->second.id;
}

const RecordCache::FileSlot& RecordCache::file_slot(FileId id) const {
  if (id >= files_published_.load(std::memory_order_acquire)) {
    throw std::out_of_range("no event file has number " + std::to_string(id));
  }
  return file_chunks_[id / kFileChunk]->slots[id % kFileChunk];
}

const std::string& RecordCache::file_name(FileId id) const {
  return *file_slot(id).name;
}

const StoredFile* RecordCache::file_handle(FileId id) const {
  return file_slot(id).handle;
}

std::size_t RecordCache::KeyHash::operator()(const RecordKey& key) const {
  // splitmix64's finaliser over both fields: offsets of one file differ only in their low bits,
  // and both the stripe and the bucket are taken from this hash.
  std::uint64_t x = key.start ^ (std::uint64_t{key.file} * 0x9e3779b97f4a7c15ull);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return static_cast<std::size_t>(x ^ (x >> 31));
}

RecordCache::Stripe& RecordCache::stripe_for(RecordKey key) {
  return stripes_[(KeyHash{}(key) >> 59) % kStripes];  // high bits: the buckets use the low ones
}

std::size_t RecordCache::bytes_of(const TensorValue& value) {
  if (!value.is_string()) {
    const SharedBytes& bytes = value.bytes();
    return bytes.size() * 2 >= bytes.owner_size() ? bytes.owner_size() : bytes.size();
  }
  std::size_t bytes = 0;
  for (const auto& text : value.strings()) bytes += text.size() + sizeof(std::string);
  return bytes;
}

std::optional<TensorValue> RecordCache::value(RecordKey key) {
  // A value being put this instant may be missed: it is read again, as after an eviction.
  if (values_held_.load(std::memory_order_relaxed) == 0) return std::nullopt;
  Stripe& stripe = stripe_for(key);
  std::lock_guard lock(stripe.mutex);
  const auto it = stripe.value_index.find(key);
  if (it == stripe.value_index.end()) return std::nullopt;
  stripe.values.splice(stripe.values.begin(), stripe.values, it->second);
  return it->second->second;
}

namespace {

// A decoded value points into the buffer its event file was read into (or the file's mapping),
// and keeps all of it alive. A value kept in the cache that is a small part of that (a 4-byte
// loss, one 256 KiB tensor of a 13 MB file) gets bytes of its own, so the budget counts what
// the cache really holds; a value that is most of its buffer stays zero-copy.
TensorValue detached(const TensorValue& value) {
  if (value.is_string()) return value;
  const SharedBytes& bytes = value.bytes();
  if (bytes.size() * 2 >= bytes.owner_size()) return value;
  return TensorValue(value.dtype(), value.shape(), SharedBytes::copy_of(bytes.span()));
}

}  // namespace

void RecordCache::put_value(RecordKey key, const TensorValue& value) {
  // Read straight from a local file (its kept mapping, or a recycled copy): reading and decoding
  // it again is a slice or a pread from the page cache, cheaper than an LRU of copies.
  if (!value.is_string() && value.bytes().from_local_file()) return;
  const std::size_t bytes = bytes_of(value);
  const std::size_t stripe_budget = budget_ / kStripes;
  if (bytes > stripe_budget) return;  // would evict everything else for one value
  Stripe& stripe = stripe_for(key);
  {
    // Room within the stripe's share of the cap first: the values that leave give their bytes
    // back to the budget, where this one may take them.
    std::lock_guard lock(stripe.mutex);
    if (stripe.value_index.contains(key)) return;
    std::size_t evicted = 0;
    while (stripe.value_bytes + bytes > stripe_budget && !stripe.values.empty()) {
      evicted += evict_oldest_locked(stripe);
    }
    memory_->release(evicted);
  }
  // Then within the job's budget: this cache's own oldest values leave; what other holders
  // hold is theirs (inflations in progress, inflated files), and this value is read again
  // rather than wait for it.
  if (!memory_->try_reserve(bytes) && (reclaim(bytes) == 0 || !memory_->try_reserve(bytes))) {
    return;
  }
  TensorValue kept = detached(value);  // its copy made only once its bytes are the budget's
  std::size_t total = 0;
  {
    std::lock_guard lock(stripe.mutex);
    if (stripe.value_index.contains(key)) {
      memory_->release(bytes);  // another thread kept it meanwhile
      return;
    }
    stripe.values.emplace_front(key, std::move(kept));
    stripe.value_index[key] = stripe.values.begin();
    stripe.value_bytes += bytes;
    values_held_.fetch_add(1, std::memory_order_relaxed);
    // Counted while the lock keeps it from leaving: the total never counts it gone first.
    total = value_bytes_total_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    // Others may have filled the stripe meanwhile: back within its share (not this value).
    std::size_t evicted = 0;
    while (stripe.value_bytes > stripe_budget && stripe.values.size() > 1) {
      evicted += evict_oldest_locked(stripe);
    }
    memory_->release(evicted);
    total -= evicted;
  }
  // The total after this put (each stripe within its share, so never above the cap), and its
  // peak: what --max-memory's cap on decoded copies is checked by.
  std::size_t peak = peak_value_bytes_.load(std::memory_order_relaxed);
  while (total > peak && !peak_value_bytes_.compare_exchange_weak(peak, total)) {
  }
}

std::size_t RecordCache::evict_oldest_locked(Stripe& stripe) {
  auto& oldest = stripe.values.back();
  const std::size_t bytes = bytes_of(oldest.second);
  stripe.value_bytes -= bytes;
  stripe.value_index.erase(oldest.first);
  stripe.values.pop_back();
  values_held_.fetch_sub(1, std::memory_order_relaxed);
  value_bytes_total_.fetch_sub(bytes, std::memory_order_relaxed);
  return bytes;
}

std::size_t RecordCache::reclaim(std::size_t bytes) {
  std::size_t given = 0;
  std::size_t empty_in_a_row = 0;
  while (given < bytes && empty_in_a_row < kStripes &&
         values_held_.load(std::memory_order_relaxed) > 0) {
    Stripe& stripe = stripes_[next_reclaimed_stripe_.fetch_add(1) % kStripes];
    std::lock_guard lock(stripe.mutex);
    if (stripe.values.empty()) {
      ++empty_in_a_row;
      continue;
    }
    empty_in_a_row = 0;
    const std::size_t evicted = evict_oldest_locked(stripe);
    memory_->release(evicted);
    given += evicted;
  }
  return given;
}

std::optional<ReductionSet> RecordCache::reductions(RecordKey key) {
  Stripe& stripe = stripe_for(key);
  std::lock_guard lock(stripe.mutex);
  const auto it = stripe.reductions.find(key);
  if (it == stripe.reductions.end()) return std::nullopt;
  return it->second;
}

void RecordCache::put_reductions(RecordKey key, const ReductionSet& reductions) {
  Stripe& stripe = stripe_for(key);
  std::lock_guard lock(stripe.mutex);
  stripe.reductions.try_emplace(key, reductions);
}

std::size_t RecordCache::value_bytes() const {
  std::size_t total = 0;
  for (const auto& stripe : stripes_) {
    std::lock_guard lock(stripe.mutex);
    total += stripe.value_bytes;
  }
  return total;
}

}  // namespace rulestream
