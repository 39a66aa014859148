// scheduler.cpp: batch selection and preemption; see scheduler.h.
#include "engine/scheduler.h"

#include <algorithm>
#include <stdexcept>

namespace s3::engine {

Scheduler::Scheduler(BlockManager& blocks, SchedulerLimits limits, const PrefixCache* prefix_cache)
    : blocks_(blocks), limits_(limits), prefix_cache_(prefix_cache) {
  if (limits.max_sequences <= 0 || limits.max_batch_tokens <= 0) {
    throw std::invalid_argument("Scheduler: max_sequences and max_batch_tokens must be positive");
  }
}

void Scheduler::enqueue(Sequence* sequence) {
  idle_.remove(sequence);
  waiting_.push_back(sequence);
}

void Scheduler::finish(Sequence* sequence) {
  running_.erase(std::remove(running_.begin(), running_.end(), sequence), running_.end());
  waiting_.erase(std::remove(waiting_.begin(), waiting_.end(), sequence), waiting_.end());
  if (!sequence->block_table.empty()) idle_.push_back(sequence);
}

void Scheduler::drop(Sequence* sequence) {
  running_.erase(std::remove(running_.begin(), running_.end(), sequence), running_.end());
  waiting_.erase(std::remove(waiting_.begin(), waiting_.end(), sequence), waiting_.end());
  idle_.remove(sequence);
  uncache(sequence);
}

void Scheduler::uncache(Sequence* sequence) {
  blocks_.free_all(sequence->block_table);
  sequence->num_cached = 0;
  sequence->block_keys.clear();
  sequence->computed_version = -1;
}

void Scheduler::attach_cached_prefix(Sequence* s, int64_t version) {
  if (prefix_cache_ == nullptr || s->num_cached != 0 || !s->block_table.empty()) return;
  const int64_t bs = blocks_.block_size();
  // Whole blocks only, and never the last token: its logits must be computed to sample.
  for (int64_t i = 0; (i + 1) * bs <= int64_t(s->tokens.size()) - 1; i++) {
    const int32_t* tokens = s->tokens.data() + i * bs;
    const uint64_t parent = i > 0 ? s->block_keys[size_t(i - 1)] : 0;
    const uint64_t key = prefix_cache_->key(parent, version, tokens);
    const int32_t block = prefix_cache_->find(key, parent, version, tokens);
    if (block < 0) break;
    blocks_.share(s->block_table, block);
    s->block_keys.push_back(key);
    s->num_cached += bs;
    s->computed_version = version;
    prefix_hit_tokens_ += bs;
  }
}

bool Scheduler::evict_one(const Sequence* keep, bool allow_running) {
  if (!idle_.empty()) {
    uncache(idle_.front());
    idle_.pop_front();
    return true;
  }
  for (auto it = waiting_.rbegin(); it != waiting_.rend(); ++it) {
    if (*it != keep && !(*it)->block_table.empty()) {
      uncache(*it);
      preemptions_++;
      return true;
    }
  }
  if (allow_running && !running_.empty() && running_.back() != keep) {
    Sequence* victim = running_.back();
    running_.pop_back();
    uncache(victim);
    waiting_.push_front(victim);
    preemptions_++;
    return true;
  }
  return false;
}

std::vector<ScheduledChunk> Scheduler::schedule(int64_t version) {
  std::vector<ScheduledChunk> batch;
  int64_t budget = limits_.max_batch_tokens;
  auto chunk_of = [&](Sequence* s) {
    const int64_t pending = int64_t(s->tokens.size()) - s->num_cached;
    const int64_t length = std::min(pending, budget);
    return ScheduledChunk{s, s->num_cached, length, s->num_cached + length == int64_t(s->tokens.size())};
  };

  for (size_t i = 0; i < running_.size() && budget > 0;) {
    Sequence* s = running_[i];
    const ScheduledChunk chunk = chunk_of(s);
    bool preempted_self = false;
    while (!blocks_.grow(s->block_table, chunk.start + chunk.length)) {
      if (evict_one(s, true)) continue;
      // Only this sequence is left to give way: everything before it is already in the batch.
      running_.erase(running_.begin() + std::ptrdiff_t(i));
      uncache(s);
      waiting_.push_front(s);
      preemptions_++;
      preempted_self = true;
      break;
    }
    if (preempted_self) break;
    batch.push_back(chunk);
    budget -= chunk.length;
    i++;
  }

  while (!waiting_.empty() && int64_t(running_.size()) < limits_.max_sequences && budget > 0) {
    Sequence* s = waiting_.front();
    const bool fresh = s->num_cached == 0 && s->block_table.empty();
    attach_cached_prefix(s, version);
    const ScheduledChunk chunk = chunk_of(s);
    bool fits = blocks_.grow(s->block_table, chunk.start + chunk.length);
    while (!fits && evict_one(s, false)) fits = blocks_.grow(s->block_table, chunk.start + chunk.length);
    if (!fits) {
      // Not admitted: let go of the attached blocks too, so that what it later computes on never
      // depends on when it was first considered (the weights may change meanwhile).
      if (fresh) uncache(s);
      break;
    }
    waiting_.pop_front();
    running_.push_back(s);
    batch.push_back(chunk);
    budget -= chunk.length;
  }
  return batch;
}

}  // namespace s3::engine
