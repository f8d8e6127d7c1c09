#include "stages/format/trial_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <stdexcept>
#include <system_error>

#include "core/model/exceptions.hpp"
#include "core/model/trial_layout.hpp"
#include "stages/format/event_codec.hpp"

namespace rulestream {
namespace {

double wall_time_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string errno_text(int error) {
  return std::generic_category().message(error);
}

// Writes the whole of `content` to `path` (created or truncated); StorageError names the path.
void write_whole_file(const std::filesystem::path& path, std::string_view content) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw StorageError("cannot create " + path.string() + ": " + errno_text(errno));
  const char* data = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t written = ::write(fd, data, left);
    if (written < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      ::close(fd);
      throw StorageError("cannot write " + path.string() + ": " + errno_text(error));
    }
    data += written;
    left -= static_cast<std::size_t>(written);
  }
  // close() is where some file systems (NFS, FUSE) report a failed write.
  if (::close(fd) != 0) {
    throw StorageError("cannot write " + path.string() + ": " + errno_text(errno));
  }
}

}  // namespace

TrialWriter::TrialWriter(Options options) : options_(std::move(options)) {
  if (options_.root.empty()) throw std::invalid_argument("TrialWriter: the trial root is empty");
  if (options_.worker.empty() || options_.worker.find('/') != std::string::npos) {
    throw std::invalid_argument("TrialWriter: invalid worker name '" + options_.worker + "'");
  }
}

void TrialWriter::begin_step(std::int64_t global_step, Mode mode, std::int64_t mode_step) {
  if (in_step_) {
    throw std::logic_error("TrialWriter::begin_step(" + std::to_string(global_step) + "): step " +
                           std::to_string(step_) + " is still open; call end_step first");
  }
  if (global_step < 0 || mode_step < 0) {
    throw std::invalid_argument("TrialWriter::begin_step: steps start at 0 (global step " +
                                std::to_string(global_step) + ", mode step " +
                                std::to_string(mode_step) + ")");
  }
  in_step_ = true;
  step_ = global_step;
  index_ = IndexFile{};
  index_.mode = mode;
  index_.mode_step = mode_step;
  if (options_.always_write_shape_payload) index_.shapes.emplace();
  pending_.clear();
}

void TrialWriter::require_step(const char* operation) const {
  if (!in_step_) {
    throw std::logic_error(std::string("TrialWriter::") + operation +
                           ": no step is open; call begin_step first");
  }
}

void TrialWriter::add_tensor(const std::string& name, const TensorValue& value) {
  require_step("add_tensor");
  auto payload =
      encode_tensor_event(name, value, step_, index_.mode, index_.mode_step, wall_time_now());
  // Joins the reductions just added for this name; otherwise it is a save of its own.
  if (pending_.empty() || pending_.back().name != name || pending_.back().raw) {
    pending_.push_back(PendingTensor{name, {}, std::nullopt});
  }
  pending_.back().raw = std::move(payload);
}

void TrialWriter::add_reduction(const std::string& name, ReductionKey key,
                                const TensorValue& scalar) {
  require_step("add_reduction");
  if (!scalar.shape().empty()) {
    throw std::invalid_argument("TrialWriter::add_reduction: the " + reduction_key_name(key) +
                                " of '" + name + "' must be a 0-d tensor");
  }
  auto record_name = reduction_tensor_name(name, key);
  auto payload = encode_tensor_event(record_name, scalar, step_, index_.mode, index_.mode_step,
                                     wall_time_now());
  // Belongs with the save just made of this name, raw or not, and goes before its raw record.
  if (pending_.empty() || pending_.back().name != name) {
    pending_.push_back(PendingTensor{name, {}, std::nullopt});
  }
  pending_.back().reductions.emplace_back(std::move(record_name), std::move(payload));
}

void TrialWriter::add_shape(const std::string& name, const Shape& shape) {
  require_step("add_shape");
  if (!index_.shapes) index_.shapes.emplace();
  // The PyTorch hook's tensors have no graph name distinct from the saved one.
  index_.shapes->push_back(ShapeEntry{name, name, shape});
}

void TrialWriter::end_step() {
  require_step("end_step");
  // Close the step before writing anything: a failed write must not leave it half open.
  in_step_ = false;
  IndexFile index = std::move(index_);
  const std::vector<PendingTensor> pending = std::move(pending_);
  index_ = IndexFile{};
  pending_.clear();

  events_.clear();
  const auto append = [&](const std::string& name, const std::string& payload) {
    const std::uint64_t start = events_.size();
    append_record(events_, payload, options_.footer);
    index.tensors.push_back(TensorLocation{name, start, events_.size() - start});
  };
  for (const auto& tensor : pending) {
    for (const auto& [name, payload] : tensor.reductions) append(name, payload);
    if (tensor.raw) append(tensor.name, *tensor.raw);
  }

  if (!index.tensors.empty()) {
    const std::string event_path = event_file_path(step_, options_.worker);
    if (options_.compression == Compression::None) {
      write_file(event_path, events_);
      event_bytes_written_ += events_.size();
    } else {
      const std::string compressed = compress_stream(events_, options_.compression);
      write_file(event_path, compressed);
      event_bytes_written_ += compressed.size();
    }
    index.event_file_name = event_path;
  }
  // The index goes last: a reader that sees it can rely on the event file being in place.
  write_file(index_file_path(step_, options_.worker), serialize_index_file(index));
}

void TrialWriter::write_collections(const CollectionsFile& collections) {
  write_file(collections_file_path(options_.worker), serialize_collections_file(collections));
}

void TrialWriter::write_end_marker() {
  write_file(std::string(kEndOfJobMarker), {});
}

void TrialWriter::write_file(const std::filesystem::path& relative, std::string_view content) {
  const std::filesystem::path path = options_.root / relative;
  std::error_code error;
  std::filesystem::create_directories(path.parent_path(), error);
  if (error) {
    throw StorageError("cannot create directory " + path.parent_path().string() + " for " +
                       path.string() + ": " + error.message());
  }
  if (!options_.atomic_rename) {
    write_whole_file(path, content);
    return;
  }
  std::filesystem::path temporary = path;
  temporary += ".tmp";
  try {
    write_whole_file(temporary, content);
  } catch (...) {
    std::filesystem::remove(temporary, error);
    throw;
  }
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw StorageError("cannot rename " + temporary.string() + " to " + path.string() + ": " +
                       error.message());
  }
}

}  // namespace rulestream
