// cuBLASLt matmuls; see matmul.h.
#include "cuda/matmul.h"

#include <vector>

#include "core/ops/fp8_block_scales.h"
#include "cuda/check.h"

namespace s3::cuda {
namespace {

constexpr size_t kWorkspaceBytes = size_t(32) << 20;

cudaDataType_t element_type(GemmDtype dtype) {
  switch (dtype) {
    case GemmDtype::F32: return CUDA_R_32F;
    case GemmDtype::Bf16: return CUDA_R_16BF;
    case GemmDtype::Fp8: return CUDA_R_8F_E4M3;
  }
  return CUDA_R_32F;
}

}  // namespace

const char* gemm_dtype_name(GemmDtype dtype) {
  switch (dtype) {
    case GemmDtype::F32: return "f32";
    case GemmDtype::Bf16: return "bf16";
    case GemmDtype::Fp8: return "fp8 block-scaled";
  }
  return "?";
}

// Everything about one weight shape and dtype: the operation, A's layout, the algorithm chosen at the
// reference row count, and per row count the layouts of B, C/D and the algorithm that count runs.
struct Gemm::Plan {
  struct Rows {
    lt::MatrixLayout b = nullptr, d = nullptr;
    lt::MatmulAlgo algo{};
  };
  const CublasLtLibrary* library = nullptr;
  GemmDtype dtype = GemmDtype::Bf16;
  int64_t N = 0, K = 0;
  lt::MatmulDesc desc = nullptr;
  lt::MatrixLayout a = nullptr;
  lt::MatmulPreference preference = nullptr;
  bool has_reference = false;
  lt::MatmulAlgo reference{};
  std::map<int64_t, Rows> rows;

  ~Plan() {
    const lt::Functions& f = library->api;
    for (auto& [m, r] : rows) {
      f.MatrixLayoutDestroy(r.b);
      f.MatrixLayoutDestroy(r.d);
    }
    if (preference != nullptr) f.MatmulPreferenceDestroy(preference);
    if (a != nullptr) f.MatrixLayoutDestroy(a);
    if (desc != nullptr) f.MatmulDescDestroy(desc);
  }

  void call(lt::Status status, const char* what) const {
    if (status != lt::kStatusSuccess) {
      throw CudaError(describe(what, {{"N", N}, {"K", K}}) + " (" + gemm_dtype_name(dtype) + "): " +
                      cublaslt_status_text(*library, status));
    }
  }

  // Layouts of B [K × M] and D [N × M] for M rows (Fp8: M padded to a multiple of 4).
  Rows make_rows(int64_t M) const {
    const lt::Functions& f = library->api;
    Rows r;
    call(f.MatrixLayoutCreate(&r.b, element_type(dtype), uint64_t(K), uint64_t(M), K), "cublasLtMatrixLayoutCreate B");
    call(f.MatrixLayoutCreate(&r.d, CUDA_R_32F, uint64_t(N), uint64_t(M), N), "cublasLtMatrixLayoutCreate D");
    return r;
  }

  // The best algorithm for these layouts, or false when cuBLASLt offers none (not supported).
  bool heuristic(lt::Handle handle, const Rows& r, lt::MatmulAlgo& algo) const {
    lt::HeuristicResult result{};
    int returned = 0;
    const lt::Status status =
        library->api.MatmulAlgoGetHeuristic(handle, desc, a, r.b, r.d, r.d, preference, 1, &result, &returned);
    if (status == lt::kStatusNotSupported || returned == 0) return false;
    call(status, "cublasLtMatmulAlgoGetHeuristic");
    algo = result.algo;
    return true;
  }
};

Gemm::Gemm(std::shared_ptr<const CublasLtLibrary> library, DeviceAllocator& allocator, cudaStream_t stream, int64_t reference_rows)
    : library_(std::move(library)), stream_(stream), reference_rows_(reference_rows > 0 ? reference_rows : 256) {
  const lt::Status status = library_->api.Create(&handle_);
  if (status != lt::kStatusSuccess) throw CudaError("cublasLtCreate: " + cublaslt_status_text(*library_, status));
  workspace_ = DeviceBuffer(allocator, kWorkspaceBytes, "the cuBLASLt workspace");
}

Gemm::~Gemm() {
  plans_.clear();
  if (handle_ != nullptr) library_->api.Destroy(handle_);
}

Gemm::Plan& Gemm::plan_for(const DeviceMatrix& w) {
  const auto key = std::make_tuple(w.rows, w.cols, int(w.dtype));
  auto found = plans_.find(key);
  if (found != plans_.end()) return *found->second;
  auto plan = std::make_unique<Plan>();
  Plan& p = *plan;
  p.library = library_.get();
  p.dtype = w.dtype;
  p.N = w.rows;
  p.K = w.cols;
  const lt::Functions& f = library_->api;
  p.call(f.MatmulDescCreate(&p.desc, lt::kCompute32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
  const int32_t transpose = lt::kOpT, keep = lt::kOpN;
  p.call(f.MatmulDescSetAttribute(p.desc, lt::kDescTransA, &transpose, sizeof transpose), "TRANSA");
  p.call(f.MatmulDescSetAttribute(p.desc, lt::kDescTransB, &keep, sizeof keep), "TRANSB");
  if (w.dtype == GemmDtype::Fp8) {
    const int32_t weight_mode = lt::kScaleBlock128x128F32, activation_mode = lt::kScaleVec128F32;
    p.call(f.MatmulDescSetAttribute(p.desc, lt::kDescAScaleMode, &weight_mode, sizeof weight_mode), "A_SCALE_MODE");
    p.call(f.MatmulDescSetAttribute(p.desc, lt::kDescBScaleMode, &activation_mode, sizeof activation_mode), "B_SCALE_MODE");
  }
  p.call(f.MatrixLayoutCreate(&p.a, element_type(w.dtype), uint64_t(w.cols), uint64_t(w.rows), w.cols), "cublasLtMatrixLayoutCreate A");
  p.call(f.MatmulPreferenceCreate(&p.preference), "cublasLtMatmulPreferenceCreate");
  const char* failed = "";
  p.call(set_gemm_preferences(*library_, p.preference, kWorkspaceBytes, &failed), failed);
  const int64_t reference = w.dtype == GemmDtype::Fp8 ? ops::fp8_activation_rows(reference_rows_) : reference_rows_;
  Plan::Rows r = p.make_rows(reference);
  p.has_reference = p.heuristic(handle_, r, p.reference);
  library_->api.MatrixLayoutDestroy(r.b);
  library_->api.MatrixLayoutDestroy(r.d);
  if (!p.has_reference) {
    throw CudaError(describe("cuBLASLt has no algorithm for this matmul", {{"N", w.rows}, {"K", w.cols}, {"M", reference}}) + " (" +
                    gemm_dtype_name(w.dtype) + ")");
  }
  return *plans_.emplace(key, std::move(plan)).first->second;
}

bool Gemm::supports(GemmDtype dtype, int64_t N, int64_t K) {
  try {
    plan_for(DeviceMatrix{nullptr, dtype, N, K, nullptr});
    return true;
  } catch (const CudaError&) {
    return false;
  }
}

void Gemm::run(float* out, const void* inp, const float* inp_scales, const DeviceMatrix& w, int64_t M) {
  if (M == 0) return;
  require_gemm_alignment(out, "Gemm output");
  require_gemm_alignment(inp, "Gemm input");
  require_gemm_alignment(w.data, "Gemm weight");
  Plan& p = plan_for(w);
  const int64_t rows = w.dtype == GemmDtype::Fp8 ? ops::fp8_activation_rows(M) : M;
  auto found = p.rows.find(rows);
  if (found == p.rows.end()) {
    Plan::Rows r = p.make_rows(rows);
    lt::HeuristicResult checked{};
    const lt::Status status = library_->api.MatmulAlgoCheck(handle_, p.desc, p.a, r.b, r.d, r.d, &p.reference, &checked);
    if (status == lt::kStatusSuccess) {
      r.algo = p.reference;
    } else if (p.heuristic(handle_, r, r.algo)) {
      batch_invariant_ = false;  // this row count runs an algorithm of its own
    } else {
      throw CudaError(describe("cuBLASLt has no algorithm for this matmul", {{"N", w.rows}, {"K", w.cols}, {"M", rows}}));
    }
    found = p.rows.emplace(rows, r).first;
  }
  const lt::Functions& f = library_->api;
  if (w.dtype == GemmDtype::Fp8) {
    p.call(f.MatmulDescSetAttribute(p.desc, lt::kDescAScalePointer, &w.scales, sizeof w.scales), "A_SCALE_POINTER");
    p.call(f.MatmulDescSetAttribute(p.desc, lt::kDescBScalePointer, &inp_scales, sizeof inp_scales), "B_SCALE_POINTER");
  }
  const float alpha = 1.0f, beta = 0.0f;
  p.call(f.Matmul(handle_, p.desc, &alpha, w.data, p.a, inp, found->second.b, &beta, out, found->second.d, out, found->second.d,
                  &found->second.algo, workspace_.get(), kWorkspaceBytes, stream_),
         "cublasLtMatmul");
}

}  // namespace s3::cuda
