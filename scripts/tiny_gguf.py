#!/usr/bin/env python3
"""Writes a tiny GGUF model for cairn's opt-in llama-server tests.

    tiny_gguf.py VOCAB.gguf TEMPLATE.jinja OUT.gguf [--tool-call]

A two-layer qwen2 model (64-wide, random weights, seeded) with a real tokenizer: the Qwen2
vocabulary and merges from VOCAB.gguf (llama.cpp ships `models/ggml-vocab-qwen2.gguf`), with
Qwen2.5's `<tool_call>` and `</tool_call>` tokens in their places, and TEMPLATE as its chat
template. It writes nonsense, but the server, its template, streaming, tokenizer and prompt cache
are real.

The residual stream reserves a few dimensions the layers never write, so the output can carry
a bias per token and a few bigrams: answers end after a handful of tokens (`<|im_end|>` is
likely at every step) and never show control tokens. With --tool-call the model opens every
answer with `<tool_call>{` and then writes nonsense: a malformed tool call.
"""

import argparse

import gguf
import numpy as np

N_EMBD = 64
N_HEAD = 4
N_HEAD_KV = 2
N_FF = 128
N_LAYER = 2
# Dimensions 0..RESERVED-1 of the residual stream: 0 carries the bias, the others one trigger.
RESERVED = 8
NEWLINE, OPEN_BRACE = 198, 90
IM_END = 151645
TOOL_CALL, TOOL_CALL_END = 151657, 151658


def read_vocab(path):
    reader = gguf.GGUFReader(path)

    def strings(key):
        field = reader.fields[key]
        return [bytes(field.parts[i]).decode("utf-8") for i in field.data]

    field = reader.fields["tokenizer.ggml.token_type"]
    types = [int(field.parts[i][0]) for i in field.data]
    pre = bytes(reader.fields["tokenizer.ggml.pre"].parts[-1]).decode()
    return strings("tokenizer.ggml.tokens"), types, strings("tokenizer.ggml.merges"), pre


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("vocab")
    parser.add_argument("template")
    parser.add_argument("out")
    parser.add_argument("--tool-call", action="store_true")
    args = parser.parse_args()

    tokens, types, merges, pre = read_vocab(args.vocab)
    tokens[TOOL_CALL], tokens[TOOL_CALL_END] = "<tool_call>", "</tool_call>"
    types[TOOL_CALL] = types[TOOL_CALL_END] = int(gguf.TokenType.USER_DEFINED)
    n_vocab = len(tokens)
    rng = np.random.default_rng(28)

    # Embeddings: random but for the reserved dimensions; dimension 0 is 1 for every token.
    embd = rng.normal(0.0, 1.0, (n_vocab, N_EMBD)).astype(np.float32)
    embd[:, :RESERVED] = 0.0
    embd[:, 0] = 1.0
    # Output: random, plus a bias per token read from dimension 0.
    out = rng.normal(0.0, 0.25, (n_vocab, N_EMBD)).astype(np.float32)
    out[:, :RESERVED] = 0.0
    bias = np.zeros(n_vocab, dtype=np.float32)
    special = np.array(types) != int(gguf.TokenType.NORMAL)
    bias[special] = -40.0
    # About one answer in two ends within 20 tokens at llama-server's default sampling.
    bias[IM_END] = 9.5
    if args.tool_call:
        # "\n" (the end of the assistant header) → <tool_call>, <tool_call> → "{".
        for trigger, (after, then) in enumerate([(NEWLINE, TOOL_CALL), (TOOL_CALL, OPEN_BRACE)], start=1):
            embd[after, trigger] = 4.0
            out[then, trigger] = 12.0
        bias[IM_END] = 8.5
        bias[[TOOL_CALL, TOOL_CALL_END]] = 0.0
    out[:, 0] = bias

    w = gguf.GGUFWriter(args.out, "qwen2")
    w.add_name("cairn-tiny" + ("-toolcall" if args.tool_call else ""))
    w.add_context_length(32768)
    w.add_embedding_length(N_EMBD)
    w.add_block_count(N_LAYER)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_HEAD_KV)
    w.add_rope_freq_base(1_000_000.0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_eos_token_id(IM_END)
    w.add_pad_token_id(151643)
    w.add_bos_token_id(151643)
    w.add_add_bos_token(False)
    with open(args.template, encoding="utf-8") as f:
        w.add_chat_template(f.read())

    head = N_EMBD // N_HEAD
    kv = head * N_HEAD_KV

    def tensor(name, shape, scale):
        w.add_tensor(name, rng.normal(0.0, scale, shape).astype(np.float32))

    def writer_tensor(name, shape, scale):
        # Layers write into the stream everywhere but the reserved dimensions, and gently.
        t = rng.normal(0.0, scale, shape).astype(np.float32)
        t[:RESERVED, :] = 0.0
        w.add_tensor(name, t)

    w.add_tensor("token_embd.weight", embd.astype(np.float16))
    for i in range(N_LAYER):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        tensor(p + "attn_q.weight", (N_EMBD, N_EMBD), 0.2)
        tensor(p + "attn_q.bias", (N_EMBD,), 0.1)
        tensor(p + "attn_k.weight", (kv, N_EMBD), 0.2)
        tensor(p + "attn_k.bias", (kv,), 0.1)
        tensor(p + "attn_v.weight", (kv, N_EMBD), 0.2)
        tensor(p + "attn_v.bias", (kv,), 0.1)
        writer_tensor(p + "attn_output.weight", (N_EMBD, N_EMBD), 0.05)
        w.add_tensor(p + "ffn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        tensor(p + "ffn_gate.weight", (N_FF, N_EMBD), 0.2)
        tensor(p + "ffn_up.weight", (N_FF, N_EMBD), 0.2)
        writer_tensor(p + "ffn_down.weight", (N_EMBD, N_FF), 0.05)
    w.add_tensor("output_norm.weight", np.ones(N_EMBD, dtype=np.float32))
    w.add_tensor("output.weight", out.astype(np.float16))

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print(f"wrote {args.out}: {N_LAYER} layers, {N_EMBD} wide, {n_vocab} tokens")


if __name__ == "__main__":
    main()
