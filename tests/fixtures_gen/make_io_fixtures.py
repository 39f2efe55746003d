#!/usr/bin/env python3
"""Writes the io fixtures that tests/safetensors_test.cpp and tests/bert_config_test.cpp read:

  tests/data/io/python_all_dtypes.safetensors  written by the `safetensors` Python library: one
      tensor per Kiln dtype (bf16 as raw bits: numpy has none), a scalar, an empty tensor, and
      {"format": "pt"} metadata. Kiln must read its values and re-serialize it byte for byte.
  tests/data/io/bert_config_hf.json  written by transformers.BertConfig.save_pretrained, with
      three named classes and non-default sizes.

Usage: pip install safetensors numpy transformers; python3 tests/fixtures_gen/make_io_fixtures.py
"""
import json
import pathlib
import tempfile

import numpy as np
import safetensors

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "tests/data/io"


def tensor_spec(array, dtype):
    """The argument safetensors.serialize takes for one tensor, in old and new library versions."""
    if hasattr(safetensors, "TensorSpec"):  # 0.7+: a pointer into the array
        return safetensors.TensorSpec(dtype=dtype, shape=list(array.shape),
                                      data_ptr=array.ctypes.data, data_len=array.nbytes)
    return {"dtype": dtype, "shape": list(array.shape), "data": array.tobytes()}


def write_safetensors():
    arrays = {
        "f32.matrix": (np.array([[0.0, 1.5, -2.25], [3e38, -0.0, 1e-30]], np.float32), "float32"),
        "a.f32": (np.array([7.0], np.float32), "float32"),
        "f64.vector": (np.array([1 / 3, -1e300, 2.5], np.float64), "float64"),
        "f16.vector": (np.array([1.0, -2.0, 0.5, 65504.0], np.float16), "float16"),
        # bf16 bits of 1.0, -3.0, 0.15625
        "bf16.vector": (np.array([0x3F80, 0xC040, 0x3E20], np.uint16), "bfloat16"),
        "i32.vector": (np.array([-1, 0, 2147483647], np.int32), "int32"),
        "i64.scalar": (np.array(-9007199254740993, np.int64), "int64"),
        "u32.vector": (np.array([0, 4294967295], np.uint32), "uint32"),
        "bool.matrix": (np.array([[True, False], [False, True]]), "bool"),
        "empty.f32": (np.zeros((0, 4), np.float32), "float32"),
    }
    specs = {name: tensor_spec(array, dtype) for name, (array, dtype) in arrays.items()}
    data = safetensors.serialize(specs, metadata={"format": "pt"})
    (OUT / "python_all_dtypes.safetensors").write_bytes(bytes(data))


def write_bert_config():
    from transformers import BertConfig

    config = BertConfig(
        hidden_size=256, num_attention_heads=4, num_hidden_layers=3, intermediate_size=1024,
        vocab_size=1000, hidden_dropout_prob=0.2, classifier_dropout=0.3,
        id2label={0: "negative", 1: "neutral", 2: "positive"},
        label2id={"negative": 0, "neutral": 1, "positive": 2},
        problem_type="single_label_classification",
        architectures=["BertForSequenceClassification"])
    with tempfile.TemporaryDirectory() as folder:
        config.save_pretrained(folder)
        text = pathlib.Path(folder, "config.json").read_text()
    json.loads(text)
    (OUT / "bert_config_hf.json").write_text(text)


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    write_safetensors()
    write_bert_config()
