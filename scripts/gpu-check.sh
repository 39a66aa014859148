#!/usr/bin/env bash
# The one prepared GPU validation run (for the device machine: nvcc, cmake, ninja, maybe no Node).
# Builds the native tests with CUDA (no sanitizers: ASan and the CUDA driver disagree), runs them
# (CUDA kernels against the CPU path), and writes everything under $OUT (default: ./gpu-out).
#   bash scripts/gpu-check.sh            # from the repository root
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/gpu-out}"
mkdir -p "$OUT"
exec > >(tee "$OUT/gpu-check.log") 2>&1

echo "== machine"; date -u; nvidia-smi || true; nvcc --version | tail -2; command -v node || echo "no node"
echo "== build (sm_90a, tests, no sanitizers)"
start=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DS3_BUILD_TESTS=ON -DS3_SANITIZE=OFF -DS3_CUDA=ON \
  -DS3_CUDA_ARCHITECTURES=90a-real >"$OUT/cmake-configure.log" 2>&1 || { echo "configure failed"; tail -40 "$OUT/cmake-configure.log"; exit 1; }
cmake --build build-gpu --parallel "$(nproc)" >"$OUT/cmake-build.log" 2>&1 || { echo "build failed"; tail -60 "$OUT/cmake-build.log"; exit 1; }
echo "build took $(( $(date +%s) - start )) s"

echo "== native tests (CUDA against CPU)"
# cuBLASLt / NCCL from PyTorch's wheels, for the dlopen probes.
site=$(python3 -c 'import site; print(site.getsitepackages()[0])' 2>/dev/null || true)
if [ -n "$site" ] && [ -d "$site/nvidia" ]; then
  export S3_CUDA_LIBRARY_PATH="$(ls -d "$site"/nvidia/*/lib 2>/dev/null | paste -sd:)"
fi
./build-gpu/s3_native_tests 2>&1 | tee "$OUT/native-tests.txt"
status=${PIPESTATUS[0]}
echo "== done (tests exit $status)"
exit "$status"
