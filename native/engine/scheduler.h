// scheduler.h: continuous batching (nano-vllm's scheduler). Each step it picks which sequences
// run and how many of their uncached tokens each processes, under three limits: sequence slots,
// tokens per batch and free KV blocks. Running sequences go first, in the order they were
// admitted; a sequence whose pending tokens do not fit the token budget gets a prefill chunk;
// waiting ones are admitted in arrival order while slots, budget and blocks remain. Decode steps
// and prefill chunks share one batch.
//
// When blocks run out the scheduler frees someone else's instead of failing (preemption by
// recomputation): first idle sequences (cached history of agents with no request, least recently
// used first), then waiting sequences from the back of the queue, then the most recently
// admitted running sequence, which goes back to the front of the queue with nothing cached.
// The oldest running sequence can therefore always proceed (the cache holds at least one
// sequence of the longest context), so thousands of waiting sequences cannot deadlock.
//
// With a prefix cache, a sequence admitted with nothing cached first takes the full blocks of its
// history that the cache holds for the current weights (leaving at least its last token to
// compute, whose logits give the next one), and only the rest is scheduled.
#pragma once

#include <cstdint>
#include <deque>
#include <list>
#include <vector>

#include "engine/block_manager.h"
#include "engine/prefix_cache.h"
#include "engine/sequence.h"

namespace s3::engine {

struct SchedulerLimits {
  int64_t max_sequences = 64;     // sequences in one batch (running slots)
  int64_t max_batch_tokens = 512; // new tokens in one batch
};

// One sequence's part of a batch: positions [start, start + length) of its tokens. `sample`
// when the chunk reaches the end of the history, so the last position's logits give the next token.
struct ScheduledChunk {
  Sequence* sequence = nullptr;
  int64_t start = 0;
  int64_t length = 0;
  bool sample = false;
};

class Scheduler {
 public:
  // limits must be positive (std::invalid_argument). prefix_cache may be null (no prefix caching).
  Scheduler(BlockManager& blocks, SchedulerLimits limits, const PrefixCache* prefix_cache = nullptr);

  // The sequence has a request: it joins the back of the queue (keeping whatever it has cached).
  void enqueue(Sequence* sequence);
  // Its request is over: it leaves the queue or the running set and stays cached, idle.
  void finish(Sequence* sequence);
  // The sequence goes away: removed from every list, its blocks freed.
  void drop(Sequence* sequence);

  // The next batch, to run with weights `version`; grows block tables (preempting as described
  // above). The caller runs it and then advances each chunk's sequence->num_cached by its length.
  // Empty when nothing waits.
  std::vector<ScheduledChunk> schedule(int64_t version = 0);

  int64_t num_running() const { return int64_t(running_.size()); }
  int64_t num_waiting() const { return int64_t(waiting_.size()); }
  int64_t num_idle() const { return int64_t(idle_.size()); }
  int64_t num_preemptions() const { return preemptions_; }
  int64_t prefix_hit_tokens() const { return prefix_hit_tokens_; }  // positions taken from the prefix cache
  const SchedulerLimits& limits() const { return limits_; }

 private:
  // Frees one other sequence's blocks: an idle one, else a waiting one from the back (never
  // `keep`), else (when allow_running) the last running one unless that is `keep`. False if none.
  bool evict_one(const Sequence* keep, bool allow_running);
  void uncache(Sequence* sequence);
  // Attaches the cached full blocks that start a sequence with nothing cached.
  void attach_cached_prefix(Sequence* sequence, int64_t version);

  BlockManager& blocks_;
  SchedulerLimits limits_;
  const PrefixCache* prefix_cache_;
  std::vector<Sequence*> running_;  // admission order
  std::deque<Sequence*> waiting_;   // arrival order; preempted sequences go to the front
  std::list<Sequence*> idle_;       // cached sequences without a request, least recently used first
  int64_t preemptions_ = 0;
  int64_t prefix_hit_tokens_ = 0;
};

}  // namespace s3::engine
