// A live customer from sign-up to a paid bill, on a deployment of its own: a live app made
// ready for customers, with the card processor's stand-in (localstripe) and a credit bureau
// that follows docs/credit-bureau.md. The customer enrolls in the embedded flow with a card
// typed into the processor's component; the bureau is asked and approves; the operator records
// the utility's acceptance and the start of service in the worklist; the bills are auto-paid
// through the processor; then the processor's webhook says a payment failed, and the partner
// sees `account.payment_failed`. The customer changes to a card whose bank checks each payment:
// paying the bill now is held for that check, the e-mailed link opens the page where the bank's
// check runs in the processor's component, and the processor's webhook settles the bill.
//
// A live account's clock is the service's, so months pass the way they do in production: the
// deployment is stopped and started again with its clock (`SWITCHBOARD_CLOCK_START`) on the
// day after service starts, then after two bills' due dates, on the same database.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { artifacts, collectErrors, launchBrowser, root, serveHostPage, servePartnerSite, serverBin } from "../lib/harness.mjs";
import { startFakeBureau } from "../lib/fake-bureau.mjs";
import { assertAccessible } from "../lib/axe.mjs";
import { startMailSink } from "../lib/mail-sink.mjs";

const processor = process.env.LOCALSTRIPE_URL ?? "http://127.0.0.1:8420";
const bureauSecret = "bureau-secret-for-the-browser-tests";
const webhookSecret = "whsec_liveCustomerSigningSecret0123";
const suffix = `${Date.now()}${Math.floor(Math.random() * 1e6)}`;
const publishable = `pk_test_${suffix}`;
const secretKey = `sk_test_${suffix}`;
const operatorEmail = `ops-${suffix}@switchboard.example`;

let dir;
let env;
let base;
let server;
let bureau;
let mail;
let browser;

async function freePort() {
  const s = createServer();
  await new Promise((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address();
  await new Promise((r) => s.close(r));
  return port;
}

/// Starts the deployment with its clock at `clockStart` (an ISO instant).
async function startServer(clockStart) {
  server = spawn(path.join(dir, "switchboard"), ["serve", "--addr", new URL(base).host], {
    cwd: dir,
    env: { ...env, SWITCHBOARD_CLOCK_START: clockStart },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`${base}/readyz`)).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error("the deployment did not become ready");
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function stopServer() {
  const exited = new Promise((r) => server.once("exit", r));
  server.kill("SIGTERM");
  await exited;
  server = null;
}

/// The deployment's command line, on its database and with its settings.
function cli(args, extra = {}) {
  return execFileSync(path.join(dir, "switchboard"), args, { cwd: dir, env: { ...env, ...extra }, encoding: "utf8" });
}

async function call(method, url, token, body) {
  const r = await fetch(`${base}${url}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await r.json();
  assert.ok(r.ok, `${method} ${url}: ${r.status} ${JSON.stringify(json)}`);
  return json;
}

/// Polls `read` until `done` holds of what it returns, or fails with the last value.
async function until(what, read, done, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    last = await read();
    if (done(last)) return last;
    if (Date.now() > deadline) assert.fail(`${what}: still ${JSON.stringify(last).slice(0, 800)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/// An instant at 10:00 in Texas on `day` (YYYY-MM-DD): 16:00 UTC in winter, 15:00 in summer,
/// either way inside the business day.
function morningOf(day) {
  return `${day}T10:00:00-06:00`;
}

function addDays(day, n) {
  const d = new Date(`${day}T12:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return d.toISOString().slice(0, 10);
}

/// The next Tuesday at least a week away: a business day whichever day the suite runs.
function nextTuesday() {
  const d = new Date();
  d.setUTCDate(d.getUTCDate() + 7);
  while (d.getUTCDay() !== 2) d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString().slice(0, 10);
}

before(async () => {
  const r = await fetch(`${processor}/v1/customers`).catch(() => null);
  assert.ok(r, `the card processor's stand-in is not reachable at ${processor}: start it with end2end/localstripe.sh start`);
  bureau = await startFakeBureau({ secret: bureauSecret });
  mail = await startMailSink();
  dir = mkdtempSync(path.join(os.tmpdir(), "switchboard-live-"));
  cpSync(serverBin, path.join(dir, "switchboard"));
  cpSync(path.join(root, "target", "site"), path.join(dir, "site"), { recursive: true });
  base = `http://127.0.0.1:${await freePort()}`;
  env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith("LEPTOS_") && !k.startsWith("SWITCHBOARD_") && k !== "DATABASE_URL"),
  );
  Object.assign(env, {
    DATABASE_URL: `sqlite:${path.join(dir, "switchboard.db")}`,
    SWITCHBOARD_PAYMENT_PROCESSOR_API_BASE: processor,
    SWITCHBOARD_PAYMENT_PROCESSOR_JS_URL: `${processor}/js.stripe.com/v3/`,
    SWITCHBOARD_CREDIT_BUREAU__URL: bureau.url,
    SWITCHBOARD_CREDIT_BUREAU__SECRET: bureauSecret,
    // A live app's e-mails are only sent, never listed: the test reads them as the customer would.
    SMTP_URL: mail.url,
  });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  if (server) await stopServer();
  await bureau?.close();
  await mail?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/// Types a card into the processor's component (its own inputs, inside our card container).
async function typeCard(flow, number) {
  const card = flow.locator("[data-testid=processor-card] #card-number");
  await card.locator("input[placeholder=number]").fill(number);
  await card.locator("input[placeholder=exp_month]").fill("12");
  await card.locator("input[placeholder=exp_year]").fill("34");
  await card.locator("input[placeholder=cvc]").fill("123");
  await card.locator("input[placeholder=postal_code]").fill("75201");
}

async function step(flow, name, timeout = 15_000) {
  await flow.locator(`section.steps[data-step=${name}]`).waitFor({ timeout });
}

/// A dashboard user made with the command line; returns the one-time password it prints.
function createOperator() {
  const out = cli(["users", "create", "--email", operatorEmail, "--role", "operator"]);
  const line = out.split("\n").find((l) => l.trim().startsWith("password:"));
  assert.ok(line, "the command line prints the new user's password");
  return line.trim().split(/\s+/)[1];
}

async function signIn(page, password) {
  await page.goto(`${base}/dashboard/sign-in`);
  await page.getByLabel("E-mail").fill(operatorEmail);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((u) => !u.pathname.endsWith("/sign-in"));
}

/// Records an answer of the utility for the enrollment of `esiId` in the worklist.
async function recordInWorklist(page, esiId, button, shotName) {
  await page.goto(`${base}/dashboard/utility`);
  const card = page.locator("[data-testid=submission]", { hasText: `ESI ID ${esiId}` });
  await card.waitFor();
  await page.screenshot({ path: path.join(artifacts, shotName), fullPage: true });
  await card.getByRole("button", { name: button }).click();
  await page.locator("text=The utility's answer was recorded").waitFor();
}

/// An event of the processor about its payment `paymentIntent`, signed now with our secret.
async function processorSays(appUuid, type, object) {
  const body = JSON.stringify({ id: `evt_${suffix}_${type}_${object.id}`, type, data: { object } });
  const t = Math.floor(Date.now() / 1000);
  const v1 = createHmac("sha256", webhookSecret).update(`${t}.${body}`).digest("hex");
  const r = await fetch(`${base}/processor/webhooks/${appUuid}`, {
    method: "POST",
    headers: { "content-type": "application/json", "stripe-signature": `t=${t},v1=${v1}` },
    body,
  });
  assert.equal(r.status, 200, `the processor's webhook is received: ${await r.text()}`);
}

test("a live customer signs up in the embedded flow, is switched by the operator, and pays the bills by auto-pay", async () => {
  // Day 0: the operator's and the partner's setup, then the customer's sign-up.
  const day0 = nextTuesday();
  await startServer(morningOf(day0));
  const app = JSON.parse(cli(["apps", "create", "--name", "Live Customer Energy", "--environment", "live", "--json"]).trim().split("\n").pop());
  cli(["apps", "set-payment-keys", "--app", app.app_uuid, "--publishable-key", publishable], {
    SWITCHBOARD_PAYMENT_SECRET_KEY: secretKey,
    SWITCHBOARD_PAYMENT_WEBHOOK_SECRET: webhookSecret,
  });
  cli(["apps", "set-branding", "--app", app.app_uuid, "--primary-color", "#1b4d3e", "--logo-url", "https://partner.example/logo.png"]);
  cli(["apps", "set-support", "--app", app.app_uuid, "--email", "help@partner.example", "--phone", "512 555 0100"]);
  // Flow links open once the app is ready, origins included: the partner's site until its
  // page below is served.
  cli(["apps", "set-origins", "--app", app.app_uuid, "--origin", "https://partner.example"]);

  // The partner knows the customer's address: a plain single-meter one of the directory.
  let home;
  for (const query of ["12", "23", "34", "45", "56", "67"]) {
    const found = await call("POST", "/v1/app/accounts/enroll/address-search", app.token, { query, limit: 20 });
    for (const a of found) {
      if (a.address_2 || /(1111|2222|3333)$/.test(a.esi_id)) continue;
      const exact = await call("POST", "/v1/app/accounts/enroll/full-address-search", app.token, {
        address_1: a.address_1,
        city: a.city,
        state: a.state,
        postal_code: a.postal_code,
      });
      if (exact.length === 1) {
        home = a;
        break;
      }
    }
    if (home) break;
  }
  assert.ok(home, "the directory has a plain address");
  const created = await call("POST", "/v1/app/accounts", app.token, {
    email: "first-live@example.com",
    first_name: "Rosa",
    last_name: "Garza",
    preliminary_address: { address_1: home.address_1, address_2: null, city: home.city, state: home.state, postal_code: home.postal_code },
  });
  const link = await call("POST", `/v1/app/accounts/${created.uuid}/flow-login`, app.token, { scope: "enrollment" });
  const host = await serveHostPage(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Partner app</title>
<style>body { margin: 0; } iframe { border: 0; width: 100%; height: 100vh; display: block; }</style>
<script>
  window.__messages = [];
  window.addEventListener("message", (e) => {
    window.__messages.push({ origin: e.origin, data: e.data });
    if (e.data && e.data.type === "service-flow-resize") document.getElementById("flow").style.height = e.data.height + "px";
  });
</script></head>
<body><iframe id="flow" title="Electricity enrollment" src="${link.login_link}"></iframe></body></html>`);
  cli(["apps", "set-origins", "--app", app.app_uuid, "--origin", new URL(host.url).origin]);
  // Ready for customers: the readiness checklist passes (the command exits 1 otherwise).
  cli(["apps", "readiness", "--app", app.app_uuid]);
  // The server keeps an app for a second: the new origin counts after that.
  await new Promise((r) => setTimeout(r, 1_200));

  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await servePartnerSite(context);
  const sentToUs = [];
  context.on("request", (r) => {
    if (r.url().startsWith(base)) sentToUs.push(`${r.method()} ${r.url()} ${r.postData() ?? ""}`);
  });
  const page = await context.newPage();
  const errors = collectErrors(page);
  let esiId;
  try {
    await page.goto(host.url);
    const flow = page.frameLocator("#flow");
    await flow.locator("main[data-hydrated=true]").waitFor({ timeout: 30_000 });

    // The home the partner passed on matches one meter: the customer confirms it.
    await step(flow, "address");
    await flow.locator("[data-testid=address-confirm]").waitFor();
    esiId = (await flow.locator("[data-testid=esi-id]").textContent()).trim();
    assert.equal(esiId, home.esi_id);
    await flow.getByRole("button", { name: "Yes, this is my home" }).click();

    // A plan, its terms, the identity and the credit check.
    await step(flow, "plan");
    await flow.locator("[data-testid=plan]").first().locator("[data-testid=choose-plan]").click();
    await flow.locator("[data-testid=terms]").check();
    await flow.getByRole("button", { name: "Accept plan" }).click();
    await step(flow, "identity");
    await flow.getByLabel("Mobile phone").fill("512 555 0142");
    await flow.getByLabel("Date of birth").fill("1979-01-31");
    await flow.getByRole("button", { name: "Continue" }).click();
    await step(flow, "credit");
    await flow.getByLabel("Social Security number").fill("123-45-6789");
    await flow.locator("[data-testid=consent]").check();
    await flow.getByRole("button", { name: "Run credit check" }).click();

    // The card, in the processor's own component.
    await step(flow, "payment");
    await flow.locator("[data-testid=processor-card] #card-number[data-ready=true]").waitFor({ timeout: 15_000 });
    await typeCard(flow, "4242424242424242");
    await page.screenshot({ path: path.join(artifacts, "live-customer-1-card.png"), fullPage: true });
    await flow.getByRole("button", { name: "Save card" }).click();
    await step(flow, "billing");
    await flow.getByRole("button", { name: "Continue" }).click();
    await step(flow, "review");
    await flow.locator("[data-testid=review-card]", { hasText: "ending in 4242" }).waitFor();
    await flow.getByRole("button", { name: "Confirm enrollment" }).click();
    await step(flow, "done");
    await flow.locator("[data-testid=done]").waitFor();
    await page.screenshot({ path: path.join(artifacts, "live-customer-2-done.png"), fullPage: true });
    assert.ok(!sentToUs.some((s) => s.includes("4242424242424242")), "the card number never reaches the service");
    // The flow waits out the account's rate limit and calls again: the browser reports the 429.
    assert.deepEqual(errors.filter((e) => !/status of 429/.test(e)), []);
  } finally {
    await context.close();
    await host.close();
  }

  // The check runs after identity verification, which starts a minute after finalize; once it
  // passes, the enrollment goes to the utility.
  const submitted = await until(
    "the enrollment waits for the utility",
    () => call("GET", `/v1/app/accounts/${created.uuid}`, app.token),
    (a) => a.status_reason === "utility_submitted",
    180_000,
  );
  // The bureau was asked once, over our contract.
  assert.equal(bureau.requests.length, 1, "one soft check");
  assert.equal(bureau.requests[0].first_name, "Rosa");
  assert.equal(bureau.requests[0].date_of_birth, "1979-01-31");
  assert.equal(bureau.requests[0].ssn_last4, "6789");
  const startDate = submitted.locations[0].service_start_date ?? submitted.locations[0].contract_start;
  assert.ok(startDate, `the location has its start date: ${JSON.stringify(submitted.locations[0])}`);

  // The operator records the utility's acceptance in the worklist.
  const password = createOperator();
  const dash = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await signIn(dash, password);
  await recordInWorklist(dash, esiId, "Accepted", "live-customer-3-worklist.png");
  await dash.close();

  // The day after service starts, the operator records that the meter was switched.
  await stopServer();
  await startServer(morningOf(addDays(startDate, 1)));
  const dash2 = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await signIn(dash2, password);
  await recordInWorklist(dash2, esiId, "Service started (meter switched)", "live-customer-4-switched.png");
  await dash2.close();
  const active = await call("GET", `/v1/app/accounts/${created.uuid}`, app.token);
  assert.equal(active.status, "active", JSON.stringify(active));
  assert.equal(active.locations[0].is_service_active, true);

  // Three cycles later: the first two bills was issued, fell due and was paid by auto-pay through the processor.
  await stopServer();
  await startServer(morningOf(addDays(startDate, 95)));
  const { token } = await call("POST", `/v1/app/accounts/${created.uuid}/token`, app.token);
  const bills = await until(
    "two bills paid by auto-pay",
    async () => (await call("GET", "/v1/account/billing/invoices", token)).data,
    (list) => list.filter((i) => i.status === "paid").length >= 2,
  );
  const latest = bills.filter((i) => i.status === "paid").sort((a, b) => b.number.localeCompare(a.number))[0];
  const bill = await call("GET", `/v1/account/billing/invoices/${latest.number}`, token);
  const paid = bill.payments.find((p) => p.status === "succeeded");
  assert.ok(paid, `the bill has its payment: ${JSON.stringify(bill.payments)}`);
  assert.equal(paid.amount_cents, bill.total_cents);

  // The processor holds the payment: a succeeded PaymentIntent for the bill's amount. The
  // stand-in lists every key's intents, earlier runs' too, so each candidate is tried, newest
  // first, until ours is found: the processor says that payment failed, and its bill is owed
  // again (a delivery about another's payment changes nothing).
  const intents = await fetch(`${processor}/v1/payment_intents?limit=100`, { headers: { authorization: `Bearer ${secretKey}` } }).then((r) => r.json());
  const candidates = intents.data.filter((pi) => pi.amount === bill.total_cents && pi.status === "succeeded").sort((x, y) => y.created - x.created);
  assert.ok(candidates.length > 0, `the processor has the payment: ${JSON.stringify(intents.data.map((pi) => [pi.id, pi.amount, pi.status]))}`);
  let owed = [];
  let after;
  for (const intent of candidates) {
    await processorSays(app.app_uuid, "payment_intent.payment_failed", {
      id: intent.id,
      last_payment_error: { code: "card_declined", decline_code: "insufficient_funds" },
    });
    after = (await call("GET", "/v1/account/billing/invoices", token)).data;
    owed = after.filter((i) => bills.some((b) => b.number === i.number && b.status === "paid") && i.status !== "paid");
    if (owed.length > 0) break;
  }
  assert.equal(owed.length, 1, `one paid bill is owed again: ${JSON.stringify(after.map((i) => [i.number, i.status]))}`);
  const events = await call("GET", "/v1/app/events?type=account.payment_failed", app.token);
  const failed = events.data.find((e) => e.data.invoice_number === owed[0].number);
  assert.ok(failed, `account.payment_failed for ${owed[0].number}: ${JSON.stringify(events).slice(0, 600)}`);
  assert.equal(failed.data.failure_code, "insufficient_funds");

  // The customer saves a card whose bank checks each payment (the processor's test card ending
  // 3155; saving it passes the bank's check of the card itself).
  const session = await call("POST", "/v1/account/billing/payment-session", token);
  const seti = session.client_secret.split("_secret_")[0];
  const confirmSetup = (extra) =>
    fetch(`${processor}/v1/setup_intents/${seti}/confirm`, {
      method: "POST",
      body: JSON.stringify({ key: session.publishable_key, use_stripe_sdk: true, client_secret: session.client_secret, ...extra }),
    }).then((r) => r.json());
  const asked = await confirmSetup({
    payment_method_data: {
      type: "card",
      card: { number: "4000002500003155", exp_month: "12", exp_year: "2034", cvc: "123" },
      billing_details: { address: { postal_code: "75201" } },
    },
  });
  assert.equal(asked.status, "requires_action", JSON.stringify(asked));
  assert.equal((await confirmSetup({})).status, "succeeded");
  await call("POST", "/v1/account/billing/ensure-payment-method-added", token, { payment_method_id: asked.payment_method });

  // Paying the owed bill now: the bank wants the customer, so it is held, and they are e-mailed.
  const held = await fetch(`${base}/v1/account/billing/invoices/${owed[0].number}/pay`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}` },
  });
  const heldBody = await held.json();
  assert.equal(held.status, 402, JSON.stringify(heldBody));
  assert.equal(heldBody.error.decline_code, "authentication_required");
  const asking = await mail.next((m) => m.text.includes("/hosted/link?token=") && m.text.includes(owed[0].number) && /confirm/i.test(m.subject));
  const confirmLink = new URL(asking.text.match(/\S*\/hosted\/link\?token=\S+/)[0]);

  // The link's page (one click, so that a mail scanner's visit spends nothing), then the bank's
  // check in the processor's component, at a phone's width.
  const payContext = await browser.newContext({ viewport: { width: 360, height: 800 } });
  await servePartnerSite(payContext);
  const payPage = await payContext.newPage();
  const payErrors = collectErrors(payPage);
  await payPage.goto(`${base}${confirmLink.pathname}${confirmLink.search}`);
  await payPage.getByRole("button").first().click();
  await payPage.waitForURL((u) => u.pathname === "/hosted/authenticate");
  const confirmButton = payPage.getByRole("button", { name: "Confirm with your bank" });
  await confirmButton.waitFor();
  await assertAccessible(payPage, "the payment-confirmation page");
  await payPage.screenshot({ path: path.join(artifacts, "live-customer-5-authenticate.png"), fullPage: true });
  const clientSecret = await payPage.locator("#authenticate").getAttribute("data-client-secret");
  const intent = clientSecret.split("_secret_")[0];
  await confirmButton.click();
  await payPage.getByRole("button", { name: "Complete authentication" }).click();
  await payPage.locator("#authenticate[data-state=confirmed]").waitFor();
  await payPage.locator("[data-testid=authenticate-status]", { hasText: "your bank confirmed the payment" }).waitFor();
  await payPage.screenshot({ path: path.join(artifacts, "live-customer-6-confirmed.png"), fullPage: true });
  const atProcessor = await fetch(`${processor}/v1/payment_intents/${intent}`, { headers: { authorization: `Bearer ${secretKey}` } }).then((r) => r.json());
  assert.equal(atProcessor.status, "succeeded", JSON.stringify(atProcessor).slice(0, 400));

  // The processor's webhook says so, and the bill is paid; the page says it went through.
  await processorSays(app.app_uuid, "payment_intent.succeeded", { id: intent, status: "succeeded" });
  await until(
    "the bill is paid after the bank's check",
    async () => (await call("GET", `/v1/account/billing/invoices/${owed[0].number}`, token)).status,
    (status) => status === "paid",
  );
  await payPage.reload();
  await payPage.locator("[data-testid=authenticate-settled]", { hasText: "went through" }).waitFor();
  await payPage.setViewportSize({ width: 1280, height: 900 });
  await assertAccessible(payPage, "the payment-confirmation page, settled");
  await payPage.screenshot({ path: path.join(artifacts, "live-customer-7-settled.png"), fullPage: true });
  assert.deepEqual(payErrors, []);
  await payContext.close();
});
