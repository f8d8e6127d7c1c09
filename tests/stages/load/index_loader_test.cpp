#include "stages/load/index_loader.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "core/model/trial_layout.hpp"
#include "sources/local/local_storage.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::TempDir;
using testing::write_text_file;

std::string index_json(std::string_view mode, int mode_step) {
  return R"({"meta": {"mode": ")" + std::string(mode) + R"(", "mode_step": )" +
         std::to_string(mode_step) +
         R"(, "event_file_name": "events/e.tfevents"}, "tensor_payload": [)"
         R"({"tensorname": "loss", "start_idx": 0, "length": 40}]})";
}

class IndexLoaderTest : public ::testing::Test {
 protected:
  void write(const std::string& path, std::string_view text) {
    std::filesystem::create_directories((dir_.path() / path).parent_path());
    write_text_file(dir_.path() / path, text);
  }
  std::vector<StoredObject> listed() const { return storage_.list(std::string(kIndexDir)); }

  TempDir dir_;
  LocalStorage storage_{dir_.path()};
};

TEST_F(IndexLoaderTest, AnIndexFileBecomesALandingOfItsStepAndWorker) {
  const std::string path = index_file_path(7, "worker_0");
  write(path, index_json("TRAIN", 3));
  const auto name = parse_step_file_name(path);
  ASSERT_TRUE(name);
  const IndexFileLoad load = load_index_file(storage_, path, *name, std::nullopt);
  ASSERT_TRUE(load.landing) << load.problem->message;
  EXPECT_FALSE(load.problem);
  EXPECT_EQ(load.landing->path, path);
  EXPECT_EQ(load.landing->step, 7);
  EXPECT_EQ(load.landing->worker, "worker_0");
  EXPECT_EQ(load.landing->index.mode, Mode::Train);
  EXPECT_EQ(load.landing->index.mode_step, 3);
  ASSERT_EQ(load.landing->index.tensors.size(), 1u);
  EXPECT_EQ(load.landing->index.tensors[0].tensor_name, "loss");
  EXPECT_FALSE(load.landing->reductions);
}

TEST_F(IndexLoaderTest, ACsvIndexFileIsAProblemNamingTheFile) {
  std::string path = index_file_path(2, "worker_0");
  path.replace(path.size() - 5, 5, ".csv");
  write(path, "tensorname,start_idx,length\n");
  const IndexFileLoad load = load_index_file(storage_, path, *parse_step_file_name(path), {});
  EXPECT_FALSE(load.landing);
  ASSERT_TRUE(load.problem);
  EXPECT_EQ(load.problem->path, storage_.describe() + "/" + path);
  EXPECT_EQ(load.problem->message,
            storage_.describe() + "/" + path + ": CSV index files are not supported; skipped");
}

TEST_F(IndexLoaderTest, AMalformedIndexFileIsAProblemNamingTheFile) {
  const std::string path = index_file_path(4, "worker_0");
  write(path, R"({"meta": {"mode": "TRAIN", "mode_step": )");
  const IndexFileLoad load = load_index_file(storage_, path, *parse_step_file_name(path), {});
  EXPECT_FALSE(load.landing);
  ASSERT_TRUE(load.problem);
  EXPECT_EQ(load.problem->path, storage_.describe() + "/" + path);
  EXPECT_NE(load.problem->message.find(path), std::string::npos) << load.problem->message;
}

TEST_F(IndexLoaderTest, ABatchKeepsWantedStepsAndReportsBadFilesWithoutLosingTheOthers) {
  for (int step = 0; step < 6; ++step)
    write(index_file_path(step, "worker_0"), index_json("TRAIN", step));
  write(index_file_path(3, "worker_1"), "not json");
  write("index/000000000/notes.txt", "passed over");
  const auto files = listed();
  const auto [landings, problems] =
      load_index_files(storage_, files, [](std::int64_t step) { return step >= 1 && step < 5; });
  std::vector<std::pair<std::int64_t, std::string>> loaded;
  for (const IndexLanding& landing : landings) loaded.emplace_back(landing.step, landing.worker);
  EXPECT_EQ(loaded, (std::vector<std::pair<std::int64_t, std::string>>{
                        {1, "worker_0"}, {2, "worker_0"}, {3, "worker_0"}, {4, "worker_0"}}));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].path, storage_.describe() + "/" + index_file_path(3, "worker_1"));
  for (const IndexLanding& landing : landings) {
    // A listing's files arrived when they were written.
    EXPECT_TRUE(landing.arrival) << landing.path;
  }
}

TEST_F(IndexLoaderTest, TheFirstCollectionsFileDefinesTheCollectionsAndEveryOneNamesAWorker) {
  const std::string path = collections_file_path("worker_0");
  write(
      path,
      R"({"collections": {"losses": {"name": "losses", "include_regex": ["loss"], "tensor_names": ["loss"]}}, "_meta": {"num_workers": 2}})");
  const CollectionsFileLoad defining = load_collections_file(storage_, path, "worker_0", true);
  EXPECT_TRUE(defining.problems.empty());
  EXPECT_EQ(defining.landing.workers, std::vector<std::string>{"worker_0"});
  ASSERT_TRUE(defining.landing.collections);
  EXPECT_TRUE(defining.landing.collections->contains("losses"));
  EXPECT_EQ(defining.landing.num_workers, 2);

  const CollectionsFileLoad naming = load_collections_file(storage_, path, "worker_1", false);
  EXPECT_EQ(naming.landing.workers, std::vector<std::string>{"worker_1"});
  EXPECT_FALSE(naming.landing.collections);
  EXPECT_TRUE(naming.problems.empty());
}

TEST_F(IndexLoaderTest, AnUnreadableCollectionsFileIsAProblemAndStillNamesItsWorker) {
  const std::string path = collections_file_path("worker_0");
  write(path, "{\"collections\": ");
  const CollectionsFileLoad load = load_collections_file(storage_, path, "worker_0", true);
  EXPECT_EQ(load.landing.workers, std::vector<std::string>{"worker_0"});
  EXPECT_FALSE(load.landing.collections);
  ASSERT_EQ(load.problems.size(), 1u);
  EXPECT_EQ(load.problems[0].path, storage_.describe() + "/" + path);
}

// smdebug's XGBoost hook writes Python-only syntax (a lookbehind), which must load; a regex that
// does not compile in any syntax is reported and its collection keeps its listed names.
TEST_F(IndexLoaderTest, ACollectionsRegexThatDoesNotCompileIsReportedAndLeftOut) {
  const std::string path = collections_file_path("worker_0");
  write(
      path,
      R"({"collections": {)"
      R"("metrics": {"name": "metrics", "include_regex": ["^[a-zA-z]+-.+(?<!(auc|map))$"], "tensor_names": []},)"
      R"("broken": {"name": "broken", "include_regex": ["(?<!a+)b", "^loss"], "tensor_names": ["total"]}}})");
  const CollectionsFileLoad load = load_collections_file(storage_, path, "worker_0", true);
  ASSERT_TRUE(load.landing.collections);
  const auto& collections = *load.landing.collections;
  EXPECT_EQ(collections.at("metrics").include_regex,
            std::vector<std::string>{"^[a-zA-z]+-.+(?<!(auc|map))$"});
  EXPECT_EQ(collections.at("broken").include_regex, std::vector<std::string>{"^loss"});
  EXPECT_EQ(collections.at("broken").tensor_names, std::set<std::string>{"total"});
  ASSERT_EQ(load.problems.size(), 1u);
  EXPECT_EQ(load.problems[0].path, storage_.describe() + "/" + path);
  EXPECT_NE(load.problems[0].message.find("collection 'broken'"), std::string::npos)
      << load.problems[0].message;
  EXPECT_NE(load.problems[0].message.find("'(?<!a+)b'"), std::string::npos)
      << load.problems[0].message;
}

}  // namespace
}  // namespace rulestream
