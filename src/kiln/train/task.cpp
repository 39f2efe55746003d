// The --task names.
#include "kiln/train/task.h"

#include <array>

namespace kiln {

std::span<const std::string_view> task_names() {
  static constexpr std::array<std::string_view, 3> kTaskNames = {"classification", "qa", "mlm"};
  return kTaskNames;
}

}  // namespace kiln
