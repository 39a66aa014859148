// cublaslt_standin.cpp: a host stand-in for libcublasLt.so.13 in the CPU emulation, so the GPU tests
// whose products go through cuBLASLt (the GEMMs, the fused loss, the trainer) can run their kernels
// emulated. It implements the calls cuda/cublaslt_api.h declares with the documented meaning s3
// relies on: D = alpha · op(A) · op(B) + beta · C over column-major layouts (element (i, j) at
// i + j · ld), op = N or T, A and B in f32 or bf16, C and D in f32 or bf16, each element's products
// summed in double in order and rounded once (cuBLAS's own order is not modelled).
//
// Block-scaled FP8 (A_SCALE_MODE / B_SCALE_MODE VEC128_32F or BLK128x128_32F), as the cuBLAS docs
// describe it ("cublasLtMatmul()", "Scaling factors layouts"; the rules GPU-NOTES.md lists), written
// here from those rules and not from s3's own layout helpers: A and B in e4m3, TN only, VEC128 ×
// VEC128, VEC128 × BLK128x128 or BLK128x128 × VEC128 (never both 128 × 128), D f32 or bf16 with C of
// the same type, M and N multiples of 4, K a multiple of 16, both scale pointers on the descriptor
// when the heuristic is asked (XLA's and CUDALibrarySamples issue 274's finding) and 16-byte aligned
// when the product runs. Scales: a VEC128 operand's of (row r of op(X), K-block kb) at kb · rows + r
// ("outer-dimension major"); a BLK128x128 operand's of (row block rb, K-block kb) at rb · stride + kb,
// stride = ceil(K / 128) rounded up to a multiple of 4 (K-major, padded). Each value is widened,
// scaled by its operand's scale and the products summed in double. This is one reading of the docs:
// it checks that s3 does what it means to, and only a GPU checks what cuBLASLt accepts and computes.
// S3_CUBLASLT_STANDIN_FP8 selects what the heuristic accepts: unset or `block-scaled` (f32 and bf16
// D), `bf16-output` (bf16 D only, so s3's later forms run), `refuse` (none: FP8 weights widened).
//
// It checks the descriptor values s3 sets (compute 32F, scale 32F) and refuses anything else, so an
// unexpected call shows up as an error rather than a silent product. A product is work on its stream
// (cuda_runtime_api.h's stand-in), so a CUDA graph's capture records it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/dtype.h"
#include "cuda/cublaslt_api.h"

namespace {

namespace lt = s3::cuda::lt;

constexpr lt::Status kInvalidValue = 7;      // CUBLAS_STATUS_INVALID_VALUE [cublas_api]
constexpr lt::Status kExecutionFailed = 13;  // CUBLAS_STATUS_EXECUTION_FAILED [cublas_api]

struct Desc {
  int32_t compute = 0, transa = lt::kOpN, transb = lt::kOpN, a_scale_mode = 0, b_scale_mode = 0;
  const float* a_scale = nullptr;
  const float* b_scale = nullptr;
  bool block_scaled() const { return a_scale_mode != 0 || b_scale_mode != 0; }
};
struct Layout {
  cudaDataType_t type;
  uint64_t rows, cols;
  int64_t ld;
};

bool supported(cudaDataType_t type) { return type == CUDA_R_32F || type == CUDA_R_16BF; }

double read(const void* base, cudaDataType_t type, int64_t index) {
  if (type == CUDA_R_8F_E4M3) return double(s3::fp8e4m3_to_f32(static_cast<const uint8_t*>(base)[index]));
  if (type == CUDA_R_16BF) return double(s3::bf16_to_f32(static_cast<const uint16_t*>(base)[index]));
  return double(static_cast<const float*>(base)[index]);
}

void write(void* base, cudaDataType_t type, int64_t index, double value) {
  if (type == CUDA_R_16BF) {
    static_cast<uint16_t*>(base)[index] = s3::f32_to_bf16(float(value));
  } else {
    static_cast<float*>(base)[index] = float(value);
  }
}

// The problem the layouts describe (m × n = (m × k) · (k × n)), or false when they do not fit together.
bool shape(const Desc& d, const Layout& a, const Layout& b, const Layout& c, const Layout& out, int64_t* m, int64_t* n, int64_t* k) {
  const bool fp8 = d.block_scaled();
  const auto input = [&](cudaDataType_t type) { return fp8 ? type == CUDA_R_8F_E4M3 : supported(type); };
  *m = int64_t(d.transa == lt::kOpT ? a.cols : a.rows);
  *k = int64_t(d.transa == lt::kOpT ? a.rows : a.cols);
  const int64_t kb = int64_t(d.transb == lt::kOpT ? b.cols : b.rows);
  *n = int64_t(d.transb == lt::kOpT ? b.rows : b.cols);
  const bool layouts_ok = a.ld >= int64_t(a.rows) && b.ld >= int64_t(b.rows) && c.ld >= int64_t(c.rows) && out.ld >= int64_t(out.rows);
  return kb == *k && int64_t(c.rows) == *m && int64_t(c.cols) == *n && int64_t(out.rows) == *m && int64_t(out.cols) == *n &&
         layouts_ok && input(a.type) && input(b.type) && supported(c.type) && supported(out.type);
}

constexpr int64_t kBlock = 128;

// Whether the block-scaled problem is one the docs allow and S3_CUBLASLT_STANDIN_FP8 accepts.
bool block_scaled_allowed(const Desc& d, const Layout& c, const Layout& out, int64_t m, int64_t n, int64_t k) {
  const char* setting = std::getenv("S3_CUBLASLT_STANDIN_FP8");
  const std::string accept = setting != nullptr && *setting != 0 ? setting : "block-scaled";
  if (accept == "refuse") return false;
  const auto mode_known = [](int32_t mode) { return mode == lt::kScaleVec128F32 || mode == lt::kScaleBlock128x128F32; };
  const bool modes = mode_known(d.a_scale_mode) && mode_known(d.b_scale_mode) &&
                     !(d.a_scale_mode == lt::kScaleBlock128x128F32 && d.b_scale_mode == lt::kScaleBlock128x128F32);
  const bool output = c.type == out.type && (out.type == CUDA_R_16BF || (out.type == CUDA_R_32F && accept != "bf16-output"));
  return modes && output && d.transa == lt::kOpT && d.transb == lt::kOpN && m % 4 == 0 && n % 4 == 0 && k % 16 == 0 &&
         d.a_scale != nullptr && d.b_scale != nullptr;
}

// The scale of element (r, p) of an operand op(X) with `rows` rows and k columns, in `mode`.
double scale_of(const float* scales, int32_t mode, int64_t r, int64_t p, int64_t rows, int64_t k) {
  if (mode == lt::kScaleVec128F32) return double(scales[(p / kBlock) * rows + r]);
  const int64_t stride = ((k + kBlock - 1) / kBlock + 3) / 4 * 4;
  return double(scales[(r / kBlock) * stride + p / kBlock]);
}

}  // namespace

#define EXPORT extern "C" __attribute__((visibility("default")))

EXPORT size_t cublasLtGetVersion() { return 130100; }
EXPORT const char* cublasLtGetStatusString(lt::Status status) {
  if (status == lt::kStatusSuccess) return "CUBLAS_STATUS_SUCCESS";
  if (status == lt::kStatusNotSupported) return "CUBLAS_STATUS_NOT_SUPPORTED (emulation stand-in)";
  return "CUBLAS_STATUS_INVALID_VALUE (emulation stand-in)";
}
EXPORT lt::Status cublasLtCreate(lt::Handle* handle) {
  static int one;
  *handle = &one;
  return lt::kStatusSuccess;
}
EXPORT lt::Status cublasLtDestroy(lt::Handle) { return lt::kStatusSuccess; }

EXPORT lt::Status cublasLtMatmulDescCreate(lt::MatmulDesc* desc, int32_t compute, cudaDataType_t scale) {
  if (compute != lt::kCompute32F || scale != CUDA_R_32F) return kInvalidValue;
  Desc* d = new Desc;
  d->compute = compute;
  *desc = d;
  return lt::kStatusSuccess;
}
EXPORT lt::Status cublasLtMatmulDescDestroy(lt::MatmulDesc desc) {
  delete static_cast<Desc*>(desc);
  return lt::kStatusSuccess;
}
EXPORT lt::Status cublasLtMatmulDescSetAttribute(lt::MatmulDesc desc, int32_t attribute, const void* value, size_t size) {
  Desc* d = static_cast<Desc*>(desc);
  int32_t v = 0;
  if (size == sizeof v) std::memcpy(&v, value, sizeof v);
  switch (attribute) {
    case lt::kDescTransA: d->transa = v; return size == sizeof v && (v == lt::kOpN || v == lt::kOpT) ? lt::kStatusSuccess : kInvalidValue;
    case lt::kDescTransB: d->transb = v; return size == sizeof v && (v == lt::kOpN || v == lt::kOpT) ? lt::kStatusSuccess : kInvalidValue;
    case lt::kDescAScaleMode: d->a_scale_mode = v; return lt::kStatusSuccess;
    case lt::kDescBScaleMode: d->b_scale_mode = v; return lt::kStatusSuccess;
    case lt::kDescAScalePointer:
    case lt::kDescBScalePointer: {
      if (size != sizeof(void*)) return kInvalidValue;
      const float* pointer = nullptr;
      std::memcpy(&pointer, value, sizeof pointer);
      (attribute == lt::kDescAScalePointer ? d->a_scale : d->b_scale) = pointer;
      return lt::kStatusSuccess;
    }
  }
  return kInvalidValue;
}

EXPORT lt::Status cublasLtMatrixLayoutCreate(lt::MatrixLayout* layout, cudaDataType_t type, uint64_t rows, uint64_t cols, int64_t ld) {
  *layout = new Layout{type, rows, cols, ld};
  return lt::kStatusSuccess;
}
EXPORT lt::Status cublasLtMatrixLayoutDestroy(lt::MatrixLayout layout) {
  delete static_cast<Layout*>(layout);
  return lt::kStatusSuccess;
}

EXPORT lt::Status cublasLtMatmulPreferenceCreate(lt::MatmulPreference* preference) {
  static int one;
  *preference = &one;
  return lt::kStatusSuccess;
}
EXPORT lt::Status cublasLtMatmulPreferenceDestroy(lt::MatmulPreference) { return lt::kStatusSuccess; }
EXPORT lt::Status cublasLtMatmulPreferenceSetAttribute(lt::MatmulPreference, int32_t attribute, const void*, size_t) {
  const bool known = attribute == lt::kPrefMaxWorkspaceBytes || attribute == lt::kPrefReductionSchemeMask ||
                     (attribute >= lt::kPrefMinAlignmentABytes && attribute <= lt::kPrefMinAlignmentABytes + 3);
  return known ? lt::kStatusSuccess : kInvalidValue;
}

// One algorithm for every f32/bf16 problem the layouts describe, and for the block-scaled FP8 ones
// block_scaled_allowed() lets through.
lt::Status check(lt::MatmulDesc desc, lt::MatrixLayout a, lt::MatrixLayout b, lt::MatrixLayout c, lt::MatrixLayout d) {
  const Desc& s = *static_cast<const Desc*>(desc);
  const Layout& lc = *static_cast<const Layout*>(c);
  const Layout& ld = *static_cast<const Layout*>(d);
  int64_t m, n, k;
  if (!shape(s, *static_cast<const Layout*>(a), *static_cast<const Layout*>(b), lc, ld, &m, &n, &k)) return lt::kStatusNotSupported;
  return !s.block_scaled() || block_scaled_allowed(s, lc, ld, m, n, k) ? lt::kStatusSuccess : lt::kStatusNotSupported;
}

EXPORT lt::Status cublasLtMatmulAlgoGetHeuristic(lt::Handle, lt::MatmulDesc desc, lt::MatrixLayout a, lt::MatrixLayout b,
                                                 lt::MatrixLayout c, lt::MatrixLayout d, lt::MatmulPreference, int requested,
                                                 lt::HeuristicResult* results, int* returned) {
  const lt::Status status = check(desc, a, b, c, d);
  *returned = 0;
  if (status != lt::kStatusSuccess) return status;
  if (requested > 0) {
    std::memset(&results[0], 0, sizeof results[0]);
    results[0].waves_count = 1.0f;
    *returned = 1;
  }
  return lt::kStatusSuccess;
}

EXPORT lt::Status cublasLtMatmulAlgoCheck(lt::Handle, lt::MatmulDesc desc, lt::MatrixLayout a, lt::MatrixLayout b, lt::MatrixLayout c,
                                          lt::MatrixLayout d, const lt::MatmulAlgo*, lt::HeuristicResult* result) {
  if (result != nullptr) std::memset(result, 0, sizeof *result);
  return check(desc, a, b, c, d);
}

EXPORT lt::Status cublasLtMatmul(lt::Handle, lt::MatmulDesc desc, const void* alpha, const void* a, lt::MatrixLayout a_layout,
                                 const void* b, lt::MatrixLayout b_layout, const void* beta, const void* c, lt::MatrixLayout c_layout,
                                 void* d, lt::MatrixLayout d_layout, const lt::MatmulAlgo*, void*, size_t, cudaStream_t stream) {
  const lt::Status status = check(desc, a_layout, b_layout, c_layout, d_layout);
  if (status != lt::kStatusSuccess) return status;
  // The descriptors and the scalars (host pointers) are read now, as cuBLASLt reads them when the
  // product is enqueued; the product runs on `stream` (now, or at a captured graph's launch).
  const Desc s = *static_cast<const Desc*>(desc);
  if (s.block_scaled() && (reinterpret_cast<uintptr_t>(s.a_scale) % 16 != 0 || reinterpret_cast<uintptr_t>(s.b_scale) % 16 != 0)) {
    return kInvalidValue;
  }
  const Layout la = *static_cast<const Layout*>(a_layout), lb = *static_cast<const Layout*>(b_layout);
  const Layout lc = *static_cast<const Layout*>(c_layout), ld = *static_cast<const Layout*>(d_layout);
  int64_t m, n, k;
  shape(s, la, lb, lc, ld, &m, &n, &k);
  const double al = double(*static_cast<const float*>(alpha)), be = double(*static_cast<const float*>(beta));
  const auto product = [=] {
    // op(B) widened to double once, column j's k values contiguous; then op(A) in blocks of rows, each
    // row's k values contiguous, so every element's sum runs over two contiguous arrays in the order
    // p = 0 .. k - 1. Element (i, j) reads C(i, j) just before writing D(i, j), so C may be D. Columns
    // are shared among threads when there are many (each element is computed alone, so the result does
    // not depend on the split).
    std::vector<double> bd(size_t(n * k));
    // Block-scaled: each value times its scale (A's and B's scales read now, at the product).
    for (int64_t j = 0; j < n; j++) {
      for (int64_t p = 0; p < k; p++) {
        const double scale = s.block_scaled() ? scale_of(s.b_scale, s.b_scale_mode, j, p, n, k) : 1.0;
        bd[size_t(j * k + p)] = scale * read(b, lb.type, s.transb == lt::kOpT ? j + p * lb.ld : p + j * lb.ld);
      }
    }
    auto columns = [&](int64_t j0, int64_t j1) {
      constexpr int64_t kRows = 64;
      std::vector<double> ad(size_t(kRows * k));
      for (int64_t i0 = 0; i0 < m; i0 += kRows) {
        const int64_t rows = std::min(kRows, m - i0);
        for (int64_t r = 0; r < rows; r++) {
          for (int64_t p = 0; p < k; p++) {
            const double scale = s.block_scaled() ? scale_of(s.a_scale, s.a_scale_mode, i0 + r, p, m, k) : 1.0;
            ad[size_t(r * k + p)] = scale * read(a, la.type, s.transa == lt::kOpT ? p + (i0 + r) * la.ld : (i0 + r) + p * la.ld);
          }
        }
        for (int64_t j = j0; j < j1; j++) {
          const double* bj = &bd[size_t(j * k)];
          for (int64_t r = 0; r < rows; r++) {
            const double* ar = &ad[size_t(r * k)];
            double sum = 0.0;
            for (int64_t p = 0; p < k; p++) sum += ar[p] * bj[p];
            const int64_t i = i0 + r;
            write(d, ld.type, i + j * ld.ld, al * sum + (be != 0.0 ? be * read(c, lc.type, i + j * lc.ld) : 0.0));
          }
        }
      }
    };
    const int64_t threads = n >= 64 ? std::max<int64_t>(1, std::min<int64_t>(int64_t(std::thread::hardware_concurrency()), 8)) : 1;
    std::vector<std::thread> workers;
    for (int64_t t = 1; t < threads; t++) workers.emplace_back(columns, n * t / threads, n * (t + 1) / threads);
    columns(0, n / threads);
    for (std::thread& w : workers) w.join();
  };
  return cuda_emulation::enqueue(stream, product) == cudaSuccess ? lt::kStatusSuccess : kExecutionFailed;
}
