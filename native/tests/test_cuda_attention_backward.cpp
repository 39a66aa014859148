// test_cuda_attention_backward.cpp: the training attention on the device (cuda/attention_backward.h)
// against the CPU's (cpu/attention_backward.h, itself checked against its row-wise reference and by
// finite differences in test_cpu_backward.cpp): out and lse of the forward, dq, dk and dv of the
// backward, NMSE ≤ 1e-7 each (f32 sums in another order), on packed batches with independent
// sequences, a parent whose children share its prefix (its dk/dv rows collect every child's terms),
// sequences longer than a 128-key tile, Qwen3-0.6B's heads (16 query heads over 8 KV heads, HD 128)
// and a group of 8 at HD 64; every result twice, bit-identical (no atomics). The tensor-core kernels
// (cuda/attention_train_mma.h) on the same batches and more head shapes (HD 16 to 128, groups of 1 to
// 8, many short sequences in one 64-row block) against the CPU, within bf16 bounds (below).
// Skipped without a GPU, except the refusal of head shapes the kernels do not serve.
#include <cstring>
#include <random>
#include <vector>

#include "core/thread_pool.h"
#include "cpu/attention_backward.h"
#include "tests/cuda_test_support.h"

#ifdef S3_WITH_CUDA
#include "cuda/attention_backward.h"
#include "cuda/attention_train_mma.h"
#include "cuda/check.h"

using s3test::DeviceArray;

namespace {

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

struct Batch {
  std::vector<int64_t> begins, parent;  // parent empty: no shared prefixes
};

// tensor_cores: attention_train_mma.h's kernels (bf16 operands), out and lse held to NMSE ≤ 1e-4 and
// the gradients to ≤ 3e-4 (its CPU emulation, scripts/cuda-emulation, measured out 1.2e-5..1.7e-5,
// gradients 3.6e-5..9.6e-5 on these batches, the most at HD 16); else the f32 kernels, ≤ 1e-7.
void compare(const Batch& batch, int64_t NH, int64_t NKV, int64_t HD, const std::string& name, bool tensor_cores = false) {
  const auto backward = tensor_cores ? s3::cuda::causal_attention_backward_mma : s3::cuda::causal_attention_backward;
  const double thresholds[] = {tensor_cores ? 1e-4 : 1e-7, tensor_cores ? 3e-4 : 1e-7};  // out and lse; gradients
  const int64_t n_seq = int64_t(batch.begins.size()) - 1, T = batch.begins.back();
  s3::cpu::PackedAttentionShape cpu_shape{T, NH, NKV, HD, batch.begins.data(), n_seq, 64};
  if (!batch.parent.empty()) cpu_shape.seq_parent = batch.parent.data();
  const size_t qn = size_t(T * NH * HD), kn = size_t(T * NKV * HD);
  const std::vector<float> q = s3test::random_floats(qn, 1, 1.5f), k = s3test::random_floats(kn, 2, 1.5f), v = s3test::random_floats(kn, 3);
  const std::vector<float> dout = s3test::random_floats(qn, 4);
  s3::ThreadPool pool(2);
  std::vector<float> out(qn), lse(size_t(T * NH)), dq(qn), dk(kn), dv(kn);
  s3::cpu::causal_attention_train_forward(out.data(), lse.data(), q.data(), k.data(), v.data(), cpu_shape, pool);
  s3::cpu::causal_attention_backward(dq.data(), dk.data(), dv.data(), dout.data(), out.data(), lse.data(), q.data(), k.data(),
                                     v.data(), cpu_shape, pool);

  DeviceArray<int64_t> d_begins(batch.begins), d_parent(batch.parent.empty() ? std::vector<int64_t>{-1} : batch.parent);
  s3::cuda::DevicePackedAttention shape{T, NH, NKV, HD, d_begins.get(), batch.parent.empty() ? nullptr : d_parent.get(), n_seq};
  DeviceArray<float> d_q(q), d_k(k), d_v(v), d_dout(dout), d_out(qn), d_lse(size_t(T * NH)), d_dq(qn), d_dk(kn), d_dv(kn);
  DeviceArray<uint8_t> scratch(tensor_cores ? s3::cuda::attention_train_mma_scratch_bytes(T, NH, NKV, HD)
                                            : s3::cuda::attention_backward_scratch_bytes(T, NH));
  std::vector<std::vector<float>> first;
  for (int run = 0; run < 2; run++) {
    if (tensor_cores) {
      s3::cuda::causal_attention_train_forward_mma(d_out.get(), d_lse.get(), d_q.get(), d_k.get(), d_v.get(), shape, scratch.get(), nullptr);
    } else {
      s3::cuda::causal_attention_train_forward(d_out.get(), d_lse.get(), d_q.get(), d_k.get(), d_v.get(), shape, nullptr);
    }
    // The backward reads the CPU's out and lse, so its comparison does not inherit the forward's rounding.
    DeviceArray<float> cpu_out(out), cpu_lse(lse);
    backward(d_dq.get(), d_dk.get(), d_dv.get(), d_dout.get(), cpu_out.get(), cpu_lse.get(), d_q.get(), d_k.get(), d_v.get(), shape,
             scratch.get(), nullptr);
    std::vector<std::vector<float>> got = {d_out.download(), d_lse.download(), d_dq.download(), d_dk.download(), d_dv.download()};
    if (run == 0) {
      const std::vector<float>* want[] = {&out, &lse, &dq, &dk, &dv};
      const char* what[] = {"out", "lse", "dq", "dk", "dv"};
      for (size_t i = 0; i < got.size(); i++) {
        CHECK_NMSE("attention train " + name + (tensor_cores ? " (tensor cores) " : " ") + what[i], got[i].data(), want[i]->data(),
                   got[i].size(), thresholds[i < 2 ? 0 : 1]);
      }
      first = got;
    } else {
      for (size_t i = 0; i < got.size(); i++) CHECK(same_bits(got[i], first[i]));
    }
  }
}

}  // namespace

TEST(cuda_training_attention_matches_cpu_on_packed_sequences) {
  s3test::require_gpu();
  // Three independent sequences, one longer than two tiles.
  compare(Batch{{0, 37, 300, 305}, {}}, 16, 8, 128, "independent");
  // A parent (0) with three children (1, 2, 4), an unrelated sequence (3) and a parent longer than a tile.
  compare(Batch{{0, 150, 170, 171, 211, 260}, {-1, 0, 0, -1, 0}}, 16, 8, 128, "shared prefix");
  compare(Batch{{0, 20, 45, 90, 91}, {-1, 0, -1, 2}}, 8, 1, 64, "group of 8");
}

TEST(cuda_training_attention_on_tensor_cores_matches_cpu) {
  s3test::require_gpu();
  compare(Batch{{0, 37, 300, 305}, {}}, 16, 8, 128, "independent", true);
  compare(Batch{{0, 150, 170, 171, 211, 260}, {-1, 0, 0, -1, 0}}, 16, 8, 128, "shared prefix", true);
  compare(Batch{{0, 20, 45, 90, 91}, {-1, 0, -1, 2}}, 8, 1, 64, "group of 8", true);
  // Many short sequences inside one 64-row block, children of a parent in another block, HD 32 (the
  // small shapes), 16 and one KV head per query head.
  compare(Batch{{0, 70, 73, 80, 81, 95, 130, 131, 200}, {-1, 0, -1, 0, 2, 0, -1, 6}}, 8, 4, 32, "short sequences", true);
  compare(Batch{{0, 65, 129, 200}, {-1, 0, 0}}, 4, 4, 16, "head_dim 16", true);
}

TEST(cuda_training_attention_refuses_unsupported_heads) {  // before any launch: runs without a GPU
  CHECK(!s3::cuda::attention_train_supports(16, 1, 128));  // a group of 16
  CHECK(!s3::cuda::attention_train_supports(8, 8, 512));
  CHECK(s3::cuda::attention_train_supports(16, 8, 128));
  s3::cuda::DevicePackedAttention shape{4, 16, 1, 128, nullptr, nullptr, 1};
  CHECK_THROWS(s3::cuda::CudaError, s3::cuda::causal_attention_train_forward(nullptr, nullptr, nullptr, nullptr, nullptr, shape, nullptr));
  // The tensor-core kernels: HD 16 .. 128 in powers of two, any group.
  CHECK(s3::cuda::attention_train_mma_supports(16, 8, 128));
  CHECK(s3::cuda::attention_train_mma_supports(16, 1, 64));
  CHECK(!s3::cuda::attention_train_mma_supports(16, 8, 256));
  CHECK(!s3::cuda::attention_train_mma_supports(16, 8, 96));
  CHECK(!s3::cuda::attention_train_mma_supports(12, 8, 128));
  const s3::cuda::DevicePackedAttention wide{4, 16, 8, 256, nullptr, nullptr, 1};
  CHECK_THROWS(s3::cuda::CudaError,
               s3::cuda::causal_attention_train_forward_mma(nullptr, nullptr, nullptr, nullptr, nullptr, wide, nullptr, nullptr));
}

#else

TEST(cuda_attention_backward) { SKIP("built without CUDA (no nvcc at build time, or S3_CUDA=OFF)"); }

#endif
