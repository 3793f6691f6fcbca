// Shared by the tests of the account flows (update-payment-method, billing, documents,
// renewal): a sandbox customer with service, bills and usage (`seed-demo-data`), a flow link
// of a scope, a partner's host page on another site that records the flow's messages, and
// screenshots at the two widths every flow is checked at.

import assert from "node:assert/strict";
import path from "node:path";
import { api, artifacts, baseUrl, collectErrors, collectSetCookies, serveHostPage } from "./harness.mjs";
import { assertAccessible } from "./axe.mjs";

/// A sandbox customer of `app` whose service is active: a test card on file, a year of usage,
/// bills (the newest usually open). Returns {uuid, token, account}.
export async function seededCustomer(app, email) {
  const created = await api("POST", "/v1/app/accounts", app.token, { email, first_name: "Ana", last_name: "Díaz" });
  const { token } = await api("POST", `/v1/app/accounts/${created.uuid}/token`, app.token);
  const account = await api("POST", "/v1/account/sandbox/seed-demo-data", token);
  assert.equal(account.status, "active", `seeded: ${JSON.stringify(account.status)}`);
  return { uuid: created.uuid, token, account };
}

/// Saves `number` as the customer's card the way the card component does: a payment session,
/// the card to the processor, its id to the account.
export async function saveCard(token, number) {
  const session = await api("POST", "/v1/account/billing/payment-session", token);
  const r = await fetch(`${baseUrl}/processor/v1/payment_methods`, {
    method: "POST",
    headers: { authorization: `Bearer ${session.publishable_key}`, "content-type": "application/json" },
    body: JSON.stringify({
      client_secret: session.client_secret,
      card: { number, exp_month: 12, exp_year: 2034, cvc: "123" },
      billing_details: { postal_code: "78701" },
    }),
  });
  const card = await r.json();
  assert.ok(r.ok, `processor: ${JSON.stringify(card)}`);
  return api("POST", "/v1/account/billing/ensure-payment-method-added", token, { payment_method_id: card.id });
}

export async function flowLink(app, accountUuid, scope) {
  const link = await api("POST", `/v1/app/accounts/${accountUuid}/flow-login`, app.token, { scope });
  return link.login_link;
}

/// The partner's page (another site than the service) framing `link`; it keeps every message
/// it receives in `window.__messages`, and sizes the frame to the flow's height as the README's
/// host snippet does.
export function hostPage(link, title) {
  return serveHostPage(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Partner app</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body { margin: 0; } iframe { border: 0; width: 100%; height: 100vh; display: block; }</style>
<script>
  window.__messages = [];
  window.addEventListener("message", (e) => {
    window.__messages.push({ origin: e.origin, data: e.data });
    if (e.data && e.data.type === "service-flow-resize") document.getElementById("flow").style.height = e.data.height + "px";
  });
</script></head>
<body><iframe id="flow" title="${title}" src="${link}"></iframe></body></html>`);
}

/// Keeps a screenshot of the page, after axe-core found no WCAG A/AA violation in the flow's
/// frame (or the page itself when the flow is opened directly): every screen a test shows is
/// checked.
export async function shot(page, name) {
  const frame = page.frames().find((f) => f !== page.mainFrame() && f.url().startsWith(baseUrl)) ?? page.mainFrame();
  await assertAccessible(frame, name);
  // A frame from another site is painted only within the viewport: the page grows to show
  // all of the flow, then returns to its size.
  const size = page.viewportSize();
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  if (height > size.height) await page.setViewportSize({ width: size.width, height });
  await page.screenshot({ path: path.join(artifacts, name), fullPage: true });
  if (height > size.height) await page.setViewportSize(size);
}

/// Asserts that the flow told its host its height (`service-flow-resize`), and that the host's
/// frame, sized by it, now shows the whole flow without a scroll of its own.
export async function assertResized(page) {
  await page.waitForFunction(
    () => window.__messages.some((m) => m.data && m.data.type === "service-flow-resize" && m.data.height > 0),
    null,
    { timeout: 5_000 },
  );
  const frame = page.frames().find((f) => f !== page.mainFrame() && f.url().startsWith(baseUrl));
  await page.waitForFunction(
    async () => {
      const last = window.__messages.filter((m) => m.data && m.data.type === "service-flow-resize").pop();
      return Math.abs(document.getElementById("flow").getBoundingClientRect().height - last.data.height) < 2;
    },
    null,
    { timeout: 5_000 },
  );
  // The flow may still be growing (a step's data arriving): each change posts a new height,
  // so the frame catches up within a moment.
  let content = 0;
  let viewport = 0;
  for (const deadline = Date.now() + 5_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
    [content, viewport] = await frame.evaluate(() => [Math.ceil(document.body.getBoundingClientRect().height), window.innerHeight]);
    if (Math.abs(content - viewport) <= 2) break;
  }
  assert.ok(Math.abs(content - viewport) <= 2, `the frame fits the flow: content ${content}, frame ${viewport}`);
}

/// The flow's messages to its host so far.
export async function messages(page) {
  return page.evaluate(() => window.__messages.map((m) => m.data));
}

/// Waits for the host to receive `service-flow-close`, and returns it.
export async function closeMessage(page) {
  await page.waitForFunction(
    () => window.__messages.some((m) => m.data && m.data.type === "service-flow-close"),
    null,
    { timeout: 5_000 },
  );
  return (await messages(page)).find((m) => m.type === "service-flow-close");
}

/// Records the WASM files the page fetches from the service, to check that a flow downloads
/// only its own bundle.
export function watchWasm(page) {
  const files = [];
  page.on("request", (request) => {
    const url = new URL(request.url());
    if (url.pathname.startsWith("/pkg/") && url.pathname.endsWith(".wasm")) files.push(path.basename(url.pathname));
  });
  return files;
}

/// Asserts that the page fetched its flow's own bundle (`flow-<scope>.wasm`) and no other WASM.
export function assertOnlyOwnBundle(files, scope) {
  assert.ok(files.length > 0, "the flow's bundle was loaded");
  assert.deepEqual([...new Set(files)], [`flow-${scope}.wasm`], "only the flow's own bundle is downloaded");
}

/// Asserts that nothing on the page is wider than its viewport.
export async function assertFits(page, flow) {
  const width = await flow.locator("main").evaluate(() => document.documentElement.scrollWidth);
  const viewport = page.viewportSize().width;
  assert.ok(width <= viewport, `nothing is wider than the screen: ${width} > ${viewport}`);
}

/// Console errors but the browser's own reports of the answers a test provokes on purpose
/// (`statuses`, e.g. 402 for a declined card) and of 429 (tests click faster than people).
export function appErrors(errors, ...statuses) {
  const expected = new RegExp(`status of (${["429", ...statuses.map(String)].join("|")})`);
  return errors.filter((e) => !expected.test(e));
}

/// Opens the `scope` flow of the account `accountUuid` inside a partner's host page on another
/// site, in a new browser context `width` px wide, and waits until the flow has hydrated.
/// `prepare(page)` runs before the page loads (to intercept requests, say). Returns the host,
/// the context and page, the flow's frame, and what the page recorded: console errors,
/// `Set-Cookie` headers and the WASM files fetched.
export async function openFlow(browser, app, accountUuid, scope, title, width, { height = 900, prepare } = {}) {
  const host = await hostPage(await flowLink(app, accountUuid, scope), title);
  const context = await browser.newContext({ viewport: { width, height } });
  const setCookies = collectSetCookies(context);
  const page = await context.newPage();
  const errors = collectErrors(page);
  const wasm = watchWasm(page);
  if (prepare) await prepare(page);
  await page.goto(host.url);
  const flow = page.frameLocator("#flow");
  await flow.locator("main[data-hydrated=true]").waitFor({ timeout: 30_000 });
  await assertResized(page);
  return { host, context, page, flow, errors, setCookies, wasm };
}

/// An ISO date (`2027-03-01`) as the flows write it (`March 1, 2027`).
export function longDate(iso) {
  const [y, m, d] = iso.split("-").map(Number);
  const month = new Date(Date.UTC(y, m - 1, d)).toLocaleString("en-US", { month: "long", timeZone: "UTC" });
  return `${month} ${d}, ${y}`;
}
