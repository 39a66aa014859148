// cuBLASLt matmuls; see matmul.h.
//
// Block-scaled FP8 (cuBLASLt ≥ 12.9, sm_90), what the sources say and this file relies on:
//   - the cuBLAS docs, "cublasLtMatmul()" and "128-element 1D and 128x128 2D Block Scaling for FP8
//     Data Types" (https://docs.nvidia.com/cuda/cublas/#cublasltmatmul, #scaling-factors-layouts):
//     TN only on Hopper, compute CUBLAS_COMPUTE_32F, scale type CUDA_R_32F; D in CUDA_R_16F,
//     CUDA_R_16BF or CUDA_R_32F with C of the same type (FP8 D is not allowed with these modes);
//     VEC128 × VEC128, VEC128 × BLK128x128 and BLK128x128 × VEC128 supported, BLK128x128 on both not;
//     M and N multiples of 4; scale pointers 16-byte aligned; VEC128 scales M-major (A) / N-major (B),
//     BLK128x128 scales K-major with the K-block count padded to a multiple of 4 (the layouts of
//     core/ops/fp8_block_scales.h);
//   - PyTorch's scaled_gemm (aten/src/ATen/cuda/CUDABlas.cpp) and NVIDIA's sample
//     (CUDALibrarySamples cuBLASLt/LtBlk128x128Fp8Matmul) put the scale pointers on the descriptor
//     before cublasLtMatmulAlgoGetHeuristic, and XLA does since openxla/xla PR 40747 (dummy scale
//     pointers while querying, because the heuristic may otherwise pick kernels that do not work with
//     scales); a heuristic that refuses a block-scaled descriptor without them is reported in
//     CUDALibrarySamples issue 274 ("The scaling mode for A scale (VEC16_UE4M3) requires a custom
//     pointer for A scale", sm_101). Plans here set stand-ins (the workspace, never read while
//     planning) and run() the real pointers before any algorithm check or matmul;
//   - PyTorch's test_scaled_mm_vs_emulated_block_wise runs both scale orders with f32 and bf16 output
//     on sm_90, with C of the output type and a preference that sets only the workspace size; NVIDIA's
//     sample uses bf16 C and D. Hence the forms of fp8_gemm_forms(), tried in order.
#include "cuda/matmul.h"

#include <vector>

#include "core/ops/fp8_block_scales.h"
#include "cuda/check.h"
#include "cuda/dtype_kernels.h"

namespace s3::cuda {
namespace {

constexpr size_t kWorkspaceBytes = size_t(32) << 20;
constexpr uint32_t kDefaultAlignment = 256;  // cuBLASLt's default MIN_ALIGNMENT_*_BYTES ([cublasLt.h])

cudaDataType_t element_type(GemmDtype dtype) {
  switch (dtype) {
    case GemmDtype::F32: return CUDA_R_32F;
    case GemmDtype::Bf16: return CUDA_R_16BF;
    case GemmDtype::Fp8: return CUDA_R_8F_E4M3;
  }
  return CUDA_R_32F;
}

void require_alignment(const void* pointer, uint32_t bytes, const char* what) {
  if (reinterpret_cast<uintptr_t>(pointer) % bytes != 0) {
    throw CudaError(std::string(what) + ": the pointer " + std::to_string(reinterpret_cast<uintptr_t>(pointer)) + " is not " +
                    std::to_string(bytes) + "-byte aligned, as this FP8 GEMM form needs");
  }
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

const std::vector<Fp8GemmForm>& fp8_gemm_forms() {
  static const std::vector<Fp8GemmForm> forms = [] {
    std::vector<Fp8GemmForm> all;
    for (bool bf16_output : {false, true}) {
      all.push_back({bf16_output, kGemmOperandAlignment, false});
      all.push_back({bf16_output, kDefaultAlignment, false});
      all.push_back({bf16_output, kDefaultAlignment, true});
    }
    return all;
  }();
  return forms;
}

std::string fp8_gemm_form_name(const Fp8GemmForm& form) {
  std::string name = form.bf16_output ? "D bf16 widened to f32" : "D f32";
  if (form.operand_alignment != kGemmOperandAlignment) name += ", " + std::to_string(form.operand_alignment) + "-byte operands";
  if (form.split_k) name += ", split-K";
  return name;
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
  Fp8GemmForm form;  // Fp8 only
  int64_t N = 0, K = 0;
  lt::MatmulDesc desc = nullptr;
  lt::MatrixLayout a = nullptr;
  lt::MatmulPreference preference = nullptr;
  lt::MatmulAlgo reference{};
  std::map<int64_t, Rows> rows;

  ~Plan() {
    const lt::Functions& f = library->api;
    for (auto& [m, r] : rows) destroy(r);
    if (preference != nullptr) f.MatmulPreferenceDestroy(preference);
    if (a != nullptr) f.MatrixLayoutDestroy(a);
    if (desc != nullptr) f.MatmulDescDestroy(desc);
  }

  void destroy(const Rows& r) const {
    if (r.b != nullptr) library->api.MatrixLayoutDestroy(r.b);
    if (r.d != nullptr) library->api.MatrixLayoutDestroy(r.d);
  }

  bool bf16_output() const { return dtype == GemmDtype::Fp8 && form.bf16_output; }

  std::string what() const {
    return dtype == GemmDtype::Fp8 ? std::string(gemm_dtype_name(dtype)) + ", " + fp8_gemm_form_name(form) : gemm_dtype_name(dtype);
  }

  void call(lt::Status status, const char* step) const {
    if (status != lt::kStatusSuccess) {
      throw CudaError(describe(step, {{"N", N}, {"K", K}}) + " (" + what() + "): " + cublaslt_status_text(*library, status));
    }
  }

  // Layouts of B [K × M] and C = D [N × M] for M rows (Fp8: M padded to a multiple of 4).
  Rows make_rows(int64_t M) const {
    const lt::Functions& f = library->api;
    Rows r;
    call(f.MatrixLayoutCreate(&r.b, element_type(dtype), uint64_t(K), uint64_t(M), K), "cublasLtMatrixLayoutCreate B");
    const lt::Status status = f.MatrixLayoutCreate(&r.d, bf16_output() ? CUDA_R_16BF : CUDA_R_32F, uint64_t(N), uint64_t(M), N);
    if (status != lt::kStatusSuccess) destroy(r);
    call(status, "cublasLtMatrixLayoutCreate D");
    return r;
  }

  // The best algorithm for these layouts, or false with cuBLASLt's answer in `answer`.
  bool heuristic(lt::Handle handle, const Rows& r, lt::MatmulAlgo& algo, std::string& answer) const {
    lt::HeuristicResult result{};
    int returned = 0;
    const lt::Status status =
        library->api.MatmulAlgoGetHeuristic(handle, desc, a, r.b, r.d, r.d, preference, 1, &result, &returned);
    if (status != lt::kStatusSuccess) {
      answer = cublaslt_status_text(*library, status);
      return false;
    }
    if (returned == 0) {
      answer = "no algorithm";
      return false;
    }
    algo = result.algo;
    return true;
  }
};

Gemm::Gemm(std::shared_ptr<const CublasLtLibrary> library, DeviceAllocator& allocator, cudaStream_t stream, int64_t reference_rows)
    : library_(std::move(library)), allocator_(&allocator), stream_(stream), reference_rows_(reference_rows > 0 ? reference_rows : 256) {
  const lt::Status status = library_->api.Create(&handle_);
  if (status != lt::kStatusSuccess) throw CudaError("cublasLtCreate: " + cublaslt_status_text(*library_, status));
  workspace_ = DeviceBuffer(allocator, kWorkspaceBytes, "the cuBLASLt workspace");
}

Gemm::~Gemm() {
  plans_.clear();
  if (handle_ != nullptr) library_->api.Destroy(handle_);
}

// The plan for w in one form (ignored unless w is Fp8), or null with cuBLASLt's answer in `refusal`
// when the heuristic offers no algorithm; a failing descriptor call throws.
std::unique_ptr<Gemm::Plan> Gemm::try_plan(const DeviceMatrix& w, const Fp8GemmForm& form, std::string& refusal) {
  auto plan = std::make_unique<Plan>();
  Plan& p = *plan;
  p.library = library_.get();
  p.dtype = w.dtype;
  p.form = form;
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
    // Stand-ins until run() sets the real scales: device memory, 256-byte aligned, never read here.
    const void* stand_in = workspace_.get();
    p.call(f.MatmulDescSetAttribute(p.desc, lt::kDescAScalePointer, &stand_in, sizeof stand_in), "A_SCALE_POINTER");
    p.call(f.MatmulDescSetAttribute(p.desc, lt::kDescBScalePointer, &stand_in, sizeof stand_in), "B_SCALE_POINTER");
  }
  p.call(f.MatrixLayoutCreate(&p.a, element_type(w.dtype), uint64_t(w.cols), uint64_t(w.rows), w.cols), "cublasLtMatrixLayoutCreate A");
  p.call(f.MatmulPreferenceCreate(&p.preference), "cublasLtMatmulPreferenceCreate");
  const char* failed = "";
  p.call(set_gemm_preferences(*library_, p.preference, kWorkspaceBytes, &failed), failed);
  if (w.dtype == GemmDtype::Fp8 && form.operand_alignment != kGemmOperandAlignment) {
    for (int32_t matrix = 0; matrix < 4; matrix++) {  // A, B, C, D
      p.call(f.MatmulPreferenceSetAttribute(p.preference, lt::kPrefMinAlignmentABytes + matrix, &form.operand_alignment,
                                            sizeof form.operand_alignment),
             "MIN_ALIGNMENT_*_BYTES");
    }
  }
  if (w.dtype == GemmDtype::Fp8 && form.split_k) {
    const uint32_t out_of_place = lt::kReductionSchemeNone | lt::kReductionSchemeComputeType | lt::kReductionSchemeOutputType;
    p.call(f.MatmulPreferenceSetAttribute(p.preference, lt::kPrefReductionSchemeMask, &out_of_place, sizeof out_of_place),
           "REDUCTION_SCHEME_MASK");
  }
  const int64_t reference = w.dtype == GemmDtype::Fp8 ? ops::fp8_activation_rows(reference_rows_) : reference_rows_;
  const Plan::Rows r = p.make_rows(reference);
  const bool found = p.heuristic(handle_, r, p.reference, refusal);
  p.destroy(r);
  if (!found) return nullptr;
  return plan;
}

Gemm::Plan& Gemm::plan_for(const DeviceMatrix& w) {
  const auto key = std::make_tuple(w.rows, w.cols, int(w.dtype));
  auto found = plans_.find(key);
  if (found != plans_.end()) return *found->second;
  const int64_t reference = w.dtype == GemmDtype::Fp8 ? ops::fp8_activation_rows(reference_rows_) : reference_rows_;
  const std::string refused = describe("cuBLASLt has no algorithm for this matmul", {{"N", w.rows}, {"K", w.cols}, {"M", reference}});
  std::string answer;
  if (w.dtype != GemmDtype::Fp8) {
    std::unique_ptr<Plan> plan = try_plan(w, Fp8GemmForm{}, answer);
    if (plan == nullptr) throw CudaError(refused + " (" + gemm_dtype_name(w.dtype) + "): " + answer);
    return *plans_.emplace(key, std::move(plan)).first->second;
  }
  std::string tried;
  for (const Fp8GemmForm& form : fp8_gemm_forms()) {
    std::unique_ptr<Plan> plan;
    try {
      plan = try_plan(w, form, answer);
    } catch (const CudaError& e) {  // a descriptor or preference this cuBLASLt does not take
      answer = e.what();
    }
    if (plan != nullptr) {
      fp8_forms_used_.insert(fp8_gemm_form_name(form));
      return *plans_.emplace(key, std::move(plan)).first->second;
    }
    tried += (tried.empty() ? "" : "; ") + fp8_gemm_form_name(form) + ": " + answer;
  }
  fp8_refusal_ = refused +
                 " (fp8 block-scaled: A = W e4m3 [K x N] op T with BLK128x128_32F scales, B = inputs e4m3 [K x M] op N with "
                 "VEC128_32F scales, compute and scale type 32F; tried " +
                 tried + ")";
  throw CudaError(fp8_refusal_);
}

bool Gemm::supports(GemmDtype dtype, int64_t N, int64_t K) {
  try {
    plan_for(DeviceMatrix{nullptr, dtype, N, K, nullptr});
    return true;
  } catch (const CudaError&) {
    return false;
  }
}

bool fp8_weights_block_scaled(Gemm& gemm, int compute_major, int compute_minor) {
  return fp8_block_scaling(gemm.library(), compute_major, compute_minor) && gemm.supports(GemmDtype::Fp8, 1024, 1024);
}

Fp8GemmForm Gemm::fp8_form(int64_t N, int64_t K) { return plan_for(DeviceMatrix{nullptr, GemmDtype::Fp8, N, K, nullptr}).form; }

std::string Gemm::fp8_description() const {
  if (fp8_forms_used_.empty()) return fp8_refusal_;
  std::string text;
  for (const std::string& name : fp8_forms_used_) text += (text.empty() ? "fp8 as " : " + ") + name;
  return text;
}

void Gemm::reserve_outputs(int64_t rows, int64_t cols) {
  fp8_output(size_t(ops::fp8_activation_rows(rows) * cols) * sizeof(uint16_t));
}

void* Gemm::fp8_output(size_t bytes) {
  if (fp8_output_.bytes() < bytes) {
    fp8_output_.reset();  // back to the cache first, so a larger block can take its place
    fp8_output_ = DeviceBuffer(*allocator_, bytes, "the FP8 GEMM's bf16 output");
  }
  return fp8_output_.get();
}

void Gemm::run(float* out, const void* inp, const float* inp_scales, const DeviceMatrix& w, int64_t M) {
  if (M == 0) return;
  require_gemm_alignment(out, "Gemm output");
  require_gemm_alignment(inp, "Gemm input");
  require_gemm_alignment(w.data, "Gemm weight");
  Plan& p = plan_for(w);
  const lt::Functions& f = library_->api;
  if (w.dtype == GemmDtype::Fp8) {
    require_gemm_alignment(w.scales, "Gemm weight scales");
    require_gemm_alignment(inp_scales, "Gemm input scales");
    require_alignment(inp, p.form.operand_alignment, "Gemm input");
    require_alignment(w.data, p.form.operand_alignment, "Gemm weight");
    if (!p.form.bf16_output) require_alignment(out, p.form.operand_alignment, "Gemm output");
    // The real scales before any algorithm check or matmul: the plan holds stand-ins.
    p.call(f.MatmulDescSetAttribute(p.desc, lt::kDescAScalePointer, &w.scales, sizeof w.scales), "A_SCALE_POINTER");
    p.call(f.MatmulDescSetAttribute(p.desc, lt::kDescBScalePointer, &inp_scales, sizeof inp_scales), "B_SCALE_POINTER");
  }
  const int64_t rows = w.dtype == GemmDtype::Fp8 ? ops::fp8_activation_rows(M) : M;
  auto found = p.rows.find(rows);
  if (found == p.rows.end()) {
    Plan::Rows r = p.make_rows(rows);
    lt::HeuristicResult checked{};
    std::string answer;
    const lt::Status status = f.MatmulAlgoCheck(handle_, p.desc, p.a, r.b, r.d, r.d, &p.reference, &checked);
    if (status == lt::kStatusSuccess) {
      r.algo = p.reference;
    } else if (p.heuristic(handle_, r, r.algo, answer)) {
      batch_invariant_ = false;  // this row count runs an algorithm of its own
    } else {
      p.destroy(r);
      throw CudaError(describe("cuBLASLt has no algorithm for this matmul", {{"N", w.rows}, {"K", w.cols}, {"M", rows}}) + " (" +
                      p.what() + "): " + answer);
    }
    found = p.rows.emplace(rows, r).first;
  }
  void* d = p.bf16_output() ? fp8_output(size_t(rows * w.rows) * sizeof(uint16_t)) : static_cast<void*>(out);
  const float alpha = 1.0f, beta = 0.0f;
  p.call(f.Matmul(handle_, p.desc, &alpha, w.data, p.a, inp, found->second.b, &beta, d, found->second.d, d, found->second.d,
                  &found->second.algo, workspace_.get(), kWorkspaceBytes, stream_),
         "cublasLtMatmul");
  if (p.bf16_output()) {
    bf16_to_f32(static_cast<const uint16_t*>(d), out, size_t(rows * w.rows), stream_);
    check_launch("bf16_to_f32 (FP8 GEMM output)", {{"N", w.rows}, {"M", rows}});
  }
}

}  // namespace s3::cuda
