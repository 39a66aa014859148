// attention_check.cpp (emulate.py attention): the inference attention's CUDA launchers (split,
// tiled and tiled-mma: cuda/attention.h, cuda/attention_tiled.h) run in the CPU emulation on host
// memory, over the very bytes of a CPU paged cache (model/kv_cache.h; the device cache has the same
// layout), against the CPU's attention with f32 products (cpu/attention.h,
// attention_kernels_with_f32_products, so a BF16-product level's rounding of a bf16 cache's queries
// does not show): f32, bf16 and fp8 caches, a prefill batch (a whole sequence longer than one
// 256-position split beside a continuation) and a decode step of the same tokens. Prints each NMSE;
// exits non-zero past the GPU test's bounds (1e-7 where the arithmetic is f32, 1e-4 for tiled-mma
// on bf16 and fp8 caches), or when a token's bits differ between the prefill and the decode step,
// or between two routings of the tiled kernels.
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "cpu/attention.h"
#include "cuda/attention.h"
#include "cuda/attention_tiled.h"
#include "model/kv_cache.h"

namespace {

using s3::KvDtype;
using s3::cuda::AttentionKernel;

double nmse(const float* got, const float* want, size_t n) {
  double error = 0, norm = 0;
  for (size_t i = 0; i < n; i++) {
    if (!std::isfinite(got[i])) return INFINITY;
    error += (double(got[i]) - want[i]) * (double(got[i]) - want[i]), norm += double(want[i]) * want[i];
  }
  return norm > 0 ? error / norm : error;
}

struct Scene {
  s3::model::Qwen3Config config;
  int64_t NH, NKV, HD, block_size = 16;
  std::vector<std::vector<int32_t>> tables;
  std::unique_ptr<s3::model::KvCache> cache;

  Scene(int64_t nh, int64_t nkv, int64_t hd, KvDtype dtype, const std::vector<int64_t>& lengths) : NH(nh), NKV(nkv), HD(hd) {
    config.hidden_size = 64, config.num_hidden_layers = 1, config.num_attention_heads = NH, config.num_key_value_heads = NKV;
    config.head_dim = HD, config.intermediate_size = 128, config.vocab_size = 512, config.max_position_embeddings = 8192;
    int64_t next = 0;
    for (int64_t length : lengths) {
      std::vector<int32_t> table;
      for (int64_t b = 0; b < (length + block_size - 1) / block_size; b++) table.push_back(int32_t(next++));
      std::reverse(table.begin(), table.end());  // non-contiguous order
      tables.push_back(table);
    }
    cache = std::make_unique<s3::model::KvCache>(config, block_size, next, dtype);
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (size_t s = 0; s < lengths.size(); s++) {
      std::vector<float> k(size_t(lengths[s] * NKV * HD)), v(k.size());
      for (float& x : k) x = 2.0f * normal(rng);
      for (float& x : v) x = normal(rng);
      const s3::cpu::AttentionSequence all{0, lengths[s], tables[s].data(), int64_t(tables[s].size())};
      cache->store(0, &all, 1, k.data(), v.data());
    }
  }

  s3::cuda::DeviceKvPages device_pages() const {
    const s3::cpu::KvPages host = cache->pages(0);
    s3::cuda::DeviceKvPages pages;
    pages.keys = const_cast<void*>(host.keys), pages.values = const_cast<void*>(host.values);
    pages.key_scales = const_cast<float*>(host.key_scales), pages.value_scales = const_cast<float*>(host.value_scales);
    pages.num_blocks = cache->num_blocks(), pages.kv_heads = NKV, pages.block_size = block_size, pages.head_dim = HD;
    pages.dtype = host.dtype;
    return pages;
  }

  // queries: (sequence, start, length) each, packed in order; the CPU's output, and the CUDA one.
  std::vector<float> cpu(const std::vector<std::array<int64_t, 3>>& queries, const std::vector<float>& q) const {
    std::vector<s3::cpu::AttentionSequence> seqs;
    for (const auto& [s, start, length] : queries) seqs.push_back({start, length, tables[size_t(s)].data(), int64_t(tables[size_t(s)].size())});
    std::vector<float> out(q.size(), 0.0f);
    s3::ThreadPool pool(2);
    s3::cpu::attention_forward(out.data(), q.data(), cache->pages(0), seqs.data(), int64_t(seqs.size()), NH, NKV, HD, pool,
                               s3::cpu::attention_kernels_with_f32_products());
    return out;
  }
  std::vector<float> cuda(AttentionKernel kernel, int64_t min_tile_rows, const std::vector<std::array<int64_t, 3>>& queries,
                          const std::vector<float>& q) const {
    std::vector<int32_t> positions, offsets, flat;
    for (const auto& [s, start, length] : queries) {
      for (int64_t i = 0; i < length; i++) positions.push_back(int32_t(start + i)), offsets.push_back(int32_t(flat.size()));
      flat.insert(flat.end(), tables[size_t(s)].begin(), tables[size_t(s)].end());
    }
    const int64_t T = int64_t(positions.size());
    const s3::cuda::AttentionTokens tokens{positions.data(), offsets.data(), flat.data(), T};
    std::vector<float> out(q.size(), NAN), scratch(size_t(s3::cuda::attention_scratch_floats(T, NH, HD)), NAN);
    if (kernel == AttentionKernel::Split) {
      s3::cuda::attention_forward(out.data(), q.data(), device_pages(), tokens, NH, scratch.data(), nullptr);
      return out;
    }
    const s3::cuda::AttentionTilePlan plan = s3::cuda::plan_attention_tiles(positions.data(), offsets.data(), T, NH, NKV, HD, min_tile_rows);
    const s3::cuda::AttentionWork work{plan.items.data(), plan.tile_items, plan.single_items};
    if (kernel == AttentionKernel::Tiled) {
      s3::cuda::attention_forward_tiled(out.data(), q.data(), device_pages(), tokens, work, NH, scratch.data(), nullptr);
    } else {
      s3::cuda::attention_forward_tiled_mma(out.data(), q.data(), device_pages(), tokens, work, NH, scratch.data(), nullptr);
    }
    return out;
  }
};

bool check(int64_t NH, int64_t NKV, int64_t HD, KvDtype dtype) {
  const Scene scene(NH, NKV, HD, dtype, {300, 77});
  const std::vector<std::array<int64_t, 3>> prefill = {{0, 0, 300}, {1, 60, 17}}, decode = {{0, 299, 1}, {1, 76, 1}};
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> q(size_t(317 * NH * HD));
  for (float& x : q) x = normal(rng);
  // The decode step's queries are the prefill's last tokens of each sequence.
  std::vector<float> q_decode(size_t(2 * NH * HD));
  std::memcpy(q_decode.data(), &q[size_t(299 * NH * HD)], size_t(NH * HD) * 4);
  std::memcpy(q_decode.data() + NH * HD, &q[size_t(316 * NH * HD)], size_t(NH * HD) * 4);
  const std::vector<float> want = scene.cpu(prefill, q), want_decode = scene.cpu(decode, q_decode);
  bool ok = true;
  for (AttentionKernel kernel : {AttentionKernel::Split, AttentionKernel::Tiled, AttentionKernel::TiledMma}) {
    const bool tensor_cores = kernel == AttentionKernel::TiledMma && s3::cuda::attention_mma_serves(HD, dtype);
    const double bound = tensor_cores ? 1e-4 : 1e-7;
    const std::vector<float> got = scene.cuda(kernel, s3::cuda::kTiledMinTileRows, prefill, q);
    const std::vector<float> got_decode = scene.cuda(kernel, s3::cuda::kTiledMinTileRows, decode, q_decode);
    const double e = nmse(got.data(), want.data(), got.size()), e_decode = nmse(got_decode.data(), want_decode.data(), got_decode.size());
    // The decode step's rows have the prefill's bits.
    const bool same = std::memcmp(got_decode.data(), &got[size_t(299 * NH * HD)], size_t(NH * HD) * 4) == 0 &&
                      std::memcmp(got_decode.data() + NH * HD, &got[size_t(316 * NH * HD)], size_t(NH * HD) * 4) == 0;
    bool routings = true;
    if (kernel != AttentionKernel::Split) {  // every token through the single-token kernel, then all through the multi-row one
      const std::vector<float> singles = scene.cuda(kernel, std::numeric_limits<int64_t>::max(), prefill, q);
      const std::vector<float> rows = scene.cuda(kernel, 1, prefill, q);
      routings = std::memcmp(singles.data(), got.data(), got.size() * 4) == 0 && std::memcmp(rows.data(), got.data(), got.size() * 4) == 0;
    }
    const bool pass = e <= bound && e_decode <= bound && same && routings;
    std::printf("%-9s %-5s NH %2lld NKV %lld HD %3lld: prefill %.2e  decode %.2e%s%s  %s\n", s3::cuda::attention_kernel_name(kernel),
                dtype == KvDtype::F32 ? "f32" : dtype == KvDtype::Bf16 ? "bf16" : "fp8", (long long)NH, (long long)NKV, (long long)HD, e, e_decode,
                same ? "" : "  (decode bits differ from the prefill's)", routings ? "" : "  (routings differ)", pass ? "ok" : "FAIL");
    std::fflush(stdout);
    ok = ok && pass;
  }
  return ok;
}

}  // namespace

int main() {
  bool ok = true;
  for (KvDtype dtype : {KvDtype::F32, KvDtype::Bf16, KvDtype::Fp8E4M3}) ok &= check(4, 2, 128, dtype);
  ok &= check(8, 2, 64, KvDtype::Bf16);
  return ok ? 0 : 1;
}
