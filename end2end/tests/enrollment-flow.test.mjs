// A partner embeds the enrollment flow in an iframe on its own site, and a customer enrolls:
// address, plan, identity, credit check, card, billing address, review, finalize. Then the same
// walk at 360 px with third-party cookies blocked, and a customer who meets every error the
// flow can recover from (expired price, network failure, declined card).

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
  root,
  serveHostPage,
  waitForServer,
} from "../lib/harness.mjs";

const BRAND_COLOR = "#7a2e8e";

let browser;
let app;

/// A plain single-meter address of the directory, away from the sandbox's magic ESI IDs.
async function findAddress(skip = 0) {
  let seen = 0;
  for (const query of ["12", "23", "34", "45", "56", "67", "78", "89", "91"]) {
    const found = await api("POST", "/v1/app/accounts/enroll/address-search", app.token, { query, limit: 20 });
    for (const a of found) {
      if (a.address_2 || /(1111|2222|3333)$/.test(a.esi_id)) continue;
      const exact = await api("POST", "/v1/app/accounts/enroll/full-address-search", app.token, {
        address_1: a.address_1,
        city: a.city,
        state: a.state,
        postal_code: a.postal_code,
      });
      if (exact.length !== 1) continue;
      if (seen++ === skip) return a;
    }
  }
  throw new Error("the directory has no plain address to enroll");
}

async function createAccount(email, preliminaryAddress) {
  return api("POST", "/v1/app/accounts", app.token, {
    email,
    first_name: "Ana",
    last_name: "Díaz",
    preliminary_address: preliminaryAddress,
  });
}

async function flowLink(accountUuid) {
  const link = await api("POST", `/v1/app/accounts/${accountUuid}/flow-login`, app.token, { scope: "enrollment" });
  return link.login_link;
}

async function hostPage(link, width) {
  return serveHostPage(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Partner app</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body { margin: 0; } iframe { border: 0; width: 100%; height: 100vh; display: block; }</style>
<script>
  window.__messages = [];
  window.addEventListener("message", (e) => window.__messages.push({ origin: e.origin, data: e.data }));
</script></head>
<body><iframe id="flow" title="Electricity enrollment" data-width="${width}" src="${link}"></iframe></body></html>`);
}

async function shot(page, name) {
  await page.screenshot({ path: path.join(artifacts, name), fullPage: true });
}

async function step(flow, name) {
  try {
    await flow.locator(`section.steps[data-step=${name}]`).waitFor({ timeout: 15_000 });
  } catch (e) {
    const main = await flow.locator("main").evaluate((m) => m.outerHTML.slice(0, 600)).catch((x) => String(x));
    throw new Error(`step ${name} did not show; the flow shows: ${main}`, { cause: e });
  }
}

/// Walks the flow from the plans to the done screen the way a customer does.
async function walkFromPlans(page, flow, prefix) {
  await step(flow, "plan");
  await flow.locator("[data-testid=plan]").first().waitFor();
  const firstPlan = flow.locator("[data-testid=plan]").first();
  for (const doc of ["Electricity Facts Label", "Terms of Service", "Your Rights as a Customer"]) {
    const href = await firstPlan.getByRole("link", { name: doc }).getAttribute("href");
    const r = await fetch(new URL(href, baseUrl));
    assert.equal(r.status, 200, `${doc} at ${href}`);
  }
  assert.match(await firstPlan.locator("table.averages").innerText(), /500 kWh[\s\S]*1,000 kWh[\s\S]*2,000 kWh/);
  await shot(page, `${prefix}-2-plans.png`);
  await firstPlan.locator("[data-testid=choose-plan]").click();

  const date = flow.getByLabel("Start date");
  await date.waitFor();
  const [min, value] = await Promise.all([date.getAttribute("min"), date.inputValue()]);
  assert.equal(value, min, "the start date defaults to the earliest allowed");
  // Accepting without ticking the terms is stopped at the checkbox.
  await flow.getByRole("button", { name: "Accept plan" }).click();
  await flow.locator("[data-testid=step-error]").waitFor();
  assert.equal(await flow.locator("[data-testid=terms]").getAttribute("aria-invalid"), "true");
  await flow.locator("[data-testid=terms]").check();
  // Ticking the box clears the error that asked for it.
  await flow.locator("[data-testid=step-error]").waitFor({ state: "detached" });
  await shot(page, `${prefix}-3-accept.png`);
  await flow.getByRole("button", { name: "Accept plan" }).click();

  await step(flow, "identity");
  await flow.getByLabel("Mobile phone").fill("512 555 0123");
  await flow.getByLabel("Date of birth").fill("1990-04-12");
  await shot(page, `${prefix}-4-identity.png`);
  await flow.getByRole("button", { name: "Continue" }).click();

  await step(flow, "credit");
  await flow.getByLabel("Social Security number").fill("123-45-6789");
  await flow.locator("[data-testid=consent]").check();
  await shot(page, `${prefix}-5-credit.png`);
  await flow.getByRole("button", { name: "Run credit check" }).click();

  await step(flow, "payment");
  await flow.locator("[data-testid=test-cards]").waitFor();
  await fillCard(flow, "4242 4242 4242 4242");
  await shot(page, `${prefix}-6-card.png`);
  await flow.getByRole("button", { name: "Save card" }).click();

  await step(flow, "billing");
  await shot(page, `${prefix}-7-billing.png`);
  await flow.getByRole("button", { name: "Continue" }).click();

  await step(flow, "review");
  assert.match(await flow.locator("[data-testid=review-card]").innerText(), /ending in 4242/);
  await shot(page, `${prefix}-8-review.png`);
  await flow.getByRole("button", { name: "Confirm enrollment" }).click();

  await step(flow, "done");
  await flow.locator("[data-testid=done]").waitFor();
  await shot(page, `${prefix}-9-done.png`);
}

/// A new page in front: a page in the background hydrates only when the browser is idle for
/// it, which a hidden page may never be.
async function foreground(context) {
  const page = await context.newPage();
  await page.bringToFront();
  return page;
}

/// Console errors but the browser's own report of a 429: tests click faster than people, and
/// the flow waits out the account's rate limit and sends the call again.
function appErrors(errors) {
  return errors.filter((e) => !/status of 429/.test(e));
}

/// The flow's frame inside the host page.
function flowFrame(page) {
  const frame = page.frames().find((f) => f.url().startsWith(baseUrl));
  assert.ok(frame, "the flow's frame is there");
  return frame;
}

async function fillCard(flow, number) {
  await flow.getByLabel("Card number").fill(number);
  await flow.getByLabel("Expiry (MM/YY)").fill("12/34");
  await flow.getByLabel("CVC").fill("123");
}

async function closeMessages(page) {
  await page.waitForFunction(() => window.__messages.length > 0, null, { timeout: 5_000 });
  return page.evaluate(() => window.__messages);
}

before(async () => {
  await waitForServer();
  app = createApp("Flow Test Energy");
  const bin = process.env.SWITCHBOARD_BIN ?? path.join(root, "target", "debug", "switchboard");
  execFileSync(bin, ["apps", "set-branding", "--app", app.app_uuid, "--display-name", "Bright Home Energy", "--primary-color", BRAND_COLOR, "--logo-url", `${baseUrl}/favicon.svg`], {
    cwd: root,
  });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
});

test("a customer enrolls in the embedded flow with card 4242 and the host hears the close", async () => {
  const address = await findAddress(0);
  const account = await createAccount("enroll-1280@example.com", {
    address_1: address.address_1,
    address_2: null,
    city: address.city,
    state: address.state,
    postal_code: address.postal_code,
  });
  const host = await hostPage(await flowLink(account.uuid), 1280);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const setCookies = collectSetCookies(context);
  const page = await foreground(context);
  const errors = collectErrors(page);
  try {
    await page.goto(host.url);
    const flow = page.frameLocator("#flow");
    await flow.locator("main[data-hydrated=true]").waitFor({ timeout: 30_000 });
    assert.equal(await flow.locator("[data-testid=app-name]").textContent(), "Bright Home Energy");
    const brand = await flow.locator("main.flow").evaluate((m) => getComputedStyle(m).getPropertyValue("--brand").trim());
    assert.equal(brand, BRAND_COLOR);
    const logo = flow.locator(".flow-header img.logo");
    assert.equal(await logo.getAttribute("src"), `${baseUrl}/favicon.svg`);
    assert.ok(await logo.evaluate((img) => img.complete && img.naturalWidth > 0), "the logo loads");

    // The partner's address matched exactly: the search is skipped, confirmation comes first.
    await step(flow, "address");
    await flow.locator("[data-testid=address-confirm]").waitFor();
    assert.equal(await flow.locator("[data-testid=esi-id]").textContent(), address.esi_id);
    await shot(page, "enroll-1280-1-address.png");
    await flow.getByRole("button", { name: "Yes, this is my home" }).click();

    await walkFromPlans(page, flow, "enroll-1280");

    const after = await api("GET", `/v1/app/accounts/${account.uuid}`, app.token);
    assert.equal(after.status, "reviewing");
    assert.equal(after.enrollment.is_enrollment_finalized, true);
    assert.equal(after.locations[0].esi_id, address.esi_id);

    await flow.getByRole("button", { name: "Done" }).click();
    const [message] = await closeMessages(page);
    assert.deepEqual(message.data, { type: "service-flow-close", reason: "completed", scope: "enrollment" });
    assert.deepEqual(await context.cookies(), [], "the flow needs no cookie");
    assert.deepEqual(appErrors(errors), []);
    await assertNoSetCookie(setCookies);
  } finally {
    await context.close();
    await host.close();
  }
});

test("the whole flow works at 360 px with third-party cookies blocked, by type-ahead search", async () => {
  const address = await findAddress(1);
  const account = await createAccount("enroll-360@example.com", undefined);
  const host = await hostPage(await flowLink(account.uuid), 360);
  const context = await browser.newContext({ viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true });
  const setCookies = collectSetCookies(context);
  const page = await foreground(context);
  const cdp = await context.newCDPSession(page);
  await cdp.send("Network.setCookieControls", {
    enableThirdPartyCookieRestriction: true,
    disableThirdPartyCookieMetadata: true,
    disableThirdPartyCookieHeuristics: true,
  });
  const errors = collectErrors(page);
  try {
    await page.goto(host.url);
    const flow = page.frameLocator("#flow");
    await flow.locator("main[data-hydrated=true]").waitFor({ timeout: 30_000 });
    // The flow's frame cannot keep a cookie in this run. (Over plain http Chromium refuses a
    // cross-site frame's SameSite=None cookie anyway; the restriction above is what a browser
    // blocking third-party cookies does over https.)
    const kept = await flowFrame(page).evaluate(() => {
      document.cookie = "probe=1; SameSite=None; Secure; Path=/";
      return document.cookie.includes("probe=1");
    });
    assert.equal(kept, false, "a third-party cookie was kept");

    await step(flow, "address");
    const search = flow.getByLabel("Service address");
    await search.pressSequentially(address.address_1.slice(0, 8), { delay: 30 });
    await flow.locator("[data-testid=address-results] button").first().waitFor();
    await search.fill(address.address_1);
    const choice = flow.locator("[data-testid=address-results] button", { hasText: address.address_1 }).filter({ hasText: address.postal_code }).first();
    await choice.waitFor();
    await shot(page, "enroll-360-1-search.png");
    await choice.click();
    await flow.locator("[data-testid=address-confirm]").waitFor();
    assert.equal(await flow.locator("[data-testid=esi-id]").textContent(), address.esi_id);
    const width = await flow.getByRole("button", { name: "Yes, this is my home" }).evaluate((b) => b.getBoundingClientRect().width);
    assert.ok(width <= 360 && width > 280, `the main button spans the screen: ${width}`);
    await flow.getByRole("button", { name: "Yes, this is my home" }).click();

    await walkFromPlans(page, flow, "enroll-360");
    const after = await api("GET", `/v1/app/accounts/${account.uuid}`, app.token);
    assert.equal(after.status, "reviewing");
    const overflow = await flowFrame(page).evaluate(() => document.documentElement.scrollWidth);
    assert.ok(overflow <= 360, `nothing is wider than the screen: ${overflow}`);
    await flow.getByRole("button", { name: "Done" }).click();
    const [message] = await closeMessages(page);
    assert.equal(message.data.reason, "completed");
    assert.deepEqual(appErrors(errors), []);
    await assertNoSetCookie(setCookies);
  } finally {
    await context.close();
    await host.close();
  }
});

test("an expired price, a network failure and a declined card can all be fixed in place", async () => {
  const address = await findAddress(2);
  const account = await createAccount("enroll-errors@example.com", undefined);
  // The partner's backend already confirmed the address: the flow resumes at the plans.
  const { token } = await api("POST", `/v1/app/accounts/${account.uuid}/token`, app.token);
  await api("POST", "/v1/account/enroll/confirm-address", token, { esi_id: address.esi_id });
  const host = await hostPage(await flowLink(account.uuid), 1280);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const setCookies = collectSetCookies(context);
  const page = await foreground(context);
  const errors = collectErrors(page);
  try {
    await page.goto(host.url);
    const flow = page.frameLocator("#flow");
    await step(flow, "plan");
    await flow.locator("[data-testid=plan]").first().waitFor();
    await flow.locator("[data-testid=choose-plan]").first().click();
    await flow.locator("[data-testid=terms]").check();

    // The price expires while the customer reads: accepting says so and offers today's prices.
    await api("POST", "/v1/account/sandbox/advance-clock", token, { days: 10 });
    await flow.getByRole("button", { name: "Accept plan" }).click();
    await flow.locator("[data-testid=step-error][data-code=plan_expired]").waitFor();
    await shot(page, "errors-1-plan-expired.png");
    await flow.locator("[data-testid=reprice]").click();
    await flow.locator("[data-testid=plan]").first().waitFor();
    await flow.locator("[data-testid=choose-plan]").first().click();
    await flow.locator("[data-testid=terms]").check();
    await flow.getByRole("button", { name: "Accept plan" }).click();

    await step(flow, "identity");
    await flow.getByLabel("Mobile phone").fill("(512) 555-0199");
    await flow.getByLabel("Date of birth").fill("1985-09-30");
    await flow.getByRole("button", { name: "Continue" }).click();
    await step(flow, "credit");
    await flow.getByLabel("Social Security number").fill("123456789");
    await flow.locator("[data-testid=consent]").check();
    await flow.getByRole("button", { name: "Run credit check" }).click();

    // The connection drops once: the error says so and "Try again" repeats the call.
    await step(flow, "payment");
    let dropped = false;
    await context.route("**/v1/account/billing/payment-session", (route) => {
      if (dropped) return route.continue();
      dropped = true;
      return route.abort("internetdisconnected");
    });
    await fillCard(flow, "4000 0000 0000 0002");
    await flow.getByRole("button", { name: "Save card" }).click();
    await flow.locator("[data-testid=step-error][data-code=network_error]").waitFor();
    await shot(page, "errors-2-network.png");
    await flow.getByRole("button", { name: "Try again" }).click();

    // That card is declined: the error is at the card number, and another card works.
    await flow.locator("[data-testid=step-error][data-code=card_declined]").waitFor();
    assert.equal(await flow.getByLabel("Card number").getAttribute("aria-invalid"), "true");
    await shot(page, "errors-3-declined.png");
    await flow.getByLabel("Card number").fill("4242424242424242");
    await flow.getByRole("button", { name: "Save card" }).click();
    await step(flow, "billing");

    const now = await api("GET", `/v1/app/accounts/${account.uuid}`, app.token);
    assert.equal(now.enrollment.has_payment_method, true);
    assert.equal(now.enrollment.has_accepted_plan, true);
    // Only the expired price (409), the declined card (402) and the dropped request may show.
    assert.deepEqual(
      appErrors(errors).filter((e) => !/status of 40[29]|ERR_INTERNET_DISCONNECTED/.test(e)),
      [],
    );
    await assertNoSetCookie(setCookies);
  } finally {
    await context.close();
    await host.close();
  }
});

/// Presses Tab until `selector` has the focus (at most `limit` times).
async function tabTo(page, selector, limit = 25) {
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press("Tab");
    if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return;
  }
  throw new Error(`Tab never reached ${selector}`);
}

test("a customer can find the home and choose a plan by keyboard alone", async () => {
  const address = await findAddress(3);
  const account = await createAccount("enroll-keys@example.com", undefined);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const setCookies = collectSetCookies(context);
  const page = await foreground(context);
  const errors = collectErrors(page);
  try {
    await page.goto(await flowLink(account.uuid));
    await page.locator("section.steps[data-step=address]").waitFor({ timeout: 30_000 });
    await tabTo(page, "#address-query");
    await page.keyboard.type(address.address_1, { delay: 20 });
    await page.locator("[data-testid=address-results] button").first().waitFor();
    await tabTo(page, "[data-testid=address-results] button");
    assert.match(await page.evaluate(() => document.activeElement.textContent), new RegExp(address.address_1));
    await page.keyboard.press("Enter");
    // The confirmation takes the focus; the next Tab is its answer.
    await page.locator("[data-testid=address-confirm]").waitFor();
    assert.equal(await page.evaluate(() => document.activeElement.textContent), "Is this your home and its meter?");
    await tabTo(page, "[data-testid=confirm-address]", 1);
    await page.keyboard.press("Enter");

    await page.locator("section.steps[data-step=plan] [data-testid=plan]").first().waitFor();
    assert.equal(await page.evaluate(() => document.activeElement.tagName), "H2", "the new step's heading has the focus");
    await tabTo(page, "[data-testid=choose-plan]");
    await page.keyboard.press("Enter");
    await tabTo(page, "[data-testid=terms]");
    await page.keyboard.press("Space");
    await tabTo(page, "[data-testid=accept-plan]");
    await page.keyboard.press("Enter");
    await page.locator("section.steps[data-step=identity]").waitFor();
    await tabTo(page, "#phone");
    await page.keyboard.type("5125550123");
    await tabTo(page, "#date-of-birth", 1);
    await page.keyboard.type("04121990");
    await page.keyboard.press("Enter");
    await page.locator("section.steps[data-step=credit]").waitFor();
    await shot(page, "keyboard-credit-1280.png");
    const after = await api("GET", `/v1/app/accounts/${account.uuid}`, app.token);
    assert.equal(after.enrollment.has_accepted_plan, true);
    assert.equal(after.enrollment.is_identity_complete, true);
    assert.equal(after.date_of_birth, "1990-04-12");
    assert.deepEqual(appErrors(errors), []);
    await assertNoSetCookie(setCookies);
  } finally {
    await context.close();
  }
});

test("a customer finds the meter by its ESI ID and sends bills to another address", async () => {
  const address = await findAddress(4);
  const account = await createAccount("enroll-esi@example.com", undefined);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const setCookies = collectSetCookies(context);
  const page = await foreground(context);
  const errors = collectErrors(page);
  try {
    await page.goto(await flowLink(account.uuid));
    await page.locator("section.steps[data-step=address]").waitFor({ timeout: 30_000 });
    await page.locator("[data-testid=by-esi]").click();
    // A number that cannot be an ESI ID is stopped in the page, at the field.
    await page.getByLabel("ESI ID").fill("12345");
    await page.getByRole("button", { name: "Find my meter" }).click();
    await page.locator("[data-testid=step-error]").waitFor();
    assert.equal(await page.getByLabel("ESI ID").getAttribute("aria-invalid"), "true");
    await page.getByLabel("ESI ID").fill(address.esi_id);
    await page.getByRole("button", { name: "Find my meter" }).click();
    await page.locator("[data-testid=address-confirm]").waitFor();
    assert.match(await page.locator("[data-testid=address-confirm]").innerText(), new RegExp(address.address_1));
    await page.getByRole("button", { name: "Yes, this is my home" }).click();

    // The rest through the API, as a partner's backend may do: the flow resumes at billing.
    const { token } = await api("POST", `/v1/app/accounts/${account.uuid}/token`, app.token);
    const { plans } = await api("POST", "/v1/account/enroll/plans/request", token, {});
    await api("POST", "/v1/account/enroll/plans/accept", token, {
      plan_uuid: plans[0].plan_uuid,
      service_start_date: plans[0].earliest_switch_start_date,
      terms_accepted: true,
    });
    await api("PATCH", "/v1/account/enroll/identity", token, { phone: "5125550142", date_of_birth: "1979-01-31" });
    await api("POST", "/v1/account/enroll/credit-check", token, { ssn: "123456789", consent: true });
    const session = await api("POST", "/v1/account/billing/payment-session", token);
    const r = await fetch(`${baseUrl}/processor/v1/payment_methods`, {
      method: "POST",
      headers: { authorization: `Bearer ${session.publishable_key}`, "content-type": "application/json" },
      body: JSON.stringify({ client_secret: session.client_secret, card: { number: "5555555555554444", exp_month: 12, exp_year: 2034, cvc: "123" } }),
    });
    const pm = await r.json();
    await api("POST", "/v1/account/billing/ensure-payment-method-added", token, { payment_method_id: pm.id });

    await page.goto(await flowLink(account.uuid));
    await page.locator("section.steps[data-step=billing]").waitFor({ timeout: 30_000 });
    await page.locator("[data-testid=billing-other]").check();
    await page.getByLabel("Street address").fill("PO BOX 1234");
    await page.getByLabel("City").fill("AUSTIN");
    await page.getByLabel("ZIP code").fill("78701");
    await page.getByRole("button", { name: "Continue" }).click();
    await page.locator("section.steps[data-step=review]").waitFor();
    // The review reads the billing address back from the API.
    await page.locator("[data-testid=review]", { hasText: "PO BOX 1234, AUSTIN, TX, 78701" }).waitFor();
    await shot(page, "esi-billing-review-1280.png");
    const billing = await api("GET", "/v1/account/billing/address", token);
    assert.equal(billing.same_as_service_address, false);
    assert.equal(billing.postal_code, "78701");
    assert.deepEqual(appErrors(errors), []);
    await assertNoSetCookie(setCookies);
  } finally {
    await context.close();
  }
});
