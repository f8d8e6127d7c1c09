#include "core/model/trial_file.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string_view>

namespace rulestream {
namespace {

using Kind = TrialFile::Kind;

TEST(TrialFileKind, RecognisesIndexFilesByTheirStepFileName) {
  EXPECT_EQ(trial_file_kind("index/000000000/000000000012_worker_0.json"), Kind::Index);
  EXPECT_EQ(trial_file_kind("index/000000001/000000001000_worker_1.json"), Kind::Index);
  // Worker names may contain '_' (and TF device names "__").
  EXPECT_EQ(trial_file_kind("index/000000000/000000000003__job_worker_1.json"), Kind::Index);
  // CSV index files are announced; the consumer reports that it does not read them.
  EXPECT_EQ(trial_file_kind("index/000000000/000000000012_worker_0.csv"), Kind::Index);
}

TEST(TrialFileKind, RecognisesCollectionsFilesAndTheEndMarker) {
  EXPECT_EQ(trial_file_kind("collections/000000000/worker_0_collections.json"), Kind::Collections);
  EXPECT_EQ(trial_file_kind("collections/000000000/__job_worker_1_collections.json"),
            Kind::Collections);
  EXPECT_EQ(trial_file_kind("training_job_end.ts"), Kind::EndMarker);
}

TEST(TrialFileKind, IgnoresEverythingElse) {
  for (const std::string_view path : {
           "index/000000000/000000000012_worker_0.json.tmp",
           "collections/000000000/worker_0_collections.json.tmp",
           "training_job_end.ts.tmp",
           "events/000000000012/000000000012_worker_0.tfevents",
           "events/000000000012/000000000012_worker_0.json",
           "claim.smd",
           "index/000000000/notes.json",
           "index/000000000/000000000012_worker_0.tfevents",
           "index/000000000/000000000012_.json",
           "index/000000000/000000000012_worker_0.txt",
           "collections/000000000/worker_0.json",
           "old/training_job_end.ts",
           "indexes/000000000/000000000012_worker_0.json",
           "",
       }) {
    EXPECT_EQ(trial_file_kind(path), std::nullopt) << path;
  }
}

}  // namespace
}  // namespace rulestream
