"""Writes tests/data/malformed/: hostile and broken files of every kind a user hands to `kiln`,
and MANIFEST.tsv, which says for each how the test feeds it to `kiln train` and a part of the
error it must give (cli_malformed_inputs_test.cpp). Plain Python, no packages.

MANIFEST.tsv columns: file, kind, expected. Kinds (the test builds the rest of the run):
  train       --train_file FILE, a good model
  validation  --validation_file FILE --do_eval, a good train file (labels neg/pos)
  config      --config_name FILE, a good vocabulary and train file
  vocab       --tokenizer_name FILE (a vocab.txt), --config_name tiny
  tokenizer   --tokenizer_name FILE (a tokenizer.json), --config_name tiny
  weights     FILE as model.safetensors of a model folder with a good config.json and vocab.txt
  model_config FILE as config.json of a model folder with good (tiny, hidden 8) weights
In `expected`, {file} stands for the path kiln was given (for weights and model_config, the
file inside the model folder) and {weights} for that folder's model.safetensors.

Usage: python3 tests/fixtures_gen/make_malformed_inputs.py
"""
import json
import os
import struct

OUT = os.path.join(os.path.dirname(__file__), "..", "data", "malformed")
CASES = []


def case(name, kind, expected, content):
    if isinstance(content, str):
        content = content.encode("utf-8")
    CASES.append((name, kind, expected, content))


def nested(depth):
    return "[" * depth + "]" * depth


# ---- CSV / TSV / JSONL training data ----
GOOD_ROWS = "good movie,pos\nbad food,neg\n"
case("ragged_row_short.csv", "train", "{file}:3] row has 1 field, header has 2",
     "text,label\ngood movie,pos\nbad food\nfine,neg\n")
case("ragged_row_long.csv", "train", "{file}:4]",
     "text,label\ngood movie,pos\nbad food,neg\nfine,neg,extra\n")
case("ragged_row.tsv", "train", "{file}:3]", "text\tlabel\ngood movie\tpos\nbad food\n")
case("unterminated_quote.csv", "train", "{file}:3]", 'text,label\ngood,pos\n"bad food,neg\nok,pos\n')
case("embedded_nul.csv", "train", "{file}:3] NUL byte",
     b"text,label\ngood movie,pos\nbad\x00food,neg\n")
case("non_utf8.csv", "train", "{file}:2] invalid UTF-8",
     b"text,label\ngood \xff\xfe movie,pos\nbad food,neg\n")
case("non_utf8_overlong.tsv", "train", "{file}:3] invalid UTF-8",
     b"text\tlabel\ngood\tpos\nbad \xc0\xaf food\tneg\n")
case("truncated_utf8.csv", "train", "{file}:3] invalid UTF-8",
     b"text,label\ngood,pos\nbad \xe6\x97,neg\n")
case("bom_then_ragged.csv", "train", "{file}:3]",
     "\ufefftext,label\ngood movie,pos\nbad food\n")
case("bom_header_column.csv", "train", "no column 'label' (columns: text, lable, other)",
     "\ufefftext,lable,other\ngood movie,pos,x\nbad food,neg,y\n")
case("crlf_ragged.csv", "train", "{file}:4]",
     "text,label\r\ngood movie,pos\r\nbad food,neg\r\nfine\r\n")
case("crlf_ragged.tsv", "train", "{file}:3]", "text\tlabel\r\ngood\tpos\r\nbad\r\n")
case("empty.csv", "train", "{file}", "")
case("header_only.csv", "train", "no examples", "text,label\n")
case("duplicate_column.csv", "train", "{file}:1]", "text,text,label\na,b,pos\n")
case("empty_label.csv", "train", "{file}:3] empty label", "text,label\ngood,pos\nbad,\n")
case("no_text_column.csv", "train", "no column 'text'", "a,b,label\nx,y,pos\n")
case("nan_regression_label.csv", "train", "{file}:3]", "text,label\ngood,0.5\nbad,nan\n")
case("unknown_extension.txt", "train", "unknown data file extension", GOOD_ROWS)
case("mixed_label_types.jsonl", "train", "{file}:2]",
     '{"text": "good", "label": "pos"}\n{"text": "bad", "label": 1}\n')
case("not_an_object.jsonl", "train", "{file}:2] expected a JSON object",
     '{"text": "good", "label": 1}\n[1, 2]\n')
case("bad_json_line.jsonl", "train", "{file}:3]",
     '{"text": "good", "label": 1}\n{"text": "bad", "label": 0}\n{"text": "x", "label": }\n')
case("deeply_nested.jsonl", "train", "{file}:2] invalid JSON: nested deeper than 512",
     '{"text": "good", "label": 1}\n{"text": ' + nested(50000) + ', "label": 0}\n')
case("label_object.jsonl", "train", "{file}:1] label of type",
     '{"text": "good", "label": {"a": 1}}\n')
case("negative_label.jsonl", "train", "{file}:2] label -1 is negative",
     '{"text": "good", "label": 1}\n{"text": "bad", "label": -1}\n')
case("huge_label.jsonl", "train", "{file}:2] label 1000000000000",
     '{"text": "good", "label": 1}\n{"text": "bad", "label": 1000000000000}\n')
case("text_not_string.jsonl", "train", "{file}:1]", '{"text": 123, "label": 1}\n')
case("embedded_nul.jsonl", "train", "{file}:2] NUL byte",
     b'{"text": "good", "label": 1}\n{"text": "b\x00d", "label": 0}\n')
case("bom_crlf_bad_line.jsonl", "train", "{file}:3]",
     '\ufeff{"text": "good", "label": 1}\r\n{"text": "bad", "label": 0}\r\n{oops}\r\n')

# ---- validation data against the training labels (neg, pos) ----
case("unknown_label.csv", "validation", "{file}:3] unknown label 'neutral'",
     "text,label\ngood,pos\nmeh,neutral\n")
case("label_id_out_of_range.csv", "validation", "{file}:3] label 5 is out of range",
     "text,label\ngood,1\nbad,5\n")

# ---- config.json ----
GOOD_CONFIG = {
    "model_type": "bert", "vocab_size": 30, "hidden_size": 8, "num_hidden_layers": 1,
    "num_attention_heads": 2, "intermediate_size": 16, "max_position_embeddings": 32,
    "id2label": {"0": "neg", "1": "pos"},
}


def config(**changes):
    value = dict(GOOD_CONFIG)
    value.update(changes)
    return json.dumps(value, indent=2)


case("config_truncated.json", "config", "{file}] invalid JSON", config()[:60])
case("config_deeply_nested.json", "config", "{file}] invalid JSON: nested deeper than",
     '{"vocab_size": 30, "extra": ' + nested(50000) + "}")
case("config_deeply_nested_objects.json", "config", "nested deeper than",
     '{"a": ' + '{"a": ' * 25000 + "1" + "}" * 25001)
case("config_wrong_type.json", "config", "{file}] \"hidden_size\" must be an integer",
     config(hidden_size="eight"))
case("config_heads_mismatch.json", "config", "{file}] hidden_size 8 is not a multiple",
     config(num_attention_heads=3))
case("config_negative_layers.json", "config", "\"num_hidden_layers\" must be positive",
     config(num_hidden_layers=-1))
case("config_id2label_gap.json", "config", "\"id2label\" has no class 1",
     config(id2label={"0": "neg", "2": "pos"}))
case("config_not_object.json", "config", "{file}] config is a JSON array", "[1, 2]")
case("config_huge_sizes.json", "config", "parameters",
     config(hidden_size=2**40, num_attention_heads=1, intermediate_size=2**40))
case("config_overflowing_sizes.json", "config", "\"vocab_size\"",
     config(vocab_size=2**62, hidden_size=2**62, num_attention_heads=1))
case("config_non_utf8.json", "config", "{file}] invalid JSON",
     config().replace('"bert"', '"be\udcffrt"').encode("utf-8", "surrogateescape"))
case("config_bom_wrong_type.json", "config", "\"vocab_size\" must be an integer",
     "\ufeff" + config(vocab_size=[30]))
case("config_embedded_nul.json", "config", "{file}] invalid JSON",
     config().replace('"bert"', '"be\x00rt"'))
case("config_unknown_activation.json", "config", "\"hidden_act\" \"swish\"",
     config(hidden_act="swish"))
case("config_max_position_too_small.json", "config",
     "{file}] \"max_position_embeddings\" 8 is shorter than --max_seq_length 16",
     config(max_position_embeddings=8))

# ---- vocab.txt and tokenizer.json ----
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = ["good", "bad", "movie", "food"]
case("vocab_no_unk.txt", "vocab", "[UNK]", "\n".join(["[PAD]", "[CLS]", "[SEP]"] + WORDS) + "\n")
case("vocab_non_utf8.txt", "vocab", "{file}:7] invalid UTF-8",
     ("\n".join(SPECIALS + ["good"]) + "\n").encode() + b"b\xffd\n")
case("vocab_embedded_nul.txt", "vocab", "{file}:6] NUL byte",
     ("\n".join(SPECIALS) + "\n").encode() + b"go\x00od\n")
case("vocab_empty.txt", "vocab", "{file}", "")
case("tokenizer_truncated.json", "tokenizer", "{file}] invalid JSON",
     '{"model": {"type": "WordPiece", "vocab": {"[PAD]": 0, "[UNK]"')
case("tokenizer_deeply_nested.json", "tokenizer", "nested deeper than",
     '{"model": ' + nested(50000) + "}")
case("tokenizer_bpe_model.json", "tokenizer", "{file}",
     json.dumps({"model": {"type": "BPE", "vocab": {"[UNK]": 0}, "merges": []}}))
case("tokenizer_vocab_ids_out_of_range.json", "tokenizer", "{file}",
     json.dumps({"model": {"type": "WordPiece", "unk_token": "[UNK]",
                           "vocab": {"[PAD]": 0, "[UNK]": 7}}}))


# ---- model.safetensors ----
def safetensors(header, data=b"", header_size=None):
    text = json.dumps(header).encode() if isinstance(header, dict) else header
    size = len(text) if header_size is None else header_size
    return struct.pack("<Q", size) + text + data


F32_2 = {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}
case("st_empty.safetensors", "weights", "{file}] file is 0 bytes", b"")
case("st_truncated_length.safetensors", "weights", "{file}] file is 4 bytes", b"\x10\x00\x00\x00")
case("st_absurd_header_length.safetensors", "weights", "{file}] header length 1152921504606846976 is absurd",
     safetensors({"a": F32_2}, b"\0" * 8, header_size=2**60))
case("st_header_past_end.safetensors", "weights", "runs past the end of the file",
     safetensors({"a": F32_2}, b"", header_size=5000))
case("st_truncated_data.safetensors", "weights", "{file}] tensor 'b': data_offsets [8, 16] run past",
     safetensors({"a": F32_2, "b": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}},
                 b"\0" * 12))
case("st_overlapping_offsets.safetensors", "weights", "overlap tensor 'a'",
     safetensors({"a": F32_2, "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}},
                 b"\0" * 12))
case("st_out_of_range_offsets.safetensors", "weights", "tensor 'a': data_offsets [1000000, 1000008]",
     safetensors({"a": {"dtype": "F32", "shape": [2], "data_offsets": [1000000, 1000008]}}, b"\0" * 8))
case("st_offset_overflow.safetensors", "weights", "tensor 'a'",
     safetensors({"a": {"dtype": "F32", "shape": [2],
                        "data_offsets": [18446744073709551615, 7]}}, b"\0" * 8))
case("st_unknown_dtype.safetensors", "weights", "tensor 'a': unknown dtype 'F33'",
     safetensors({"a": {"dtype": "F33", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 8))
case("st_shape_too_big.safetensors", "weights", "tensor 'a': shape",
     safetensors({"a": {"dtype": "F32", "shape": [2**40, 2**40], "data_offsets": [0, 8]}},
                 b"\0" * 8))
case("st_gap.safetensors", "weights", "belong to no tensor",
     safetensors({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, b"\0" * 8))
case("st_duplicate_name.safetensors", "weights", "tensor 'a': the header lists it twice",
     safetensors(b'{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, '
                 b'"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}', b"\0" * 8))
case("st_header_not_json.safetensors", "weights", "{file}] invalid JSON",
     safetensors(b"not json at all", b""))
case("st_header_nul.safetensors", "weights", "is NUL",
     safetensors(b'{"a": {"dtype": "F32"\x00}}', b""))
case("st_deeply_nested.safetensors", "weights", "nested deeper than",
     safetensors(('{"a": ' + nested(50000) + "}").encode(), b""))
case("st_float_offsets.safetensors", "weights", "is not two non-negative integers",
     safetensors({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0.0, 8.0]}}, b"\0" * 8))

# ---- config.json and weights that disagree (the weights are the tiny model's, hidden 8) ----
case("mc_hidden_size.json", "model_config", "{weights}] tensor 'bert.embeddings",
     config(hidden_size=16))
case("mc_vocab_size.json", "model_config",
     "{weights}] tensor 'bert.embeddings.word_embeddings.weight': shape", config(vocab_size=40))
case("mc_max_position.json", "model_config",
     "{weights}] tensor 'bert.embeddings.position_embeddings.weight': shape",
     config(max_position_embeddings=64))


def main():
    os.makedirs(OUT, exist_ok=True)
    for name in os.listdir(OUT):
        os.remove(os.path.join(OUT, name))
    with open(os.path.join(OUT, "MANIFEST.tsv"), "w") as manifest:
        manifest.write("# file\tkind\texpected (see tests/fixtures_gen/make_malformed_inputs.py)\n")
        for name, kind, expected, content in CASES:
            with open(os.path.join(OUT, name), "wb") as out:
                out.write(content)
            manifest.write(f"{name}\t{kind}\t{expected}\n")
    print(f"{len(CASES)} files in {os.path.normpath(OUT)}")


if __name__ == "__main__":
    main()
