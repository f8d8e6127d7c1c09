#pragma once

#include <cstddef>
#include <cstdint>

#include "core/model/memory_budget.hpp"

namespace rulestream {

// The bytes one piece of work (inflating a compressed event file) takes from a MemoryBudget as
// it needs them, given back when it is destroyed or handed to a cache (settle).
//
// When the budget is short, grow() first has the caches evict (MemoryBudget::reclaim). If that
// is not enough and other work holds bytes, they will come back when that work ends, so this
// work waits for them rather than fail: the oldest work in progress (the first reservation made
// of those still alive) waits holding what it has; younger work is told to Yield: it gives back
// everything (yield_and_wait), waits until it is the oldest, and starts again. Since only the
// oldest ever waits while holding bytes, and it waits only for younger work, which never does,
// no two pieces of work wait for each other: there is no deadlock, and the oldest always ends.
// What does not fit even when no other work holds a byte and the caches are empty is Refused:
// the caller reports it (a problem naming the file), it never aborts.
//
// A reservation takes its place in line when it is made: make it just before the work, not
// ahead of a slow read. Move-only; not thread-safe (one owner at a time); the budget is.
class GrowingReservation {
 public:
  enum class Grant {
    Granted,  // the bytes are held
    Yield,    // older work needs the bytes: call yield_and_wait(), then start the work again
    Refused,  // the budget cannot give them (the work alone would be more than the limit)
  };

  explicit GrowingReservation(MemoryBudget& budget);
  GrowingReservation(GrowingReservation&& other) noexcept;
  GrowingReservation& operator=(GrowingReservation&& other) noexcept;
  GrowingReservation(const GrowingReservation&) = delete;
  GrowingReservation& operator=(const GrowingReservation&) = delete;
  ~GrowingReservation() { end(); }

  std::size_t bytes() const { return bytes_; }
  const MemoryBudget& budget() const { return *budget_; }

  // Takes `more` bytes (see the class comment for when it waits).
  Grant grow(std::size_t more);
  // After Yield: gives back every byte held and waits until no older work is in progress.
  void yield_and_wait();
  // The bytes held, for a cache to keep with what they hold; the work has ended.
  MemoryReservation settle();

 private:
  // Gives back what is held and leaves the line.
  void end();

  MemoryBudget* budget_ = nullptr;
  std::uint64_t ticket_ = 0;  // place in line: lower is older
  std::size_t bytes_ = 0;
};

}  // namespace rulestream
