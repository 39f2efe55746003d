// Host tensors.
#include "kiln/ir/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>

#include "kiln/ir/error.h"

namespace kiln {

namespace {
constexpr std::align_val_t kAlignment{64};
}  // namespace

void Tensor::Bytes::Free::operator()(std::byte* data) const { ::operator delete[](data, kAlignment); }

Tensor::Tensor(DType dtype, Shape shape) : Tensor(dtype, std::move(shape), true) {}

Tensor Tensor::uninitialized(DType dtype, Shape shape) { return Tensor(dtype, std::move(shape), false); }

Tensor::Tensor(DType dtype, Shape shape, bool zero) : dtype_(dtype), shape_(std::move(shape)) {
  for (int64_t dim : shape_) check(dim >= 0, "tensor", "negative dim in shape ", shape_str(shape_));
  bytes_ = std::make_shared<Bytes>();
  bytes_->size = static_cast<size_t>(shape_numel(shape_)) * dtype_size(dtype);
  // At least one byte, so that data() is never null.
  bytes_->data.reset(static_cast<std::byte*>(
      ::operator new[](std::max<size_t>(bytes_->size, 1), kAlignment)));
  if (zero) std::memset(bytes_->data.get(), 0, bytes_->size);
}

Tensor Tensor::from_doubles(DType dtype, Shape shape, const std::vector<double>& values) {
  Tensor tensor(dtype, std::move(shape));
  check(static_cast<int64_t>(values.size()) == tensor.numel(), "tensor", values.size(),
        " values for shape ", shape_str(tensor.shape()));
  for (int64_t i = 0; i < tensor.numel(); ++i) tensor.set(i, values[static_cast<size_t>(i)]);
  return tensor;
}

Tensor Tensor::scalar(DType dtype, double value) { return from_doubles(dtype, {}, {value}); }

double Tensor::get(int64_t i) const {
  switch (dtype_) {
    case DType::f32: return data_as<float>()[i];
    case DType::f64: return data_as<double>()[i];
    case DType::bf16: return bf16_to_f32(data_as<uint16_t>()[i]);
    case DType::f16: return f16_to_f32(data_as<uint16_t>()[i]);
    case DType::i32: return data_as<int32_t>()[i];
    case DType::i64: return static_cast<double>(data_as<int64_t>()[i]);
    case DType::u32: return data_as<uint32_t>()[i];
    case DType::boolean: return data_as<uint8_t>()[i];
  }
  fail("tensor", "bad dtype");
}

void Tensor::set(int64_t i, double value) {
  switch (dtype_) {
    case DType::f32: data_as<float>()[i] = static_cast<float>(value); return;
    case DType::f64: data_as<double>()[i] = value; return;
    case DType::bf16: data_as<uint16_t>()[i] = f64_to_bf16(value); return;
    case DType::f16: data_as<uint16_t>()[i] = f64_to_f16(value); return;
    case DType::i32: data_as<int32_t>()[i] = static_cast<int32_t>(value); return;
    case DType::i64: data_as<int64_t>()[i] = static_cast<int64_t>(value); return;
    case DType::u32: data_as<uint32_t>()[i] = static_cast<uint32_t>(value); return;
    case DType::boolean: data_as<uint8_t>()[i] = value != 0.0 ? 1 : 0; return;
  }
  fail("tensor", "bad dtype");
}

std::vector<double> Tensor::to_doubles() const {
  std::vector<double> values(static_cast<size_t>(numel()));
  for (int64_t i = 0; i < numel(); ++i) values[static_cast<size_t>(i)] = get(i);
  return values;
}

Tensor Tensor::cast(DType dtype) const {
  Tensor out(dtype, shape_);
  if (dtype == DType::i64 && dtype_ == DType::i64) {  // doubles would lose bits beyond 2^53
    std::memcpy(out.data(), data(), nbytes());
    return out;
  }
  for (int64_t i = 0; i < numel(); ++i) {
    double value = get(i);
    if (is_integer(dtype) && std::isfinite(value)) value = std::trunc(value);
    out.set(i, value);
  }
  return out;
}

Tensor Tensor::clone() const {
  Tensor out = uninitialized(dtype_, shape_);
  if (nbytes()) std::memcpy(out.data(), data(), nbytes());
  return out;
}

}  // namespace kiln
