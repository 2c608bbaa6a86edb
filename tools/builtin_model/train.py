#!/usr/bin/env python3
"""Step 4 of the built-in model: train a small Qwen3-MoE on the token ids of the King James Bible.

The model is written here to compute exactly what Strata's qwen3moe forward pass computes
(src/model/arch/llama_family.cpp and model/blocks/): pre-norm blocks of RMSNorm -> GQA attention
with per-head q/k RMSNorm and NEOX rope -> RMSNorm -> MoE of SwiGLU experts, routed by a softmax
over all experts whose top-k weights are renormalized to sum to one; then RMSNorm and an untied
output matrix. Tensors are named and shaped as GGUF stores them (PyTorch shape = GGUF ne reversed)
so `strata convert` copies them without transposing.

Token ids come from Strata's own tokenizer (`strata tokenize --ids`, comma-separated files), so
training and inference see identical ids.

Perplexity windowing, shared with `strata perplexity`: the text's ids are cut into consecutive
chunks of ctx-1 tokens; each chunk is run as [BOS] + chunk and every chunk token is scored, so each
text token is predicted exactly once. The final evaluation runs in float32 on the weights exactly
as saved (rounded to float16, the checkpoint's dtype).

Usage (device):  train.py --data device-data/builtin --out $OUT
Re-evaluate a checkpoint (CPU is fine):  train.py --eval-only CKPT_DIR --data device-data/builtin
"""
import argparse
import json
import math
import os
import struct
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def default_config(n_vocab):
    return {
        "n_vocab": n_vocab, "n_embd": 384, "n_layer": 6, "n_head": 6, "n_head_kv": 2, "head_dim": 64,
        "n_expert": 8, "n_expert_used": 2, "n_ff_expert": 192, "context_length": 512,
        "rope_base": 10000.0, "rms_eps": 1e-6,
    }


def rms_norm(x, weight, eps):
    x32 = x.float()
    return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps) * weight.float()).to(x.dtype)


def rope_neox(x, positions, base):
    """NEOX rope: dimension i pairs with i + d/2, angle pos * base^(-2i/d). x: [B, T, H, d]."""
    d = x.shape[-1]
    inv_freq = base ** (-torch.arange(0, d, 2, device=x.device, dtype=torch.float64) / d)
    ang = (positions.to(torch.float64)[:, None] * inv_freq[None, :]).float()  # [T, d/2]
    cos, sin = ang.cos()[None, :, None, :], ang.sin()[None, :, None, :]
    x1, x2 = x.float()[..., : d // 2], x.float()[..., d // 2:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1).to(x.dtype)


def causal_attention(q, k, v):
    """q: [B, H, T, d]; k, v: [B, H, T, d] (already repeated for GQA). Scale 1/sqrt(d)."""
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    t = q.shape[-2]
    scores = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    mask = torch.ones(t, t, dtype=torch.bool, device=q.device).triu(1)
    return scores.masked_fill(mask, float("-inf")).softmax(-1) @ v


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        e, hd, x, ff = c["n_embd"], c["head_dim"], c["n_expert"], c["n_ff_expert"]
        self.c = c
        self.attn_norm = nn.Parameter(torch.ones(e))                     # [e]
        self.attn_q = nn.Parameter(torch.empty(c["n_head"] * hd, e))     # [H*hd, e]
        self.attn_k = nn.Parameter(torch.empty(c["n_head_kv"] * hd, e))  # [KV*hd, e]
        self.attn_v = nn.Parameter(torch.empty(c["n_head_kv"] * hd, e))  # [KV*hd, e]
        self.attn_output = nn.Parameter(torch.empty(e, c["n_head"] * hd))  # [e, H*hd]
        self.attn_q_norm = nn.Parameter(torch.ones(hd))                  # [hd], shared by all heads
        self.attn_k_norm = nn.Parameter(torch.ones(hd))
        self.ffn_norm = nn.Parameter(torch.ones(e))
        self.ffn_gate_inp = nn.Parameter(torch.empty(x, e))              # router [experts, e]
        self.ffn_gate_exps = nn.Parameter(torch.empty(x, ff, e))         # [experts, ff, e]
        self.ffn_up_exps = nn.Parameter(torch.empty(x, ff, e))
        self.ffn_down_exps = nn.Parameter(torch.empty(x, e, ff))         # [experts, e, ff]

    def attention(self, x, positions):
        c = self.c
        b, t, _ = x.shape
        hd, nh, nkv = c["head_dim"], c["n_head"], c["n_head_kv"]
        h = rms_norm(x, self.attn_norm, c["rms_eps"])
        q = (h @ self.attn_q.t().to(h.dtype)).view(b, t, nh, hd)
        k = (h @ self.attn_k.t().to(h.dtype)).view(b, t, nkv, hd)
        v = (h @ self.attn_v.t().to(h.dtype)).view(b, t, nkv, hd)
        q = rope_neox(rms_norm(q, self.attn_q_norm, c["rms_eps"]), positions, c["rope_base"])
        k = rope_neox(rms_norm(k, self.attn_k_norm, c["rms_eps"]), positions, c["rope_base"])
        # GQA as llama.cpp and Strata do it: query head i reads kv head i // (H / KV).
        k = k.repeat_interleave(nh // nkv, dim=2)
        v = v.repeat_interleave(nh // nkv, dim=2)
        o = causal_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
        return o.transpose(1, 2).reshape(b, t, nh * hd) @ self.attn_output.t().to(h.dtype)

    def moe(self, x):
        """Returns the MoE output and the load-balancing loss (Switch Transformer form:
        n_expert * sum_e fraction_routed_e * mean_prob_e, 1.0 when perfectly balanced)."""
        c = self.c
        shape = x.shape
        h = rms_norm(x, self.ffn_norm, c["rms_eps"]).reshape(-1, shape[-1])
        probs = (h.float() @ self.ffn_gate_inp.t().float()).softmax(-1)   # [N, experts], f32
        top_w, top_i = probs.topk(c["n_expert_used"], dim=-1)
        top_w = top_w / top_w.sum(-1, keepdim=True)
        out = torch.zeros_like(h, dtype=torch.float32)
        for ex in range(c["n_expert"]):
            rows, slot = (top_i == ex).nonzero(as_tuple=True)
            if rows.numel() == 0:
                continue
            xe = h[rows]
            y = F.silu(xe @ self.ffn_gate_exps[ex].t().to(h.dtype)) * (xe @ self.ffn_up_exps[ex].t().to(h.dtype))
            y = y @ self.ffn_down_exps[ex].t().to(h.dtype)
            out.index_add_(0, rows, y.float() * top_w[rows, slot, None])
        routed = F.one_hot(top_i, c["n_expert"]).float().sum(1).mean(0) / c["n_expert_used"]
        aux = c["n_expert"] * (routed * probs.mean(0)).sum()
        return out.to(x.dtype).view(shape), aux

    def forward(self, x, positions, dropout):
        x = x + F.dropout(self.attention(x, positions), dropout, self.training)
        m, aux = self.moe(x)
        return x + F.dropout(m, dropout, self.training), aux


class Qwen3Moe(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.token_embd = nn.Parameter(torch.empty(c["n_vocab"], c["n_embd"]))  # [vocab, e]
        self.blocks = nn.ModuleList(Block(c) for _ in range(c["n_layer"]))
        self.output_norm = nn.Parameter(torch.ones(c["n_embd"]))
        self.output = nn.Parameter(torch.empty(c["n_vocab"], c["n_embd"]))      # untied [vocab, e]

    def init_weights(self, seed):
        g = torch.Generator().manual_seed(seed)
        resid = 0.02 / math.sqrt(2 * self.c["n_layer"])  # residual projections start small (GPT-2)
        for name, p in self.named_parameters():
            if p.dim() == 1:
                continue
            std = resid if name.endswith(("attn_output", "ffn_down_exps")) else 0.02
            p.data.copy_(torch.randn(p.shape, generator=g) * std)

    def forward(self, tokens, dropout=0.0):
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.token_embd[tokens]
        aux_total = 0.0
        for blk in self.blocks:
            x, aux = blk(x, positions, dropout)
            aux_total = aux_total + aux
        x = rms_norm(x, self.output_norm, self.c["rms_eps"])
        return x @ self.output.t().to(x.dtype), aux_total / len(self.blocks)

    def gguf_tensors(self):
        """name -> tensor, with GGUF tensor names (what `strata convert` expects)."""
        out = {"token_embd.weight": self.token_embd, "output_norm.weight": self.output_norm,
               "output.weight": self.output}
        for i, blk in enumerate(self.blocks):
            for name, p in blk.named_parameters():
                out[f"blk.{i}.{name}.weight"] = p
        return out


def load_ids(path):
    with open(path) as f:
        return torch.tensor([int(t) for t in f.read().strip().split(",")], dtype=torch.long)


@torch.no_grad()
def perplexity(model, ids, bos, ctx, device, batch=16):
    """Mean NLL over every token of `ids`, windowed as described in the module doc."""
    model.eval()
    chunk = ctx - 1
    windows = [ids[i:i + chunk] for i in range(0, len(ids), chunk)]
    full = [w for w in windows if len(w) == chunk]
    groups = [full[i:i + batch] for i in range(0, len(full), batch)]
    groups += [[w] for w in windows if len(w) != chunk]  # the short last window runs alone
    nll, count = 0.0, 0
    for ws in groups:
        tgt = torch.stack(ws).to(device)
        inp = torch.cat([torch.full((len(ws), 1), bos, dtype=torch.long, device=device), tgt[:, :-1]], 1)
        logits, _ = model(inp)
        loss = F.cross_entropy(logits.double().reshape(-1, logits.shape[-1]), tgt.reshape(-1), reduction="sum")
        nll += loss.item()
        count += tgt.numel()
    model.train()
    return nll / count, count


def f16_bytes(t):
    t = t.detach().to("cpu", torch.float16).contiguous().flatten()
    try:
        return t.numpy().tobytes()
    except (ImportError, RuntimeError):  # torch without numpy: struct's "e" is IEEE half precision
        return struct.pack(f"<{t.numel()}e", *t.tolist())


def write_safetensors(tensors, out_dir, max_shard_bytes=15 << 20):
    """Writes float16 safetensors shards of at most max_shard_bytes (the device tool returns files
    of at most 16 MiB). Format: u64 header length, JSON header, raw little-endian data."""
    names, shards, current, size = sorted(tensors), [], [], 0
    for n in names:
        b = tensors[n].numel() * 2
        if current and size + b > max_shard_bytes:
            shards.append(current)
            current, size = [], 0
        current.append(n)
        size += b
    shards.append(current)
    paths = []
    for i, shard in enumerate(shards):
        header, blobs, offset = {}, [], 0
        for n in shard:
            data = f16_bytes(tensors[n])
            header[n] = {"dtype": "F16", "shape": list(tensors[n].shape), "data_offsets": [offset, offset + len(data)]}
            blobs.append(data)
            offset += len(data)
        hdr = json.dumps(header).encode()
        hdr += b" " * (-len(hdr) % 8)  # keeps the data 8-byte aligned, as the format recommends
        path = os.path.join(out_dir, f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors")
        with open(path, "wb") as f:
            f.write(struct.pack("<Q", len(hdr)) + hdr)
            for blob in blobs:
                f.write(blob)
        paths.append(path)
    return paths


def read_safetensors(paths):
    tensors = {}
    for path in paths:
        with open(path, "rb") as f:
            n = struct.unpack("<Q", f.read(8))[0]
            header = json.loads(f.read(n))
            data = f.read()
        for name, info in header.items():
            if name == "__metadata__":
                continue
            a, b = info["data_offsets"]
            dtype = {"F16": torch.float16, "F32": torch.float32}[info["dtype"]]
            t = torch.frombuffer(bytearray(data[a:b]), dtype=dtype).reshape(info["shape"])
            tensors[name] = t.float()
    return tensors


def eval_only(args):
    ckpt = args.eval_only
    c = json.load(open(os.path.join(ckpt, "config.json")))
    model = Qwen3Moe(c)
    files = sorted(os.path.join(ckpt, f) for f in os.listdir(ckpt) if f.endswith(".safetensors"))
    loaded = read_safetensors(files)
    with torch.no_grad():
        for name, p in model.gguf_tensors().items():
            p.copy_(loaded[name])
    device = torch.device(args.device or "cpu")
    model.to(device)
    ids = load_ids(os.path.join(args.data, "heldout.ids"))
    nll, n = perplexity(model, ids, c["bos_id"], args.ctx or c["context_length"], device, batch=4)
    print(json.dumps({"heldout_nll": nll, "heldout_ppl": math.exp(nll), "tokens": n, "ctx": args.ctx or c["context_length"]}))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, help="folder with train/valid/heldout/chat .ids and tokenizer.json")
    ap.add_argument("--out", help="folder for the checkpoint, config.json and results.json")
    ap.add_argument("--eval-only", help="evaluate this checkpoint folder on heldout.ids and exit")
    ap.add_argument("--ctx", type=int, default=0, help="perplexity window (default: the context length)")
    ap.add_argument("--device", default="")
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--dropout", type=float, default=0.1)
    ap.add_argument("--chat-fraction", type=float, default=0.2, help="share of sequences drawn from chat.ids")
    ap.add_argument("--aux-weight", type=float, default=0.01)
    ap.add_argument("--eval-every", type=int, default=100)
    ap.add_argument("--max-seconds", type=float, default=360, help="stop training after this long")
    ap.add_argument("--smoke", action="store_true", help="tiny model, few steps: checks the script runs")
    ap.add_argument("--seed", type=int, default=1611)
    args = ap.parse_args()
    if args.eval_only:
        return eval_only(args)

    torch.manual_seed(args.seed)
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    tok = json.load(open(os.path.join(args.data, "tokenizer.json")))
    bos = tok["tokens"].index(tok["bos"])
    c = default_config(len(tok["tokens"]))
    if args.smoke:
        c.update(n_embd=64, n_layer=2, n_head=2, n_head_kv=1, head_dim=32, n_ff_expert=32, context_length=64)
    c["bos_id"] = bos
    T = c["context_length"]
    streams = {n: load_ids(os.path.join(args.data, f"{n}.ids")).to(device) for n in ("train", "chat", "valid", "heldout")}

    model = Qwen3Moe(c)
    model.init_weights(args.seed)
    model.to(device)
    n_params = sum(p.numel() for p in model.parameters())
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95), **({"fused": True} if device.type == "cuda" else {}))
    warmup = max(1, args.steps // 30)
    lr_at = lambda s: args.lr * (s / warmup if s < warmup else 0.1 + 0.45 * (1 + math.cos(math.pi * (s - warmup) / (args.steps - warmup))))
    gen = torch.Generator(device=device).manual_seed(args.seed)
    bos_col = torch.full((args.batch, 1), bos, dtype=torch.long, device=device)
    offsets = torch.arange(T, device=device)

    def batch():
        # Each sequence: BOS, then T-1 consecutive ids from a random place in train or chat;
        # targets are those ids and the one after them.
        use_chat = torch.rand(args.batch, generator=gen, device=device) < args.chat_fraction
        starts = {n: torch.randint(0, len(streams[n]) - T, (args.batch,), generator=gen, device=device) for n in ("train", "chat")}
        tr = streams["train"][starts["train"][:, None] + offsets]
        ch = streams["chat"][starts["chat"][:, None] + offsets]
        tgt = torch.where(use_chat[:, None], ch, tr)
        return torch.cat([bos_col, tgt[:, :-1]], 1), tgt

    log, best = [], (float("inf"), None, 0)
    t0 = time.time()
    step = 0
    print(f"params {n_params / 1e6:.2f} M, config {c}", flush=True)
    for step in range(1, args.steps + 1):
        for grp in opt.param_groups:
            grp["lr"] = lr_at(step)
        inp, tgt = batch()
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
            logits, aux = model(inp, args.dropout)
            ce = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), tgt.reshape(-1))
        loss = ce + args.aux_weight * aux
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        last = step == args.steps or time.time() - t0 > args.max_seconds
        if step % args.eval_every == 0 or last:
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
                vnll, _ = perplexity(model, streams["valid"].cpu(), bos, T, device, batch=32)
            entry = {"step": step, "seconds": round(time.time() - t0, 1), "train_ce": round(ce.item(), 4),
                     "aux": round(float(aux.detach()), 4), "valid_nll": round(vnll, 4)}
            log.append(entry)
            print(json.dumps(entry), flush=True)
            if vnll < best[0]:  # early stopping on the validation chapters (never the held-out ones)
                best = (vnll, {k: v.detach().clone() for k, v in model.state_dict().items()}, step)
        if last:
            break
    train_seconds = time.time() - t0
    model.load_state_dict(best[1])

    # The checkpoint is float16; round the weights to it so the evaluation below sees what Strata
    # will load (before its own Q8_0/F16/F32 conversion).
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p.half().float())
    hnll, n_tok = perplexity(model, streams["heldout"].cpu(), bos, T, device)
    results = {"heldout_nll": hnll, "heldout_ppl": math.exp(hnll), "heldout_tokens": n_tok, "ctx": T,
               "best_step": best[2], "steps_run": step, "train_seconds": round(train_seconds, 1),
               "params": n_params, "torch": torch.__version__,
               "device": torch.cuda.get_device_name() if device.type == "cuda" else "cpu", "log": log}
    print(json.dumps({k: v for k, v in results.items() if k != "log"}), flush=True)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        write_safetensors({k: v for k, v in model.gguf_tensors().items()}, args.out)
        json.dump(c, open(os.path.join(args.out, "config.json"), "w"), indent=1)
        json.dump(results, open(os.path.join(args.out, "results.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
