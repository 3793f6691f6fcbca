// What each flow page downloads before it works, from the release site in target/site/pkg: its
// own bundle (WASM and JS glue; `frontend/build.sh` builds one per flow) and its stylesheets
// (the account flows add their own to the main one), as the precompressed brotli files that are
// served. Prints one line per flow and exits 1 when
// a flow is over the budget, or when a flow's bundle holds another flow's island.
import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const BUDGET = 200_000;
const here = path.dirname(fileURLToPath(import.meta.url));
const pkg = path.resolve(here, "..", "..", "target", "site", "pkg");

// Scope -> its bundle and its island (app/src/flow.rs).
const FLOWS = {
  enrollment: ["switchboard", "EnrollmentApp"],
  "update-payment-method": ["flow-update-payment-method", "PaymentMethodApp"],
  billing: ["flow-billing", "BillingApp"],
  documents: ["flow-documents", "DocumentsApp"],
  renewal: ["flow-renewal", "RenewalApp"],
};

function brotli(file) {
  const br = path.join(file.startsWith("/") ? path.dirname(pkg) : pkg, `${file.replace(/^\//, "")}.br`);
  if (!existsSync(br)) throw new Error(`${br} is missing: build with frontend/build.sh`);
  return statSync(br).size;
}

let failed = false;
const mainCss = brotli("switchboard.css");
const flowsCss = brotli("/flows.css");
for (const [scope, [bundle, island]] of Object.entries(FLOWS)) {
  const css = scope === "enrollment" ? mainCss : mainCss + flowsCss;
  const [wasm, js] = [brotli(`${bundle}.wasm`), brotli(`${bundle}.js`)];
  const total = wasm + js + css;
  // The JS glue exports the islands the WASM holds: this flow's, and no other.
  const glue = readFileSync(path.join(pkg, `${bundle}.js`), "utf8");
  const islands = Object.values(FLOWS)
    .map(([, name]) => name)
    .filter((name) => new RegExp(`\\b${name}_\\d+`).test(glue));
  const alone = islands.length === 1 && islands[0] === island;
  const over = total > BUDGET;
  failed ||= over || !alone;
  console.log(
    `${scope.padEnd(22)} ${String(total).padStart(7)} bytes brotli (WASM ${wasm}, JS ${js}, CSS ${css})` +
      (over ? "  OVER the 200000 budget" : "") +
      (alone ? "" : `  holds the islands ${islands.join(", ") || "none"}`),
  );
}
console.log(`budget per flow: ${BUDGET} bytes (WASM + JS + CSS, brotli)`);
process.exit(failed ? 1 : 0);
