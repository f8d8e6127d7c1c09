#include "stages/tensorboard/logdir_runs.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace rulestream {
namespace {

TEST(LogdirRunsTest, EventFilesAreThoseWhoseBasenameContainsTfevents) {
  EXPECT_TRUE(is_event_file("events.out.tfevents.1690483959.host.61366.17.v2"));
  EXPECT_TRUE(is_event_file("train/events.out.tfevents.1.host"));
  EXPECT_TRUE(is_event_file("runs/x/my.tfevents.renamed"));
  EXPECT_FALSE(is_event_file("tfevents/hparams.yaml"));  // the folder's name does not count
  EXPECT_FALSE(is_event_file("checkpoint"));
  // smdebug's own event files belong to a trial, not to a run.
  EXPECT_FALSE(is_event_file("events/000000000010/000000000010_worker_0.tfevents"));
  EXPECT_FALSE(is_event_file("job/events/000000000010/000000000010_worker_0.tfevents"));
  EXPECT_TRUE(is_event_file("notevents/000000000010/000000000010_worker_0.tfevents"));
}

TEST(LogdirRunsTest, RunsAreFoldersAndTheirFilesComeInNameOrder) {
  EXPECT_EQ(run_of("events.out.tfevents.1.host"), ".");
  EXPECT_EQ(run_of("a/b/events.out.tfevents.1.host"), "a/b");
  const std::vector<StoredObject> listing{{"val/events.out.tfevents.2.h", 10, 0},
                                          {"val/events.out.tfevents.10.h", 10, 0},
                                          {"events.out.tfevents.1.h", 5, 0},
                                          {"val/notes.txt", 3, 0},
                                          {"val/sub/events.out.tfevents.1.h", 1, 0}};
  const auto runs = group_runs(listing);
  ASSERT_EQ(runs.size(), 3U);
  EXPECT_EQ(runs[0].run, ".");
  EXPECT_EQ(runs[1].run, "val");
  ASSERT_EQ(runs[1].files.size(), 2U);
  // Byte order, as TensorBoard's data server sorts them: "10" before "2".
  EXPECT_EQ(runs[1].files[0].path, "val/events.out.tfevents.10.h");
  EXPECT_EQ(runs[1].files[1].path, "val/events.out.tfevents.2.h");
  EXPECT_EQ(runs[2].run, "val/sub");
}

}  // namespace
}  // namespace rulestream
