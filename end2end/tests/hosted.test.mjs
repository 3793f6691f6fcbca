// Hosted pages, first-party on the service's origin: a customer signs up at the partner's
// `/go/<slug>` and enrolls full-page with card 4242; a payment-failed e-mail's link (read from the
// sandbox outbox) shows the app's page with one button (a GET spends nothing, for mail
// scanners), whose click opens the change-of-card flow; the app's portal (`/go/<slug>/portal`)
// signs in by e-mailed code and opens the billing flow. Screenshots at 360 and 1280 px.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { api, artifacts, baseUrl, collectErrors, createApp, launchBrowser, waitForServer } from "../lib/harness.mjs";
import { saveCard } from "../lib/accounts.mjs";

let browser;
let app;
let slug;

before(async () => {
  await waitForServer();
  app = createApp("Hosted Homes");
  slug = (await api("GET", "/v1/app", app.token)).slug;
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
});

async function shot(page, name) {
  await page.screenshot({ path: path.join(artifacts, name), fullPage: true });
}

/// The app's newest e-mail to `to` (optionally of `template`), waiting for it to be queued.
async function newestMail(to, template) {
  for (let i = 0; i < 50; i++) {
    const { data } = await api("GET", "/v1/app/sandbox/emails?limit=100", app.token);
    const found = data
      .filter((m) => m.to === to && (!template || m.template === template))
      .sort((a, b) => (a.created_at < b.created_at ? 1 : -1));
    if (found.length > 0) return found[0];
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no e-mail to ${to}`);
}

/// The six-digit code of a code e-mail (the subject ends with it).
const codeOf = (mail) => mail.subject.split(" ").pop();

/// The hosted link an e-mail's text carries.
function hostedLink(mail) {
  const match = mail.text.match(/https?:\/\/\S+\/hosted\/link\?token=\S+/);
  assert.ok(match, `a hosted link in ${mail.text}`);
  return match[0];
}

/// Asserts that nothing on the page is wider than its viewport.
async function assertFits(page) {
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= page.viewportSize().width, `nothing is wider than the screen: ${width}`);
}

/// A plain single-meter address of the directory, away from the sandbox's magic ESI IDs.
async function findAddress() {
  for (const query of ["12", "23", "34", "45", "56", "67", "78", "89", "91"]) {
    const found = await api("POST", "/v1/app/accounts/enroll/address-search", app.token, { query, limit: 20 });
    for (const a of found) {
      if (a.address_2 || /(1111|2222|3333)$/.test(a.esi_id)) continue;
      return a;
    }
  }
  throw new Error("the directory has no plain address to enroll");
}

async function step(page, name) {
  await page.locator(`section.steps[data-step=${name}]`).waitFor({ timeout: 20_000 });
}

/// Signs up on the hosted landing page and confirms the code; the page lands in the flow.
async function signUp(page, email, width) {
  await page.goto(`${baseUrl}/go/${slug}`);
  assert.match(await page.locator("[data-testid=app-name]").innerText(), /Hosted Homes/);
  await assertFits(page);
  await shot(page, `hosted-${width}-1-landing.png`);
  await page.getByLabel("First name").fill("Ana");
  await page.getByLabel("Last name").fill("Díaz");
  await page.getByLabel("E-mail").fill(email);
  await page.getByRole("button", { name: "Continue" }).click();
  await page.locator("[data-testid=confirm-code]").waitFor();
  const code = codeOf(await newestMail(email));
  await page.getByLabel("Code").fill(code);
  await shot(page, `hosted-${width}-2-code.png`);
  await page.getByRole("button", { name: "Confirm" }).click();
}

test("a customer signs up on the partner's hosted page and enrolls full-page with card 4242", async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = collectErrors(page);
  try {
    const email = "hosted-1280@example.com";
    await signUp(page, email, 1280);
    await page.waitForURL(/\/flow\/enrollment\?app=.*&hosted=portal/);
    await page.locator("main[data-hydrated=true]").waitFor({ timeout: 30_000 });
    // The session cookie is not for scripts.
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === "sb_customer");
    assert.ok(session, "signed in");
    assert.equal(session.httpOnly, true);
    assert.equal(await page.evaluate(() => document.cookie.includes("sb_customer")), false);

    const address = await findAddress();
    await step(page, "address");
    await page.locator("[data-testid=by-esi]").click();
    await page.getByLabel("ESI ID").fill(address.esi_id);
    await page.getByRole("button", { name: "Find my meter" }).click();
    await page.getByRole("button", { name: "Yes, this is my home" }).click();
    await step(page, "plan");
    await page.locator("[data-testid=choose-plan]").first().click();
    await page.locator("[data-testid=terms]").check();
    await page.getByRole("button", { name: "Accept plan" }).click();
    await step(page, "identity");
    await page.getByLabel("Mobile phone").fill("512 555 0123");
    await page.getByLabel("Date of birth").fill("1990-04-12");
    await page.getByRole("button", { name: "Continue" }).click();
    await step(page, "credit");
    await page.getByLabel("Social Security number").fill("123-45-6789");
    await page.locator("[data-testid=consent]").check();
    await page.getByRole("button", { name: "Run credit check" }).click();
    await step(page, "payment");
    await page.getByLabel("Card number").fill("4242 4242 4242 4242");
    await page.getByLabel("Expiry (MM / YY)").fill("12/34");
    await page.getByLabel("Security code").fill("123");
    await page.getByRole("button", { name: "Save card" }).click();
    await step(page, "billing");
    await page.getByRole("button", { name: "Continue" }).click();
    await step(page, "review");
    await page.getByRole("button", { name: "Confirm enrollment" }).click();
    await step(page, "done");
    await shot(page, "hosted-1280-3-enrolled.png");

    const { data } = await api("GET", `/v1/app/accounts?email=${encodeURIComponent(email)}`, app.token);
    assert.equal(data.length, 1);
    assert.equal(data[0].status, "reviewing");
    assert.equal(data[0].enrollment.is_enrollment_finalized, true);

    // Done: back to the portal, signed in.
    await page.getByRole("button", { name: "Done" }).click();
    await page.waitForURL(`${baseUrl}/portal`);
    await page.locator("[data-testid=portal-home]").waitFor();
    assert.match(await page.locator("[data-testid=status]").innerText(), /reviewing your enrollment/);
    await shot(page, "hosted-1280-4-portal.png");
    assert.deepEqual(errors.filter((e) => !/status of 429/.test(e)), []);
  } finally {
    await context.close();
  }
});

test("the hosted sign-up reads well at 360 px", async () => {
  const context = await browser.newContext({ viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true });
  const page = await context.newPage();
  try {
    await signUp(page, "hosted-360@example.com", 360);
    await page.waitForURL(/\/flow\/enrollment\?/);
    await page.locator("main[data-hydrated=true]").waitFor({ timeout: 30_000 });
    await step(page, "address");
    await assertFits(page);
    await shot(page, "hosted-360-3-flow.png");
  } finally {
    await context.close();
  }
});

test("a payment-failed e-mail's link opens the change of card, once", async () => {
  const email = "hosted-declined@example.com";
  const created = await api("POST", "/v1/app/accounts", app.token, { email, first_name: "Ana", last_name: "Díaz" });
  const { token } = await api("POST", `/v1/app/accounts/${created.uuid}/token`, app.token);
  await saveCard(token, "4000000000000341");
  await api("POST", "/v1/account/sandbox/seed-demo-data", token);
  const link = hostedLink(await newestMail(email, "payment_failed"));

  const context = await browser.newContext({ viewport: { width: 360, height: 800 }, isMobile: true, hasTouch: true });
  const page = await context.newPage();
  try {
    // A scanner's fetch first: it spends nothing.
    const scanned = await page.request.get(link);
    assert.equal(scanned.status(), 200);
    await page.goto(link);
    await page.locator("[data-testid=link-open]").waitFor();
    assert.match(await page.locator("[data-testid=app-name]").innerText(), /Hosted Homes/);
    await assertFits(page);
    await shot(page, "hosted-360-link-open.png");
    await page.getByRole("button", { name: "Continue" }).click();
    await page.waitForURL(/\/flow\/update-payment-method\?app=.*&hosted=done/);
    await page.locator("[data-testid=card-on-file]").waitFor({ timeout: 30_000 });
    await page.getByLabel("Card number").fill("4242 4242 4242 4242");
    await page.getByLabel("Expiry (MM / YY)").fill("11/33");
    await page.getByLabel("Security code").fill("321");
    await page.getByRole("button", { name: "Save new card" }).click();
    await page.locator("[data-testid=done]").waitFor({ timeout: 15_000 });
    await shot(page, "hosted-360-card-saved.png");
    const saved = await api("GET", "/v1/account/billing/payment-method", token);
    assert.equal(saved.card_last4, "4242");
    await page.locator("[data-testid=done-close]").click();
    await page.locator("[data-testid=hosted-done]").waitFor();

    // The link worked once: again, it offers a fresh one, in the app's brand.
    await page.goto(link);
    await page.locator("[data-testid=link-expired]").waitFor();
    assert.match(await page.locator("[data-testid=app-name]").innerText(), /Hosted Homes/);
    await assertFits(page);
    await shot(page, "hosted-360-link-expired.png");
    await page.getByRole("button", { name: "E-mail me a new link" }).click();
    await page.locator("[data-testid=link-resent]").waitFor();
  } finally {
    await context.close();
  }
});

test("the portal signs in by e-mailed code and opens the billing flow", async () => {
  const email = "hosted-portal@example.com";
  const created = await api("POST", "/v1/app/accounts", app.token, { email, first_name: "Ana", last_name: "Díaz" });
  const { token } = await api("POST", `/v1/app/accounts/${created.uuid}/token`, app.token);
  await api("POST", "/v1/account/sandbox/seed-demo-data", token);

  for (const width of [360, 1280]) {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    const page = await context.newPage();
    try {
      await page.goto(`${baseUrl}/go/${slug}/portal`);
      assert.match(await page.locator("[data-testid=app-name]").innerText(), /Hosted Homes/);
      await page.getByLabel("E-mail").fill(email);
      await page.getByRole("button", { name: "E-mail me a code" }).click();
      await page.locator("[data-testid=confirm-code]").waitFor();
      await page.getByLabel("Code").fill(codeOf(await newestMail(email, "notice")));
      await page.getByRole("button", { name: "Confirm" }).click();
      await page.locator("[data-testid=portal-home]").waitFor();
      assert.match(await page.locator("[data-testid=status]").innerText(), /service is active/);
      await assertFits(page);
      await shot(page, `portal-${width}-home.png`);
      await page.locator("[data-testid=open-billing]").click();
      await page.waitForURL(/\/flow\/billing\?app=.*&hosted=portal/);
      await page.locator("main[data-hydrated=true]").waitFor({ timeout: 30_000 });
      await shot(page, `portal-${width}-billing.png`);
      // Keyboard: the home's controls are reachable by Tab.
      await page.goto(`${baseUrl}/portal`);
      await page.keyboard.press("Tab");
      assert.notEqual(await page.evaluate(() => document.activeElement.tagName), "BODY");
    } finally {
      await context.close();
    }
  }
});
