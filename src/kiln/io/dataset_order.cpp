// Philox permutations for the sampler and the split.
#include "kiln/io/dataset_order.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "kiln/ir/error.h"
#include "kiln/ir/philox.h"

namespace kiln {

std::vector<size_t> philox_permutation(size_t n, int64_t seed, int64_t offset, uint32_t stream) {
  std::vector<uint64_t> keys(n);
  for (size_t i = 0; i < n; ++i) {
    auto index = static_cast<int64_t>(2 * i);
    uint64_t high = random_bits_at(seed, offset, stream, index);
    uint64_t low = random_bits_at(seed, offset, stream, index + 1);
    keys[i] = high << 32 | low;
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return keys[a] != keys[b] ? keys[a] < keys[b] : a < b;
  });
  return order;
}

std::vector<size_t> sampler_order(size_t n, int64_t seed, int64_t epoch) {
  return philox_permutation(n, seed, epoch, kSamplerStream);
}

std::pair<ClassificationDataset, ClassificationDataset> split_dataset(
    const ClassificationDataset& dataset, double validation_fraction, int64_t seed) {
  size_t n = dataset.size();
  check(validation_fraction > 0 && validation_fraction < 1, dataset.source,
        "validation fraction ", validation_fraction, " is not in (0, 1)");
  auto validation_size = static_cast<size_t>(std::ceil(validation_fraction * static_cast<double>(n)));
  check(validation_size < n, dataset.source, "a validation fraction of ", validation_fraction,
        " leaves no training examples out of ", n);
  std::vector<size_t> order = philox_permutation(n, seed, 0, kSplitStream);
  std::vector<size_t> validation(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(validation_size));
  std::vector<size_t> train(order.begin() + static_cast<std::ptrdiff_t>(validation_size), order.end());
  std::sort(validation.begin(), validation.end());
  std::sort(train.begin(), train.end());
  return {dataset_subset(dataset, train), dataset_subset(dataset, validation)};
}

}  // namespace kiln
