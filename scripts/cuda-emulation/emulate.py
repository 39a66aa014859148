#!/usr/bin/env python3
"""emulate.py: runs CUDA kernels of native/cuda on the CPU, without a GPU, to check them.

The kernels' own source is translated into host C++ (device qualifiers dropped, `__shared__`
variables made function statics, `kernel<<<grid, block, shared, stream>>>(args)` turned into an
emulated launch, the inline-PTX helpers replaced) and compiled over warp_emulation.h, which runs
every CUDA thread as a fiber taking turns at barriers and emulates warp shuffles and votes, mma.sync
and ldmatrix from the PTX fragment layouts; include/ stands in for the CUDA runtime headers (streams
that record their work while captured into a CUDA graph, and graphs that replay it). Each check
links the translated sources with the CPU core library and compares against the CPU twins:
  train-attention:  cuda/attention_train_mma (tensor cores) and cuda/attention_backward (f32) against
                    cpu/attention_backward, through their own launchers;
  attention:        cuda/attention (split), attention_tiled and attention_mma (tiled-mma) against
                    cpu/attention on paged caches (f32, bf16, fp8), prefill and decode batches;
  fp8-weights:      cuda/fp8_weights (FP8 weights made on the device) against model/fp8_quantize and
                    the host upload's widening, bit for bit;
  gpu-test-attention-backward: the tensor-core test of the GPU test file
                    test_cuda_attention_backward.cpp itself (its thresholds on its own inputs),
                    device arrays in host memory.
  gpu-test-loss:    the GPU test file test_cuda_loss.cpp itself: the fused LM-head loss on the device
                    (train/losses_cuda, its kernels and cuBLASLt plans) against the CPU loss, with
                    cublaslt_standin.cpp built as libcublasLt.so.13 (f32/bf16 products summed in
                    double; block-scaled FP8 as the docs describe it, or refused with
                    S3_CUBLASLT_STANDIN_FP8=refuse) and found through S3_CUDA_LIBRARY_PATH.
  gpu-test-model-scores, gpu-test-trainer: GPU tests over the whole device path (every CUDA source
                    of native/sources.json and the host files that choose the device), with the same
                    stand-in: test_cuda_model.cpp's scores test, and every test of test_cuda_trainer.cpp.
  gpu-tests:        the GPU test files (GPU_TEST_FILES) over the whole device path in one binary:
                    the tests named after the build directory, each run alone.
  inference-bench, train-bench: the GPU check's benchmark binaries (bench/cuda_*_bench.cpp) over
                    the whole device path at their --smoke size: their JSON must parse and report no
                    error; the figures mean nothing.
  addon:            not a check: the addon itself over the whole device path, in a copy of the
                    package under <build-dir>/cuda-emulation-addon, for running the CLI with
                    --device cuda (build-dir: a CPU-only build configured position-independent);
                    cli_compare.py then compares its commands with the CPU's.
  orders:           not a check of its own: runs checks (every one `all` runs but the benchmarks,
                    or those named; `gpu-tests NAME...` for GPU tests) once per schedule of the
                    emulated threads (ORDERS: S3_EMU_ORDER, the order they take turns in, and
                    S3_EMU_COPIES, when cp.async copies land; warp_emulation.h) and requires each
                    to pass with the same output, times left out: a kernel that reads memory
                    across a missing barrier or wait gives other bits in another schedule.
Seconds to minutes per check (`all`: about 5.5 min on 2 vCPUs, gpu-test-trainer the longest at 2 min;
some single GPU tests run 15 min); a development tool, not part of CI. Objects are kept in
<build-dir>/cuda-emulation and rebuilt when their source or a header they include (g++ -MMD)
changes (delete the folder after changing the compiler flags here).

Usage (from the repository root, after `cmake --build build-cpu-bench` or another CPU-only build
directory holding libs3_core.a): python3 scripts/cuda-emulation/emulate.py [train-attention|attention|fp8-weights|gpu-test-attention-backward|gpu-test-loss|
  gpu-test-model-scores|gpu-test-trainer|inference-bench|train-bench|all] [build-dir]
  python3 scripts/cuda-emulation/emulate.py gpu-tests [build-dir] [test-name ...]
  python3 scripts/cuda-emulation/emulate.py addon build-cpu-pic
  python3 scripts/cuda-emulation/emulate.py orders [build-dir] [check ... | gpu-tests test-name ...]
"""
import json
import os
import re
import subprocess
import sys
import time

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
here = os.path.dirname(os.path.abspath(__file__))
what = sys.argv[1] if len(sys.argv) > 1 else "all"
build = os.path.join(root, sys.argv[2] if len(sys.argv) > 2 else "build-cpu-bench")
out_dir = os.path.join(build, "cuda-emulation")

# Device helpers written in inline PTX, replaced by warp_emulation.h's.
EMULATED = {"mma_bf16", "load_matrices", "load_matrices_transposed", "copy16_async", "copy4_async", "zero16_async",
            "commit_async", "wait_async"}

# check: (sources translated from native/cuda, host sources compiled as they are, the check's main)
CHECKS = {
    "train-attention": (["attention_train_mma.cu", "attention_backward.cu", "dtype_kernels.cu"], ["native/cuda/check.cpp"],
                        "train_attention_check.cpp"),
    "attention": (["attention.cu", "attention_tiled.cu", "attention_mma.cu"],
                  ["native/cuda/check.cpp", "native/cuda/attention_plan.cpp"], "attention_check.cpp"),
    "fp8-weights": (["fp8_weights.cu"], ["native/cuda/check.cpp"], "fp8_weights_check.cpp"),
    # The GPU test file itself, its device arrays in host memory: its tensor-core test (the f32
    # kernels' test, a block per row, takes hours in the emulation).
    "gpu-test-attention-backward": (["attention_train_mma.cu", "attention_backward.cu", "dtype_kernels.cu"],
                                    ["native/cuda/check.cpp", "native/tests/test_main.cpp"],
                                    "../../native/tests/test_cuda_attention_backward.cpp",
                                    ["=cuda_training_attention_on_tensor_cores_matches_cpu"]),
    # The GPU test file itself over the cuBLASLt stand-in (USES_CUBLASLT): device discovery, the
    # loader, the GEMM plans and the allocator run as they are, over the stand-in runtime.
    "gpu-test-loss": (["token_loss.cu", "dtype_kernels.cu", "embedding.cu", "device_info.cu"],
                      ["native/cuda/check.cpp", "native/cuda/cublaslt.cpp", "native/cuda/matmul.cpp",
                       "native/cuda/matmul_backward.cpp", "native/cuda/device_memory.cpp", "native/train/losses_cuda.cpp",
                       "native/model/device.cpp", "native/tests/test_main.cpp"],
                      "../../native/tests/test_cuda_loss.cpp", ["=cuda_fused_head_loss_matches_cpu"]),
}
# Every CUDA source of the build (native/sources.json), with the host files that choose the device:
# the whole device path, for the GPU tests of the model and the trainer.
with open(os.path.join(root, "native/sources.json")) as f:
    _cuda = json.load(f)["cuda"]
WHOLE = ([os.path.basename(p) for p in _cuda if p.endswith(".cu")],
         [p for p in _cuda if p.endswith(".cpp")] + ["native/model/device.cpp", "native/engine/model_runner.cpp",
                                                     "native/train/trainer_compute.cpp", "native/tests/test_main.cpp"])
CHECKS["gpu-test-model-scores"] = WHOLE + ("../../native/tests/test_cuda_model.cpp", ["=cuda_model_scores_match_the_cpu"])
CHECKS["gpu-test-trainer"] = WHOLE + ("../../native/tests/test_cuda_trainer.cpp", [])
# The GPU test files over the whole device path in one binary; the tests to run are named after the
# build directory (each run alone), or every test of these files runs. The loader's and NCCL's
# tests need their fake libraries and are left out.
GPU_TEST_FILES = ["test_cuda_core.cpp", "test_cuda_device_memory.cpp", "test_cuda_ops.cpp", "test_cuda_gemm.cpp", "test_cuda_backward.cpp", "test_cuda_attention.cpp",
                  "test_cuda_attention_backward.cpp", "test_cuda_decode_graphs.cpp", "test_cuda_model.cpp",
                  "test_cuda_loss.cpp", "test_cuda_train.cpp", "test_cuda_trainer.cpp", "test_cuda_data_parallel.cpp",
                  "test_engine_threads.cpp"]
CHECKS["gpu-tests"] = (WHOLE[0], WHOLE[1] + ["native/tests/" + f for f in GPU_TEST_FILES[1:]],
                       "../../native/tests/" + GPU_TEST_FILES[0], None)
# The GPU check's benchmark binaries at their --smoke size (the `small` shape, a few short
# sequences): every section once over the whole device path; their JSON must parse and hold no
# "error" or "incomplete". The figures mean nothing here.
_WHOLE_HOST = [p for p in WHOLE[1] if not p.endswith("test_main.cpp")]
CHECKS["inference-bench"] = (WHOLE[0], _WHOLE_HOST, "../../bench/cuda_inference_bench.cpp", ["--smoke"])
CHECKS["train-bench"] = (WHOLE[0], _WHOLE_HOST, "../../bench/cuda_train_bench.cpp", ["--smoke"])
JSON_OUTPUT = {"inference-bench", "train-bench"}
USES_CUBLASLT = {"gpu-test-loss", "gpu-test-model-scores", "gpu-test-trainer", "gpu-tests", "inference-bench", "train-bench"}


def matching(text, i, open_char, close_char):
    """Index just past the bracket closing the one at text[i], skipping string and char literals."""
    depth, j, quote = 0, i, None
    while j < len(text):
        c = text[j]
        if quote:
            if c == "\\":
                j += 1
            elif c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c == open_char:
            depth += 1
        elif c == close_char:
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    raise ValueError("unbalanced " + open_char)


def drop_emulated(text):
    for name in EMULATED:
        for m in reversed(list(re.finditer(r"(template\s*<[^>]*>\s*)?__device__\s+inline\s+\w+\s+" + name + r"\s*\(", text))):
            body = text.index("{", matching(text, m.end() - 1, "(", ")"))
            text = text[:m.start()] + text[matching(text, body, "{", "}"):]
    return text


def split_top(args):
    parts, depth, start = [], 0, 0
    for i, c in enumerate(args):
        if c in "(<[":
            depth += 1
        elif c in ")>]":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(args[start:i].strip())
            start = i + 1
    parts.append(args[start:].strip())
    return parts


def translate_launches(text):
    pattern = re.compile(r"([A-Za-z_][\w:]*(?:<[^<>;]*>)?)\s*<<<(.*?)>>>\s*\(", re.S)
    while True:
        m = pattern.search(text)
        if not m:
            return text
        args_end = matching(text, m.end() - 1, "(", ")")
        semicolon = text.index(";", args_end)
        config = split_top(m.group(2))
        shared = config[2] if len(config) > 2 else "0"
        stream = config[3] if len(config) > 3 else "nullptr"
        arguments = text[m.end():args_end - 1].strip()
        call = "emu::launch_kernel(dim3(%s), dim3(%s), size_t(%s), %s, [](const auto&... a) { %s(a...); }%s)" % (
            config[0], config[1], shared, stream, m.group(1), ", " + arguments if arguments else "")
        text = text[:m.start()] + call + text[semicolon:]


def translate(text):
    text = drop_emulated(text)
    text = translate_launches(text)
    text = re.sub(r"extern\s+__shared__\s+(?:__align__\(\d+\)\s+)?([\w:]+)\s+(\w+)\[\];",
                  r"\1* \2 = reinterpret_cast<\1*>(emu::current->shared.data());", text)
    text = re.sub(r"__global__\s+void\s+__launch_bounds__\([^)]*\)", "void", text)
    text = re.sub(r"__shared__\s+(alignas\([^)]*\))", r"\1 static", text)
    text = text.replace("__global__ ", "").replace("__shared__ ", "static ").replace("__device__ ", "")
    text = text.replace("__host__ ", "").replace("__forceinline__ ", "inline ").replace("__restrict__", "")
    text = re.sub(r"__align__\(\d+\)\s*", "", text)
    return '#include "warp_emulation.h"\n' + text


def write(path, text):
    """Writes text to path unless it already holds it (an unchanged translation keeps its objects)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.exists(path):
        with open(path) as f:
            if f.read() == text:
                return
    with open(path, "w") as f:
        f.write(text)


def up_to_date(obj):
    """Whether obj is newer than its source and every header it included (its -MMD file)."""
    deps = obj[:-2] + ".d"
    if not (os.path.exists(obj) and os.path.exists(deps)):
        return False
    with open(deps) as f:
        listed = f.read().replace("\\\n", " ").split(":", 1)[1].split()
    built = os.path.getmtime(obj)
    return all(os.path.exists(d) and os.path.getmtime(d) <= built for d in listed)


def flags_for(directory):
    return ["g++", "-std=c++20", "-O1", "-ffp-contract=off", "-w", "-DS3_WITH_CUDA=1", "-I" + directory,
            "-I" + os.path.join(here, "include"), "-I" + here, "-I" + os.path.join(root, "native")]


def compile_units(directory, sources, host_sources, extra_flags=(), object_prefix=""):
    """Translates the .cuh files and the .cu sources into `directory`, compiles them with the host
    sources, and returns the objects (each rebuilt only when out of date)."""
    # Every .cuh translated beside the sources, shadowing native/'s (earlier on the include path).
    for name in os.listdir(os.path.join(root, "native/cuda")):
        if name.endswith(".cuh"):
            with open(os.path.join(root, "native/cuda", name)) as f:
                write(os.path.join(directory, "cuda", name), translate(f.read()))
    units = []
    for name in sources:
        with open(os.path.join(root, "native/cuda", name)) as f:
            target = os.path.join(directory, "cuda", name + ".cpp")
            write(target, translate(f.read()))
            units.append(target)
    units += [os.path.join(root, s) for s in host_sources]
    objects = []
    for unit in units:
        obj = os.path.join(directory, object_prefix + os.path.basename(unit) + ".o")
        if not up_to_date(obj):
            subprocess.run(flags_for(directory) + list(extra_flags) + ["-MMD", "-c", unit, "-o", obj], check=True)
        objects.append(obj)
    return objects


def link_replacing(command, target):
    """Runs the link `command` into a new file beside `target`, then renames it over `target`: the
    linker rewrites an existing output in place, which would pull the library from under a process
    that has it loaded (an emulated CLI run); the rename leaves that process its old copy."""
    subprocess.run(command + ["-o", target + ".new"], check=True)
    os.replace(target + ".new", target)


def build_cublaslt_standin(directory):
    """The host cuBLASLt stand-in, built as libcublasLt.so.13 in `directory`."""
    link_replacing(flags_for(directory) + ["-O2", "-shared", "-fPIC", os.path.join(here, "cublaslt_standin.cpp")],
                   os.path.join(directory, "libcublasLt.so.13"))


def run(check):
    sources, host_sources, harness = CHECKS[check][:3]
    arguments = CHECKS[check][3] if len(CHECKS[check]) > 3 else []
    objects = compile_units(out_dir, sources, host_sources + [os.path.relpath(os.path.join(here, harness), root)])
    binary = os.path.join(out_dir, check)
    subprocess.run(["g++", "-o", binary] + objects + [os.path.join(build, "libs3_core.a"), "-lpthread", "-ldl"], check=True)
    env = dict(os.environ)
    if check in USES_CUBLASLT:
        build_cublaslt_standin(out_dir)
        env["S3_CUDA_LIBRARY_PATH"] = out_dir
    if arguments is None:  # gpu-tests: the tests named on the command line, each alone, or all
        named = sys.argv[3:]
        status = 0
        for test in named or [None]:
            print("== %s %s" % (check, test or "(every test)"), flush=True)
            status |= timed(check + " " + (test or "(every test)"), [binary] + (["=" + test] if test else []), env)
        return status
    print("== " + check, flush=True)
    return timed(check, [binary] + arguments, env, os.path.join(out_dir, check + ".json") if check in JSON_OUTPUT else None)


def faults(value, path="$"):
    """The paths of every "error" or "incomplete" key in a parsed JSON value."""
    found = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ("error", "incomplete"):
                found.append("%s.%s: %s" % (path, key, json.dumps(item)[:300]))
            found += faults(item, path + "." + key)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += faults(item, "%s[%d]" % (path, i))
    return found


def timed(name, command, env, json_path=None):
    """Runs a check's binary; prints how long it ran (the build before it not counted). With
    json_path, its stdout is kept there and must be JSON without "error" or "incomplete"."""
    start = time.monotonic()
    if json_path is None:
        status = subprocess.run(command, env=env).returncode
    else:
        result = subprocess.run(command, env=env, stdout=subprocess.PIPE, text=True)
        with open(json_path, "w") as f:
            f.write(result.stdout)
        status = result.returncode
        try:
            problems = faults(json.loads(result.stdout))
        except ValueError as e:
            problems = ["the output is not JSON (%s)" % e]
        for problem in problems:
            print("  " + problem, flush=True)
        print("  output: " + json_path, flush=True)
        status = status or (1 if problems else 0)
    print("== %s: %s in %.0f s" % (name, "passed" if status == 0 else "FAILED", time.monotonic() - start), flush=True)
    return status


def build_addon():
    """The addon over the emulated device path, in a copy of the package that loads it: <build>/
    cuda-emulation-addon/package (bin/ and dist/ copied, so that the package root is this folder;
    node_modules/ and assets/ linked), its build/Release/s3_native.node the emulated addon, and the
    cuBLASLt stand-in beside it. Needs a position-independent libs3_core.a."""
    with open(os.path.join(build, "CMakeCache.txt")) as f:
        if not re.search(r"^CMAKE_POSITION_INDEPENDENT_CODE:\w+=ON$", f.read(), re.M):
            sys.exit("addon: %s must be configured with -DCMAKE_POSITION_INDEPENDENT_CODE=ON (and -DS3_CUDA=OFF), e.g.\n"
                     "  cmake -S . -B build-cpu-pic -DCMAKE_BUILD_TYPE=Release -DS3_CUDA=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON\n"
                     "  cmake --build build-cpu-pic --target s3_core" % build)
    directory = out_dir + "-addon"
    with open(os.path.join(root, "native/sources.json")) as f:
        napi = json.load(f)["napi"]
    objects = compile_units(directory, WHOLE[0], [p for p in WHOLE[1] if not p.endswith("test_main.cpp")], ["-fPIC"])
    objects += compile_units(directory, [], napi, ["-fPIC", "-DNAPI_VERSION=8", "-DNODE_ADDON_API_CPP_EXCEPTIONS",
                                                   '-DS3_BUILD_SYSTEM="cuda-emulation"', "-DBUILDING_NODE_EXTENSION",
                                                   "-I" + os.path.join(root, "node_modules/node-api-headers/include"),
                                                   "-I" + os.path.join(root, "node_modules/node-addon-api")], "napi_")
    package = os.path.join(directory, "package")
    release = os.path.join(package, "build", "Release")
    os.makedirs(release, exist_ok=True)
    link_replacing(["g++", "-shared"] + objects + [os.path.join(build, "libs3_core.a"), "-lpthread", "-ldl"],
                   os.path.join(release, "s3_native.node"))
    for folder in ["bin", "dist"]:  # copied beside, then swapped in: never missing while a run goes on
        target = os.path.join(package, folder)
        subprocess.run(["rm", "-rf", target + ".new", target + ".old"], check=True)
        subprocess.run(["cp", "-r", os.path.join(root, folder), target + ".new"], check=True)
        if os.path.exists(target):
            os.rename(target, target + ".old")
        os.rename(target + ".new", target)
        subprocess.run(["rm", "-rf", target + ".old"], check=True)
    subprocess.run(["cp", os.path.join(root, "package.json"), package], check=True)
    for link in ["node_modules", "assets"]:
        if not os.path.lexists(os.path.join(package, link)):
            os.symlink(os.path.join(root, link), os.path.join(package, link))
    build_cublaslt_standin(directory)
    print("addon: %s\nrun the CLI on it with\n  S3_CUDA_LIBRARY_PATH=%s node %s/bin/swarm.js ..." %
          (os.path.join(release, "s3_native.node"), directory, package), flush=True)
    return 0


# The schedules `orders` runs every check in (turn order of the threads, when cp.async copies land;
# warp_emulation.h), the first as every other command runs, and what is left out of the outputs it
# compares: how long things took.
ORDERS = [{"S3_EMU_ORDER": "forward", "S3_EMU_COPIES": "at-issue"},
          {"S3_EMU_ORDER": "reverse", "S3_EMU_COPIES": "at-wait"},
          {"S3_EMU_ORDER": "shuffle:1", "S3_EMU_COPIES": "at-wait"},
          {"S3_EMU_ORDER": "lowest-first", "S3_EMU_COPIES": "at-wait"},
          {"S3_EMU_ORDER": "highest-first", "S3_EMU_COPIES": "at-issue"}]
TIMES = re.compile(r"\[\s*[0-9.]+ s\]|\b[0-9]+(\.[0-9]+)? ?(ms|s|min)\b")


def comparable(output):
    return [TIMES.sub("<time>", line) for line in output.splitlines()]


def run_in_orders(arguments):
    """Each check (or the GPU tests named after `gpu-tests`) once per schedule; 0 when every run
    passed and printed the same as the first, times left out."""
    if arguments[:1] == ["gpu-tests"]:
        jobs = [["gpu-tests", os.path.relpath(build, root)] + arguments[1:]]
    else:
        jobs = [[check, os.path.relpath(build, root)]
                for check in (arguments or [c for c in CHECKS if c != "gpu-tests" and c not in JSON_OUTPUT])]
    status = 0
    for job in jobs:
        first = None
        for schedule in ORDERS:
            order = " ".join("%s=%s" % item for item in schedule.items())
            start = time.monotonic()
            result = subprocess.run([sys.executable, os.path.abspath(__file__)] + job, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True, env=dict(os.environ, **schedule))
            lines = comparable(result.stdout)
            verdict = "passed" if result.returncode == 0 else "FAILED"
            if first is None:
                first = lines
            elif lines != first:
                differing = next((i for i, (a, b) in enumerate(zip(first, lines)) if a != b), min(len(first), len(lines)))
                verdict += "; its output differs from the first run's at line %d:\n    first: %s\n    this:  %s" % (
                    differing + 1, first[differing] if differing < len(first) else "(end)",
                    lines[differing] if differing < len(lines) else "(end)")
            label = " ".join([job[0]] + job[2:]) if len(job) < 4 else "%s (%d tests)" % (job[0], len(job) - 2)
            print("== %s, %s: %s in %.0f s" % (label, order, verdict, time.monotonic() - start), flush=True)
            if result.returncode != 0:
                print(result.stdout[-3000:], flush=True)
            status |= 0 if verdict == "passed" else 1
    return status


if what == "addon":
    sys.exit(build_addon())
if what == "orders":
    sys.exit(run_in_orders(sys.argv[3:]))
status = 0
for check in (CHECKS if what == "all" else [what]):
    if what == "all" and check == "gpu-tests":
        continue  # every GPU test: hours; run it by name
    status |= run(check)
sys.exit(status)
