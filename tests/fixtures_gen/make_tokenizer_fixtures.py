#!/usr/bin/env python3
"""Records Hugging Face tokenizer outputs for tests/tokenizer_parity_test.cpp.

Writes tests/fixtures/tokenizer/:
  adversarial.jsonl  tricky texts, pairs, truncation, padding, overflow: every output in full
  custom_tokenizer.json  a tokenizer.json made with `tokenizers` (small vocab, other options)
  uci.txt            ids and offsets of the 3,000 UCI sentences (uncased), hashes for the rest
  austen.txt         per line, a hash of the ids of every line of the six Austen novels
  austen_vocab.txt   the same texts with data/vocab/austen-wordpiece-8k.txt (the vocabulary
                     scripts/train_wordpiece.py made): a hash per UCI sentence, one per Austen file

Inputs: data/vocab/bert-base-uncased-vocab.txt and austen-wordpiece-8k.txt (in the repo) and, for
UCI and Austen, $KILN_SHARED_DIR (default ../shared) /data/classification/uci-sentiment.tsv and
/data/lm/austen.
Needs `pip install transformers tokenizers` (no torch); CI only reads the committed output.
"""
import json
import os
import pathlib
import struct

import tokenizers
import transformers
from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors, decoders
from tokenizers.models import WordPiece
from transformers import BertTokenizerFast

# Some recorded cases are HF panics (stride too large); keep their report to one line.
os.environ["RUST_BACKTRACE"] = "0"

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = pathlib.Path(os.environ.get("KILN_SHARED_DIR", ROOT.parent / "shared"))
VOCAB = ROOT / "data/vocab/bert-base-uncased-vocab.txt"
AUSTEN_VOCAB = ROOT / "data/vocab/austen-wordpiece-8k.txt"
OUT = ROOT / "tests/fixtures/tokenizer"

# BertTokenizerFast(vocab_file, **config): the test passes the same dict as tokenizer_config.json.
CONFIGS = {
    "uncased": {},
    "cased": {"do_lower_case": False},
    "cased_strip": {"do_lower_case": False, "strip_accents": True},
    "uncased_keep_accents": {"do_lower_case": True, "strip_accents": False},
    "no_cjk": {"tokenize_chinese_chars": False},
}


def fnv1a64(ints):
    h = 0xCBF29CE484222325
    for b in struct.pack(f"<{len(ints)}i", *ints):
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def rows_hash(rows):
    """One hash over every row (row_text): its length, ids, type ids, attention mask, offsets."""
    flat = []
    for r in rows:
        ids, types, mask, _, offsets = r.split(" | ")[:5]
        flat += [len(ids.split())] + [int(x) for x in f"{ids} {types} {mask}".split()]
        flat += [int(x) for o in offsets.split() for x in o.split(":")]
    return fnv1a64(flat)


ADVERSARIAL_TEXTS = [
    "", " ", "   ", "\t\n\r ", "\u00a0\u2003\u3000", "\u2028\u2029", "   leading and trailing   ",
    "Hello, world!", "don't stop", "U.S.A.", "$100.00 & 50% off!!", "e-mail: someone@example.com",
    "C++ / C# <html> {json: [1, 2]}", "3.14159 1,000,000 1e-9 -42",
    "line1\nline2\r\nline3\rline4",
    # accents and case
    "Café résumé naïve façade", "ÅNGSTRÖM Ölçü ÑANDÚ", "İstanbul ıi İ", "Straße STRASSE ẞ",
    "ǅemal ǈ ǋ", "Ὀδυσσεύς ΣΊΣΥΦΟΣ ΟΔΟΣ", "cafe\u0301 (decomposed) vs caf\u00e9",
    "a\u0300\u0327 a\u0327\u0300 e\u0301\u0301", "\u0301 leading mark", "ﬁne ligature ﬀ",
    "𝅘𝅥𝅮 musical combining", "Ḱ̈ ḱ̈ Ǻ",
    # CJK and friends
    "野口里佳 Noguchi Rika", "中文字符测试", "日本語のテキスト、カタカナ。ﾊﾝｶｸ", "한국어 텍스트 한글",
    "𠀀𠀁𪜀 ext B-E", "豈 更 (compatibility ideographs)", "㐀㐁 ext A", "CJK mixed中english文x",
    "ab中cd", "〇〡〢 ideographic numbers",
    # emoji
    "I love it 😀👍🏽", "family 👨‍👩‍👧‍👦", "flags 🇫🇷🇯🇵", "🤩🥰🫠 newer emoji", "keycap 1️⃣ #️⃣",
    "☺ ♥ ★ ✓", "😀😀😀😀😀",
    # control, format, private use, specials
    "a\x00b", "tab\there", "bell\x07x", "\x1b[31mred\x1b[0m", "nel\u0085x", "vt\x0bff\x0cx",
    "\ufffd replacement \ufffd", "soft\u00adhyphen", "zero\u200bwidth\u200cnon\u200djoiner",
    "bom\ufeffx", "rtl \u200f mark \u202e override", "private \ue000 use", "plane 15 \U000f0000 x",
    "\x00\x01\x02\x03", "\u0890\u08e2 \U000110cd (Cf in new Unicode)", "\u2060word\u2061joiner",
    "noncharacter \ufdd0 \uffff", "\U000e0041 tag letter",
    # long words
    "a" * 100, "a" * 101, "ab" * 60, "supercalifragilisticexpialidocious" * 4, "x" * 99 + "é",
    "é" * 100, "é" * 101, "한" * 40, "한" * 34, "word " + "z" * 150 + " end", "ǅ" * 101,
    # mixed scripts
    "Привет мир! Hello мир", "שלום עולם", "مرحبا بالعالم؟", "नमस्ते दुनिया", "ไทย ภาษา",
    "Ελληνικά κείμενα", "१२३ ١٢٣ 123 ๑๒๓", "Ⅻ ⅻ ① ⑴", "Ꭰ Ꮳ ꭰ cherokee",
    # punctuation
    "¿Qué? ¡Sí!", "«quotes» „German“ “curly” ‘single’", "em—dash – en", "…ellipsis‥",
    "‰ ※ ‽ ⁂", "a_b__c", "~tilde`back^caret|pipe\\slash", "÷×±", "$£€¥₹", "@#%&*()",
    "\u166d\U000111c9 old-table punctuation", "\u061d\u2e43\u2e52 new-table punctuation",
    # special tokens typed in the text
    "Hello [SEP] world", "[CLS][SEP][MASK]", "[mask] lowercase special", "x[UNK]y", "[PAD]",
    "[SEP", "[[SEP]]", "[MASK][MASK] is [MASK].",
    # unknown words
    "qwxzv jjjjjjjj", "ŋ ɐ ʃ ʒ ipa", "𝔣𝔯𝔞𝔨𝔱𝔲𝔯 math", "ＦＵＬＬＷＩＤＴＨ ａｂｃ",
]

# (text, pair) for pair cases
PAIRS = [
    ("What is the capital of France?", "Paris is the capital and most populous city of France."),
    ("short", "a considerably longer second sequence that needs truncation more than the first"),
    ("a considerably longer first sequence that needs truncation more than the second", "short"),
    ("", ""), ("", "only second"), ("only first", ""), ("   ", "\t"),
    ("野口里佳", "Noguchi Rika 😀"), ("Café [SEP] x", "naïve [MASK]"),
    ("one two three four five six seven eight nine ten", "eleven twelve thirteen fourteen fifteen"),
]

TRUNCATION_CASES = [
    {"truncation": "longest_first", "max_length": 8},
    {"truncation": "longest_first", "max_length": 11},
    {"truncation": "longest_first", "max_length": 16},
    {"truncation": "longest_first", "max_length": 3},
    {"truncation": "only_first", "max_length": 10},
    {"truncation": "only_second", "max_length": 10},
    {"truncation": "only_second", "max_length": 14, "stride": 2},
    {"truncation": "longest_first", "max_length": 12, "stride": 1},
    {"truncation": "only_first", "max_length": 9, "stride": 3},
    {"truncation": "longest_first", "max_length": 10, "truncation_side": "left"},
    {"truncation": "only_second", "max_length": 12, "stride": 2, "truncation_side": "left"},
    {"truncation": "do_not_truncate", "padding": "max_length", "max_length": 24},
    {"truncation": "longest_first", "max_length": 12, "padding": "max_length"},
    {"truncation": "longest_first", "max_length": 12, "padding": "max_length", "padding_side": "left"},
    {"padding": "longest", "pad_to_multiple_of": 8},
    {"add_special_tokens": False},
    {"add_special_tokens": False, "truncation": "longest_first", "max_length": 5},
]

SINGLE_CASES = [
    {"truncation": "longest_first", "max_length": 2},
    {"truncation": "longest_first", "max_length": 6},
    {"truncation": "longest_first", "max_length": 6, "stride": 2},
    {"truncation": "only_first", "max_length": 7, "truncation_side": "left"},
    {"padding": "max_length", "max_length": 10, "pad_to_multiple_of": 4},
    {"add_special_tokens": False},
]

BATCH = ["Hello world", "", "a much longer sentence in the batch, with punctuation!", "野口 😀"]
BATCH_CASES = [
    {"padding": "longest"},
    {"padding": "longest", "pad_to_multiple_of": 8, "padding_side": "left"},
    {"padding": "longest", "truncation": "longest_first", "max_length": 8, "stride": 2},
    {"padding": "max_length", "max_length": 16, "truncation": "longest_first"},
]


def hf_tokenizer(name):
    return BertTokenizerFast(vocab=str(VOCAB), **CONFIGS[name])


def call_kwargs(options):
    kw = {k: v for k, v in options.items() if k not in ("truncation_side", "padding_side")}
    kw.setdefault("truncation", "do_not_truncate")
    return kw


def row_text(ids, type_ids, attention_mask, special_tokens_mask, offsets, word_ids, sequence_ids):
    """One row as "ids | type ids | attention | special mask | start:end ... | words | sequences"."""
    def nums(xs):
        return " ".join(str(-1 if x is None else x) for x in xs)
    return " | ".join([nums(ids), nums(type_ids), nums(attention_mask), nums(special_tokens_mask),
                       " ".join(f"{a}:{b}" for a, b in offsets), nums(word_ids), nums(sequence_ids)])


def rows_of(encoding, count):
    return [row_text(encoding["input_ids"][i], encoding["token_type_ids"][i],
                     encoding["attention_mask"][i], encoding["special_tokens_mask"][i],
                     encoding["offset_mapping"][i], encoding.word_ids(i), encoding.sequence_ids(i))
            for i in range(count)]


def ids_of(row):
    return [int(x) for x in row.split(" | ")[0].split()]


def record(tok, texts, pairs, options):
    """Every row (main encodings and overflowing windows) HF returns, or the error."""
    tok.truncation_side = options.get("truncation_side", "right")
    tok.padding_side = options.get("padding_side", "right")
    try:
        e = tok(texts, pairs, return_offsets_mapping=True, return_special_tokens_mask=True,
                return_overflowing_tokens=True, **call_kwargs(options))
    except BaseException as error:  # Rust panics surface as pyo3 PanicException
        return {"error": str(error).splitlines()[0]}
    return {"rows": rows_of(e, len(e["input_ids"])),
            "sample": list(e["overflow_to_sample_mapping"])}


def adversarial_cases():
    cases = []
    for name in CONFIGS:
        tok = hf_tokenizer(name)
        for text in ADVERSARIAL_TEXTS:
            case = {"tokenizer": name, "texts": [text], "options": {}}
            case.update(record(tok, [text], None, {}))
            case["decoded"] = tok.decode(ids_of(case["rows"][0]), skip_special_tokens=True)
            cases.append(case)
    # Truncation, padding and batching do not depend on the normalizer options: uncased only.
    for name in ("uncased",):
        tok = hf_tokenizer(name)
        for options in TRUNCATION_CASES:
            for text, pair in PAIRS:
                case = {"tokenizer": name, "texts": [text], "pairs": [pair], "options": options}
                case.update(record(tok, [text], [pair], options))
                cases.append(case)
        for options in SINGLE_CASES:
            for text in ADVERSARIAL_TEXTS[::7] + [p[0] for p in PAIRS]:
                case = {"tokenizer": name, "texts": [text], "options": options}
                case.update(record(tok, [text], None, options))
                cases.append(case)
        for options in BATCH_CASES:
            case = {"tokenizer": name, "texts": BATCH, "options": options}
            case.update(record(tok, BATCH, None, options))
            cases.append(case)
            pairs = list(reversed(BATCH))
            case = {"tokenizer": name, "texts": BATCH, "pairs": pairs, "options": options}
            case.update(record(tok, BATCH, pairs, options))
            cases.append(case)
    return cases


def custom_tokenizer():
    """A tokenizer.json with non-default settings, made with the `tokenizers` library."""
    lines = VOCAB.read_text(encoding="utf-8").split("\n")[:-1]
    keep = set(lines[:1000]) | {t for t in lines if len(t) == 1 or (t.startswith("##") and len(t) == 3)}
    keep |= {"hello", "world", "##ing", "##ed", "the", "capital", "france", "paris"}
    vocab = {}
    for t in lines:
        if t in keep and t not in vocab:
            vocab[t] = len(vocab)
    tok = Tokenizer(WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=12))
    tok.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=False,
                                                strip_accents=True, lowercase=False)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.BertProcessing(("[SEP]", vocab["[SEP]"]), ("[CLS]", vocab["[CLS]"]))
    tok.decoder = decoders.WordPiece(prefix="##")
    tok.add_special_tokens(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    tok.add_tokens([tokenizers.AddedToken("<ent>", normalized=True, lstrip=True),
                    tokenizers.AddedToken("Foo", single_word=True, normalized=False),
                    tokenizers.AddedToken("bar", rstrip=True, normalized=False)])
    tok.enable_truncation(max_length=24, strategy="longest_first")
    tok.enable_padding(pad_id=vocab["[PAD]"], pad_token="[PAD]", pad_to_multiple_of=4)
    return tok


def custom_cases(tok):
    texts = ADVERSARIAL_TEXTS + ["Foo fighters Foobar <ent> x <ENT> bar   baz", "x Foo, <ent><ent>bar"]
    inputs = [([t], None) for t in texts] + [([a], [b]) for a, b in PAIRS]
    cases = []
    for text, pair in inputs:
        e = tok.encode(text[0], pair[0] if pair else None)
        rows = [row_text(r.ids, r.type_ids, r.attention_mask, r.special_tokens_mask, r.offsets,
                         r.word_ids, r.sequence_ids) for r in [e] + e.overflowing]
        case = {"tokenizer": "custom", "texts": text, "options": "defaults", "rows": rows,
                "sample": [0] * len(rows), "decoded": tok.decode(e.ids)}
        if pair:
            case["pairs"] = pair
        cases.append(case)
    return cases


def uci_lines():
    with open(SHARED / "data/classification/uci-sentiment.tsv", "rb") as f:
        return [line.rstrip(b"\n").split(b"\t", 2)[2].decode("utf-8") for line in f]


def write_uci(path):
    texts = uci_lines()
    uncased, cased = hf_tokenizer("uncased"), hf_tokenizer("cased")
    out = [f"# BertTokenizerFast outputs for the UCI sentences (third column of uci-sentiment.tsv);"
           f" transformers {transformers.__version__}, tokenizers {tokenizers.__version__}",
           "# single <line> <ids> <offsets start:end>: uncased, in full",
           "# cased <line> <fnv1a64 of the ids>",
           "# pair <first line> <fnv1a64 of all rows>: lines i, i+1 uncased, longest_first 48, padded",
           "# window <first line> <fnv1a64 of all rows>: only_second 32, stride 8, overflowing rows"]
    enc = uncased(texts, return_offsets_mapping=True)
    for i in range(len(texts)):
        ids = " ".join(map(str, enc["input_ids"][i]))
        offsets = " ".join(f"{s}:{e}" for s, e in enc["offset_mapping"][i])
        out.append(f"single {i} {ids} | {offsets}")
    for i, ids in enumerate(cased(texts)["input_ids"]):
        out.append(f"cased {i} {fnv1a64(ids):016x}")
    for i in range(0, len(texts) - 1, 2):
        r = record(uncased, [texts[i]], [texts[i + 1]],
                   {"truncation": "longest_first", "max_length": 48, "padding": "max_length"})
        out.append(f"pair {i} {rows_hash(r['rows']):016x}")
        r = record(uncased, [texts[i]], [texts[i + 1]],
                   {"truncation": "only_second", "max_length": 32, "stride": 8})
        out.append(f"window {i} " + (f"{rows_hash(r['rows']):016x}" if "rows" in r else "error"))
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return len(texts)


def austen_files():
    """(file name, its lines split at \\n) for each of data/lm/austen/*.txt, in name order."""
    for file in sorted((SHARED / "data/lm/austen").glob("*.txt")):
        data = file.read_bytes()
        lines = data.split(b"\n")
        if data.endswith(b"\n"):
            lines.pop()
        yield file.name, [line.decode("utf-8") for line in lines]


def write_austen(path):
    uncased, cased = hf_tokenizer("uncased"), hf_tokenizer("cased")
    out = [f"# BertTokenizerFast ids of every line of data/lm/austen/*.txt (lines split at \\n);"
           f" transformers {transformers.__version__}, tokenizers {tokenizers.__version__}",
           "# file <name> <lines> <uncased tokens> <cased tokens> <cased fnv1a64 of all lines' ids>",
           "# then one line per text line: the low 32 bits of fnv1a64 of its uncased ids, in hex"]
    lines_total = 0
    for name, lines in austen_files():
        ids_u = uncased(lines)["input_ids"]
        ids_c = cased(lines)["input_ids"]
        flat_c = [x for ids in ids_c for x in [len(ids)] + ids]
        out.append(f"file {name} {len(lines)} {sum(map(len, ids_u))} {sum(map(len, ids_c))} "
                   f"{fnv1a64(flat_c):016x}")
        out += [f"{fnv1a64(ids) & 0xFFFFFFFF:08x}" for ids in ids_u]
        lines_total += len(lines)
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return lines_total


def write_austen_vocab(path):
    """The UCI sentences and the Austen lines with the Austen WordPiece vocabulary, uncased."""
    tok = BertTokenizerFast(vocab=str(AUSTEN_VOCAB))
    out = [f"# BertTokenizerFast with data/vocab/austen-wordpiece-8k.txt (uncased);"
           f" transformers {transformers.__version__}, tokenizers {tokenizers.__version__}",
           "# uci <line> <fnv1a64 of its ids and offsets (start, end pairs)>",
           "# file <name> <lines> <tokens> <fnv1a64 of every line's length and ids>"]
    texts = uci_lines()
    enc = tok(texts, return_offsets_mapping=True)
    for i, (ids, offsets) in enumerate(zip(enc["input_ids"], enc["offset_mapping"])):
        out.append(f"uci {i} {fnv1a64(ids + [x for o in offsets for x in o]):016x}")
    for name, lines in austen_files():
        ids = tok(lines)["input_ids"]
        flat = [x for row in ids for x in [len(row)] + row]
        out.append(f"file {name} {len(lines)} {sum(map(len, ids))} {fnv1a64(flat):016x}")
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    custom = custom_tokenizer()
    custom.save(str(OUT / "custom_tokenizer.json"))
    cases = adversarial_cases() + custom_cases(custom)
    header = {"transformers": transformers.__version__, "tokenizers": tokenizers.__version__,
              "configs": CONFIGS}
    with open(OUT / "adversarial.jsonl", "w", encoding="utf-8") as f:
        f.write(json.dumps(header, ensure_ascii=False) + "\n")
        for case in cases:
            f.write(json.dumps(case, ensure_ascii=False, separators=(",", ":")) + "\n")
    n_uci = write_uci(OUT / "uci.txt")
    n_austen = write_austen(OUT / "austen.txt")
    write_austen_vocab(OUT / "austen_vocab.txt")
    print(f"{len(cases)} adversarial cases, {n_uci} UCI sentences, {n_austen} Austen lines")


if __name__ == "__main__":
    main()
