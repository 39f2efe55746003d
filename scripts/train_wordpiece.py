#!/usr/bin/env python3
"""Trains a WordPiece vocabulary (BERT's uncased normalisation and pre-tokenisation) on a text
corpus and writes it as a vocab.txt that `kiln train --tokenizer_name` reads.

Pretraining from scratch starts with a tokenizer trained on the pretraining corpus, as
`transformers`' language-modeling examples do: every piece of such a vocabulary occurs in the
corpus, so masked-LM pretraining trains each embedding. A borrowed vocabulary (bert-base-uncased
on Jane Austen) leaves thousands of pieces the corpus never produces; the tied decoder pushes all
of their embeddings the same way and they end up nearly identical, which then hurts a downstream
task whose words are among them.

Reference tool, not part of Kiln: needs the `tokenizers` package from PyPI
(`pip install tokenizers`). Used for data/vocab/austen-wordpiece-8k.txt:
    python3 scripts/train_wordpiece.py data/lm/austen.txt 8000 data/vocab/austen-wordpiece-8k.txt
"""
import sys

from tokenizers import BertWordPieceTokenizer


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: train_wordpiece.py CORPUS.txt VOCAB_SIZE OUT_VOCAB.txt")
    corpus, vocab_size, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    tokenizer = BertWordPieceTokenizer(clean_text=True, handle_chinese_chars=True,
                                       strip_accents=None, lowercase=True)
    tokenizer.train([corpus], vocab_size=vocab_size, min_frequency=2, show_progress=False,
                    special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    vocab = sorted(tokenizer.get_vocab().items(), key=lambda item: item[1])
    assert [token for token, _ in vocab[:5]] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    with open(out, "w", encoding="utf-8") as f:
        f.writelines(token + "\n" for token, _ in vocab)
    print(f"{out}: {len(vocab)} tokens")


if __name__ == "__main__":
    main()
