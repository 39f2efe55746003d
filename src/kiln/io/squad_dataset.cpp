// SQuAD JSON: nested (official) and flat (Hugging Face datasets) records, with checked fields.
#include "kiln/io/squad_dataset.h"

#include <unordered_map>

#include <nlohmann/json.hpp>

#include "kiln/io/json_util.h"
#include "kiln/io/mapped_file.h"
#include "kiln/io/tokenizer_unicode.h"
#include "kiln/ir/error.h"

namespace kiln {
namespace {

using Json = nlohmann::json;

// Where a record sits, for messages: the file and a path or a line; the id once known.
struct Place {
  const std::string& source;
  std::string path;  // "data[2].paragraphs[0].qas[4]" or "line 17"
  std::string id;

  std::string where() const {
    if (!id.empty()) return source + " question '" + id + "'";
    return path.empty() ? source : source + " " + path;
  }
};

const Json& field(const Json& object, const char* name, const Place& place) {
  check(object.is_object(), place.where(), "expected a JSON object, got ", object.type_name());
  auto found = object.find(name);
  check(found != object.end(), place.where(), "no \"", name, "\"");
  return *found;
}

std::string string_field(const Json& object, const char* name, const Place& place) {
  const Json& value = field(object, name, place);
  check(value.is_string(), place.where(), "\"", name, "\" is ", value.type_name(),
        ", not a string");
  return value.get<std::string>();
}

const Json& array_field(const Json& object, const char* name, const Place& place) {
  const Json& value = field(object, name, place);
  check(value.is_array(), place.where(), "\"", name, "\" is ", value.type_name(),
        ", not an array");
  return value;
}

size_t start_value(const Json& value, const Place& place) {
  check(value.is_number_integer() && value.get<int64_t>() >= 0, place.where(),
        "answer_start ", value.dump(), " is not a non-negative integer");
  return value.get<size_t>();
}

// An answer that runs past the context would give no token span; SQuAD's answers all fit.
void check_answers(const SquadExample& example, const Place& place) {
  const size_t characters = utf8_decode(example.context, place.where()).size();
  for (const SquadAnswer& answer : example.answers) {
    const size_t length = utf8_decode(answer.text, place.where()).size();
    check(answer.answer_start + length <= characters, place.where(), "the answer \"",
          answer.text, "\" at ", answer.answer_start, " runs past the end of the context (",
          characters, " characters)");
  }
}

SquadExample flat_record(const Json& record, Place place) {
  place.id = string_field(record, "id", place);
  check(!place.id.empty(), place.where(), "empty \"id\"");
  SquadExample example;
  example.id = place.id;
  if (record.is_object() && record.contains("title") && record["title"].is_string()) {
    example.title = record["title"].get<std::string>();
  }
  example.context = string_field(record, "context", place);
  example.question = string_field(record, "question", place);
  const Json& answers = field(record, "answers", place);
  check(answers.is_object(), place.where(), "\"answers\" is ", answers.type_name(),
        ", not an object of \"text\" and \"answer_start\" lists");
  const Json& texts = array_field(answers, "text", place);
  const Json& starts = array_field(answers, "answer_start", place);
  check(texts.size() == starts.size(), place.where(), "answers has ", texts.size(),
        " texts but ", starts.size(), " answer_start values");
  for (size_t i = 0; i < texts.size(); ++i) {
    check(texts[i].is_string(), place.where(), "answers.text[", i, "] is not a string");
    example.answers.push_back({texts[i].get<std::string>(), start_value(starts[i], place)});
  }
  example.where = place.where();
  check_answers(example, place);
  return example;
}

void nested_article(const Json& article, const Place& article_place,
                    std::vector<SquadExample>& out) {
  std::string title;
  if (article.is_object() && article.contains("title") && article["title"].is_string()) {
    title = article["title"].get<std::string>();
  }
  const Json& paragraphs = array_field(article, "paragraphs", article_place);
  for (size_t p = 0; p < paragraphs.size(); ++p) {
    Place paragraph_place{article_place.source,
                          article_place.path + ".paragraphs[" + std::to_string(p) + "]", ""};
    std::string context = string_field(paragraphs[p], "context", paragraph_place);
    const Json& qas = array_field(paragraphs[p], "qas", paragraph_place);
    for (size_t q = 0; q < qas.size(); ++q) {
      Place place{article_place.source, paragraph_place.path + ".qas[" + std::to_string(q) + "]",
                  ""};
      place.id = string_field(qas[q], "id", place);
      check(!place.id.empty(), place.where(), "empty \"id\"");
      SquadExample example;
      example.id = place.id;
      example.title = title;
      example.context = context;
      example.question = string_field(qas[q], "question", place);
      const Json& answers = array_field(qas[q], "answers", place);
      for (const Json& answer : answers) {
        example.answers.push_back({string_field(answer, "text", place),
                                   start_value(field(answer, "answer_start", place), place)});
      }
      example.where = place.where();
      check_answers(example, place);
      out.push_back(std::move(example));
    }
  }
}

void check_unique_ids(const SquadDataset& dataset) {
  std::unordered_map<std::string_view, size_t> seen;
  for (size_t i = 0; i < dataset.examples.size(); ++i) {
    auto [it, added] = seen.emplace(dataset.examples[i].id, i);
    check(added, dataset.examples[i].where, "the id is used twice (also by question ",
          it->second + 1, " of the file)");
  }
}

}  // namespace

bool SquadDataset::has_unanswerable() const {
  for (const SquadExample& example : examples) {
    if (example.answers.empty()) return true;
  }
  return false;
}

SquadDataset parse_squad(std::string_view text, std::string source, bool jsonl) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  SquadDataset dataset;
  dataset.source = std::move(source);
  const std::string& file = dataset.source;
  if (jsonl) {
    size_t line = 0;
    for (size_t start = 0; start < text.size();) {
      size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      std::string_view content = text.substr(start, end - start);
      start = end + 1;
      ++line;
      if (content.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      std::string where = file + ":" + std::to_string(line);
      Place place{where, "", ""};
      dataset.examples.push_back(flat_record(json_parse(content, where), place));
    }
  } else {
    Json document = json_parse(text, file);
    Place top{file, "", ""};
    check(document.is_object(), file, "expected a JSON object with \"data\", got ",
          document.type_name());
    const Json& data = array_field(document, "data", top);
    if (auto version = document.find("version"); version != document.end()) {
      dataset.version = version->is_string() ? version->get<std::string>() : version->dump();
    }
    for (size_t i = 0; i < data.size(); ++i) {
      Place place{file, "data[" + std::to_string(i) + "]", ""};
      if (data[i].is_object() && data[i].contains("paragraphs")) {
        nested_article(data[i], place, dataset.examples);
      } else {
        dataset.examples.push_back(flat_record(data[i], place));
      }
    }
  }
  check_unique_ids(dataset);
  return dataset;
}

SquadDataset load_squad(const std::string& path) {
  MappedFile file(path);
  std::span<const std::byte> bytes = file.bytes();
  std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  SquadDataset dataset = parse_squad(text, path, path.ends_with(".jsonl"));
  check(dataset.size() > 0, path, "no questions in the file");
  return dataset;
}

SquadDataset squad_head(const SquadDataset& dataset, size_t count) {
  SquadDataset out;
  out.source = dataset.source;
  out.version = dataset.version;
  const size_t kept = count == 0 ? dataset.size() : std::min(count, dataset.size());
  out.examples.assign(dataset.examples.begin(),
                      dataset.examples.begin() + static_cast<std::ptrdiff_t>(kept));
  return out;
}

}  // namespace kiln
