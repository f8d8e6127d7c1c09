#include "stages/tensorboard/run_reader.hpp"

#include <cstring>
#include <stdexcept>

#include "core/model/exceptions.hpp"
#include "stages/format/tfrecord_reader.hpp"

namespace rulestream {
namespace {

std::string at_offset(const std::string& file, std::uint64_t offset) {
  return file + ": record at offset " + std::to_string(offset);
}

// Why the record at `at` of `buffer` ends its file.
std::string why_unframed(FrameStatus status, std::span<const std::byte> buffer, std::uint64_t at) {
  switch (status) {
    case FrameStatus::BadLengthCrc:
      return "the length checksum does not match (not a record: text written into the file?)";
    case FrameStatus::ImpossibleLength: {
      std::uint64_t length = 0;
      std::memcpy(&length, buffer.data() + at, sizeof(length));  // little-endian, as written
      return "its length, " + std::to_string(length) +
             " bytes, is more than any record can hold (2 GiB): the file is corrupt there";
    }
    default:
      return "the data checksum does not match";
  }
}

}  // namespace

RunReader::RunReader(std::string run) : run_(std::move(run)) {}

std::uint64_t RunReader::resume_offset(const std::string& file) const {
  const auto found = files_.find(file);
  return found == files_.end() ? 0 : found->second.resume_offset;
}

bool RunReader::check_replaced(const std::string& file, std::uint64_t size,
                               std::uint64_t identity) {
  FileState& state = files_[file];
  const bool other_file = identity != 0 && state.identity != 0 && identity != state.identity;
  const bool cut = size < state.resume_offset;
  if (identity != 0) state.identity = identity;
  if (!other_file && !cut) return false;
  problems_.push_back(
      {file, 0,
       file +
           (other_file ? ": replaced by another file of the same name"
                       : ": now " + std::to_string(size) + " bytes, shorter than the " +
                             std::to_string(state.resume_offset) + " already read") +
           "; it is read again from its start, and its steps count as a restart",
       false});
  state.resume_offset = 0;
  state.dead = false;
  return true;
}

void RunReader::before_read(const Storage& storage, const StoredObject& file) {
  static_cast<void>(storage);
  check_replaced(file.path, file.size, file.identity);
}

void RunReader::read_bytes(const std::string& file, const SharedBytes& bytes,
                           std::uint64_t bytes_offset, bool last_bytes, SeriesValueSink& sink) {
  static_cast<void>(last_bytes);
  read(file, bytes, bytes_offset, sink);
}

void RunReader::abandon(const std::string& file, std::uint64_t offset, const std::string& why) {
  FileState& state = files_[file];
  problems_.push_back({file, offset, at_offset(file, offset) + ": " + why});
  state.dead = true;
}

bool RunReader::file_dead(const std::string& file) const {
  const auto found = files_.find(file);
  return found != files_.end() && found->second.dead;
}

void RunReader::read(const std::string& file, const SharedBytes& bytes, std::uint64_t bytes_offset,
                     SeriesValueSink& sink) {
  FileState& state = files_[file];
  if (state.dead) return;
  if (state.resume_offset < bytes_offset || state.resume_offset - bytes_offset > bytes.size()) {
    throw std::invalid_argument("RunReader::read: bytes from offset " +
                                std::to_string(bytes_offset) + " do not hold offset " +
                                std::to_string(state.resume_offset) + " of " + file);
  }
  const auto buffer = bytes.span();
  std::uint64_t at = state.resume_offset - bytes_offset;
  for (;;) {
    const Frame frame = frame_record_at(buffer, at);
    const std::uint64_t offset = bytes_offset + at;
    switch (frame.status) {
      case FrameStatus::Record:
        deliver(file, offset,
                bytes.slice(static_cast<std::size_t>(frame.payload.data() - buffer.data()),
                            frame.payload.size()),
                sink);
        at = frame.next_offset;
        continue;
      case FrameStatus::Incomplete:
        state.resume_offset = offset;
        return;
      case FrameStatus::BadLengthCrc:
      case FrameStatus::ImpossibleLength:
      case FrameStatus::BadDataCrc: {
        problems_.push_back({file, offset,
                             at_offset(file, offset) + ": " +
                                 why_unframed(frame.status, buffer, at) +
                                 "; the rest of the file is not read"});
        state.resume_offset = offset;
        state.dead = true;
        return;
      }
    }
  }
}

void RunReader::deliver(const std::string& file, std::uint64_t offset, const SharedBytes& payload,
                        SeriesValueSink& sink) {
  try {
    decode_tensorboard_event(payload.span(), file, event_);
    if (!started_) started_ = event_.wall_time;
  } catch (const FormatError& error) {
    problems_.push_back(
        {file, offset, at_offset(file, offset) + ": not an Event: " + error.detail()});
    return;
  }
  for (const SummaryValueView& value : event_.values) {
    const auto known = tag_index_.find(value.tag);
    const std::string_view plugin =
        known == tag_index_.end() ? value.plugin_name : tags_[known->second].plugin_name;
    SummaryReading reading;
    try {
      reading = read_summary_value(value, plugin, payload, file);
    } catch (const FormatError& error) {
      problems_.push_back({file, offset,
                           at_offset(file, offset) + ": value '" + std::string(value.tag) +
                               "' at step " + std::to_string(event_.step) +
                               " is skipped: " + error.detail()});
      continue;
    }
    const SeriesTag& tag =
        known == tag_index_.end() ? tag_for(value, reading) : tags_[known->second];
    sink.on_value(tag, event_.step, event_.wall_time, reading);
  }
}

const SeriesTag& RunReader::tag_for(const SummaryValueView& value, const SummaryReading& first) {
  SeriesTag& tag = tags_.emplace_back();
  tag.run = run_;
  tag.name.assign(value.tag);
  tag.kind = first.kind;
  tag.plugin_name.assign(value.plugin_name);
  tag.index = tags_.size() - 1;
  tag_index_.emplace(tag.name, tag.index);
  return tag;
}

}  // namespace rulestream
