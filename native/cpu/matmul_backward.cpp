// matmul_backward.cpp: the implementation of cpu/matmul_backward.h (see the header for the contract and layouts).
#include "cpu/matmul_backward.h"

#include <vector>

#include "cpu/matmul.h"
#include "cpu/matrix_view.h"

namespace s3::cpu {

namespace {

// dst[cols × rows] = srcᵀ for src [rows × cols].
void transpose(float* dst, const float* src, int64_t rows, int64_t cols, ThreadPool& pool) {
  constexpr int64_t kBlock = 32;
  const int64_t blocks = (cols + kBlock - 1) / kBlock;
  pool.parallel_for(size_t(blocks), [&](size_t begin, size_t end, size_t) {
    for (int64_t cb = int64_t(begin) * kBlock; cb < int64_t(end) * kBlock && cb < cols; cb += kBlock) {
      const int64_t ce = cb + kBlock < cols ? cb + kBlock : cols;
      for (int64_t rb = 0; rb < rows; rb += kBlock) {
        const int64_t re = rb + kBlock < rows ? rb + kBlock : rows;
        for (int64_t c = cb; c < ce; c++) {
          for (int64_t r = rb; r < re; r++) dst[c * rows + r] = src[r * cols + c];
        }
      }
    }
  });
}

}  // namespace

void matmul_backward(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight, int64_t M,
                     int64_t N, int64_t K, ThreadPool& pool) {
  if (M <= 0 || N <= 0 || K <= 0) return;
  if (dinp != nullptr) {
    std::vector<float> wt(size_t(N * K));
    transpose(wt.data(), weight, N, K, pool);  // [K × N]
    matmul_forward(dinp, dout, MatrixView{wt.data(), DType::F32, K, N, nullptr}, M, pool);
  }
  if (dweight != nullptr) {
    std::vector<float> dout_t(size_t(M * N)), inp_t(size_t(M * K)), tmp(size_t(N * K));
    transpose(dout_t.data(), dout, M, N, pool);  // [N × M]
    transpose(inp_t.data(), inp, M, K, pool);    // [K × M]
    matmul_forward(tmp.data(), dout_t.data(), MatrixView{inp_t.data(), DType::F32, K, M, nullptr}, N, pool);
    pool.parallel_for(size_t(N), [&](size_t begin, size_t end, size_t) {
      for (size_t i = begin * size_t(K); i < end * size_t(K); i++) dweight[i] += tmp[i];
    });
  }
}

}  // namespace s3::cpu
