// What `kiln bench --task` trains, each with its synthetic batch: bert_torch.py's
// BertForSequenceClassification step (classification, the default), or the step run_mlm.py runs,
// BertForMaskedLM on a batch masked as DataCollatorForLanguageModeling masks it (mlm; the same
// model graph and batch feeds as `kiln train --task mlm`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/models/bert_config.h"
#include "kiln/train/train_step.h"

namespace kiln::cli {

struct BenchWorkload {
  Value loss;
  // f32 scalar: the terms the loss is the mean of (rows, or masked tokens), which weights the
  // replicas' losses under data parallelism.
  Value loss_count;
  std::vector<Value> params;  // every one with weight decay, as bert_torch.py's AdamW
  TensorMap initial;          // the initialised weights by state-dict name
  TensorMap batch;            // one replica's inputs but dropout_offset (set per step)
  // mlm: the tokens chosen for prediction, and the rows the head computes (those, then padding
  // up to a capacity fixed by the batch shape); 0 for classification.
  int64_t masked_tokens = 0;
  int64_t mlm_predictions = 0;
};

// "classification" or "mlm" (else an Error naming --task) on `batch` rows of `seq` tokens, into
// `graph` (which must outlive the result); `seed` keys the weights, the batch and the masks.
BenchWorkload bench_workload(Graph& graph, const BertConfig& config, const std::string& task,
                             int64_t batch, int64_t seq, int64_t seed);

}  // namespace kiln::cli
