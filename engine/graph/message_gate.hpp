#pragma once

#include <tbb/flow_graph.h>

#include <deque>
#include <mutex>

namespace rulestream {

// Holds the messages sent to it until open(), then passes them on to `successor` in the order
// they came, and every later one straight after them.
//
// What it is for: a rule that compares with other trials cannot evaluate a step before they are
// loaded. Waiting for the load inside the rule's node holds a thread of the pipeline's arena for
// as long as the load takes; with as many steps at once as threads (RuleStage), every thread
// of the arena can end up waiting, and the load, which spreads its work over the threads that
// ask, gets none of them (issue 23: a tenth of a two-thread all-rules replay's thread time was
// spent so). Held here, the steps wait as messages, and the threads evaluate the other rules.
//
// The graph is kept from finishing while the gate is closed (reserve_wait): messages held here
// are work it has to do. So a gate must be opened once its graph runs, whatever else fails (the
// pipeline opens its gates from a guard); one destroyed closed, when the graph has no task left
// for it, releases the graph without what it held.
//
// Concurrency: open() from any thread, once; the messages come through input() as from any
// sender of the graph. A serial node keeps their order; open() forwards what it holds under the
// same lock the node takes, so that no message overtakes one held before it.
template <typename Message>
class MessageGate {
 public:
  MessageGate(tbb::flow::graph& graph, tbb::flow::receiver<Message>& successor,
              tbb::flow::node_priority_t priority)
      : graph_(graph),
        successor_(successor),
        node_(
            graph, tbb::flow::serial,
            [this](const Message& message) {
              {
                std::lock_guard lock(mutex_);
                if (!open_) {
                  held_.push_back(message);
                  return tbb::flow::continue_msg();
                }
              }
              successor_.try_put(message);
              return tbb::flow::continue_msg();
            },
            priority) {
    graph_.reserve_wait();
  }
  MessageGate(const MessageGate&) = delete;
  MessageGate& operator=(const MessageGate&) = delete;
  ~MessageGate() {
    std::lock_guard lock(mutex_);
    if (!open_) graph_.release_wait();
  }

  tbb::flow::receiver<Message>& input() { return node_; }

  // Passes on what was held, in order, and lets everything after it straight through. Calls
  // after the first do nothing.
  void open() {
    std::lock_guard lock(mutex_);
    if (open_) return;
    for (const Message& message : held_) successor_.try_put(message);
    held_.clear();
    open_ = true;
    graph_.release_wait();  // after the puts: the graph has them to do before it may finish
  }

  bool is_open() const {
    std::lock_guard lock(mutex_);
    return open_;
  }

 private:
  tbb::flow::graph& graph_;
  tbb::flow::receiver<Message>& successor_;
  mutable std::mutex mutex_;
  bool open_ = false;         // guarded by mutex_
  std::deque<Message> held_;  // guarded by mutex_
  tbb::flow::function_node<Message> node_;
};

}  // namespace rulestream
