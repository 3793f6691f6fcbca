// What each flow page downloads before it works, from the release site in target/site/pkg: its
// own bundle (WASM and JS glue; `frontend/build.sh` builds one per flow) and its stylesheets
// (the account flows add their own to the main one), as the precompressed brotli files that are
// served. Prints one line per flow and exits 1 when
// a flow is over the budget, or when a flow's bundle holds another flow's island.
//
//   node end2end/bench/flow-size.mjs [--baseline <site dir>]
//
// With --baseline, each flow's first load is also measured in another release site (a copy of
// target/site built from other code, such as target/site-baseline) and shown beside it, with
// the difference: a change to the flows is measured against what it changes, in one run.
import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const BUDGET = 150_000;
const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..", "..");
const pkg = path.join(root, "target", "site", "pkg");
const args = process.argv.slice(2);
const baseline = args[0] === "--baseline" && args[1] ? path.resolve(args[1], "pkg") : null;
if (args.length > 0 && !baseline) {
  console.error("usage: node end2end/bench/flow-size.mjs [--baseline <site dir>]");
  process.exit(2);
}

// Scope -> its bundle and its island (app/src/flow.rs).
const FLOWS = {
  enrollment: ["switchboard", "EnrollmentApp"],
  "update-payment-method": ["flow-update-payment-method", "PaymentMethodApp"],
  billing: ["flow-billing", "BillingApp"],
  documents: ["flow-documents", "DocumentsApp"],
  renewal: ["flow-renewal", "RenewalApp"],
};

/// The precompressed brotli size of `file` of the site whose pkg folder is `dir` (a path from
/// the site's root when it starts with `/`).
function brotli(file, dir = pkg) {
  const br = path.join(file.startsWith("/") ? path.dirname(dir) : dir, `${file.replace(/^\//, "")}.br`);
  if (!existsSync(br)) throw new Error(`${br} is missing: build with frontend/build.sh`);
  return statSync(br).size;
}

/// A flow's first load in the site whose pkg folder is `dir`: [total, WASM, JS, CSS].
function firstLoad(scope, bundle, dir) {
  const mainCss = brotli("switchboard.css", dir);
  const css = scope === "enrollment" ? mainCss : mainCss + brotli("/flows.css", dir);
  const [wasm, js] = [brotli(`${bundle}.wasm`, dir), brotli(`${bundle}.js`, dir)];
  return [wasm + js + css, wasm, js, css];
}

let failed = false;
for (const [scope, [bundle, island]] of Object.entries(FLOWS)) {
  const [total, wasm, js, css] = firstLoad(scope, bundle, pkg);
  // The JS glue exports the islands the WASM holds: this flow's, and no other.
  const glue = readFileSync(path.join(pkg, `${bundle}.js`), "utf8");
  const islands = Object.values(FLOWS)
    .map(([, name]) => name)
    .filter((name) => new RegExp(`\\b${name}_\\d+`).test(glue));
  const alone = islands.length === 1 && islands[0] === island;
  const over = total > BUDGET;
  failed ||= over || !alone;
  let against = "";
  if (baseline) {
    const [before, bw, bj, bc] = firstLoad(scope, bundle, baseline);
    const sign = total - before > 0 ? "+" : "";
    against = `; baseline ${before} (WASM ${bw}, JS ${bj}, CSS ${bc}), ${sign}${total - before}`;
  }
  console.log(
    `${scope.padEnd(22)} ${String(total).padStart(7)} bytes brotli (WASM ${wasm}, JS ${js}, CSS ${css})${against}` +
      (over ? `  OVER the ${BUDGET} budget` : "") +
      (alone ? "" : `  holds the islands ${islands.join(", ") || "none"}`),
  );
}
console.log(`budget per flow: ${BUDGET} bytes (WASM + JS + CSS, brotli)`);
process.exit(failed ? 1 : 0);
