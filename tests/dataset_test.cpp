// Data files for classification: CSV/TSV/JSONL quirks and errors, the column and label rules,
// the deterministic split, and the UCI sentiment file.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <string>

#include "kiln/io/dataset.h"
#include "kiln/io/dataset_order.h"
#include "kiln/io/dataset_table.h"
#include "kiln/ir/error.h"

namespace kiln {
namespace {

const std::string kDataDir = std::string(KILN_SOURCE_DIR) + "/tests/data/datasets/";

template <typename Body>
std::string error_message(Body&& body) {
  try {
    body();
  } catch (const Error& error) {
    return error.what();
  }
  return "(no error)";
}

std::vector<std::string> column_texts(const Table& table, size_t column) {
  std::vector<std::string> out;
  for (size_t r = 0; r < table.size(); ++r) out.push_back(table.cell(r, column).text);
  return out;
}

ClassificationDataset csv_dataset(std::string_view text, const ClassificationOptions& options = {}) {
  return classification_dataset(parse_csv(text, "data.csv", options.table), options);
}

ClassificationDataset jsonl_dataset(std::string_view text, const ClassificationOptions& options = {}) {
  return classification_dataset(parse_jsonl(text, "data.jsonl"), options);
}

// --- CSV -----------------------------------------------------------------------------------

TEST(Csv, BomCrlfQuotesAndEmbeddedNewlineFromFile) {
  Table table = read_table_file(kDataDir + "quirks.csv");
  EXPECT_EQ(table.columns, (std::vector<std::string>{"text", "label"}));  // BOM stripped
  EXPECT_EQ(column_texts(table, 0), (std::vector<std::string>{"Hello, world", "She said \"wow\"",
                                                                "line one\nline two", "plain text"}));
  EXPECT_EQ(column_texts(table, 1),
            (std::vector<std::string>{"positive", "positive", "negative", "neutral"}));
  // The quoted newline spans lines 4-5; line 6 is blank.
  EXPECT_EQ(table.lines, (std::vector<size_t>{2, 3, 4, 7}));
  EXPECT_EQ(table.cell(0, 0).type, CellType::raw);
}

TEST(Csv, PandasQuoteHabits) {
  Table table = parse_csv("a,b\n\"ab\"cd,x\"y\n\" spaced \",\"\"\n\"cr\r\nlf\",last", "q.csv", {});
  // Text after a closing quote is appended; a quote inside an unquoted field is literal.
  EXPECT_EQ(column_texts(table, 0), (std::vector<std::string>{"abcd", " spaced ", "cr\r\nlf"}));
  EXPECT_EQ(column_texts(table, 1), (std::vector<std::string>{"x\"y", "", "last"}));
  EXPECT_EQ(table.lines, (std::vector<size_t>{2, 3, 4}));
}

TEST(Csv, EmptyFieldsAndHeaderNames) {
  Table table = parse_csv(",text,label\n0,,1\n", "idx.csv", {});
  EXPECT_EQ(table.columns, (std::vector<std::string>{"Unnamed: 0", "text", "label"}));
  EXPECT_EQ(table.cell(0, 1).text, "");
  EXPECT_EQ(error_message([] { parse_csv("a,b,a\n1,2,3\n", "dup.csv", {}); }),
            "[dup.csv:1] duplicate column 'a'");
}

TEST(Csv, ColumnNamesReplaceOrSupplyTheHeader) {
  TableOptions options;
  options.column_names = {"x", "y"};
  Table replaced = parse_csv("a,b\n1,2\n", "r.csv", options);
  EXPECT_EQ(replaced.columns, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(replaced.size(), 1u);
  options.header = false;
  Table supplied = parse_csv("a,b\n1,2\n", "s.csv", options);
  EXPECT_EQ(supplied.size(), 2u);
  EXPECT_EQ(supplied.cell(0, 0).text, "a");
  options.column_names = {"x", "y", "z"};
  EXPECT_EQ(error_message([&] { parse_csv("a,b\n", "s.csv", options); }),
            "[s.csv:1] row has 2 fields, 3 column names given");
  options.header = true;
  EXPECT_EQ(error_message([&] { parse_csv("a,b\n", "r.csv", options); }),
            "[r.csv:1] 3 column names given, the header has 2");
}

TEST(Csv, RaggedRowNamesFileAndLine) {
  std::string path = kDataDir + "ragged.csv";
  EXPECT_EQ(error_message([&] { read_table_file(path); }),
            "[" + path + ":3] row has 2 fields, header has 3");
}

TEST(Csv, UnterminatedQuoteNamesTheLineWhereItOpened) {
  EXPECT_EQ(error_message([] { parse_csv("text,label\nok,1\n\"never closed,1\nmore,0\n", "u.csv", {}); }),
            "[u.csv:3] unterminated quoted field (the quote opened on this line never closes)");
}

TEST(Csv, InvalidUtf8AndNulNameTheLine) {
  EXPECT_EQ(error_message([] { parse_csv("text,label\nok,1\nab\xff,0\n", "bad.csv", {}); }),
            "[bad.csv:3] invalid UTF-8 at byte 2");
  EXPECT_EQ(error_message([] { parse_csv(std::string_view("text,label\na\0b,1\n", 15), "nul.csv", {}); }),
            "[nul.csv:2] NUL byte at byte 1 of the line (not a text file?)");
}

TEST(Csv, EmptyFileAndMissingFile) {
  EXPECT_EQ(error_message([] { parse_csv("", "empty.csv", {}); }), "[empty.csv] empty file: no header line");
  std::string missing = kDataDir + "no_such.csv";
  EXPECT_EQ(error_message([&] { read_table_file(missing); }),
            "[" + missing + "] cannot open: No such file or directory");
  std::string header_only = kDataDir + "header_only.csv";
  EXPECT_EQ(error_message([&] { load_classification_dataset(header_only); }),
            "[" + header_only + "] no examples in the file");
}

// --- TSV -----------------------------------------------------------------------------------

TEST(Tsv, NoQuotingAndHeaderlessNames) {
  TableOptions options;
  options.header = false;
  Table table = parse_tsv("0\t\"You'll love it!\r\n1\tsaid \"hi\"\n", "u.tsv", options);
  EXPECT_EQ(table.columns, (std::vector<std::string>{"0", "1"}));  // pandas' header=None names
  EXPECT_EQ(column_texts(table, 1), (std::vector<std::string>{"\"You'll love it!", "said \"hi\""}));
  EXPECT_EQ(error_message([&] { parse_tsv("a\tb\nc\n", "r.tsv", options); }),
            "[r.tsv:2] row has 1 field, first row has 2");
}

// --- JSONL ---------------------------------------------------------------------------------

TEST(Jsonl, TypesBlankLinesAndCrlf) {
  Table table = parse_jsonl("{\"text\": \"a\", \"label\": 1}\r\n\r\n  \n{\"label\": 2.5, \"text\": \"b\", \"x\": [1]}\n",
                            "t.jsonl");
  EXPECT_EQ(table.columns, (std::vector<std::string>{"text", "label", "x"}));
  EXPECT_EQ(table.lines, (std::vector<size_t>{1, 4}));
  EXPECT_EQ(table.cell(0, 1).type, CellType::integer);
  EXPECT_EQ(table.cell(1, 1).type, CellType::number);
  EXPECT_EQ(table.cell(1, 1).text, "2.5");
  EXPECT_EQ(table.cell(0, 2).type, CellType::missing);
  EXPECT_EQ(table.cell(1, 2).type, CellType::nested);
}

TEST(Jsonl, InvalidJsonAndNonObjects) {
  std::string invalid = error_message([] { parse_jsonl("{\"text\": \"a\"}\n{\"text\": }\n", "bad.jsonl"); });
  EXPECT_EQ(invalid.rfind("[bad.jsonl:2] invalid JSON: ", 0), 0u) << invalid;
  EXPECT_EQ(error_message([] { parse_jsonl("[1, 2]\n", "arr.jsonl"); }),
            "[arr.jsonl:1] expected a JSON object, got array");
}

TEST(Jsonl, MissingColumnInOneRowNamesTheLine) {
  std::string path = kDataDir + "missing_text.jsonl";
  EXPECT_EQ(error_message([&] { load_classification_dataset(path); }),
            "[" + path + ":4] no column 'text'");
}

// Multi-label (run_classification.py's list-valued label column): JSON arrays in JSON Lines,
// JSON arrays or Python's list repr in CSV/TSV fields; names sorted, sets as sorted ids.
TEST(Labels, ListsAreMultiLabelInEveryFormat) {
  ClassificationDataset jsonl = jsonl_dataset(
      "{\"text\": \"a\", \"label\": [\"sport\", \"art\"]}\n"
      "{\"text\": \"b\", \"label\": []}\n"
      "{\"text\": \"c\", \"label\": [\"food\", \"sport\", \"food\"]}\n");
  EXPECT_EQ(jsonl.label_kind, LabelKind::multi_label);
  EXPECT_EQ(jsonl.label_names, (std::vector<std::string>{"art", "food", "sport"}));
  EXPECT_EQ(jsonl.label_sets, (std::vector<std::vector<int32_t>>{{0, 2}, {}, {1, 2}}));
  EXPECT_EQ(jsonl.num_labels(), 3);

  ClassificationDataset csv = csv_dataset(
      "text,label\n"
      "a,\"[\"\"sport\"\", \"\"art\"\"]\"\n"  // a JSON array, CSV-quoted
      "b,[]\n"
      "c,\"['food', 'sport']\"\n"  // Python's repr, as pandas writes a list
      "d,\"[3, 'it\\'s']\"\n");
  EXPECT_EQ(csv.label_kind, LabelKind::multi_label);
  EXPECT_EQ(csv.label_names, (std::vector<std::string>{"3", "art", "food", "it's", "sport"}));
  EXPECT_EQ(csv.label_sets, (std::vector<std::vector<int32_t>>{{1, 4}, {}, {2, 4}, {0, 3}}));

  ClassificationOptions given;  // a trained model's labels fix the ids
  given.label_names = {"sport", "food", "art"};
  ClassificationDataset fixed =
      jsonl_dataset("{\"text\": \"a\", \"label\": [\"art\", \"sport\"]}\n", given);
  EXPECT_EQ(fixed.label_sets, (std::vector<std::vector<int32_t>>{{0, 2}}));
}

TEST(Labels, MalformedListsNameTheLine) {
  EXPECT_EQ(error_message([] {
              jsonl_dataset("{\"text\": \"a\", \"label\": [\"x\"]}\n"
                            "{\"text\": \"b\", \"label\": \"y\"}\n");
            }),
            "[data.jsonl:2] label 'y' is not a list, but the label on line 1 is (multi-label): "
            "write it as [] or [\"name\", ...]");
  EXPECT_EQ(error_message([] { jsonl_dataset("{\"text\": \"a\", \"label\": [1.5]}\n"); }),
            "[data.jsonl:1] label 1.5 in the list is not a string or an integer");
  EXPECT_EQ(error_message([] { csv_dataset("text,label\na,\"['x' 'y']\"\n"); }),
            "[data.csv:2] expected ',' between the labels of the list, found '''");
  EXPECT_EQ(error_message([] { csv_dataset("text,label\na,\"['x]\"\n"); }),
            "[data.csv:2] unterminated string in the label list");
  ClassificationOptions given;
  given.label_names = {"x", "y"};
  EXPECT_EQ(error_message([&] {
              jsonl_dataset("{\"text\": \"a\", \"label\": [\"z\"]}\n", given);
            }),
            "[data.jsonl:1] unknown label 'z' (labels: x, y)");
}

TEST(Formats, ChosenByExtension) {
  EXPECT_EQ(table_format_from_path("a/train.CSV"), TableFormat::csv);
  EXPECT_EQ(table_format_from_path("x.tsv"), TableFormat::tsv);
  EXPECT_EQ(table_format_from_path("x.json"), TableFormat::jsonl);
  EXPECT_EQ(table_format_from_path("x.jsonl"), TableFormat::jsonl);
  EXPECT_EQ(error_message([] { table_format_from_path("notes.txt"); }),
            "[notes.txt] unknown data file extension (expected .csv, .tsv, .json or .jsonl)");
}

// --- columns ---------------------------------------------------------------------------------

TEST(Columns, TwoColumnFileUsesTheNonLabelColumn) {
  ClassificationDataset first = csv_dataset("review,label\ngood,1\nbad,0\n");
  EXPECT_EQ(first.text_column, "review");
  EXPECT_EQ(first.texts, (std::vector<std::string>{"good", "bad"}));
  ClassificationDataset second = csv_dataset("label,review\n1,good\n");
  EXPECT_EQ(second.text_column, "review");
  EXPECT_FALSE(second.has_pairs());
}

TEST(Columns, TextColumnPreferredOverOthers) {
  ClassificationDataset dataset = csv_dataset("source,text,label\nimdb,great,1\n");
  EXPECT_EQ(dataset.text_column, "text");
  EXPECT_EQ(dataset.texts, (std::vector<std::string>{"great"}));
}

TEST(Columns, AmbiguousOrMissingColumnsAreErrors) {
  EXPECT_EQ(error_message([] { csv_dataset("a,b,label\n1,2,3\n"); }),
            "[data.csv] no column 'text' (columns: a, b, label); choose one with --text_column_name");
  EXPECT_EQ(error_message([] { csv_dataset("review,stars\ngood,5\n"); }),
            "[data.csv] no column 'label' (columns: review, stars); choose one with --label_column_name");
  ClassificationOptions options;
  options.columns.text_pair = "nope";
  EXPECT_EQ(error_message([&] { csv_dataset("text,label\na,1\n", options); }),
            "[data.csv] no column 'nope' (columns: text, label); choose one with --text_pair_column_name");
}

TEST(Columns, ExplicitNamesAndPairs) {
  ClassificationOptions options;
  options.columns = {"q", "p", "y"};
  ClassificationDataset dataset = csv_dataset("q,p,y,text\nwhy,because,yes,x\n", options);
  EXPECT_EQ(dataset.text_column, "q");
  EXPECT_EQ(dataset.text_pair_column, "p");
  EXPECT_EQ(dataset.label_column, "y");
  EXPECT_EQ(dataset.text_pairs, (std::vector<std::string>{"because"}));
}

TEST(Columns, Sentence1AndSentence2AsRunGlue) {
  ClassificationDataset dataset = load_classification_dataset(kDataDir + "pairs.jsonl");
  EXPECT_EQ(dataset.text_column, "sentence1");
  EXPECT_EQ(dataset.text_pair_column, "sentence2");
  EXPECT_EQ(dataset.text_pairs[1], "A dog barks.");
  EXPECT_EQ(dataset.lines, (std::vector<size_t>{1, 3, 4}));
  // Sorted: contradiction, entailment, neutral.
  EXPECT_EQ(dataset.label_names, (std::vector<std::string>{"contradiction", "entailment", "neutral"}));
  EXPECT_EQ(dataset.label_ids, (std::vector<int32_t>{1, 2, 0}));
}

// --- labels ----------------------------------------------------------------------------------

TEST(Labels, StringLabelsMappedInSortedOrder) {
  ClassificationDataset dataset = load_classification_dataset(kDataDir + "quirks.csv");
  EXPECT_EQ(dataset.label_kind, LabelKind::classes);
  EXPECT_EQ(dataset.label_names, (std::vector<std::string>{"negative", "neutral", "positive"}));
  EXPECT_EQ(dataset.label_ids, (std::vector<int32_t>{2, 2, 0, 1}));
  EXPECT_EQ(dataset.num_labels(), 3);
  // A CSV column with one non-number is all strings (pandas' object column), sorted as text.
  ClassificationDataset mixed = csv_dataset("text,label\na,10\nb,pos\nc,9\n");
  EXPECT_EQ(mixed.label_names, (std::vector<std::string>{"10", "9", "pos"}));
  EXPECT_EQ(mixed.label_ids, (std::vector<int32_t>{0, 2, 1}));
  // JSON strings stay strings even when they look like numbers.
  ClassificationDataset quoted = jsonl_dataset("{\"text\": \"a\", \"label\": \"1\"}\n");
  EXPECT_EQ(quoted.label_names, (std::vector<std::string>{"1"}));
}

TEST(Labels, IntegersAreKeptAsIds) {
  ClassificationDataset dataset = csv_dataset("text,label\na,2\nb, 0\nc,+2\n");
  EXPECT_EQ(dataset.label_kind, LabelKind::classes);
  EXPECT_EQ(dataset.label_ids, (std::vector<int32_t>{2, 0, 2}));
  EXPECT_EQ(dataset.label_names, (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_EQ(error_message([] { csv_dataset("text,label\na,1\nb,-1\n"); }),
            "[data.csv:3] label -1 is negative: integer labels are class ids");
  EXPECT_EQ(error_message([] { csv_dataset("text,label\na,123456\n"); }),
            "[data.csv:2] label 123456 is too large for a class id (write regression targets as "
            "floats, e.g. 3.0)");
}

TEST(Labels, FloatsAreRegression) {
  ClassificationDataset dataset = csv_dataset("text,label\na,0.5\nb,1\nc,2.25e0\n");
  EXPECT_EQ(dataset.label_kind, LabelKind::regression);
  EXPECT_EQ(dataset.label_values, (std::vector<float>{0.5f, 1.0f, 2.25f}));
  EXPECT_EQ(dataset.num_labels(), 1);
  EXPECT_TRUE(dataset.label_names.empty());
  ClassificationDataset json = jsonl_dataset("{\"text\": \"a\", \"label\": 1}\n{\"text\": \"b\", \"label\": 3.5}\n");
  EXPECT_EQ(json.label_values, (std::vector<float>{1.0f, 3.5f}));
  EXPECT_EQ(error_message([] { csv_dataset("text,label\na,1.5\nb,nan\n"); }),
            "[data.csv:3] label nan is not a finite number");
}

TEST(Labels, BadLabelsAreErrors) {
  EXPECT_EQ(error_message([] { csv_dataset("text,label\na,1\nb,\n"); }),
            "[data.csv:3] empty label in column 'label'");
  EXPECT_EQ(error_message([] { jsonl_dataset("{\"text\": \"a\", \"label\": null}\n"); }),
            "[data.jsonl:1] empty label (null) in column 'label'");
  EXPECT_EQ(error_message([] {
              jsonl_dataset("{\"text\": \"a\", \"label\": \"pos\"}\n{\"text\": \"b\", \"label\": 1}\n");
            }),
            "[data.jsonl:2] label '1' is a number but the label on line 1 is a string");
  EXPECT_EQ(error_message([] { jsonl_dataset("{\"text\": \"a\", \"label\": true}\n"); }),
            "[data.jsonl:1] label of type boolean in column 'label' (expected a string or a number)");
  EXPECT_EQ(error_message([] { jsonl_dataset("{\"text\": 5, \"label\": 1}\n"); }),
            "[data.jsonl:1] column 'text' is integer, not a string");
}

TEST(Labels, GivenLabelSetIsUsedAndUnknownLabelsAreErrors) {
  ClassificationOptions options;
  options.label_names = {"positive", "negative"};  // a config's order, not sorted
  ClassificationDataset dataset = csv_dataset("text,label\na,negative\nb,positive\n", options);
  EXPECT_EQ(dataset.label_ids, (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(dataset.label_names, options.label_names);
  EXPECT_EQ(error_message([&] {
              classification_dataset(parse_csv("text,label\na,negative\nb,positive\nc,neutral\n", "val.csv", {}),
                                     options);
            }),
            "[val.csv:4] unknown label 'neutral' (labels: positive, negative)");
  EXPECT_EQ(error_message([&] { csv_dataset("text,label\na,2\n", options); }),
            "[data.csv:2] label 2 is out of range: there are 2 labels (positive, negative)");
  ClassificationDataset ids = csv_dataset("text,label\na,1\n", options);
  EXPECT_EQ(ids.label_ids, (std::vector<int32_t>{1}));
  EXPECT_EQ(ids.label_names, options.label_names);
  EXPECT_EQ(error_message([&] { csv_dataset("text,label\na,0.5\n", options); }),
            "[data.csv] labels are numbers (regression) but 2 class labels were given (positive, "
            "negative)");
}

TEST(Labels, PredictionFilesMayLackLabels) {
  ClassificationOptions options;
  options.require_labels = false;
  options.label_names = {"neg", "pos"};
  ClassificationDataset dataset = csv_dataset("text\nhello\n", options);
  EXPECT_EQ(dataset.label_kind, LabelKind::none);
  EXPECT_TRUE(dataset.label_column.empty());
  EXPECT_EQ(dataset.num_labels(), 2);
  EXPECT_EQ(error_message([] { csv_dataset("text\nhello\n"); }),
            "[data.csv] no column 'label' (columns: text); choose one with --label_column_name");
}

TEST(Labels, DefaultConfigNames) {
  EXPECT_TRUE(is_default_label_names(std::vector<std::string>{"LABEL_0", "LABEL_1"}));
  EXPECT_FALSE(is_default_label_names(std::vector<std::string>{"LABEL_1", "LABEL_0"}));
  EXPECT_FALSE(is_default_label_names(std::vector<std::string>{"negative", "positive"}));
}

// --- split and order -------------------------------------------------------------------------

ClassificationDataset numbered(size_t n) {
  std::string csv = "text,label\n";
  for (size_t i = 0; i < n; ++i) csv += "t" + std::to_string(i) + "," + std::to_string(i % 2) + "\n";
  return csv_dataset(csv);
}

TEST(Split, DeterministicDisjointAndInFileOrder) {
  ClassificationDataset dataset = numbered(101);
  auto [train, validation] = split_dataset(dataset, 0.1, 42);
  EXPECT_EQ(validation.size(), 11u);  // ceil(0.1 * 101), as HF's train_test_split
  EXPECT_EQ(train.size(), 90u);
  std::set<size_t> lines(train.lines.begin(), train.lines.end());
  for (size_t line : validation.lines) EXPECT_TRUE(lines.insert(line).second) << "line " << line;
  EXPECT_EQ(lines.size(), 101u);
  EXPECT_TRUE(std::is_sorted(train.lines.begin(), train.lines.end()));
  EXPECT_TRUE(std::is_sorted(validation.lines.begin(), validation.lines.end()));
  // Texts and labels travel with their lines.
  for (size_t i = 0; i < validation.size(); ++i) {
    size_t example = validation.lines[i] - 2;
    EXPECT_EQ(validation.texts[i], "t" + std::to_string(example));
    EXPECT_EQ(validation.label_ids[i], static_cast<int32_t>(example % 2));
  }
  EXPECT_EQ(validation.label_names, dataset.label_names);

  auto [train_again, validation_again] = split_dataset(dataset, 0.1, 42);
  EXPECT_EQ(validation_again.lines, validation.lines);
  EXPECT_EQ(train_again.lines, train.lines);
  auto [other_train, other_validation] = split_dataset(dataset, 0.1, 43);
  EXPECT_NE(other_validation.lines, validation.lines);
}

TEST(Split, FractionMustLeaveBothParts) {
  ClassificationDataset dataset = numbered(3);
  EXPECT_EQ(error_message([&] { split_dataset(dataset, 0.0, 1); }),
            "[data.csv] validation fraction 0 is not in (0, 1)");
  EXPECT_EQ(error_message([&] { split_dataset(dataset, 0.9, 1); }),
            "[data.csv] a validation fraction of 0.9 leaves no training examples out of 3");
}

TEST(Order, SamplerOrderIsAPermutationPerSeedAndEpoch) {
  std::vector<size_t> epoch0 = sampler_order(1000, 42, 0);
  std::vector<size_t> sorted = epoch0;
  std::sort(sorted.begin(), sorted.end());
  std::vector<size_t> identity(1000);
  std::iota(identity.begin(), identity.end(), size_t{0});
  EXPECT_EQ(sorted, identity);
  EXPECT_NE(epoch0, identity);
  EXPECT_EQ(sampler_order(1000, 42, 0), epoch0);
  EXPECT_NE(sampler_order(1000, 42, 1), epoch0);
  EXPECT_NE(sampler_order(1000, 43, 0), epoch0);
  // Sorting by Philox keys: the order depends only on random_bits_at, pinned here.
  EXPECT_EQ(sampler_order(8, 42, 0), (std::vector<size_t>{6, 0, 3, 1, 4, 5, 7, 2}));
  EXPECT_TRUE(sampler_order(0, 42, 0).empty());
}

// --- the UCI sentiment file ----------------------------------------------------------------

TEST(Uci, LoadsThreeThousandBalancedExamples) {
  ClassificationOptions options;
  options.table.header = false;
  options.table.column_names = {"label", "source", "text"};
  ClassificationDataset dataset =
      load_classification_dataset(std::string(KILN_SOURCE_DIR) + "/data/classification/uci-sentiment.tsv", options);
  ASSERT_EQ(dataset.size(), 3000u);
  EXPECT_EQ(dataset.text_column, "text");
  EXPECT_EQ(dataset.label_names, (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(std::count(dataset.label_ids.begin(), dataset.label_ids.end(), 0), 1500);
  EXPECT_EQ(std::count(dataset.label_ids.begin(), dataset.label_ids.end(), 1), 1500);
  EXPECT_EQ(dataset.texts[0], "So there is no way for me to plug it in here in the US unless I go by a converter.");
  EXPECT_EQ(dataset.label_ids[0], 0);
  EXPECT_EQ(dataset.lines.back(), 3000u);
  // An unclosed opening quote stays part of its sentence (TSV has no quoting).
  auto quoted = std::find(dataset.texts.begin(), dataset.texts.end(), "\"You'll love it!");
  EXPECT_NE(quoted, dataset.texts.end());
}

}  // namespace
}  // namespace kiln
