// The sink types plugins add: what the registry refuses, and lookups.
#include "sinks/sink_registry.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace rulestream {
namespace {

SinkSpec spec_of(std::string type) {
  return {.type = std::move(type), .description = "", .create = [](const SinkParameters&) {
            return std::unique_ptr<Sink>();
          }};
}

void expect_refused(SinkRegistry& registry, SinkSpec spec, const std::string& fragment) {
  try {
    registry.add(std::move(spec));
    ADD_FAILURE() << "added; expected an error with: " << fragment;
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
  }
}

TEST(SinkRegistry, FindsTheTypesAddedByExactName) {
  SinkRegistry registry;
  registry.add(spec_of("csv"));
  registry.add(spec_of("kafka"));
  ASSERT_NE(registry.find("csv"), nullptr);
  EXPECT_EQ(registry.find("csv")->type, "csv");
  EXPECT_EQ(registry.find("CSV"), nullptr);
  EXPECT_EQ(registry.find("tsv"), nullptr);
  EXPECT_EQ(registry.types(), (std::vector<std::string>{"csv", "kafka"}));
}

TEST(SinkRegistry, RefusesBuiltInNamesDuplicatesAndTypesItCannotParse) {
  SinkRegistry registry;
  registry.add(spec_of("csv"));
  for (const char* builtin : {"stdout", "file", "webhook", "slack"}) {
    expect_refused(registry, spec_of(builtin), "is a built-in sink's");
  }
  expect_refused(registry, spec_of("csv"), "sink type \"csv\" is already taken");
  expect_refused(registry, spec_of("a:b"), "has no ':' in it");
  expect_refused(registry, spec_of(""), "needs a name");
  expect_refused(registry, {.type = "nofactory", .description = "", .create = {}},
                 "has no factory");
  EXPECT_EQ(registry.types(), (std::vector<std::string>{"csv"}));
}

}  // namespace
}  // namespace rulestream
