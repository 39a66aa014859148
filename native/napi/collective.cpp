// N-API bindings of native/core/collective.h:
//   new Collective({kind: 'host', rank, ranks, timeoutMs, bindHost?, port?}): listens at once
//     (port() says where, for the rendezvous); connect(nextHost, nextPort) → Promise<void>
//   new Collective({kind: 'nccl', rank, ranks, timeoutMs, id: Uint8Array(128)}); connect() →
//     Promise<void> joins the NCCL group on CUDA device 0 (CUDA builds with NCCL only)
//   description(), ranks(), rank(), close(); ncclUniqueId() → Uint8Array(128);
//   benchHostRing({ranks, floats, repetitions}) → figures (bench/collective_bench.h).
// connect runs on the libuv pool (it waits for the peers, at most timeoutMs).
#include "napi/collective.h"

#include <chrono>
#include <cstring>
#include <string>

#include "bench/collective_bench.h"
#include "core/host_ring.h"
#include "napi/guarded.h"
#include "napi/options.h"

#ifdef S3_WITH_CUDA
#include <cuda_runtime_api.h>

#include "cuda/nccl.h"
#include "cuda/nccl_collective.h"
#endif

namespace s3::napi {
namespace {

constexpr napi_type_tag kCollectiveTypeTag = {0x3e71c0a95d2b4f18ULL, 0x9a6d4c2e8f0b1735ULL};
constexpr size_t kNcclIdBytes = 128;

#ifdef S3_WITH_CUDA
std::shared_ptr<const cuda::NcclLibrary> nccl_library() {
  const cuda::NcclLoad& load = cuda::process_nccl();
  if (load.library == nullptr) throw CollectiveError("NCCL is not usable: " + load.error);
  return load.library;
}
#endif

struct CollectiveState {
  std::string kind;
  int rank = 0, ranks = 1;
  std::chrono::milliseconds timeout{0};
  std::shared_ptr<HostRing> ring;         // kind 'host'
  std::vector<uint8_t> nccl_id;           // kind 'nccl'
  std::shared_ptr<Collective> connected;  // set once connect has finished
  bool busy = false;  // connecting
  std::shared_ptr<std::atomic<bool>> in_use = std::make_shared<std::atomic<bool>>(false);  // leased
};

class ConnectWorker : public Napi::AsyncWorker {
 public:
  ConnectWorker(Napi::Env env, std::shared_ptr<CollectiveState> state, std::string host, int port)
      : Napi::AsyncWorker(env), state_(std::move(state)), host_(std::move(host)), port_(port),
        deferred_(Napi::Promise::Deferred::New(env)) {}
  Napi::Promise promise() { return deferred_.Promise(); }
  void Execute() override {
    try {
      if (state_->kind == "host") {
        state_->ring->connect(host_, port_);
        result_ = state_->ring;
        return;
      }
#ifdef S3_WITH_CUDA
      cuda_check_device();
      cuda::nccl::UniqueId id{};
      std::memcpy(id.internal, state_->nccl_id.data(), kNcclIdBytes);
      result_ = std::make_shared<cuda::NcclCollective>(nccl_library(), id, state_->ranks, state_->rank, state_->timeout);
#else
      throw CollectiveError("an NCCL collective needs an addon built with CUDA");
#endif
    } catch (const std::exception& e) {
      SetError(e.what());
    }
  }
  void OnOK() override {
    state_->busy = false;
    state_->connected = result_;
    deferred_.Resolve(Env().Undefined());
  }
  void OnError(const Napi::Error& e) override {
    state_->busy = false;
    deferred_.Reject(e.Value());
  }

 private:
#ifdef S3_WITH_CUDA
  static void cuda_check_device() {
    const cudaError_t status = cudaSetDevice(0);  // the trainer's device (train/cuda_trainer_compute.h)
    if (status != cudaSuccess) throw CollectiveError(std::string("NCCL: no CUDA device 0: ") + cudaGetErrorString(status));
  }
#endif
  std::shared_ptr<CollectiveState> state_;
  std::string host_;
  int port_;
  std::shared_ptr<Collective> result_;
  Napi::Promise::Deferred deferred_;
};

class CollectiveObject : public Napi::ObjectWrap<CollectiveObject> {
 public:
  static Napi::Function define(Napi::Env env) {
    return DefineClass(env, "Collective",
                       {InstanceMethod("port", &CollectiveObject::port), InstanceMethod("connect", &CollectiveObject::connect),
                        InstanceMethod("description", &CollectiveObject::description),
                        InstanceMethod("rank", &CollectiveObject::rank), InstanceMethod("ranks", &CollectiveObject::ranks),
                        InstanceMethod("close", &CollectiveObject::close)});
  }

  explicit CollectiveObject(const Napi::CallbackInfo& info) : Napi::ObjectWrap<CollectiveObject>(info) {
    Napi::Env env = info.Env();
    const Options options(env, info.Length() > 0 ? info[0] : env.Undefined(), "Collective options");
    state_->kind = options.required_string("kind");
    const int64_t ranks = options.required_integer("ranks"), rank = options.required_integer("rank");
    const int64_t timeout = options.required_integer("timeoutMs");
    if (ranks < 1 || rank < 0 || rank >= ranks) {
      throw Napi::RangeError::New(env, "Collective options: rank " + std::to_string(rank) + " of " + std::to_string(ranks) +
                                           " (want 0 ≤ rank < ranks)");
    }
    if (timeout <= 0) throw Napi::RangeError::New(env, "Collective options: timeoutMs must be positive");
    state_->rank = int(rank);
    state_->ranks = int(ranks);
    state_->timeout = std::chrono::milliseconds(timeout);
    if (state_->kind == "host") {
      const Napi::Value bind = options.get("bindHost");
      const std::string bind_host = bind.IsString() ? std::string(bind.As<Napi::String>()) : std::string("0.0.0.0");
      const int port = int(options.integer("port", 0));
      state_->ring = guarded(env, [&] { return std::make_shared<HostRing>(state_->rank, state_->ranks, state_->timeout, bind_host, port); });
      if (ranks == 1) state_->connected = state_->ring;
    } else if (state_->kind == "nccl") {
      const Napi::Value id = options.get("id");
      if (!id.IsTypedArray() || id.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array ||
          id.As<Napi::Uint8Array>().ElementLength() != kNcclIdBytes) {
        throw Napi::TypeError::New(env, "Collective options: id must be the Uint8Array(128) ncclUniqueId() made on rank 0");
      }
      const Napi::Uint8Array bytes = id.As<Napi::Uint8Array>();
      state_->nccl_id.assign(bytes.Data(), bytes.Data() + kNcclIdBytes);
    } else {
      throw Napi::TypeError::New(env, "Collective options: kind must be 'host' or 'nccl', got " + state_->kind);
    }
    info.This().As<Napi::Object>().TypeTag(&kCollectiveTypeTag);
  }

  CollectiveLease lease(Napi::Env env, const char* what) const {
    if (state_->busy) throw Napi::Error::New(env, std::string(what) + ": the collective is still connecting");
    if (state_->connected == nullptr) throw Napi::Error::New(env, std::string(what) + ": the collective is not connected (call connect first)");
    if (*state_->in_use) throw Napi::Error::New(env, std::string(what) + ": the collective is in use by another operation");
    *state_->in_use = true;
    return {state_->connected, state_->in_use};
  }

 private:
  Napi::Value port(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), state_->ring != nullptr ? state_->ring->port() : 0);
  }

  // connect(nextHost, nextPort) for a host ring; connect() for NCCL.
  Napi::Value connect(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (state_->busy || state_->connected != nullptr) throw Napi::Error::New(env, "Collective.connect: called twice");
    std::string host;
    int port = 0;
    if (state_->kind == "host") {
      if (info.Length() < 2 || !info[0].IsString() || !info[1].IsNumber()) {
        throw Napi::TypeError::New(env, "Collective.connect(nextHost, nextPort): the next rank's host and port");
      }
      host = info[0].As<Napi::String>();
      port = info[1].As<Napi::Number>().Int32Value();
    }
    state_->busy = true;
    auto* worker = new ConnectWorker(env, state_, host, port);
    Napi::Promise promise = worker->promise();
    worker->Queue();
    return promise;
  }

  Napi::Value description(const Napi::CallbackInfo& info) {
    if (state_->connected != nullptr) return Napi::String::New(info.Env(), state_->connected->description());
    return Napi::String::New(info.Env(), state_->kind + " (not connected), rank " + std::to_string(state_->rank) + " of " +
                                             std::to_string(state_->ranks));
  }
  Napi::Value rank(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), state_->rank); }
  Napi::Value ranks(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), state_->ranks); }

  Napi::Value close(const Napi::CallbackInfo& info) {
    if (state_->busy || *state_->in_use) throw Napi::Error::New(info.Env(), "Collective.close: the collective is still in use");
    if (state_->ring != nullptr) state_->ring->close();
    state_->connected = nullptr;
    return info.Env().Undefined();
  }

  std::shared_ptr<CollectiveState> state_ = std::make_shared<CollectiveState>();
};

Napi::Value nccl_unique_id(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
#ifdef S3_WITH_CUDA
  const cuda::nccl::UniqueId id = guarded(env, [&] { return cuda::nccl_unique_id(*nccl_library()); });
  Napi::Uint8Array out = Napi::Uint8Array::New(env, kNcclIdBytes);
  std::memcpy(out.Data(), id.internal, kNcclIdBytes);
  return out;
#else
  throw Napi::Error::New(env, "ncclUniqueId: the addon was built without CUDA");
#endif
}

Napi::Value bench_host_ring(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const Options options(env, info.Length() > 0 ? info[0] : env.Undefined(), "benchHostRing options");
  const int64_t ranks = options.required_integer("ranks"), floats = options.required_integer("floats");
  const int64_t repetitions = options.integer("repetitions", 5);
  if (floats < 1) throw Napi::RangeError::New(env, "benchHostRing: floats must be ≥ 1");
  const bench::HostRingBenchFigures f =
      guarded(env, [&] { return bench::bench_host_ring(int(ranks), size_t(floats), int(repetitions)); });
  Napi::Object o = Napi::Object::New(env);
  o.Set("ranks", f.ranks);
  o.Set("floats", double(f.floats));
  o.Set("bestSeconds", f.best_seconds);
  o.Set("medianSeconds", f.median_seconds);
  o.Set("algorithmGbytesPerSecond", f.algorithm_gbytes_per_s);
  o.Set("busGbytesPerSecond", f.bus_gbytes_per_s);
  o.Set("sameOnEveryRank", f.same_on_every_rank);
  return o;
}

}  // namespace

void register_collective(Napi::Env env, Napi::Object exports) {
  exports.Set("Collective", CollectiveObject::define(env));
  exports.Set("ncclUniqueId", Napi::Function::New(env, nccl_unique_id, "ncclUniqueId"));
  exports.Set("benchHostRing", Napi::Function::New(env, bench_host_ring, "benchHostRing"));
}

CollectiveLease lease_connected_collective(Napi::Env env, Napi::Value value, const char* what) {
  if (!value.IsObject() || !value.As<Napi::Object>().CheckTypeTag(&kCollectiveTypeTag)) {
    throw Napi::TypeError::New(env, std::string(what) + " must be a native Collective");
  }
  return CollectiveObject::Unwrap(value.As<Napi::Object>())->lease(env, what);
}

}  // namespace s3::napi
