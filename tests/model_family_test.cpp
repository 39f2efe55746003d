// The seam between tasks and model families: transformers' class names and their heads, the
// family registry by model_type, and BERT and GPT-2 behind it (their configs, names and
// parameters).
#include "kiln/models/model_family.h"

#include <gtest/gtest.h>

#include "kiln/backends/reference/reference_backend.h"
#include "kiln/ir/ops.h"
#include "kiln/models/bert.h"
#include "kiln/models/bert_heads.h"
#include "kiln/models/gpt2_heads.h"
#include "support/testing.h"

namespace kiln {
namespace {

using testing::error_of;

TEST(ModelFamily, ArchitectureNamesGiveTheirHeads) {
  // Class names as transformers spells them.
  EXPECT_EQ(architecture_head("BertForSequenceClassification"),
            ModelHead::sequence_classification);
  EXPECT_EQ(architecture_head("DistilBertForQuestionAnswering"), ModelHead::question_answering);
  EXPECT_EQ(architecture_head("RobertaForMaskedLM"), ModelHead::masked_lm);
  EXPECT_EQ(architecture_head("ElectraForTokenClassification"), ModelHead::token_classification);
  EXPECT_EQ(architecture_head("GPT2LMHeadModel"), ModelHead::causal_lm);
  EXPECT_EQ(architecture_head("LlamaForCausalLM"), ModelHead::causal_lm);
  EXPECT_EQ(architecture_head("BertModel"), std::nullopt);
  EXPECT_EQ(architecture_head("BertForPreTraining"), std::nullopt);

  BertConfig config;
  EXPECT_EQ(config_head(config, "c"), ModelHead::sequence_classification);  // a new model
  config.architectures = {"BertForMaskedLM"};
  EXPECT_EQ(config_head(config, "c"), ModelHead::masked_lm);
  config.architectures = {"BertModel"};
  EXPECT_EQ(error_of([&] { config_head(config, "c"); }),
            "[c] \"architectures\" names BertModel, a model without a task head Kiln trains");
}

TEST(ModelFamily, RegistryByModelType) {
  EXPECT_EQ(model_types(), (std::vector<std::string_view>{"bert", "gpt2"}));
  EXPECT_EQ(model_family("bert").model_type(), "bert");
  EXPECT_EQ(model_family("gpt2").model_type(), "gpt2");
  EXPECT_EQ(error_of([] { model_family("t5", "m/config.json"); }),
            "[m/config.json] \"model_type\" is \"t5\"; Kiln builds bert, gpt2");
  const std::string text =
      R"({"model_type": "bert", "hidden_size": 12, "num_attention_heads": 3,
          "architectures": ["BertForQuestionAnswering"]})";
  std::unique_ptr<PretrainedConfig> config = model_config_parse(text, "c");
  const auto* bert = dynamic_cast<const BertConfig*>(config.get());
  ASSERT_NE(bert, nullptr);
  EXPECT_EQ(*bert, bert_config_parse(text, "c"));
  // Kiln's configs without model_type are BERT's.
  EXPECT_EQ(model_config_parse("{}", "c")->model_type, "bert");
  EXPECT_EQ(error_of([] { model_config_parse(R"({"model_type": "t5"})", "c"); }),
            "[c] \"model_type\" is \"t5\"; Kiln builds bert, gpt2");
  const auto* gpt2 = dynamic_cast<const Gpt2Config*>(
      model_config_parse(R"({"model_type": "gpt2", "n_embd": 8, "n_head": 2})", "c").get());
  ASSERT_NE(gpt2, nullptr);
  EXPECT_EQ(gpt2->n_embd, 8);
}

TEST(ModelFamily, BertHeadsAndTheirClasses) {
  const ModelFamily& family = model_family("bert");
  EXPECT_EQ(family.architecture(ModelHead::sequence_classification),
            "BertForSequenceClassification");
  EXPECT_EQ(family.architecture(ModelHead::question_answering), "BertForQuestionAnswering");
  EXPECT_EQ(family.architecture(ModelHead::masked_lm), "BertForMaskedLM");
  EXPECT_EQ(error_of([&] { family.architecture(ModelHead::causal_lm); }),
            "[bert] Kiln builds BERT with sequence classification, question answering and masked "
            "LM heads only");
  EXPECT_TRUE(family.takes_token_type_ids());

  BertConfig config;
  config.hidden_size = 12;
  config.num_attention_heads = 3;
  config.intermediate_size = 20;
  config.num_hidden_layers = 1;
  config.vocab_size = 50;
  config.max_position_embeddings = 24;
  EXPECT_EQ(family.max_positions(config), 24);
  EXPECT_EQ(family.vocab_size(config), 50);
  // The parameters of each head are those of the head's own builder, in order.
  Graph graph;
  BertBuildOptions one_token;
  one_token.seq_len = 1;
  one_token.with_labels = false;
  EXPECT_EQ(family.parameters(ModelHead::question_answering, graph, config).names(),
            bert_for_question_answering(graph, config, one_token).params.names());
  EXPECT_EQ(family.parameters(ModelHead::masked_lm, graph, config).names(),
            bert_for_masked_lm(graph, config, one_token).params.names());
  EXPECT_EQ(family.parameters(ModelHead::sequence_classification, graph, config).names(),
            bert_for_sequence_classification(graph, config, one_token).params.names());
}

TEST(ModelFamily, Gpt2HeadsAndTheirClasses) {
  const ModelFamily& family = model_family("gpt2");
  EXPECT_EQ(family.architecture(ModelHead::sequence_classification),
            "GPT2ForSequenceClassification");
  EXPECT_EQ(family.architecture(ModelHead::token_classification), "GPT2ForTokenClassification");
  EXPECT_EQ(family.architecture(ModelHead::question_answering), "GPT2ForQuestionAnswering");
  EXPECT_EQ(family.architecture(ModelHead::causal_lm), "GPT2LMHeadModel");
  EXPECT_EQ(error_of([&] { family.architecture(ModelHead::masked_lm); }),
            "[gpt2] Kiln builds GPT-2 with sequence classification, token classification, "
            "question answering and causal LM heads only");
  EXPECT_FALSE(family.takes_token_type_ids());

  Gpt2Config config;
  config.n_embd = 8;
  config.n_head = 2;
  config.n_layer = 1;
  config.vocab_size = 50;
  config.n_positions = 24;
  EXPECT_EQ(family.max_positions(config), 24);
  EXPECT_EQ(family.vocab_size(config), 50);
  std::unique_ptr<PretrainedConfig> copy = config.clone();
  EXPECT_EQ(dynamic_cast<const Gpt2Config&>(*copy), config);
  Graph graph;
  BertBuildOptions one_token;
  one_token.seq_len = 1;
  one_token.with_labels = false;
  EXPECT_EQ(family.parameters(ModelHead::sequence_classification, graph, config).names(),
            gpt2_for_sequence_classification(graph, config, one_token).params.names());
  EXPECT_EQ(family.parameters(ModelHead::token_classification, graph, config).names(),
            gpt2_for_token_classification(graph, config, one_token).params.names());
  EXPECT_EQ(family.parameters(ModelHead::question_answering, graph, config).names(),
            gpt2_for_question_answering(graph, config, one_token).params.names());
  EXPECT_EQ(family.parameters(ModelHead::causal_lm, graph, config).names(),
            gpt2_lm_head_model(graph, config, one_token).params.names());
}

TEST(ModelFamily, CausalLmPredictionsAreTorchArgmaxAndCountsOnlyPredictedLabels) {
  Graph graph;
  Value logits = graph.input("logits", DType::f32, {1, 3, 4});
  Value labels = graph.input("labels", DType::i32, {2, 3});
  // torch.argmax gives the first of equal maxima: 1, 0, 1.
  Tensor values = Tensor::from_doubles(DType::f32, {1, 3, 4},
                                       {1, 3, 3, 0, 5, 5, 5, 5, -2, -1, -3, -1});
  // labels[:, 1:] that are not -100: 3 (the first column is never predicted).
  Tensor ids = Tensor::from_doubles(DType::i32, {2, 3}, {7, 8, -100, -100, 9, 4});
  std::vector<Tensor> results = evaluate_reference(
      graph, {causal_lm_predictions(logits), causal_lm_label_count(labels)}, {values, ids});
  ASSERT_EQ(results[0].shape(), (Shape{1, 3}));
  EXPECT_EQ(results[0].get(0), 1.0);
  EXPECT_EQ(results[0].get(1), 0.0);
  EXPECT_EQ(results[0].get(2), 1.0);
  EXPECT_EQ(results[1].get(0), 3.0);
}

}  // namespace
}  // namespace kiln
