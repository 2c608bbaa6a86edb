#!/usr/bin/env python3
"""One streaming chat completion against an OpenAI-compatible server; prints the client-side
decode speed: (completion tokens - 1) / (time of the last content chunk - time of the first), the
rate at which the tokens after the first arrive, which is what `strata bench`'s tg measures on
the engine (the token count from the stream's usage chunk: a chunk can hold more than one token
when a character spans several). Also prints the server's timings.predicted_per_second when the
stream carries it.
  stream_client.py PORT MAX_TOKENS"""
import http.client
import json
import sys
import time

port, max_tokens = int(sys.argv[1]), int(sys.argv[2])
body = json.dumps({"model": "any", "stream": True, "stream_options": {"include_usage": True}, "max_tokens": max_tokens, "ignore_eos": True, "temperature": 0,
                   "messages": [{"role": "user", "content": "Write a long story about a lighthouse keeper."}]})
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
resp = conn.getresponse()
if resp.status != 200:
    sys.exit(f"HTTP {resp.status}: {resp.read()[:300]!r}")
stamps, server_rate, tokens = [], None, None
for raw in resp:
    line = raw.decode("utf-8", "replace").strip()
    if not line.startswith("data: ") or line == "data: [DONE]":
        continue
    event = json.loads(line[6:])
    for choice in event.get("choices", []):
        if choice.get("delta", {}).get("content"):
            stamps.append(time.monotonic())
    if event.get("usage"):
        tokens = event["usage"].get("completion_tokens", tokens)
    timings = event.get("timings")
    if timings and timings.get("predicted_per_second"):
        server_rate = timings["predicted_per_second"]
if len(stamps) < 2:
    sys.exit(f"only {len(stamps)} content chunks")
if tokens is None:
    sys.exit("no usage chunk in the stream")
rate = (tokens - 1) / (stamps[-1] - stamps[0])
print(f"client {rate:.2f} tok/s ({tokens} tokens in {len(stamps)} chunks); server timings {server_rate}")
