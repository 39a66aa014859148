// The backward GEMMs of a linear layer through cuBLASLt; see matmul_backward.h.
#include "cuda/matmul_backward.h"

#include "cuda/check.h"

namespace s3::cuda {
namespace {

constexpr size_t kWorkspaceBytes = size_t(32) << 20;

cudaDataType_t operand_type(GemmDtype dtype) { return dtype == GemmDtype::Bf16 ? CUDA_R_16BF : CUDA_R_32F; }

}  // namespace

// One product's shape: the operation, the three layouts and the algorithm chosen for them.
struct MatmulBackward::Product {
  const CublasLtLibrary* library = nullptr;
  lt::MatmulDesc desc = nullptr;
  lt::MatrixLayout a = nullptr, b = nullptr, d = nullptr;
  lt::MatmulPreference preference = nullptr;
  lt::MatmulAlgo algo{};
  int64_t m = 0, n = 0, k = 0;

  ~Product() {
    const lt::Functions& f = library->api;
    if (preference != nullptr) f.MatmulPreferenceDestroy(preference);
    for (lt::MatrixLayout layout : {a, b, d}) {
      if (layout != nullptr) f.MatrixLayoutDestroy(layout);
    }
    if (desc != nullptr) f.MatmulDescDestroy(desc);
  }

  void call(lt::Status status, const char* what) const {
    if (status != lt::kStatusSuccess) {
      throw CudaError(describe(what, {{"m", m}, {"n", n}, {"k", k}}) + " (backward GEMM): " + cublaslt_status_text(*library, status));
    }
  }
};

MatmulBackward::MatmulBackward(std::shared_ptr<const CublasLtLibrary> library, DeviceAllocator& allocator, cudaStream_t stream)
    : library_(std::move(library)), stream_(stream) {
  const lt::Status status = library_->api.Create(&handle_);
  if (status != lt::kStatusSuccess) throw CudaError("cublasLtCreate: " + cublaslt_status_text(*library_, status));
  workspace_ = DeviceBuffer(allocator, kWorkspaceBytes, "the backward GEMMs' cuBLASLt workspace");
}

MatmulBackward::~MatmulBackward() {
  products_.clear();
  if (handle_ != nullptr) library_->api.Destroy(handle_);
}

void MatmulBackward::product(float* d, const void* a, bool transpose_a, int64_t lda, const void* b, bool transpose_b,
                             int64_t ldb, int64_t m, int64_t n, int64_t k, float beta, GemmDtype dtype) {
  const auto key = std::make_tuple(m, n, k, lda, ldb, int(transpose_a), int(transpose_b), int(dtype));
  auto found = products_.find(key);
  if (found == products_.end()) {
    auto created = std::make_unique<Product>();
    Product& p = *created;
    p.library = library_.get();
    p.m = m;
    p.n = n;
    p.k = k;
    const lt::Functions& f = library_->api;
    p.call(f.MatmulDescCreate(&p.desc, lt::kCompute32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
    const int32_t op_a = transpose_a ? lt::kOpT : lt::kOpN, op_b = transpose_b ? lt::kOpT : lt::kOpN;
    p.call(f.MatmulDescSetAttribute(p.desc, lt::kDescTransA, &op_a, sizeof op_a), "TRANSA");
    p.call(f.MatmulDescSetAttribute(p.desc, lt::kDescTransB, &op_b, sizeof op_b), "TRANSB");
    // Stored shapes: op(A) is m × k, op(B) is k × n.
    p.call(f.MatrixLayoutCreate(&p.a, operand_type(dtype), uint64_t(transpose_a ? k : m), uint64_t(transpose_a ? m : k), lda),
           "cublasLtMatrixLayoutCreate A");
    p.call(f.MatrixLayoutCreate(&p.b, operand_type(dtype), uint64_t(transpose_b ? n : k), uint64_t(transpose_b ? k : n), ldb),
           "cublasLtMatrixLayoutCreate B");
    p.call(f.MatrixLayoutCreate(&p.d, CUDA_R_32F, uint64_t(m), uint64_t(n), m), "cublasLtMatrixLayoutCreate D");
    p.call(f.MatmulPreferenceCreate(&p.preference), "cublasLtMatmulPreferenceCreate");
    const char* failed = "";
    p.call(set_gemm_preferences(*library_, p.preference, kWorkspaceBytes, &failed), failed);
    lt::HeuristicResult result{};
    int returned = 0;
    const lt::Status status = f.MatmulAlgoGetHeuristic(handle_, p.desc, p.a, p.b, p.d, p.d, p.preference, 1, &result, &returned);
    if (status == lt::kStatusNotSupported || (status == lt::kStatusSuccess && returned == 0)) {
      throw CudaError(describe("cuBLASLt has no algorithm for this backward matmul", {{"m", m}, {"n", n}, {"k", k}}) + " (" +
                      gemm_dtype_name(dtype) + ")");
    }
    p.call(status, "cublasLtMatmulAlgoGetHeuristic");
    p.algo = result.algo;
    found = products_.emplace(key, std::move(created)).first;
  }
  const Product& p = *found->second;
  const float alpha = 1.0f;
  p.call(library_->api.Matmul(handle_, p.desc, &alpha, a, p.a, b, p.b, &beta, d, p.d, d, p.d, &p.algo, workspace_.get(),
                              kWorkspaceBytes, stream_),
         "cublasLtMatmul");
}

void MatmulBackward::run(float* dinp, float* dweight, const void* dout, const void* inp, const void* weight, int64_t M,
                         int64_t N, int64_t K, GemmDtype dtype) {
  if (dtype == GemmDtype::Fp8) throw CudaError("matmul_backward: FP8 operands are not supported (the backward runs in f32 or bf16)");
  if (M == 0 || N == 0 || K == 0) return;
  for (const void* operand : {static_cast<const void*>(dinp), static_cast<const void*>(dweight), dout, inp, weight}) {
    if (operand != nullptr) require_gemm_alignment(operand, "matmul_backward");
  }
  // dinp ↔ D[K × M] = W[K × N] · dout[N × M].
  if (dinp != nullptr) product(dinp, weight, false, K, dout, false, N, K, M, N, 0.0f, dtype);
  // dweight ↔ D[K × N] = inp[K × M] · (dout[N × M])ᵀ + D.
  if (dweight != nullptr) product(dweight, inp, false, K, dout, true, N, K, N, M, 1.0f, dtype);
}

}  // namespace s3::cuda
