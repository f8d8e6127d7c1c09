// Text metrics: any bytes as a CSV log, a JSON-lines log and a trainer_state.json, each read as
// a watch reads a file that grows (in windows cut where the input says, then the rest as a
// replay's last bytes) and as a replay reads it whole; and the Python-float and JSON-number
// readers on the same bytes. Whatever is wrong with a file is a problem the loader reports; no
// exception leaves it, and what a file holds is read the same however it is cut.
#include <cmath>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "stages/metrics/json_scan.hpp"
#include "stages/metrics/metrics_run_loader.hpp"
#include "stages/metrics/text_numbers.hpp"
#include "tests/fuzz/fuzz_input.hpp"

namespace {

using namespace rulestream;

// Every value by tag, in order: what a file gave.
class Sink final : public SeriesValueSink {
 public:
  void on_value(const SeriesTag& tag, std::int64_t step, double wall_time,
                const SummaryReading& reading) override {
    values[tag.name].push_back({step, wall_time, reading.scalar});
  }
  struct Value {
    std::int64_t step;
    double time;
    double value;
    bool operator==(const Value& other) const {
      const auto same = [](double a, double b) {
        return a == b || (std::isnan(a) && std::isnan(b));
      };
      return step == other.step && same(time, other.time) && same(value, other.value);
    }
  };
  std::map<std::string, std::vector<Value>> values;
};

// `file` read through a fresh loader: whole (cut == size) or up to `cut` first, as a watch
// would, then the rest with the file's end.
Sink read(const std::string& name, const SharedBytes& file, std::size_t cut) {
  MetricsRunLoader loader(name);
  Sink sink;
  std::uint64_t offset = 0;
  for (const auto& [end, last] : {std::pair{cut, false}, std::pair{file.size(), true}}) {
    if (loader.file_dead(name)) break;
    offset = loader.resume_offset(name);
    if (offset > end) continue;
    loader.read_bytes(name, file.slice(static_cast<std::size_t>(offset), end - offset), offset,
                      last, sink);
  }
  return sink;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const SharedBytes file = fuzz::as_bytes(data, size);
  const std::size_t cut = size == 0 ? 0 : data[0] % (size + 1);
  for (const char* name : {"metrics.csv", "scalars.json", "out/trainer_state.json"}) {
    const Sink whole = read(name, file, size);
    const Sink grown = read(name, file, cut);
    // A row the cut ended inside is read from its start later; but a CSV's header or a
    // trainer_state member cut short changes nothing either: the same values either way. (A
    // JSON-lines line cut short in the middle is the exception only when the first part was
    // the file's last bytes, which a watch's read never takes it for.)
    if (!(whole.values == grown.values)) __builtin_trap();
  }
  const std::string_view text = fuzz::as_text(data, size);
  (void)parse_python_float(text);
  JsonScanner scanner(text);
  std::vector<JsonMember> members;
  (void)scanner.flat_object(members);
  return 0;
}
