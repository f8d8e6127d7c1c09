#include "core/model/memory_budget.hpp"

#include <algorithm>
#include <cassert>
#include <utility>

namespace rulestream {

MemoryBudget::MemoryBudget(std::size_t limit_bytes) : limit_(limit_bytes) {}

std::size_t MemoryBudget::reserved() const {
  std::lock_guard lock(mutex_);
  return reserved_;
}

std::size_t MemoryBudget::peak_reserved() const {
  std::lock_guard lock(mutex_);
  return peak_;
}

std::uint64_t MemoryBudget::waits() const {
  std::lock_guard lock(mutex_);
  return waits_;
}

bool MemoryBudget::take_locked(std::size_t bytes) {
  if (bytes > limit_ - reserved_) return false;
  reserved_ += bytes;
  peak_ = std::max(peak_, reserved_);
  return true;
}

void MemoryBudget::give_back_locked(std::size_t bytes) {
  assert(bytes <= reserved_ && "a holder gave back more than it took");
  reserved_ -= bytes;
  ++give_backs_;
}

bool MemoryBudget::try_reserve(std::size_t bytes) {
  std::lock_guard lock(mutex_);
  return take_locked(bytes);
}

void MemoryBudget::release(std::size_t bytes) {
  if (bytes == 0) return;
  {
    std::lock_guard lock(mutex_);
    give_back_locked(bytes);
  }
  given_back_.notify_all();
}

void MemoryBudget::add_reclaimer(Reclaimer& reclaimer) {
  std::unique_lock lock(reclaimers_mutex_);
  reclaimers_.push_back(&reclaimer);
}

void MemoryBudget::remove_reclaimer(Reclaimer& reclaimer) {
  std::unique_lock lock(reclaimers_mutex_);
  std::erase(reclaimers_, &reclaimer);
}

std::size_t MemoryBudget::reclaim(std::size_t bytes) {
  std::shared_lock lock(reclaimers_mutex_);
  std::size_t given = 0;
  for (Reclaimer* reclaimer : reclaimers_) {
    if (given >= bytes) break;
    given += reclaimer->reclaim(bytes - given);
  }
  return given;
}

MemoryReservation MemoryReservation::try_take(MemoryBudget& budget, std::size_t bytes) {
  if (!budget.try_reserve(bytes)) return {};
  return MemoryReservation(budget, bytes);
}

MemoryReservation::MemoryReservation(MemoryReservation&& other) noexcept
    : budget_(std::exchange(other.budget_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

MemoryReservation& MemoryReservation::operator=(MemoryReservation&& other) noexcept {
  if (this != &other) {
    reset();
    budget_ = std::exchange(other.budget_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void MemoryReservation::reset() {
  if (budget_ != nullptr) budget_->release(bytes_);
  budget_ = nullptr;
  bytes_ = 0;
}

}  // namespace rulestream
