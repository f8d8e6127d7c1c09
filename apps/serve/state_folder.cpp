#include "apps/serve/state_folder.hpp"

#include <cstdlib>
#include <stdexcept>
#include <system_error>

namespace rulestream {

std::filesystem::path default_state_folder() {
  if (const char* systemd = std::getenv("STATE_DIRECTORY"); systemd != nullptr && *systemd) {
    // A list when a unit names several: the first is the service's own.
    std::string first(systemd);
    return first.substr(0, first.find(':'));
  }
  if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg != nullptr && *xdg) {
    return std::filesystem::path(xdg) / "rulestream";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home) {
    return std::filesystem::path(home) / ".local" / "state" / "rulestream";
  }
  return {};
}

void make_state_folder(const std::filesystem::path& folder) {
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error || !std::filesystem::is_directory(folder)) {
    throw std::invalid_argument("--state-dir " + folder.string() + ": cannot make it a folder" +
                                (error ? " (" + error.message() + ")" : std::string()));
  }
}

void place_dead_letters(std::vector<SinkConfig>& sinks, const std::filesystem::path& folder) {
  for (SinkConfig& sink : sinks) {
    if ((sink.type == "webhook" || sink.type == "alertmanager") && sink.dead_letter_path.empty()) {
      sink.dead_letter_path = (folder / "dead-letters.jsonl").string();
    }
  }
}

}  // namespace rulestream
