// test_cuda_attention.cpp: the CUDA attention kernels over the device's paged cache. The fast
// implementations (split-KV; tiled with its multi-row and single-token kernels; tiled-mma) against
// the double-precision reference kernel on the device and against the CPU's attention with f32
// products (attention_kernels_with_f32_products: without it, CPUs whose level multiplies a bf16
// cache in BF16 put the CPU 6e-6 away), for f32, bf16 and fp8 caches filled by the CPU's store; GQA
// groups of 1 to 8 and head_dim 16 to 256; contexts past 4,096 (where the split length doubles) and
// lengths around the 16-position cache blocks and 64-position tiles. Thresholds: NMSE ≤ 1e-7
// wherever the arithmetic is f32; ≤ 1e-4 where tiled-mma runs on tensor cores (bf16 and fp8 caches,
// head_dim ≤ 128: queries and weights rounded to bf16, relative error 2^-9, which puts the error
// near 1e-6..1e-5, FlashAttention-2's bf16 class; see attention_mma.cu). Their invariants: a
// token's output has the same bits in a prefill chunk, alone as a decode step and next to other
// sequences, and for the tiled implementations whichever of their kernels serves the token. Outputs
// and scratch are poisoned (NaN) before every run, so a row a kernel forgets fails. The tiled
// kernels' work plan is checked on the CPU; the rest is skipped where no GPU is visible.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "cpu/attention.h"
#include "model/kv_cache.h"
#include "tests/cuda_test_support.h"
#include "tests/naive_qwen3.h"

#ifdef S3_WITH_CUDA
#include "cuda/attention.h"
#include "cuda/attention_tiled.h"
#include "cuda/device_memory.h"
#include "cuda/kv_cache.h"
#include "engine/model_runner.h"

using s3::cuda::AttentionKernel;
using s3test::DeviceArray;

namespace {

struct Shape {
  int64_t NH, NKV, HD;
};

// How the tiled implementation is handed the tokens: as planned, every token alone (its single-token
// kernel), or every run of a sequence through its multi-row kernel. Never changes a bit.
enum class Routing { Planned, Singles, Rows };

int64_t min_tile_rows(Routing routing) {
  switch (routing) {
    case Routing::Singles: return std::numeric_limits<int64_t>::max();
    case Routing::Rows: return 1;
    case Routing::Planned: break;
  }
  return s3::cuda::kTiledMinTileRows;
}

template <typename T>
void poison(const DeviceArray<T>& array) {
  s3test::cuda_ok(cudaMemset(array.get(), 0xFF, array.size() * sizeof(T)), "poison");  // every float NaN
}

// One layer's cache on both sides with the same contents, and the batch's device bookkeeping.
struct Scene {
  s3::model::Qwen3Config config;
  int64_t block_size = 16, blocks = 0;
  std::vector<std::vector<int32_t>> tables;
  std::unique_ptr<s3::model::KvCache> cpu;
  std::unique_ptr<s3::cuda::DeviceAllocator> allocator;
  std::unique_ptr<s3::cuda::DeviceKvCache> gpu;

  Scene(Shape shape, s3::KvDtype dtype, const std::vector<int64_t>& lengths, uint32_t seed) {
    config = s3test::tiny_qwen3_config();
    config.num_hidden_layers = 1;
    config.num_attention_heads = shape.NH;
    config.num_key_value_heads = shape.NKV;
    config.head_dim = shape.HD;
    int64_t next = 0;
    for (int64_t length : lengths) {
      std::vector<int32_t> table;
      for (int64_t b = 0; b < (length + block_size - 1) / block_size; b++) table.push_back(int32_t(next++));
      std::reverse(table.begin(), table.end());  // non-contiguous order
      tables.push_back(table);
    }
    blocks = next;
    cpu = std::make_unique<s3::model::KvCache>(config, block_size, blocks, dtype);
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (size_t s = 0; s < lengths.size(); s++) {
      std::vector<float> k(size_t(lengths[s] * shape.NKV * shape.HD)), v(k.size());
      for (float& x : k) x = 2.0f * normal(rng);
      for (float& x : v) x = normal(rng);
      const s3::cpu::AttentionSequence all{0, lengths[s], tables[s].data(), int64_t(tables[s].size())};
      cpu->store(0, &all, 1, k.data(), v.data());
    }
    allocator = std::make_unique<s3::cuda::DeviceAllocator>("test");
    gpu = std::make_unique<s3::cuda::DeviceKvCache>(*allocator, 1, shape.NKV, shape.HD, block_size, blocks, dtype, nullptr);
    const s3::cpu::KvPages host = cpu->pages(0);
    const s3::cuda::DeviceKvPages device = gpu->pages(0);
    const size_t rows = size_t(blocks * shape.NKV * block_size), bytes = rows * size_t(shape.HD * s3::kv_dtype_size(dtype));
    s3test::cuda_ok(cudaMemcpy(device.keys, host.keys, bytes, cudaMemcpyHostToDevice), "upload keys");
    s3test::cuda_ok(cudaMemcpy(device.values, host.values, bytes, cudaMemcpyHostToDevice), "upload values");
    if (dtype == s3::KvDtype::Fp8E4M3) {
      s3test::cuda_ok(cudaMemcpy(device.key_scales, host.key_scales, rows * 4, cudaMemcpyHostToDevice), "upload scales");
      s3test::cuda_ok(cudaMemcpy(device.value_scales, host.value_scales, rows * 4, cudaMemcpyHostToDevice), "upload scales");
    }
  }

  // `queries`: (sequence index, start, length) each, packed in order.
  struct Batch {
    std::vector<s3::cpu::AttentionSequence> seqs;
    std::vector<int32_t> positions, offsets, flat;
  };
  Batch batch(const std::vector<std::array<int64_t, 3>>& queries) const {
    Batch b;
    for (const auto& [s, start, length] : queries) {
      const std::vector<int32_t>& table = tables[size_t(s)];
      b.seqs.push_back({start, length, table.data(), int64_t(table.size())});
      for (int64_t i = 0; i < length; i++) {
        b.positions.push_back(int32_t(start + i));
        b.offsets.push_back(int32_t(b.flat.size()));
      }
      b.flat.insert(b.flat.end(), table.begin(), table.end());
    }
    return b;
  }

  std::vector<float> on_cpu(const std::vector<std::array<int64_t, 3>>& queries, const std::vector<float>& q) const {
    const Batch b = batch(queries);
    std::vector<float> out(q.size(), 0.0f);
    s3::ThreadPool pool(2);
    s3::cpu::attention_forward(out.data(), q.data(), cpu->pages(0), b.seqs.data(), int64_t(b.seqs.size()), config.num_attention_heads,
                               config.num_key_value_heads, config.head_dim, pool, s3::cpu::attention_kernels_with_f32_products());
    return out;
  }

  std::vector<float> on_device(const std::vector<std::array<int64_t, 3>>& queries, const std::vector<float>& q, AttentionKernel kernel,
                               Routing routing = Routing::Planned) const {
    const int64_t NH = config.num_attention_heads, NKV = config.num_key_value_heads, HD = config.head_dim;
    const Batch b = batch(queries);
    const int64_t T = int64_t(b.positions.size());
    DeviceArray<int32_t> dpos(b.positions), doff(b.offsets), dtables(b.flat);
    DeviceArray<float> dq(q), dout(q.size()), scratch(size_t(s3::cuda::attention_scratch_floats(T, NH, HD)));
    poison(dout);
    poison(scratch);
    const s3::cuda::AttentionTokens tokens{dpos.get(), doff.get(), dtables.get(), T};
    const s3::cuda::AttentionTilePlan plan =
        s3::cuda::plan_attention_tiles(b.positions.data(), b.offsets.data(), T, NH, NKV, HD, min_tile_rows(routing));
    DeviceArray<int32_t> items(plan.items);
    switch (kernel) {
      case AttentionKernel::Split: s3::cuda::attention_forward(dout.get(), dq.get(), gpu->pages(0), tokens, NH, scratch.get(), nullptr); break;
      case AttentionKernel::Tiled:
        s3::cuda::attention_forward_tiled(dout.get(), dq.get(), gpu->pages(0), tokens, {items.get(), plan.tile_items, plan.single_items},
                                          NH, scratch.get(), nullptr);
        break;
      case AttentionKernel::TiledMma:
        s3::cuda::attention_forward_tiled_mma(dout.get(), dq.get(), gpu->pages(0), tokens,
                                              {items.get(), plan.tile_items, plan.single_items}, NH, scratch.get(), nullptr);
        break;
      case AttentionKernel::Reference: s3::cuda::attention_reference(dout.get(), dq.get(), gpu->pages(0), tokens, NH, nullptr); break;
    }
    return dout.download();
  }
};

std::vector<float> random_q(int64_t T, const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> q(size_t(T * shape.NH * shape.HD));
  for (float& x : q) x = normal(rng);
  return q;
}

int64_t tokens_of(const std::vector<std::array<int64_t, 3>>& queries) {
  int64_t T = 0;
  for (const auto& query : queries) T += query[2];
  return T;
}

std::string shape_name(const Shape& shape, s3::KvDtype dtype) {
  static const char* const kDtypes[] = {"f32", "bf16", "fp8"};
  return "attention NH=" + std::to_string(shape.NH) + " NKV=" + std::to_string(shape.NKV) + " HD=" + std::to_string(shape.HD) +
         " kv=" + kDtypes[int(dtype)];
}

// NMSE a fast implementation is held to: 1e-7 with f32 arithmetic, 1e-4 on bf16 tensor cores.
double threshold(AttentionKernel kernel, s3::KvDtype dtype, int64_t HD) {
  return kernel == AttentionKernel::TiledMma && s3::cuda::attention_mma_serves(HD, dtype) ? 1e-4 : 1e-7;
}

// The output of `queries` through a tiled implementation has the same bits through every routing.
void check_routings_agree(const Scene& scene, const std::vector<std::array<int64_t, 3>>& queries, const std::vector<float>& q,
                          AttentionKernel kernel, const std::vector<float>& planned, const std::string& name) {
  for (Routing routing : {Routing::Singles, Routing::Rows}) {
    const size_t mismatches = s3test::exact_mismatches(planned, scene.on_device(queries, q, kernel, routing));
    if (mismatches != 0) {
      std::printf("  %s: %zu values differ with every token %s\n", name.c_str(), mismatches,
                  routing == Routing::Singles ? "alone" : "in the multi-row kernel");
    }
    CHECK_EQ(mismatches, size_t(0));
  }
}

const s3::KvDtype kDtypes[] = {s3::KvDtype::F32, s3::KvDtype::Bf16, s3::KvDtype::Fp8E4M3};
const AttentionKernel kFast[] = {AttentionKernel::Split, AttentionKernel::Tiled, AttentionKernel::TiledMma};

}  // namespace

TEST(attention_tiles_plan_covers_every_token_and_split_once_in_runs_of_one_sequence) {
  // Qwen3-0.6B's heads (G = 2: 32 tokens per multi-row block). Sequences: a 100-token prefill, a
  // decode at 5000, a chunk crossing 4096 (where the split length doubles), a 3-token chunk.
  std::vector<int32_t> position, offset;
  const auto add = [&](int32_t first, int32_t count, int32_t table_offset) {
    for (int32_t i = 0; i < count; i++) {
      position.push_back(first + i);
      offset.push_back(table_offset);
    }
  };
  add(0, 100, 0);
  add(5000, 1, 7);
  add(4090, 12, 320);
  add(10, 3, 600);
  const int64_t T = int64_t(position.size()), NH = 16, NKV = 8, HD = 128, G = 2;
  for (Routing routing : {Routing::Planned, Routing::Singles, Routing::Rows}) {
    const s3::cuda::AttentionTilePlan plan = s3::cuda::plan_attention_tiles(position.data(), offset.data(), T, NH, NKV, HD, min_tile_rows(routing));
    CHECK_EQ(int64_t(plan.items.size()), 3 * (plan.tile_items + plan.single_items));
    std::map<std::pair<int32_t, int32_t>, int> served;  // (token, split) → times
    int32_t previous_keys = std::numeric_limits<int32_t>::max();
    for (int64_t i = 0; i < plan.tile_items + plan.single_items; i++) {
      if (i == plan.tile_items) previous_keys = std::numeric_limits<int32_t>::max();
      const int32_t first = plan.items[size_t(3 * i)], count = plan.items[size_t(3 * i + 1)], split = plan.items[size_t(3 * i + 2)];
      const bool tile = i < plan.tile_items;
      CHECK(count >= 1 && first + count <= T);
      if (tile) {
        CHECK(count * G >= min_tile_rows(routing) && count * G <= s3::cuda::attention_tiled_rows(HD));
      } else {
        CHECK_EQ(count, 1);
      }
      const int64_t length = s3::cuda::attention_split_positions(position[size_t(first + count - 1)]);
      for (int32_t t = first; t < first + count; t++) {
        CHECK_EQ(offset[size_t(t)], offset[size_t(first)]);
        CHECK_EQ(position[size_t(t)], position[size_t(first)] + (t - first));
        CHECK_EQ(s3::cuda::attention_split_positions(position[size_t(t)]), length);
        served[{t, split}]++;
      }
      // Longest split first within each kernel's items.
      const int32_t keys = int32_t(std::min<int64_t>(length, position[size_t(first + count - 1)] + 1 - split * length));
      CHECK(keys <= previous_keys);
      previous_keys = keys;
    }
    int64_t expected = 0;
    for (int64_t t = 0; t < T; t++) {
      const int64_t length = s3::cuda::attention_split_positions(position[size_t(t)]);
      for (int64_t split = 0; split * length <= position[size_t(t)]; split++, expected++) CHECK_EQ((served[{int32_t(t), int32_t(split)}]), 1);
    }
    CHECK_EQ(int64_t(served.size()), expected);
    if (routing == Routing::Singles) CHECK_EQ(plan.tile_items, int64_t(0));
    if (routing == Routing::Rows) CHECK_EQ(plan.single_items, int64_t(0));
    if (routing == Routing::Planned) {
      // 100 tokens: 3 blocks of 32 (one split each) and 4 alone; the decode at 5000 alone (10 splits
      // of 512); the crossing chunk as 4090..4095 (12 rows: alone, 16 splits of 256 each) and
      // 4096..4101 (alone, 9 splits of 512 each); the 3-token chunk alone.
      CHECK_EQ(plan.tile_items, int64_t(3));
      CHECK_EQ(plan.single_items, int64_t(4 + 10 + 6 * 16 + 6 * 9 + 3));
    }
  }
  CHECK_THROWS(std::invalid_argument, s3::cuda::plan_attention_tiles(position.data(), offset.data(), T, 16, 8, 96));
  CHECK_THROWS(std::invalid_argument, s3::cuda::plan_attention_tiles(position.data(), offset.data(), T, 18, 2, 128));
  // A decode step's plan padded to a fixed size (decode graphs): its items unchanged, then empty ones.
  const std::vector<int32_t> decode_position = {5000, 3, 300}, decode_offset = {0, 400, 800};
  s3::cuda::AttentionTilePlan decode = s3::cuda::plan_attention_tiles(decode_position.data(), decode_offset.data(), 3, NH, NKV, HD);
  CHECK_EQ(decode.tile_items, int64_t(0));
  CHECK_EQ(decode.single_items, int64_t(10 + 1 + 2));
  const std::vector<int32_t> planned = decode.items;
  CHECK_THROWS(std::invalid_argument, s3::cuda::pad_attention_plan(decode, 12));
  s3::cuda::pad_attention_plan(decode, 3 * s3::cuda::kMaxAttentionSplits);
  CHECK_EQ(decode.single_items, int64_t(48));
  CHECK_EQ(decode.items.size(), size_t(3 * 48));
  CHECK(std::equal(planned.begin(), planned.end(), decode.items.begin()));
  CHECK(std::all_of(decode.items.begin() + int64_t(planned.size()), decode.items.end(), [](int32_t v) { return v == 0; }));
  s3::cuda::AttentionTilePlan prefill = s3::cuda::plan_attention_tiles(position.data(), offset.data(), T, NH, NKV, HD);
  CHECK_THROWS(std::invalid_argument, s3::cuda::pad_attention_plan(prefill, 1000));
}

TEST(cuda_attention_matches_the_reference_and_the_cpu_for_every_cache_dtype_and_group) {
  s3test::require_gpu();
  for (const Shape shape : {Shape{4, 2, 16}, Shape{8, 4, 32}, Shape{16, 8, 128}, Shape{12, 4, 64}, Shape{64, 8, 256}, Shape{8, 8, 128}}) {
    for (s3::KvDtype dtype : kDtypes) {
      const bool long_context = shape.HD == 128 && shape.NH == 16;
      const std::vector<int64_t> lengths = long_context ? std::vector<int64_t>{40, 5000, 300} : std::vector<int64_t>{40, 700, 3};
      const Scene scene(shape, dtype, lengths, 11);
      // A prefill chunk, decode steps, and a chunk in the middle of a long sequence.
      const std::vector<std::array<int64_t, 3>> queries = {{0, 0, 40}, {1, lengths[1] - 1, 1}, {2, lengths[2] - 1, 1}, {1, lengths[1] - 70, 60}};
      const std::vector<float> q = random_q(tokens_of(queries), shape, 12);
      const std::string name = shape_name(shape, dtype);
      const std::vector<float> cpu = scene.on_cpu(queries, q);
      const std::vector<float> reference = scene.on_device(queries, q, AttentionKernel::Reference);
      CHECK_NMSE(name + " reference vs cpu", reference.data(), cpu.data(), cpu.size(), 1e-7);
      for (AttentionKernel kernel : kFast) {
        const std::vector<float> fast = scene.on_device(queries, q, kernel);
        const std::string which = name + " " + s3::cuda::attention_kernel_name(kernel);
        CHECK_NMSE(which + " vs reference", fast.data(), reference.data(), fast.size(), threshold(kernel, dtype, shape.HD));
        CHECK_NMSE(which + " vs cpu", fast.data(), cpu.data(), fast.size(), threshold(kernel, dtype, shape.HD));
        if (kernel != AttentionKernel::Split) check_routings_agree(scene, queries, q, kernel, fast, which);
      }
    }
  }
}

TEST(cuda_tiled_attentions_match_the_reference_at_block_tile_and_split_boundaries) {
  s3test::require_gpu();
  // Lengths around the 16-position cache blocks and 64-position tiles, and one past 4,096 where the
  // split length doubles (256 → 512); every sequence as a whole prefill (the long one as a chunk
  // crossing 4,096 and its first 200 tokens) and as a decode step, all in one batch.
  const std::vector<int64_t> lengths = {1, 15, 16, 17, 127, 128, 129, 4097};
  std::vector<std::array<int64_t, 3>> queries;
  for (int64_t s = 0; s < int64_t(lengths.size()); s++) {
    if (lengths[size_t(s)] <= 129) queries.push_back({s, 0, lengths[size_t(s)]});
    queries.push_back({s, lengths[size_t(s)] - 1, 1});
  }
  queries.push_back({7, 3968, 129});
  queries.push_back({7, 0, 200});
  for (s3::KvDtype dtype : kDtypes) {
    for (int64_t G : {1, 2, 3, 4, 8}) {
      const Shape shape{2 * G, 2, 128};
      const Scene scene(shape, dtype, lengths, uint32_t(31 + G));
      const std::vector<float> q = random_q(tokens_of(queries), shape, uint32_t(41 + G));
      const std::vector<float> reference = scene.on_device(queries, q, AttentionKernel::Reference);
      for (AttentionKernel kernel : {AttentionKernel::Tiled, AttentionKernel::TiledMma}) {
        const std::string name = shape_name(shape, dtype) + " boundaries " + s3::cuda::attention_kernel_name(kernel);
        const std::vector<float> tiled = scene.on_device(queries, q, kernel);
        CHECK_NMSE(name + " vs reference", tiled.data(), reference.data(), tiled.size(), threshold(kernel, dtype, shape.HD));
        check_routings_agree(scene, queries, q, kernel, tiled, name);
      }
    }
  }
}

TEST(cuda_attention_gives_a_token_the_same_bits_in_prefill_decode_and_any_batch) {
  s3test::require_gpu();
  const Shape shape{16, 8, 128};
  for (s3::KvDtype dtype : kDtypes) {
    const Scene scene(shape, dtype, {4500, 90, 33}, 21);
    const size_t row = size_t(shape.NH * shape.HD);
    for (AttentionKernel kernel : kFast) {
      // Token 4499 of sequence 0 (deep in its context) and token 4096 (the first whose split length
      // is 512) inside 64-token chunks, alone, and after two other sequences.
      for (const int64_t token : {int64_t(4499), int64_t(4096)}) {
        const int64_t chunk_start = token == 4499 ? 4436 : 4064;  // 4096 sits mid-chunk
        const std::vector<float> chunk_q = random_q(64, shape, 22);
        const int64_t at = token - chunk_start;
        const std::vector<float> its_q(chunk_q.begin() + at * int64_t(row), chunk_q.begin() + (at + 1) * int64_t(row));
        std::vector<float> batched_q = random_q(90 + 33, shape, 23);
        batched_q.insert(batched_q.end(), its_q.begin(), its_q.end());
        const std::vector<std::array<int64_t, 3>> in_chunk = {{0, chunk_start, 64}}, alone = {{0, token, 1}},
                                                  batched = {{1, 0, 90}, {2, 0, 33}, {0, token, 1}};
        const std::vector<Routing> routings = kernel != AttentionKernel::Split
                                                  ? std::vector<Routing>{Routing::Planned, Routing::Singles, Routing::Rows}
                                                  : std::vector<Routing>{Routing::Planned};
        const std::vector<float> reference = scene.on_device(alone, its_q, kernel);
        for (Routing routing : routings) {
          const std::vector<float> a = scene.on_device(alone, its_q, kernel, routing);
          const std::vector<float> c = scene.on_device(in_chunk, chunk_q, kernel, routing);
          const std::vector<float> b = scene.on_device(batched, batched_q, kernel, routing);
          CHECK_EQ(std::memcmp(a.data(), reference.data(), row * 4), 0);
          CHECK_EQ(std::memcmp(a.data(), c.data() + size_t(at) * row, row * 4), 0);
          CHECK_EQ(std::memcmp(a.data(), b.data() + 123 * row, row * 4), 0);
        }
      }
    }
  }
}

TEST(cuda_runner_runs_the_attention_it_is_given_and_says_which) {
  s3test::require_cuda();
  // An own LM head N(0, 1/C): log-probs of a few nats. With the tied N(0, 1) embeddings the logits
  // have std ~16 and log-probs ~-150, where f32 rounding alone moves a log-prob by ~1e-3 between two
  // correct orders of the same sums (the CPU emulation, 2026-12-06: tiled against split 2.3e-3,
  // split against the CPU 1.2e-3, against this test's 1e-4).
  s3::model::Qwen3Config config = s3test::small_qwen3_config();
  config.tie_word_embeddings = false;
  const s3test::TestModel model = s3test::make_test_model(config, s3::DType::F32, 5, s3::DType::F32, true);
  const auto weights = std::make_shared<const s3::model::Qwen3Weights>(
      s3::model::Qwen3Weights::from_tensors(model.config, model.named(), s3::model::Qwen3Weights::Storage::Borrow, "test model"));
  s3::ThreadPool pool(4);
  const auto make = [&](s3::model::Device device, s3::engine::CudaAttention attention, int64_t max_batch_tokens, s3::KvDtype dtype) {
    s3::engine::RunnerOptions options;
    options.device = device;
    options.num_blocks = 4;
    options.max_batch_tokens = max_batch_tokens;
    options.kv_dtype = dtype;
    options.cuda_attention = attention;
    return s3::engine::make_model_runner(options, weights, pool);
  };
  std::vector<int32_t> tokens(150);
  for (size_t i = 0; i < tokens.size(); i++) tokens[i] = int32_t((i * 7919 + 3) % 4096);
  const int64_t T = int64_t(tokens.size()), V = model.config.vocab_size;
  std::vector<float> cpu(size_t(T * V));
  make(s3::model::Device::Cpu, s3::engine::CudaAttention::Split, 512, s3::KvDtype::F32)->logits(tokens.data(), T, 0, cpu.data());
  const auto name_of = [](s3::engine::CudaAttention attention) {
    return attention == s3::engine::CudaAttention::Split ? "split" : attention == s3::engine::CudaAttention::Tiled ? "tiled" : "tiled-mma";
  };
  const std::map<s3::engine::CudaAttention, std::string> described = {
      {s3::engine::CudaAttention::Split, "cuda split-KV paged attention"},
      {s3::engine::CudaAttention::Tiled, "cuda tiled paged attention"},
      {s3::engine::CudaAttention::TiledMma, "cuda tiled paged attention, bf16 tensor cores for bf16 and fp8 caches"}};
  for (const auto& [attention, text] : described) {
    CHECK_EQ(make(s3::model::Device::Cuda, attention, 64, s3::KvDtype::F32)->describe().attention, text);
    // Prefill in chunks of 64 continuing a cached prefix, and one position at a time (decode); the
    // f32 scratch cache of logits() keeps f32 arithmetic in every implementation.
    for (const int64_t chunk : {int64_t(64), int64_t(1)}) {
      std::vector<float> gpu(cpu.size());
      make(s3::model::Device::Cuda, attention, chunk, s3::KvDtype::F32)->logits(tokens.data(), T, 0, gpu.data());
      CHECK_NMSE(std::string("small f32 logits, ") + name_of(attention) + " attention, chunks of " + std::to_string(chunk), gpu.data(),
                 cpu.data(), cpu.size(), 1e-6);
    }
  }
  // Scores through bf16 and fp8 caches: the tiled implementations against split on the same device
  // (tiled-mma rounds queries and weights to bf16). Tiled's f32 arithmetic differs from split's in
  // order only, but each layer's keys and values are rounded to the cache's dtype, where a last-bit
  // difference sometimes flips a rounding (2^-9 relative in bf16): 1.3e-4 in the CPU emulation
  // (2026-12-06), so 1e-3 for tiled; 0.05 for tiled-mma.
  for (s3::KvDtype dtype : {s3::KvDtype::Bf16, s3::KvDtype::Fp8E4M3}) {
    const std::vector<float> split = make(s3::model::Device::Cuda, s3::engine::CudaAttention::Split, 64, dtype)->score(tokens.data(), T);
    for (const auto attention : {s3::engine::CudaAttention::Tiled, s3::engine::CudaAttention::TiledMma}) {
      const std::vector<float> tiled = make(s3::model::Device::Cuda, attention, 64, dtype)->score(tokens.data(), T);
      CHECK_EQ(tiled.size(), split.size());
      double worst = 0.0;
      for (size_t i = 0; i < split.size(); i++) worst = s3test::max_or_nan(worst, std::fabs(double(tiled[i]) - double(split[i])));
      std::printf("  score kv=%s: largest |%s - split| %.3g\n", dtype == s3::KvDtype::Bf16 ? "bf16" : "fp8", name_of(attention), worst);
      CHECK(worst < (attention == s3::engine::CudaAttention::Tiled ? 1e-3 : 0.05));
    }
  }
}

#else

TEST(cuda_attention) { SKIP("built without CUDA (no nvcc at build time, or S3_CUDA=OFF)"); }

#endif
