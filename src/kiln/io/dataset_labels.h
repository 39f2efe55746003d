// Label parsing for ClassificationDataset (see dataset.h for the rules); internal to io.
#pragma once

#include <cstddef>

#include "kiln/io/dataset.h"

namespace kiln {

// Fills dataset.label_kind, label_ids / label_values and label_names from column `column` of
// `table`, using options.label_names when given. Errors name the file, the line and the label.
void read_labels(const Table& table, size_t column, const ClassificationOptions& options,
                 ClassificationDataset& dataset);

}  // namespace kiln
