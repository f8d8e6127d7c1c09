#include "core/model/growing_reservation.hpp"

#include <mutex>
#include <utility>

namespace rulestream {

GrowingReservation::GrowingReservation(MemoryBudget& budget) : budget_(&budget) {
  std::lock_guard lock(budget.mutex_);
  ticket_ = budget.next_ticket_++;
  budget.work_.emplace(ticket_, 0);
}

GrowingReservation::GrowingReservation(GrowingReservation&& other) noexcept
    : budget_(std::exchange(other.budget_, nullptr)),
      ticket_(other.ticket_),
      bytes_(std::exchange(other.bytes_, 0)) {}

GrowingReservation& GrowingReservation::operator=(GrowingReservation&& other) noexcept {
  if (this != &other) {
    end();
    budget_ = std::exchange(other.budget_, nullptr);
    ticket_ = other.ticket_;
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

GrowingReservation::Grant GrowingReservation::grow(std::size_t more) {
  if (more == 0) return Grant::Granted;
  MemoryBudget& budget = *budget_;
  // Alone, with every cache empty, it would still not fit: no waiting makes it fit.
  if (more > budget.limit_ - bytes_) return Grant::Refused;
  const auto take = [&] {
    if (!budget.take_locked(more)) return false;
    budget.work_[ticket_] += more;
    budget.work_bytes_ += more;
    bytes_ += more;
    return true;
  };
  for (;;) {
    std::size_t shortfall = 0;
    bool caches_hold_bytes = false;
    std::uint64_t seen = 0;
    {
      std::lock_guard lock(budget.mutex_);
      if (take()) return Grant::Granted;
      shortfall = more - (budget.limit_ - budget.reserved_);
      caches_hold_bytes = budget.reserved_ > budget.work_bytes_;
      seen = budget.give_backs_;
    }
    // Caches first: what they hold can be read again, work in progress cannot be undone.
    if (caches_hold_bytes && budget.reclaim(shortfall) > 0) continue;

    std::unique_lock lock(budget.mutex_);
    if (take()) return Grant::Granted;
    if (budget.give_backs_ != seen) continue;  // bytes came back meanwhile: look again
    // Only other work holds what is missing (or holders that cannot evict): what it holds
    // comes back when it ends. No other work: nothing ever will.
    if (budget.work_bytes_ == bytes_) return Grant::Refused;
    if (budget.work_.begin()->first != ticket_) return Grant::Yield;
    ++budget.waits_;
    budget.given_back_.wait(lock, [&] { return budget.give_backs_ != seen; });
  }
}

void GrowingReservation::yield_and_wait() {
  MemoryBudget& budget = *budget_;
  std::unique_lock lock(budget.mutex_);
  if (bytes_ > 0) {
    budget.work_[ticket_] = 0;
    budget.work_bytes_ -= bytes_;
    budget.give_back_locked(bytes_);
    bytes_ = 0;
    budget.given_back_.notify_all();
  }
  ++budget.waits_;
  budget.given_back_.wait(lock, [&] { return budget.work_.begin()->first == ticket_; });
}

MemoryReservation GrowingReservation::settle() {
  MemoryBudget& budget = *budget_;
  {
    std::lock_guard lock(budget.mutex_);
    budget.work_bytes_ -= bytes_;
    budget.work_.erase(ticket_);
    ++budget.give_backs_;  // the line moved: younger work may now be the oldest
  }
  budget.given_back_.notify_all();
  MemoryReservation settled(budget, std::exchange(bytes_, 0));
  budget_ = nullptr;
  return settled;
}

void GrowingReservation::end() {
  if (budget_ == nullptr) return;
  MemoryBudget& budget = *budget_;
  {
    std::lock_guard lock(budget.mutex_);
    budget.work_bytes_ -= bytes_;
    budget.work_.erase(ticket_);
    budget.give_back_locked(bytes_);  // counts as a give-back even of nothing: the line moved
  }
  budget.given_back_.notify_all();
  budget_ = nullptr;
  bytes_ = 0;
}

}  // namespace rulestream
