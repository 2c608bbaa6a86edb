#include "server/web_page.h"

namespace strata::server {

namespace {
// The page talks to /v1/chat/completions with stream: true and reads the SSE chunks itself
// (fetch + ReadableStream), so the stop button is an AbortController: aborting closes the
// connection and the server cancels the generation.
constexpr std::string_view kPage = R"HTML(<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Strata</title>
<style>
 body{font:15px/1.45 system-ui,sans-serif;margin:0;display:flex;height:100vh;color:#222;background:#fafafa}
 main{flex:1;display:flex;flex-direction:column;min-width:0}
 header{padding:8px 14px;border-bottom:1px solid #ddd;display:flex;gap:12px;align-items:center;background:#fff}
 header b{font-size:17px} #model{color:#555} #speed{margin-left:auto;color:#555;font-variant-numeric:tabular-nums}
 #log{flex:1;overflow-y:auto;padding:14px}
 .msg{max-width:860px;margin:0 auto 12px;padding:8px 12px;border-radius:8px;white-space:pre-wrap;word-wrap:break-word}
 .user{background:#e3efff} .assistant{background:#fff;border:1px solid #e4e4e4} .error{background:#ffe9e9}
 details{color:#666;margin-bottom:6px} summary{cursor:pointer}
 .tool{font-family:ui-monospace,monospace;font-size:13px;background:#f3f0ff;padding:6px;border-radius:6px;margin-top:6px}
 form{display:flex;gap:8px;padding:10px 14px;border-top:1px solid #ddd;background:#fff}
 textarea{flex:1;resize:vertical;min-height:44px;font:inherit;padding:6px}
 button{font:inherit;padding:6px 14px}
 aside{width:230px;border-left:1px solid #ddd;padding:10px;font-size:13px;background:#fff;overflow-y:auto}
 aside table{width:100%;border-collapse:collapse} aside td{padding:2px 0} aside td+td{text-align:right;font-variant-numeric:tabular-nums}
 aside input{width:100%;box-sizing:border-box}
</style></head><body>
<main>
 <header><b>Strata</b><span id="model">…</span><span id="speed"></span></header>
 <div id="log"></div>
 <form id="form"><textarea id="input" placeholder="Message (Enter sends, Shift+Enter for a new line)"></textarea>
  <button id="send" type="submit">Send</button><button id="stop" type="button" disabled>Stop</button></form>
</main>
<aside>
 <h4>Server</h4><table id="metrics"></table>
 <h4>Settings</h4>
 <label>System message<textarea id="system" rows="3" style="width:100%"></textarea></label>
 <label>Temperature <input id="temp" type="number" step="0.1" min="0" max="2" value="0.7"></label>
 <label>Max tokens <input id="maxtok" type="number" min="1" value="512"></label>
 <label>API key (if the server needs one) <input id="key" type="password"></label>
 <p><button id="clear" type="button">New conversation</button></p>
</aside>
<script>
"use strict";
const $ = id => document.getElementById(id);
const history = [];
let controller = null;
$("key").value = localStorage.getItem("strata-key") || "";
$("key").onchange = () => localStorage.setItem("strata-key", $("key").value);
function headers() {
  const h = {"Content-Type": "application/json"};
  if ($("key").value) h["Authorization"] = "Bearer " + $("key").value;
  return h;
}
function bubble(cls, text) {
  const d = document.createElement("div");
  d.className = "msg " + cls; d.textContent = text || "";
  $("log").appendChild(d); $("log").scrollTop = $("log").scrollHeight;
  return d;
}
async function loadModel() {
  try {
    const r = await fetch("/v1/models", {headers: headers()});
    const j = await r.json();
    $("model").textContent = j.data ? j.data[0].id + " · ctx " + j.data[0].meta.n_ctx : (j.error ? j.error.message : "");
  } catch (e) { $("model").textContent = "server unreachable"; }
}
const shown = {strata_slots_busy: "busy slots", strata_queue_depth: "queued", strata_generated_tokens_total: "tokens out",
  strata_prompt_tokens_total: "tokens in", strata_prompt_tokens_cached_total: "cached in",
  strata_generation_tokens_per_second: "gen tok/s", strata_prompt_tokens_per_second: "prompt tok/s",
  strata_kv_cache_used_tokens: "KV used", strata_kv_cache_capacity_tokens: "KV size",
  strata_batch_sequences_last: "batch size"};
// Rows the hardware adds when present: the expert tiers (a model larger than VRAM) and each GPU.
const hardware = {strata_expert_hit_rate: ["expert hits", v => (100 * v).toFixed(1) + "%"],
  strata_gpu_memory_used_bytes: ["GPU memory", v => (v / 2 ** 30).toFixed(2) + " GiB"],
  strata_gpu_utilization_percent: ["GPU busy", v => v.toFixed(0) + "%"],
  strata_gpu_temperature_celsius: ["GPU temp", v => v.toFixed(0) + " °C"],
  strata_gpu_power_watts: ["GPU power", v => v.toFixed(0) + " W"]};
async function loadMetrics() {
  try {
    const r = await fetch("/metrics", {headers: headers()});
    if (!r.ok) return;
    const rows = [], row = (k, v) => "<tr><td>" + k + "</td><td>" + v + "</td></tr>";
    for (const line of (await r.text()).split("\n")) {
      if (!line || line[0] === "#") continue;
      const cut = line.lastIndexOf(" ");  // labels may hold spaces (a GPU's name)
      const name = line.slice(0, cut).split("{")[0], value = line.slice(cut + 1);
      if (shown[name]) rows.push(row(shown[name], (+value).toFixed(value.includes(".") ? 1 : 0)));
      else if (hardware[name]) rows.push(row(hardware[name][0], hardware[name][1](+value)));
    }
    $("metrics").innerHTML = rows.join("");
  } catch (e) {}
}
async function send(text) {
  history.push({role: "user", content: text});
  bubble("user", text);
  const box = bubble("assistant", "");
  const think = document.createElement("details"), thinkText = document.createElement("div");
  think.innerHTML = "<summary>reasoning</summary>"; think.appendChild(thinkText);
  const body = document.createElement("span");
  box.append(think, body); think.hidden = true;
  const messages = ($("system").value ? [{role: "system", content: $("system").value}] : []).concat(history);
  controller = new AbortController();
  $("send").disabled = true; $("stop").disabled = false;
  let content = "", thinking = "", calls = [], frame = 0;
  // The text goes to the page once per frame, not once per token: at a thousand tokens a second a
  // layout per token kept the page too busy to take a click on Stop.
  const render = () => {
    frame = 0; body.textContent = content; thinkText.textContent = thinking;
    $("log").scrollTop = $("log").scrollHeight;
  };
  const later = () => { if (!frame) frame = requestAnimationFrame(render); };
  try {
    const r = await fetch("/v1/chat/completions", {method: "POST", headers: headers(), signal: controller.signal,
      body: JSON.stringify({messages, stream: true, stream_options: {include_usage: true},
        temperature: +$("temp").value, max_tokens: +$("maxtok").value})});
    if (!r.ok) { const j = await r.json(); throw new Error(j.error ? j.error.message : r.statusText); }
    const reader = r.body.getReader(), dec = new TextDecoder();
    let buf = "";
    for (;;) {
      const {done, value} = await reader.read();
      if (done) break;
      buf += dec.decode(value, {stream: true});
      let cut;
      while ((cut = buf.indexOf("\n\n")) >= 0) {
        const ev = buf.slice(0, cut); buf = buf.slice(cut + 2);
        if (!ev.startsWith("data: ")) continue;
        const data = ev.slice(6);
        if (data === "[DONE]") continue;
        const j = JSON.parse(data);
        if (j.error) throw new Error(j.error.message);
        if (j.timings) $("speed").textContent = j.timings.prompt_n + " prompt tok at " + j.timings.prompt_per_second.toFixed(1) +
          " tok/s · " + j.timings.predicted_n + " tok at " + j.timings.predicted_per_second.toFixed(1) + " tok/s";
        const d = j.choices && j.choices[0] && j.choices[0].delta;
        if (!d) continue;
        if (d.reasoning_content) { think.hidden = false; thinking += d.reasoning_content; later(); }
        if (d.content) { content += d.content; later(); }
        for (const c of d.tool_calls || []) {
          calls[c.index] = calls[c.index] || {id: c.id, type: "function", function: {name: "", arguments: ""}};
          if (c.function.name) calls[c.index].function.name = c.function.name;
          calls[c.index].function.arguments += c.function.arguments || "";
          const t = document.createElement("div"); t.className = "tool";
          t.textContent = "tool call: " + calls[c.index].function.name + "(" + calls[c.index].function.arguments + ")";
          box.appendChild(t);
          later();
        }
      }
    }
  } catch (e) {
    if (e.name !== "AbortError") bubble("error", String(e.message || e));
  }
  if (frame) cancelAnimationFrame(frame);
  render();
  const reply = {role: "assistant", content};
  if (calls.length) reply.tool_calls = calls;
  history.push(reply);
  controller = null;
  $("send").disabled = false; $("stop").disabled = true;
}
$("form").onsubmit = e => { e.preventDefault(); const t = $("input").value.trim(); if (!t || controller) return; $("input").value = ""; send(t); };
$("input").onkeydown = e => { if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); $("form").requestSubmit(); } };
$("stop").onclick = () => { if (controller) controller.abort(); };
$("clear").onclick = () => { history.length = 0; $("log").innerHTML = ""; };
loadModel(); loadMetrics(); setInterval(loadMetrics, 2000);
</script></body></html>
)HTML";
}  // namespace

std::string_view web_page_html() { return kPage; }

}  // namespace strata::server
