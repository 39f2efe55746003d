// Host tensors: a dtype, a shape and row-major bytes. Graph constants and backend inputs/outputs.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "kiln/ir/dtype.h"
#include "kiln/ir/shape.h"

namespace kiln {

class Tensor {
 public:
  Tensor() = default;
  // Zero-filled.
  Tensor(DType dtype, Shape shape);
  // Contents undefined: for results that a kernel overwrites whole (saves a pass over memory).
  static Tensor uninitialized(DType dtype, Shape shape);

  // Values given as doubles, converted to `dtype` (rounded to nearest even for bf16/f16).
  static Tensor from_doubles(DType dtype, Shape shape, const std::vector<double>& values);
  static Tensor scalar(DType dtype, double value);

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numel() const { return shape_numel(shape_); }
  size_t nbytes() const { return bytes_ ? bytes_->size : 0; }

  // 64-byte aligned (a cache line; what vector loads and oneDNN prefer).
  std::byte* data() { return bytes_->data.get(); }
  const std::byte* data() const { return bytes_->data.get(); }
  // Whether two tensors share bytes (copies do; see clone()).
  bool shares_bytes_with(const Tensor& other) const {
    return bytes_ != nullptr && bytes_ == other.bytes_;
  }
  // No other tensor shares these bytes: writing them in place changes no one else's value.
  bool owns_bytes_alone() const { return bytes_ != nullptr && bytes_.use_count() == 1; }
  template <typename T>
  T* data_as() { return reinterpret_cast<T*>(data()); }
  template <typename T>
  const T* data_as() const { return reinterpret_cast<const T*>(data()); }

  // Element i (row-major) as a double, whatever the dtype; and the converting store.
  double get(int64_t i) const;
  void set(int64_t i, double value);
  std::vector<double> to_doubles() const;

  // A converted copy (floating -> integer truncates toward zero, as a C cast does).
  Tensor cast(DType dtype) const;
  // A deep copy (tensors share bytes on copy-construction).
  Tensor clone() const;

 private:
  DType dtype_ = DType::f32;
  Shape shape_;
  struct Bytes {
    struct Free {
      void operator()(std::byte* data) const;
    };
    std::unique_ptr<std::byte[], Free> data;
    size_t size = 0;
  };
  Tensor(DType dtype, Shape shape, bool zero);

  std::shared_ptr<Bytes> bytes_;
};

}  // namespace kiln
