#include "sources/local/file_leases.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstring>
#include <future>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>

namespace rulestream {
namespace {

// Mappings detached by lease breaks so far (LeasedMapping::breaks_handled).
std::atomic<std::uint64_t> detached_mappings{0};

}  // namespace

// The registry of leased mappings, by the descriptor holding each one's lease, and the thread
// that handles lease breaks. One per process (a lease break is a signal, and signals are the
// process's): made on first use and never destroyed, so that its thread, which waits for breaks
// until the process ends, never outlives it and no std::thread is destroyed joinable.
//
// How a break reaches us (fcntl(2): F_SETSIG, F_SETOWN_EX, F_SETLEASE): each lease descriptor
// names a real-time signal (F_SETSIG) and our thread as its owner (F_SETOWN_EX, F_OWNER_TID), so
// the kernel sends the signal, with the descriptor in si_fd, to that thread alone. The thread
// keeps the signal blocked and takes it with sigwaitinfo, so the work is done in that thread,
// never in a signal handler, and other threads need not block the signal. Taking a lease sets
// the owner to the whole process (lease_setup in the kernel), so F_SETOWN_EX must follow
// F_SETLEASE; a break in between goes to any thread, where a handler that does nothing takes it
// (the default action of a real-time signal ends the process). map() then finds the lease
// breaking and lets the mapping go.
//
// Thread safety: every call may come from any thread. `mutex_` guards the registry and every
// use of a registered descriptor (so none is used after it is closed and its number reused).
class LeaseBreaks {
 public:
  static LeaseBreaks& instance() {
    static LeaseBreaks* const breaks = new LeaseBreaks();  // never destroyed: see above
    return *breaks;
  }

  bool available() const { return thread_id_ != 0; }

  std::shared_ptr<const LeasedMapping> map(int fd, std::uint64_t offset, std::size_t length,
                                           bool populate);

  // Called by ~LeasedMapping before it unmaps: forgets the mapping and lets its lease go,
  // after any break being handled for it.
  void release(LeasedMapping& mapping);

 private:
  LeaseBreaks();
  void wait_for_breaks(std::promise<pid_t> started);
  void handle_break(int fd);
  void handle_every_break();
  // Moves a private copy of the mapping's bytes over it, then lets the lease go. Under mutex_.
  static void detach(LeasedMapping& mapping);
  static void unlock_and_close(int fd);

  int signal_ = 0;
  pid_t thread_id_ = 0;
  // The process the thread runs in: a forked child has no such thread (and the owner named in
  // its leases would be its parent's thread), so it copies instead.
  const pid_t process_id_ = ::getpid();
  // Leases we hold at most at once: each holds a descriptor, and a process whose rules hold
  // values of many files should not run out of them. Beyond it, reads copy.
  std::size_t max_leases_ = 0;
  std::mutex mutex_;
  std::unordered_map<int, LeasedMapping*> leased_;  // by lease descriptor
  std::thread thread_;
};

namespace {

// Runs in whichever thread a break reaches before its lease names our thread as owner.
void ignore_stray_break(int) {}

// A real-time signal with no handler yet, now handled by ignore_stray_break; 0 when every one
// is taken. From the top: programs that use real-time signals usually count up from SIGRTMIN.
int claim_real_time_signal() {
  for (int signal = SIGRTMAX; signal >= SIGRTMIN; --signal) {
    struct sigaction current {};
    if (::sigaction(signal, nullptr, &current) != 0) continue;
    if ((current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL) continue;
    struct sigaction stray {};
    stray.sa_handler = ignore_stray_break;
    stray.sa_flags = SA_RESTART;
    ::sigemptyset(&stray.sa_mask);
    if (::sigaction(signal, &stray, nullptr) == 0) return signal;
  }
  return 0;
}

std::size_t lease_limit() {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 1024;
  return static_cast<std::size_t>(std::min<rlim_t>(limit.rlim_cur / 4, 65536));
}

}  // namespace

LeaseBreaks::LeaseBreaks() : signal_(claim_real_time_signal()), max_leases_(lease_limit()) {
  if (signal_ == 0) return;
  std::promise<pid_t> started;
  std::future<pid_t> thread_id = started.get_future();
  try {
    thread_ = std::thread(
        [this, started = std::move(started)]() mutable { wait_for_breaks(std::move(started)); });
  } catch (const std::system_error&) {
    return;  // no thread, no leases: every read copies
  }
  thread_id_ = thread_id.get();
}

void LeaseBreaks::wait_for_breaks(std::promise<pid_t> started) {
  // Every signal blocked here: the process's own go to its own threads, and ours are taken
  // below. SIGIO too: the kernel sends it in place of our signal when its queue is full.
  sigset_t all;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_BLOCK, &all, nullptr);
  sigset_t breaks;
  ::sigemptyset(&breaks);
  ::sigaddset(&breaks, signal_);
  ::sigaddset(&breaks, SIGIO);
  started.set_value(::gettid());
  while (true) {
    siginfo_t info{};
    const int signal = ::sigwaitinfo(&breaks, &info);
    if (signal == signal_) {
      handle_break(info.si_fd);
    } else if (signal == SIGIO) {
      handle_every_break();  // some break's signal was lost: look at every lease
    }
  }
}

std::shared_ptr<const LeasedMapping> LeaseBreaks::map(int fd, std::uint64_t offset,
                                                      std::size_t length, bool populate) {
  if (!available() || ::getpid() != process_id_) return nullptr;
  {
    std::lock_guard lock(mutex_);
    if (leased_.size() >= max_leases_) return nullptr;
  }
  // A descriptor of our own: the lease lives as long as the mapping, and names it in si_fd.
  const int lease_fd = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (lease_fd < 0) return nullptr;
  // Refused when the file is open for writing anywhere (EAGAIN), is not ours and we lack
  // CAP_LEASE (EACCES), or its file system has no leases (EINVAL).
  if (::fcntl(lease_fd, F_SETSIG, signal_) != 0 || ::fcntl(lease_fd, F_SETLEASE, F_RDLCK) != 0) {
    ::close(lease_fd);
    return nullptr;
  }
  const f_owner_ex owner{.type = F_OWNER_TID, .pid = thread_id_};
  struct stat status {};
  // Whoever cut the file short after the caller looked did it before the lease: it holds still
  // now, and what we map must lie within it (a page past the end raises SIGBUS).
  if (::fcntl(lease_fd, F_SETOWN_EX, &owner) != 0 || ::fstat(lease_fd, &status) != 0 ||
      static_cast<std::uint64_t>(status.st_size) < offset + length) {
    unlock_and_close(lease_fd);
    return nullptr;
  }
  void* const address =
      ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE | (populate ? MAP_POPULATE : 0), lease_fd,
             static_cast<off_t>(offset));
  if (address == MAP_FAILED) {
    unlock_and_close(lease_fd);
    return nullptr;
  }
  std::shared_ptr<LeasedMapping> mapping(
      new LeasedMapping(static_cast<std::byte*>(address), length, lease_fd));
  std::lock_guard lock(mutex_);
  leased_.emplace(lease_fd, mapping.get());
  // A break that began before our thread owned the lease, or before the mapping was registered,
  // went unhandled, and one handled since has detached the mapping: either way it is let go
  // before anyone sees it (its destructor, after this lock, releases the lease and unmaps).
  if (mapping->lease_fd_ < 0 || ::fcntl(lease_fd, F_GETLEASE) != F_RDLCK) return nullptr;
  return mapping;
}

void LeaseBreaks::release(LeasedMapping& mapping) {
  std::lock_guard lock(mutex_);
  if (mapping.lease_fd_ < 0) return;  // a break has released it
  leased_.erase(mapping.lease_fd_);
  unlock_and_close(std::exchange(mapping.lease_fd_, -1));
}

void LeaseBreaks::handle_break(int fd) {
  std::lock_guard lock(mutex_);
  const auto it = leased_.find(fd);
  // Not registered: released meanwhile, or not yet registered (map() sees to those). Still
  // leased: the signal was for an earlier lease whose descriptor number this one reuses.
  if (it == leased_.end() || ::fcntl(fd, F_GETLEASE) == F_RDLCK) return;
  detach(*it->second);
  leased_.erase(it);
}

void LeaseBreaks::handle_every_break() {
  std::lock_guard lock(mutex_);
  for (auto it = leased_.begin(); it != leased_.end();) {
    if (::fcntl(it->first, F_GETLEASE) == F_RDLCK) {
      ++it;
      continue;
    }
    detach(*it->second);
    it = leased_.erase(it);
  }
}

void LeaseBreaks::detach(LeasedMapping& mapping) {
  // The writer that broke the lease waits until we let go, so the mapped bytes are still the
  // file's: copy them, and move the copy over the mapping, at the same addresses (mremap with
  // MREMAP_FIXED replaces the old pages in one step: a reader never finds the range unmapped).
  void* const copy =
      ::mmap(nullptr, mapping.length_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (copy != MAP_FAILED) {
    std::memcpy(copy, mapping.address_, mapping.length_);
    ::mprotect(copy, mapping.length_, PROT_READ);
    if (::mremap(copy, mapping.length_, mapping.length_, MREMAP_MAYMOVE | MREMAP_FIXED,
                 mapping.address_) == MAP_FAILED) {
      ::munmap(copy, mapping.length_);
    }
  }
  // Let go even if there was no memory for the copy: holding on would only keep the writer
  // waiting until lease-break-time, after which the kernel takes the lease anyway. Readers of
  // that mapping are then as exposed as before leases; new reads no longer use it.
  mapping.detached_.store(true, std::memory_order_release);
  detached_mappings.fetch_add(1, std::memory_order_release);
  unlock_and_close(std::exchange(mapping.lease_fd_, -1));
}

void LeaseBreaks::unlock_and_close(int fd) {
  ::fcntl(fd, F_SETLEASE, F_UNLCK);
  ::close(fd);
}

std::shared_ptr<const LeasedMapping> LeasedMapping::map(int fd, std::uint64_t offset,
                                                        std::size_t length, bool populate) {
  return LeaseBreaks::instance().map(fd, offset, length, populate);
}

std::uint64_t LeasedMapping::breaks_handled() {
  return detached_mappings.load(std::memory_order_acquire);
}

LeasedMapping::~LeasedMapping() {
  LeaseBreaks::instance().release(*this);
  ::munmap(address_, length_);
}

}  // namespace rulestream
