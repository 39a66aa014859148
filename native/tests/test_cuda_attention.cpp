// test_cuda_attention.cpp: the CUDA attention kernels over the device's paged cache. The split-KV
// kernel against the double-precision reference kernel on the device and against the CPU's
// attention (f32 op: NMSE ≤ 1e-7), for f32, bf16 and fp8 caches filled by the CPU's store; GQA
// groups of 1 to 8 and head_dim 16 to 256; contexts past 4,096 (where the split length doubles); and
// its invariants: a token's output has the same bits in a prefill chunk, alone as a decode step, and
// next to other sequences. Skipped where no GPU is visible.
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "cpu/attention.h"
#include "model/kv_cache.h"
#include "tests/cuda_test_support.h"
#include "tests/naive_qwen3.h"

#ifdef S3_WITH_CUDA
#include "cuda/attention.h"
#include "cuda/device_memory.h"
#include "cuda/kv_cache.h"

using s3test::DeviceArray;

namespace {

struct Shape {
  int64_t NH, NKV, HD;
};

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

  // The attention of `queries` (sequence index, start, length) over this cache: CPU, device fast, device reference.
  struct Outputs {
    std::vector<float> cpu, fast, reference;
  };
  Outputs run(const std::vector<std::array<int64_t, 3>>& queries, const std::vector<float>& q) const {
    const int64_t NH = config.num_attention_heads, NKV = config.num_key_value_heads, HD = config.head_dim;
    std::vector<s3::cpu::AttentionSequence> seqs;
    std::vector<int32_t> positions, offsets, flat;
    for (const auto& [s, start, length] : queries) {
      const std::vector<int32_t>& table = tables[size_t(s)];
      seqs.push_back({start, length, table.data(), int64_t(table.size())});
      for (int64_t i = 0; i < length; i++) {
        positions.push_back(int32_t(start + i));
        offsets.push_back(int32_t(flat.size()));
      }
      flat.insert(flat.end(), table.begin(), table.end());
    }
    const int64_t T = int64_t(positions.size());
    Outputs out;
    out.cpu.assign(size_t(T * NH * HD), 0.0f);
    s3::ThreadPool pool(2);
    s3::cpu::attention_forward(out.cpu.data(), q.data(), cpu->pages(0), seqs.data(), int64_t(seqs.size()), NH, NKV, HD, pool);
    DeviceArray<int32_t> dpos(positions), doff(offsets), dtables(flat);
    DeviceArray<float> dq(q), dout(out.cpu.size()), dref(out.cpu.size());
    DeviceArray<float> scratch(size_t(s3::cuda::attention_scratch_floats(T, NH, HD)));
    const s3::cuda::AttentionTokens tokens{dpos.get(), doff.get(), dtables.get(), T};
    s3::cuda::attention_forward(dout.get(), dq.get(), gpu->pages(0), tokens, NH, scratch.get(), nullptr);
    s3::cuda::attention_reference(dref.get(), dq.get(), gpu->pages(0), tokens, NH, nullptr);
    out.fast = dout.download();
    out.reference = dref.download();
    return out;
  }
};

std::vector<float> random_q(int64_t T, const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> q(size_t(T * shape.NH * shape.HD));
  for (float& x : q) x = normal(rng);
  return q;
}

}  // namespace

TEST(cuda_attention_matches_the_reference_and_the_cpu_for_every_cache_dtype_and_group) {
  s3test::require_gpu();
  for (const Shape shape : {Shape{4, 2, 16}, Shape{8, 4, 32}, Shape{16, 8, 128}, Shape{12, 4, 64}, Shape{64, 8, 256}, Shape{8, 8, 128}}) {
    for (s3::KvDtype dtype : {s3::KvDtype::F32, s3::KvDtype::Bf16, s3::KvDtype::Fp8E4M3}) {
      const bool long_context = shape.HD == 128 && shape.NH == 16;
      const std::vector<int64_t> lengths = long_context ? std::vector<int64_t>{40, 5000, 300} : std::vector<int64_t>{40, 700, 3};
      const Scene scene(shape, dtype, lengths, 11);
      // A prefill chunk, decode steps, and a chunk in the middle of a long sequence.
      const std::vector<std::array<int64_t, 3>> queries = {{0, 0, 40}, {1, lengths[1] - 1, 1}, {2, lengths[2] - 1, 1}, {1, lengths[1] - 70, 60}};
      int64_t T = 0;
      for (const auto& query : queries) T += query[2];
      const Scene::Outputs out = scene.run(queries, random_q(T, shape, 12));
      const std::string name = "attention NH=" + std::to_string(shape.NH) + " NKV=" + std::to_string(shape.NKV) +
                               " HD=" + std::to_string(shape.HD) + " kv=" + std::to_string(int(dtype));
      CHECK_NMSE(name + " fast vs reference", out.fast.data(), out.reference.data(), out.fast.size(), 1e-7);
      CHECK_NMSE(name + " fast vs cpu", out.fast.data(), out.cpu.data(), out.fast.size(), 1e-7);
      CHECK_NMSE(name + " reference vs cpu", out.reference.data(), out.cpu.data(), out.fast.size(), 1e-7);
    }
  }
}

TEST(cuda_attention_gives_a_token_the_same_bits_in_prefill_decode_and_any_batch) {
  s3test::require_gpu();
  const Shape shape{16, 8, 128};
  const Scene scene(shape, s3::KvDtype::Bf16, {4500, 90, 33}, 21);
  const int64_t HD = shape.HD, NH = shape.NH;
  // Token 4499 of sequence 0 inside a 64-token chunk, alone, and after two other sequences.
  const std::vector<float> chunk_q = random_q(64, shape, 22);
  const std::vector<float> its_q(chunk_q.end() - NH * HD, chunk_q.end());
  const Scene::Outputs in_chunk = scene.run({{0, 4436, 64}}, chunk_q);
  const Scene::Outputs alone = scene.run({{0, 4499, 1}}, its_q);
  std::vector<float> batched_q = random_q(90 + 33, shape, 23);
  batched_q.insert(batched_q.end(), its_q.begin(), its_q.end());
  const Scene::Outputs batched = scene.run({{1, 0, 90}, {2, 0, 33}, {0, 4499, 1}}, batched_q);
  const size_t row = size_t(NH * HD);
  CHECK_EQ(std::memcmp(alone.fast.data(), in_chunk.fast.data() + 63 * row, row * 4), 0);
  CHECK_EQ(std::memcmp(alone.fast.data(), batched.fast.data() + 123 * row, row * 4), 0);
}

#else

TEST(cuda_attention) { SKIP("built without CUDA (no nvcc at build time, or S3_CUDA=OFF)"); }

#endif
