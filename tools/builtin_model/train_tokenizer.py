#!/usr/bin/env python3
"""Step 2 of the built-in model: train a byte-level BPE tokenizer on the training text.

The result is what llama.cpp calls a "gpt2" tokenizer with the "gpt-2" pre-tokenizer: tokens are
spelled with GPT-2's byte-to-unicode map, merges are ranked pairs, and words come from GPT-2's
splitting regex. Python's `re` has no \\p{L}/\\p{N}, so the regex here uses ASCII classes; on
ASCII text (the KJV is pure ASCII, checked below) it splits exactly as the Unicode one does.

Ids: 0-255 are the single bytes (id = byte value), then one token per merge in merge order, then
the special tokens. Standard library only, so it runs anywhere.

Usage: train_tokenizer.py TRAIN.txt OUT.json [--vocab-size 4096]
"""
import argparse
import collections
import json
import re
import sys

# GPT-2's pre-tokenizer with \p{L} -> [A-Za-z], \p{N} -> [0-9], \s -> ASCII whitespace. The final
# `|\s+` stands for llama.cpp's rule that text no alternative matches becomes a word of its own
# (a newline followed by a letter, for instance).
WS = " \\t\\n\\r\\f\\v"
GPT2_ASCII = re.compile(
    rf"'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^{WS}A-Za-z0-9]+|[{WS}]+(?![^{WS}])|[{WS}]+")

# BOS and EOS are one token: sequences start with it and generation ends on it.
SPECIAL_TOKENS = ["<|endoftext|>", "<|user|>", "<|assistant|>"]

# The chat format of prepare_text.sh's chat.txt as a Jinja template (tokenizer.chat_template).
# The model never saw system messages, so they are left out.
CHAT_TEMPLATE = (
    "{%- for message in messages -%}"
    "{%- if message['role'] == 'user' -%}{{ '<|user|>\\n' + message['content'] + '\\n' }}"
    "{%- elif message['role'] == 'assistant' -%}{{ '<|assistant|>\\n' + message['content'] + '<|endoftext|>' }}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<|assistant|>\\n' }}{%- endif -%}")


def bytes_to_unicode():
    """GPT-2's map of the 256 bytes to printable code points (printable Latin-1 map to themselves,
    the rest to 256, 257, ... in byte order), so that every token is a printable string."""
    printable = list(range(0x21, 0x7F)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    mapping, extra = {}, 0
    for b in range(256):
        if b in printable:
            mapping[b] = chr(b)
        else:
            mapping[b] = chr(256 + extra)
            extra += 1
    return mapping


def count_words(text):
    return collections.Counter(GPT2_ASCII.findall(text))


def train_bpe(word_counts, n_merges):
    """Classic BPE: repeatedly merge the most frequent adjacent pair. Pair counts are updated only
    for the words that contain the merged pair, which keeps 4k merges over ~30k distinct words to
    seconds. Ties go to the smallest pair (by token ids) so the result is deterministic."""
    words = [list(w.encode("ascii")) for w in word_counts]
    counts = list(word_counts.values())
    pair_count = collections.Counter()
    where = collections.defaultdict(set)  # pair -> indices of words holding it
    for i, w in enumerate(words):
        for a, b in zip(w, w[1:]):
            pair_count[(a, b)] += counts[i]
            where[(a, b)].add(i)

    merges = []  # (left id, right id, new id)
    next_id = 256
    for _ in range(n_merges):
        if not pair_count:
            break
        best = max(pair_count.items(), key=lambda kv: (kv[1], -kv[0][0], -kv[0][1]))[0]
        if pair_count[best] < 2:
            break
        new_id = next_id
        next_id += 1
        merges.append((best[0], best[1], new_id))
        for i in list(where[best]):
            w, c = words[i], counts[i]
            for a, b in zip(w, w[1:]):  # remove this word's old pairs ...
                pair_count[(a, b)] -= c
                if pair_count[(a, b)] <= 0:
                    del pair_count[(a, b)]
                where[(a, b)].discard(i)
            merged, j = [], 0
            while j < len(w):
                if j + 1 < len(w) and (w[j], w[j + 1]) == best:
                    merged.append(new_id)
                    j += 2
                else:
                    merged.append(w[j])
                    j += 1
            words[i] = merged
            for a, b in zip(merged, merged[1:]):  # ... and add the new ones
                pair_count[(a, b)] += c
                where[(a, b)].add(i)
        where.pop(best, None)
    return merges


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("train_text")
    ap.add_argument("out_json")
    ap.add_argument("--vocab-size", type=int, default=4096)
    args = ap.parse_args()

    text = open(args.train_text, "rb").read()
    if any(b >= 0x80 for b in text):
        sys.exit("train_tokenizer: expected ASCII text (the ASCII regex would split other text differently)")
    text = text.decode("ascii")
    n_merges = args.vocab_size - 256 - len(SPECIAL_TOKENS)
    merges = train_bpe(count_words(text), n_merges)

    # Every merge gets a new id; two merges spelling the same string (a+bc after ab+c) would need
    # one id for both, which GGUF vocabularies allow but this trainer does not produce: check.
    b2u = bytes_to_unicode()
    spelled = [b2u[b] for b in range(256)]
    for left, right, _ in merges:
        spelled.append(spelled[left] + spelled[right])
    if len(set(spelled)) != len(spelled):
        sys.exit("train_tokenizer: two merges produced the same token; this trainer does not handle that")
    tokens = spelled + SPECIAL_TOKENS
    token_types = [1] * len(spelled) + [3] * len(SPECIAL_TOKENS)  # 1 normal, 3 control (GGUF)
    out = {
        "model": "gpt2",
        "pre": "gpt-2",
        "tokens": tokens,
        "token_types": token_types,
        "merges": [f"{spelled[a]} {spelled[b]}" for a, b, _ in merges],
        "bos": "<|endoftext|>",
        "eos": "<|endoftext|>",
        "add_bos": True,
        "chat_template": CHAT_TEMPLATE,
    }
    with open(args.out_json, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=0)
    print(f"train_tokenizer: {len(tokens)} tokens ({len(merges)} merges, {len(SPECIAL_TOKENS)} special)")


if __name__ == "__main__":
    main()
