#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace rulestream::testing {

// Whether the file system holding `folder` grants this process a read lease on a file of its
// own that nobody writes. Where it does not (NFS, some overlays, leases disabled), LocalStorage
// copies instead of mapping (sources/local/file_leases.hpp), and a test of leased mappings has
// nothing to look at. The lease is let go at once: nobody else knows the file, so no break (and
// no SIGIO) can come in between.
inline bool folder_grants_leases(const std::filesystem::path& folder) {
  const std::filesystem::path probe = folder / "lease-probe";
  std::ofstream(probe).put('x');
  const int fd = ::open(probe.c_str(), O_RDONLY | O_CLOEXEC);
  const bool granted = fd >= 0 && ::fcntl(fd, F_SETLEASE, F_RDLCK) == 0;
  if (granted) ::fcntl(fd, F_SETLEASE, F_UNLCK);
  if (fd >= 0) ::close(fd);
  std::filesystem::remove(probe);
  return granted;
}

// Whether the file at `path` is mapped into this process now: /proc/self/maps names every
// mapped file (a mapping LocalStorage made under a lease, until a lease break copies it).
inline bool is_mapped_into_this_process(const std::filesystem::path& path) {
  const std::string name = std::filesystem::canonical(path).string();
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.ends_with(" " + name)) return true;
  }
  return false;
}

}  // namespace rulestream::testing
