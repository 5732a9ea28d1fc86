// Choosing GPUs for a job and, when asked, leasing them: at once, or after
// waiting in the machine's queue, first come first served. Shared by
// `select --lease`, `run --gpus auto:N [--wait]` and the Python package.
// docs/select.md.
//
// A waiter only takes GPUs when it is first in the queue, so a request for
// four GPUs is not overtaken forever by requests for one; a request that does
// not wait is refused while anyone waits. Taking is one read-modify-write of
// the lease file under its lock: two launches never get the same GPU.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/select/selection.h"
#include "gpuwatch/snapshot.h"
#include "host/leases.h"
#include "sampler/collect.h"

namespace gpuwatch::engine {

struct ClaimRequest {
  select::Criteria criteria;
  std::optional<std::string> cuda_visible_devices;  // the caller's environment
  std::optional<std::string> cuda_device_order;
  bool lease = false;  // false: choose only (leased GPUs still count as taken)
  bool wait = false;   // queue until enough qualify (needs lease)
  std::optional<std::chrono::steady_clock::duration> timeout;  // of the wait; none: forever
  std::vector<ProcessKey> holders;                             // the lease's; the first one waits
  std::string user;
  std::string command;
  std::chrono::milliseconds poll{200};
};

struct ClaimOutcome {
  enum class Kind { kGranted, kTooFew, kQueueAhead, kTimedOut, kInterrupted };
  Kind kind = Kind::kTooFew;
  select::Choice choice;     // the last one made
  std::uint64_t ticket = 0;  // of the lease or the wait; 0 when nothing was written
  int ahead = 0;             // waiters ahead (kQueueAhead, kTimedOut)
  int signal = 0;            // kInterrupted
  std::chrono::steady_clock::duration waited{};
  std::chrono::system_clock::time_point granted;  // stamped under the lock: FIFO order
  std::string warning;                            // a lease file that had to be reset
};

// What the request waits for, for people: "2 GPUs with ≥ 40.0 GiB free".
std::string Wants(const select::Criteria& criteria);

// Who holds each leased device, as select's reason: "leased to pid 12
// (alice: python train.py)".
std::map<std::string, std::string> TakenBy(const host::LeaseTable& table);

// What choosing under `criteria` reads of the GPUs (select::SelectionFields,
// and the processes only for free_users): a one-shot choice reads no more.
CollectOptions ChoosingReads(const select::Criteria& criteria);

// `read_gpus` reads the GPUs now; it is only called when this request may
// take some. `progress` receives a line whenever where the wait stands
// changes. The wait leaves the queue at the timeout and as soon as `stop`
// returns non-zero (polled while it waits; its value becomes the outcome's
// `signal`: the CLI passes the pending signal).
Result<ClaimOutcome> Claim(const ClaimRequest& request, const host::LeaseBook& book,
                           const std::function<Snapshot()>& read_gpus,
                           const std::function<void(const std::string&)>& progress,
                           const std::function<int()>& stop);

// "alice", from the real uid.
std::string CurrentUser();

// The machine's lease file (GPUWATCH_RUNTIME_DIR, docs/select.md).
host::LeaseBook MachineLeaseBook();

// "3", "1:0" or the UUIDs, comma-separated: what CUDA_VISIBLE_DEVICES gets.
// A MIG device is always given by UUID, the only name CUDA takes for it.
std::string DeviceList(const select::Choice& choice, bool uuids);

// The leases one claim took, given back when this goes out of scope (the
// command ending normally). After kill -9 the holders' deaths free them.
class HeldLeases {
 public:
  HeldLeases(host::LeaseBook book, std::uint64_t ticket)
      : book_(std::move(book)), ticket_(ticket) {}
  HeldLeases(const HeldLeases&) = delete;
  HeldLeases& operator=(const HeldLeases&) = delete;
  ~HeldLeases();
  // Another process that keeps the leases while it lives (the job).
  Status AddHolder(const ProcessKey& holder);

 private:
  host::LeaseBook book_;
  std::uint64_t ticket_;
};

}  // namespace gpuwatch::engine
