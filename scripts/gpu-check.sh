#!/usr/bin/env bash
# The one prepared GPU validation run (for the device machine: nvcc, cmake, ninja, PyTorch and
# transformers; no network, maybe no Node). On a bare H200 it:
#   1. builds the native tests and the CUDA benchmarks for sm_90a only, without sanitizers
#      (ASan and the CUDA driver disagree);
#   2. writes randomly initialised transformers Qwen3 models (small and the 0.6B config, bf16) with
#      their reference logits (scripts/gpu-check/transformers_reference.py) and, for small, reference
#      gradients of a weighted SFT loss (scripts/gpu-check/transformers_gradients.py);
#   3. compiles our cuBLASLt and NCCL declarations against the official headers of PyTorch's wheels
#      (scripts/gpu-check/*_abi_check.cpp), then runs every native test (CUDA against the CPU, the
#      engine and the trainer on the device, NCCL's one-rank collectives and timeout, and our logits
#      and gradients against transformers' through S3_HF_CHECK_DIRS);
#   4. runs compute-sanitizer memcheck on a small engine test;
#   5. runs the inference benchmarks side by side (bench/cuda_inference_bench.cpp, bench/torch_prefill.py);
#   6. runs the training benchmarks side by side (bench/cuda_train_bench.cpp, bench/torch_train_step.py);
#   7. writes $OUT/summary.json (what passed, every measured NMSE, the benchmark figures) and logs.
#   bash scripts/gpu-check.sh            # from the repository root; OUT defaults to ./gpu-out
#   S3_GPU_CHECK_STAGES="tests train-bench" bash scripts/gpu-check.sh   # only some stages (the build
#   always runs): references, tests, sanitizer, inference-bench, train-bench; S3_GPU_CHECK_QUICK=1 runs
#   the benchmarks at their --quick sizes.
# All stages together may pass the device tool's 600 s per call; there, run it in two calls on the
# warm machine (the second build is incremental):
#   S3_GPU_CHECK_STAGES="references tests sanitizer inference-bench" bash scripts/gpu-check.sh
#   S3_GPU_CHECK_STAGES="train-bench" bash scripts/gpu-check.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/gpu-out}"
mkdir -p "$OUT"
WORK="${TMPDIR:-/tmp}/s3-gpu-check"
mkdir -p "$WORK"
exec > >(tee "$OUT/gpu-check.log") 2>&1
stage() { echo "== $1 ($(date -u +%H:%M:%S))"; }
STAGES="${S3_GPU_CHECK_STAGES:-references tests sanitizer inference-bench train-bench}"
wanted() { case " $STAGES " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
QUICK=""; [ "${S3_GPU_CHECK_QUICK:-0}" = 1 ] && QUICK="--quick"
echo "stages: $STAGES${QUICK:+ (quick benchmarks)}"

stage "machine"
date -u; nvidia-smi || true; nvcc --version | tail -2; command -v node || echo "no node"
git rev-parse HEAD 2>/dev/null > "$OUT/commit.txt" || echo "unknown" > "$OUT/commit.txt"

# cuBLASLt (and NCCL) from PyTorch's wheels, for the dlopen loader.
site=$(python3 -c 'import site; print(site.getsitepackages()[0])' 2>/dev/null || true)
if [ -n "$site" ] && [ -d "$site/nvidia" ]; then
  export S3_CUDA_LIBRARY_PATH="$(ls -d "$site"/nvidia/*/lib 2>/dev/null | paste -sd:)"
fi
echo "S3_CUDA_LIBRARY_PATH=${S3_CUDA_LIBRARY_PATH:-}"

stage "build (sm_90a, tests and benchmark, no sanitizers)"
start=$(date +%s)
build_ok=1
generator=$(command -v ninja >/dev/null && echo Ninja || echo "Unix Makefiles")
cmake -S . -B build-gpu -G "$generator" -DCMAKE_BUILD_TYPE=Release -DS3_BUILD_TESTS=ON -DS3_SANITIZE=OFF -DS3_CUDA=ON \
  -DS3_BUILD_GPU_BENCH=ON -DS3_CUDA_ARCHITECTURES=90a-real >"$OUT/cmake-configure.log" 2>&1 || build_ok=0
[ "$build_ok" = 1 ] && { cmake --build build-gpu --parallel "$(nproc)" >"$OUT/cmake-build.log" 2>&1 || build_ok=0; }
echo "build ok=$build_ok in $(( $(date +%s) - start )) s"
[ "$build_ok" = 1 ] || tail -60 "$OUT/cmake-build.log" "$OUT/cmake-configure.log" 2>/dev/null

stage "cuBLASLt and NCCL declarations against the official headers"
abi_check() {  # abi_check NAME HEADER: compiles scripts/gpu-check/NAME_abi_check.cpp against the header found
  local header
  header=$(ls "$site"/nvidia/*/include/"$2" 2>/dev/null | head -1)
  if [ -z "$header" ]; then echo "no $2 under $site/nvidia (skipped)"; return 99; fi
  g++ -std=c++17 -fsyntax-only -Inative -I"$(dirname "$header")" -I/usr/local/cuda/include "scripts/gpu-check/$1_abi_check.cpp" \
    >"$OUT/$1-abi-check.txt" 2>&1
  local status=$?
  echo "$1_abi_check against $header: exit $status"; tail -20 "$OUT/$1-abi-check.txt"
  return $status
}
abi_check cublaslt cublasLt.h; abi_status=$?
abi_check nccl nccl.h; nccl_abi_status=$?

stage "transformers reference models"
hf_dirs=""
wanted references || wanted tests || echo "(skipped)"
for shape in $( (wanted references || wanted tests) && echo small qwen3-0.6b); do
  dir="$WORK/hf-$shape"
  rm -rf "$dir"
  if timeout 180 python3 scripts/gpu-check/transformers_reference.py "$dir" "$shape" >>"$OUT/transformers-reference.log" 2>&1; then
    hf_dirs="${hf_dirs:+$hf_dirs:}$dir"
    if [ "$shape" = small ]; then
      timeout 120 python3 scripts/gpu-check/transformers_gradients.py "$dir" >>"$OUT/transformers-reference.log" 2>&1 ||
        { echo "transformers gradients for $shape failed"; tail -20 "$OUT/transformers-reference.log"; }
    fi
  else
    echo "transformers reference for $shape failed"; tail -20 "$OUT/transformers-reference.log"
  fi
done
export S3_HF_CHECK_DIRS="$hf_dirs"

stage "native tests (CUDA against CPU, engine on the device, logits against transformers)"
tests_status=99
if [ "$build_ok" = 1 ] && wanted tests; then
  timeout 300 ./build-gpu/s3_native_tests >"$OUT/native-tests.txt" 2>&1
  tests_status=$?
  grep -E "FAIL|nmse|passed" "$OUT/native-tests.txt" | tail -80
fi

stage "compute-sanitizer memcheck on a small engine test"
sanitizer_status=99
if [ "$build_ok" = 1 ] && wanted sanitizer && command -v compute-sanitizer >/dev/null; then
  timeout 240 compute-sanitizer --tool memcheck --leak-check full ./build-gpu/s3_native_tests cuda_engine_cancel_release \
    >"$OUT/compute-sanitizer.txt" 2>&1
  sanitizer_status=$?
  tail -5 "$OUT/compute-sanitizer.txt"
fi

stage "inference benchmarks (side by side: ours, then PyTorch on the same GPU)"
if wanted inference-bench; then
  if [ "$build_ok" = 1 ]; then
    timeout 300 ./build-gpu/s3_cuda_inference_bench $QUICK >"$OUT/cuda-inference-bench.json" 2>"$OUT/cuda-inference-bench.log"
    echo "cuda_inference_bench exit $?"; cat "$OUT/cuda-inference-bench.json"
  fi
  timeout 180 python3 bench/torch_prefill.py >"$OUT/torch-prefill.json" 2>"$OUT/torch-prefill.log"
  echo "torch_prefill exit $?"; cat "$OUT/torch-prefill.json"
fi

stage "training benchmarks (side by side: ours, then PyTorch on the same GPU)"
if wanted train-bench; then
  if [ "$build_ok" = 1 ]; then
    timeout 240 ./build-gpu/s3_cuda_train_bench $QUICK >"$OUT/cuda-train-bench.json" 2>"$OUT/cuda-train-bench.log"
    echo "cuda_train_bench exit $?"; cat "$OUT/cuda-train-bench.json"
  fi
  timeout 150 python3 bench/torch_train_step.py $QUICK >"$OUT/torch-train-step.json" 2>"$OUT/torch-train-step.log"
  echo "torch_train_step exit $?"; cat "$OUT/torch-train-step.json"; tail -3 "$OUT/torch-train-step.log"
fi

stage "summary"
python3 - "$OUT" "$build_ok" "$tests_status" "$sanitizer_status" "$abi_status" "$nccl_abi_status" <<'PY'
import json, re, sys, pathlib
out, build_ok, tests_status, sanitizer_status = pathlib.Path(sys.argv[1]), sys.argv[2] == "1", int(sys.argv[3]), int(sys.argv[4])
abi_status, nccl_abi_status = int(sys.argv[5]), int(sys.argv[6])
def read(name):
    path = out / name
    return path.read_text(errors="replace") if path.exists() else ""
def load(name):
    try:
        return json.loads(read(name))
    except ValueError:
        return None
tests = {}
for m in re.finditer(r"^\[ *(OK|FAIL|SKIP) *\] (\S+?)(?::|$)", read("native-tests.txt"), re.M):
    tests[m.group(2)] = m.group(1).strip()
nmse = [{"what": m.group(1), "nmse": float(m.group(2)), "threshold": float(m.group(3))}
        for m in re.finditer(r"\[nmse\] (.+?): (\S+) \(threshold (\S+)\)", read("native-tests.txt"))]
sanitizer = re.search(r"ERROR SUMMARY: (\d+) error", read("compute-sanitizer.txt"))
summary = {
    "commit": read("commit.txt").strip(),
    "build": build_ok,
    "tests": {"exit": tests_status, "passed": sum(v == "OK" for v in tests.values()), "failed": [k for k, v in tests.items() if v == "FAIL"],
              "skipped": [k for k, v in tests.items() if v == "SKIP"], "cuda": {k: v for k, v in tests.items() if k.startswith("cuda_")}},
    "nmse": nmse,
    "computeSanitizer": {"exit": sanitizer_status, "errors": int(sanitizer.group(1)) if sanitizer else None},
    "cublasLtAbiCheck": {"exit": abi_status},  # 99: no cublasLt.h found
    "ncclAbiCheck": {"exit": nccl_abi_status},  # 99: no nccl.h found
    "bench": load("cuda-inference-bench.json"),
    "torchPrefill": load("torch-prefill.json"),
    "trainBench": load("cuda-train-bench.json"),
    "torchTrainStep": load("torch-train-step.json"),
}
ours, theirs = (summary["trainBench"] or {}).get("train") or {}, summary["torchTrainStep"] or {}
if ours.get("tokensPerSecond") and theirs.get("tokensPerSecond"):
    summary["trainOverTorch"] = ours["tokensPerSecond"] / theirs["tokensPerSecond"]
(out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
print(json.dumps({k: summary[k] for k in ("build", "computeSanitizer")}, indent=None), "tests:", summary["tests"]["passed"], "passed,",
      len(summary["tests"]["failed"]), "failed", summary["tests"]["failed"][:10])
PY
echo "== done"
[ "$build_ok" = 1 ] && { ! wanted tests || [ "$tests_status" = 0 ]; }
