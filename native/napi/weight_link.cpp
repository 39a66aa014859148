// N-API binding of napi/weight_link.h:
//   new WeightsSnapshot(trainer | directory): a copy of an idle trainer's parameters (f32, as
//     Trainer::save writes them), or the checkpoint in `directory` (its tensors as stored)
//   bytes() → the tensor bytes it holds; shape() → the model's shape as error messages show it
//   send(collective) → Promise<{bytes, seconds}>: to every other rank of a connected weight link,
//     on the libuv pool (the collective is leased meanwhile)
//   release(): frees the bytes now (a send under way keeps them until it ends); later sends throw.
// The bytes are reported to V8 as external memory, so a snapshot dropped without release() is
// collected as promptly as its size asks.
#include "napi/weight_link.h"

#include <memory>
#include <string>
#include <vector>

#include "model/weight_link.h"
#include "napi/collective.h"
#include "napi/guarded.h"
#include "napi/trainer_handle.h"

namespace s3::napi {
namespace {

class SendWorker : public Napi::AsyncWorker {
 public:
  SendWorker(Napi::Env env, std::shared_ptr<const model::WeightsSnapshot> snapshot, CollectiveLease lease)
      : Napi::AsyncWorker(env), snapshot_(std::move(snapshot)), lease_(std::move(lease)), deferred_(Napi::Promise::Deferred::New(env)) {}
  Napi::Promise promise() { return deferred_.Promise(); }
  void Execute() override {
    try {
      transfer_ = model::send_weights(*lease_.collective, *snapshot_);
    } catch (const std::exception& e) {
      SetError(e.what());
    }
  }
  void OnOK() override {
    lease_.release();
    Napi::Object o = Napi::Object::New(Env());
    o.Set("bytes", double(transfer_.bytes));
    o.Set("seconds", transfer_.seconds);
    deferred_.Resolve(o);
  }
  void OnError(const Napi::Error& e) override {
    lease_.release();
    deferred_.Reject(e.Value());
  }

 private:
  std::shared_ptr<const model::WeightsSnapshot> snapshot_;
  CollectiveLease lease_;
  model::WeightTransfer transfer_;
  Napi::Promise::Deferred deferred_;
};

class WeightsSnapshotObject : public Napi::ObjectWrap<WeightsSnapshotObject> {
 public:
  static Napi::Function define(Napi::Env env) {
    return DefineClass(env, "WeightsSnapshot",
                       {InstanceMethod("bytes", &WeightsSnapshotObject::bytes),
                        InstanceMethod("shape", &WeightsSnapshotObject::shape), InstanceMethod("send", &WeightsSnapshotObject::send),
                        InstanceMethod("release", &WeightsSnapshotObject::release)});
  }

  explicit WeightsSnapshotObject(const Napi::CallbackInfo& info) : Napi::ObjectWrap<WeightsSnapshotObject>(info) {
    Napi::Env env = info.Env();
    const Napi::Value source = info.Length() > 0 ? info[0] : env.Undefined();
    std::shared_ptr<const model::WeightsSnapshot> snapshot;
    if (source.IsString()) {
      const std::string directory = source.As<Napi::String>();
      snapshot = guarded(env, [&] { return std::make_shared<const model::WeightsSnapshot>(model::snapshot_of_checkpoint(directory)); });
    } else {
      const train::Trainer& trainer = unwrap_idle_trainer(env, source, "new WeightsSnapshot(trainer | directory): trainer");
      snapshot = guarded(env, [&] {
        return std::make_shared<const model::WeightsSnapshot>(model::snapshot_of_params(trainer.config_json(), trainer.params().data()));
      });
    }
    snapshot_ = std::move(snapshot);
    external_bytes_ = int64_t(snapshot_->payload->size());
    Napi::MemoryManagement::AdjustExternalMemory(env, external_bytes_);
  }

  void Finalize(Napi::Env env) override { forget(env); }

 private:
  const model::WeightsSnapshot& held(Napi::Env env) const {
    if (snapshot_ == nullptr) throw Napi::Error::New(env, "the weights snapshot was released");
    return *snapshot_;
  }
  Napi::Value bytes(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), double(held(info.Env()).payload->size())); }
  Napi::Value shape(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), model::qwen3_shape_text(held(info.Env()).config)); }
  Napi::Value release(const Napi::CallbackInfo& info) {
    forget(info.Env());
    return info.Env().Undefined();
  }
  void forget(Napi::Env env) {
    snapshot_.reset();
    if (external_bytes_ != 0) Napi::MemoryManagement::AdjustExternalMemory(env, -external_bytes_);
    external_bytes_ = 0;
  }

  Napi::Value send(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    held(env);
    CollectiveLease lease = lease_connected_collective(env, info.Length() > 0 ? info[0] : env.Undefined(), "send(collective)");
    if (lease.collective->rank() != 0) {
      lease.release();
      throw Napi::Error::New(env, "send(collective): the sender is rank 0 of a weight link, not rank " + std::to_string(lease.collective->rank()));
    }
    auto* worker = new SendWorker(env, snapshot_, std::move(lease));
    Napi::Promise promise = worker->promise();
    worker->Queue();
    return promise;
  }

  std::shared_ptr<const model::WeightsSnapshot> snapshot_;
  int64_t external_bytes_ = 0;
};

}  // namespace

void register_weight_link(Napi::Env env, Napi::Object exports) { exports.Set("WeightsSnapshot", WeightsSnapshotObject::define(env)); }

}  // namespace s3::napi
