#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace rulestream {

// A read-only mapping of part of a local file, made only while this process holds a read lease
// on the file (fcntl F_SETLEASE, F_RDLCK), so that the mapped pages cannot change under readers.
//
// Why: a mapped page is not a snapshot. A training job restarting from a checkpoint that cuts an
// event file short in place made the next touch of a mapped page raise SIGBUS, in whichever
// thread held bytes of it (issue 22, item 5). A read lease is granted only while nobody has the
// file open for writing, and while it is held, whoever opens the file for writing or truncates
// it waits (up to /proc/sys/fs/lease-break-time) for the kernel to tell us and for us to let go.
// On that break, one process-wide thread copies the still-intact mapped bytes into private
// memory and moves the copy over the mapping's addresses (mremap), then releases the lease: every
// pointer into the mapping stays valid and reads the same bytes, and the writer goes on.
//
// Where no lease can be had (the file is open for writing somewhere, we neither own it nor have
// CAP_LEASE, the file system has no leases: NFS, some overlays; no free real-time signal; too
// many leases at once), `map` returns null and the caller reads by copy instead.
//
// Thread safety: a LeasedMapping is immutable to its users and may be read from any thread, also
// while a break moves the copy in (the bytes at every address stay the same throughout). Its
// destructor may run on any thread, also while a break is being handled for it: it waits for
// that to finish before it unmaps.
class LeasedMapping {
 public:
  // Maps `length` bytes of the open file `fd` from `offset` (a multiple of the page size), which
  // must lie within the file when it is leased (checked once the lease is held: a file cut short
  // since the caller looked is not mapped). `populate` fills the page table at once
  // (MAP_POPULATE). Null when the file cannot be leased or mapped. `fd` stays the caller's: the
  // mapping keeps a duplicate of it, which holds the lease, for as long as it lives.
  static std::shared_ptr<const LeasedMapping> map(int fd, std::uint64_t offset, std::size_t length,
                                                  bool populate);

  LeasedMapping(const LeasedMapping&) = delete;
  LeasedMapping& operator=(const LeasedMapping&) = delete;
  ~LeasedMapping();

  std::span<const std::byte> bytes() const { return {address_, length_}; }

  // Whether a lease break has replaced the file's pages by a private copy: the bytes are the
  // file's as they were when mapped, and the file may have changed since, so it is no longer the
  // file as it is (MappedFiles stops serving it).
  bool detached() const { return detached_.load(std::memory_order_acquire); }

  // How many mappings of this process lease breaks have detached so far. It counts a mapping
  // only after marking it detached (release; this reads with acquire), so whoever holds many
  // mappings can look at their flags only when this has changed since it last looked.
  static std::uint64_t breaks_handled();

 private:
  friend class LeaseBreaks;
  LeasedMapping(std::byte* address, std::size_t length, int lease_fd)
      : address_(address), length_(length), lease_fd_(lease_fd) {}

  std::byte* const address_;
  const std::size_t length_;
  // The duplicate descriptor that holds the lease; -1 once a break has released it. Guarded by
  // the lease registry's mutex (LeaseBreaks).
  int lease_fd_;
  std::atomic<bool> detached_{false};
};

}  // namespace rulestream
