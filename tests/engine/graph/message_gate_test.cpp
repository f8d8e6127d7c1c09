// MessageGate holds a rule's steps while the trials it compares with load: nothing passes while
// it is closed, the graph does not finish without what it holds, and what it held goes on first
// and in order, however the opening and later messages meet.
#include "engine/graph/message_gate.hpp"

#include <gtest/gtest.h>
#include <tbb/flow_graph.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace rulestream {
namespace {

namespace flow = tbb::flow;
using namespace std::chrono_literals;

// A serial node that keeps what reaches it, in arrival order: a serial rule's node.
struct Recorder {
  explicit Recorder(flow::graph& graph)
      : node(graph, flow::serial, [this](int message) {
          std::lock_guard lock(mutex);
          seen.push_back(message);
          return flow::continue_msg();
        }) {}
  std::vector<int> received() {
    std::lock_guard lock(mutex);
    return seen;
  }
  std::mutex mutex;
  std::vector<int> seen;  // guarded by mutex
  flow::function_node<int> node;
};

std::vector<int> numbers(int from, int to) {
  std::vector<int> out;
  for (int i = from; i < to; ++i) out.push_back(i);
  return out;
}

TEST(MessageGate, HoldsUntilOpenedThenPassesWhatItHeldFirstAndInOrder) {
  tbb::task_arena arena(2);
  arena.execute([] {
    flow::graph graph;
    Recorder recorder(graph);
    MessageGate<int> gate(graph, recorder.node, 0);
    for (const int i : numbers(0, 50)) gate.input().try_put(i);

    // The graph has nothing to run but what the gate holds: waiting for it does not end while
    // the gate is closed.
    std::atomic<bool> finished{false};
    std::thread waiter([&] {
      graph.wait_for_all();
      finished = true;
    });
    std::this_thread::sleep_for(100ms);
    EXPECT_FALSE(finished.load()) << "the graph finished with messages still held";
    EXPECT_TRUE(recorder.received().empty());
    EXPECT_FALSE(gate.is_open());

    gate.open();
    waiter.join();
    EXPECT_TRUE(finished.load());
    EXPECT_EQ(recorder.received(), numbers(0, 50));

    // Once open, messages go straight through; opening again changes nothing.
    for (const int i : numbers(50, 60)) gate.input().try_put(i);
    gate.open();
    graph.wait_for_all();
    EXPECT_EQ(recorder.received(), numbers(0, 60));
  });
}

// Messages keep coming while another thread opens the gate (the trials finish loading while the
// assembler releases steps): none passes one sent before it.
TEST(MessageGate, NoMessageOvertakesOneHeldBeforeItWhenTheGateOpensMidStream) {
  tbb::task_arena arena(4);
  for (int round = 0; round < 20; ++round) {
    arena.execute([round] {
      flow::graph graph;
      Recorder recorder(graph);
      MessageGate<int> gate(graph, recorder.node, 0);
      std::atomic<bool> started{false};
      std::thread opener([&] {
        while (!started.load()) std::this_thread::yield();
        if (round % 2 == 0) std::this_thread::sleep_for(std::chrono::microseconds(50 * round));
        gate.open();
      });
      for (const int i : numbers(0, 2000)) {
        gate.input().try_put(i);
        if (i == 10) started = true;
      }
      opener.join();
      graph.wait_for_all();
      EXPECT_EQ(recorder.received(), numbers(0, 2000)) << "round " << round;
    });
  }
}

}  // namespace
}  // namespace rulestream
