// attention_train_products.cpp: the f32 and BF16 products of cpu/attention_train_products.h.
#include "cpu/attention_train_products.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/aligned_allocator.h"
#include "core/cpu_features.h"
#include "core/dtype.h"
#include "core/grow_only.h"
#include "cpu/convert.h"
#include "cpu/matmul_nn.h"

namespace s3::cpu {
namespace {

// C[M × N] (+)= A · B on this thread, every operand addressed through its strides (see matmul_nn.h).
void product(float* c, int64_t ldc, const float* a, int64_t a_row, int64_t a_col, const float* b, int64_t ldb, int64_t M,
             int64_t N, int64_t K, bool accumulate) {
  MatmulNnArgs args = matmul_nn_args(c, a, b, M, N, K, accumulate);
  args.a_row = a_row;
  args.a_col = a_col;
  args.ldb = ldb;
  args.ldc = ldc;
  matmul_nn_serial(args);
}

// e's rows (nk apart) in place: e[j] × inv[i] for j < valid[i], then 0.
void normalize_rows(float* e, const float* inv, const int64_t* valid, int64_t nb, int64_t nk) {
  for (int64_t i = 0; i < nb; i++) {
    float* row = e + i * nk;
    for (int64_t j = 0; j < valid[i]; j++) row[j] *= inv[i];
    for (int64_t j = valid[i]; j < nk; j++) row[j] = 0.0f;
  }
}

class F32Products : public AttentionTrainProducts {
 public:
  void start_unit(const AttentionUnitKeys& keys) override {
    keys_ = keys;
    if (keys.vt == nullptr) return;  // the forward's unit: no gradients
    dk_.assign(size_t(keys.n * keys.HD), 0.0f);
    dv_.assign(size_t(keys.n * keys.HD), 0.0f);
  }
  void scores(float* s, const float* q, int64_t ldq, int64_t nb, int64_t nk) override {
    product(s, nk, q, ldq, 1, keys_.kt, keys_.n, nb, nk, keys_.HD, false);
  }
  void value_scores(float* dp, const float* dout, int64_t ld, int64_t nb, int64_t nk) override {
    product(dp, nk, dout, ld, 1, keys_.vt, keys_.n, nb, nk, keys_.HD, false);
  }
  void weighted_values(float* o, int64_t ldo, float* e, const float* inv, const int64_t* valid, int64_t nb,
                       int64_t nk) override {
    normalize_rows(e, inv, valid, nb, nk);
    probabilities_times_values(o, ldo, e, nb, nk);
  }
  void score_grads(float* dq, int64_t ld_dq, const float* ds, const float* p, const float* q, int64_t ldq,
                   const float* dout, int64_t ld, int64_t nb, int64_t nk) override {
    const int64_t HD = keys_.HD;
    product(dq, ld_dq, ds, nk, 1, keys_.k, HD, nb, HD, nk, false);
    product(dk_.data(), HD, ds, 1, nk, q, ldq, nk, HD, nb, true);
    product(dv_.data(), HD, p, 1, nk, dout, ld, nk, HD, nb, true);
  }
  void key_value_grads(float* dk, float* dv) override {
    std::copy(dk_.begin(), dk_.end(), dk);
    std::copy(dv_.begin(), dv_.end(), dv);
  }

 protected:
  // O = P · V for normalized probabilities P [nb × nk].
  void probabilities_times_values(float* o, int64_t ldo, const float* p, int64_t nb, int64_t nk) {
    product(o, ldo, p, nk, 1, keys_.v, keys_.HD, nb, keys_.HD, nk, false);
  }

 private:
  AttentionUnitKeys keys_{};
  std::vector<float> dk_, dv_;
};

// F32Products on copies of the operands rounded to BF16 (the levels without BF16 kernels).
class RoundedF32Products final : public F32Products {
 public:
  void start_unit(const AttentionUnitKeys& keys) override {
    round(k_, keys.k, keys.n * keys.HD);
    round(v_, keys.v, keys.n * keys.HD);
    round(kt_, keys.kt, keys.n * keys.HD);
    if (keys.vt != nullptr) round(vt_, keys.vt, keys.n * keys.HD);
    HD_ = keys.HD;
    F32Products::start_unit({k_.data(), v_.data(), kt_.data(), keys.vt != nullptr ? vt_.data() : nullptr, keys.n, keys.HD});
  }
  void scores(float* s, const float* q, int64_t ldq, int64_t nb, int64_t nk) override {
    F32Products::scores(s, round_rows(a_, q, ldq, nb, HD_), HD_, nb, nk);
  }
  void value_scores(float* dp, const float* dout, int64_t ld, int64_t nb, int64_t nk) override {
    F32Products::value_scores(dp, round_rows(a_, dout, ld, nb, HD_), HD_, nb, nk);
  }
  void weighted_values(float* o, int64_t ldo, float* e, const float* inv, const int64_t* valid, int64_t nb,
                       int64_t nk) override {
    normalize_rows(e, inv, valid, nb, nk);
    probabilities_times_values(o, ldo, round_rows(a_, e, nk, nb, nk), nb, nk);
  }
  void score_grads(float* dq, int64_t ld_dq, const float* ds, const float* p, const float* q, int64_t ldq,
                   const float* dout, int64_t ld, int64_t nb, int64_t nk) override {
    const float* dsr = round_rows(a_, ds, nk, nb, nk);
    const float* pr = round_rows(b_, p, nk, nb, nk);
    const float* qr = round_rows(c_, q, ldq, nb, HD_);
    const float* doutr = round_rows(d_, dout, ld, nb, HD_);
    F32Products::score_grads(dq, ld_dq, dsr, pr, qr, HD_, doutr, HD_, nb, nk);
  }

 private:
  static void round(std::vector<float>& out, const float* in, int64_t count) {
    out.resize(size_t(count));
    for (int64_t i = 0; i < count; i++) out[size_t(i)] = bf16_to_f32(f32_to_bf16(in[i]));
  }
  // rows [M × K] of src (rows ld apart) rounded, contiguous.
  static const float* round_rows(std::vector<float>& out, const float* src, int64_t ld, int64_t M, int64_t K) {
    out.resize(size_t(M * K));
    for (int64_t i = 0; i < M; i++) {
      for (int64_t k = 0; k < K; k++) out[size_t(i * K + k)] = bf16_to_f32(f32_to_bf16(src[i * ld + k]));
    }
    return out.data();
  }
  std::vector<float> k_, v_, kt_, vt_, a_, b_, c_, d_;
  int64_t HD_ = 0;
};

// B operand: pair rows of a row-major f32 matrix [K × count] (rows ld apart), in the kernels' layout.
struct PairRows {
  CacheLineVector<uint16_t> values;
  int64_t ldb = 0, panel = 0;  // panel: MatmulNnBf16Args::b_panel (a product may use fewer than K rows)
  void pack(const MatmulNnBf16Kernels& kernels, const float* src, int64_t ld, int64_t K, int64_t count) {
    const MatmulNnBf16Sizes sizes = matmul_nn_bf16_sizes(kernels, 1, count, K);
    ldb = sizes.ldb;
    panel = sizes.b_panel;
    hold_at_least(values, sizes.b_values);
    for (int64_t q = 0; q < sizes.pair_rows; q++) matmul_nn_pack_pair_row(kernels, src, ld, K, count, values.data(), sizes, q);
  }
};

// A operand: BF16 rows of an f32 matrix [M × K] read through its strides (element (i, k) at
// src[i × row + k × col]), in the kernels' layout; for tile kernels straight into the tiles
// (matmul_nn_pack_a_tile_block).
struct BF16Rows {
  CacheLineVector<uint16_t> values;
  std::vector<uint16_t> row;
  int64_t a_row = 0;
  void pack(const MatmulNnBf16Kernels& kernels, const float* src, int64_t row_stride, int64_t col, int64_t M, int64_t K) {
    const MatmulNnBf16Sizes sizes = matmul_nn_bf16_sizes(kernels, M, 1, K);
    a_row = sizes.a_row;
    hold_at_least(values, sizes.a_values);
    row.resize(size_t(a_row));
    if (kernels.tiles) {
      const int64_t steps = a_row / kMatmulNnTileK;
      for (int64_t i = 0; i < sizes.a_rows; i += kMatmulNnTileRows) {
        matmul_nn_pack_a_tile_block(kernels, src, row_stride, col, M, K, i, steps,
                                    values.data() + (i / kMatmulNnTileRows) * steps * kMatmulNnTileValues);
      }
      return;
    }
    for (int64_t i = 0; i < sizes.a_rows; i++) {
      std::fill(row.begin(), row.end(), uint16_t(0));
      if (i < M && col == 1) {
        convert_kernels().f32_to_bf16(src + i * row_stride, row.data(), size_t(K));
      } else if (i < M) {
        for (int64_t k = 0; k < K; k++) row[size_t(k)] = f32_to_bf16(src[i * row_stride + k * col]);
      }
      matmul_nn_place_a_row(kernels, row.data(), i, a_row, values.data());
    }
  }
  // The probabilities of weighted_values (e [M × K] rows K apart, row i scaled by inv[i] over its
  // first valid[i] values, 0 past them), each scaled and rounded in one pass.
  void pack_probabilities(const MatmulNnBf16Kernels& kernels, const float* e, const float* inv, const int64_t* valid,
                          int64_t M, int64_t K) {
    const MatmulNnBf16Sizes sizes = matmul_nn_bf16_sizes(kernels, M, 1, K);
    a_row = sizes.a_row;
    hold_at_least(values, sizes.a_values);
    row.resize(size_t(a_row));
    const ConvertKernels& convert = convert_kernels();
    for (int64_t i = 0; i < sizes.a_rows; i++) {
      const int64_t n = i < M ? valid[i] : 0;
      convert.f32_to_bf16_scaled(e + i * K, i < M ? inv[i] : 0.0f, row.data(), size_t(n));
      std::fill(row.begin() + n, row.end(), uint16_t(0));
      matmul_nn_place_a_row(kernels, row.data(), i, a_row, values.data());
    }
  }
};

// Queries whose dS and P rows the tile kernels' dKᵀ and dVᵀ products wait for (a multiple of the
// 32-value step of k), so each C tile is loaded and stored once per this many queries of a head
// rather than once per block.
constexpr int64_t kDeferredQueries = 512;

// Floats added to the row stride of the tile products' C buffers whose rows would otherwise lie a
// multiple of 4 KiB apart (keys × 4 bytes, 1,024 keys and up): rows on one L1 set evict each other.
constexpr int64_t kRowPadding = 16;

class Bf16Products final : public AttentionTrainProducts {
 public:
  explicit Bf16Products(const MatmulNnBf16Kernels& kernels) : kernels_(kernels) {}

  void start_unit(const AttentionUnitKeys& keys) override {
    n_ = keys.n;
    HD_ = keys.HD;
    deferred_rows_ = 0;
    pending_ = false;
    kt_pairs_.pack(kernels_, keys.kt, n_, HD_, n_);  // B of S = Q·Kᵀ: pairs of head dimensions
    v_pairs_.pack(kernels_, keys.v, HD_, n_, HD_);   // B of O = P·V
    if (keys.vt == nullptr) return;  // the forward's unit: no gradients
    k_pairs_.pack(kernels_, keys.k, HD_, n_, HD_);   // B of dQ = dS·K: pairs of keys
    vt_pairs_.pack(kernels_, keys.vt, n_, HD_, n_);  // B of dP = dO·Vᵀ
    ldt_ = n_ + kRowPadding;
    dkt_.assign(size_t(HD_ * ldt_), 0.0f);
    dvt_.assign(size_t(HD_ * ldt_), 0.0f);
  }
  void scores(float* s, const float* q, int64_t ldq, int64_t nb, int64_t nk) override {
    a_.pack(kernels_, q, ldq, 1, nb, HD_);
    run(s, nk, a_, kt_pairs_, nb, nk, HD_, false);
  }
  void value_scores(float* dp, const float* dout, int64_t ld, int64_t nb, int64_t nk) override {
    a_.pack(kernels_, dout, ld, 1, nb, HD_);
    run(dp, nk, a_, vt_pairs_, nb, nk, HD_, false);
  }
  void weighted_values(float* o, int64_t ldo, float* e, const float* inv, const int64_t* valid, int64_t nb,
                       int64_t nk) override {
    a_.pack_probabilities(kernels_, e, inv, valid, nb, nk);
    run(o, ldo, a_, v_pairs_, nb, HD_, nk, false);
  }
  // dQ_b = dS · K on dS's BF16 rows; dKᵀ [HD × nk] += Q_bᵀ · dS and dVᵀ += dO_bᵀ · P: A the block's
  // queries read transposed, B the score rows paired over the block's queries. With tile kernels
  // the pairs wait (defer), dS's taken from its rows' tiles rather than rounded again, and the
  // products run over up to kDeferredQueries queries at once.
  void score_grads(float* dq, int64_t ld_dq, const float* ds, const float* p, const float* q, int64_t ldq,
                   const float* dout, int64_t ld, int64_t nb, int64_t nk) override {
    ds_rows_.pack(kernels_, ds, nk, 1, nb, nk);
    run(dq, ld_dq, ds_rows_, k_pairs_, nb, HD_, nk, false);
    if (kernels_.tiles) {
      defer(ds, p, q, ldq, dout, ld, nb, nk);
      return;
    }
    a_.pack(kernels_, q, 1, ldq, HD_, nb);
    b_.pack(kernels_, ds, nk, nb, nk);
    run(dkt_.data(), ldt_, a_, b_, HD_, nk, nb, true);
    a_.pack(kernels_, dout, 1, ld, HD_, nb);
    b_.pack(kernels_, p, nk, nb, nk);
    run(dvt_.data(), ldt_, a_, b_, HD_, nk, nb, true);
  }
  void key_value_grads(float* dk, float* dv) override {
    flush_deferred();
    for (int64_t j = 0; j < n_; j++) {
      for (int64_t d = 0; d < HD_; d++) {
        dk[j * HD_ + d] = dkt_[size_t(d * ldt_ + j)];
        dv[j * HD_ + d] = dvt_[size_t(d * ldt_ + j)];
      }
    }
  }

 private:
  void run(float* c, int64_t ldc, const BF16Rows& a, const PairRows& b, int64_t M, int64_t N, int64_t K, bool accumulate) {
    MatmulNnBf16Args args;
    args.c = c;
    args.a = a.values.data();
    args.b = b.values.data();
    args.M = M;
    args.N = N;
    args.K = K;
    args.a_row = a.a_row;
    args.a_pair = 2;
    args.ldb = b.ldb;
    args.b_panel = b.panel;
    args.ldc = ldc;
    args.accumulate = accumulate;
    kernels_.columns(args, 0, N);
  }

  // Places one block's dS and P rows after the waiting ones (tile kernels), running the waiting
  // products first when the block does not continue them (another head) or would overflow them.
  // Row r of the waiting queries sees keys [0, base + r + 1) (its block's nk − nb + its index + 1);
  // pairs are formed from the first waiting row, an odd last row waiting (pending) for its partner.
  void defer(const float* ds, const float* p, const float* q, int64_t ldq, const float* dout, int64_t ld, int64_t nb,
             int64_t nk) {
    const bool continues = deferred_rows_ > 0 && q == deferred_q_ + deferred_rows_ * ldq &&
                           dout == deferred_dout_ + deferred_rows_ * ld && ldq == deferred_ldq_ && ld == deferred_ld_ &&
                           nk - nb == deferred_base_ + deferred_rows_;
    if (deferred_rows_ > 0 && (!continues || deferred_rows_ + nb > deferred_capacity_)) flush_deferred();
    if (deferred_rows_ == 0) {
      deferred_q_ = q;
      deferred_dout_ = dout;
      deferred_ldq_ = ldq;
      deferred_ld_ = ld;
      deferred_base_ = nk - nb;
      deferred_capacity_ = std::max(kDeferredQueries, (nb + kMatmulNnTileK - 1) / kMatmulNnTileK * kMatmulNnTileK);
      deferred_ldb_ = 2 * round_up_32(n_);
      // Columns any waiting row can reach, zero-filled past each row's own keys.
      deferred_reach_ = round_up_32(std::min(n_, deferred_base_ + deferred_capacity_));
      const size_t values = size_t(deferred_capacity_ / 2 * deferred_ldb_);
      deferred_ds_.resize(values);
      deferred_p_.resize(values);
    }
    const int64_t r0 = deferred_rows_;
    int64_t i = 0;
    if (pending_) {  // r0 is odd: the waiting row pairs with this block's first
      place_pair(pending_ds_.data(), ds, pending_p_.data(), p, nk, (r0 - 1) / 2);
      pending_ = false;
      i = 1;
    }
    for (; i + 1 < nb; i += 2) {  // dS's pair from its rows' tiles (ds_rows_: this block's rows, rounded once)
      const int64_t pair = (r0 + i) / 2;
      matmul_nn_place_pair_tile_row_from_a(kernels_, ds_rows_.values.data(), ds_rows_.a_row, i, pair_tile_row(deferred_ds_.data(), pair),
                                           deferred_tile_stride(), deferred_reach_ / kMatmulNnTileRows);
      place_pair_row(deferred_p_.data(), p + i * nk, p + (i + 1) * nk, nk, pair);
    }
    if (i < nb) {
      pending_ds_.assign(size_t(n_), 0.0f);
      pending_p_.assign(size_t(n_), 0.0f);
      std::copy(ds + i * nk, ds + (i + 1) * nk, pending_ds_.begin());
      std::copy(p + i * nk, p + (i + 1) * nk, pending_p_.begin());
      pending_ = true;
    }
    deferred_rows_ += nb;
    deferred_nk_ = nk;
  }

  // Pair row `pair` of the waiting dS and P tiles: rows even and odd (null: zeros) over `count`
  // keys, zero up to the reachable columns.
  void place_pair(const float* ds_even, const float* ds_odd, const float* p_even, const float* p_odd, int64_t count,
                  int64_t pair) {
    place_pair_row(deferred_ds_.data(), ds_even, ds_odd, count, pair);
    place_pair_row(deferred_p_.data(), p_even, p_odd, count, pair);
  }
  void place_pair_row(uint16_t* tiles, const float* even, const float* odd, int64_t count, int64_t pair) {
    matmul_nn_place_pair_tile_row(kernels_, even, odd, count, pair_tile_row(tiles, pair), deferred_tile_stride(),
                                  deferred_reach_ / kMatmulNnTileRows);
  }
  // Where pair row `pair` of the waiting tiles starts (in its first 16-column block), and the
  // values from one block to the next.
  static uint16_t* pair_tile_row(uint16_t* tiles, int64_t pair) {
    return tiles + (pair / kMatmulNnTileRows) * kMatmulNnTileValues + (pair % kMatmulNnTileRows) * kMatmulNnTileK;
  }
  int64_t deferred_tile_stride() const { return deferred_capacity_ / kMatmulNnTileK * kMatmulNnTileValues; }

  // The waiting products: dKᵀ += Qᵀ · dS and dVᵀ += dOᵀ · P over the waiting queries, each run of
  // 32 key columns from the first step of 32 queries that can see any of them.
  void flush_deferred() {
    if (deferred_rows_ == 0) return;
    const int64_t rows = deferred_rows_;
    if (pending_) place_pair(pending_ds_.data(), nullptr, pending_p_.data(), nullptr, deferred_nk_, (rows - 1) / 2);
    pending_ = false;
    const int64_t steps = (rows + kMatmulNnTileK - 1) / kMatmulNnTileK;
    for (int64_t pair = (rows + 1) / 2; pair < steps * kMatmulNnTileRows; pair++) {  // zeros past the last row
      place_pair(nullptr, nullptr, nullptr, nullptr, 0, pair);
    }
    const int64_t nk = deferred_nk_, base = deferred_base_;
    const auto first_step = [&](int64_t j0) { return std::max<int64_t>(0, j0 - base) / kMatmulNnTileK; };
    for (const bool keys : {true, false}) {
      a_.pack(kernels_, keys ? deferred_q_ : deferred_dout_, 1, keys ? deferred_ldq_ : deferred_ld_, HD_, rows);
      MatmulNnBf16Args args;
      args.c = keys ? dkt_.data() : dvt_.data();
      args.a = a_.values.data();
      args.b = keys ? deferred_ds_.data() : deferred_p_.data();
      args.M = HD_;
      args.N = nk;
      args.K = rows;
      args.a_row = a_.a_row;
      args.a_pair = 2;
      args.ldb = deferred_ldb_;
      args.b_panel = deferred_tile_stride();
      args.ldc = ldt_;
      args.accumulate = true;
      for (int64_t j0 = 0; j0 < nk;) {
        int64_t j1 = j0 + kMatmulNnTileK;
        while (j1 < nk && first_step(j1) == first_step(j0)) j1 += kMatmulNnTileK;
        args.first_step = first_step(j0);
        kernels_.columns(args, j0, std::min(j1, nk));
        j0 = j1;
      }
    }
    deferred_rows_ = 0;
  }

  static int64_t round_up_32(int64_t x) { return (x + kMatmulNnTileK - 1) / kMatmulNnTileK * kMatmulNnTileK; }

  const MatmulNnBf16Kernels& kernels_;
  int64_t n_ = 0, HD_ = 0;
  // The waiting dS and P rows (tile kernels; defer()): their B tiles, deferred_capacity_ / 2 pair
  // rows of deferred_ldb_ values; the first waiting query's rows of q and dout; the row counts.
  CacheLineVector<uint16_t> deferred_ds_, deferred_p_;
  std::vector<float> pending_ds_, pending_p_;
  bool pending_ = false;
  const float *deferred_q_ = nullptr, *deferred_dout_ = nullptr;
  int64_t deferred_ldq_ = 0, deferred_ld_ = 0, deferred_rows_ = 0, deferred_capacity_ = 0, deferred_base_ = 0;
  int64_t deferred_nk_ = 0, deferred_reach_ = 0, deferred_ldb_ = 0;
  int64_t ldt_ = 0;  // dKᵀ's and dVᵀ's rows: n_ plus a cache line, so a C tile's 16 rows do not share one L1 set
  PairRows kt_pairs_, k_pairs_, v_pairs_, vt_pairs_, b_;
  BF16Rows a_, ds_rows_;  // ds_rows_: the block's dS, A of dQ and (tile kernels) the source of dS's pairs
  std::vector<float> dkt_, dvt_;
};

}  // namespace

AttentionTrainPrecision attention_train_precision(MatmulPrecision precision) {
  return {precision, precision == MatmulPrecision::Bf16 ? matmul_nn_bf16_kernels_for(cpu_info().level) : nullptr};
}

std::unique_ptr<AttentionTrainProducts> make_attention_train_products(const AttentionTrainPrecision& precision) {
  if (precision.precision == MatmulPrecision::F32) return std::make_unique<F32Products>();
  if (precision.bf16_kernels != nullptr) return std::make_unique<Bf16Products>(*precision.bf16_kernels);
  return std::make_unique<RoundedF32Products>();
}

AttentionTrainProducts& thread_attention_train_products(const AttentionTrainPrecision& precision) {
  thread_local std::unique_ptr<AttentionTrainProducts> products;
  thread_local AttentionTrainPrecision made_for;
  if (products == nullptr || made_for.precision != precision.precision || made_for.bf16_kernels != precision.bf16_kernels) {
    products = make_attention_train_products(precision);
    made_for = precision;
  }
  return *products;
}

}  // namespace s3::cpu
