#pragma once

#include <tbb/concurrent_queue.h>

#include <cstddef>
#include <memory>

#include "stages/load/landing.hpp"

namespace rulestream {

// Index landings the step assembler has ingested, freed by the parallel loaders instead of on
// the assembler's serial node. A landing holds a name per tensor: freeing one was a third of
// the serial node's work on a small-tensor job (2,000 strings per file), and the serial node
// is what bounds the speedup of more threads.
//
// The assembler retires a landing while its input message still holds it; the message goes
// right after. A loader frees only what no one else holds (use_count() == 1: no other owner
// can appear, since the queue is the only other way to reach it), and leaves the rest for a
// later call, so a landing is never freed while the assembler reads it. What is left at the
// end goes with the object.
//
// Concurrency: retire() and free_unheld() from any threads at once.
class RetiredLandings {
 public:
  using LandingPtr = std::shared_ptr<const IndexLanding>;

  void retire(LandingPtr landing) { queue_.push(std::move(landing)); }

  // Frees up to `most` retired landings no one else holds; stops at the first still held.
  void free_unheld(std::size_t most = 4) {
    for (std::size_t i = 0; i < most; ++i) {
      LandingPtr landing;
      if (!queue_.try_pop(landing)) return;
      if (landing.use_count() > 1) {  // its message has not gone yet: later
        queue_.push(std::move(landing));
        return;
      }
    }
  }

 private:
  tbb::concurrent_queue<LandingPtr> queue_;
};

}  // namespace rulestream
