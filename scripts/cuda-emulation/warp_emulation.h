// warp_emulation.h: just enough of CUDA's execution model on the CPU to run kernels' own source
// (translated by emulate.py; the stand-in runtime headers are in include/) for checking, not speed:
// each thread of a block is a fiber on the launching OS thread (switched by a few instructions on
// x86-64, by ucontext elsewhere), __syncthreads a barrier of the block at which the fibers take
// turns, and every warp-collective instruction (shuffles, votes, mma.sync.m16n8k16 bf16, ldmatrix
// x4) a rendezvous of the warp's 32 threads in which each lane publishes its operands and computes
// its own results from everyone's, following the PTX ISA's fragment layouts as this header states
// them independently of mma_bf16.cuh. Blocks run one after another, so `__shared__` variables become
// function statics, and a launch returns when its grid has run; launches from several host threads
// run one at a time (one device). cp.async copies land when they are issued, or with
// S3_EMU_COPIES=at-wait only at the issuing thread's wait for their group (copies_at_wait()). Products
// inside an emulated mma are summed in double and rounded once (the tensor core's order is not
// modelled). Threads run in turn, not at once, so a kernel's data race shows up only as the turn
// order makes it: S3_EMU_ORDER picks that order (schedule() below), and a race-free kernel gives
// the same bits in every one (the GPU check's racecheck covers the memory model itself).
#pragma once

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

#include <algorithm>
#include <array>
#include <atomic>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "core/dtype.h"
#include "cuda_runtime.h"

namespace emu {

struct Dim3 { unsigned x = 0, y = 0, z = 0; };
// The running CUDA thread's indices: saved and restored by each fiber around every switch. Plain
// globals, as one launch runs at a time (launch_kernel's lock): thread-locals cost a __tls_get_addr
// call per access in the emulated addon, a shared object (11% of an emulated decode's time).
inline Dim3 thread_index, block_index, block_dim, grid_dim;
inline int sync_count = 0;

struct Barrier;

#if defined(__x86_64__)
// A fiber's saved stack pointer; everything else it needs to resume was pushed onto its stack by
// s3_emu_switch: the callee-saved registers of the SysV ABI, the x87 control word and MXCSR. No
// signal mask is saved, so a switch makes no system call (swapcontext's sigprocmask was a third of
// the emulation's time). Weak symbols, as every translation unit including this header emits them.
struct Context { void* sp = nullptr; };
asm(R"(
  .pushsection .text
  .weak s3_emu_switch
  .type s3_emu_switch, @function
s3_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $16, %rsp
  fnstcw (%rsp)
  stmxcsr 8(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  fldcw (%rsp)
  ldmxcsr 8(%rsp)
  addq $16, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size s3_emu_switch, .-s3_emu_switch
  .weak s3_emu_fiber_start
  .type s3_emu_fiber_start, @function
s3_emu_fiber_start:
  callq *%r13
  ud2
  .size s3_emu_fiber_start, .-s3_emu_fiber_start
  .popsection
)");
extern "C" void s3_emu_switch(void** save_sp, void* load_sp);
extern "C" void s3_emu_fiber_start();

// Saves the running context into `from` and resumes `to`.
inline void switch_context(Context& from, Context& to) { s3_emu_switch(&from.sp, to.sp); }

// A context that starts entry() (which must never return) on the given stack: the frame
// s3_emu_switch pops, with entry in r13 and s3_emu_fiber_start as the return address, placed so
// that entry is called with the stack aligned as the ABI requires.
inline void make_context(Context& context, uint8_t* stack, size_t size, void (*entry)()) {
  const uintptr_t top = (reinterpret_cast<uintptr_t>(stack) + size) & ~uintptr_t(15);
  uint64_t* frame = reinterpret_cast<uint64_t*>(top - 88);
  uint16_t control_word;
  uint32_t mxcsr;
  asm volatile("fnstcw %0" : "=m"(control_word));
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  std::memset(frame, 0, 88);
  std::memcpy(&frame[0], &control_word, sizeof control_word);
  std::memcpy(&frame[1], &mxcsr, sizeof mxcsr);
  frame[4] = reinterpret_cast<uint64_t>(entry);  // r13
  frame[8] = reinterpret_cast<uint64_t>(&s3_emu_fiber_start);
  context.sp = frame;
}
#else
struct Context { ucontext_t uc; };
inline void switch_context(Context& from, Context& to) { swapcontext(&from.uc, &to.uc); }
inline void make_context(Context& context, uint8_t* stack, size_t size, void (*entry)()) {
  getcontext(&context.uc);
  context.uc.uc_stack.ss_sp = stack;
  context.uc.uc_stack.ss_size = size;
  context.uc.uc_link = nullptr;
  makecontext(&context.uc, entry, 0);
}
#endif

// A cp.async copy in flight: `bytes` from `from` (zeros where null) to shared memory at `to`.
struct PendingCopy {
  void* to;
  const void* from;
  int bytes;
};

// One CUDA thread of the running launch.
struct Fiber {
  Context context;
  Dim3 thread_index, block_index;
  int sync_count = 0;
  bool done = false;
  const Barrier* waiting = nullptr;  // the barrier it waits at, and that barrier's generation then
  uint64_t waiting_generation = 0;
  std::vector<PendingCopy> open_group;               // copies issued since its last commit
  std::vector<std::vector<PendingCopy>> committed;   // its committed groups in flight, oldest first
};

// The running launch: its fibers, the scheduler's own context they switch back to, and the order
// its blocks run in (linear block indices, x fastest).
struct Launch {
  Context scheduler;
  std::vector<Fiber> fibers;
  int running = -1;
  const std::function<void()>* kernel = nullptr;
  struct Block* block = nullptr;
  std::vector<unsigned> block_order;
};
inline Launch* launch = nullptr;

// The order in which a block's threads take their turns, and in which a grid's blocks run, from
// S3_EMU_ORDER. A thread runs until it waits at a barrier or a warp collective. In rounds, every
// thread that can run takes one turn per round: `forward` (the default: thread 0 first, blocks in
// index order), `reverse`, or `shuffle` / `shuffle:SEED` (a new seeded permutation of the threads
// every round and of the blocks every launch, the same sequence every run). Or greedily, the
// lowest-numbered thread that can run goes next (`lowest-first`; `highest-first` the other way,
// blocks in reverse too), so one warp runs on through its collectives to the next block barrier
// before the warps after it start. The order decides which side of a missing barrier goes first:
// a kernel that reads what another thread writes without one gives other bits in another order.
// Anything else is refused.
struct Schedule {
  enum Kind { Forward, Reverse, Shuffle, LowestFirst, HighestFirst } kind = Forward;
  bool greedy() const { return kind == LowestFirst || kind == HighestFirst; }
  uint64_t state = 0;  // the shuffle's generator (splitmix64), seeded by SEED
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // order[0 .. n) = 0 .. n − 1 in this schedule's order (a fresh permutation per call for shuffle).
  template <typename T>
  void arrange(std::vector<T>& order, size_t n) {
    order.resize(n);
    const bool backwards = kind == Reverse || kind == HighestFirst;
    for (size_t i = 0; i < n; i++) order[i] = T(backwards ? n - 1 - i : i);
    if (kind != Shuffle) return;
    for (size_t i = n; i > 1; i--) std::swap(order[i - 1], order[size_t(next() % i)]);
  }
};
inline Schedule& schedule() {
  static Schedule chosen = [] {
    Schedule s;
    const char* text = std::getenv("S3_EMU_ORDER");
    const std::string value = text != nullptr ? text : "forward";
    char* end = nullptr;
    if (value == "forward") {
      s.kind = Schedule::Forward;
    } else if (value == "reverse") {
      s.kind = Schedule::Reverse;
    } else if (value == "lowest-first") {
      s.kind = Schedule::LowestFirst;
    } else if (value == "highest-first") {
      s.kind = Schedule::HighestFirst;
    } else if (value == "shuffle") {
      s.kind = Schedule::Shuffle, s.state = 1;
    } else if (value.rfind("shuffle:", 0) == 0 && value.size() > 8 &&
               (s.state = std::strtoull(value.c_str() + 8, &end, 10), *end == '\0')) {
      s.kind = Schedule::Shuffle;
    } else {
      std::fprintf(stderr,
                   "emulation: S3_EMU_ORDER is '%s'; expected forward, reverse, shuffle, shuffle:SEED, "
                   "lowest-first or highest-first\n",
                   value.c_str());
      std::exit(2);
    }
    return s;
  }();
  return chosen;
}

// Suspends the running fiber until the scheduler resumes it.
inline void yield_fiber() {
  Fiber& me = launch->fibers[size_t(launch->running)];
  me.thread_index = thread_index, me.block_index = block_index, me.sync_count = sync_count;
  switch_context(me.context, launch->scheduler);
  thread_index = me.thread_index, block_index = me.block_index, sync_count = me.sync_count;
}

// A barrier of `expected` fibers: the last to arrive runs on_last() (before any other goes on) and
// goes on; the others wait for the next generation.
struct Barrier {
  int expected, arrived = 0;
  uint64_t generation = 0;
  explicit Barrier(int n) : expected(n) {}
  void arrive_and_wait(void (*on_last)() = nullptr) {
    if (++arrived == expected) {
      arrived = 0;
      generation++;
      if (on_last != nullptr) on_last();
      return;
    }
    Fiber& me = launch->fibers[size_t(launch->running)];
    me.waiting = this, me.waiting_generation = generation;
    yield_fiber();
  }
};

// One block's rendezvous points and exchange slots.
struct Block {
  int threads;
  Barrier all;
  std::vector<std::unique_ptr<Barrier>> warps;
  std::atomic<int> votes[3] = {0, 0, 0};
  std::vector<uint8_t> shared;                 // dynamic shared memory
  // What a lane publishes to its warp: two slots per thread, a collective using the one of its parity
  // (collectives[thread] counts them), so that a warp rendezvous once per collective, not twice.
  std::vector<std::array<uint8_t, 64>> slots;
  std::vector<uint32_t> collectives;
  explicit Block(int n, size_t shared_bytes)
      : threads(n), all(n), shared(shared_bytes, 0xCD), slots(size_t(2 * n)), collectives(size_t(n), 0) {
    for (int w = 0; w < n / 32; w++) warps.push_back(std::make_unique<Barrier>(32));
  }
};
inline Block* current = nullptr;

inline int lane() { return int(thread_index.x) & 31; }
inline int warp() { return int(thread_index.x) >> 5; }
inline void warp_sync() { current->warps[size_t(warp())]->arrive_and_wait(); }
template <typename T>
inline T& slot(unsigned buffer, int l) {
  static_assert(sizeof(T) <= 64, "a lane publishes at most 64 bytes");
  return *reinterpret_cast<T*>(current->slots[size_t(buffer) * size_t(current->threads) + size_t(warp() * 32 + l)].data());
}
// Every lane publishes `mine`, the warp meets, and the buffer returned holds all 32 values
// (published<T>(buffer, l) is lane l's). One rendezvous suffices: a lane writes this buffer again
// two collectives later, past the next rendezvous, which every lane reaches only after reading this
// one's values.
template <typename T>
inline unsigned publish(const T& mine) {
  const unsigned buffer = current->collectives[thread_index.x]++ & 1u;
  slot<T>(buffer, lane()) = mine;
  warp_sync();
  return buffer;
}
template <typename T>
inline const T& published(unsigned buffer, int l) { return slot<T>(buffer, l); }
// Every lane publishes `mine`; returns all 32 values.
template <typename T>
inline std::array<T, 32> gather(const T& mine) {
  const unsigned buffer = publish(mine);
  std::array<T, 32> all;
  for (int l = 0; l < 32; l++) all[size_t(l)] = published<T>(buffer, l);
  return all;
}

// Between two blocks of a grid: the block's shared memory and votes as a new block finds them.
inline void reset_block() {
  std::fill(current->shared.begin(), current->shared.end(), uint8_t(0xCD));
  for (auto& v : current->votes) v = 0;
}

// When cp.async copies land: at the copy (S3_EMU_COPIES=at-issue, the default: the earliest a
// device may write them, so a buffer refilled while others still read it shows) or at the issuing
// thread's cp.async.wait_group that covers them (at-wait: the latest, so a thread reading what
// another copied before that thread's wait and a barrier shows, as does a missing wait). Anything
// else is refused.
inline bool copies_at_wait() {
  static const bool at_wait = [] {
    const char* text = std::getenv("S3_EMU_COPIES");
    const std::string value = text != nullptr ? text : "at-issue";
    if (value != "at-issue" && value != "at-wait") {
      std::fprintf(stderr, "emulation: S3_EMU_COPIES is '%s'; expected at-issue or at-wait\n", value.c_str());
      std::exit(2);
    }
    return value == "at-wait";
  }();
  return at_wait;
}

inline Fiber& running_fiber() { return launch->fibers[size_t(launch->running)]; }
inline void land(const PendingCopy& copy) {
  if (copy.from != nullptr) {
    std::memcpy(copy.to, copy.from, size_t(copy.bytes));
  } else {
    std::memset(copy.to, 0, size_t(copy.bytes));
  }
}
inline void copy_async(void* to, const void* from, int bytes) {
  const PendingCopy copy{to, from, bytes};
  if (copies_at_wait()) {
    running_fiber().open_group.push_back(copy);
  } else {
    land(copy);
  }
}
inline void commit_copies() {
  if (!copies_at_wait()) return;
  Fiber& me = running_fiber();
  me.committed.push_back(std::move(me.open_group));
  me.open_group.clear();
}
// cp.async.wait_group: every committed group of the running thread but the `pending` newest lands.
inline void wait_copies(int pending) {
  Fiber& me = running_fiber();
  while (int(me.committed.size()) > pending) {
    for (const PendingCopy& copy : me.committed.front()) land(copy);
    me.committed.erase(me.committed.begin());
  }
}
// At the end of the thread's block: whatever it never waited for lands before the block's shared
// memory is reset.
inline void land_every_copy() {
  Fiber& me = running_fiber();
  wait_copies(0);
  for (const PendingCopy& copy : me.open_group) land(copy);
  me.open_group.clear();
}

// A fiber's whole life: kernel() for its thread of every block of the grid, in order, the block's
// shared memory and votes reset between blocks by the last thread to finish one (the others resume
// after it, so none starts the next block before the reset).
inline void fiber_main() {
  const int t = launch->running;
  thread_index = Dim3{unsigned(t), 0, 0};
  Block& block = *launch->block;
  for (const unsigned linear : launch->block_order) {
    block_index = Dim3{linear % grid_dim.x, linear / grid_dim.x % grid_dim.y, linear / grid_dim.x / grid_dim.y};
    sync_count = 0;
    (*launch->kernel)();
    land_every_copy();
    block.all.arrive_and_wait(reset_block);
  }
  Fiber& me = launch->fibers[size_t(t)];
  me.done = true;
  switch_context(me.context, launch->scheduler);  // never resumed
  std::abort();
}

// Fiber stacks, kept for the next launch (256 KiB each: kernels' local arrays live there).
constexpr size_t kFiberStack = size_t(256) << 10;
inline std::vector<std::unique_ptr<uint8_t[]>>& fiber_stacks() {
  static std::vector<std::unique_ptr<uint8_t[]>> stacks;
  return stacks;
}

// Runs kernel() for every thread of every block of the grid (one-dimensional blocks): one fiber per
// CUDA thread, resumed in turn whenever the barrier it waits at opens, until every fiber is done.
inline void run_grid(dim3 grid, dim3 block_shape, size_t shared_bytes, const std::function<void()>& kernel) {
  static std::mutex device;
  const std::lock_guard<std::mutex> one_launch_at_a_time(device);
  const int threads = int(block_shape.x * block_shape.y * block_shape.z);
  Block block(threads, shared_bytes);
  Launch run;
  run.fibers.resize(size_t(threads));
  run.kernel = &kernel;
  run.block = &block;
  current = &block;
  launch = &run;
  block_dim = Dim3{unsigned(threads), 1, 1};
  grid_dim = Dim3{grid.x, grid.y, grid.z};
  auto& stacks = fiber_stacks();
  while (stacks.size() < size_t(threads)) stacks.push_back(std::unique_ptr<uint8_t[]>(new uint8_t[kFiberStack]));
  for (int t = 0; t < threads; t++) {
    make_context(run.fibers[size_t(t)].context, stacks[size_t(t)].get(), kFiberStack, fiber_main);
  }
  Schedule& order = schedule();
  order.arrange(run.block_order, size_t(grid.x) * grid.y * grid.z);
  std::vector<int> turns;
  order.arrange(turns, size_t(threads));
  for (;;) {
    int remaining = 0;
    bool resumed = false;
    if (!order.greedy()) order.arrange(turns, size_t(threads));
    for (const int t : turns) {
      Fiber& f = run.fibers[size_t(t)];
      if (f.done) continue;
      remaining++;
      if (f.waiting != nullptr && f.waiting->generation == f.waiting_generation) continue;
      f.waiting = nullptr;
      run.running = t;
      switch_context(run.scheduler, f.context);
      resumed = true;
      if (order.greedy()) break;  // back to the first thread that can run
    }
    if (remaining == 0) break;
    if (!resumed) {
      std::fprintf(stderr, "emulation: every remaining thread of a block waits at a barrier the others never reach\n");
      std::abort();
    }
  }
  current = nullptr;
  launch = nullptr;
}

// `kernel<<<grid, block, shared, stream>>>(args...)` as emulate.py translates it: the arguments are
// evaluated and copied here, as a launch copies a kernel's parameters, and the grid runs on `stream`
// (cuda_emulation::enqueue): now, or when a graph captured from the stream is launched, with the
// values the arguments had at capture. `call` applies the kernel to them (a generic lambda, so a
// template kernel's arguments are deduced as in the launch). A launch a capture refuses sets the
// error cudaGetLastError returns.
template <typename Call, typename... Args>
void launch_kernel(dim3 grid, dim3 block_shape, size_t shared_bytes, cudaStream_t stream, Call call, const Args&... args) {
  const cudaError_t status = cuda_emulation::enqueue(stream, [=, parameters = std::make_tuple(args...)] {
    const std::function<void()> kernel = [&] { std::apply(call, parameters); };
    run_grid(grid, block_shape, shared_bytes, kernel);
  });
  if (status != cudaSuccess) cuda_emulation::last_error = status;
}

}  // namespace emu

#define threadIdx emu::thread_index
#define blockIdx emu::block_index
#define blockDim emu::block_dim
#define gridDim emu::grid_dim

inline void __syncthreads() { emu::current->all.arrive_and_wait(); }
inline bool __syncthreads_or(bool predicate) {
  const int k = emu::sync_count++ % 3;
  if (predicate) emu::current->votes[k] = 1;
  emu::current->all.arrive_and_wait();
  const bool result = emu::current->votes[k] != 0;
  if (threadIdx.x == 0) emu::current->votes[(k + 2) % 3] = 0;  // the previous vote: read by all before this barrier
  return result;
}
inline bool __any_sync(unsigned, bool predicate) {
  const auto all = emu::gather(int(predicate));
  for (int v : all) if (v) return true;
  return false;
}
inline bool __all_sync(unsigned, bool predicate) {
  const auto all = emu::gather(int(predicate));
  for (int v : all) if (!v) return false;
  return true;
}
inline unsigned __ballot_sync(unsigned, bool predicate) {
  const auto all = emu::gather(int(predicate));
  unsigned bits = 0;
  for (size_t i = 0; i < all.size(); i++) bits |= all[i] ? 1u << i : 0u;
  return bits;
}
inline void __syncwarp(unsigned = 0xFFFFFFFFu) { emu::warp_sync(); }
inline int __reduce_min_sync(unsigned, int value) {
  const auto all = emu::gather(value);
  return *std::min_element(all.begin(), all.end());
}

template <typename T>
inline T __shfl_xor_sync(unsigned, T value, int mask) { return emu::published<T>(emu::publish(value), emu::lane() ^ mask); }
template <typename T>
inline T __shfl_sync(unsigned, T value, int source) { return emu::published<T>(emu::publish(value), source & 31); }
// Lanes past the warp's end (down) or before its start (up) keep their own value, as on the device.
template <typename T>
inline T __shfl_down_sync(unsigned, T value, unsigned delta) {
  const unsigned buffer = emu::publish(value);
  const int source = emu::lane() + int(delta);
  return source < 32 ? emu::published<T>(buffer, source) : value;
}
template <typename T>
inline T __shfl_up_sync(unsigned, T value, unsigned delta) {
  const unsigned buffer = emu::publish(value);
  const int source = emu::lane() - int(delta);
  return source >= 0 ? emu::published<T>(buffer, source) : value;
}

namespace s3::cuda {
namespace mma {

inline float half_of(uint32_t pair, int which) { return s3::bf16_to_f32(uint16_t(which ? pair >> 16 : pair & 0xFFFFu)); }

// d += a·b, m16n8k16: A(r, k) is in lane 4·(r mod 8) + (k mod 8)/2, register (r ≥ 8) + 2·(k ≥ 8),
// half k mod 2 (low half: even k); B(k, n) in lane 4·n + (k mod 8)/2, register b0 (k < 8) or b1,
// half k mod 2; D(r, n) in lane 4·(r mod 8) + n/2, element 2·(r ≥ 8) + n mod 2.
struct MmaOperands { uint32_t a[4], b[2]; };
inline void mma_bf16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  MmaOperands mine;
  std::memcpy(mine.a, a, sizeof mine.a);
  mine.b[0] = b0, mine.b[1] = b1;
  const unsigned buffer = emu::publish(mine);
  const int group = emu::lane() >> 2, quad = emu::lane() & 3;
  // This lane's rows group and group + 8 of A, and columns 2·quad and 2·quad + 1 of B, widened once.
  float a_rows[2][16], b_columns[2][16];
  for (int k = 0; k < 16; k++) {
    for (int h = 0; h < 2; h++) {
      a_rows[h][k] = half_of(emu::published<MmaOperands>(buffer, 4 * group + (k % 8) / 2).a[h + (k >= 8 ? 2 : 0)], k % 2);
      b_columns[h][k] = half_of(emu::published<MmaOperands>(buffer, 4 * (2 * quad + h) + (k % 8) / 2).b[k >= 8 ? 1 : 0], k % 2);
    }
  }
  for (int e = 0; e < 4; e++) {  // D(group + 8·(e ≥ 2), 2·quad + e mod 2)
    double sum = d[e];
    for (int k = 0; k < 16; k++) sum += double(a_rows[e >= 2][k]) * double(b_columns[e & 1][k]);
    d[e] = float(sum);
  }
}

// ldmatrix .x4: lanes 8j .. 8j + 7 give the row addresses of matrix j; lane 4·group + quad gets,
// in register j, row group's b16 elements 2·quad and 2·quad + 1 (.trans: column group's elements of
// rows 2·quad and 2·quad + 1).
inline uint16_t b16_at(const void* row, int column) {
  uint16_t v;
  std::memcpy(&v, static_cast<const uint8_t*>(row) + 2 * column, 2);
  return v;
}
inline void load_matrices(uint32_t (&r)[4], const void* row) {
  const unsigned rows = emu::publish(row);
  const int group = emu::lane() >> 2, quad = emu::lane() & 3;
  for (int j = 0; j < 4; j++) {
    const void* mine = emu::published<const void*>(rows, 8 * j + group);
    r[j] = uint32_t(b16_at(mine, 2 * quad)) | (uint32_t(b16_at(mine, 2 * quad + 1)) << 16);
  }
}
inline void load_matrices_transposed(uint32_t (&r)[4], const void* row) {
  const unsigned rows = emu::publish(row);
  const int group = emu::lane() >> 2, quad = emu::lane() & 3;
  for (int j = 0; j < 4; j++) {
    r[j] = uint32_t(b16_at(emu::published<const void*>(rows, 8 * j + 2 * quad), group)) |
           (uint32_t(b16_at(emu::published<const void*>(rows, 8 * j + 2 * quad + 1), group)) << 16);
  }
}

}  // namespace mma

// cp.async (attention_tiles.cuh): copies land as emu::copies_at_wait() says.
namespace attention_tiles {
inline void copy16_async(void* shared, const void* global) { emu::copy_async(shared, global, 16); }
inline void copy4_async(void* shared, const void* global) { emu::copy_async(shared, global, 4); }
inline void zero16_async(void* shared, const void*) { emu::copy_async(shared, nullptr, 16); }
inline void commit_async() { emu::commit_copies(); }
template <int kPending>
inline void wait_async() { emu::wait_copies(kPending); }
}  // namespace attention_tiles
}  // namespace s3::cuda
