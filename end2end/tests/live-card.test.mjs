// A live app's customer adds a card in the embedded enrollment flow through the card
// processor's own component, loaded from the processor's origin (its stand-in, localstripe,
// which the test command starts): a declined card is said at the card, a good one is saved,
// and the card's number never reaches the service.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { execFileSync } from "node:child_process";
import {
  api,
  artifacts,
  assertNoSetCookie,
  baseUrl,
  collectErrors,
  collectSetCookies,
  createApp,
  launchBrowser,
  makeLiveReady,
  servePartnerSite,
  root,
  serverBin,
  setOrigins,
  waitForServer,
} from "../lib/harness.mjs";
import { hostPage } from "../lib/accounts.mjs";

const processor = process.env.LOCALSTRIPE_URL ?? "http://127.0.0.1:8420";

let browser;
let app;
let publishable;

before(async () => {
  await waitForServer();
  const r = await fetch(`${processor}/v1/customers`).catch(() => null);
  assert.ok(r, `the card processor's stand-in is not reachable at ${processor}: start it with end2end/localstripe.sh start`);
  app = createApp("Live Cards", "live");
  // Keys of its own at the stand-in, which keeps each key's objects apart.
  const suffix = `${Date.now()}${Math.floor(Math.random() * 1e6)}`;
  publishable = `pk_test_${suffix}`;
  execFileSync(serverBin, ["apps", "set-payment-keys", "--app", app.app_uuid, "--publishable-key", publishable], {
    cwd: root,
    env: {
      ...process.env,
      SWITCHBOARD_PAYMENT_SECRET_KEY: `sk_test_${suffix}`,
      SWITCHBOARD_PAYMENT_WEBHOOK_SECRET: `whsec_${suffix}`,
    },
  });
  // Ready for customers (its readiness checklist), with an origin until the host page's own.
  makeLiveReady(app.app_uuid, ["https://partner.example"], { keys: false });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
});

/// A live customer who has reached the card step through the API: address, plan, identity and
/// the credit check asked for.
async function customerAtCardStep(email) {
  const created = await api("POST", "/v1/app/accounts", app.token, { email, first_name: "Ana", last_name: "Díaz" });
  const { token } = await api("POST", `/v1/app/accounts/${created.uuid}/token`, app.token);
  let esiId;
  for (const query of ["12", "23", "34", "45"]) {
    const found = await api("POST", "/v1/app/accounts/enroll/address-search", app.token, { query, limit: 20 });
    const plain = found.find((a) => !a.address_2 && !/(1111|2222|3333)$/.test(a.esi_id));
    if (plain) {
      esiId = plain.esi_id;
      break;
    }
  }
  assert.ok(esiId, "the directory has a plain address");
  await api("POST", "/v1/account/enroll/confirm-address", token, { esi_id: esiId });
  const { plans } = await api("POST", "/v1/account/enroll/plans/request", token, {});
  const plan = plans.find((p) => p.plan_type === "fixed") ?? plans[0];
  await api("POST", "/v1/account/enroll/plans/accept", token, {
    plan_uuid: plan.plan_uuid,
    service_start_date: plan.earliest_switch_start_date,
    terms_accepted: true,
  });
  await api("PATCH", "/v1/account/enroll/identity", token, { phone: "5125550142", date_of_birth: "1979-01-31" });
  await api("POST", "/v1/account/enroll/credit-check", token, { ssn: "123456789", consent: true });
  return { uuid: created.uuid, token };
}

/// Types a card into the stand-in's component (its own inputs, inside our card container).
async function typeCard(flow, number) {
  const card = flow.locator("[data-testid=processor-card] #card-number");
  await card.locator("input[placeholder=number]").fill(number);
  await card.locator("input[placeholder=exp_month]").fill("12");
  await card.locator("input[placeholder=exp_year]").fill("34");
  await card.locator("input[placeholder=cvc]").fill("123");
  await card.locator("input[placeholder=postal_code]").fill("75201");
}

test("a live customer adds a card in the embedded enrollment flow through the processor's component", async () => {
  const customer = await customerAtCardStep("live-card@example.com");
  const link = await api("POST", `/v1/app/accounts/${customer.uuid}/flow-login`, app.token, { scope: "enrollment" });
  const host = await hostPage(link.login_link, "Electricity enrollment");
  setOrigins(app.app_uuid, [new URL(host.url).origin]);

  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await servePartnerSite(context);
  const setCookies = collectSetCookies(context);
  // Everything the page sends to the service, to show that no card number is among it.
  const sentToUs = [];
  const scripts = [];
  context.on("request", (r) => {
    if (r.url().startsWith(baseUrl)) sentToUs.push(`${r.method()} ${r.url()} ${r.postData() ?? ""}`);
    if (r.resourceType() === "script") scripts.push(r.url());
  });
  const page = await context.newPage();
  const errors = collectErrors(page);
  try {
    await page.goto(host.url);
    const flow = page.frameLocator("#flow");
    await flow.locator("main[data-hydrated=true]").waitFor({ timeout: 30_000 });
    await flow.locator("section.steps[data-step=payment]").waitFor({ timeout: 15_000 });
    // Live: the processor's component, not our form with its test cards.
    assert.equal(await flow.locator("[data-testid=test-cards]").count(), 0);
    await flow.locator("[data-testid=processor-card] #card-number[data-ready=true]").waitFor({ timeout: 15_000 });
    assert.ok(
      scripts.some((s) => s === `${processor}/js.stripe.com/v3/`),
      `the processor's script is loaded from its origin: ${scripts.join(", ")}`,
    );

    // A declined card: the processor's refusal, at the card; nothing is saved.
    await typeCard(flow, "4000000000000002");
    await flow.getByRole("button", { name: "Save card" }).click();
    await flow.locator("[data-testid=step-error]").waitFor({ timeout: 15_000 });
    await page.screenshot({ path: path.join(artifacts, "live-card-1-declined.png"), fullPage: true });
    let account = await api("GET", "/v1/account", customer.token);
    assert.equal(account.enrollment.has_payment_method, false);

    // Another card, saved: the flow moves on to the billing address.
    await typeCard(flow, "4242424242424242");
    await flow.getByRole("button", { name: "Save card" }).click();
    await flow.locator("section.steps[data-step=billing]").waitFor({ timeout: 15_000 });
    await page.screenshot({ path: path.join(artifacts, "live-card-2-saved.png"), fullPage: true });

    account = await api("GET", "/v1/account", customer.token);
    assert.equal(account.enrollment.has_payment_method, true);
    const method = await api("GET", "/v1/account/billing/payment-method", customer.token);
    assert.equal(method.card_brand, "visa");
    assert.equal(method.card_last4, "4242");
    assert.equal(method.card_postal_code, "75201");

    for (const number of ["4242424242424242", "4000000000000002"]) {
      assert.ok(!sentToUs.some((s) => s.includes(number)), `the card number ${number} was sent to the service`);
    }
    assert.deepEqual(errors.filter((e) => !/402|Payment Required/.test(e)), []);
    await assertNoSetCookie(setCookies);
  } finally {
    await context.close();
    await host.close();
  }
});
