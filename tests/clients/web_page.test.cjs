// The chat page at / in headless Chromium (Debian's, driven by playwright-core; Playwright never
// downloads a browser here): type a message, send it, and see the streamed reply arrive; stop a
// long reply with the Stop button and see the server cancel it.
// The screenshot goes to $CLIENTS_ARTIFACTS (default: the system temp dir).
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { chromium } = require("playwright-core");
const { startServer } = require("./server.cjs");

const apiKey = "page-test-key";
const artifacts = process.env.CLIENTS_ARTIFACTS || os.tmpdir();
let server, context, profile;

test.before(async () => {
  // A context room enough for the long reply the Stop test interrupts.
  server = await startServer({ apiKey, ctxSize: 4096 });
  profile = fs.mkdtempSync(path.join(os.tmpdir(), "strata-chromium-"));
  // The background-networking flags matter: on a closed network Chromium otherwise keeps
  // trying Google's hosts. A fresh profile (--user-data-dir, which Playwright takes as the
  // first argument here) keeps old state out of the test.
  context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    viewport: { width: 1100, height: 640 },
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
});
test.after(async () => {
  if (context) await context.close();
  if (server) await server.stop();
  if (profile) fs.rmSync(profile, { recursive: true, force: true });
});

test("the page streams a reply to a typed message", async () => {
  const page = await context.newPage();
  // The page reads its API key from localStorage, so it is set before any of its scripts run.
  await page.addInitScript((key) => localStorage.setItem("strata-key", key), apiKey);
  await page.goto(server.baseURL + "/");
  await page.locator("#model").filter({ hasText: "strata-kjv-moe" }).waitFor({ timeout: 10000 });
  // The page draws the reply once per frame; ignore_eos (a server extension) makes it a few hundred
  // tokens, so that it spans many frames however fast the model is.
  await page.route("**/v1/chat/completions", (route) => {
    const body = JSON.parse(route.request().postData());
    route.continue({ postData: JSON.stringify({ ...body, ignore_eos: true }) });
  });
  await page.fill("#temp", "0");
  await page.fill("#maxtok", "400");
  await page.fill("#input", "Tell me of the creation of light.");
  // Count changes to the conversation: a streamed reply changes it frame after frame, not once.
  await page.evaluate(() => {
    window.logChanges = 0;
    new MutationObserver((m) => { window.logChanges += m.length; })
      .observe(document.getElementById("log"), { subtree: true, childList: true, characterData: true });
  });
  await page.click("#send");

  const reply = page.locator(".msg.assistant span");
  await page.locator(".msg.user").filter({ hasText: "creation of light" }).waitFor();
  // The reply is complete once Send is enabled again.
  await page.waitForFunction(() => document.querySelector(".msg.assistant span")?.textContent.length > 0);
  await page.locator("#send:not([disabled])").waitFor({ timeout: 60000 });
  const changes = await page.evaluate(() => window.logChanges);
  assert.ok(changes > 5, `the conversation changed only ${changes} times: the reply was not streamed`);
  assert.equal(await page.locator(".msg.error").count(), 0, "the page showed an error");
  const text = (await reply.textContent()).trim();
  assert.ok(text.length > 0, "empty reply");
  await page.locator("#speed").filter({ hasText: "tok/s" }).waitFor();
  // The metrics panel polls /metrics every 2 s; once it counts the reply, the page is complete.
  await page.waitForFunction(() => [...document.querySelectorAll("#metrics tr")]
    .some((r) => r.cells[0].textContent === "tokens out" && Number(r.cells[1].textContent) > 0), null, { timeout: 30000 });
  fs.mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: path.join(artifacts, "web-page.png") });
});

// Reads one unlabelled Prometheus sample from /metrics (0 when absent).
async function metric(name) {
  const r = await fetch(server.baseURL + "/metrics", { headers: { Authorization: "Bearer " + apiKey } });
  const line = (await r.text()).split("\n").find((l) => l.startsWith(name + " "));
  return line ? Number(line.split(" ")[1]) : 0;
}

test("the Stop button ends a streaming reply and the server cancels it", async () => {
  const page = await context.newPage();
  await page.addInitScript((key) => localStorage.setItem("strata-key", key), apiKey);
  // The built-in model ends its replies after a few dozen tokens; ignore_eos (a server extension)
  // keeps this one going for thousands, so it is still streaming when Stop is pressed.
  await page.route("**/v1/chat/completions", (route) => {
    const body = JSON.parse(route.request().postData());
    route.continue({ postData: JSON.stringify({ ...body, ignore_eos: true }) });
  });
  await page.goto(server.baseURL + "/");
  await page.locator("#model").filter({ hasText: "strata-kjv-moe" }).waitFor({ timeout: 10000 });
  const cancelledBefore = await metric('strata_requests_finished_total{outcome="cancelled"}');
  await page.fill("#temp", "0");
  await page.fill("#maxtok", "4000");
  await page.fill("#input", "Recite the book of Genesis.");
  await page.click("#send");

  // Stop once some of the reply has streamed in.
  await page.waitForFunction(() => document.querySelector(".msg.assistant span")?.textContent.length > 40, null,
    { timeout: 30000 });
  // Generous limits: a busy machine slows the page, not the behaviour checked.
  await page.click("#stop", { timeout: 30000 });
  await page.locator("#send:not([disabled])").waitFor({ timeout: 30000 });
  assert.ok(await page.locator("#stop").isDisabled(), "Stop stays enabled after stopping");
  assert.equal(await page.locator(".msg.error").count(), 0, "stopping showed an error");

  // The reply stops growing, well short of its 4000 tokens.
  const reply = page.locator(".msg.assistant span");
  const length = (await reply.textContent()).length;
  await page.waitForTimeout(500);
  assert.equal((await reply.textContent()).length, length, "the reply kept growing after Stop");

  // The server saw the client go away: the request ends as cancelled and the slot is free.
  let cancelled = cancelledBefore;
  for (let i = 0; i < 50 && cancelled === cancelledBefore; i++) {
    await new Promise((res) => setTimeout(res, 100));
    cancelled = await metric('strata_requests_finished_total{outcome="cancelled"}');
  }
  assert.equal(cancelled, cancelledBefore + 1, "the server did not cancel the stopped request");
  assert.equal(await metric("strata_slots_busy"), 0);
  assert.ok(await metric("strata_generated_tokens_total") < 4000, "the stopped request generated every token");

  // The page is usable again: a new message gets a reply.
  await page.unroute("**/v1/chat/completions");
  await page.fill("#maxtok", "20");
  await page.fill("#input", "And then?");
  await page.click("#send");
  await page.waitForFunction(() => document.querySelectorAll(".msg.assistant span")[1]?.textContent.length > 0, null,
    { timeout: 30000 });
  await page.locator("#send:not([disabled])").waitFor({ timeout: 30000 });
  fs.mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: path.join(artifacts, "web-page-stopped.png") });
});
