// philox.h: the Philox4x32-10 counter-based random generator (Salmon et al., "Parallel random
// numbers: as easy as 1, 2, 3", SC 2011; bit-identical to Random123's philox4x32_10) and the
// keying s3 samples with. A draw is a pure function of (agent seed, token index, draw index,
// stream), so CPU and CUDA samplers produce the same tokens and a run replays exactly, whatever
// the batching or thread schedule.
#pragma once

#include <cstdint>

#include "core/host_device.h"

namespace s3 {

struct Philox4x32 {
  uint32_t word[4];
};

struct PhiloxKey {
  uint32_t word[2];
};

// Random123's constants: the round multipliers and the Weyl key increments (golden ratio, √3−1).
constexpr uint32_t kPhiloxM0 = 0xD2511F53u;
constexpr uint32_t kPhiloxM1 = 0xCD9E8D57u;
constexpr uint32_t kPhiloxW0 = 0x9E3779B9u;
constexpr uint32_t kPhiloxW1 = 0xBB67AE85u;

S3_HOST_DEVICE inline Philox4x32 philox4x32_round(Philox4x32 counter, PhiloxKey key) {
  uint64_t product0 = uint64_t(kPhiloxM0) * counter.word[0];
  uint64_t product1 = uint64_t(kPhiloxM1) * counter.word[2];
  uint32_t hi0 = uint32_t(product0 >> 32), lo0 = uint32_t(product0);
  uint32_t hi1 = uint32_t(product1 >> 32), lo1 = uint32_t(product1);
  return Philox4x32{{hi1 ^ counter.word[1] ^ key.word[0], lo1, hi0 ^ counter.word[3] ^ key.word[1], lo0}};
}

// Ten rounds; the key advances by the Weyl increments between rounds.
S3_HOST_DEVICE inline Philox4x32 philox4x32_10(Philox4x32 counter, PhiloxKey key) {
  for (int round = 0; round < 10; round++) {
    if (round > 0) {
      key.word[0] += kPhiloxW0;
      key.word[1] += kPhiloxW1;
    }
    counter = philox4x32_round(counter, key);
  }
  return counter;
}

// s3's keying: key = seed (low word, high word); counter = {token index low word, token index
// high word, draw index, stream}. `stream` separates independent uses of the same draw slot
// (for example sampling versus exploration noise) so they never share random words.
S3_HOST_DEVICE inline Philox4x32 philox_block(uint64_t seed, uint64_t token_index, uint32_t draw_index,
                                              uint32_t stream) {
  Philox4x32 counter{{uint32_t(token_index), uint32_t(token_index >> 32), draw_index, stream}};
  PhiloxKey key{{uint32_t(seed), uint32_t(seed >> 32)}};
  return philox4x32_10(counter, key);
}

// Maps 32 random bits to a float in [0, 1): the top 24 bits times 2^-24, so every value is an
// exact multiple of 2^-24 (f32 holds 24 significant bits) and 1.0 is never returned.
S3_HOST_DEVICE inline float uniform_from_bits(uint32_t bits) { return float(bits >> 8) * 5.9604644775390625e-8f; }

// One uniform in [0, 1) for (seed, token index, draw index, stream), from word 0 of the block.
S3_HOST_DEVICE inline float philox_uniform(uint64_t seed, uint64_t token_index, uint32_t draw_index,
                                           uint32_t stream = 0) {
  return uniform_from_bits(philox_block(seed, token_index, draw_index, stream).word[0]);
}

}  // namespace s3
