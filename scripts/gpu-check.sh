#!/usr/bin/env bash
# The one prepared GPU validation run (for the device machine: nvcc, cmake, ninja, PyTorch and
# transformers; no network, maybe no Node, maybe no git). On a bare H200 it:
#   1. builds the native tests and the CUDA benchmarks for sm_90a only, without sanitizers
#      (ASan and the CUDA driver disagree), while PyTorch writes, beside it, randomly initialised
#      transformers Qwen3 models (small and the 0.6B config, bf16) with their reference logits
#      (scripts/gpu-check/transformers_reference.py) and, for small, reference gradients of a weighted
#      SFT loss (scripts/gpu-check/transformers_gradients.py);
#   2. compiles our cuBLASLt and NCCL declarations against the official headers of PyTorch's wheels
#      (scripts/gpu-check/*_abi_check.cpp);
#   3. runs every native test, each in a process of its own so that a crash or a hang names its test
#      and hides no other (CUDA against the CPU, the engine and the trainer on the device, NCCL's
#      one-rank collectives and timeout, our logits and gradients against transformers' through
#      S3_HF_CHECK_DIRS), then some of them again under other settings (attention kernels, decode
#      graphs, tensor-core training attention, S3_CUDA_POISON_MEMORY);
#   4. runs compute-sanitizer memcheck on a small engine test and on the first device tests that
#      failed or crashed;
#   5. runs the inference benchmarks side by side (bench/cuda_inference_bench.cpp, bench/torch_prefill.py);
#   6. runs the training benchmarks side by side (bench/cuda_train_bench.cpp, bench/torch_train_step.py);
#   7. on the host's CPU (stage cpu-bench, not in the default list): the matmul levels amx,
#      avx512bf16 and avx512 and the 0.6B prefill at each, beside PyTorch's BF16 prefill on the same cores;
#   8. where .gpu-bundle/ came along (scripts/gpu-bundle.sh, here: Node, the CUDA addon, dist and the
#      production node_modules), runs the CLI on the device: swarm doctor, swarm bench engine with 256
#      agents, swarm eval on a random s3-mini for both tasks, and a shortened mini pipeline
#      (swarm train --device cuda: SFT, evaluation, RL, evaluation, report); stage `mini` runs the
#      whole default pipeline instead, and stage `paper-update` one RL update of the paper-aggregation
#      preset on a random Qwen3-0.6B (scaled by S3_GPU_CHECK_PAPER_SETS), its seconds split into
#      collection, training and writing;
#   9. writes $OUT/summary.json (what passed, every measured NMSE, the benchmark figures), keeps the
#      console in $OUT/gpu-check.log and every other log in $OUT/logs.tar.gz (the device tool brings
#      back at most 8 files).
#   bash scripts/gpu-check.sh            # from the repository root; OUT defaults to ./gpu-out
# Knobs: S3_GPU_CHECK_STAGES (default "references tests sanitizer inference-bench train-bench cli";
# `mini`, `paper-update` and `cpu-bench` are also known; the GPU build runs unless no stage needs it), S3_GPU_CHECK_QUICK=1 (the benchmarks' --quick sizes), S3_GPU_CHECK_BUDGET
# (seconds for the whole script, default 540: every stage's timeout is cut to what is left, and a
# stage with under 20 s left is skipped and says so, so the summary is always written inside the
# device tool's 600 s per call), S3_COMMIT (the commit to record where the copy has no .git),
# S3_GPU_CHECK_TRAIN_ATTENTION=f32|mma (the training benchmark's attention; default mma unless its
# test failed earlier in the same run).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/gpu-out}"
mkdir -p "$OUT"
WORK="${TMPDIR:-/tmp}/s3-gpu-check"
LOGS="$WORK/logs"
rm -rf "$LOGS"
mkdir -p "$WORK" "$LOGS"
exec > >(tee "$OUT/gpu-check.log") 2>&1
START=$(date +%s)
BUDGET="${S3_GPU_CHECK_BUDGET:-540}"
RESERVE=15  # seconds kept for the summary and the archive
elapsed() { echo $(( $(date +%s) - START )); }
stage() { echo "== $1 (t=$(elapsed) s, $(date -u +%H:%M:%S))"; }
# cap SECONDS: the stage's timeout, cut to the budget left; 0 when under 20 s would be left.
cap() { local left=$(( BUDGET - RESERVE - $(elapsed) )); [ "$left" -lt 20 ] && { echo 0; return; }; [ "$1" -lt "$left" ] && echo "$1" || echo "$left"; }
STAGES="${S3_GPU_CHECK_STAGES:-references tests sanitizer inference-bench train-bench cli}"
wanted() { case " $STAGES " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
QUICK=""; [ "${S3_GPU_CHECK_QUICK:-0}" = 1 ] && QUICK="--quick"
echo "stages: $STAGES${QUICK:+ (quick benchmarks)}; budget ${BUDGET} s"
archive() { tar czf "$OUT/logs.tar.gz" -C "$LOGS" . 2>/dev/null; }
trap archive EXIT

stage "machine"
date -u; nvidia-smi || true
command -v nvcc >/dev/null || export PATH="$PATH:/usr/local/cuda/bin"
nvcc --version | tail -2; command -v node || echo "no node"; nproc
commit=$({ [ -n "${S3_COMMIT:-}" ] && echo "$S3_COMMIT"; } || git rev-parse HEAD 2>/dev/null || echo "unknown")
echo "commit $commit"; echo "$commit" > "$LOGS/commit.txt"

# cuBLASLt (and NCCL) from PyTorch's wheels, for the dlopen loader.
site=$(python3 -c 'import site; print(site.getsitepackages()[0])' 2>/dev/null || true)
if [ -n "$site" ] && [ -d "$site/nvidia" ]; then
  export S3_CUDA_LIBRARY_PATH="$(ls -d "$site"/nvidia/*/lib 2>/dev/null | paste -sd:)"
fi
echo "S3_CUDA_LIBRARY_PATH=${S3_CUDA_LIBRARY_PATH:-}"

# The transformers references run on the GPU while the build takes the CPUs.
references() {
  for shape in small qwen3-0.6b; do
    local dir="$WORK/hf-$shape"
    rm -rf "$dir"
    if timeout 150 python3 scripts/gpu-check/transformers_reference.py "$dir" "$shape" >>"$LOGS/transformers-reference.log" 2>&1; then
      echo "$dir" >>"$WORK/hf-dirs.txt"
      if [ "$shape" = small ]; then
        timeout 100 python3 scripts/gpu-check/transformers_gradients.py "$dir" >>"$LOGS/transformers-reference.log" 2>&1 ||
          echo "transformers gradients for $shape failed" >>"$LOGS/transformers-reference.log"
      fi
    else
      echo "transformers reference for $shape failed" >>"$LOGS/transformers-reference.log"
    fi
  done
}
rm -f "$WORK/hf-dirs.txt"
references_pid=""
if wanted references || wanted tests; then
  references &
  references_pid=$!
fi

stage "build (sm_90a, tests and benchmark, no sanitizers)"
build_start=$(date +%s)
build_ok=1
generator=$(command -v ninja >/dev/null && echo Ninja || echo "Unix Makefiles")
needs_build=0
for s in tests sanitizer inference-bench train-bench; do wanted "$s" && needs_build=1; done
if [ "$needs_build" = 0 ]; then
  build_ok=0; echo "build: not needed by the stages ($STAGES)"
else
timeout "$(cap 240)" cmake -S . -B build-gpu -G "$generator" -DCMAKE_BUILD_TYPE=Release -DS3_BUILD_TESTS=ON -DS3_SANITIZE=OFF -DS3_CUDA=ON \
  -DS3_BUILD_GPU_BENCH=ON -DS3_CUDA_ARCHITECTURES=90a-real >"$LOGS/cmake-configure.log" 2>&1 || build_ok=0
[ "$build_ok" = 1 ] && { timeout "$(cap 240)" cmake --build build-gpu --parallel "$(nproc)" >"$LOGS/cmake-build.log" 2>&1 || build_ok=0; }
fi
build_seconds=$(( $(date +%s) - build_start ))
echo "build ok=$build_ok in $build_seconds s"
[ "$build_ok" = 1 ] || [ "$needs_build" = 0 ] || tail -60 "$LOGS/cmake-build.log" "$LOGS/cmake-configure.log" 2>/dev/null

stage "cuBLASLt and NCCL declarations against the official headers"
abi_check() {  # abi_check NAME HEADER: compiles scripts/gpu-check/NAME_abi_check.cpp against the header found
  local header
  header=$(ls "$site"/nvidia/*/include/"$2" 2>/dev/null | head -1)
  if [ -z "$header" ]; then echo "no $2 under $site/nvidia (skipped)"; return 99; fi
  g++ -std=c++17 -fsyntax-only -Inative -I"$(dirname "$header")" -I/usr/local/cuda/include "scripts/gpu-check/$1_abi_check.cpp" \
    >"$LOGS/$1-abi-check.txt" 2>&1
  local status=$?
  echo "$1_abi_check against $header: exit $status"; tail -20 "$LOGS/$1-abi-check.txt"
  return $status
}
abi_check cublaslt cublasLt.h; abi_status=$?
abi_check nccl nccl.h; nccl_abi_status=$?

stage "transformers reference models"
if [ -n "$references_pid" ]; then
  wait "$references_pid"
  tail -5 "$LOGS/transformers-reference.log"
else
  echo "(skipped)"
fi
S3_HF_CHECK_DIRS="$( [ -f "$WORK/hf-dirs.txt" ] && paste -sd: "$WORK/hf-dirs.txt")"
export S3_HF_CHECK_DIRS
echo "S3_HF_CHECK_DIRS=$S3_HF_CHECK_DIRS"

stage "native tests, one process each (CUDA against CPU, engine and trainer on the device, against transformers)"
tests_status=99
: >"$LOGS/native-tests.txt"
: >"$WORK/failed-device-tests.txt"
if [ "$build_ok" = 1 ] && wanted tests; then
  tests_status=0
  for name in $(./build-gpu/s3_native_tests --list); do
    limit=$(cap 90)
    if [ "$limit" = 0 ]; then echo "[ FAIL ] $name: not run, the budget ran out" >>"$LOGS/native-tests.txt"; tests_status=1; continue; fi
    test_start=$(date +%s%N)
    timeout "$limit" ./build-gpu/s3_native_tests "=$name" >"$WORK/one-test.txt" 2>&1
    status=$?
    grep -v '^[0-9]* passed, [0-9]* failed' "$WORK/one-test.txt" >>"$LOGS/native-tests.txt"
    if [ "$status" != 0 ]; then
      tests_status=1
      grep -q "^\[ FAIL \] $name\$" "$WORK/one-test.txt" ||
        echo "[ FAIL ] $name: exit $status ($( [ "$status" = 124 ] && echo "timed out after $limit s" || echo "crashed"))" >>"$LOGS/native-tests.txt"
      case "$name" in *cuda*|*nccl*|*transformers*) echo "$name" >>"$WORK/failed-device-tests.txt" ;; esac
    fi
    echo "$name $(( ($(date +%s%N) - test_start) / 1000000 )) ms exit $status" >>"$LOGS/test-times.txt"
  done
  # rerun_with "VAR=VALUE [VAR=VALUE...]" SUFFIX NAME...: device tests again under those environment
  # settings (no spaces inside a value), logged as NAME@SUFFIX.
  rerun_with() {
    local setting=$1 suffix=$2 name limit status
    shift 2
    for name in "$@"; do
      limit=$(cap 90)
      [ "$limit" = 0 ] && return
      # shellcheck disable=SC2086  # the settings split into words on purpose
      env $setting timeout "$limit" ./build-gpu/s3_native_tests "=$name" >"$WORK/one-test.txt" 2>&1
      status=$?
      sed "s/\] $name/] $name@$suffix/" "$WORK/one-test.txt" | grep -v '^[0-9]* passed, [0-9]* failed' >>"$LOGS/native-tests.txt"
      if [ "$status" != 0 ]; then
        tests_status=1
        grep -q "^\[ FAIL \]" "$WORK/one-test.txt" || echo "[ FAIL ] $name@$suffix: exit $status" >>"$LOGS/native-tests.txt"
      fi
    done
  }
  # The engine's token-invariance tests under the attention implementations not yet the default,
  # and the device trainer's tests with its attention on tensor cores (not yet the default either).
  for kernel in tiled tiled-mma; do
    rerun_with "S3_CUDA_ATTENTION=$kernel" "$kernel" \
      cuda_engine_batching_and_preemption_change_no_token cuda_engine_prefix_caching_changes_no_token
  done
  # The same token-invariance tests with decode steps replayed from CUDA graphs (opt-in until measured).
  rerun_with S3_CUDA_GRAPHS=1 graphs cuda_engine_batching_and_preemption_change_no_token cuda_engine_prefix_caching_changes_no_token \
    cuda_engine_batching_and_preemption_change_no_token_with_fp8_weights
  rerun_with "S3_CUDA_GRAPHS=1 S3_CUDA_ATTENTION=tiled" graphs-tiled cuda_engine_batching_and_preemption_change_no_token
  rerun_with S3_CUDA_TRAIN_ATTENTION=mma train-mma \
    cuda_qwen3_training_pass_matches_cpu cuda_trainer_matches_the_cpu_trainer cuda_trainer_repeats_itself_and_resumes_bit_identically
  # The runner, the engine and the trainer with every device block filled with 0xFF bytes (NaN) when
  # handed out, reused ones too: a read of memory nothing wrote in this use gives NaN.
  rerun_with S3_CUDA_POISON_MEMORY=1 poisoned \
    cuda_model_scores_match_the_cpu cuda_engine_batching_and_preemption_change_no_token cuda_engine_prefix_caching_changes_no_token \
    cuda_engine_batching_and_preemption_change_no_token_with_fp8_weights cuda_gemm_matches_the_cpu_on_the_same_inputs_and_is_batch_invariant \
    cuda_qwen3_training_pass_matches_cpu cuda_trainer_matches_the_cpu_trainer cuda_trainer_repeats_itself_and_resumes_bit_identically
  grep -E "FAIL|nmse|skipped on|^\[ SKIP" "$LOGS/native-tests.txt" | tail -100
  echo "passed $(grep -c '^\[   OK \]' "$LOGS/native-tests.txt"), failed $(grep -c '^\[ FAIL \]' "$LOGS/native-tests.txt"), skipped $(grep -c '^\[ SKIP \]' "$LOGS/native-tests.txt")"
fi

stage "compute-sanitizer memcheck: a small engine test, then the first failing device tests"
sanitizer_status=99
if [ "$build_ok" = 1 ] && wanted sanitizer && command -v compute-sanitizer >/dev/null; then
  : >"$LOGS/compute-sanitizer.txt"
  # memcheck on an engine test, on the attention tests (three implementations, cp.async and
  # ldmatrix among them) and on decode graphs (padding rows must write nothing), then on the first
  # device tests that failed.
  for name in cuda_engine_cancel_release_and_close_answer_every_request_once \
      cuda_attention_matches_the_reference_and_the_cpu_for_every_cache_dtype_and_group \
      cuda_decode_graphs_replay_the_eager_steps_bit_for_bit \
      cuda_training_attention_on_tensor_cores_matches_cpu $(head -3 "$WORK/failed-device-tests.txt"); do
    limit=$(cap 90)
    [ "$limit" = 0 ] && { echo "sanitizer on $name: not run, the budget ran out"; continue; }
    echo "--- $name" >>"$LOGS/compute-sanitizer.txt"
    timeout "$limit" compute-sanitizer --tool memcheck --leak-check full --print-limit 20 ./build-gpu/s3_native_tests "=$name" \
      >>"$LOGS/compute-sanitizer.txt" 2>&1
    status=$?
    [ "$name" = cuda_engine_cancel_release_and_close_answer_every_request_once ] && sanitizer_status=$status
    echo "sanitizer on $name: exit $status"
  done
  # Shared-memory hazards of the tensor-core training attention (its tiles are restaged every step).
  limit=$(cap 120)
  if [ "$limit" != 0 ]; then
    echo "--- racecheck cuda_training_attention_on_tensor_cores_matches_cpu" >>"$LOGS/compute-sanitizer.txt"
    timeout "$limit" compute-sanitizer --tool racecheck --print-limit 20 ./build-gpu/s3_native_tests \
      "=cuda_training_attention_on_tensor_cores_matches_cpu" >>"$LOGS/compute-sanitizer.txt" 2>&1
    echo "racecheck on cuda_training_attention_on_tensor_cores_matches_cpu: exit $?"
  fi
  grep -E "^---|ERROR SUMMARY|Invalid|Program hit|at .*in " "$LOGS/compute-sanitizer.txt" | head -40
fi

stage "inference benchmarks (side by side: ours, then PyTorch on the same GPU)"
if wanted inference-bench; then
  if [ "$build_ok" = 1 ] && [ "$(cap 200)" != 0 ]; then
    timeout "$(cap 200)" ./build-gpu/s3_cuda_inference_bench $QUICK >"$LOGS/cuda-inference-bench.json" 2>"$LOGS/cuda-inference-bench.log"
    echo "cuda_inference_bench exit $?"; cat "$LOGS/cuda-inference-bench.json"; tail -5 "$LOGS/cuda-inference-bench.log"
  fi
  if [ "$(cap 90)" != 0 ]; then
    # the same shape as ours: 32 × 2,048, or 8 × 2,048 with --quick
    timeout "$(cap 90)" python3 bench/torch_prefill.py --sequences "$([ -n "$QUICK" ] && echo 8 || echo 32)" >"$LOGS/torch-prefill.json" 2>"$LOGS/torch-prefill.log"
    echo "torch_prefill exit $?"; cat "$LOGS/torch-prefill.json"
  else
    echo "torch_prefill: not run, the budget ran out"
  fi
fi

stage "training benchmarks (side by side: ours, then PyTorch on the same GPU)"
if wanted train-bench; then
  if [ "$build_ok" = 1 ] && [ "$(cap 240)" != 0 ]; then
    # SIGTERM at the limit: the benchmark then closes its JSON with the phase it was in.
    # The trainer's steps with the tensor-core attention (the probe times both attention kernels),
    # unless its test failed earlier in this run (S3_GPU_CHECK_TRAIN_ATTENTION=f32|mma decides instead).
    train_attention=${S3_GPU_CHECK_TRAIN_ATTENTION:-mma}
    if [ -z "${S3_GPU_CHECK_TRAIN_ATTENTION:-}" ] && grep -q "^\[ FAIL \] cuda_training_attention_on_tensor_cores_matches_cpu" "$LOGS/native-tests.txt" 2>/dev/null; then
      train_attention=f32
    fi
    echo "cuda_train_bench: the trainer's attention is $train_attention"
    S3_CUDA_TRAIN_ATTENTION=$train_attention timeout "$(cap 240)" ./build-gpu/s3_cuda_train_bench $QUICK >"$LOGS/cuda-train-bench.json" 2>"$LOGS/cuda-train-bench.log"
    echo "cuda_train_bench exit $?"; cat "$LOGS/cuda-train-bench.json"; tail -25 "$LOGS/cuda-train-bench.log"
  fi
  if [ "$(cap 120)" != 0 ]; then
    timeout "$(cap 120)" python3 bench/torch_train_step.py $QUICK >"$LOGS/torch-train-step.json" 2>"$LOGS/torch-train-step.log"
    echo "torch_train_step exit $?"; cat "$LOGS/torch-train-step.json"; tail -3 "$LOGS/torch-train-step.log"
  else
    echo "torch_train_step: not run, the budget ran out"
  fi
fi

stage "cpu-bench: the host CPU's matmul levels (amx against avx512bf16 and avx512) and prefill, beside PyTorch"
# The device host's Xeon has AMX, which the development machines lack: the amx level's kernels
# and prefill timed against the avx512bf16 and f32 levels and against PyTorch's own BF16 prefill on
# the same cores, and prefill attention alone (bench/matmul_bench.cpp, bench/qwen3_forward_bench.cpp,
# bench/attention_bench.cpp, bench/torch_qwen3.py).
if wanted cpu-bench; then
  if [ "$(cap 150)" != 0 ] && timeout "$(cap 90)" cmake -S . -B build-cpu-bench -G "$generator" -DCMAKE_BUILD_TYPE=Release -DS3_CUDA=OFF \
       >"$LOGS/cpu-bench-build.log" 2>&1 && timeout "$(cap 90)" cmake --build build-cpu-bench --target s3_core --parallel "$(nproc)" \
       >>"$LOGS/cpu-bench-build.log" 2>&1; then
    for bench in matmul_bench qwen3_forward_bench attention_bench; do
      g++ -std=c++17 -O3 -Inative "bench/$bench.cpp" build-cpu-bench/libs3_core.a -lpthread -ldl -o "$WORK/$bench" >>"$LOGS/cpu-bench-build.log" 2>&1
    done
    grep -m1 "model name" /proc/cpuinfo; grep -m1 -o -w -E "amx_bf16|avx512_bf16" /proc/cpuinfo | sort -u | paste -sd' '
    threads=$(nproc)
    [ "$(cap 60)" != 0 ] && { timeout "$(cap 60)" "$WORK/matmul_bench" "$threads" BF16 >"$LOGS/cpu-matmul-bench.txt" 2>&1; echo "matmul_bench exit $?"; grep -E "M= *(1|64|512) " "$LOGS/cpu-matmul-bench.txt"; }
    [ "$(cap 30)" != 0 ] && { timeout "$(cap 30)" "$WORK/attention_bench" prefill "$threads" 3 >"$LOGS/cpu-attention-prefill.txt" 2>&1; echo "attention_bench prefill exit $?"; head -8 "$LOGS/cpu-attention-prefill.txt"; }
    for level in amx avx512bf16 avx512; do
      [ "$(cap 45)" = 0 ] && break
      S3_SIMD=$level timeout "$(cap 45)" "$WORK/qwen3_forward_bench" 0.6b BF16 prefill >"$LOGS/cpu-forward-$level.txt" 2>&1
      echo "qwen3_forward_bench $level exit $?"; cat "$LOGS/cpu-forward-$level.txt"
    done
    if [ "$(cap 90)" != 0 ]; then
      OMP_WAIT_POLICY=PASSIVE timeout "$(cap 90)" python3 bench/torch_qwen3.py --dtype bf16 --threads "$threads" --prefill 1x512,4x512 \
        --decode 8 --context 256 --repetitions 3 >"$LOGS/cpu-torch-prefill.json" 2>"$LOGS/cpu-torch-prefill.log"
      echo "torch_qwen3 bf16 exit $?"; cat "$LOGS/cpu-torch-prefill.json"; tail -3 "$LOGS/cpu-torch-prefill.log"
    fi
  else
    echo "cpu-bench: the CPU build failed or the budget ran out"; tail -20 "$LOGS/cpu-bench-build.log" 2>/dev/null
  fi
fi

stage "cli: Node on the device (swarm doctor, bench engine, eval, the mini pipeline, a paper-aggregation update)"
cli_status=99
if { wanted cli || wanted mini || wanted paper-update; } && [ -f .gpu-bundle/node.xz ]; then
  mkdir -p "$WORK/node-bin" build/Release
  xz -dc .gpu-bundle/node.xz >"$WORK/node-bin/node" && chmod +x "$WORK/node-bin/node"
  export PATH="$WORK/node-bin:$PATH"
  [ -d node_modules ] || tar xJf .gpu-bundle/node_modules.tar.xz
  [ -d dist ] || tar xJf .gpu-bundle/dist.tar.xz
  cp .gpu-bundle/s3_native.node build/Release/s3_native.node
  cli_status=0
  # cli_step NAME SECONDS ARGS...: one swarm command, its output in $LOGS/cli-NAME.txt, its exit and time printed.
  cli_step() {
    local name=$1 limit; limit=$(cap "$2"); shift 2
    if [ "$limit" = 0 ]; then echo "cli $name: not run, the budget ran out"; cli_status=1; return; fi
    local t0; t0=$(date +%s)
    timeout "$limit" node bin/swarm.js "$@" >"$LOGS/cli-$name.txt" 2>&1
    local status=$?
    echo "cli $name: exit $status in $(( $(date +%s) - t0 )) s"; tail -4 "$LOGS/cli-$name.txt"
    [ "$status" = 0 ] || cli_status=1
  }
  cli_step doctor 30 doctor --json
  if wanted cli; then
    cli_step bench-engine 90 bench engine --device cuda --agents 256 --kv-dtype bf16 --json
    cli_step model-init 30 model init --shape s3-mini --seed 1 --out "$WORK/s3-mini-random"
    cli_step eval-aggregation 60 eval --model "$WORK/s3-mini-random" --device cuda --task aggregation-digits --sizes 2,4 \
      --seeds 1 --problems 8 --out "$WORK/eval-aggregation"
    cli_step eval-exploration 60 eval --model "$WORK/s3-mini-random" --device cuda --task exploration --sizes 2 \
      --seeds 1 --problems 4 --out "$WORK/eval-exploration"
    cli_step train-short 180 train --device cuda --out "$WORK/mini-short" --set rlUpdates=4 --set sft.demonstrations=40 \
      --set sft.excerptUpdates=20 --set sft.updates=6 --set evaluation.seeds=1
    cp "$WORK/mini-short/metrics.jsonl" "$LOGS/cli-train-short-metrics.jsonl" 2>/dev/null
  fi
  if wanted mini; then
    cli_step mini 540 train --device cuda --out "$WORK/mini"
    cp "$WORK/mini/metrics.jsonl" "$LOGS/cli-mini-metrics.jsonl" 2>/dev/null
  fi
  if wanted paper-update; then
    # Issue 19's update: one RL update of the paper-aggregation preset (its learner, precision, KL
    # penalty, concurrency of 256 episodes, checkpoint) on a random Qwen3-0.6B with the s3-mini
    # tokenizer, collected by the engine on the device and trained there; metrics.jsonl splits its
    # seconds into collectSeconds, trainSeconds and writeSeconds. S3_GPU_CHECK_PAPER_SETS (space-separated
    # key=value) scales it; the default is a quarter of the paper's teams with shorter allowances, and
    # an empty value runs the paper's own 256 teams × 4 agents with 8,192 + 1,024 tokens each.
    cli_step model-init-0.6b 60 model init --shape qwen3-0.6b --seed 1 --out "$WORK/qwen3-0.6b-random"
    paper_sets=()
    for s in ${S3_GPU_CHECK_PAPER_SETS-problemsPerUpdate=8 workAllowance=512 finalAllowance=128 generationPieceTokens=512}; do
      paper_sets+=(--set "$s")
    done
    cli_step paper-update 480 train --preset paper-aggregation --model "$WORK/qwen3-0.6b-random" --device cuda --no-eval \
      --out "$WORK/paper-update" --set rlUpdates=1 "${paper_sets[@]}"
    cp "$WORK/paper-update/metrics.jsonl" "$LOGS/cli-paper-update-metrics.jsonl" 2>/dev/null
    cp "$WORK/paper-update/config.json" "$LOGS/cli-paper-update-config.json" 2>/dev/null
  fi
elif wanted cli || wanted mini || wanted paper-update; then
  echo "no .gpu-bundle here (make it with scripts/gpu-bundle.sh and carry it): the CLI stages did not run"
fi

stage "summary"
python3 - "$LOGS" "$OUT" "$build_ok" "$tests_status" "$sanitizer_status" "$abi_status" "$nccl_abi_status" "$build_seconds" "$STAGES" "$cli_status" <<'PY'
import json, re, sys, pathlib
logs, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
build_ok, tests_status, sanitizer_status = sys.argv[3] == "1", int(sys.argv[4]), int(sys.argv[5])
abi_status, nccl_abi_status, build_seconds, stages = int(sys.argv[6]), int(sys.argv[7]), int(sys.argv[8]), sys.argv[9].split()
cli_status = int(sys.argv[10])
def read(name):
    path = logs / name
    return path.read_text(errors="replace") if path.exists() else ""
def load(name):
    try:
        return json.loads(read(name))
    except ValueError:
        return None
tests = {}
for m in re.finditer(r"^\[ *(OK|FAIL|SKIP) *\] (\S+?)(?::|$)", read("native-tests.txt"), re.M):
    tests[m.group(2)] = m.group(1).strip()
times = {}
for m in re.finditer(r"^(\S+) (\d+) ms exit", read("test-times.txt"), re.M):
    times[m.group(1)] = int(m.group(2)) / 1000
nmse = [{"what": m.group(1), "nmse": float(m.group(2)), "threshold": float(m.group(3))}
        for m in re.finditer(r"\[nmse\] (.+?): (\S+) \(threshold (\S+)\)", read("native-tests.txt"))]
sanitizer = re.search(r"ERROR SUMMARY: (\d+) error", read("compute-sanitizer.txt"))
device = lambda k: "cuda" in k or "nccl" in k or "transformers" in k
summary = {
    "commit": read("commit.txt").strip(),
    "stages": stages,
    "build": build_ok,
    "buildSeconds": build_seconds,
    "tests": {"exit": tests_status, "passed": sum(v == "OK" for v in tests.values()), "failed": [k for k, v in tests.items() if v == "FAIL"],
              "skipped": [k for k, v in tests.items() if v == "SKIP"], "device": {k: v for k, v in tests.items() if device(k)},
              "deviceSeconds": {k: t for k, t in times.items() if device(k)}},
    "nmse": nmse,
    "computeSanitizer": {"exit": sanitizer_status, "errors": int(sanitizer.group(1)) if sanitizer else None},
    "cublasLtAbiCheck": {"exit": abi_status},  # 99: no cublasLt.h found
    "ncclAbiCheck": {"exit": nccl_abi_status},  # 99: no nccl.h found
    "bench": load("cuda-inference-bench.json"),
    "torchPrefill": load("torch-prefill.json"),
    "trainBench": load("cuda-train-bench.json"),
    "torchTrainStep": load("torch-train-step.json"),
    "cpuTorchPrefill": load("cpu-torch-prefill.json"),
    "cli": {"exit": cli_status,  # 99: not run (no .gpu-bundle, or not a wanted stage)
            "doctor": load("cli-doctor.txt"), "benchEngine": load("cli-bench-engine.txt")},
}
ours, theirs = (summary["trainBench"] or {}).get("train") or {}, summary["torchTrainStep"] or {}
if ours.get("tokensPerSecond") and theirs.get("tokensPerSecond"):
    summary["trainOverTorch"] = ours["tokensPerSecond"] / theirs["tokensPerSecond"]
# Model FLOPs utilisation of both training steps (the same FLOPs formula) against the GPU's datasheet
# dense BF16 peak (native/bench/device_peaks.cpp; null for a GPU not in its table) and against the best
# 8,192-cube BF16 matmul torch reached in the same run.
peak = ((summary["trainBench"] or {}).get("devicePeak") or {}).get("bf16Tflops")
gemm = theirs.get("bf16GemmTflops")
fraction = lambda tflops, of: tflops / of if tflops and of else None
# Prefill: each BF16 entry of ours (one per attention kernel) over PyTorch's on the same shape, and
# both MFUs against the datasheet peak (PyTorch's from our FLOP count of the same prefill).
prefills, torch_prefill = (summary["bench"] or {}).get("prefill") or [], summary["torchPrefill"] or {}
prefill_peak = ((summary["bench"] or {}).get("devicePeak") or {}).get("bf16Tflops")
same_shape = [p for p in prefills if p.get("weights") == "bf16" and p.get("tokensPerSecond") and
              (p.get("sequences"), p.get("tokens")) == (torch_prefill.get("sequences"), torch_prefill.get("tokens"))]
if same_shape and torch_prefill.get("tokensPerSecond"):
    summary["prefillOverTorch"] = {p["attentionKernel"]: p["tokensPerSecond"] / torch_prefill["tokensPerSecond"] for p in same_shape}
    summary["prefillMfu"] = {"datasheetBf16Tflops": prefill_peak, "ours": {p["attentionKernel"]: p.get("mfu") for p in same_shape},
                             "torch": fraction(same_shape[0]["flops"] / torch_prefill["seconds"] / 1e12, prefill_peak)}
# One paper-aggregation update (stage paper-update): its settings and its seconds, split.
paper_lines = [json.loads(l) for l in read("cli-paper-update-metrics.jsonl").splitlines() if l.strip().startswith("{")]
paper_rl, paper_config = [l for l in paper_lines if l.get("stage") == "rl"], load("cli-paper-update-config.json") or {}
if paper_rl:
    u = paper_rl[-1]
    summary["paperUpdate"] = {
        "teams": paper_config.get("problemsPerUpdate", 0) * paper_config.get("attemptsPerProblem", 0),
        **{k: paper_config.get(k) for k in ("teamSize", "workAllowance", "finalAllowance", "concurrentEpisodes", "precision")},
        **{k: u.get(k) for k in ("seconds", "collectSeconds", "trainSeconds", "writeSeconds", "episodes", "tokens",
                                 "generatedTokensPerSecond", "trainTokens", "sharedPrefixTokens", "trainTokensPerSecond")},
        "generatedTokens": round(u.get("generatedTokensPerSecond", 0) * u.get("seconds", 0)),
        "paperTarget": "<= 60 s for 256 teams x 4 agents, 8,192 + 1,024 tokens each (issue 19)",
    }
summary["trainMfu"] = {"datasheetBf16Tflops": peak, "bf16GemmTflops": gemm,
                       "ours": fraction(ours.get("tflops"), peak), "torch": fraction(theirs.get("tflops"), peak),
                       "oursOfGemm": fraction(ours.get("tflops"), gemm), "torchOfGemm": fraction(theirs.get("tflops"), gemm)}
(out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
print(json.dumps({k: summary[k] for k in ("build", "computeSanitizer")}, indent=None), "tests:", summary["tests"]["passed"], "passed,",
      len(summary["tests"]["failed"]), "failed", summary["tests"]["failed"][:20])
PY
archive
echo "== done (t=$(elapsed) s)"
{ [ "$build_ok" = 1 ] || [ "$needs_build" = 0 ]; } && { ! wanted tests || [ "$tests_status" = 0 ]; }
