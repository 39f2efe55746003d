#!/usr/bin/env python3
"""Trains a byte-level BPE tokenizer with GPT-2's pipeline on a text corpus and writes it as a
tokenizer folder (tokenizer.json, tokenizer_config.json) that `kiln train --tokenizer_name` and
transformers' AutoTokenizer read.

GPT-2's pipeline: the ByteLevel pre-tokenizer (GPT-2's regex, no prefix space), post-processor
(no special tokens added) and decoder; <|endoftext|> as bos, eos and unk token, and no padding
token; tokenizer_config.json as the gpt2 model's on the Hub (model_max_length 1024). Training
reads the corpus line by line as `datasets`' text loader gives run_clm.py the lines (each with
its "\n"), so merges across a line break are learnt as run_clm.py will see them.

Reference tool, not part of Kiln: needs the `tokenizers` package from PyPI
(`pip install tokenizers`). Used for data/tokenizers/austen-bpe-1k:
    python3 scripts/train_byte_level_bpe.py data/lm/austen.txt 1024 data/tokenizers/austen-bpe-1k
"""
import json
import pathlib
import sys

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

EOT = "<|endoftext|>"


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: train_byte_level_bpe.py CORPUS.txt VOCAB_SIZE OUT_DIR")
    corpus, vocab_size, out = pathlib.Path(sys.argv[1]), int(sys.argv[2]), pathlib.Path(sys.argv[3])
    with open(corpus, encoding="utf-8") as f:
        lines = f.readlines()
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[EOT],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tokenizer.train_from_iterator(lines, trainer)
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    tokenizer.decoder = decoders.ByteLevel()
    out.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(out / "tokenizer.json"))
    config = {
        "add_bos_token": False, "add_prefix_space": False, "bos_token": EOT,
        "clean_up_tokenization_spaces": False, "eos_token": EOT, "errors": "replace",
        "model_max_length": 1024, "pad_token": None, "tokenizer_class": "GPT2Tokenizer",
        "unk_token": EOT,
    }
    (out / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n")
    print(f"{out}: {tokenizer.get_vocab_size()} tokens, {EOT} = {tokenizer.token_to_id(EOT)}")


if __name__ == "__main__":
    main()
