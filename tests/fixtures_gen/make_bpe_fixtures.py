#!/usr/bin/env python3
"""Trains small byte-level BPE tokenizers with `tokenizers` and records what they compute, for
tests/tokenizer_bpe_parity_test.cpp.

Real GPT-2 / RoBERTa vocabularies cannot be downloaded here, so each tokenizer is trained on
data/lm/persuasion.txt and given the pipeline of the real tokenizer.json:
  gpt2/     GPT-2's: ByteLevel pre-tokenizer (no prefix space), ByteLevel post-processor
            (trim_offsets false), ByteLevel decoder, <|endoftext|> (normalized, as GPT-2 has it);
            written in the older form of gpt2's file (merges as "a b", no "use_regex", no model
            "type"), plus tokenizer_config.json as GPT-2's; and a non-special added token.
  roberta/  RoBERTa's: <s> <pad> </s> <unk> first, <mask> last (lstrip), RobertaProcessing
            (trim_offsets, no prefix space), merges as ["a", "b"]; tokenizer_config.json as
            roberta-base's; and a single_word added token "Anne".
  options/  what the others leave out: continuing_subword_prefix "##", end_of_word_suffix
            "</w>", an unk token with fuse_unk and a small alphabet, add_prefix_space, the
            ByteLevel post-processor with trim_offsets, an rstrip added token.
  plain/    use_regex false, ignore_merges, no decoder (tokens joined by spaces), no
            post-processor.
and writes cases.jsonl: for each tokenizer ("roberta_prefix" is roberta/ with tokenizer_config's
add_prefix_space true, as RobertaTokenizerFast applies it), adversarial texts, pairs with
truncation, padding and overflowing windows (every output in full, as make_tokenizer_fixtures.py
writes them, or the error), and for 300 Austen lines (data/lm/austen.txt) and 300 UCI sentences,
a hash of each line's ids and offsets (GPT-2's and RoBERTa's decode every line to itself).

Also checks that transformers' AutoTokenizer loads gpt2/ and roberta/ to the same ids and offsets.
`--check-kiln-save DIR` instead checks folders Kiln saved (DIR/gpt2, DIR/roberta, ... as
tokenizer_bpe_test's SaveAndLoadRoundTrip leaves them): `tokenizers` and AutoTokenizer load each
to the ids and offsets of the committed folder of the same name.
Needs `pip install tokenizers transformers`; CI only reads the committed output.
"""
import json
import os
import pathlib
import sys

import tokenizers
import transformers
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors, trainers

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from make_tokenizer_fixtures import (  # noqa: E402  the WordPiece fixtures' texts and cases
    ADVERSARIAL_TEXTS, BATCH, BATCH_CASES, PAIRS, SINGLE_CASES, TRUNCATION_CASES, fnv1a64,
    row_text)

os.environ["RUST_BACKTRACE"] = "0"

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "tests/fixtures/tokenizer_bpe"
TRAIN = ROOT / "data/lm/persuasion.txt"
AUSTEN = ROOT / "data/lm/austen.txt"
UCI = ROOT / "data/classification/uci-sentiment.tsv"
CORPUS_LINES = 300

BPE_TEXTS = [
    # contractions: only lowercase 's 't 're 've 'm 'll 'd are pieces of their own
    "It's what they're saying: we've, I'm, you'll, he'd, don't", "IT'S THEY'RE I'M",
    "''s 's' x's'", "'", "rock 'n' roll", "’s (curly) 's", "o'clock", "'ll've'd",
    # digits and numbers
    "1234567890", "3.14159 and 2,718", "year 1814, chapter XII, ½ ² ³ ⅔", "٣٤ ४५ ๕๖", "7th 21st",
    # spaces, newlines, tabs
    "a  b   c    d", "  two leading", "trailing two  ", "\n", "\n\n\nthree newlines\n\n\n",
    "tab\there\t\ttwo tabs", " \t \n mixed \r\n", "\u3000ideographic space\u3000x", "x \u00a0 y",
    "word\u2028line separator", "   ", " ", "",
    # emoji, ZWJ sequences, skin tones, flags, variation selectors
    "👩🏽‍💻 coder", "🏳️‍🌈 flag", "🧑‍🤝‍🧑", "❤️‍🔥 heart on fire", "a😀b😀c", "👍🏿👍🏻",
    # combining marks
    "e\u0301\u0301 a\u0308\u0304", "Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǧ̗͚̚o̙̔ͮ̇͐̇", "\u0301\u0302 marks first", "क्षि",
    # control characters
    "\x00\x01\x1f\x7f", "a\x08b\x0bc\x0cd", "\u200b\u200c\u200d\ufeff", "\u0085next line",
    # long words
    "x" * 300, "ab" * 200, "Honorificabilitudinitatibus" * 8, "é" * 150, "🙂" * 50,
    # mixed scripts
    "Anne Elliot 安妮 Энн אנה", "naïve café Ωmega 東京 Москва", "abcабвαβγ", "ＡＢＣ１２３",
    # the added tokens typed in texts
    "end<|endoftext|>start <|endoftext|> x", "<|endoftext|><|endoftext|>", "a <s> b </s>c",
    "Hello <mask>!", "<mask><mask> x<mask>", "Anne said AnneElliot Anne's, Anne", "ñandú x",
    "ñandú   y ñandúz", "<|sep|>", "one <|sep|> two", "<pad><unk>",
]

TEXTS = ADVERSARIAL_TEXTS + BPE_TEXTS
# The WordPiece cases' pairs plus some that need the BPE pipeline's care.
BPE_PAIRS = PAIRS + [("It's  here", "  there's"), ("Anne <mask>", "😀 x"),
                     ("one two three four", "a\tb  c\n\nd e f g h i j k l")]


def austen_lines():
    """(line index, line): CORPUS_LINES of the non-blank lines of austen.txt, evenly spread."""
    lines = AUSTEN.read_text(encoding="utf-8").split("\n")
    kept = [i for i, line in enumerate(lines) if line.strip()]
    return [(i, lines[i]) for i in kept[::len(kept) // CORPUS_LINES][:CORPUS_LINES]]


def uci_lines():
    """(row, sentence) of the first CORPUS_LINES rows of uci-sentiment.tsv."""
    with open(UCI, encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t", 2)[2] for line in f]
    return list(enumerate(rows[:CORPUS_LINES]))


def training_lines():
    return TRAIN.read_text(encoding="utf-8").split("\n")


def train_byte_level(vocab_size, special_tokens, **model_kwargs):
    tok = Tokenizer(models.BPE(**model_kwargs))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=special_tokens,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(training_lines(), trainer)
    return tok


def make_gpt2():
    tok = train_byte_level(700, ["<|endoftext|>"])
    # GPT-2 has <|endoftext|> last; here it is where training put it, normalized as in gpt2's file.
    eot = tok.token_to_id("<|endoftext|>")
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True)
    tok.post_processor = processors.ByteLevel(add_prefix_space=True, trim_offsets=False)
    tok.decoder = decoders.ByteLevel(add_prefix_space=True, trim_offsets=True)
    tok.add_tokens([AddedToken("<|sep|>", normalized=False, special=False)])
    data = json.loads(tok.to_str())
    data["added_tokens"][0]["normalized"] = True
    assert data["added_tokens"][0]["id"] == eot
    # gpt2's tokenizer.json as the Hub has it: older keys and merges as strings.
    for part in ("pre_tokenizer", "post_processor", "decoder"):
        del data[part]["use_regex"]
    model = data["model"]
    del model["type"], model["byte_fallback"], model["ignore_merges"]
    model["continuing_subword_prefix"] = ""
    model["end_of_word_suffix"] = ""
    model["merges"] = [f"{a} {b}" for a, b in model["merges"]]
    config = {
        "add_bos_token": False, "add_prefix_space": False, "bos_token": "<|endoftext|>",
        "clean_up_tokenization_spaces": False, "eos_token": "<|endoftext|>", "errors": "replace",
        "model_max_length": 1024, "pad_token": None, "tokenizer_class": "GPT2Tokenizer",
        "unk_token": "<|endoftext|>",
    }
    return data, config


def make_roberta():
    tok = train_byte_level(800, ["<s>", "<pad>", "</s>", "<unk>"])
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True)
    tok.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0), trim_offsets=True,
                                                      add_prefix_space=False)
    tok.decoder = decoders.ByteLevel(add_prefix_space=True, trim_offsets=True)
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True, normalized=False)])
    tok.add_tokens([AddedToken("Anne", single_word=True, normalized=False, special=False)])
    config = {
        "add_prefix_space": False, "bos_token": "<s>", "clean_up_tokenization_spaces": False,
        "cls_token": "<s>", "eos_token": "</s>", "errors": "replace",
        "mask_token": {"__type": "AddedToken", "content": "<mask>", "lstrip": True,
                       "normalized": False, "rstrip": False, "single_word": False},
        "model_max_length": 512, "pad_token": "<pad>", "sep_token": "</s>",
        "tokenizer_class": "RobertaTokenizer", "trim_offsets": True, "unk_token": "<unk>",
    }
    return json.loads(tok.to_str()), config


def make_options():
    tok = Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=True, continuing_subword_prefix="##",
                               end_of_word_suffix="</w>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    trainer = trainers.BpeTrainer(vocab_size=500, special_tokens=["<unk>"], limit_alphabet=70,
                                  continuing_subword_prefix="##", end_of_word_suffix="</w>",
                                  show_progress=False)
    tok.train_from_iterator(training_lines(), trainer)
    tok.post_processor = processors.ByteLevel(add_prefix_space=False, trim_offsets=True)
    tok.decoder = decoders.ByteLevel()
    tok.add_tokens([AddedToken("ñandú", rstrip=True, normalized=False)])
    return json.loads(tok.to_str())


def make_plain():
    tok = Tokenizer(models.BPE(ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    trainer = trainers.BpeTrainer(vocab_size=400, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator([w for line in training_lines() for w in line.split()], trainer)
    return json.loads(tok.to_str())


def write_folder(name, data, config=None):
    folder = OUT / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tokenizer.json").write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n",
                                          encoding="utf-8")
    if config is not None:
        (folder / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n")
    return Tokenizer.from_file(str(folder / "tokenizer.json"))


def configured(tok, options, pad_token):
    """`tok` with a transformers call's truncation and padding, as `tokenizers` settings."""
    tok.no_truncation()
    tok.no_padding()
    strategy = options.get("truncation", "do_not_truncate")
    if strategy != "do_not_truncate":
        tok.enable_truncation(options["max_length"], stride=options.get("stride", 0),
                              strategy=strategy,
                              direction=options.get("truncation_side", "right"))
    padding = options.get("padding")
    if padding:
        tok.enable_padding(direction=options.get("padding_side", "right"),
                           pad_id=tok.token_to_id(pad_token), pad_token=pad_token,
                           length=options["max_length"] if padding == "max_length" else None,
                           pad_to_multiple_of=options.get("pad_to_multiple_of"))
    return tok


def record(tok, texts, pairs, options, pad_token):
    """Every row (encodings and overflowing windows) with their batch index, or the error."""
    inputs = list(zip(texts, pairs)) if pairs else texts
    try:
        batch = configured(tok, options, pad_token).encode_batch(
            inputs, add_special_tokens=options.get("add_special_tokens", True))
    except BaseException as error:  # Rust panics surface as pyo3 PanicException
        return {"error": str(error).splitlines()[0]}
    rows, sample = [], []
    for i, e in enumerate(batch):
        for r in [e] + e.overflowing:
            rows.append(row_text(r.ids, r.type_ids, r.attention_mask, r.special_tokens_mask,
                                 r.offsets, r.word_ids, r.sequence_ids))
            sample.append(i)
    return {"rows": rows, "sample": sample, "decoded": tok.decode(batch[0].ids)}


def cases_for(name, tok, pad_token, texts, truncation_cases, single_cases, batch_cases):
    cases = []
    for text in texts:
        case = {"tokenizer": name, "texts": [text], "options": {}}
        case.update(record(tok, [text], None, {}, pad_token))
        case["decoded_all"] = tok.decode(tok.encode(text).ids, skip_special_tokens=False)
        cases.append(case)
    for options in truncation_cases:
        for text, pair in BPE_PAIRS:
            case = {"tokenizer": name, "texts": [text], "pairs": [pair], "options": options}
            case.update(record(tok, [text], [pair], options, pad_token))
            cases.append(case)
    for options in single_cases:
        for text in TEXTS[::25] + [p[0] for p in BPE_PAIRS]:
            case = {"tokenizer": name, "texts": [text], "options": options}
            case.update(record(tok, [text], None, options, pad_token))
            cases.append(case)
    for options in batch_cases:
        for pairs in (None, list(reversed(BATCH))):
            case = {"tokenizer": name, "texts": BATCH, "options": options}
            if pairs:
                case["pairs"] = pairs
            case.update(record(tok, BATCH, pairs, options, pad_token))
            cases.append(case)
    return cases


def corpus_cases(name, tok, lossless):
    """Per corpus, per line: fnv1a64 of its ids then offsets. A lossless tokenizer (GPT-2's and
    RoBERTa's pipelines) decodes every line back to itself; the test checks that too."""
    configured(tok, {}, None)
    out = []
    for corpus, numbered in (("austen", austen_lines()), ("uci", uci_lines())):
        lines = [line for _, line in numbered]
        hashes = []
        for line, e in zip(lines, tok.encode_batch(lines)):
            hashes.append(f"{fnv1a64(list(e.ids) + [x for o in e.offsets for x in o]):016x}")
            assert not lossless or tok.decode(e.ids) == line, (name, line)
        out.append({"tokenizer": name, "corpus": corpus, "lines": [i for i, _ in numbered],
                    "lossless": lossless, "hashes": hashes})
    return out


def check_transformers(folder, tok, texts):
    """AutoTokenizer on the folder gives the ids and offsets `tokenizers` gives."""
    hf = transformers.AutoTokenizer.from_pretrained(str(folder))
    configured(tok, {}, None)
    differ = 0
    for text in texts:
        e = tok.encode(text)
        got = hf(text, return_offsets_mapping=True)
        if got["input_ids"] != e.ids or [tuple(o) for o in got["offset_mapping"]] != e.offsets:
            differ += 1
    assert differ == 0, f"{folder.name}: {type(hf).__name__} differs on {differ} texts"
    return type(hf).__name__


def check_kiln_save(root):
    texts = TEXTS + [t for _, t in austen_lines()[:50]]
    for name in ("gpt2", "roberta", "options", "plain"):
        folder = pathlib.Path(root) / name
        original = Tokenizer.from_file(str(OUT / name / "tokenizer.json"))
        saved = Tokenizer.from_file(str(folder / "tokenizer.json"))
        for text in texts:
            a, b = original.encode(text), saved.encode(text)
            assert (a.ids, a.offsets) == (b.ids, b.offsets), (name, text)
            assert original.decode(a.ids) == saved.decode(b.ids), (name, text)
        print(f"{name}: tokenizers loads Kiln's folder to the same ids, offsets and decodings")
        if name in ("gpt2", "roberta"):
            print(f"{name}: transformers loads it as {check_transformers(folder, original, texts)}")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--check-kiln-save":
        check_kiln_save(sys.argv[2])
        return
    gpt2_json, gpt2_config = make_gpt2()
    roberta_json, roberta_config = make_roberta()
    gpt2 = write_folder("gpt2", gpt2_json, gpt2_config)
    roberta = write_folder("roberta", roberta_json, roberta_config)
    options = write_folder("options", make_options())
    plain = write_folder("plain", make_plain())
    # RobertaTokenizerFast with add_prefix_space=True sets it on both ByteLevel parts.
    prefixed = Tokenizer.from_str(roberta.to_str())
    prefixed.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True, trim_offsets=True)
    prefixed.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0),
                                                           trim_offsets=True, add_prefix_space=True)

    loaded = [check_transformers(OUT / name, tok, TEXTS + [t for _, t in austen_lines()[:50]])
              for name, tok in (("gpt2", gpt2), ("roberta", roberta))]
    # Truncation and padding are the WordPiece fixtures' concern; here, RoBERTa's template with
    # trimmed offsets and windows, and GPT-2's lack of one, on a part of those cases.
    truncation = [TRUNCATION_CASES[i] for i in (0, 6, 13, 16)]
    plans = {  # name: tokenizer, pad token, texts, truncation, single and batch cases, lossless
        "gpt2": (gpt2, "<|endoftext|>", TEXTS, truncation[1:3], SINGLE_CASES[2:4], BATCH_CASES[2:],
                 True),
        "roberta": (roberta, "<pad>", TEXTS, truncation, SINGLE_CASES[1:4], BATCH_CASES, True),
        "roberta_prefix": (prefixed, "<pad>", BPE_TEXTS, truncation[1:2], [], [], False),
        "options": (options, "<unk>", TEXTS, truncation[1:2], [], [], False),
        "plain": (plain, "Ġ", BPE_TEXTS, [], [], [], False),
    }
    cases, corpus = [], []
    for name, (tok, pad, texts, truncation_cases, single, batch, lossless) in plans.items():
        cases += cases_for(name, tok, pad, texts, truncation_cases, single, batch)
        corpus += corpus_cases(name, tok, lossless)
    header = {"transformers": transformers.__version__, "tokenizers": tokenizers.__version__,
              "pad_tokens": {name: plan[1] for name, plan in plans.items()},
              "vocab_sizes": {name: plan[0].get_vocab_size() for name, plan in plans.items()},
              "transformers_classes": loaded}
    with open(OUT / "cases.jsonl", "w", encoding="utf-8") as f:
        f.write(json.dumps(header, ensure_ascii=False) + "\n")
        for case in cases + corpus:
            f.write(json.dumps(case, ensure_ascii=False, separators=(",", ":")) + "\n")
    size = sum(p.stat().st_size for p in OUT.rglob("*") if p.is_file())
    print(f"{len(cases)} cases, {len(corpus)} corpora, {size / 1e3:.0f} kB in {OUT}; "
          f"transformers loads them as {loaded}")


if __name__ == "__main__":
    main()
