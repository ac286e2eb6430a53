// A ThreadPool call made under a KernelRecorder: the caller reports every piece with work, timed
// where it ran, and the join it waited in; without a recorder nothing is reported.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "brick/core/kernel_recorder.hpp"
#include "brick/runtime/batch/thread_pool.hpp"

namespace brick {
namespace {

struct CallLog final : KernelRecorder {
  std::vector<ParallelCall> calls;
  std::vector<std::vector<ParallelPiece>> pieces;
  void kernel_begin(std::string_view, Backend, std::uint64_t) noexcept override {}
  void kernel_end(const KernelWork&, std::uint64_t) noexcept override {}
  void transfer(const TransferRecord&) noexcept override {}
  void parallel_call(const ParallelCall& call) noexcept override {
    calls.push_back(call);
    pieces.emplace_back(call.pieces.begin(), call.pieces.end());
  }
};

// Installs a recorder for the calling thread for the scope.
struct Installed {
  explicit Installed(KernelRecorder& recorder) : previous(set_kernel_recorder(&recorder)) {}
  ~Installed() { set_kernel_recorder(previous); }
  KernelRecorder* previous;
};

TEST(ThreadPoolRecorder, ReportsEveryPieceWithItsRangeAndTheJoin) {
  for (const std::size_t threads : {1u, 2u, 4u}) {
    ThreadPool pool(threads);
    CallLog log;
    {
      const Installed installed(log);
      for (const std::size_t n : {1u, 3u, 1000u}) pool.parallel_for(n, [](Range, std::size_t) {});
    }
    pool.parallel_for(10, [](Range, std::size_t) {});  // no recorder: not reported
    ASSERT_EQ(log.calls.size(), 3u) << threads;
    for (std::size_t c = 0; c < log.calls.size(); ++c) {
      const ParallelCall& call = log.calls[c];
      EXPECT_LE(call.start_ns, call.join_start_ns);
      EXPECT_LE(call.join_start_ns, call.end_ns);
      std::size_t covered = 0;
      std::size_t previous_slot = 0;
      for (std::size_t i = 0; i < log.pieces[c].size(); ++i) {
        const ParallelPiece& piece = log.pieces[c][i];
        EXPECT_EQ(piece.begin, covered) << "pieces come in slot order, back to back";
        covered = piece.end;
        EXPECT_LE(piece.start_ns, piece.end_ns);
        EXPECT_GE(piece.start_ns, call.start_ns);
        EXPECT_LE(piece.end_ns, call.end_ns);
        EXPECT_TRUE(i == 0 || piece.slot > previous_slot);
        previous_slot = piece.slot;
        EXPECT_TRUE(piece.slot != 0 || piece.on_caller);
      }
      EXPECT_EQ(covered, std::vector<std::size_t>({1u, 3u, 1000u})[c]);
      EXPECT_EQ(log.pieces[c].size(), std::min(threads, covered));
    }
  }
}

TEST(ThreadPoolRecorder, AThrowingTaskStillReportsTheCall) {
  ThreadPool pool(2);
  CallLog log;
  const Installed installed(log);
  EXPECT_THROW(pool.parallel_for(100, [](Range, std::size_t slot) {
    if (slot == 1) throw std::runtime_error("piece failed");
  }),
               std::runtime_error);
  ASSERT_EQ(log.calls.size(), 1u);
  EXPECT_EQ(log.pieces[0].size(), 2u);
}

TEST(KernelScope, ReportsToTheThreadsRecorderOnlyAndBalancesOnThrow) {
  struct Counting final : KernelRecorder {
    int begins = 0, ends = 0;
    KernelWork last;
    void kernel_begin(std::string_view name, Backend backend, std::uint64_t) noexcept override {
      ++begins;
      EXPECT_EQ(name, "quantize_q8k");
      EXPECT_EQ(backend, Backend::Avx2);
    }
    void kernel_end(const KernelWork& work, std::uint64_t) noexcept override {
      ++ends;
      last = work;
    }
    void transfer(const TransferRecord&) noexcept override {}
    void parallel_call(const ParallelCall&) noexcept override {}
  } counting;
  { KernelScope unrecorded("quantize_q8k", Backend::Avx2); }
  {
    const Installed installed(counting);
    {
      KernelScope scope("quantize_q8k", Backend::Avx2);
      scope.set_work(256, 1024.0, 1316.0);
    }
    try {
      KernelScope scope("quantize_q8k", Backend::Avx2);
      throw std::runtime_error("kernel failed");
    } catch (const std::runtime_error&) {
    }
  }
  EXPECT_EQ(counting.begins, 2);
  EXPECT_EQ(counting.ends, 2);
  EXPECT_EQ(active_kernel_recorder(), nullptr);
  EXPECT_EQ(name(TransferDirection::HostCopy), "host_copy");
  EXPECT_EQ(name(TransferDirection::DeviceToHost), "device_to_host");
}

}  // namespace
}  // namespace brick
