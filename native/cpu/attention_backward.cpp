// attention_backward.cpp: the implementation of cpu/attention_backward.h (see the header for the contract and layouts).
#include "cpu/attention_backward.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/grow_only.h"
#include "core/ops/packed_attention.h"
#include "cpu/attention_backward_rows.h"
#include "cpu/kernel_select.h"
#include "cpu/attention_train_products.h"

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
  return ops::packed_sequence_of(shape.seq_begins, shape.n_seq, t);
}

// The rows a query of sequence seq sees, in key order (core/ops/packed_attention.h).
template <typename Visit>
void visit_visible_rows(const PackedAttentionShape& shape, int64_t seq, int64_t t, Visit&& visit) {
  const ops::VisibleKeys keys = ops::visible_keys(shape.seq_begins, shape.seq_parent, seq, t);
  for (int64_t j = 0; j < keys.count; j++) visit(ops::visible_key_row(keys, j));
}

}  // namespace

void causal_attention_train_forward_rowwise(float* out, float* lse, const float* q, const float* k, const float* v,
                                    const PackedAttentionShape& shape, ThreadPool& pool) {
  const int64_t T = shape.T, NH = shape.NH, NKV = shape.NKV, HD = shape.HD, group = NH / NKV;
  const float scale = 1.0f / std::sqrt(float(HD));
  pool.parallel_for(size_t(T), [&](size_t begin, size_t end, size_t) {
    std::vector<float> scores;
    std::vector<int64_t> rows;
    for (int64_t t = int64_t(begin); t < int64_t(end); t++) {
      rows.clear();
      visit_visible_rows(shape, sequence_of(shape, t), t, [&](int64_t s) { rows.push_back(s); });
      scores.resize(rows.size());
      for (int64_t h = 0; h < NH; h++) {
        const int64_t g = h / group;
        const float* qh = q + (t * NH + h) * HD;
        float max = -INFINITY;
        for (size_t j = 0; j < rows.size(); j++) {
          const float score = dot(qh, k + (rows[j] * NKV + g) * HD, HD) * scale;
          scores[j] = score;
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
        for (size_t j = 0; j < rows.size(); j++) {
          const float p = scores[j] * inv;
          const float* vs = v + (rows[j] * NKV + g) * HD;
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
  // One unit per KV head: it alone writes that head's dk / dv rows (a parent's rows collect its
  // children's terms too) and the dq rows of its query heads, so the sums are deterministic.
  pool.parallel_for(size_t(NKV), [&](size_t begin, size_t end, size_t) {
    for (int64_t g = int64_t(begin); g < int64_t(end); g++) {
      for (int64_t seq = 0; seq < shape.n_seq; seq++) {
        for (int64_t h = g * group; h < (g + 1) * group; h++) {
          for (int64_t t = shape.seq_begins[seq]; t < shape.seq_begins[seq + 1]; t++) {
            const float* qh = q + (t * NH + h) * HD;
            const float* doh = dout + (t * NH + h) * HD;
            const float delta = dot(doh, out + (t * NH + h) * HD, HD);
            const float l = lse[t * NH + h];
            float* dqh = dq + (t * NH + h) * HD;
            visit_visible_rows(shape, seq, t, [&](int64_t s) {
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
            });
          }
        }
      }
    }
  });
}

namespace {

float softmax_exp_scalar(float* row, int64_t n, float scale, float* max_out) {
  float max = -INFINITY;
  for (int64_t j = 0; j < n; j++) max = row[j] * scale > max ? row[j] * scale : max;
  float total = 0.0f;
  for (int64_t j = 0; j < n; j++) total += (row[j] = std::exp(row[j] * scale - max));
  *max_out = max;
  return total;
}

void probs_and_grad_scalar(float* p, float* ds, int64_t n, float scale, float lse, float delta) {
  for (int64_t j = 0; j < n; j++) {
    p[j] = std::exp(p[j] * scale - lse);
    ds[j] = p[j] * (ds[j] - delta) * scale;
  }
}

const AttentionRowKernels kAttentionRowsScalar = {"scalar", softmax_exp_scalar, probs_and_grad_scalar};

}  // namespace

const AttentionRowKernels* attention_row_kernels_for(SimdLevel level) {
  return select_kernels<AttentionRowKernels>({&kAttentionRowsScalar, &kAttentionRowsAvx2, &kAttentionRowsAvx512}, level);
}

const AttentionRowKernels& attention_row_kernels() {
  static const AttentionRowKernels& chosen = *attention_row_kernels_for(cpu_info().level);
  return chosen;
}

namespace {

// dst[cols × rows] = srcᵀ, src [rows × cols] with row stride ld.
void transpose_into(float* dst, const float* src, int64_t rows, int64_t cols, int64_t ld) {
  for (int64_t r = 0; r < rows; r++) {
    for (int64_t c = 0; c < cols; c++) dst[c * rows + r] = src[r * ld + c];
  }
}

// The keys and values of KV head g that sequence seq's queries see, gathered contiguously: the
// parent's rows (P of them, none without a parent) and then the sequence's own L rows, each as
// [rows × HD] and transposed as [HD × rows].
struct VisibleKeys {
  std::vector<float> k, v, kt, vt;
  int64_t P = 0, L = 0;

  AttentionUnitKeys view(int64_t HD) const {
    return {k.data(), v.data(), kt.data(), vt.empty() ? nullptr : vt.data(), P + L, HD};
  }

  void gather(const PackedAttentionShape& shape, const float* keys, const float* values, int64_t seq, int64_t g,
              bool transpose_values) {
    const int64_t NKV = shape.NKV, HD = shape.HD;
    const int64_t parent = attention_parent(shape, seq);
    const int64_t p0 = parent >= 0 ? shape.seq_begins[parent] : 0;
    P = parent >= 0 ? shape.seq_begins[parent + 1] - p0 : 0;
    const int64_t s0 = shape.seq_begins[seq];
    L = shape.seq_begins[seq + 1] - s0;
    const int64_t n = P + L;
    k.resize(size_t(n * HD));
    v.resize(size_t(n * HD));
    for (int64_t r = 0; r < n; r++) {
      const int64_t row = r < P ? p0 + r : s0 + (r - P);
      std::memcpy(k.data() + r * HD, keys + (row * NKV + g) * HD, size_t(HD) * sizeof(float));
      std::memcpy(v.data() + r * HD, values + (row * NKV + g) * HD, size_t(HD) * sizeof(float));
    }
    kt.resize(size_t(n * HD));
    transpose_into(kt.data(), k.data(), n, HD, HD);  // Kᵀ [HD × n]
    if (transpose_values) {
      vt.resize(size_t(n * HD));
      transpose_into(vt.data(), v.data(), n, HD, HD);
    }
  }
};

}  // namespace

void causal_attention_train_forward(float* out, float* lse, const float* q, const float* k, const float* v,
                                    const PackedAttentionShape& shape, ThreadPool& pool,
                                    const AttentionTrainPrecision& products_precision) {
  const int64_t NH = shape.NH, NKV = shape.NKV, HD = shape.HD, group = NH / NKV;
  const int64_t B = shape.block > 0 ? shape.block : 64;
  const float scale = 1.0f / std::sqrt(float(HD));
  const AttentionRowKernels& rows = attention_row_kernels();
  // One unit per (KV head, sequence): its keys and values gathered and packed once for the query
  // heads that share them.
  const int64_t units = NKV * shape.n_seq;
  pool.parallel_for(size_t(units), [&](size_t begin, size_t end, size_t) {
    VisibleKeys keys;
    AttentionTrainProducts& products = thread_attention_train_products(products_precision);
    std::vector<float> s, inv(static_cast<size_t>(B));
    std::vector<int64_t> valid(static_cast<size_t>(B));
    for (int64_t u = int64_t(begin); u < int64_t(end); u++) {
      const int64_t g = u / shape.n_seq, seq = u % shape.n_seq;
      const int64_t s0 = shape.seq_begins[seq];
      keys.gather(shape, k, v, seq, g, false);
      products.start_unit(keys.view(HD));
      const int64_t P = keys.P, L = keys.L;
      for (int64_t h = g * group; h < (g + 1) * group; h++) {
        for (int64_t b0 = 0; b0 < L; b0 += B) {
          const int64_t nb = std::min(B, L - b0), nk = P + b0 + nb;
          const float* qb = q + ((s0 + b0) * NH + h) * HD;
          // S = Q_b · Kᵀ over the first nk visible keys: [nb × nk].
          hold_at_least(s, nb * nk);
          products.scores(s.data(), qb, NH * HD, nb, nk);
          for (int64_t i = 0; i < nb; i++) {
            float* row = s.data() + i * nk;
            valid[size_t(i)] = P + b0 + i + 1;
            float max;
            const float total = rows.softmax_exp(row, valid[size_t(i)], scale, &max);
            inv[size_t(i)] = 1.0f / total;
            lse[(s0 + b0 + i) * NH + h] = max + std::log(total);
          }
          // O_b = P · V (P = the exps × inv, normalized as the products read them), written straight
          // into out's rows of head h.
          products.weighted_values(out + ((s0 + b0) * NH + h) * HD, NH * HD, s.data(), inv.data(), valid.data(), nb, nk);
        }
      }
    }
  });
}

void causal_attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* out, const float* lse,
                               const float* q, const float* k, const float* v, const PackedAttentionShape& shape,
                               ThreadPool& pool, const AttentionTrainPrecision& products_precision) {
  const int64_t T = shape.T, NH = shape.NH, NKV = shape.NKV, HD = shape.HD, group = NH / NKV;
  const int64_t B = shape.block > 0 ? shape.block : 64;
  const float scale = 1.0f / std::sqrt(float(HD));
  std::memset(dk, 0, size_t(T * NKV * HD) * sizeof(float));
  std::memset(dv, 0, size_t(T * NKV * HD) * sizeof(float));
  // A child's gradients for its parent's rows wait in parent_terms (one [P × HD] slab per (child,
  // KV head), for keys and for values) until every unit is done.
  std::vector<int64_t> slab(size_t(shape.n_seq + 1), 0);
  for (int64_t seq = 0; seq < shape.n_seq; seq++) {
    const int64_t parent = attention_parent(shape, seq);
    const int64_t P = parent >= 0 ? shape.seq_begins[parent + 1] - shape.seq_begins[parent] : 0;
    slab[size_t(seq + 1)] = slab[size_t(seq)] + P * NKV * HD;
  }
  std::vector<float> parent_dk(size_t(slab.back())), parent_dv(size_t(slab.back()));
  // One unit per (KV head, sequence): it alone writes that head's dk / dv rows of that sequence
  // (its parent's in its own slab) and the dq rows of its query heads, in a fixed order.
  const AttentionRowKernels& rows = attention_row_kernels();
  const int64_t units = NKV * shape.n_seq;
  pool.parallel_for(size_t(units), [&](size_t begin, size_t end, size_t) {
    VisibleKeys keys;
    AttentionTrainProducts& products = thread_attention_train_products(products_precision);
    std::vector<float> p, ds, dkv, dvv;
    for (int64_t u = int64_t(begin); u < int64_t(end); u++) {
      const int64_t g = u / shape.n_seq, seq = u % shape.n_seq;
      const int64_t s0 = shape.seq_begins[seq];
      keys.gather(shape, k, v, seq, g, true);
      products.start_unit(keys.view(HD));
      const int64_t P = keys.P, L = keys.L, n = P + L;
      dkv.resize(size_t(n * HD));  // dK, dV of the visible rows
      dvv.resize(size_t(n * HD));
      for (int64_t h = g * group; h < (g + 1) * group; h++) {
        for (int64_t b0 = 0; b0 < L; b0 += B) {
          const int64_t nb = std::min(B, L - b0), nk = P + b0 + nb;
          const float* qb = q + ((s0 + b0) * NH + h) * HD;
          const float* dob = dout + ((s0 + b0) * NH + h) * HD;
          // P from the saved log-sum-exp; dP = dO · Vᵀ; dS = P ⊙ (dP − Δ) · scale.
          hold_at_least(p, nb * nk);
          hold_at_least(ds, nb * nk);
          products.scores(p.data(), qb, NH * HD, nb, nk);
          products.value_scores(ds.data(), dob, NH * HD, nb, nk);
          for (int64_t i = 0; i < nb; i++) {
            const int64_t t = s0 + b0 + i, valid = P + b0 + i + 1;
            const float l = lse[t * NH + h];
            const float delta = dot(dout + (t * NH + h) * HD, out + (t * NH + h) * HD, HD);
            float* prow = p.data() + i * nk;
            float* dsrow = ds.data() + i * nk;
            rows.probs_and_grad(prow, dsrow, valid, scale, l, delta);
            for (int64_t j = valid; j < nk; j++) prow[j] = dsrow[j] = 0.0f;
          }
          // dQ_b = dS · K; dK += dSᵀ · Q_b; dV += Pᵀ · dO_b (how the transposes are read: attention_train_products.h).
          products.score_grads(dq + ((s0 + b0) * NH + h) * HD, NH * HD, ds.data(), p.data(), qb, NH * HD, dob, NH * HD, nb, nk);
        }
      }
      products.key_value_grads(dkv.data(), dvv.data());
      for (int64_t r = 0; r < L; r++) {
        std::memcpy(dk + ((s0 + r) * NKV + g) * HD, dkv.data() + (P + r) * HD, size_t(HD) * sizeof(float));
        std::memcpy(dv + ((s0 + r) * NKV + g) * HD, dvv.data() + (P + r) * HD, size_t(HD) * sizeof(float));
      }
      if (P > 0) {
        float* pk = parent_dk.data() + slab[size_t(seq)] + g * P * HD;
        float* pv = parent_dv.data() + slab[size_t(seq)] + g * P * HD;
        std::memcpy(pk, dkv.data(), size_t(P * HD) * sizeof(float));
        std::memcpy(pv, dvv.data(), size_t(P * HD) * sizeof(float));
      }
    }
  });
  if (slab.back() == 0) return;
  // Each parent's rows of head g gather their children's terms, child by child in index order.
  pool.parallel_for(size_t(units), [&](size_t begin, size_t end, size_t) {
    for (int64_t u = int64_t(begin); u < int64_t(end); u++) {
      const int64_t g = u / shape.n_seq, parent = u % shape.n_seq;
      const int64_t p0 = shape.seq_begins[parent], P = shape.seq_begins[parent + 1] - p0;
      for (int64_t child = parent + 1; child < shape.n_seq; child++) {
        if (attention_parent(shape, child) != parent) continue;
        const float* pk = parent_dk.data() + slab[size_t(child)] + g * P * HD;
        const float* pv = parent_dv.data() + slab[size_t(child)] + g * P * HD;
        for (int64_t r = 0; r < P; r++) {
          float* dkr = dk + ((p0 + r) * NKV + g) * HD;
          float* dvr = dv + ((p0 + r) * NKV + g) * HD;
          for (int64_t d = 0; d < HD; d++) {
            dkr[d] += pk[r * HD + d];
            dvr[d] += pv[r * HD + d];
          }
        }
      }
    }
  });
}

}  // namespace s3::cpu
