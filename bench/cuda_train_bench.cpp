// cuda_train_bench.cpp: the CUDA training benchmark of the GPU check (scripts/gpu-check.sh): training
// steps of the trainer on the device (native/bench/train_bench.h, the code behind `swarm bench
// train --device cuda`) on a random Qwen3-0.6B, SFT loss forward + backward + AdamW, with BF16
// products (the paper's precision) and f32 master weights and moments; bench/torch_train_step.py
// times PyTorch on the full shape in the same run. One trainer runs a ladder of sizes, each printed
// as it completes: 1 × 1,024 and 2 × 2,048 tokens ("ladder"), then 8 sequences × 4,096 packed into
// one micro-batch ("train", the figure the GPU check compares with PyTorch); --quick: 1 × 1,024,
// then 2 × 1,024 as "train". Before each size's steps, its training attention alone (one layer's
// forward and backward) is timed, with the step's share of it estimated: the f32 kernels
// (cuda/attention_backward.h) and, beside them, the tensor-core ones (cuda/attention_train_mma.h) with
// their NMSE against the f32 results. The trainer's steps use the kernels S3_CUDA_TRAIN_ATTENTION
// selects ("attention" in the JSON). "devicePeak" is the GPU's datasheet dense BF16 peak
// (bench/device_peaks.h) and each size's "mfu" its TFLOP/s over it (null for a GPU not in the table).
// A slow run still says where its time went: every phase is logged to stderr with its time as it
// begins, and stopping the run (SIGTERM, as `timeout` sends, or SIGINT) closes the JSON on stdout
// with "incomplete": {"phase": ..., "phaseSeconds": ...}, so a timed-out run's output still parses.
// --smoke: the `small` shape, 1 × 64 then 2 × 64 tokens, every phase once (for the CPU emulation of
// the device; figures meaningless).
// Built with -DS3_BUILD_GPU_BENCH=ON (CUDA only). Run: s3_cuda_train_bench [--quick|--smoke] > train.json
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench/train_bench.h"
#include "cuda/attention_backward.h"
#include "cuda/attention_train_mma.h"
#include "cuda/check.h"
#include "cuda/device_info.h"
#include "cuda/device_memory.h"
#include "gpu_bench_support.h"

namespace {

using Clock = std::chrono::steady_clock;

std::string number(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.4g", value);
  return text;
}

std::string quoted(std::string text) {
  for (char& c : text) {
    if (c == '"' || c == '\\' || c == '\n') c = ' ';
  }
  return "\"" + text + "\"";
}

// The JSON document on stdout, written as the run goes (objects and arrays opened, values added,
// closed), and the phase log on stderr. stop() completes the document from wherever it is, adding
// "incomplete" at the top level; every write holds one mutex, so a stop never cuts a value in two.
class Report {
 public:
  Report() : start_(Clock::now()), phase_start_(start_) {}

  void open(const char* key, char bracket) {
    std::lock_guard<std::mutex> lock(mutex_);
    begin_value(key);
    write(std::string(1, bracket));
    stack_.push_back({bracket == '{' ? '}' : ']', false});
  }
  void value(const char* key, const std::string& json) {
    std::lock_guard<std::mutex> lock(mutex_);
    begin_value(key);
    write(json);
  }
  void close() {
    std::lock_guard<std::mutex> lock(mutex_);
    write(std::string(1, stack_.back().closer));
    stack_.pop_back();
    if (stack_.empty()) write("\n");
  }

  // Logs the start of `name` (and how long the phase before it took) to stderr.
  void phase(const std::string& name) {
    std::lock_guard<std::mutex> lock(mutex_);
    const Clock::time_point now = Clock::now();
    if (!phase_.empty()) {
      std::fprintf(stderr, "[%8.2f s]   %s took %.2f s\n", seconds(start_, now), phase_.c_str(), seconds(phase_start_, now));
    }
    std::fprintf(stderr, "[%8.2f s] %s\n", seconds(start_, now), name.c_str());
    std::fflush(stderr);
    phase_ = name;
    phase_start_ = now;
  }

  double seconds_in_phase() const { return seconds(phase_start_, Clock::now()); }

  // Closes every open array and object, with "incomplete" naming the phase, and ends the process.
  [[noreturn]] void stop(int signal) {
    std::lock_guard<std::mutex> lock(mutex_);
    const Clock::time_point now = Clock::now();
    if (stack_.empty()) {
      write("{");
      stack_.push_back({'}', false});
    }
    while (stack_.size() > 1) {
      write(std::string(1, stack_.back().closer));
      stack_.pop_back();
    }
    begin_value("incomplete");
    write("{\"phase\": " + quoted(phase_) + ", \"phaseSeconds\": " + number(seconds(phase_start_, now)) +
          ", \"elapsedSeconds\": " + number(seconds(start_, now)) + ", \"signal\": " + quoted(strsignal(signal)) + "}}\n");
    std::fprintf(stderr, "[%8.2f s] stopped by %s in: %s (after %.2f s)\n", seconds(start_, now), strsignal(signal),
                 phase_.c_str(), seconds(phase_start_, now));
    std::fflush(stderr);
    _exit(128 + signal);
  }

 private:
  struct Open {
    char closer;
    bool has_values;
  };
  static double seconds(Clock::time_point from, Clock::time_point to) { return std::chrono::duration<double>(to - from).count(); }
  void write(const std::string& text) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  }
  // The comma and key before a value of the innermost open object or array.
  void begin_value(const char* key) {
    if (stack_.empty()) return;
    Open& open = stack_.back();
    std::string text = open.has_values ? (stack_.size() == 1 ? ",\n " : ", ") : "";
    if (open.closer == '}' && key != nullptr) text += "\"" + std::string(key) + "\": ";
    open.has_values = true;
    write(text);
  }

  std::mutex mutex_;
  std::vector<Open> stack_;
  const Clock::time_point start_;
  Clock::time_point phase_start_;
  std::string phase_;
};

// Blocks SIGTERM and SIGINT in this thread, and so in every thread started after (the CUDA
// runtime's included), and starts the one thread that waits for them and stops the report.
void stop_report_on_signals(Report& report) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::thread([&report, signals] {
    int signal = 0;
    sigwait(&signals, &signal);
    report.stop(signal);
  }).detach();
}

struct Size {
  int64_t sequences, length;
  std::string label() const { return std::to_string(sequences) + " x " + std::to_string(length); }
};

// FNV-1a over 32-bit words.
uint64_t fingerprint(uint64_t hash, const std::vector<float>& values) {
  for (const float v : values) {
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    hash = (hash ^ bits) * 0x100000001b3ULL;
  }
  return hash;
}

// One layer's training attention (forward, then backward) at the size's shape on fixed pseudo-random
// inputs, each timed alone; the step runs the forward once per layer, twice where the backward
// recomputes the layer, and the backward once. `first` (the run's first probe): both are run once
// before the timed runs (the kernels' lazy loading), and a fingerprint of every output's bits is
// added, so two builds of the kernels can be compared bit for bit (same GPU, same size).
std::string attention_probe(const s3::model::Qwen3Config& c, const Size& size, bool recomputes, bool first) {
  const int64_t T = size.sequences * size.length, NH = c.num_attention_heads, NKV = c.num_key_value_heads, HD = c.head_dim;
  s3::cuda::DeviceAllocator allocator("run a smaller size");
  s3::cuda::Stream stream;
  const size_t qn = size_t(T * NH * HD), kn = size_t(T * NKV * HD);
  auto device = [&](size_t n, const char* what) { return s3::cuda::DeviceBuffer(allocator, n * sizeof(float), what); };
  s3::cuda::DeviceBuffer q = device(qn, "q"), k = device(kn, "k"), v = device(kn, "v"), dout = device(qn, "dout");
  s3::cuda::DeviceBuffer out = device(qn, "out"), lse = device(size_t(T * NH), "lse"), dq = device(qn, "dq");
  s3::cuda::DeviceBuffer dk = device(kn, "dk"), dv = device(kn, "dv");
  s3::cuda::DeviceBuffer scratch(allocator,
                                 std::max(s3::cuda::attention_backward_scratch_bytes(T, NH),
                                          s3::cuda::attention_train_mma_scratch_bytes(T, NH, NKV, HD)),
                                 "scratch");
  s3::cuda::DeviceBuffer begins(allocator, size_t(size.sequences + 1) * sizeof(int64_t), "sequence starts");
  auto upload = [&](const s3::cuda::DeviceBuffer& to, const void* from, size_t bytes) {
    s3::cuda::check(cudaMemcpyAsync(to.get(), from, bytes, cudaMemcpyHostToDevice, stream.get()), "attention probe upload");
    stream.synchronize("attention probe upload");
  };
  uint32_t state = 1;
  auto upload_random = [&](const s3::cuda::DeviceBuffer& to, size_t n) {
    std::vector<float> host(n);
    for (float& x : host) {
      state = state * 1664525u + 1013904223u;
      x = float(int32_t(state >> 8) - (1 << 23)) / float(1 << 23);  // uniform in [-1, 1)
    }
    upload(to, host.data(), n * sizeof(float));
  };
  upload_random(q, qn);
  upload_random(k, kn);
  upload_random(v, kn);
  upload_random(dout, qn);
  std::vector<int64_t> starts;
  for (int64_t s = 0; s <= size.sequences; s++) starts.push_back(s * size.length);
  upload(begins, starts.data(), starts.size() * sizeof(int64_t));
  const s3::cuda::DevicePackedAttention shape{T, NH, NKV, HD, begins.get<int64_t>(), nullptr, size.sequences};
  // Each implementation timed alone: forward, then backward (which reads the f32 forward's out and
  // lse, so both backwards see the same inputs).
  struct Timing {
    double forward = 0, backward = 0;
  };
  auto time_attention = [&](bool tensor_cores, bool warm_up, const s3::cuda::DeviceBuffer& o, const s3::cuda::DeviceBuffer& l,
                            const s3::cuda::DeviceBuffer& gq, const s3::cuda::DeviceBuffer& gk, const s3::cuda::DeviceBuffer& gv) {
    Timing timing;
    for (int run = warm_up ? 0 : 1; run < 2; run++) {
      const Clock::time_point forward_start = Clock::now();
      if (tensor_cores) {
        s3::cuda::causal_attention_train_forward_mma(o.get<float>(), l.get<float>(), q.get<float>(), k.get<float>(), v.get<float>(),
                                                     shape, scratch.get(), stream.get());
      } else {
        s3::cuda::causal_attention_train_forward(o.get<float>(), l.get<float>(), q.get<float>(), k.get<float>(), v.get<float>(),
                                                 shape, stream.get());
      }
      stream.synchronize("the attention probe's forward");
      timing.forward = std::chrono::duration<double>(Clock::now() - forward_start).count();
      const Clock::time_point backward_start = Clock::now();
      (tensor_cores ? s3::cuda::causal_attention_backward_mma : s3::cuda::causal_attention_backward)(
          gq.get<float>(), gk.get<float>(), gv.get<float>(), dout.get<float>(), out.get<float>(), lse.get<float>(), q.get<float>(),
          k.get<float>(), v.get<float>(), shape, scratch.get(), stream.get());
      stream.synchronize("the attention probe's backward");
      timing.backward = std::chrono::duration<double>(Clock::now() - backward_start).count();
    }
    return timing;
  };
  const double L = double(c.num_hidden_layers);
  auto per_step = [&](const Timing& t) { return L * ((recomputes ? 2.0 : 1.0) * t.forward + t.backward); };
  auto download = [&](const s3::cuda::DeviceBuffer& b) {
    std::vector<float> host(b.bytes() / sizeof(float));
    s3::cuda::check(cudaMemcpyAsync(host.data(), b.get(), b.bytes(), cudaMemcpyDeviceToHost, stream.get()), "attention probe download");
    stream.synchronize("attention probe download");
    return host;
  };
  const Timing f32 = time_attention(false, first, out, lse, dq, dk, dv);
  std::string json = "{\"forwardSeconds\": " + number(f32.forward) + ", \"backwardSeconds\": " + number(f32.backward) +
                     ", \"perStepSeconds\": " + number(per_step(f32));
  if (first) {
    uint64_t hash = 0xcbf29ce484222325ULL;
    for (const s3::cuda::DeviceBuffer* b : {&out, &lse, &dq, &dk, &dv}) hash = fingerprint(hash, download(*b));
    char text[32];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
    json += ", \"fingerprint\": \"" + std::string(text) + "\"";
  }
  // The tensor-core kernels (attention_train_mma.h) on the same inputs, and their NMSE against the
  // f32 kernels' results.
  if (s3::cuda::attention_train_mma_supports(NH, NKV, HD)) {
    s3::cuda::DeviceBuffer out2 = device(qn, "out (tensor cores)"), lse2 = device(size_t(T * NH), "lse (tensor cores)");
    s3::cuda::DeviceBuffer dq2 = device(qn, "dq (tensor cores)"), dk2 = device(kn, "dk (tensor cores)"), dv2 = device(kn, "dv (tensor cores)");
    const Timing mma = time_attention(true, first, out2, lse2, dq2, dk2, dv2);
    json += ", \"tensorCores\": {\"forwardSeconds\": " + number(mma.forward) + ", \"backwardSeconds\": " + number(mma.backward) +
            ", \"perStepSeconds\": " + number(per_step(mma)) + ", \"nmseAgainstF32\": {";
    const char* names[] = {"out", "lse", "dq", "dk", "dv"};
    const s3::cuda::DeviceBuffer* want[] = {&out, &lse, &dq, &dk, &dv};
    const s3::cuda::DeviceBuffer* got[] = {&out2, &lse2, &dq2, &dk2, &dv2};
    for (int i = 0; i < 5; i++) {
      const std::vector<float> a = download(*got[i]), b = download(*want[i]);
      double error = 0, norm = 0;
      for (size_t j = 0; j < a.size(); j++) error += (double(a[j]) - b[j]) * (double(a[j]) - b[j]), norm += double(b[j]) * b[j];
      json += std::string(i > 0 ? ", " : "") + "\"" + names[i] + "\": " + number(norm > 0 ? error / norm : error);
    }
    json += "}}";
  }
  return json + "}";
}

// Bytes the forward keeps for the backward when it saves every layer (model/qwen3_train_cuda.cpp's
// Dims::layer_floats, per layer), against the trainer's default budget: half the device memory free
// (plus the trainer's cached blocks, not counted here: the expected plan, not the one it ran).
struct ActivationPlan {
  double saved_bytes = 0, free_bytes = 0;
  bool recomputes() const { return saved_bytes > free_bytes / 2; }
};

ActivationPlan activation_plan(const s3::model::Qwen3Config& c, int64_t T) {
  const double per_token = double(3 * c.hidden_size + 3 * c.q_dim() + 3 * c.kv_dim() + c.num_attention_heads +
                                  3 * c.intermediate_size);
  size_t free_bytes = 0, total_bytes = 0;
  s3::cuda::check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  return ActivationPlan{double(c.num_hidden_layers) * per_token * double(T) * sizeof(float), double(free_bytes)};
}

// One size: the attention probe, then the trainer's steps, into the report's open object.
void run_size(Report& report, s3::train::Trainer& trainer, const Size& size, bool first) {
  const std::string label = size.label();
  const s3::model::Qwen3Config& c = trainer.config();
  const ActivationPlan plan = activation_plan(c, size.sequences * size.length);
  report.value("sequences", std::to_string(size.sequences));
  report.value("length", std::to_string(size.length));
  report.value("activations", "{\"savedBytes\": " + number(plan.saved_bytes) + ", \"deviceFreeBytes\": " +
                                  number(plan.free_bytes) + ", \"recomputeExpected\": " +
                                  (plan.recomputes() ? "true" : "false") + "}");
  report.phase(label + ": attention probe (one layer, forward and backward)");
  report.value("attention", s3bench::guarded([&] { return attention_probe(c, size, plan.recomputes(), first); }));
  s3::model::TrainBenchOptions options;
  options.device = s3::model::Device::Cuda;
  options.matmul_precision = s3::MatmulPrecision::Bf16;
  options.sequences = size.sequences;
  options.tokens = size.sequences * size.length;
  options.repetitions = 3;
  options.on_phase = [&](const std::string& phase) { report.phase(label + ": " + phase); };
  const s3::model::TrainBenchFigures f = s3::model::bench_train(trainer, options);
  report.value("precision", quoted(s3::matmul_precision_name(options.matmul_precision)));
  report.value("device", quoted(f.device));
  report.value("tokens", std::to_string(f.tokens));
  report.value("medianSeconds", number(f.median_seconds));
  report.value("bestSeconds", number(f.best_seconds));
  report.value("forwardBackwardSeconds", number(f.forward_backward_seconds));
  report.value("optimizerSeconds", number(f.optimizer_seconds));
  report.value("warmUpSeconds", number(f.warm_up_seconds));
  report.value("tokensPerSecond", number(f.tokens_per_second));
  report.value("flopsPerToken", number(f.flops_per_token));
  report.value("tflops", number(f.gflops / 1e3));
  report.value("mfu", f.mfu >= 0 ? number(f.mfu) : "null");
  report.value("loss", number(f.loss));
}

// run_size inside an object of its own; an exception ends the object with "error" and the run goes on.
void report_size(Report& report, const char* key, s3::train::Trainer& trainer, const Size& size, bool first) {
  report.open(key, '{');
  try {
    run_size(report, trainer, size, first);
  } catch (const std::exception& e) {
    report.value("error", quoted(e.what()));
  }
  report.close();
}

}  // namespace

int main(int argc, char** argv) {
  const s3bench::BenchSize size = s3bench::bench_size(argc, argv, "s3_cuda_train_bench");
  const bool quick = size == s3bench::BenchSize::Quick, smoke = size == s3bench::BenchSize::Smoke;
  Report report;
  stop_report_on_signals(report);
  report.open(nullptr, '{');
  report.value("model", quoted(smoke ? "small (random bf16 weights, f32 master weights and AdamW moments; smoke run)"
                                     : "qwen3-0.6b (random bf16 weights, f32 master weights and AdamW moments)"));
  report.value("trainerAttention", quoted(s3::cuda::train_attention_uses_mma() ? "tensor cores (S3_CUDA_TRAIN_ATTENTION=mma)"
                                                                               : "f32 CUDA cores (S3_CUDA_TRAIN_ATTENTION=f32)"));
  report.value("flopsFormula",
               quoted("6 × (matmul parameters of the layers + LM head) + 12 × layers × T × heads × head_dim / 2"));
  const s3::cuda::DeviceQuery devices = s3::cuda::query_devices();
  if (devices.device_count == 0) {
    report.value("error", quoted("no CUDA device is visible (" + devices.error + "): this benchmark needs a GPU"));
    report.close();
    std::fprintf(stderr, "s3_cuda_train_bench: no CUDA device is visible (%s)\n", devices.error.c_str());
    return 1;
  }
  const std::string gpu = devices.devices.empty() ? std::string() : devices.devices.front().name;
  report.value("devicePeak", s3bench::device_peak_json(gpu));
  const std::vector<Size> ladder =
      smoke ? std::vector<Size>{{1, 64}} : quick ? std::vector<Size>{{1, 1024}} : std::vector<Size>{{1, 1024}, {2, 2048}};
  const Size full = smoke ? Size{2, 64} : quick ? Size{2, 1024} : Size{8, 4096};
  try {
    report.phase(smoke ? "checkpoint: the random small model (written once under TMPDIR)"
                       : "checkpoint: the random Qwen3-0.6B (written once under TMPDIR)");
    const std::string dir = s3bench::bench_checkpoint(size);
    report.phase("building the trainer");
    s3::model::TrainBenchOptions options;
    options.device = s3::model::Device::Cuda;
    options.matmul_precision = s3::MatmulPrecision::Bf16;
    s3::train::Trainer trainer(dir, s3::model::train_bench_trainer_options(options));
    report.open("ladder", '[');
    for (size_t i = 0; i < ladder.size(); i++) report_size(report, nullptr, trainer, ladder[i], i == 0);
    report.close();
    report_size(report, "train", trainer, full, false);
  } catch (const std::exception& e) {
    report.value("error", quoted(e.what()));
  }
  report.phase("done");
  report.close();
  return 0;
}
