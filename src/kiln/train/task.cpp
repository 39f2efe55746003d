// The --task names.
#include "kiln/train/task.h"

#include <array>

namespace kiln {

std::span<const std::string_view> task_names() {
  static constexpr std::array<std::string_view, 5> kTaskNames = {"classification", "qa", "mlm",
                                                                 "ner", "clm"};
  return kTaskNames;
}

}  // namespace kiln
