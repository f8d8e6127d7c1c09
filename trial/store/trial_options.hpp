#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/model/memory_budget.hpp"

namespace rulestream {

// How a trial is opened and read (Trial::open); the store keeps them.
struct TrialOptions {
  // Defaults to the last component of the path, as smdebug does.
  std::string name;
  // Load only steps in [begin, end) (smdebug's range_steps); either end may be open.
  std::optional<std::int64_t> range_begin;
  std::optional<std::int64_t> range_end;
  // Queries on a live trial refresh first (smdebug's default). Off: only refresh() does.
  bool auto_refresh = true;
  // Check payload CRCs of records whose footer is a real CRC (smdebug's placeholder footer is
  // always accepted; the length CRC is always checked).
  bool check_data_crc = true;
  // Once the end-of-job marker appears, files may still land for this long (slow workers); the
  // trial declares all steps loaded only after it. A marker older than this counts at once.
  std::chrono::milliseconds end_of_job_grace{1000};
  // Decoded values kept in memory for rules that read them again; older ones are re-read from
  // their files. Reductions are kept for every record whatever this says.
  std::size_t value_cache_bytes = std::size_t{256} << 20;
  // The memory the trial's values, its inflated event files and their inflation draw on
  // together, shared with whatever else holds it (a pipeline's loader, its other trials): a
  // compressed event file is inflated within it, waiting for other inflations when it is
  // short, and one that cannot fit in it at all is reported (FormatError) and not read. Null:
  // a budget of value_cache_bytes of the trial's own.
  std::shared_ptr<MemoryBudget> memory_budget;
  // How often wait_for_steps polls.
  std::chrono::milliseconds poll_interval{200};
  // A refresh parses about this many bytes of index files at a time, adding each batch to the
  // store before parsing the next (whose memory is then reused rather than fresh).
  std::uint64_t refresh_batch_bytes = std::uint64_t{8} << 20;
};

}  // namespace rulestream
