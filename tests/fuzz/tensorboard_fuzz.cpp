// TensorBoard event files: any bytes as an event file of a run, read as a watch reads a file
// that grows (in two parts, cut where the input says), and each framed record's Event walked
// and its values read under the plugins that change what a tensor means. Whatever is wrong
// with the file is a problem the reader reports; no exception leaves it, and memory stays
// bounded by what the file carries.
#include <cstdint>
#include <string>

#include "core/model/exceptions.hpp"
#include "stages/format/tensorboard_event.hpp"
#include "stages/format/tensorboard_values.hpp"
#include "stages/format/tfrecord_reader.hpp"
#include "stages/tensorboard/run_reader.hpp"
#include "tests/fuzz/fuzz_input.hpp"

namespace {

using namespace rulestream;

class Sink final : public SeriesValueSink {
 public:
  void on_value(const SeriesTag& tag, std::int64_t step, double,
                const SummaryReading& reading) override {
    sum_ += static_cast<double>(step) + static_cast<double>(tag.index) + reading.scalar +
            reading.histogram.num;
  }
  double sum_ = 0.0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const SharedBytes file = fuzz::as_bytes(data, size);
  const std::string name = "run/events.out.tfevents.fuzz";
  // The whole file, first as far as a cut the input picks (a file still being written).
  RunReader reader("run");
  Sink sink;
  const std::size_t cut = size == 0 ? 0 : data[0] % (size + 1);
  reader.read(name, file.slice(0, cut), 0, sink);
  const std::uint64_t resume = reader.resume_offset(name);
  if (!reader.file_dead(name)) {
    reader.read(name, file.slice(static_cast<std::size_t>(resume), size - resume), resume, sink);
  }
  // Each record's payload decoded on its own, every value read under each plugin.
  TensorBoardEvent event;
  for (std::uint64_t offset = 0;;) {
    const Frame frame = frame_record_at(file.span(), offset);
    if (frame.status != FrameStatus::Record && frame.status != FrameStatus::BadDataCrc) break;
    const SharedBytes payload = file.slice(
        static_cast<std::size_t>(frame.payload.data() - file.data()), frame.payload.size());
    try {
      decode_tensorboard_event(payload.span(), name, event);
      for (const SummaryValueView& value : event.values) {
        for (const char* plugin : {"scalars", "histograms", "text", ""}) {
          try {
            (void)read_summary_value(value, plugin, payload, name);
          } catch (const FormatError&) {
          }
        }
      }
    } catch (const FormatError&) {
    }
    offset = frame.next_offset;
  }
  return 0;
}
