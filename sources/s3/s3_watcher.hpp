#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdint>
#include <memory>

#include "sources/common/trial_source.hpp"
#include "sources/s3/s3_storage.hpp"

namespace rulestream {

// Finds the files of a trial under an S3 prefix by polling ListObjectsV2, the S3 counterpart of
// LocalWatcher (same options, callback and contract: each file announced once, files found
// together in path order, so the end marker comes after everything listed with it).
//
// A poll never lists again what it has seen: it makes two listings, each with start-after,
// (1) collections/ after the last collections file seen, and (2) the trial root after the index
// cursor, which returns new index files and the end marker (it sorts after index/) but not
// events/ (which sorts before it). So a poll in which nothing landed costs two LIST requests,
// however many files the trial holds; a poll in which N files landed costs two more only per
// 1000 of them.
//
// The index cursor stays just before the first step that some known worker has not written yet
// (and before files held back, see ReadinessTracker), so that a slow worker's index file, whose
// key sorts before a faster worker's newer ones, is still found. A step that a later step has
// overtaken on every known worker is taken as skipped. Anything a poll cannot see that way (a
// worker writing out of step order) is still found by the pipeline's final rescan at the end of
// the job.
//
// S3 writes objects whole, so a listed object is complete: nothing waits for a file to be
// closed. Polls run on the io_context's thread (their HTTP requests block it, which nothing
// else there minds). When a poll fails (the server is down after the client's retries), a live
// watcher says so once on stderr and tries again at the next poll; a replay (follow = false)
// throws the StorageError out of io_context::run().
class S3Watcher final : public TrialSource {
 public:
  struct Options {
    bool follow = true;  // false: one listing (replay)
    std::chrono::milliseconds poll_interval{2000};
  };
  using Callback = TrialSource::Callback;

  S3Watcher(boost::asio::io_context& io, std::shared_ptr<const S3Storage> storage, Options options,
            Callback on_files);
  ~S3Watcher() override;  // stop()s
  S3Watcher(const S3Watcher&) = delete;
  S3Watcher& operator=(const S3Watcher&) = delete;

  void start() override;
  void stop() override;
  std::size_t files_announced() const override;
  std::string current_problem() const override;

  // LIST requests made and polls done so far (what following costs).
  std::uint64_t list_requests() const;
  std::uint64_t polls() const;

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace rulestream
