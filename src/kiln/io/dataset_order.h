// Deterministic orders from Philox: the train/validation split of one file and the example
// order of each epoch, the same on every machine and backend for the same seed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "kiln/io/dataset.h"

namespace kiln {

// Philox streams of the data orders, apart from the small stream numbers of graph ops.
inline constexpr uint32_t kSplitStream = 0xDA7A0001u;
inline constexpr uint32_t kSamplerStream = 0xDA7A0002u;

// A permutation of 0..n-1: the indices sorted by a 64-bit key, element i's key being the
// random_bits words 2i and 2i+1 of (seed, offset, stream); ties (never seen) by index.
std::vector<size_t> philox_permutation(size_t n, int64_t seed, int64_t offset, uint32_t stream);

// The example order of one epoch (a shuffled sampler): philox_permutation(n, seed, epoch).
std::vector<size_t> sampler_order(size_t n, int64_t seed, int64_t epoch);

// {train, validation}: ceil(validation_fraction * n) examples go to validation (as HF's
// train_test_split sizes test_size), chosen by philox_permutation(n, seed, 0, kSplitStream);
// both parts keep the file order. The fraction must leave both parts non-empty.
std::pair<ClassificationDataset, ClassificationDataset> split_dataset(
    const ClassificationDataset& dataset, double validation_fraction, int64_t seed);

}  // namespace kiln
