// attention_backward.cpp: the implementation of cpu/attention_backward.h (see the header for the contract and layouts).
#include "cpu/attention_backward.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "cpu/matmul.h"
#include "cpu/matrix_view.h"

namespace s3::cpu {

namespace {

// Eight independent partial sums, so the compiler can vectorize without reassociating.
float dot(const float* a, const float* b, int64_t n) {
  float acc[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; j++) acc[j] += a[i + j] * b[i + j];
  }
  float s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
  for (; i < n; i++) s += a[i] * b[i];
  return s;
}

int64_t sequence_of(const PackedAttentionShape& shape, int64_t t) {
  int64_t lo = 0, hi = shape.n_seq - 1;
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (shape.seq_begins[mid] <= t) lo = mid; else hi = mid - 1;
  }
  return lo;
}

}  // namespace

void causal_attention_train_forward_rowwise(float* out, float* lse, const float* q, const float* k, const float* v,
                                    const PackedAttentionShape& shape, ThreadPool& pool) {
  const int64_t T = shape.T, NH = shape.NH, NKV = shape.NKV, HD = shape.HD, group = NH / NKV;
  const float scale = 1.0f / std::sqrt(float(HD));
  pool.parallel_for(size_t(T), [&](size_t begin, size_t end, size_t) {
    std::vector<float> scores;
    for (int64_t t = int64_t(begin); t < int64_t(end); t++) {
      const int64_t s0 = shape.seq_begins[sequence_of(shape, t)];
      scores.resize(size_t(t - s0 + 1));
      for (int64_t h = 0; h < NH; h++) {
        const int64_t g = h / group;
        const float* qh = q + (t * NH + h) * HD;
        float max = -INFINITY;
        for (int64_t s = s0; s <= t; s++) {
          const float score = dot(qh, k + (s * NKV + g) * HD, HD) * scale;
          scores[size_t(s - s0)] = score;
          if (score > max) max = score;
        }
        float total = 0.0f;
        for (float& score : scores) {
          score = std::exp(score - max);
          total += score;
        }
        float* o = out + (t * NH + h) * HD;
        std::memset(o, 0, size_t(HD) * sizeof(float));
        const float inv = 1.0f / total;
        for (int64_t s = s0; s <= t; s++) {
          const float p = scores[size_t(s - s0)] * inv;
          const float* vs = v + (s * NKV + g) * HD;
          for (int64_t d = 0; d < HD; d++) o[d] += p * vs[d];
        }
        lse[t * NH + h] = max + std::log(total);
      }
    }
  });
}

void causal_attention_backward_rowwise(float* dq, float* dk, float* dv, const float* dout, const float* out, const float* lse,
                               const float* q, const float* k, const float* v, const PackedAttentionShape& shape,
                               ThreadPool& pool) {
  const int64_t T = shape.T, NH = shape.NH, NKV = shape.NKV, HD = shape.HD, group = NH / NKV;
  const float scale = 1.0f / std::sqrt(float(HD));
  std::memset(dq, 0, size_t(T * NH * HD) * sizeof(float));
  std::memset(dk, 0, size_t(T * NKV * HD) * sizeof(float));
  std::memset(dv, 0, size_t(T * NKV * HD) * sizeof(float));
  // One unit per (KV head, sequence): it alone writes that head's dk / dv rows of that sequence
  // and the dq rows of its query heads, so the sums are deterministic.
  const int64_t units = NKV * shape.n_seq;
  pool.parallel_for(size_t(units), [&](size_t begin, size_t end, size_t) {
    for (int64_t u = int64_t(begin); u < int64_t(end); u++) {
      const int64_t g = u / shape.n_seq, seq = u % shape.n_seq;
      const int64_t s0 = shape.seq_begins[seq], s1 = shape.seq_begins[seq + 1];
      for (int64_t h = g * group; h < (g + 1) * group; h++) {
        for (int64_t t = s0; t < s1; t++) {
          const float* qh = q + (t * NH + h) * HD;
          const float* doh = dout + (t * NH + h) * HD;
          const float delta = dot(doh, out + (t * NH + h) * HD, HD);
          const float l = lse[t * NH + h];
          float* dqh = dq + (t * NH + h) * HD;
          for (int64_t s = s0; s <= t; s++) {
            const float* ks = k + (s * NKV + g) * HD;
            const float* vs = v + (s * NKV + g) * HD;
            const float p = std::exp(dot(qh, ks, HD) * scale - l);
            const float dp = dot(doh, vs, HD);
            const float ds = p * (dp - delta) * scale;
            float* dks = dk + (s * NKV + g) * HD;
            float* dvs = dv + (s * NKV + g) * HD;
            for (int64_t d = 0; d < HD; d++) {
              dqh[d] += ds * ks[d];
              dks[d] += ds * qh[d];
              dvs[d] += p * doh[d];
            }
          }
        }
      }
    }
  });
}

namespace {

// out[M × N] = a[M × K] · bᵀ for b [N × K], both contiguous f32, on this thread.
void mm(float* out, const float* a, const float* b, int64_t M, int64_t N, int64_t K, std::vector<float>& scratch) {
  if (M <= 0 || N <= 0) return;
  scratch.resize(size_t(kMatmulScratchRows * K));
  matmul_kernels().columns(out, a, MatrixView{b, DType::F32, N, K, nullptr}, M, 0, N, scratch.data());
}

// dst[cols × rows] = srcᵀ, src [rows × cols] with row stride ld.
void transpose_into(float* dst, const float* src, int64_t rows, int64_t cols, int64_t ld) {
  for (int64_t r = 0; r < rows; r++) {
    for (int64_t c = 0; c < cols; c++) dst[c * rows + r] = src[r * ld + c];
  }
}

// dst[rows × HD] from rows of a strided [T × heads × HD] tensor.
void gather_head(float* dst, const float* src, int64_t first, int64_t rows, int64_t heads, int64_t head, int64_t HD) {
  for (int64_t r = 0; r < rows; r++) std::memcpy(dst + r * HD, src + ((first + r) * heads + head) * HD, size_t(HD) * sizeof(float));
}

}  // namespace

void causal_attention_train_forward(float* out, float* lse, const float* q, const float* k, const float* v,
                                    const PackedAttentionShape& shape, ThreadPool& pool) {
  const int64_t NH = shape.NH, NKV = shape.NKV, HD = shape.HD, group = NH / NKV;
  const int64_t B = shape.block > 0 ? shape.block : 64;
  const float scale = 1.0f / std::sqrt(float(HD));
  const int64_t units = NH * shape.n_seq;
  pool.parallel_for(size_t(units), [&](size_t begin, size_t end, size_t) {
    std::vector<float> kg, vgt, qb, s, o, scratch;
    for (int64_t u = int64_t(begin); u < int64_t(end); u++) {
      const int64_t h = u / shape.n_seq, seq = u % shape.n_seq, g = h / group;
      const int64_t s0 = shape.seq_begins[seq], L = shape.seq_begins[seq + 1] - s0;
      kg.resize(size_t(L * HD));
      gather_head(kg.data(), k, s0, L, NKV, g, HD);
      vgt.resize(size_t(L * HD));
      transpose_into(vgt.data(), v + (s0 * NKV + g) * HD, L, HD, NKV * HD);  // [HD × L]
      for (int64_t b0 = 0; b0 < L; b0 += B) {
        const int64_t nb = std::min(B, L - b0), nk = b0 + nb;
        qb.resize(size_t(nb * HD));
        gather_head(qb.data(), q, s0 + b0, nb, NH, h, HD);
        s.resize(size_t(nb * nk));
        mm(s.data(), qb.data(), kg.data(), nb, nk, HD, scratch);
        for (int64_t i = 0; i < nb; i++) {
          float* row = s.data() + i * nk;
          const int64_t valid = b0 + i + 1;
          float max = -INFINITY;
          for (int64_t j = 0; j < valid; j++) {
            row[j] *= scale;
            max = row[j] > max ? row[j] : max;
          }
          float total = 0.0f;
          for (int64_t j = 0; j < valid; j++) total += (row[j] = std::exp(row[j] - max));
          const float inv = 1.0f / total;
          for (int64_t j = 0; j < valid; j++) row[j] *= inv;
          for (int64_t j = valid; j < nk; j++) row[j] = 0.0f;
          lse[(s0 + b0 + i) * NH + h] = max + std::log(total);
        }
        // O = P · V: vᵀ rows restricted to the first nk keys.
        std::vector<float>& vb = qb;  // reuse: [HD × nk]
        vb.resize(size_t(HD * nk));
        for (int64_t d = 0; d < HD; d++) std::memcpy(vb.data() + d * nk, vgt.data() + d * L, size_t(nk) * sizeof(float));
        o.resize(size_t(nb * HD));
        mm(o.data(), s.data(), vb.data(), nb, HD, nk, scratch);
        for (int64_t i = 0; i < nb; i++) std::memcpy(out + ((s0 + b0 + i) * NH + h) * HD, o.data() + i * HD, size_t(HD) * sizeof(float));
      }
    }
  });
}

void causal_attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* out, const float* lse,
                               const float* q, const float* k, const float* v, const PackedAttentionShape& shape,
                               ThreadPool& pool) {
  const int64_t T = shape.T, NH = shape.NH, NKV = shape.NKV, HD = shape.HD, group = NH / NKV;
  const int64_t B = shape.block > 0 ? shape.block : 64;
  const float scale = 1.0f / std::sqrt(float(HD));
  std::memset(dk, 0, size_t(T * NKV * HD) * sizeof(float));
  std::memset(dv, 0, size_t(T * NKV * HD) * sizeof(float));
  // One unit per (KV head, sequence): it alone writes that head's dk / dv rows of that sequence
  // and the dq rows of its query heads, so the sums are deterministic.
  const int64_t units = NKV * shape.n_seq;
  pool.parallel_for(size_t(units), [&](size_t begin, size_t end, size_t) {
    std::vector<float> kg, vg, kbt, qb, qbt, dob, dobt, p, pt, dp, dst, tmp, dkg, dvg, scratch;
    for (int64_t u = int64_t(begin); u < int64_t(end); u++) {
      const int64_t g = u / shape.n_seq, seq = u % shape.n_seq;
      const int64_t s0 = shape.seq_begins[seq], L = shape.seq_begins[seq + 1] - s0;
      kg.resize(size_t(L * HD));
      vg.resize(size_t(L * HD));
      gather_head(kg.data(), k, s0, L, NKV, g, HD);
      gather_head(vg.data(), v, s0, L, NKV, g, HD);
      dkg.assign(size_t(L * HD), 0.0f);
      dvg.assign(size_t(L * HD), 0.0f);
      for (int64_t h = g * group; h < (g + 1) * group; h++) {
        for (int64_t b0 = 0; b0 < L; b0 += B) {
          const int64_t nb = std::min(B, L - b0), nk = b0 + nb;
          qb.resize(size_t(nb * HD));
          dob.resize(size_t(nb * HD));
          gather_head(qb.data(), q, s0 + b0, nb, NH, h, HD);
          gather_head(dob.data(), dout, s0 + b0, nb, NH, h, HD);
          // P from the saved log-sum-exp; dP = dO · Vᵀ; dS = P ⊙ (dP − Δ) · scale.
          p.resize(size_t(nb * nk));
          dp.resize(size_t(nb * nk));
          mm(p.data(), qb.data(), kg.data(), nb, nk, HD, scratch);
          mm(dp.data(), dob.data(), vg.data(), nb, nk, HD, scratch);
          for (int64_t i = 0; i < nb; i++) {
            const int64_t t = s0 + b0 + i, valid = b0 + i + 1;
            const float l = lse[t * NH + h];
            const float delta = dot(dout + (t * NH + h) * HD, out + (t * NH + h) * HD, HD);
            float* prow = p.data() + i * nk;
            float* dsrow = dp.data() + i * nk;
            for (int64_t j = 0; j < valid; j++) {
              prow[j] = std::exp(prow[j] * scale - l);
              dsrow[j] = prow[j] * (dsrow[j] - delta) * scale;
            }
            for (int64_t j = valid; j < nk; j++) prow[j] = dsrow[j] = 0.0f;
          }
          // dQ = dS · K  (Kᵀ of the first nk keys as [HD × nk])
          kbt.resize(size_t(HD * nk));
          transpose_into(kbt.data(), kg.data(), nk, HD, HD);
          tmp.resize(size_t(nb * HD));
          mm(tmp.data(), dp.data(), kbt.data(), nb, HD, nk, scratch);
          for (int64_t i = 0; i < nb; i++) std::memcpy(dq + ((s0 + b0 + i) * NH + h) * HD, tmp.data() + i * HD, size_t(HD) * sizeof(float));
          // dK += dSᵀ · Q, dV += Pᵀ · dO  ([nk × HD] each)
          dst.resize(size_t(nk * nb));
          pt.resize(size_t(nk * nb));
          transpose_into(dst.data(), dp.data(), nb, nk, nk);
          transpose_into(pt.data(), p.data(), nb, nk, nk);
          qbt.resize(size_t(HD * nb));
          dobt.resize(size_t(HD * nb));
          transpose_into(qbt.data(), qb.data(), nb, HD, HD);
          transpose_into(dobt.data(), dob.data(), nb, HD, HD);
          tmp.resize(size_t(nk * HD));
          mm(tmp.data(), dst.data(), qbt.data(), nk, HD, nb, scratch);
          for (size_t i = 0; i < size_t(nk * HD); i++) dkg[i] += tmp[i];
          mm(tmp.data(), pt.data(), dobt.data(), nk, HD, nb, scratch);
          for (size_t i = 0; i < size_t(nk * HD); i++) dvg[i] += tmp[i];
        }
      }
      for (int64_t r = 0; r < L; r++) {
        std::memcpy(dk + ((s0 + r) * NKV + g) * HD, dkg.data() + r * HD, size_t(HD) * sizeof(float));
        std::memcpy(dv + ((s0 + r) * NKV + g) * HD, dvg.data() + r * HD, size_t(HD) * sizeof(float));
      }
    }
  });
}

}  // namespace s3::cpu
