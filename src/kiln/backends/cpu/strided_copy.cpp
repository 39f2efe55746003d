// Strided copies: dim simplification at compile time, row- or tile-wise loops at run time.
#include "kiln/backends/cpu/strided_copy.h"

#include <algorithm>
#include <cstring>

#include "kiln/backends/cpu/parallel.h"
#include "kiln/backends/cpu/typed.h"

namespace kiln::cpu {
namespace {

constexpr int64_t kTile = 16;

// The outer dims of a copy (those before `dims`, except `skip`), iterated by a flat index: the
// offsets of each work item are recomputed from it, without allocating.
struct Outer {
  const StridedCopy& copy;
  size_t dims, skip;

  int64_t count() const {
    int64_t n = 1;
    for (size_t d = 0; d < dims; ++d) n *= d == skip ? 1 : copy.shape[d];
    return n;
  }
  void offsets(int64_t flat, int64_t& dst, int64_t& src) const {
    dst = copy.dst_base;
    src = copy.src_base;
    for (size_t d = dims; d-- > 0;) {
      if (d == skip) continue;
      int64_t index = flat % copy.shape[d];
      flat /= copy.shape[d];
      dst += index * copy.dst_strides[d];
      src += index * copy.src_strides[d];
    }
  }
};

// Rows that follow each other along the dim before the last are a run: their offsets are found
// once a run, not once a row (the divisions cost as much as a short row's copy).
template <typename T>
void copy_rows(const StridedCopy& copy, T* dst, const T* src) {
  size_t last = copy.shape.size() - 1;
  Outer outer{copy, last, last};
  int64_t length = copy.shape[last], ds = copy.dst_strides[last], ss = copy.src_strides[last];
  int64_t run = last > 0 ? copy.shape[last - 1] : 1;
  int64_t run_ds = last > 0 ? copy.dst_strides[last - 1] : 0;
  int64_t run_ss = last > 0 ? copy.src_strides[last - 1] : 0;
  parallel_for(outer.count(), grain_for(length), [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end;) {
      int64_t d, s;
      outer.offsets(row, d, s);
      int64_t rows = std::min(end - row, run - row % run);
      for (int64_t r = 0; r < rows; ++r, d += run_ds, s += run_ss) {
        T* to = dst + d;
        const T* from = src + s;
        if (ds == 1 && ss == 1) {
          std::memcpy(to, from, static_cast<size_t>(length) * sizeof(T));
        } else if (ds == 1 && ss == 0) {
          std::fill_n(to, length, *from);
        } else {
          for (int64_t j = 0; j < length; ++j) to[j * ds] = from[j * ss];
        }
      }
      row += rows;
    }
  });
}

// A transposing copy: dim `unit` (not the last) has source stride 1. Work items are (outer index,
// block of kTile along `unit`); each walks kTile x kTile tiles of (unit, last).
template <typename T>
void copy_tiles(const StridedCopy& copy, size_t unit, T* dst, const T* src) {
  size_t last = copy.shape.size() - 1;
  Outer outer{copy, last, unit};
  int64_t rows = copy.shape[unit], cols = copy.shape[last];
  int64_t d_row = copy.dst_strides[unit], d_col = copy.dst_strides[last];
  int64_t s_col = copy.src_strides[last];  // the row stride of the source is 1
  int64_t blocks = (rows + kTile - 1) / kTile;
  parallel_for(outer.count() * blocks, grain_for(kTile * cols), [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      int64_t d, s;
      outer.offsets(item / blocks, d, s);
      int64_t r0 = item % blocks * kTile, r1 = std::min(rows, r0 + kTile);
      for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
        int64_t c1 = std::min(cols, c0 + kTile);
        for (int64_t r = r0; r < r1; ++r) {
          for (int64_t c = c0; c < c1; ++c) dst[d + r * d_row + c * d_col] = src[s + r + c * s_col];
        }
      }
    }
  });
}

}  // namespace

StridedCopy simplify(StridedCopy copy) {
  StridedCopy out = copy;
  out.shape.clear();
  out.dst_strides.clear();
  out.src_strides.clear();
  for (size_t d = 0; d < copy.shape.size(); ++d) {
    if (copy.shape[d] == 1) continue;
    int64_t size = copy.shape[d], ds = copy.dst_strides[d], ss = copy.src_strides[d];
    if (!out.shape.empty() && out.dst_strides.back() == ds * size &&
        out.src_strides.back() == ss * size) {
      out.shape.back() *= size;  // the previous dim steps over exactly this one
      out.dst_strides.back() = ds;
      out.src_strides.back() = ss;
      continue;
    }
    out.shape.push_back(size);
    out.dst_strides.push_back(ds);
    out.src_strides.push_back(ss);
  }
  if (out.shape.empty() || shape_numel(copy.shape) == 0) {  // one element, or none
    out.shape = {shape_numel(copy.shape) == 0 ? 0 : 1};
    out.dst_strides = {1};
    out.src_strides = {1};
  }
  return out;
}

void run_copy(const StridedCopy& copy, std::byte* dst, const std::byte* src) {
  if (shape_numel(copy.shape) == 0) return;
  size_t last = copy.shape.size() - 1;
  visit_bytes_of_size(copy.element, [&]<typename T>() {
    T* to = reinterpret_cast<T*>(dst);
    const T* from = reinterpret_cast<const T*>(src);
    if (copy.src_strides[last] != 1 && copy.shape[last] >= kTile) {
      for (size_t d = 0; d < last; ++d) {
        if (copy.src_strides[d] == 1 && copy.shape[d] >= kTile) {
          return copy_tiles(copy, d, to, from);
        }
      }
    }
    copy_rows(copy, to, from);
  });
}

}  // namespace kiln::cpu
