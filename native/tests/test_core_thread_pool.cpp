// test_core_thread_pool.cpp: parallel_for covers every index exactly once, partitions the same way
// every time, passes worker exceptions to the caller, and runs nested calls serially; parallel_claim
// runs every index once, never on two threads with the same index at a time, and leaves a slow
// thread's share to the others.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/thread_pool.h"
#include "tests/test_framework.h"

using namespace s3;

namespace {

struct Chunk {
  size_t begin = 0, end = 0, thread_index = 0;
};

std::vector<Chunk> record_partition(ThreadPool& pool, size_t n) {
  std::vector<Chunk> chunks(pool.num_threads());
  std::atomic<size_t> calls{0};
  pool.parallel_for(n, [&](size_t begin, size_t end, size_t thread_index) {
    chunks[thread_index] = {begin, end, thread_index};
    calls++;
  });
  chunks.resize(calls.load());
  return chunks;
}

}  // namespace

TEST(thread_pool_covers_every_index_once) {
  for (size_t threads : {1, 2, 3, 7}) {
    ThreadPool pool(threads);
    CHECK_EQ(pool.num_threads(), threads);
    for (size_t n : {0, 1, 2, 5, 7, 64, 1000, 4099}) {
      std::vector<std::atomic<int>> visits(n);
      pool.parallel_for(n, [&](size_t begin, size_t end, size_t thread_index) {
        CHECK(thread_index < threads);
        CHECK(begin < end);
        for (size_t i = begin; i < end; i++) visits[i]++;
      });
      for (size_t i = 0; i < n; i++) CHECK_EQ(visits[i].load(), 1);
    }
  }
}

TEST(thread_pool_partition_is_static) {
  ThreadPool pool(4);
  for (size_t n : {1, 3, 4, 10, 1001}) {
    std::vector<Chunk> first = record_partition(pool, n);
    CHECK_EQ(first.size(), std::min<size_t>(n, 4));
    size_t expected_begin = 0;
    for (size_t t = 0; t < first.size(); t++) {
      CHECK_EQ(first[t].thread_index, t);
      CHECK_EQ(first[t].begin, expected_begin);  // contiguous, in thread order
      size_t length = first[t].end - first[t].begin;
      CHECK_EQ(length, n / first.size() + (t < n % first.size() ? 1 : 0));
      expected_begin = first[t].end;
    }
    CHECK_EQ(expected_begin, n);
    for (int repeat = 0; repeat < 20; repeat++) {
      std::vector<Chunk> again = record_partition(pool, n);
      for (size_t t = 0; t < first.size(); t++) {
        CHECK_EQ(again[t].begin, first[t].begin);
        CHECK_EQ(again[t].end, first[t].end);
      }
    }
  }
}

TEST(thread_pool_runs_on_calling_thread) {
  ThreadPool pool(3);
  std::thread::id caller = std::this_thread::get_id();
  std::vector<std::thread::id> ids(3);
  pool.parallel_for(3, [&](size_t, size_t, size_t thread_index) { ids[thread_index] = std::this_thread::get_id(); });
  CHECK(ids[0] == caller);
  CHECK(ids[1] != caller && ids[2] != caller && ids[1] != ids[2]);
}

TEST(thread_pool_propagates_exceptions) {
  ThreadPool pool(4);
  for (size_t throwing : {0, 1, 3}) {
    std::atomic<int> finished{0};
    bool caught = false;
    try {
      pool.parallel_for(4, [&](size_t begin, size_t, size_t) {
        if (begin == throwing) throw std::runtime_error("chunk " + std::to_string(begin));
        finished++;
      });
    } catch (const std::runtime_error& error) {
      caught = true;
      CHECK_EQ(std::string(error.what()), "chunk " + std::to_string(throwing));
    }
    CHECK(caught);
    CHECK_EQ(finished.load(), 3);  // the other chunks still ran to completion
  }
  // The lowest-numbered failing chunk wins, whatever finished first.
  CHECK_THROWS(std::logic_error, pool.parallel_for(4, [](size_t begin, size_t, size_t) {
    if (begin >= 1) throw std::runtime_error("later");
    throw std::logic_error("first");
  }));
  // The pool still works afterwards.
  std::atomic<size_t> total{0};
  pool.parallel_for(100, [&](size_t begin, size_t end, size_t) { total += end - begin; });
  CHECK_EQ(total.load(), size_t(100));
}

TEST(thread_pool_nested_calls_run_serially) {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> visits(3 * 50);
  pool.parallel_for(3, [&](size_t outer_begin, size_t outer_end, size_t outer_thread) {
    for (size_t row = outer_begin; row < outer_end; row++) {
      size_t inner_calls = 0;
      pool.parallel_for(50, [&](size_t begin, size_t end, size_t thread_index) {
        inner_calls++;
        CHECK_EQ(begin, size_t(0));
        CHECK_EQ(end, size_t(50));
        CHECK_EQ(thread_index, outer_thread);  // per-thread scratch stays private
        for (size_t i = begin; i < end; i++) visits[row * 50 + i]++;
      });
      CHECK_EQ(inner_calls, size_t(1));
    }
  });
  for (std::atomic<int>& count : visits) CHECK_EQ(count.load(), 1);
}

TEST(thread_pool_claim_runs_every_index_once_on_distinct_thread_slots) {
  for (size_t threads : {1, 2, 3, 7}) {
    ThreadPool pool(threads);
    for (size_t n : {0, 1, 2, 5, 64, 1000}) {
      std::vector<std::atomic<int>> visits(n);
      std::vector<std::atomic<int>> running(threads);
      pool.parallel_claim(n, [&](size_t i, size_t thread_index) {
        CHECK(thread_index < threads);
        CHECK_EQ(running[thread_index]++, 0);  // no two indices at once under one thread slot
        visits[i]++;
        running[thread_index]--;
      });
      for (std::atomic<int>& count : visits) CHECK_EQ(count.load(), 1);
    }
  }
}

TEST(thread_pool_claim_leaves_a_slow_threads_share_to_the_others) {
  // The calling thread (slot 0) takes 200 ms per index, the worker none: under a static split it
  // would run half of the 20 indices; claiming, the worker takes nearly all of them meanwhile.
  ThreadPool pool(2);
  std::vector<std::atomic<int>> per_slot(2);
  pool.parallel_claim(20, [&](size_t, size_t thread_index) {
    per_slot[thread_index]++;
    if (thread_index == 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  });
  CHECK_EQ(per_slot[0].load() + per_slot[1].load(), 20);
  CHECK(per_slot[0].load() < 10);
}

TEST(thread_pool_claim_propagates_exceptions_and_nests_serially) {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> started(50);
  bool caught = false;
  try {
    pool.parallel_claim(50, [&](size_t i, size_t) {
      started[i]++;
      if (i == 7) throw std::runtime_error("index 7");
    });
  } catch (const std::runtime_error& error) {
    caught = true;
    CHECK_EQ(std::string(error.what()), "index 7");
  }
  CHECK(caught);
  for (std::atomic<int>& count : started) CHECK_EQ(count.load(), 1);  // the other threads claimed the rest
  // Inside a parallel_for body every index runs on the calling thread, in order.
  pool.parallel_for(3, [&](size_t begin, size_t end, size_t outer_thread) {
    for (size_t row = begin; row < end; row++) {
      std::vector<size_t> order;
      pool.parallel_claim(10, [&](size_t i, size_t thread_index) {
        CHECK_EQ(thread_index, outer_thread);
        order.push_back(i);
      });
      CHECK_EQ(order.size(), size_t(10));
      for (size_t i = 0; i < order.size(); i++) CHECK_EQ(order[i], i);
    }
  });
}

TEST(thread_pool_concurrent_callers_take_turns) {
  ThreadPool pool(2);
  std::atomic<long> total{0};
  std::vector<std::thread> callers;
  for (int caller = 0; caller < 4; caller++) {
    callers.emplace_back([&] {
      for (int round = 0; round < 200; round++) {
        pool.parallel_for(10, [&](size_t begin, size_t end, size_t) { total += long(end - begin); });
      }
    });
  }
  for (std::thread& caller : callers) caller.join();
  CHECK_EQ(total.load(), 4L * 200 * 10);
}

TEST(thread_pool_default_size_from_environment) {
  const char* saved = std::getenv("S3_NUM_THREADS");
  std::string saved_value = saved ? saved : "";
  setenv("S3_NUM_THREADS", "3", 1);
  CHECK_EQ(default_thread_count(), size_t(3));
  for (const char* bad : {"0", "-1", "abc", "2x", " 4", "100000"}) {
    setenv("S3_NUM_THREADS", bad, 1);
    CHECK_THROWS(std::invalid_argument, default_thread_count());
  }
  unsetenv("S3_NUM_THREADS");
  CHECK(default_thread_count() >= 1);
  if (saved) setenv("S3_NUM_THREADS", saved_value.c_str(), 1);
  CHECK(default_thread_pool().num_threads() >= 1);
  CHECK(&default_thread_pool() == &default_thread_pool());
}
