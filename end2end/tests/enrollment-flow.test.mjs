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
import { assertAccessible } from "../lib/axe.mjs";
import { assertResized, seededCustomer } from "../lib/accounts.mjs";

// An orange that reads at 3.5:1 on white: the flow must darken it for text and links.
const BRAND_COLOR = "#f26b1d";
const PROVIDER = "Switchboard Energy LLC";

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
  window.addEventListener("message", (e) => {
    window.__messages.push({ origin: e.origin, data: e.data });
    if (e.data && e.data.type === "service-flow-resize") document.getElementById("flow").style.height = e.data.height + "px";
  });
</script></head>
<body><iframe id="flow" title="Electricity enrollment" data-width="${width}" src="${link}"></iframe></body></html>`);
}

/// Checks the flow's screen with axe-core (WCAG A/AA), then keeps its screenshot.
async function shot(page, name) {
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
  // Compact cards: the average price to a tenth of a cent first, then term, fee and renewable
  // share; rates, averages and documents on demand; copy true for the kind of plan.
  assert.match(await firstPlan.locator(".price strong").innerText(), /^\d+\.\d¢$/);
  assert.match(await firstPlan.locator("[data-testid=plan-terms]").innerText(), /No cancellation fee[\s\S]*% renewable/);
  for (const card of await flow.locator("[data-testid=plan]").all()) {
    const text = await card.innerText();
    if (/Month to month/.test(text)) assert.match(text, /Variable rate: the energy charge can change/);
    else assert.match(text, /Fixed rate: the energy charge stays the same for \d+ months/);
    const height = await card.evaluate((c) => c.getBoundingClientRect().height);
    // What the estimates rest on is said once, above the cards: each card its amount only.
    assert.ok(height < 500, `a plan card is compact: ${height} px`);
  }
  // Each card carries a yearly estimate, said once above the cards to be a typical home's (a
  // house here counts as mid-size); another size asks for the plans again, with that size's
  // figures.
  const estimates = async (size) => {
    const cards = flow.locator("[data-testid=plan]");
    const basis = flow.locator("[data-testid=estimate-basis]", { hasText: `typical ${size}` });
    await basis.waitFor();
    assert.match(await basis.innerText(), new RegExp(`^Each plan's yearly cost is estimated for a typical ${size} home .*'s area, not your home's own use\\.$`));
    await cards.first().waitFor();
    const texts = await cards.locator("[data-testid=plan-estimate]").allInnerTexts();
    assert.equal(texts.length, await cards.count(), texts.join(" | "));
    for (const e of texts) assert.match(e, /^\$[\d,]+\.\d\d a year$/);
    return texts.map((e) => Number(e.slice(1, e.indexOf(" ")).replaceAll(",", "")));
  };
  const typical = await estimates("mid-size");
  await flow.getByLabel("Your home's size, for each plan's yearly estimate").selectOption("large");
  const large = await estimates("large");
  assert.equal(large.length, typical.length);
  assert.ok(large.every((cost, i) => cost > typical[i]), `${large} against ${typical}`);
  assert.equal(await flow.getByLabel("Your home's size, for each plan's yearly estimate").inputValue(), "large");
  assert.equal(await firstPlan.locator("table.averages").isVisible(), false, "details wait to be asked for");
  await firstPlan.locator("summary").click();
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
  // The consent names the partner the customer knows and the licensed provider.
  const consent = await flow.locator("[data-testid=consent-text]").innerText();
  assert.match(consent, new RegExp(`I authorize Bright Home Energy and ${PROVIDER}, the retail electric provider, to obtain my credit report`));
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
  // The review names what the customer chose, each with Change; Back returns to billing.
  await flow.locator("[data-testid=review-card]", { hasText: "Visa ending in 4242" }).waitFor();
  const plan = await flow.locator("[data-testid=review-plan]").innerText();
  assert.match(plan, /: \d+\.\d¢ per kWh at 1,000 kWh a month, no cancellation fee$/);
  // A reload reviews the same: the plan's price and fee and the card are read back.
  await flowFrame(page).evaluate(() => location.reload());
  await step(flow, "review");
  await flow.locator("[data-testid=review-card]", { hasText: "Visa ending in 4242" }).waitFor();
  assert.equal(await flow.locator("[data-testid=review-plan]").innerText(), plan);
  assert.match(await flow.locator("[data-testid=review-start]").innerText(), /^[A-Z][a-z]+ \d{1,2}, \d{4}$/);
  assert.match(await flow.locator("[data-testid=review-home]").innerText(), /ESI ID \d+/);
  assert.equal(await flow.locator("[data-testid=review] button", { hasText: "Change" }).count(), 6);
  await shot(page, `${prefix}-8-review.png`);
  await flow.locator("[data-testid=back]").click();
  await step(flow, "billing");
  await flow.getByRole("button", { name: "Continue" }).click();
  await step(flow, "review");
  // While the enrollment is sent, the button spins and says so, as a live region that screen
  // readers announce (the answer is held back until that is seen).
  let release;
  const held = new Promise((resolve) => (release = resolve));
  await page.route("**/v1/account/enroll/finalize", async (route) => {
    await held;
    await route.continue();
  });
  await flow.getByRole("button", { name: "Confirm enrollment" }).click();
  await flow.locator("button[aria-disabled=true][aria-live=polite]", { hasText: "Please wait…" }).waitFor();
  release();

  await step(flow, "done");
  await page.unroute("**/v1/account/enroll/finalize");
  const done = flow.locator("[data-testid=done]");
  await done.waitFor();
  // Nothing is "all set" while the credit check or the utility may still say no: the page
  // says what comes next and that the answer is e-mailed.
  const outcome = await done.getAttribute("data-outcome");
  assert.ok(["pending", "submitted", "scheduled"].includes(outcome), outcome);
  const said = await done.innerText();
  assert.doesNotMatch(said, /all set/i);
  if (outcome === "pending") assert.match(said, /credit check[\s\S]*We e-mail \S+@\S+ as soon as it has answered/);
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
  await flow.getByLabel("Expiry (MM / YY)").fill("12/34");
  await flow.getByLabel("Security code").fill("123");
}

/// The close messages the host received (it also hears the flow's height).
async function closeMessages(page) {
  const close = (m) => m.data && m.data.type === "service-flow-close";
  await page.waitForFunction((type) => window.__messages.some((m) => m.data && m.data.type === type), "service-flow-close", { timeout: 5_000 });
  return (await page.evaluate(() => window.__messages)).filter(close);
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
  const link = await flowLink(account.uuid);
  const host = await hostPage(link, 1280);
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
    // The page is the partner's: its title and icon.
    const frame = flowFrame(page);
    assert.equal(await frame.title(), "Bright Home Energy");
    assert.equal(await frame.evaluate(() => [...document.querySelectorAll("link[rel=icon]")].pop().getAttribute("href")), `${baseUrl}/favicon.svg`);
    // The orange is too light for text on white: links and text use a darker shade of it.
    const text = await flow.locator("main.flow").evaluate((m) => getComputedStyle(m).getPropertyValue("--brand-text").trim());
    assert.notEqual(text, BRAND_COLOR);
    await assertResized(page);

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

    // Each step was told to the host as it showed (`service-flow-event`), under one public
    // session id, the completion among them, and before the close.
    const all = await page.evaluate(() => window.__messages.map((m) => m.data));
    const told = all.filter((d) => d && d.type === "service-flow-event");
    assert.equal(told[0].name, "opened");
    const shown = [...new Set(told.filter((e) => e.name === "step_viewed").map((e) => e.step))];
    assert.deepEqual(shown, ["address", "plan", "identity", "credit", "payment", "billing", "review", "done"]);
    assert.equal(told.filter((e) => e.name === "completed").length, 1);
    assert.ok(!told.some((e) => e.name === "exited" || e.name === "abandoned"));
    const ids = new Set(told.map((e) => e.flow_session_id));
    assert.equal(ids.size, 1, "one session");
    const [sessionId] = ids;
    assert.match(sessionId, /^[0-9a-f-]{36}$/);
    assert.ok(!link.includes(sessionId), "the id is not the token");
    assert.ok(told.every((e) => e.scope === "enrollment"));
    // The one error shown is the plan step's own (accepting without ticking the terms), told by
    // its code only.
    assert.deepEqual(
      told.filter((e) => "error_code" in e).map((e) => [e.name, e.step, e.error_code]),
      [["error_shown", "plan", "invalid_input"]],
    );
    assert.ok(all.findIndex((d) => d && d.type === "service-flow-close") > all.findIndex((d) => d && d.name === "completed"));

    // The spent link, opened again in the frame, tells the host it expired.
    await page.evaluate((link) => {
      window.__messages = [];
      document.getElementById("flow").src = link;
    }, link);
    const [spent] = await closeMessages(page);
    assert.deepEqual(spent.data, { type: "service-flow-close", reason: "expired" });
    assert.deepEqual(await context.cookies(), [], "the flow needs no cookie");
    assert.deepEqual(appErrors(errors).filter((e) => !/status of 410/.test(e)), []);
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
    // The header keeps to one line at 360 px: the logo stands for the name.
    const header = await flow.locator(".flow-header").evaluate((h) => h.getBoundingClientRect().height);
    assert.ok(header < 60, `the header is one line: ${header} px`);
    await shot(page, "enroll-360-0-address.png");
    const search = flow.getByLabel("Service address");
    await search.pressSequentially(address.address_1.slice(0, 8), { delay: 30 });
    await flow.locator("[data-testid=address-results] [role=option]").first().waitFor();
    await search.fill(address.address_1);
    const choice = flow.locator("[data-testid=address-results] [role=option]", { hasText: address.address_1 }).filter({ hasText: address.postal_code }).first();
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
    // Too young: the API's rule, said to the customer at the date of birth, which has the focus.
    await flow.getByLabel("Date of birth").fill("2015-09-30");
    await flow.getByRole("button", { name: "Continue" }).click();
    const young = flow.locator("[data-testid=step-error]");
    await young.waitFor();
    assert.match(await young.innerText(), /you must be 18 or older/);
    assert.doesNotMatch(await young.innerText(), /customer must|years old/);
    const birth = flow.getByLabel("Date of birth");
    assert.equal(await birth.getAttribute("aria-invalid"), "true");
    assert.equal(await birth.getAttribute("aria-describedby"), "step-error");
    assert.equal(await birth.evaluate((el) => el === document.activeElement), true);
    await shot(page, "errors-0-too-young.png");
    await birth.fill("1985-09-30");
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
    // In the customer's words: never the browser's "TypeError: Failed to fetch".
    const offline = await flow.locator("[data-testid=step-error]").innerText();
    assert.match(offline, /We could not reach the server\. Check your connection, then try again\./);
    assert.doesNotMatch(offline, /TypeError|fetch/);
    await flow.getByRole("button", { name: "Try again" }).click();

    // That card is declined: the error is at the card number, and another card works.
    await flow.locator("[data-testid=step-error][data-code=card_declined]").waitFor();
    assert.equal(await flow.getByLabel("Card number").getAttribute("aria-invalid"), "true");
    await shot(page, "errors-3-declined.png");
    await flow.getByLabel("Card number").fill("4242424242424242");
    await flow.locator("[data-testid=step-error]").waitFor({ state: "detached" });
    await flow.getByRole("button", { name: "Save card" }).click();
    await step(flow, "billing");

    const now = await api("GET", `/v1/app/accounts/${account.uuid}`, app.token);
    assert.equal(now.enrollment.has_payment_method, true);
    assert.equal(now.enrollment.has_accepted_plan, true);
    // Only the too young customer (400), the expired price (409), the declined card (402) and
    // the dropped request may show.
    assert.deepEqual(
      appErrors(errors).filter((e) => !/status of 40[029]|ERR_INTERNET_DISCONNECTED/.test(e)),
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
    await page.locator("[data-testid=address-results] [role=option]").first().waitFor();
    const combo = page.locator("#address-query");
    assert.equal(await combo.getAttribute("role"), "combobox");
    assert.equal(await combo.getAttribute("aria-expanded"), "true");
    assert.match(await page.locator("[data-testid=address-status]").innerText(), /found/);
    // Arrow keys move through the results, focus staying in the field; Escape closes the list.
    await page.keyboard.press("ArrowDown");
    assert.equal(await combo.getAttribute("aria-activedescendant"), "address-option-0");
    assert.equal(await page.locator("#address-option-0").getAttribute("aria-selected"), "true");
    await page.keyboard.press("Escape");
    assert.equal(await combo.getAttribute("aria-expanded"), "false");
    assert.equal(await combo.getAttribute("aria-activedescendant"), null);
    await page.keyboard.type(" ", { delay: 20 });
    await page.keyboard.press("Backspace");
    const wanted = page.locator("[data-testid=address-results] [role=option]", { hasText: address.address_1 }).filter({ hasText: address.postal_code }).first();
    await wanted.waitFor();
    const index = Number((await wanted.getAttribute("id")).replace("address-option-", ""));
    for (let i = 0; i <= index; i++) await page.keyboard.press("ArrowDown");
    assert.equal(await combo.getAttribute("aria-activedescendant"), `address-option-${index}`);
    assert.equal(await page.evaluate(() => document.activeElement.id), "address-query");
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
    // A well-formed number the directory does not know: what to do, not the API's words.
    await page.getByLabel("ESI ID").fill("10443720000009876");
    await page.getByRole("button", { name: "Find my meter" }).click();
    await page.locator("[data-testid=step-error][data-code=esi_id_not_found]").waitFor();
    assert.match(await page.locator("[data-testid=step-error]").innerText(), /Check the number on your electricity bill, or search by address instead/);
    assert.equal(await page.getByLabel("ESI ID").getAttribute("aria-invalid"), "true");
    await assertAccessible(page.mainFrame(), "ESI ID not found");
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
    // Left empty, the street is asked for at its field, in the customer's words.
    await page.getByLabel("City").fill("AUSTIN");
    await page.getByLabel("ZIP code").fill("78701");
    await page.getByRole("button", { name: "Continue" }).click();
    await page.locator("[data-testid=step-error]").waitFor();
    assert.equal(await page.locator("[data-testid=step-error]").innerText(), "Enter the street address.");
    assert.equal(await page.getByLabel("Street address").getAttribute("aria-invalid"), "true");
    await assertAccessible(page.mainFrame(), "billing address error");
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
    // Only the unknown ESI ID (404) and the missing street (400) may show.
    assert.deepEqual(appErrors(errors).filter((e) => !/status of 40[04]/.test(e)), []);
    await assertNoSetCookie(setCookies);
  } finally {
    await context.close();
  }
});

test("a reload of the frame resumes the flow; a closed or expired session does not come back", async () => {
  const address = await findAddress(5);
  const account = await createAccount("enroll-reload@example.com", undefined);
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
    // The frame reloads (the host re-rendered, the customer pulled to refresh): same step.
    await flowFrame(page).evaluate(() => location.reload());
    await flow.locator("main[data-hydrated=true]").waitFor({ timeout: 30_000 });
    await step(flow, "plan");
    assert.equal(await flow.locator("[data-testid=no-session]").count(), 0);
    assert.deepEqual(await context.cookies(), [], "the session is kept without a cookie");

    // A session the server no longer honours (as one past its hour): the reloaded flow says so
    // in the partner's name and tells the host.
    await flowFrame(page).evaluate(() => {
      if (!window.name.startsWith("switchboard-flow:enrollment:")) throw new Error("the session is not kept by the frame");
      window.name = window.name.slice(0, -4) + "0000";
      location.reload();
    });
    await flow.locator("[data-testid=expired]").waitFor({ timeout: 30_000 });
    assert.match(await flow.locator("[data-testid=expired]").innerText(), /open it again from Bright Home Energy/);
    const [expired] = await closeMessages(page);
    assert.deepEqual(expired.data, { type: "service-flow-close", reason: "expired", scope: "enrollment" });
    await shot(page, "expired-1280.png");
    // The ended session is forgotten: another reload does not try it again.
    await flowFrame(page).evaluate(() => location.reload());
    await flow.locator("[data-testid=no-session]").waitFor({ timeout: 30_000 });
    assert.deepEqual(
      appErrors(errors).filter((e) => !/status of 401/.test(e)),
      [],
    );
    await assertNoSetCookie(setCookies);
  } finally {
    await context.close();
    await host.close();
  }
});

test("a customer whose service runs sees it active when the enrollment flow opens again", async () => {
  const customer = await seededCustomer(app, "enroll-active@example.com");
  for (const width of [360, 1280]) {
    const host = await hostPage(await flowLink(customer.uuid), width);
    const context = await browser.newContext({ viewport: { width, height: 800 } });
    const page = await foreground(context);
    try {
      await page.goto(host.url);
      const flow = page.frameLocator("#flow");
      await step(flow, "done");
      const done = flow.locator("[data-testid=done]");
      assert.equal(await done.getAttribute("data-active"), "true");
      assert.equal(await flow.locator("h2").innerText(), "Your service");
      const text = await done.innerText();
      assert.match(text, /Your electricity service is active, Ana\./);
      assert.match(text, /has supplied .+ since [A-Z][a-z]+ \d{1,2}, \d{4}/);
      assert.doesNotMatch(text, /arranging the switch|planned to start/);
      await shot(page, `active-${width}.png`);
    } finally {
      await context.close();
      await host.close();
    }
  }
});
