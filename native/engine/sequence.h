// sequence.h: what the engine keeps per agent. A Sequence is the agent's whole token history
// and the part of it whose keys and values sit in the KV cache; it lives until the agent is
// released, across many generation requests. A Request is one generation piece on a sequence.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace s3::engine {

enum class Finish { Stop, Length, Context, Cancelled, Error };

// What a generation request asks for (SPEC §3).
struct GenerateParams {
  int64_t max_new = 1;               // 1 .. kMaxPieceTokens
  std::vector<int32_t> stop_tokens;  // generation stops right after sampling one of these
  float temperature = 1.0f;          // 0 is greedy
  uint64_t seed = 0;                 // keys the Philox draws with the token index and draw index
  int64_t draws = 0;                 // K extra independent draws per position
};

constexpr int64_t kMaxPieceTokens = 1024;
constexpr int64_t kMaxExtraDraws = 64;

struct Request;

struct Sequence {
  uint64_t id = 0;
  std::vector<int32_t> tokens;       // the whole history: context and sampled tokens
  int64_t num_cached = 0;            // tokens [0, num_cached) have their keys and values in the cache
  std::vector<int32_t> block_table;  // cache blocks covering at least num_cached positions
  Request* request = nullptr;        // the generation in progress, if any
  bool released = false;             // the agent is done; freed by the scheduler thread
  // Automatic prefix caching (prefix_cache.h): the keys of the first full blocks, in order, and the
  // weights version that computed every cached position (-1 before any; kMixedVersions once two did).
  std::vector<uint64_t> block_keys;
  int64_t computed_version = -1;
};

constexpr int64_t kMixedVersions = -2;

struct Request {
  uint64_t id = 0;
  Sequence* sequence = nullptr;
  GenerateParams params;
  bool cancelled = false;
  // The piece so far.
  std::vector<int32_t> tokens;
  std::vector<float> logprobs;
  std::vector<int32_t> draw_tokens;  // K per generated token, position-major
  std::vector<float> draw_logprobs;
  int64_t policy_version = -1;       // weights that sampled the first token; -1 until then
};

}  // namespace s3::engine
