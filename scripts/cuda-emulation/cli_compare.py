#!/usr/bin/env python3
"""cli_compare.py: the CLI with --device cuda on the emulated addon (`emulate.py addon`) against the
same commands with --device cpu on the repository's own addon, so the device path is checked end to
end as users run it, without a GPU. Stages (all by default):
  logits: `swarm model logits` of an s3-mini checkpoint (f32) over 40 positions with stored, bf16 and
          fp8 weights; NMSE against the CPU within the C++ tests' bounds (1e-6, 1e-2, 1e-1).
  sft:    `swarm sft`, 4 updates on 8 demonstrations; each update's loss and gradient norm within
          1e-5 relative of the CPU's, the fine-tuned weights within NMSE 1e-8.
  train:  `swarm train`, 2 RL updates of 4 teams of 4 from a policy the CPU fine-tuned with the mini
          preset's SFT (made once, ~8 min, kept in the work folder; an untrained one solves nothing,
          so every advantage would be 0); the first update's trace (every sampled token) the CPU's
          byte for byte, its reward and tokens equal, each update's gradient norm within 1e-4
          relative, the final weights within NMSE 1e-8; whether the second update's rollouts (after
          a device-trained update) are the CPU's too is printed, not required.
  learners: one RL update of the same 4 teams of 4 with each other learner of Table 1 whose loss
          differs from s3's (online-sft: SFT on the successful teams; individual: per-agent rewards):
          the update's trace byte for byte the CPU's, its gradient norm within 1e-4 relative, the
          weights after it within NMSE 1e-8.
  eval:   `swarm eval` of that policy on aggregation (N = 1, 2) and exploration (N = 2), 2 problems,
          seed 1, a work allowance of 1,024 tokens per agent (the task's 8,192 take hours here: an
          agent that never answers decodes all of them, one emulated step at a time): every episode's
          trace byte for byte the CPU's and episodes.jsonl the same lines; the same with an FP8 KV
          cache on aggregation N = 2 is printed, not required (attention sums in another order, so a
          near-tie may sample another token).
  run:    `swarm run` of one aggregation episode of 2 agents from that policy with --trace: the trace
          byte for byte the CPU's.
  serve:  `swarm serve` of that policy on each device, asked through the official
          `openai` package (serve_client.mjs): one completion alone, the same beside three others
          at once, a list of two prompts; every choice's token ids, draws and finish the CPU's, log-probs
          within 1e-4, and the batched request the same as alone on each device; then with FP8
          weights and KV cache and decode graphs on the device: the block-scaled path named, finite
          log-probs, the batched request the same as alone (agreement with the CPU's FP8 printed).
  precision: the train stage's 2 updates with the paper's precision (FP8 rollout weights, made from
          the trainer's parameters on the device and multiplied block-scaled over FP8 activations
          where the stand-in accepts it; an FP8 KV cache; a bf16 trainer), on each device: both run
          every update, none skipped, the device's rollouts name the block-scaled path, and the
          importance ratio sees a real but small sampler/trainer mismatch (mean |log ratio| in
          (0, 0.05], masked fraction ≤ 0.05). The rollouts are not the CPU's (the CPU's FP8 path
          multiplies bf16-rounded activations), so their figures are printed side by side, not
          compared bit for bit. Not in the default stages (~40 min).
The bounds are the C++ GPU tests' (f32 sums in other orders, products summed in double by the
cuBLASLt stand-in). Takes ~28 min on 2 vCPUs (24 of them the train stage) without eval and run, plus ~8 min the
first time for the policy's SFT.

Usage (from the repository root, after `npm install` and
`python3 scripts/cuda-emulation/emulate.py addon build-cpu-pic`):
  python3 scripts/cuda-emulation/cli_compare.py [build-dir] [logits|sft|train|learners|eval|run|serve|precision ...]
Outputs stay in <build-dir>/cuda-emulation-cli.
"""
import array
import gzip
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import threading
import time

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
here = os.path.dirname(os.path.abspath(__file__))
build = os.path.join(root, sys.argv[1] if len(sys.argv) > 1 else "build-cpu-pic")
STAGES = ["logits", "sft", "train", "learners", "eval", "run", "serve", "precision"]
DEFAULT_STAGES = ["logits", "sft", "train", "learners", "eval", "run", "serve"]
# The CPU's engine size on both devices (policy/engine-sizing.ts): the emulated device reports an
# H200's memory, half of which its host memory could not hold as a KV cache.
CPU_ENGINE = ["--kv-cache-mb", "1024", "--max-sequences", "64"]
stages = sys.argv[2:] or DEFAULT_STAGES
addon_dir = os.path.join(build, "cuda-emulation-addon")
package = os.path.join(addon_dir, "package")
work = os.path.join(build, "cuda-emulation-cli")
failures = []


def swarm(device, args, log):
    """Runs one swarm command on the CPU (the repository's addon) or the emulated device; returns its stdout."""
    env = dict(os.environ)
    if device == "cuda":
        command = ["node", os.path.join(package, "bin", "swarm.js")] + args + ["--device", "cuda"]
        env["S3_CUDA_LIBRARY_PATH"] = addon_dir
    else:
        command = ["node", os.path.join(root, "bin", "swarm.js")] + args + ["--device", "cpu"]
    start = time.monotonic()
    with open(os.path.join(work, log + ".log"), "w") as out:
        result = subprocess.run(command, stdout=subprocess.PIPE, stderr=out, text=True, env=env, cwd=root)
        out.write(result.stdout)
    print("  %-5s %-34s %6.0f s" % (device, log, time.monotonic() - start), flush=True)
    if result.returncode != 0:
        sys.exit("%s failed (exit %d): see %s.log" % (" ".join(command), result.returncode, os.path.join(work, log)))
    return result.stdout


def check(name, ok, detail):
    print("  %s %s: %s" % ("ok  " if ok else "FAIL", name, detail), flush=True)
    if not ok:
        failures.append(name)


def nmse(got, want):
    num = sum((a - b) ** 2 for a, b in zip(got, want))
    den = sum(b * b for b in want)
    return num / den if den > 0 else (0.0 if num == 0 else math.inf)


def tensors(path):
    """The f32 or bf16 tensors of a safetensors file, as lists of floats by name."""
    with open(path, "rb") as f:
        data = f.read()
    size = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + size])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = data[8 + size + begin:8 + size + end]
        if info["dtype"] == "F32":
            out[name] = array.array("f", raw)
        elif info["dtype"] == "BF16":
            halves = array.array("H", raw)
            out[name] = array.array("f", struct.pack("<%dI" % len(halves), *(h << 16 for h in halves)))
        else:
            sys.exit("%s: tensor %s is %s; expected F32 or BF16" % (path, name, info["dtype"]))
    return out


def weights_nmse(got_path, want_path):
    got, want = tensors(got_path), tensors(want_path)
    if got.keys() != want.keys():
        sys.exit("%s and %s hold different tensors" % (got_path, want_path))
    num = den = 0.0
    for name in want:
        num += sum((a - b) ** 2 for a, b in zip(got[name], want[name]))
        den += sum(b * b for b in want[name])
    return num / den


def relative(a, b):
    return abs(a - b) / max(abs(b), 1e-30)


def metrics(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def stage_logits(model):
    ids = ",".join(str((i * 379 + 11) % 1600) for i in range(40))
    for weights, bound in [("stored", 1e-6), ("bf16", 1e-2), ("fp8", 1e-1)]:
        rows = {}
        for device in ["cpu", "cuda"]:
            out = swarm(device, ["model", "logits", "--model", model, "--ids", ids, "--weights", weights, "--json"], "logits-%s-%s" % (weights, device))
            rows[device] = [x for row in json.loads(out)["logits"] for x in row]
        value = nmse(rows["cuda"], rows["cpu"])
        check("logits %s weights" % weights, value <= bound, "NMSE %.2g (bound %g)" % (value, bound))


def stage_sft(model):
    config = os.path.join(work, "sft-config.json")
    with open(config, "w") as f:
        json.dump({"sft": {"demonstrations": 8, "demonstrationTeamSizes": [2], "excerptUpdates": 2, "updates": 2,
                           "warmupUpdates": 0, "packedSequences": 1, "maxSequenceTokens": 2048}}, f)
    outs = {}
    for device in ["cpu", "cuda"]:
        outs[device] = os.path.join(work, "sft-" + device)
        shutil.rmtree(outs[device], ignore_errors=True)
        swarm(device, ["sft", "--config", config, "--model", model, "--out", outs[device]], "sft-" + device)
    cpu, gpu = metrics(os.path.join(outs["cpu"], "sft-metrics.jsonl")), metrics(os.path.join(outs["cuda"], "sft-metrics.jsonl"))
    check("sft updates", len(cpu) == len(gpu) == 4, "%d on the device, %d on the CPU" % (len(gpu), len(cpu)))
    worst = max(max(relative(g["loss"], c["loss"]), relative(g["gradNorm"], c["gradNorm"])) for g, c in zip(gpu, cpu))
    check("sft losses and gradient norms", worst <= 1e-5, "largest relative difference %.2g (bound 1e-5)" % worst)
    value = weights_nmse(os.path.join(outs["cuda"], "model.safetensors"), os.path.join(outs["cpu"], "model.safetensors"))
    check("sft weights", value <= 1e-8, "NMSE %.2g (bound 1e-8)" % value)


def trace_lines(run, update):
    with gzip.open(os.path.join(run, "traces", "update_%d.jsonl.gz" % update), "rb") as f:
        return f.read()


def sft_policy(model):
    """The mini preset's SFT of model on the CPU, made once and kept: the policy the RL and eval stages start from."""
    policy = os.path.join(work, "policy-sft-cpu")
    if not os.path.exists(os.path.join(policy, "model.safetensors")):
        swarm("cpu", ["sft", "--model", model, "--out", policy], "policy-sft-cpu (mini preset's SFT)")
    return policy


def train_config(updates, precision=None):
    """The RL settings of the train, learners and precision stages: 4 teams of 4 per update on one
    problem, and the rollout engine the CPU's on both devices (the emulated device reports an H200's
    free memory, half of which its host memory could not hold as a KV cache)."""
    settings = {"sft": None, "rlUpdates": updates, "problemsPerUpdate": 1, "attemptsPerProblem": 4, "teamSize": 4,
                "concurrentEpisodes": 4, "tokenCost": 0.25, "rolloutKvCacheBytes": 1 << 30, "rolloutMaxSequences": 64}
    if precision is not None:
        settings["precision"] = precision
    config = os.path.join(work, "train-config-%d%s.json" % (updates, "-precision" if precision else ""))
    with open(config, "w") as f:
        json.dump(settings, f)
    return config


def stage_train(model):
    policy = sft_policy(model)
    config = train_config(2)
    runs = {}
    for device in ["cpu", "cuda"]:
        runs[device] = os.path.join(work, "train-" + device)
        shutil.rmtree(runs[device], ignore_errors=True)
        swarm(device, ["train", "--config", config, "--model", policy, "--no-eval", "--out", runs[device]], "train-" + device)
    cpu, gpu = metrics(os.path.join(runs["cpu"], "metrics.jsonl")), metrics(os.path.join(runs["cuda"], "metrics.jsonl"))
    check("train updates", len(cpu) == len(gpu) == 2 and not any(m["stepSkipped"] for m in cpu + gpu),
          "%d on the device, %d on the CPU, none skipped" % (len(gpu), len(cpu)))
    check("first update's rollouts", trace_lines(runs["cuda"], 1) == trace_lines(runs["cpu"], 1),
          "trace byte for byte the CPU's (%.2f tokens per episode)" % cpu[0]["tokens"])
    check("first update's reward and tokens", (gpu[0]["reward"], gpu[0]["tokens"]) == (cpu[0]["reward"], cpu[0]["tokens"]),
          "reward %.4f, tokens %s" % (gpu[0]["reward"], gpu[0]["tokens"]))
    worst = max(relative(g["gradNorm"], c["gradNorm"]) for g, c in zip(gpu, cpu))
    check("gradient norms", worst <= 1e-4, "largest relative difference %.2g (bound 1e-4)" % worst)
    value = weights_nmse(os.path.join(runs["cuda"], "checkpoints", "step_2", "model.safetensors"),
                         os.path.join(runs["cpu"], "checkpoints", "step_2", "model.safetensors"))
    check("weights after 2 updates", value <= 1e-8, "NMSE %.2g (bound 1e-8)" % value)
    same = trace_lines(runs["cuda"], 2) == trace_lines(runs["cpu"], 2)
    print("  note second update's rollouts: %s" % ("byte for byte the CPU's" if same else "differ from the CPU's (weights one device-trained update apart)"))


def served_answers(device, model, extra=(), label=""):
    """Starts `swarm serve` of model on device (with extra flags), asks it through serve_client.mjs,
    stops it; returns its start line and the answers."""
    env = dict(os.environ)
    if device == "cuda":
        command = ["node", os.path.join(package, "bin", "swarm.js"), "serve", "--device", "cuda"]
        env["S3_CUDA_LIBRARY_PATH"] = addon_dir
    else:
        command = ["node", os.path.join(root, "bin", "swarm.js"), "serve", "--device", "cpu"]
    command += ["--model", model, "--port", "0", "--json"] + CPU_ENGINE + list(extra)
    name = "serve-%s%s" % (device, label)
    start = time.monotonic()
    with open(os.path.join(work, name + ".log"), "w") as log:
        server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True, env=env, cwd=root)
        try:
            line = server.stdout.readline()
            if not line:
                sys.exit("swarm serve on %s exited before listening: see %s.log" % (device, os.path.join(work, name)))
            started = json.loads(line)
            threading.Thread(target=server.stdout.read, daemon=True).start()  # keeps its pipe drained
            client = subprocess.run(["node", os.path.join(here, "serve_client.mjs"), started["url"], str(started["vocabSize"])],
                                    stdout=subprocess.PIPE, stderr=log, text=True, cwd=root)
        finally:
            server.terminate()
            server.wait(timeout=120)
    print("  %-5s %-34s %6.0f s" % (device, name, time.monotonic() - start), flush=True)
    if client.returncode != 0:
        sys.exit("serve_client.mjs against %s failed (exit %d): see %s.log" % (device, client.returncode, os.path.join(work, name)))
    return started, json.loads(client.stdout)


def stage_serve(model):
    policy = sft_policy(model)
    answers = {device: served_answers(device, policy) for device in ["cuda", "cpu"]}
    print("  note device: %s" % answers["cuda"][0].get("runner"), flush=True)
    gpu, cpu = answers["cuda"][1], answers["cpu"][1]
    pairs = [("alone", gpu["alone"], cpu["alone"])] + \
        [("crowd %d" % i, g, c) for i, (g, c) in enumerate(zip(gpu["crowd"], cpu["crowd"]))] + \
        [("list %d" % i, g, c) for i, (g, c) in enumerate(zip(gpu["list"], cpu["list"]))]
    same = [name for name, g, c in pairs if (g["tokenIds"], g["draws"]["tokens"], g["finish"]) == (c["tokenIds"], c["draws"]["tokens"], c["finish"])]
    check("served tokens", len(same) == len(pairs) and len(cpu["alone"]["tokenIds"]) > 0,
          "%d of %d completions' token ids, draws and finish the CPU's" % (len(same), len(pairs)))
    worst = max(abs(a - b) for _, g, c in pairs for a, b in zip(g["logprobs"], c["logprobs"]))
    check("served log-probs", worst <= 1e-4, "largest difference %.2g (bound 1e-4)" % worst)
    check("served batch invariance", all(got["crowd"][0]["tokenIds"] == got["alone"]["tokenIds"] for got in (gpu, cpu)),
          "the request beside three others gave its tokens alone, on both devices")
    # FP8 weights (block-scaled where the stand-in accepts it) and an FP8 KV cache, decode steps from
    # CUDA graphs: other roundings than the CPU's FP8 path, so only the device's own invariance is
    # required and the agreement with the CPU is printed.
    fp8 = ["--weights", "fp8", "--kv-dtype", "fp8"]
    os.environ["S3_CUDA_GRAPHS"] = "1"
    try:
        started, gpu8 = served_answers("cuda", policy, fp8, "-fp8-graphs")
    finally:
        del os.environ["S3_CUDA_GRAPHS"]
    _, cpu8 = served_answers("cpu", policy, fp8, "-fp8")
    print("  note device fp8: %s" % started.get("runner"), flush=True)
    choices = [gpu8["alone"]] + gpu8["crowd"] + gpu8["list"]
    sane = all(len(c["tokenIds"]) > 0 and all(math.isfinite(x) and x <= 0 for x in c["logprobs"]) for c in choices)
    check("served fp8 with graphs", sane and gpu8["crowd"][0]["tokenIds"] == gpu8["alone"]["tokenIds"] and "fp8 block-scaled" in
          started.get("runner", {}).get("gemm", ""), "block-scaled FP8 named, finite log-probs, the batched request's tokens as alone")
    agree = sum(a == b for x, y in zip(choices, [cpu8["alone"]] + cpu8["crowd"] + cpu8["list"]) for a, b in zip(x["tokenIds"], y["tokenIds"]))
    print("  note fp8: %d of %d sampled tokens the CPU's FP8 path's" % (agree, sum(len(c["tokenIds"]) for c in choices)), flush=True)


def stage_precision(model):
    policy = sft_policy(model)
    config = train_config(2, {"rolloutWeights": "fp8", "rolloutKvCache": "fp8", "train": "bf16"})
    runs, logs = {}, {}
    for device in ["cuda", "cpu"]:
        runs[device] = os.path.join(work, "precision-" + device)
        shutil.rmtree(runs[device], ignore_errors=True)
        logs[device] = swarm(device, ["train", "--config", config, "--model", policy, "--no-eval", "--out", runs[device]],
                             "precision-" + device)
    found = {device: metrics(os.path.join(runs[device], "metrics.jsonl")) for device in runs}
    check("precision updates", all(len(m) == 2 and not any(u["stepSkipped"] for u in m) for m in found.values()),
          "%d on the device, %d on the CPU, none skipped" % (len(found["cuda"]), len(found["cpu"])))
    with open(os.path.join(work, "precision-cuda.log")) as f:
        said = f.read()
    check("device rollouts block-scaled", "fp8 block-scaled" in said and "fp8 as D" in said,
          "the run names the block-scaled FP8 path" if "fp8 as D" in said else "no block-scaled FP8 named in precision-cuda.log")
    for device in ["cuda", "cpu"]:
        figures = ", ".join("update %d: mean |log ratio| %.2g, masked %.2g" % (i + 1, u["meanAbsLogRatio"], u["maskFraction"])
                            for i, u in enumerate(found[device]))
        print("  note %s: %s" % (device, figures), flush=True)
    mismatch = [u["meanAbsLogRatio"] for u in found["cuda"]]
    masked = [u["maskFraction"] for u in found["cuda"]]
    check("device sampler/trainer mismatch", all(0 < m <= 0.05 for m in mismatch) and all(m <= 0.05 for m in masked),
          "mean |log ratio| %s (in (0, 0.05]), masked %s (≤ 0.05)" % (", ".join("%.2g" % m for m in mismatch),
                                                                       ", ".join("%.2g" % m for m in masked)))


def stage_learners(model):
    policy = sft_policy(model)
    config = train_config(1)
    for learner in ["online-sft", "individual"]:
        runs = {}
        for device in ["cuda", "cpu"]:
            runs[device] = os.path.join(work, "learner-%s-%s" % (learner, device))
            shutil.rmtree(runs[device], ignore_errors=True)
            swarm(device, ["train", "--config", config, "--learner", learner, "--model", policy, "--no-eval", "--out", runs[device]],
                  "learner-%s-%s" % (learner, device))
        cpu, gpu = metrics(os.path.join(runs["cpu"], "metrics.jsonl")), metrics(os.path.join(runs["cuda"], "metrics.jsonl"))
        check("%s update" % learner, len(cpu) == len(gpu) == 1 and not cpu[0]["stepSkipped"] and not gpu[0]["stepSkipped"],
              "one on each device, not skipped (reward %.4f)" % cpu[0]["reward"])
        check("%s rollouts" % learner, trace_lines(runs["cuda"], 1) == trace_lines(runs["cpu"], 1), "trace byte for byte the CPU's")
        difference = relative(gpu[0]["gradNorm"], cpu[0]["gradNorm"])
        check("%s gradient norm" % learner, difference <= 1e-4, "relative difference %.2g (bound 1e-4)" % difference)
        value = weights_nmse(os.path.join(runs["cuda"], "checkpoints", "step_1", "model.safetensors"),
                             os.path.join(runs["cpu"], "checkpoints", "step_1", "model.safetensors"))
        check("%s weights" % learner, value <= 1e-8, "NMSE %.2g (bound 1e-8)" % value)


def gzip_files(folder):
    """The decompressed contents of every .jsonl.gz under folder, by relative path."""
    out = {}
    for parent, _, names in os.walk(folder):
        for name in names:
            if name.endswith(".jsonl.gz"):
                path = os.path.join(parent, name)
                with gzip.open(path, "rb") as f:
                    out[os.path.relpath(path, folder)] = f.read()
    return out


def evaluate(policy, label, args):
    """The same `swarm eval` on both devices; returns {"cuda": (traces, episode lines), "cpu": (...)}."""
    got = {}
    for device in ["cuda", "cpu"]:
        out = os.path.join(work, "eval-%s-%s" % (label, device))
        shutil.rmtree(out, ignore_errors=True)
        swarm(device, ["eval", "--model", policy, "--seeds", "1", "--problems", "2", "--allowance", "1024", "--out", out] + CPU_ENGINE + args,
              "eval-%s-%s" % (label, device))
        with open(os.path.join(out, "episodes.jsonl")) as f:
            got[device] = (gzip_files(os.path.join(out, "traces")), sorted(line for line in f if line.strip()))
    return got


def stage_eval(model):
    policy = sft_policy(model)
    for label, args in [("aggregation", ["--task", "aggregation", "--sizes", "1,2"]),
                        ("exploration", ["--task", "exploration", "--sizes", "2"])]:
        (gpu_traces, gpu_episodes), (cpu_traces, cpu_episodes) = evaluate(policy, label, args).values()
        same = sum(gpu_traces.get(name) == trace for name, trace in cpu_traces.items())
        check("eval %s traces" % label, len(cpu_traces) > 0 and same == len(cpu_traces) == len(gpu_traces),
              "%d of %d episodes' traces byte for byte the CPU's" % (same, len(cpu_traces)))
        check("eval %s episodes" % label, gpu_episodes == cpu_episodes,
              "episodes.jsonl %s" % ("the same lines" if gpu_episodes == cpu_episodes else "differs"))
    got = evaluate(policy, "aggregation-fp8-kv", ["--task", "aggregation", "--sizes", "2", "--kv-dtype", "fp8"])
    same = sum(got["cuda"][0].get(name) == trace for name, trace in got["cpu"][0].items())
    print("  note fp8 KV cache: %d of %d episodes' traces byte for byte the CPU's" % (same, len(got["cpu"][0])), flush=True)


def stage_run(model):
    policy = sft_policy(model)
    traces = {}
    for device in ["cpu", "cuda"]:
        path = os.path.join(work, "run-%s.jsonl" % device)
        swarm(device, ["run", "--model", policy, "--task", "aggregation", "--n", "2", "--seed", "3", "--trace", path] + CPU_ENGINE, "run-" + device)
        with open(path, "rb") as f:
            traces[device] = f.read()
    check("run trace", len(traces["cpu"]) > 0 and traces["cuda"] == traces["cpu"],
          "%d bytes, %s" % (len(traces["cpu"]), "byte for byte the CPU's" if traces["cuda"] == traces["cpu"] else "differs"))


if not os.path.exists(os.path.join(package, "build", "Release", "s3_native.node")):
    sys.exit("no emulated addon in %s: run python3 scripts/cuda-emulation/emulate.py addon %s first" % (addon_dir, os.path.relpath(build, root)))
os.makedirs(work, exist_ok=True)
model = os.path.join(work, "s3-mini-f32")
if not os.path.exists(os.path.join(model, "model.safetensors")):
    subprocess.run(["node", os.path.join(root, "bin", "swarm.js"), "model", "init", "--shape", "s3-mini", "--dtype", "f32",
                    "--seed", "0", "--out", model], check=True, cwd=root, stdout=subprocess.DEVNULL)
for stage in stages:
    if stage not in STAGES:
        sys.exit("unknown stage %r: %s" % (stage, ", ".join(STAGES)))
    print("== " + stage, flush=True)
    {"logits": stage_logits, "sft": stage_sft, "train": stage_train, "learners": stage_learners, "eval": stage_eval,
     "run": stage_run, "serve": stage_serve, "precision": stage_precision}[stage](model)
print("cli_compare: %s" % ("every check passed" if not failures else "FAILED: " + ", ".join(failures)))
sys.exit(1 if failures else 0)
