// test_engine_scheduler.cpp: continuous batching under its three limits (slots, tokens per
// batch, KV blocks), prefill chunks mixed with decode steps, preemption by recomputation (idle
// sequences first, then the latest admitted), and thousands of sequences through a cache that
// holds a handful without deadlock. The model is simulated: a step advances num_cached and a
// sampled chunk appends one token.
#include <memory>
#include <random>
#include <vector>

#include "engine/block_manager.h"
#include "engine/scheduler.h"
#include "tests/test_framework.h"

using namespace s3::engine;

namespace {

struct Fixture {
  std::vector<std::unique_ptr<Sequence>> sequences;
  std::vector<std::unique_ptr<Request>> requests;

  Sequence* add(int64_t prompt) {
    auto s = std::make_unique<Sequence>();
    s->id = sequences.size();
    s->tokens.assign(size_t(prompt), 7);
    auto r = std::make_unique<Request>();
    r->sequence = s.get();
    s->request = r.get();
    sequences.push_back(std::move(s));
    requests.push_back(std::move(r));
    return sequences.back().get();
  }
};

// Runs one simulated step; returns the batch it ran.
std::vector<ScheduledChunk> step(Scheduler& scheduler) {
  std::vector<ScheduledChunk> batch = scheduler.schedule();
  for (const ScheduledChunk& c : batch) {
    CHECK_EQ(c.start, c.sequence->num_cached);
    CHECK(int64_t(c.sequence->block_table.size()) * 16 >= c.start + c.length);
    c.sequence->num_cached += c.length;
    if (c.sample) c.sequence->tokens.push_back(1);
  }
  return batch;
}

int64_t total_tokens(const std::vector<ScheduledChunk>& batch) {
  int64_t t = 0;
  for (const ScheduledChunk& c : batch) t += c.length;
  return t;
}

}  // namespace

TEST(engine_scheduler_respects_slot_and_token_limits) {
  BlockManager blocks(64, 16);
  Scheduler scheduler(blocks, {2, 24});
  Fixture f;
  for (int i = 0; i < 5; i++) scheduler.enqueue(f.add(10));
  std::vector<ScheduledChunk> batch = step(scheduler);
  // Two slots; the second sequence gets what is left of the 24-token budget.
  CHECK_EQ(batch.size(), size_t(2));
  CHECK_EQ(batch[0].length, 10);
  CHECK(batch[0].sample);
  CHECK_EQ(batch[1].length, 10);
  CHECK_EQ(scheduler.num_running(), 2);
  CHECK_EQ(scheduler.num_waiting(), 3);
  batch = step(scheduler);  // two decode steps
  CHECK_EQ(batch.size(), size_t(2));
  CHECK_EQ(total_tokens(batch), 2);
}

TEST(engine_scheduler_chunks_long_prefills_and_mixes_them_with_decodes) {
  BlockManager blocks(64, 16);
  Scheduler scheduler(blocks, {8, 32});
  Fixture f;
  Sequence* a = f.add(5);
  scheduler.enqueue(a);
  step(scheduler);  // a prefilled, now decoding
  Sequence* b = f.add(100);
  scheduler.enqueue(b);
  std::vector<ScheduledChunk> batch = step(scheduler);
  CHECK_EQ(batch.size(), size_t(2));
  CHECK(batch[0].sequence == a && batch[0].length == 1 && batch[0].sample);
  CHECK(batch[1].sequence == b && batch[1].length == 31 && !batch[1].sample);
  int64_t steps = 1;
  while (b->num_cached < 100) {
    batch = step(scheduler);
    steps++;
    CHECK(total_tokens(batch) <= 32);
  }
  CHECK_EQ(steps, 4);  // 31 + 31 + 31 + 7
  CHECK(batch.back().sample);
}

TEST(engine_scheduler_evicts_idle_sequences_before_running_ones) {
  BlockManager blocks(4, 16);
  Scheduler scheduler(blocks, {8, 512});
  Fixture f;
  Sequence* idle = f.add(40);  // 3 blocks
  scheduler.enqueue(idle);
  step(scheduler);
  idle->request = nullptr;
  scheduler.finish(idle);
  CHECK_EQ(scheduler.num_idle(), 1);
  CHECK_EQ(blocks.num_used(), 3);
  Sequence* fresh = f.add(30);  // 2 blocks: the idle one must give way
  scheduler.enqueue(fresh);
  std::vector<ScheduledChunk> batch = step(scheduler);
  CHECK_EQ(batch.size(), size_t(1));
  CHECK_EQ(idle->num_cached, 0);
  CHECK(idle->block_table.empty());
  CHECK_EQ(scheduler.num_idle(), 0);
  CHECK_EQ(scheduler.num_preemptions(), 0);  // dropping an idle cache is not a preemption
}

TEST(engine_scheduler_preempts_the_latest_admitted_when_blocks_run_out) {
  BlockManager blocks(4, 16);
  Scheduler scheduler(blocks, {8, 512});
  Fixture f;
  Sequence* first = f.add(31);   // 2 blocks, the 32nd position needs none more
  Sequence* second = f.add(32);  // 2 blocks, full
  scheduler.enqueue(first);
  scheduler.enqueue(second);
  step(scheduler);
  CHECK_EQ(blocks.num_free(), 0);
  // first's next step (its 32nd position) fits its 2 blocks; second's 33rd position needs a third
  // block and nobody later than second can give one: it preempts itself.
  std::vector<ScheduledChunk> batch = step(scheduler);
  CHECK_EQ(batch.size(), size_t(1));
  CHECK(batch[0].sequence == first);
  CHECK_EQ(scheduler.num_preemptions(), 1);
  CHECK_EQ(second->num_cached, 0);
  CHECK_EQ(scheduler.num_waiting(), 1);
  // first's 33rd position needs a third block; the free list has second's two.
  batch = step(scheduler);
  CHECK(batch[0].sequence == first);
  CHECK_EQ(first->block_table.size(), size_t(3));
  // second (33 tokens, 3 blocks) waits until first is done, then recomputes from scratch.
  CHECK_EQ(batch.size(), size_t(1));
  first->request = nullptr;
  scheduler.finish(first);
  batch = step(scheduler);
  CHECK_EQ(batch.size(), size_t(1));
  CHECK(batch[0].sequence == second && batch[0].start == 0 && batch[0].length == 33);
}

TEST(engine_scheduler_preempts_a_later_running_sequence_for_an_earlier_one) {
  BlockManager blocks(3, 16);
  Scheduler scheduler(blocks, {8, 512});
  Fixture f;
  Sequence* first = f.add(16);
  Sequence* second = f.add(20);
  scheduler.enqueue(first);
  scheduler.enqueue(second);
  step(scheduler);  // first: 1 block, second: 2 blocks
  // first's position 16 needs a second block: second is preempted for it.
  std::vector<ScheduledChunk> batch = step(scheduler);
  CHECK(batch[0].sequence == first && batch[0].length == 1);
  CHECK_EQ(second->num_cached, 0);
  CHECK_EQ(scheduler.num_preemptions(), 1);
}

TEST(engine_scheduler_drains_thousands_of_sequences_through_a_small_cache) {
  BlockManager blocks(24, 16);  // holds ~5 sequences of this size at once
  Scheduler scheduler(blocks, {16, 96});
  Fixture f;
  std::mt19937 rng(5);
  std::vector<int64_t> remaining;
  for (int i = 0; i < 2000; i++) {
    scheduler.enqueue(f.add(1 + int64_t(rng() % 60)));
    remaining.push_back(1 + int64_t(rng() % 20));
  }
  int64_t finished = 0, steps = 0;
  while (finished < 2000) {
    CHECK(steps++ < 200000);
    std::vector<ScheduledChunk> batch = step(scheduler);
    CHECK(!batch.empty());
    CHECK(int64_t(batch.size()) <= 16 && total_tokens(batch) <= 96);
    for (const ScheduledChunk& c : batch) {
      if (!c.sample) continue;
      if (--remaining[size_t(c.sequence->id)] == 0) {
        c.sequence->request = nullptr;
        scheduler.drop(c.sequence);
        finished++;
      }
    }
  }
  CHECK_EQ(blocks.num_free(), 24);
  CHECK(scheduler.num_preemptions() > 0);
}

TEST(engine_scheduler_rejects_zero_limits) {
  BlockManager blocks(4, 16);
  CHECK_THROWS(std::invalid_argument, Scheduler(blocks, {0, 16}));
  CHECK_THROWS(std::invalid_argument, Scheduler(blocks, {4, 0}));
}
