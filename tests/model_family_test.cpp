// The seam between tasks and model families: transformers' class names and their heads, the
// family registry by model_type, BERT and GPT-2 behind it (their configs, names and parameters),
// and the encoder families (DistilBERT, RoBERTa, XLM-RoBERTa, ELECTRA) on checkpoints
// transformers wrote.
#include "kiln/models/model_family.h"

#include <gtest/gtest.h>

#include "kiln/backends/reference/reference_backend.h"
#include "kiln/ir/ops.h"
#include "kiln/models/bert.h"
#include "kiln/models/bert_heads.h"
#include "kiln/models/distilbert_config.h"
#include "kiln/models/electra_config.h"
#include "kiln/models/roberta_config.h"
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
  EXPECT_EQ(model_types(), (std::vector<std::string_view>{"bert", "distilbert", "roberta",
                                                          "xlm-roberta", "electra", "gpt2"}));
  EXPECT_EQ(model_family("bert").model_type(), "bert");
  EXPECT_EQ(model_family("gpt2").model_type(), "gpt2");
  EXPECT_EQ(error_of([] { model_family("t5", "m/config.json"); }),
            "[m/config.json] \"model_type\" is \"t5\"; Kiln builds bert, distilbert, roberta, "
            "xlm-roberta, electra, gpt2");
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
            "[c] \"model_type\" is \"t5\"; Kiln builds bert, distilbert, roberta, xlm-roberta, "
            "electra, gpt2");
  const std::unique_ptr<PretrainedConfig> gpt2_config =
      model_config_parse(R"({"model_type": "gpt2", "n_embd": 8, "n_head": 2})", "c");
  const auto* gpt2 = dynamic_cast<const Gpt2Config*>(gpt2_config.get());
  ASSERT_NE(gpt2, nullptr);
  EXPECT_EQ(gpt2->n_embd, 8);
}

TEST(ModelFamily, BertHeadsAndTheirClasses) {
  const ModelFamily& family = model_family("bert");
  EXPECT_EQ(family.architecture(ModelHead::sequence_classification),
            "BertForSequenceClassification");
  EXPECT_EQ(family.architecture(ModelHead::question_answering), "BertForQuestionAnswering");
  EXPECT_EQ(family.architecture(ModelHead::masked_lm), "BertForMaskedLM");
  EXPECT_EQ(family.architecture(ModelHead::token_classification), "BertForTokenClassification");
  EXPECT_EQ(error_of([&] { family.architecture(ModelHead::causal_lm); }),
            "[bert] Kiln builds bert with sequence classification, question answering, token "
            "classification and masked LM heads only");
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
  EXPECT_EQ(family.parameters(ModelHead::token_classification, graph, config).names(),
            bert_for_token_classification(graph, config, one_token).params.names());
}

// Each encoder family on the tiny checkpoints transformers saved (tests/fixtures_gen/): the folder's
// config parses as the family's, the family names the class transformers wrote in
// architectures, its head's parameters are exactly the checkpoint's, and the head's graph has
// the head's outputs and a loss count.
TEST(ModelFamily, EncoderFamiliesOnTransformersCheckpoints) {
  const std::vector<std::pair<std::string, ModelHead>> folders = {
      {"distilbert/classifier", ModelHead::sequence_classification},
      {"distilbert/qa", ModelHead::question_answering},
      {"distilbert/token", ModelHead::token_classification},
      {"distilbert/mlm", ModelHead::masked_lm},
      {"roberta/classifier", ModelHead::sequence_classification},
      {"roberta/qa", ModelHead::question_answering},
      {"roberta/token", ModelHead::token_classification},
      {"roberta/mlm", ModelHead::masked_lm},
      {"xlm_roberta/classifier", ModelHead::sequence_classification},
      {"electra/classifier", ModelHead::sequence_classification},
      {"electra/qa", ModelHead::question_answering},
      {"electra/token", ModelHead::token_classification},
      {"electra/mlm", ModelHead::masked_lm},
  };
  for (const auto& [folder, head] : folders) {
    SCOPED_TRACE(folder);
    const std::string dir = std::string(KILN_SOURCE_DIR) + "/tests/data/" + folder;
    std::unique_ptr<PretrainedConfig> config = model_config_read(dir + "/config.json");
    const ModelFamily& family = model_family(*config);
    EXPECT_EQ(family.model_type(), config->model_type);
    EXPECT_EQ(config_head(*config, "c"), head);
    EXPECT_EQ(std::vector<std::string>{family.architecture(head)}, config->architectures);
    Graph graph;
    ParameterSet params = family.parameters(head, graph, *config);
    LoadReport report = family.load_weights(params, dir, /*strict=*/false);
    EXPECT_TRUE(report.missing.empty()) << report.missing.front();
    EXPECT_TRUE(report.unexpected.empty()) << report.unexpected.front();

    Graph task_graph;
    ModelBuildOptions options;
    options.batch_size = 2;
    options.seq_len = 5;
    TaskModel model = family.build(head, task_graph, *config, options);
    const size_t outputs = head == ModelHead::question_answering ? 2
                           : head == ModelHead::masked_lm        ? 0
                                                                 : 1;
    EXPECT_EQ(model.outputs.size(), outputs);
    EXPECT_TRUE(model.loss.valid());
    EXPECT_TRUE(model.loss_count.valid());
    EXPECT_EQ(model.params.size(), params.size());
  }
}

TEST(ModelFamily, EncoderFamiliesInputsAndSizes) {
  // DistilBERT's tokenizer gives no token_type_ids and its graph takes none; RoBERTa's gives
  // zeros, which its graph takes (as transformers' buffer of zeros).
  EXPECT_FALSE(model_family("distilbert").takes_token_type_ids());
  EXPECT_EQ(model_family("distilbert").wordpiece_tokenizer_class(), "DistilBertTokenizer");
  for (const char* type : {"roberta", "xlm-roberta", "electra"}) {
    EXPECT_TRUE(model_family(type).takes_token_type_ids()) << type;
    EXPECT_EQ(model_family(type).wordpiece_tokenizer_class(), "") << type;
  }
  // roberta-base: 514 position embeddings, positions from pad_token_id 1 + 1: 512 tokens.
  RobertaConfig roberta;
  roberta.max_position_embeddings = 514;
  EXPECT_EQ(model_family("roberta").max_positions(roberta), 512);
  EXPECT_EQ(model_family("roberta").vocab_size(roberta), 50265);
  ElectraConfig electra;
  EXPECT_EQ(model_family("electra").max_positions(electra), 512);
  DistilBertConfig distilbert;
  distilbert.max_position_embeddings = 40;
  EXPECT_EQ(model_family("distilbert").max_positions(distilbert), 40);
  EXPECT_EQ(model_family("xlm-roberta").architecture(ModelHead::token_classification),
            "XLMRobertaForTokenClassification");
  EXPECT_EQ(error_of([] { model_family("electra").architecture(ModelHead::causal_lm); }),
            "[electra] Kiln builds electra with sequence classification, question answering, "
            "token classification and masked LM heads only");
  // A config of another family is refused by name, not misread.
  EXPECT_EQ(error_of([&] {
              Graph graph;
              model_family("electra").parameters(ModelHead::masked_lm, graph, roberta);
            }),
            "[electra] the config of model_type \"roberta\" is not electra's");
}

// The Trainer keeps a clone of the config: each family's clone is its own config, whole.
TEST(ModelFamily, ConfigsCloneAsTheirFamily) {
  ElectraConfig electra;
  electra.embedding_size = 14;
  electra.set_num_labels(3);
  std::unique_ptr<PretrainedConfig> copy = electra.clone();
  const auto* electra_copy = dynamic_cast<const ElectraConfig*>(copy.get());
  ASSERT_NE(electra_copy, nullptr);
  EXPECT_EQ(*electra_copy, electra);

  RobertaConfig xlm("xlm-roberta");
  xlm.id2label = {"neg", "pos"};
  copy = xlm.clone();
  const auto* xlm_copy = dynamic_cast<const RobertaConfig*>(copy.get());
  ASSERT_NE(xlm_copy, nullptr);
  EXPECT_EQ(*xlm_copy, xlm);
  EXPECT_EQ(xlm_copy->model_type, "xlm-roberta");

  DistilBertConfig distilbert;
  distilbert.dim = 12;
  distilbert.problem_type = "regression";
  copy = distilbert.clone();
  const auto* distilbert_copy = dynamic_cast<const DistilBertConfig*>(copy.get());
  ASSERT_NE(distilbert_copy, nullptr);
  EXPECT_EQ(*distilbert_copy, distilbert);
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
