// The dashboard in Chromium: a partner member made with the CLI signs in, creates a sandbox
// app, makes a key and revokes it (the API then refuses it), registers an allowed origin (the
// flow page's frame-ancestors follows); a forged form is refused; repeated wrong passwords are
// throttled; a webhook endpoint is added and sent a test event, whose delivery (with the start
// of the receiver's answer) shows in the log; an operator finds an account and opens its
// invoice and a document as PDFs; an operator uploads an app's logo and edits one of its plan
// groups (a wrong value refused at its field, then a new version). The operator's tools: a
// key is named, shown once after the form's redirect (a reload shows nothing and makes
// nothing), and revoked only from a confirmation that names it; disabling an endpoint and
// rotating its secret ask first; a refused value stays in its field with the reason beside
// it; the audit log is filtered, paged and readable at 360 px; the API reference page.
// Screenshots at 360 and 1280 px, axe-clean where noted.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createServer } from "node:http";
import path from "node:path";
import { api, artifacts, baseUrl, collectErrors, createApp, launchBrowser, root, serverBin, waitForServer } from "../lib/harness.mjs";
import { assertAccessible } from "../lib/axe.mjs";

let browser;
// E-mails unique to this run, so that the test may run again on the same database.
const run = Date.now().toString(36);
const partnerEmail = `partner-${run}@acme.example`;
const throttledEmail = `throttled-${run}@acme.example`;
const hooksEmail = `hooks-${run}@acme.example`;
const operatorEmail = `ops-${run}@switchboard.example`;

/// A dashboard user made with the server's CLI; returns the one-time password it prints.
function createUser(email, role, organisation) {
  const args = ["users", "create", "--email", email, "--role", role];
  if (organisation) args.push("--organisation", organisation);
  const out = execFileSync(serverBin, args, { cwd: root, encoding: "utf8" });
  const line = out.split("\n").find((l) => l.trim().startsWith("password:"));
  assert.ok(line, `no password printed: ${out}`);
  return line.trim().split(/\s+/)[1];
}

async function signIn(page, email, password) {
  await page.goto(`${baseUrl}/dashboard/sign-in`);
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

async function shots(page, name) {
  for (const width of [360, 1280]) {
    await page.setViewportSize({ width, height: 900 });
    const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(scrollWidth <= width, `the ${name} page is ${scrollWidth} px wide at ${width} px`);
    await page.screenshot({ path: path.join(artifacts, `dashboard-${name}-${width}.png`), fullPage: true });
  }
}

/// Screenshots at both widths, with no horizontal page scroll and no axe violation at either.
async function checkedShots(page, name) {
  for (const width of [360, 1280]) {
    await page.setViewportSize({ width, height: 900 });
    const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(scrollWidth <= width, `the ${name} page is ${scrollWidth} px wide at ${width} px`);
    await assertAccessible(page, `${name} at ${width} px`);
    await page.screenshot({ path: path.join(artifacts, `dashboard-${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

async function apiStatus(token) {
  const r = await fetch(`${baseUrl}/v1/app`, { headers: { authorization: `Bearer ${token}` } });
  return r.status;
}

before(async () => {
  await waitForServer();
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
});

test("a partner signs in, creates a sandbox app, manages keys and origins", async () => {
  const password = createUser(partnerEmail, "partner", "Acme");
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = collectErrors(page);

  await page.goto(`${baseUrl}/dashboard`);
  assert.match(page.url(), /\/dashboard\/sign-in$/, "signed out, the dashboard asks to sign in");
  await shots(page, "sign-in");
  await signIn(page, partnerEmail, password);
  await page.getByRole("heading", { name: "Apps" }).waitFor();

  await page.getByLabel("Name", { exact: true }).fill("Acme Energy");
  await page.getByLabel("Environment").selectOption("sandbox");
  await page.getByRole("button", { name: "Create app" }).click();
  await page.getByRole("heading", { name: "Your app was created" }).waitFor();
  const first = await page.locator("#token").inputValue();
  assert.match(first, /^swb_sandbox_/);
  assert.equal(await apiStatus(first), 200, "the new app's key works");
  await page.getByRole("link", { name: "Continue to the app" }).click();
  await page.getByRole("heading", { name: "Acme Energy" }).waitFor();
  const appUuid = page.url().split("/").pop();

  // A key without a name is refused beside its field, and what was typed stays.
  await page.getByLabel("Name of the new key").fill("   ");
  await page.getByRole("button", { name: "Create a key" }).click();
  await page.locator("#key_name-error").waitFor();
  assert.match(await page.locator("#key_name-error").innerText(), /Give the key a name/);
  assert.equal(await page.getByLabel("Name of the new key").getAttribute("aria-invalid"), "true");
  await checkedShots(page, "key-name-refused");
  await page.getByLabel("Name of the new key").fill("Billing server");
  await page.getByRole("button", { name: "Create a key" }).click();
  await page.getByRole("heading", { name: "A new key was created" }).waitFor();
  assert.match(page.url(), /\/dashboard\/shown$/, "the form answered with a redirect");
  const second = await page.locator("#token").inputValue();
  assert.ok(!page.url().includes(second), "the key is never in the address");
  assert.equal(await apiStatus(second), 200);
  await checkedShots(page, "key-shown");
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: baseUrl });
  await page.getByRole("button", { name: "Copy" }).click();
  await page.getByText("Copied.").waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), second, "the key is on the clipboard");
  // A reload shows nothing and makes nothing.
  await page.reload();
  await page.getByRole("heading", { name: "Nothing to show" }).waitFor();
  assert.equal(await page.locator("#token").count(), 0);
  await page.goto(`${baseUrl}/dashboard/apps/${appUuid}`);
  assert.equal(await page.getByRole("cell", { name: "Billing server", exact: true }).count(), 1, "one key of that name");
  await page.getByRole("link", { name: "Revoke the key Billing server" }).click();
  await page.getByRole("heading", { name: "Revoke the key “Billing server”?" }).waitFor();
  await page.getByText("stops working at once").waitFor();
  await page.getByText("The app's other active key keeps working.").waitFor();
  assert.equal(await apiStatus(second), 200, "asking revokes nothing");
  await checkedShots(page, "revoke-confirm");
  await page.getByRole("button", { name: "Revoke the key" }).click();
  await page.getByText("The key was revoked.").waitFor();
  assert.equal(await apiStatus(second), 401, "a revoked key is refused");
  assert.equal(await apiStatus(first), 200, "the other key still works");

  const flow = `${baseUrl}/flow/enrollment?app=${appUuid}`;
  const before = (await fetch(flow)).headers.get("content-security-policy");
  assert.equal(before, "frame-ancestors *");
  await page.getByLabel("Origins").fill("https://partner.example");
  await page.getByRole("button", { name: "Save origins" }).click();
  await page.getByText("The allowed origins were saved.").waitFor();
  const afterCsp = (await fetch(flow)).headers.get("content-security-policy");
  assert.equal(afterCsp, "frame-ancestors 'self' https://partner.example");
  await shots(page, "app");

  // A form whose CSRF token is not the session's is refused and changes nothing.
  await page.evaluate(() => {
    for (const input of document.querySelectorAll("input[name=csrf]")) input.value = "forged";
  });
  const [refused] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith("/origins") && r.request().method() === "POST"),
    page.getByLabel("Origins").fill("https://evil.example").then(() =>
      page.getByRole("button", { name: "Save origins" }).click()),
  ]);
  assert.equal(refused.status(), 403);
  assert.equal((await fetch(flow)).headers.get("content-security-policy"), afterCsp, "unchanged");

  await page.goto(`${baseUrl}/dashboard`);
  await shots(page, "apps");
  // The refused form's 403 is logged as a failed load, as is a missing favicon; anything else
  // (a CSP violation, a script error) is not expected.
  const unexpected = errors.filter((e) => !e.startsWith("Failed to load resource"));
  assert.deepEqual(unexpected, [], "no console errors (a CSP violation would show here)");
  await context.close();
});

test("repeated wrong passwords are throttled", async () => {
  const password = createUser(throttledEmail, "partner", "Acme");
  const context = await browser.newContext();
  const page = await context.newPage();
  for (let i = 0; i < 5; i++) {
    await signIn(page, throttledEmail, "wrong password!");
    await page.getByText("The e-mail or the password is not right.").waitFor();
  }
  await signIn(page, throttledEmail, password);
  await page.getByText("Too many failed sign-ins").waitFor();
  await page.goto(`${baseUrl}/dashboard`);
  assert.match(page.url(), /\/dashboard\/sign-in$/, "still signed out");
  await context.close();
});

/// A webhook receiver on loopback (the server under test must allow private targets for
/// sandbox apps: `SWITCHBOARD_WEBHOOKS__ALLOW_PRIVATE_TARGETS=true`); answers 200 with a body.
async function startReceiver() {
  const hits = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      hits.push({ id: req.headers["webhook-id"], body });
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("received by the e2e receiver");
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${server.address().port}/hook`, hits, close: () => server.close() };
}

test("a webhook endpoint is added, sent a test event, and the delivery shows in the log", async () => {
  const receiver = await startReceiver();
  const password = createUser(hooksEmail, "partner", "Acme");
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = collectErrors(page);
  try {
    await signIn(page, hooksEmail, password);
    await page.getByRole("heading", { name: "Apps" }).waitFor();
    await page.getByLabel("Name", { exact: true }).fill("Acme Hooks");
    await page.getByRole("button", { name: "Create app" }).click();
    await page.getByRole("link", { name: "Continue to the app" }).click();
    await page.getByRole("heading", { name: "Acme Hooks" }).waitFor();
    const appPage = page.url();

    await page.getByLabel("Endpoint URL").fill(receiver.url);
    await page.getByRole("button", { name: "Add endpoint" }).click();
    await page.getByRole("heading", { name: "Webhook endpoint added" }).waitFor();
    assert.match(await page.locator("#token").inputValue(), /^whsec_/);
    await page.getByRole("link", { name: "Continue to the endpoint" }).click();
    await page.getByRole("heading", { name: "Webhook endpoint" }).waitFor();

    await page.getByRole("button", { name: "Send a test event" }).click();
    await page.getByText("A test event was sent").waitFor();
    const deadline = Date.now() + 20_000;
    for (;;) {
      const log = await page.locator("table").innerText();
      if (log.includes("webhook.test") && log.includes("received by the e2e receiver")) break;
      assert.ok(Date.now() < deadline, `the test delivery never showed in the log: ${log}`);
      await new Promise((r) => setTimeout(r, 500));
      await page.reload();
    }
    const row = page.locator("tbody tr", { hasText: "webhook.test" }).first();
    assert.match(await row.innerText(), /succeeded/);
    assert.match(await row.innerText(), /200/);
    assert.equal(receiver.hits.length, 1, "one delivery");
    assert.equal(JSON.parse(receiver.hits[0].body).type, "webhook.test");
    await shots(page, "webhook");

    // Disabling asks first, naming the endpoint; only the confirmation disables it.
    await page.getByRole("link", { name: "Disable…" }).click();
    await page.getByRole("heading", { name: `Disable the webhook endpoint ${receiver.url}?` }).waitFor();
    await page.getByText("stops receiving the events").waitFor();
    await checkedShots(page, "disable-confirm");
    await page.getByRole("link", { name: "Cancel" }).click();
    await page.getByText("State: enabled").waitFor();
    await page.getByRole("link", { name: "Disable…" }).click();
    await page.getByRole("button", { name: "Disable the endpoint" }).click();
    await page.getByText("The endpoint is disabled.").waitFor();
    await page.getByRole("button", { name: "Enable" }).click();
    await page.getByText("The endpoint is enabled.").waitFor();

    // Rotating asks first too; the new secret is shown once after the redirect.
    await page.getByRole("link", { name: "Rotate the signing secret…" }).click();
    await page.getByRole("heading", { name: `Rotate the signing secret of ${receiver.url}?` }).waitFor();
    await checkedShots(page, "rotate-confirm");
    await page.getByRole("button", { name: "Rotate the secret" }).click();
    await page.getByRole("heading", { name: "Signing secret rotated" }).waitFor();
    const rotated = await page.locator("#token").inputValue();
    assert.match(rotated, /^whsec_/);
    await page.reload();
    await page.getByRole("heading", { name: "Nothing to show" }).waitFor();

    // A refused URL stays in its field with the reason beside it (the browser's own check of
    // the field is lifted, as a hand-made form would).
    await page.goto(appPage);
    await page.locator("form", { has: page.getByLabel("Endpoint URL") }).evaluate((f) => (f.noValidate = true));
    await page.getByLabel("Endpoint URL").fill("ftp://hooks.example.com/in");
    await page.getByRole("button", { name: "Add endpoint" }).click();
    await page.locator("#webhook_url-error").waitFor();
    assert.equal(await page.getByLabel("Endpoint URL").inputValue(), "ftp://hooks.example.com/in");
    await checkedShots(page, "webhook-url-refused");
    const unexpected = errors.filter((e) => !e.startsWith("Failed to load resource"));
    assert.deepEqual(unexpected, [], "no console errors");
  } finally {
    receiver.close();
    await context.close();
  }
});

test("an operator finds an account and opens its invoice and a document as PDFs", async () => {
  const app = createApp("Dashboard PDF Energy");
  const email = `pdf-${run}@example.com`;
  const created = await api("POST", "/v1/app/accounts", app.token, { email, first_name: "Pia", last_name: "Ferro" });
  const { token } = await api("POST", `/v1/app/accounts/${created.uuid}/token`, app.token);
  await api("POST", "/v1/account/sandbox/seed-demo-data", token);

  const password = createUser(operatorEmail, "operator");
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = collectErrors(page);
  try {
    await signIn(page, operatorEmail, password);
    await page.getByRole("heading", { name: "Apps" }).waitFor();
    await page.getByRole("link", { name: "Accounts" }).click();
    await page.getByLabel("E-mail, name, account number or ESI ID").fill(email);
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByText("1 account(s) found.").waitFor();
    await page.locator("tbody a").first().click();
    await page.getByRole("heading", { name: "Pia Ferro" }).waitFor();
    await page.getByRole("heading", { name: "Payments" }).waitFor();
    await shots(page, "account");

    // The links open PDFs the dashboard serves itself (with the session's cookie).
    for (const kind of ["invoices", "documents"]) {
      const href = await page.locator(`a[href*="/${kind}/"]`).first().getAttribute("href");
      const r = await page.request.get(`${baseUrl}${href}`);
      assert.equal(r.status(), 200, `${kind}: ${href}`);
      assert.equal(r.headers()["content-type"], "application/pdf", kind);
      assert.equal((await r.body()).subarray(0, 4).toString(), "%PDF", kind);
    }
    const invoice = page.locator('a[href*="/invoices/"]').first();
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().includes("/invoices/")),
      invoice.click({ modifiers: [] }).catch(() => {}),
    ]);
    assert.equal(response.headers()["content-type"], "application/pdf", "the invoice link opens a PDF");
    const unexpected = errors.filter((e) => !e.startsWith("Failed to load resource"));
    assert.deepEqual(unexpected, [], "no console errors");
  } finally {
    await context.close();
  }
});

test("an operator uploads an app's logo and versions one of its plan groups", async () => {
  const app = createApp("Dashboard Groups Energy");
  const email = `groups-${run}@switchboard.example`;
  const password = createUser(email, "operator");
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = collectErrors(page);
  try {
    await signIn(page, email, password);
    await page.getByRole("heading", { name: "Apps" }).waitFor();
    await page.goto(`${baseUrl}/dashboard/apps/${app.app_uuid}`);

    // The logo: a PNG chosen in the file field, then served from this origin.
    await page.getByLabel("Upload a logo").setInputFiles(path.join(root, "server/tests/api/fixtures/logo.png"));
    await page.getByRole("button", { name: "Upload logo" }).click();
    await page.getByText("The logo was uploaded.").waitFor();
    const branding = (await api("GET", "/v1/app", app.token)).branding;
    assert.match(branding.logo_url, new RegExp(`/apps/${app.app_uuid}/logo/[0-9a-f]{64}\\.png$`));
    const logo = await fetch(branding.logo_url);
    assert.equal(logo.status, 200);
    assert.equal(logo.headers.get("content-type"), "image/png");

    // Plan groups: the list, a group's edit as a new version, its history.
    await page.getByRole("link", { name: "Plan groups" }).first().click();
    await page.getByRole("heading", { name: "Plan groups of Dashboard Groups Energy" }).waitFor();
    await shots(page, "plan-groups");
    await page.locator("tbody a").first().click();
    const groupUrl = page.url();
    await page.getByRole("link", { name: /^Edit/ }).click();
    await page.getByLabel("Base charge (cents a month)").fill("-5");
    await page.getByRole("button", { name: "Save as a new version" }).click();
    await page.getByText("Some values are not right").waitFor();
    await shots(page, "plan-group-error");
    await page.getByLabel("Base charge (cents a month)").fill("1234");
    await page.getByRole("button", { name: "Save as a new version" }).click();
    await page.waitForURL((u) => u.href.startsWith(groupUrl));
    await page.getByText("The plan group was saved as a new version.").waitFor();
    await page.getByText(/^Version 2 · plan group/).waitFor();
    await shots(page, "plan-group");
    const groups = await api("GET", "/v1/app/plan-groups", app.token);
    assert.ok(groups.data.some((g) => g.base_charge_cents_per_month === 1234), JSON.stringify(groups));
    const unexpected = errors.filter((e) => !e.startsWith("Failed to load resource"));
    assert.deepEqual(unexpected, [], "no console errors");
  } finally {
    await context.close();
  }
});

test("the operator reads the audit log at 360 and 1280 px: filtered, paged, targets linked", async () => {
  const app = createApp("Dashboard Audit Energy");
  const email = `audit-${run}@switchboard.example`;
  const password = createUser(email, "operator");
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = collectErrors(page);
  try {
    await signIn(page, email, password);
    await page.getByRole("heading", { name: "Apps" }).waitFor();
    await page.getByRole("link", { name: "Audit log" }).click();
    await page.getByRole("heading", { name: "Audit log" }).waitFor();
    await checkedShots(page, "audit");

    await page.getByLabel("Target (e.g. an app's id)").fill(app.app_uuid);
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL((u) => u.searchParams.get("target") === app.app_uuid);
    const rows = page.locator("tbody tr");
    assert.ok((await rows.count()) >= 1, "the app's creation is there");
    for (const text of await rows.allInnerTexts()) assert.ok(text.includes(app.app_uuid), text);
    assert.equal(await page.getByLabel("Target (e.g. an app's id)").inputValue(), app.app_uuid, "the filter keeps its value");
    // The detail folds open; the target is a link to the app.
    await rows.first().locator("summary").click();
    assert.ok(await rows.first().locator("details").evaluate((d) => d.open));
    await checkedShots(page, "audit-filtered");

    // A date that is no date is said beside its field.
    await page.goto(`${baseUrl}/dashboard/audit?from=yesterday`);
    await page.locator("#from-error").waitFor();
    await checkedShots(page, "audit-bad-date");

    await page.goto(`${baseUrl}/dashboard/audit?target=${app.app_uuid}`);
    await rows.first().getByRole("link").click();
    await page.getByRole("heading", { name: "Dashboard Audit Energy" }).waitFor();
    const unexpected = errors.filter((e) => !e.startsWith("Failed to load resource"));
    assert.deepEqual(unexpected, [], "no console errors");
  } finally {
    await context.close();
  }
});

test("the API reference reads as a page at 360 and 1280 px", async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = collectErrors(page);
  try {
    await page.goto(`${baseUrl}/docs/api`);
    await page.getByRole("heading", { level: 1 }).waitFor();
    await page.getByRole("heading", { name: "Shapes" }).waitFor();
    const accept = page.locator("section.op", { hasText: "/renewal-plans/accept" });
    assert.match(await accept.innerText(), /service_start_date/);
    assert.match(await accept.innerText(), /Example request body/);
    for (const width of [360, 1280]) {
      await page.setViewportSize({ width, height: 900 });
      const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(scrollWidth <= width, `the reference is ${scrollWidth} px wide at ${width} px`);
      await assertAccessible(page, `the API reference at ${width} px`);
      await page.screenshot({ path: path.join(artifacts, `api-reference-${width}.png`) });
      await accept.screenshot({ path: path.join(artifacts, `api-reference-accept-${width}.png`) });
    }
    const unexpected = errors.filter((e) => !e.startsWith("Failed to load resource"));
    assert.deepEqual(unexpected, [], "no console errors");
  } finally {
    await context.close();
  }
});
