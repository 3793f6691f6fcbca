// The soak workload (driven by end2end/bench/soak.sh): virtual partners' customers, each walking
// the whole story through the API again and again for a set time, spread over one or more API
// instances: an account, its token, the enrollment (address search, confirm, plans, accept,
// identity, credit check, card, finalize), the flow page of a flow link, clock advances through
// service start and bills, and the reads a partner's app makes (account, invoices, an invoice,
// its PDF, usage, meter reads); webhooks of every event go to a local receiver. Prints the
// totals (throughput, errors, webhooks received) and per operation count, errors, p50/p99/max ms.
//
//   BASES=http://127.0.0.1:3951,http://127.0.0.1:3952 APP_TOKEN=... DURATION=600 USERS=8 \
//     RECEIVER_PORT=3959 node end2end/bench/soak.mjs

import http from "node:http";

const bases = (process.env.BASES ?? "http://127.0.0.1:3951").split(",");
const appToken = process.env.APP_TOKEN;
const duration = Number(process.env.DURATION ?? 600) * 1000;
const users = Number(process.env.USERS ?? 8);
const receiverPort = Number(process.env.RECEIVER_PORT ?? 3959);
if (!appToken) throw new Error("APP_TOKEN is required");

const stats = new Map(); // operation -> {ms: [], errors, lastError}
function record(op, ms, ok, detail) {
  let s = stats.get(op);
  if (!s) stats.set(op, (s = { ms: [], errors: 0, lastError: null }));
  s.ms.push(ms);
  if (!ok) {
    s.errors += 1;
    s.lastError = detail;
  }
}

let next = 0;
const base = () => bases[next++ % bases.length];

/// One timed request; answers {status, body, text}. A status outside `expect` counts as an error.
async function call(op, method, path, { token, body, expect = [200, 201, 202], raw = false, url } = {}) {
  const started = performance.now();
  let status = 0;
  let text = "";
  let buffer = null;
  try {
    const r = await fetch(url ?? `${base()}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
      redirect: "follow",
    });
    status = r.status;
    if (raw) buffer = await r.arrayBuffer();
    else text = await r.text();
  } catch (e) {
    text = String(e);
  }
  const ok = expect.includes(status);
  record(op, performance.now() - started, ok, `${status} ${method} ${path ?? url}: ${text.slice(0, 200)}`);
  let parsed = null;
  if (!raw) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
  }
  return { ok, status, body: parsed, bytes: buffer ? buffer.byteLength : 0 };
}

// The webhook receiver: counts deliveries, answers 200.
let webhooks = 0;
const receiver = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    webhooks += 1;
    res.writeHead(200).end();
  });
});
await new Promise((resolve) => receiver.listen(receiverPort, "127.0.0.1", resolve));

const endpoint = await call("webhook_endpoint_create", "POST", "/v1/app/webhook-endpoints", {
  token: appToken,
  body: { url: `http://127.0.0.1:${receiverPort}/hook` },
});
if (!endpoint.ok) throw new Error(`webhook endpoint: ${JSON.stringify(endpoint.body)}`);

// Plain single-meter addresses of the directory, away from the sandbox's magic ESI IDs.
const addresses = [];
for (const query of ["1", "2", "3", "4", "5", "6", "7", "8", "9"]) {
  const found = await call("address_search", "POST", "/v1/app/accounts/enroll/address-search", {
    token: appToken,
    body: { query, limit: 50 },
  });
  for (const a of found.body ?? []) {
    if (!a.address_2 && !/(1111|2222|3333)$/.test(a.esi_id)) addresses.push(a);
  }
}
if (addresses.length === 0) throw new Error("the directory has no plain address");

const deadline = Date.now() + duration;
let journeys = 0;
let serial = 0;

async function journey(user) {
  const n = serial++;
  const address = addresses[n % addresses.length];
  const created = await call("account_create", "POST", "/v1/app/accounts", {
    token: appToken,
    body: { email: `soak-${process.pid}-${n}@example.com`, first_name: "Sam", last_name: "Oak" },
  });
  if (!created.ok) return;
  const uuid = created.body.uuid;
  const tok = await call("account_token", "POST", `/v1/app/accounts/${uuid}/token`, { token: appToken });
  if (!tok.ok) return;
  const token = tok.body.token;

  // The flow page a partner embeds.
  const link = await call("flow_login", "POST", `/v1/app/accounts/${uuid}/flow-login`, {
    token: appToken,
    body: { scope: "enrollment" },
  });
  if (link.ok) await call("flow_page", "GET", null, { url: link.body.login_link, raw: true });

  // The enrollment through the API.
  const steps = [
    ["confirm_address", "POST", "/v1/account/enroll/confirm-address", { esi_id: address.esi_id }],
  ];
  for (const [op, method, path, body] of steps) {
    if (!(await call(op, method, path, { token, body })).ok) return;
  }
  const plans = await call("plans_request", "POST", "/v1/account/enroll/plans/request", { token, body: {} });
  const plan = plans.body?.plans?.find((p) => p.plan_type === "fixed");
  if (!plan) return;
  const accepted = await call("plan_accept", "POST", "/v1/account/enroll/plans/accept", {
    token,
    body: { plan_uuid: plan.plan_uuid, service_start_date: plan.earliest_switch_start_date, terms_accepted: true },
  });
  if (!accepted.ok) return;
  await call("identity", "PATCH", "/v1/account/enroll/identity", {
    token,
    body: { phone: "5125550142", date_of_birth: "1979-01-31" },
  });
  await call("credit_check", "POST", "/v1/account/enroll/credit-check", {
    token,
    body: { ssn: "123456789", consent: true },
  });
  const session = await call("payment_session", "POST", "/v1/account/billing/payment-session", { token });
  if (!session.ok) return;
  const card = await call("processor_card", "POST", "/processor/v1/payment_methods", {
    token: session.body.publishable_key,
    body: {
      client_secret: session.body.client_secret,
      card: { number: "4242424242424242", exp_month: 12, exp_year: 2034, cvc: "123" },
    },
  });
  if (!card.ok) return;
  await call("card_attach", "POST", "/v1/account/billing/ensure-payment-method-added", {
    token,
    body: { payment_method_id: card.body.id },
  });
  if (!(await call("finalize", "POST", "/v1/account/enroll/finalize", { token, body: {} })).ok) return;

  // Service starts, and two cycles are read and billed (auto-pay on the way).
  await call("advance_clock", "POST", "/v1/account/sandbox/advance-clock", { token, body: { days: 10 } });
  await call("advance_clock", "POST", "/v1/account/sandbox/advance-clock", { token, body: { days: 60 } });

  // What a partner's app reads, a few rounds.
  const me = await call("account_read", "GET", "/v1/account", { token });
  const location = me.body?.locations?.[0]?.uuid;
  for (let round = 0; round < 3 && Date.now() < deadline; round++) {
    await call("account_read", "GET", "/v1/account", { token });
    await call("account_read_app", "GET", `/v1/app/accounts/${uuid}`, { token: appToken });
    const invoices = await call("invoices_list", "GET", "/v1/account/billing/invoices", { token });
    const number = invoices.body?.data?.[0]?.number;
    if (number) {
      await call("invoice_read", "GET", `/v1/account/billing/invoices/${number}`, { token });
      if (round === 0) await call("invoice_pdf", "GET", `/v1/account/billing/invoices/${number}/pdf`, { token, raw: true });
    }
    if (location) {
      await call("usage_monthly", "GET", `/v1/account/locations/${location}/usage/monthly`, { token });
      await call("usage_daily", "GET", `/v1/account/locations/${location}/usage/daily`, { token });
      await call("meter_reads", "GET", `/v1/account/locations/${location}/meter-reads`, { token });
    }
    await call("events_list", "GET", `/v1/app/events?account_uuid=${uuid}`, { token: appToken });
  }
  journeys += 1;
}

async function user(i) {
  while (Date.now() < deadline) {
    await journey(i);
  }
}

const started = performance.now();
await Promise.all(Array.from({ length: users }, (_, i) => user(i)));
const elapsed = (performance.now() - started) / 1000;
// Deliveries still in flight get a moment to land.
await new Promise((r) => setTimeout(r, 3000));
receiver.close();

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const operations = {};
let requests = 0;
let errors = 0;
for (const [op, s] of [...stats.entries()].sort()) {
  const sorted = [...s.ms].sort((a, b) => a - b);
  requests += sorted.length;
  errors += s.errors;
  operations[op] = {
    count: sorted.length,
    errors: s.errors,
    p50_ms: +pct(sorted, 50).toFixed(1),
    p99_ms: +pct(sorted, 99).toFixed(1),
    max_ms: +sorted[sorted.length - 1].toFixed(1),
    ...(s.lastError ? { last_error: s.lastError } : {}),
  };
}
const summary = {
  seconds: +elapsed.toFixed(1),
  users,
  instances: bases.length,
  journeys,
  requests,
  requests_per_second: +(requests / elapsed).toFixed(1),
  errors,
  webhooks_received: webhooks,
};
console.log(Object.entries(summary).map(([k, v]) => `${k}: ${v}`).join(", "));
console.log(`${"operation".padEnd(24)} ${"count".padStart(7)} ${"errors".padStart(6)} ${"p50 ms".padStart(8)} ${"p99 ms".padStart(8)} ${"max ms".padStart(8)}`);
for (const [op, o] of Object.entries(operations)) {
  console.log(
    `${op.padEnd(24)} ${String(o.count).padStart(7)} ${String(o.errors).padStart(6)} ${String(o.p50_ms).padStart(8)} ${String(o.p99_ms).padStart(8)} ${String(o.max_ms).padStart(8)}`,
  );
  if (o.last_error) console.log(`  last error: ${o.last_error}`);
}
