// Each flow's first load on a mid-range phone: Chromium slowed 4x and on a slow 4G network
// (150 ms latency, 1.6 Mbps down, 750 kbps up), with nothing cached. A flow is interactive once
// its page is hydrated (its buttons answer) within 3 seconds of the navigation's start; the
// time until its first screen shows (the account read) is printed too, with the bytes the
// bundle took over the network.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { api, collectErrors, createApp, launchBrowser, waitForServer } from "../lib/harness.mjs";
import { appErrors, flowLink, seededCustomer } from "../lib/accounts.mjs";

const BUDGET_MS = 3_000;
const SLOW_4G = {
  offline: false,
  latency: 150,
  downloadThroughput: (1.6 * 1_000_000) / 8,
  uploadThroughput: (750 * 1_000) / 8,
};

let browser;
let app;

before(async () => {
  await waitForServer();
  app = createApp("Throttled Load Energy");
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
});

/// Marks, in the page's own clock (0 is the navigation's start), when the flow is hydrated and
/// when its first screen replaces the loading state (the account read).
function markInteractive() {
  const marks = (window.__marks = {});
  const observer = new MutationObserver(() => {
    const main = document.querySelector("main.flow");
    if (!main) return;
    if (marks.hydrated === undefined && main.dataset.hydrated === "true") marks.hydrated = performance.now();
    const loading = [...main.querySelectorAll("[role=status]")].some((e) => e.textContent.startsWith("Loading your details"));
    if (marks.hydrated !== undefined && marks.ready === undefined && !loading) {
      marks.ready = performance.now();
      observer.disconnect();
    }
  });
  observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
}

async function measure(scope, accountUuid) {
  const link = await flowLink(app, accountUuid, scope);
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  const page = await context.newPage();
  const errors = collectErrors(page);
  try {
    const cdp = await context.newCDPSession(page);
    await cdp.send("Network.enable");
    await cdp.send("Network.setCacheDisabled", { cacheDisabled: true });
    await cdp.send("Network.emulateNetworkConditions", SLOW_4G);
    await cdp.send("Emulation.setCPUThrottlingRate", { rate: 4 });
    // What the flow's bundle took over the network (its WASM and JS), as the server sent it.
    const urls = new Map();
    const bundle = { bytes: 0, encoding: new Set() };
    cdp.on("Network.responseReceived", ({ requestId, response }) => {
      if (/\/pkg\/[^/]+\.(wasm|js)$/.test(new URL(response.url).pathname)) {
        urls.set(requestId, response.url);
        const encoding = Object.entries(response.headers).find(([k]) => k.toLowerCase() === "content-encoding");
        bundle.encoding.add(encoding ? encoding[1] : "identity");
      }
    });
    cdp.on("Network.loadingFinished", ({ requestId, encodedDataLength }) => {
      if (urls.has(requestId)) bundle.bytes += encodedDataLength;
    });
    await page.addInitScript(markInteractive);
    await page.goto(link);
    await page.locator("main[data-hydrated=true]").waitFor({ timeout: 30_000 });
    await page.waitForFunction(() => window.__marks.ready !== undefined, null, { timeout: 30_000 });
    const marks = await page.evaluate(() => window.__marks);
    const line =
      `${scope.padEnd(22)} interactive ${Math.round(marks.hydrated)} ms, first screen ${Math.round(marks.ready)} ms` +
      ` (bundle ${bundle.bytes} bytes over the network, ${[...bundle.encoding].join("/")}; 4x CPU, slow 4G)`;
    console.log(line);
    assert.ok(urls.size >= 2, `the bundle's WASM and JS were fetched: ${[...urls.values()]}`);
    assert.ok(marks.hydrated < BUDGET_MS, `${scope}: interactive after ${Math.round(marks.hydrated)} ms (budget ${BUDGET_MS})`);
    // A seeded account is months from its renewal window: the renewal flow asks, hears 409
    // `renewal_not_eligible` and says when renewal opens, as it should.
    assert.deepEqual(appErrors(errors, ...(scope === "renewal" ? [409] : [])), []);
  } finally {
    await context.close();
  }
}

test("the enrollment flow is interactive within 3 s on a throttled phone", async () => {
  const account = await api("POST", "/v1/app/accounts", app.token, { email: "throttled-enroll@example.com", first_name: "Ana", last_name: "Díaz" });
  await measure("enrollment", account.uuid);
});

for (const scope of ["update-payment-method", "billing", "documents", "renewal"]) {
  test(`the ${scope} flow is interactive within 3 s on a throttled phone`, async () => {
    const customer = await seededCustomer(app, `throttled-${scope}@example.com`);
    await measure(scope, customer.uuid);
  });
}
