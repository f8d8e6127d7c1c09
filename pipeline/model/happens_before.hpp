#pragma once

// Orderings ThreadSanitizer cannot see, said to it.
//
// Debian's oneTBB library is not built with ThreadSanitizer, so what its scheduler orders (a
// task runs after the code that spawned it; a flow-graph node's body after the try_put that
// handed it its message; parallel_for returns after every task finished) is invisible to TSan,
// which then reports the hand-off as a race (scripts/tsan.sh). Where rulestream hands work to
// oneTBB and takes it back, it says so here, naming each ordering by a token's address: writes
// before happens_before(t) are seen by reads after a later happens_after(t). Outside a TSan
// build these are empty.
//
// The tokens order only what oneTBB already orders; a race between two tasks running at the
// same time is still reported.

#if defined(__SANITIZE_THREAD__)
extern "C" void __tsan_acquire(void* address);
extern "C" void __tsan_release(void* address);
#endif

namespace rulestream {

inline void happens_before(const void* token) noexcept {
#if defined(__SANITIZE_THREAD__)
  __tsan_release(const_cast<void*>(token));
#else
  static_cast<void>(token);
#endif
}

inline void happens_after(const void* token) noexcept {
#if defined(__SANITIZE_THREAD__)
  __tsan_acquire(const_cast<void*>(token));
#else
  static_cast<void>(token);
#endif
}

// One fork-join (a tbb::parallel_for): what the spawner wrote before it is seen by every task,
// and what every task wrote by the spawner after it.
//
//   const ForkJoin order;
//   tbb::parallel_for(0, n, [&](std::size_t i) { const auto task = order.task(); ... });
//   order.joined();
class ForkJoin {
 public:
  class Task {
   public:
    explicit Task(const ForkJoin& order) noexcept : order_(order) { happens_after(&order_.fork_); }
    ~Task() { happens_before(&order_.join_); }
    Task(const Task&) = delete;
    Task& operator=(const Task&) = delete;

   private:
    const ForkJoin& order_;
  };

  ForkJoin() noexcept { happens_before(&fork_); }
  ForkJoin(const ForkJoin&) = delete;
  ForkJoin& operator=(const ForkJoin&) = delete;

  Task task() const noexcept { return Task(*this); }
  void joined() const noexcept { happens_after(&join_); }

 private:
  char fork_ = 0;
  char join_ = 0;
};

// A flow-graph node's body, for its whole run: it sees what was written before any put that
// named `token` (happens_before(token) before each try_put), and what it wrote is seen after a
// later happens_after(token) (after graph.wait_for_all(), and in the bodies that run after it).
class NodeBody {
 public:
  explicit NodeBody(const void* token) noexcept : token_(token) { happens_after(token_); }
  ~NodeBody() { happens_before(token_); }
  NodeBody(const NodeBody&) = delete;
  NodeBody& operator=(const NodeBody&) = delete;

 private:
  const void* token_;
};

}  // namespace rulestream
