// `kiln bench --task`: each task's model graph, initial weights and synthetic batch.
#include "bench_task.h"

#include "kiln/io/mlm_collate.h"
#include "kiln/ir/error.h"
#include "kiln/ir/ops.h"
#include "kiln/ir/philox.h"
#include "kiln/models/bert.h"
#include "kiln/models/bert_heads.h"
#include "kiln/models/model_family.h"
#include "kiln/train/mlm_data.h"

namespace kiln::cli {
namespace {

// bert-base-uncased's [CLS] and [SEP] (its [MASK], 103, is MlmOptions' default).
constexpr int32_t kClsId = 101;
constexpr int32_t kSepId = 102;

// Uniform integers in [low, high) from Philox stream `stream`: the same batch on every run.
Tensor random_integers(Shape shape, int64_t low, int64_t high, int64_t seed, uint32_t stream) {
  Tensor tensor(DType::i64, std::move(shape));
  for (int64_t i = 0; i < tensor.numel(); ++i) {
    uint32_t bits = random_bits_at(seed, 0, stream, i);
    tensor.set(i, static_cast<double>(low + static_cast<int64_t>(bits % (high - low))));
  }
  return tensor;
}

// bert_torch.py's batch: random ids (not padding), token types 0 then 1 from the middle, no
// padding, random labels.
TensorMap classification_batch(const BertConfig& config, int64_t b, int64_t s, int64_t seed) {
  Tensor token_types(DType::i64, {b, s});
  Tensor mask(DType::i64, {b, s});
  for (int64_t i = 0; i < b * s; ++i) {
    token_types.set(i, i % s >= s / 2 ? 1.0 : 0.0);
    mask.set(i, 1.0);
  }
  return {{"input_ids", random_integers({b, s}, 1, config.vocab_size, seed + 1, 0)},
          {"token_type_ids", token_types},
          {"attention_mask", mask},
          {"labels", random_integers({b}, 0, config.num_labels(), seed + 1, 1)}};
}

BenchWorkload classification_workload(Graph& graph, const BertConfig& config, int64_t batch,
                                       int64_t seq, int64_t seed) {
  BertBuildOptions build{.batch_size = batch, .seq_len = seq, .training = true};
  BertClassifier model = bert_for_sequence_classification(graph, config, build);
  model.params.initialize(seed);
  // Every row has a label: the loss is the mean of `batch` terms.
  Value loss_count = full(graph, static_cast<double>(batch), DType::f32, {});
  return {model.loss, loss_count, model.params.values(), model.params.state_dict(),
          classification_batch(config, batch, seq, seed)};
}

// run_mlm.py's text blocks as group_texts cuts them, one per row: [CLS], random ids, [SEP], all
// of segment 0, with their special-tokens mask (what the masking skips).
LmDataset synthetic_blocks(const BertConfig& config, int64_t rows, int64_t seq, int64_t seed) {
  const Tensor ids = random_integers({rows, seq}, 1, config.vocab_size, seed + 1, 0);
  LmDataset dataset;
  dataset.source = "kiln bench's synthetic text";
  for (int64_t row = 0; row < rows; ++row) {
    Encoding block;
    for (int64_t t = 0; t < seq; ++t) {
      if (t == 0 || t == seq - 1) {
        block.push(t == 0 ? kClsId : kSepId, 0, {}, /*word=*/-1, /*sequence=*/-1, /*special=*/1);
      } else {
        const auto id = static_cast<int32_t>(ids.get(row * seq + t));
        block.push(id, 0, {}, static_cast<int32_t>(t - 1), /*sequence=*/0, /*special=*/0);
      }
    }
    dataset.examples.push_back(std::move(block));
    dataset.lines.push_back(static_cast<size_t>(row) + 1);
  }
  return dataset;
}

// The Trainer's MLM step: the head predicts only at the masked positions (MlmData's compacted
// labels), with the capacity the Trainer's programs give that batch shape.
BenchWorkload mlm_workload(Graph& graph, const BertConfig& config, int64_t batch, int64_t seq,
                           int64_t seed) {
  check(seq >= 3, "--seq", seq, " leaves no token to mask between [CLS] and [SEP] (--task mlm)");
  MlmOptions masking;
  masking.vocab_size = static_cast<int32_t>(config.vocab_size);
  masking.seed = seed;
  const MlmData data(synthetic_blocks(config, batch, seq, seed), masking);
  CollateOptions collate;
  collate.batch_size = static_cast<size_t>(batch);
  collate.max_seq_length = static_cast<size_t>(seq);
  collate.index_dtype = DType::i64;
  std::vector<size_t> rows(static_cast<size_t>(batch));
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = i;
  TensorMap feeds = data.collate(rows, collate, /*with_labels=*/true, /*epoch=*/0);

  const Tensor& labels = feeds.at("masked_labels");
  int64_t masked = 0;
  for (int64_t i = 0; i < labels.numel(); ++i) masked += labels.get(i) != -100 ? 1 : 0;

  BertBuildOptions build{.batch_size = batch, .seq_len = seq, .training = true};
  build.mlm_predictions = labels.numel();
  BertMaskedLM model = bert_for_masked_lm(graph, config, build);
  model.params.initialize(seed);
  return {model.loss, token_label_count(model.labels), model.params.values(),
          model.params.state_dict(), std::move(feeds), masked, build.mlm_predictions};
}

}  // namespace

BenchWorkload bench_workload(Graph& graph, const BertConfig& config, const std::string& task,
                             int64_t batch, int64_t seq, int64_t seed) {
  check(task == "classification" || task == "mlm", "--task", "'", task,
        "' is not one of: classification, mlm");
  BenchWorkload workload = task == "mlm" ? mlm_workload(graph, config, batch, seq, seed)
                                         : classification_workload(graph, config, batch, seq, seed);
  workload.batch["dropout_seed"] = Tensor::scalar(DType::i64, static_cast<double>(seed));
  return workload;
}

}  // namespace kiln::cli
