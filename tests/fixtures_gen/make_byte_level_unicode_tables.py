#!/usr/bin/env python3
"""Writes src/kiln/io/tokenizer_byte_level_tables.cpp: the letters and numbers of GPT-2's split
regex as Hugging Face's ByteLevel pre-tokenizer runs it (Oniguruma's \\p{L} and \\p{N}, of
Oniguruma's Unicode version), probed code point by code point from the `tokenizers` package, and
checks that its \\s is Unicode White_Space (kiln's unicode_is_white_space).

A character is a letter when "x" + c is one piece (` ?\\p{L}+`), a number when "1" + c is one
piece (` ?\\p{N}+`), other when "!" + c is one piece (` ?[^\\s\\p{L}\\p{N}]+`), else whitespace.

Usage: pip install tokenizers (utf8proc too: make_tokenizer_unicode_tables.py is imported);
python3 tests/fixtures_gen/make_byte_level_unicode_tables.py
"""
import pathlib
import sys

import tokenizers
from tokenizers import pre_tokenizers

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from make_tokenizer_unicode_tables import code_points, ranges, tables_file  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "src/kiln/io/tokenizer_byte_level_tables.cpp"
# Unicode White_Space, as src/kiln/io/tokenizer_unicode.cpp's unicode_is_white_space has it.
WHITE_SPACE = {*range(0x09, 0x0E), 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028,
               0x2029, 0x202F, 0x205F, 0x3000}


def main():
    pre = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)

    def joins(prefix, ch):
        return len(pre.pre_tokenize_str(prefix + ch)) == 1

    classes = {"letter": set(), "number": set()}
    space = set()
    for c in code_points():
        ch = chr(c)
        found = [name for name, prefix in (("letter", "x"), ("number", "1"), ("other", "!"))
                 if joins(prefix, ch)]
        assert len(found) <= 1, (hex(c), found)
        if not found:
            space.add(c)
        elif found[0] != "other":
            classes[found[0]].add(c)

    assert space == WHITE_SPACE, sorted(space ^ WHITE_SPACE)

    arrays, spans = [], []
    for name, points in classes.items():
        array = "k" + name.capitalize()
        rows = "\n".join(f"    {{0x{a:X}, 0x{b:X}}}," for a, b in ranges(points))
        arrays.append(f"const CodeRange {array}[] = {{\n{rows}\n}};\n")
        spans.append(f"const std::span<const CodeRange> byte_level_{name}{{{array}}};")
    probed = (f"Probed from tokenizers {tokenizers.__version__}: \\p{{L}} and \\p{{N}} of GPT-2's split "
              "regex in Oniguruma.")
    text = tables_file("make_byte_level_unicode_tables.py", probed, arrays, spans)
    OUT.write_text(text)
    print(f"{OUT}: " + ", ".join(f"{len(ranges(p))} {n} ranges" for n, p in classes.items()))


if __name__ == "__main__":
    main()
