#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <vector>

namespace rulestream {

class GrowingReservation;

// One job's memory (--max-memory): the bytes that everything holding data on the job's behalf
// takes before it holds them and gives back after, so that together they never hold more than
// the limit. Two kinds of holder draw on it:
//
//   - caches (decoded values, inflated event files): they take bytes with try_reserve, make
//     room by evicting their own entries when it says no, and register a Reclaimer through which
//     work that needs bytes can make them evict;
//   - work (inflating a compressed event file): it takes bytes as it goes through a
//     GrowingReservation, which evicts from the caches, then waits for other work to finish,
//     and refuses only what cannot fit even when nothing else holds a byte.
//
// The budget counts what its holders say they hold; memory nobody reserves (code, thread stacks,
// index data, a value a rule is reading) is outside it (docs/architecture.md, "Limits").
//
// Thread-safe. The budget must outlive its holders: the reservations it hands out and the
// caches registered with it.
class MemoryBudget {
 public:
  // What a cache gives back when work needs bytes it holds.
  class Reclaimer {
   public:
    // Evicts entries until about `bytes` have been released to the budget, or nothing is left;
    // returns how many bytes it released. Called from any thread, with no lock of the budget
    // held; it takes the cache's own locks, and must not reserve or reclaim through the budget.
    virtual std::size_t reclaim(std::size_t bytes) = 0;

   protected:
    ~Reclaimer() = default;
  };

  explicit MemoryBudget(std::size_t limit_bytes);
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  std::size_t limit() const { return limit_; }
  // Held now, by caches and work together.
  std::size_t reserved() const;
  // The most held at once since the budget was made: never above limit().
  std::size_t peak_reserved() const;
  // How many times work had to wait for other work to give bytes back (GrowingReservation).
  std::uint64_t waits() const;

  // Takes `bytes` when they fit now; never evicts and never waits.
  bool try_reserve(std::size_t bytes);
  // Gives back bytes taken by try_reserve; wakes work waiting for them.
  void release(std::size_t bytes);

  // Registers a cache for reclaim(). remove_reclaimer must be called before the cache is
  // destroyed; it waits for a reclaim of it in progress on another thread.
  void add_reclaimer(Reclaimer& reclaimer);
  void remove_reclaimer(Reclaimer& reclaimer);
  // Asks the registered caches in turn to give back `bytes` in all; returns what they gave.
  // The caller must hold no cache's lock.
  std::size_t reclaim(std::size_t bytes);

 private:
  friend class GrowingReservation;

  // Under mutex_: takes `bytes` if they fit.
  bool take_locked(std::size_t bytes);
  void give_back_locked(std::size_t bytes);

  const std::size_t limit_;
  mutable std::mutex mutex_;
  std::condition_variable given_back_;  // notified whenever bytes are given back
  std::uint64_t give_backs_ = 0;        // counts them, so a waiter cannot miss one
  std::size_t reserved_ = 0;
  std::size_t peak_ = 0;
  std::uint64_t waits_ = 0;
  // Work in progress by the order it started (oldest first): the bytes each holds.
  std::map<std::uint64_t, std::size_t> work_;
  std::size_t work_bytes_ = 0;
  std::uint64_t next_ticket_ = 0;

  std::shared_mutex reclaimers_mutex_;  // shared while reclaiming, exclusive to add or remove
  std::vector<Reclaimer*> reclaimers_;
};

// Bytes a cache holds in a MemoryBudget, given back when it is destroyed. Move-only; an empty
// one (default, or moved from) holds nothing. Not thread-safe: one owner at a time.
class MemoryReservation {
 public:
  MemoryReservation() = default;
  // Takes `bytes` from `budget` if they fit now (MemoryBudget::try_reserve); empty otherwise.
  static MemoryReservation try_take(MemoryBudget& budget, std::size_t bytes);
  MemoryReservation(MemoryReservation&& other) noexcept;
  MemoryReservation& operator=(MemoryReservation&& other) noexcept;
  MemoryReservation(const MemoryReservation&) = delete;
  MemoryReservation& operator=(const MemoryReservation&) = delete;
  ~MemoryReservation() { reset(); }

  std::size_t bytes() const { return bytes_; }
  explicit operator bool() const { return budget_ != nullptr; }
  // Gives the bytes back now.
  void reset();

 private:
  friend class GrowingReservation;
  MemoryReservation(MemoryBudget& budget, std::size_t bytes) : budget_(&budget), bytes_(bytes) {}

  MemoryBudget* budget_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace rulestream
