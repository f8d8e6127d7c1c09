#include "apps/serve/lingering_sinks.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>

namespace rulestream {
namespace {

// A sink that holds `held` events of one trial until told they settled.
class HoldingSink final : public Sink {
 public:
  HoldingSink(std::string trial, std::int64_t held, std::atomic<int>& destroyed)
      : trial_(std::move(trial)), held_(held), destroyed_(destroyed) {}
  ~HoldingSink() override { ++destroyed_; }
  std::string describe() const override { return "holding"; }
  void write(const RuleEvent&) override {}
  void flush() override {}
  bool delivers_later() const override { return true; }
  std::int64_t undelivered(std::string_view trial) const override {
    return trial == trial_ ? held_.load() : 0;
  }
  void settle_all() { held_ = 0; }

 private:
  const std::string trial_;
  std::atomic<std::int64_t> held_;
  std::atomic<int>& destroyed_;
};

TEST(LingeringSinks, KeepsASinkWhileItHoldsEventsAndLetsItGoOnceTheySettled) {
  std::atomic<int> destroyed{0};
  LingeringSinks lingering;
  auto holding = std::make_shared<HoldingSink>("jobs/a", 3, destroyed);
  HoldingSink* first = holding.get();
  lingering.keep("jobs/a", std::move(holding));
  EXPECT_EQ(lingering.size(), 1U);
  EXPECT_EQ(lingering.undelivered("jobs/a"), 3);
  EXPECT_EQ(lingering.undelivered("jobs/b"), 0);

  // A sink with nothing left is not kept at all.
  lingering.keep("jobs/b", std::make_shared<HoldingSink>("jobs/b", 0, destroyed));
  EXPECT_EQ(destroyed.load(), 1);
  EXPECT_EQ(lingering.size(), 1U);

  // Once the first settled, the next keep() lets go of it.
  first->settle_all();
  lingering.keep("jobs/c", std::make_shared<HoldingSink>("jobs/c", 2, destroyed));
  EXPECT_EQ(destroyed.load(), 2);
  EXPECT_EQ(lingering.size(), 1U);
  EXPECT_EQ(lingering.undelivered("jobs/c"), 2);
}

// More sinks than the threads that let go of them: each is let go of, once.
TEST(LingeringSinks, LetsGoOfEverySinkWhenDestroyed) {
  std::atomic<int> destroyed{0};
  {
    LingeringSinks lingering;
    for (int i = 0; i < 40; ++i) {
      const std::string trial = "job" + std::to_string(i);
      lingering.keep(trial, std::make_shared<HoldingSink>(trial, 1, destroyed));
    }
    EXPECT_EQ(lingering.size(), 40U);
  }
  EXPECT_EQ(destroyed.load(), 40);
}

}  // namespace
}  // namespace rulestream
