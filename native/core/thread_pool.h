// thread_pool.h: a fixed pool of worker threads with two primitives over [0, n), and the
// process-wide default pool the CPU kernels share. parallel_for splits the work by a static
// partition (never by timing), so a kernel that reduces per chunk gives bit-identical results every
// run; parallel_claim hands indices to whichever thread is free, for work whose results do not
// depend on which thread computes an index (so a slower core, or one shared with another process,
// takes fewer of them).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace s3 {

// fn(begin, end, thread_index) processes indices [begin, end); thread_index < num_threads() and
// is unique among the chunks running at the same time, so it may index per-thread scratch.
using ParallelForBody = std::function<void(size_t begin, size_t end, size_t thread_index)>;
// fn(index, thread_index) processes one index; thread_index as above.
using ParallelClaimBody = std::function<void(size_t index, size_t thread_index)>;

class ThreadPool {
 public:
  // num_threads counts the calling thread, so a pool of 1 starts no workers and runs inline.
  explicit ThreadPool(size_t num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  size_t num_threads() const { return num_threads_; }

  // Splits [0, n) into chunks = min(n, num_threads) contiguous ranges in index order, each of
  // n / chunks indices, the first n % chunks of them one more; chunk t runs with thread_index t,
  // chunk 0 on the calling thread.
  // Returns when all chunks are done. If any chunk throws, the exception of the lowest-numbered
  // throwing chunk is rethrown here (after every chunk has finished).
  // A call made from inside a parallel_for body (of any pool) runs fn(0, n, thread_index of the
  // enclosing chunk) serially on the calling thread, so nesting cannot deadlock or oversubscribe.
  // Calls from different outside threads are safe; they take turns.
  void parallel_for(size_t n, const ParallelForBody& fn);

  // Runs fn(i, thread_index) once for every i in [0, n): the threads (the caller's included, at
  // most n of them) claim indices one at a time in increasing order as each becomes free. Which
  // thread runs an index depends on timing, so fn's results must not depend on thread_index
  // beyond scratch it indexes. A thread whose fn throws claims no more; the others go on, and the
  // exception of the lowest-numbered throwing thread is rethrown at the end. Nested inside a
  // parallel_for or parallel_claim body, the calling thread runs every index in order.
  void parallel_claim(size_t n, const ParallelClaimBody& fn);

 private:
  void worker_loop(size_t thread_index);
  uint64_t wait_for_new_generation(uint64_t seen_generation);
  void wait_for_workers();
  void run_chunk(size_t chunk_index);

  size_t num_threads_;
  std::vector<std::thread> workers_;
  std::mutex submit_mutex_;  // one parallel_for at a time per pool

  // Workers and the caller spin briefly on these atomics before sleeping on the condition
  // variables, so back-to-back calls (one per layer op when decoding) avoid a futex round trip.
  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable work_done_;
  std::atomic<uint64_t> generation_{0};  // bumped per job; workers wake when it changes
  std::atomic<size_t> workers_pending_{0};  // workers not yet done with the current job
  std::atomic<bool> stopping_{false};

  // The current job; written before generation_ is bumped (release), read after it is seen.
  const ParallelForBody* job_fn_ = nullptr;
  size_t job_n_ = 0;
  size_t job_chunks_ = 0;
  std::vector<std::exception_ptr> job_errors_;  // one slot per chunk
};

// Threads for the default pool: S3_NUM_THREADS if set (a positive integer, else
// std::invalid_argument naming the variable), otherwise std::thread::hardware_concurrency().
size_t default_thread_count();

// The process-wide pool, created on first use with default_thread_count() threads.
ThreadPool& default_thread_pool();

}  // namespace s3
