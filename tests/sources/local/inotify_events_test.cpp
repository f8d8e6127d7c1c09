#include "sources/local/inotify_events.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/inotify.h>

#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace rulestream {
namespace {

using ::testing::ElementsAre;

// A record as the kernel writes it: the header, then the name NUL-padded to `padded_length`.
void append_record(std::vector<char>& bytes, int watch, std::uint32_t mask, std::uint32_t cookie,
                   const std::string& name, std::uint32_t padded_length) {
  inotify_event header{};
  header.wd = watch;
  header.mask = mask;
  header.cookie = cookie;
  header.len = padded_length;
  const std::size_t at = bytes.size();
  bytes.resize(at + sizeof header + padded_length, '\0');
  std::memcpy(bytes.data() + at, &header, sizeof header);
  std::memcpy(bytes.data() + at + sizeof header, name.data(), name.size());
}

std::vector<char> three_records() {
  std::vector<char> bytes;
  append_record(bytes, 1, IN_CREATE | IN_ISDIR, 0, "000000000", 16);
  append_record(bytes, 2, IN_MOVED_TO, 7, "000000000012_worker_0.json", 32);
  append_record(bytes, -1, IN_Q_OVERFLOW, 0, "", 0);
  return bytes;
}

TEST(InotifyEvents, ParsesWholeRecordsAndStripsThePadding) {
  const std::vector<char> bytes = three_records();
  std::vector<InotifyEvent> events;
  EXPECT_EQ(parse_inotify_events(bytes, events), bytes.size());
  EXPECT_THAT(events, ElementsAre(InotifyEvent{1, IN_CREATE | IN_ISDIR, 0, "000000000"},
                                  InotifyEvent{2, IN_MOVED_TO, 7, "000000000012_worker_0.json"},
                                  InotifyEvent{-1, IN_Q_OVERFLOW, 0, ""}));
}

TEST(InotifyEvents, LeavesARecordCutShortForTheNextRead) {
  const std::vector<char> bytes = three_records();
  const std::size_t first = sizeof(inotify_event) + 16;
  const std::size_t second = sizeof(inotify_event) + 32;
  // Cut inside the second record's name, then inside its header.
  for (const std::size_t cut : {first + second - 5, first + 3, first}) {
    std::vector<InotifyEvent> events;
    EXPECT_EQ(parse_inotify_events(std::span<const char>(bytes.data(), cut), events), first)
        << "cut at " << cut;
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].name, "000000000");
  }
  // The caller keeps the rest and appends the next read: the whole stream parses the same.
  std::vector<InotifyEvent> events;
  const std::size_t cut = first + second - 5;
  std::size_t consumed = parse_inotify_events(std::span<const char>(bytes.data(), cut), events);
  std::vector<char> rest(bytes.begin() + static_cast<std::ptrdiff_t>(consumed), bytes.end());
  consumed = parse_inotify_events(rest, events);
  EXPECT_EQ(consumed, rest.size());
  EXPECT_EQ(events.size(), 3u);
  EXPECT_EQ(events[1].name, "000000000012_worker_0.json");
}

TEST(InotifyEvents, ParsesNothingFromAnEmptyBuffer) {
  std::vector<InotifyEvent> events;
  EXPECT_EQ(parse_inotify_events({}, events), 0u);
  EXPECT_TRUE(events.empty());
}

}  // namespace
}  // namespace rulestream
