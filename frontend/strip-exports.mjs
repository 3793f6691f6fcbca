// Optimizes the built flow bundles for their size as brotli sends them, after taking out what the flows never call but the
// WASM exports anyway: the stream adapters of the server-function client (wasm-streams'
// IntoUnderlying* classes, which leptos's browser half links in for streaming server functions;
// the flows call none). Exports are roots, so their code would stay. cargo-leptos's own wasm-opt
// step only rewrites the file (Cargo.toml, `wasm-opt-features`): the exports must go before the
// optimization, which then drops their code; taken out of an optimized file, the result is
// larger. Then the precompressed copies are written again. The JS glue keeps its class
// wrappers, never constructed. Usage: node frontend/strip-exports.mjs target/site/pkg/*.wasm
// (binaryen's wasm-opt on PATH).
//
// Also emptied before the optimization: the asynchronous hydration of Leptos's type-erased views
// (`AnyView`, which every `.into_any()` makes). Each erased view keeps a pointer to its
// `hydrate_async`, so that code stays, a tenth of a flow's bundle, though only lazy islands and
// lazy routes hydrate asynchronously: the flows' islands hydrate synchronously
// (`hydrate_from_position`) and none is lazy. Those functions are found by their names (the
// bundle keeps them until this step: `wasm-opt-features` in Cargo.toml has `-g`), less any that
// other code calls (the compiler merges identical functions under one name: a helper of the
// synchronous hydration can carry an asynchronous one's name), as wasm-opt's call graph shows;
// their bodies become `unreachable`, and the optimization then drops all they alone called. A
// bundle with none of them fails the build: Leptos renamed them, and this step must be looked
// at again. Emptied the same way: how an erased attribute hydrates from a template
// (`hydrate_from_template`), which only `template!` views call and no flow has.
//
// Last, after the optimization, the module's imports and the exports only its glue calls get
// short names in the module and in the JS glue (`withShortNames`), and the glue's precompressed
// copies are written again too: on the enrollment bundle, brotli, the WASM 2.3 KB and the glue
// 1.6 KB smaller.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import zlib from "node:zlib";

const UNUSED = /^(__wbg_)?intounderlying(bytesource|sink|source)_/;
// Every function of asynchronous hydration, and the drop glue of its futures (as wasm-bindgen
// writes their names): the futures' `poll` functions are reached through vtables too, which
// keep them as long as they are there. And each erased attribute's hydration from a template.
const ASYNC_HYDRATION = /(^|::)hydrate_(from_)?async(::|<|$)|::into_any_attr::hydrate_from_template::h[0-9a-f]{16}$/;
// Light optimization (-O1, to a fixed point): what -Oz or -Os shrink of the raw file leaves
// brotli more to send. Measured on the enrollment bundle (brotli): -Oz 196.0 KB, -Os 194.5 KB,
// -O2 195.5 KB, -O1 184.6 KB, -O1 to a fixed point 183.6 KB. With dead-argument elimination
// (`--dae-optimizing`: parameters no caller varies, results no caller reads, as generic code has
// many) the enrollment bundle's WASM went from 152,472 to 150,661 bytes brotli; merging similar
// functions or whole-program flow analysis (--gufa-optimizing) made it larger (154.2 KB).
const FEATURES = ["--enable-bulk-memory", "--enable-nontrapping-float-to-int"];
const OPTIMIZE = ["-O1", "--dae-optimizing", "--converge", ...FEATURES];

function leb(bytes, at) {
  let value = 0;
  let shift = 0;
  for (;;) {
    const b = bytes[at++];
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if (b < 0x80) return [value, at];
  }
}

/// Where an import's description that starts at `at` (its kind byte) ends: a function's type
/// index, a table's element type and limits, a memory's limits, a global's type and mutability.
function skipImportDescription(bytes, at) {
  let p = at;
  const kind = bytes[p++];
  if (kind === 0) return leb(bytes, p)[1];
  if (kind === 3) return p + 2;
  if (kind !== 1 && kind !== 2) throw new Error(`import kind ${kind}`);
  if (kind === 1) p++;
  const flags = bytes[p++];
  p = leb(bytes, p)[1];
  return flags & 1 ? leb(bytes, p)[1] : p;
}

function unsignedLeb(value) {
  const out = [];
  do {
    let b = value & 0x7f;
    value = Math.floor(value / 128);
    if (value > 0) b |= 0x80;
    out.push(b);
  } while (value > 0);
  return Buffer.from(out);
}

/// The module without the exports whose names match UNUSED; how many went.
function withoutUnusedExports(wasm) {
  const parts = [wasm.subarray(0, 8)];
  let removed = 0;
  let at = 8;
  while (at < wasm.length) {
    const id = wasm[at];
    const [size, body] = leb(wasm, at + 1);
    const end = body + size;
    if (id !== 7) {
      parts.push(wasm.subarray(at, end));
      at = end;
      continue;
    }
    let [count, p] = leb(wasm, body);
    const kept = [];
    for (let i = 0; i < count; i++) {
      const start = p;
      const [length, nameAt] = leb(wasm, p);
      const name = wasm.subarray(nameAt, nameAt + length).toString("utf8");
      p = leb(wasm, nameAt + length + 1)[1];
      if (UNUSED.test(name)) removed++;
      else kept.push(wasm.subarray(start, p));
    }
    const section = Buffer.concat([unsignedLeb(kept.length), ...kept]);
    parts.push(Buffer.from([7]), unsignedLeb(section.length), section);
    at = end;
  }
  return [Buffer.concat(parts), removed];
}

/// The sections of a module: [id, start, body start, end].
function sections(wasm) {
  const out = [];
  let at = 8;
  while (at < wasm.length) {
    const [size, body] = leb(wasm, at + 1);
    out.push([wasm[at], at, body, body + size]);
    at = body + size;
  }
  return out;
}

/// The functions of asynchronous hydration that only asynchronous hydration calls, by name:
/// those whose names match ASYNC_HYDRATION, less those called by any other function (to a fixed
/// point), from wasm-opt's call graph of `file`.
function asyncHydrationOnly(file) {
  const graph = execFileSync("wasm-opt", [...FEATURES, "--print-call-graph", file, "-o", "/dev/null"], {
    encoding: "utf8",
    maxBuffer: 1 << 30,
  });
  const callers = new Map();
  for (const line of graph.split("\n")) {
    const edge = line.match(/^ {2}"(.*)" -> "(.*)"; \/\/ call$/);
    if (!edge) continue;
    const [, from, to] = edge;
    if (!callers.has(to)) callers.set(to, new Set());
    callers.get(to).add(from);
  }
  const names = new Set();
  for (const line of graph.split("\n")) {
    const node = line.match(/^ {2}"(.*)" \[style=/);
    if (node && ASYNC_HYDRATION.test(node[1])) names.add(node[1]);
  }
  for (let changed = true; changed; ) {
    changed = false;
    for (const name of names) {
      if ([...(callers.get(name) ?? [])].some((caller) => !names.has(caller))) {
        names.delete(name);
        changed = true;
      }
    }
  }
  return names;
}

/// The module with the bodies of the functions named in `names` made `unreachable`; how many.
function withoutAsyncHydration(wasm, names) {
  const all = sections(wasm);
  // Function indices count the imported functions first.
  let imported = 0;
  for (const [id, , body] of all.filter(([id]) => id === 2)) {
    let [count, p] = leb(wasm, body);
    for (let i = 0; i < count; i++) {
      for (let name = 0; name < 2; name++) {
        const [length, at] = leb(wasm, p);
        p = at + length;
      }
      if (wasm[p] === 0) imported++;
      p = skipImportDescription(wasm, p);
    }
  }
  const targets = new Set();
  for (const [, , body, end] of all.filter(([id]) => id === 0)) {
    const [length, at] = leb(wasm, body);
    if (wasm.subarray(at, at + length).toString("utf8") !== "name") continue;
    let p = at + length;
    while (p < end) {
      const sub = wasm[p];
      const [size, start] = leb(wasm, p + 1);
      if (sub === 1) {
        let [count, q] = leb(wasm, start);
        for (let i = 0; i < count; i++) {
          const [index, r] = leb(wasm, q);
          const [n, s] = leb(wasm, r);
          if (names.has(wasm.subarray(s, s + n).toString("utf8"))) targets.add(index - imported);
          q = s + n;
        }
      }
      p = start + size;
    }
  }
  const parts = [];
  for (const [id, start, body, end] of all) {
    if (id !== 10) {
      parts.push(wasm.subarray(start, end));
      continue;
    }
    let [count, p] = leb(wasm, body);
    const bodies = [unsignedLeb(count)];
    for (let i = 0; i < count; i++) {
      const [size, at] = leb(wasm, p);
      // No locals; `unreachable`; `end`.
      bodies.push(targets.has(i) ? Buffer.from([3, 0, 0x00, 0x0b]) : wasm.subarray(p, at + size));
      p = at + size;
    }
    const section = Buffer.concat(bodies);
    parts.push(Buffer.from([10]), unsignedLeb(section.length), section);
  }
  return [Buffer.concat([wasm.subarray(0, 8), ...parts]), targets.size];
}

/// Gives the imports, and the exports the glue alone calls (closures' entry points), short
/// names in the module and in its JS glue: wasm-bindgen names each after its Rust function and a
/// hash of it (`__wbg_document_3b5c3071b43e97ee`), sixteen hex digits that brotli cannot
/// compress, once in the module and once in the glue. The names the page calls (the islands,
/// `hydrate`, the glue's own helpers) stay. Returns the module and the glue, renamed.
function withShortNames(wasm, js) {
  const renamed = new Map();
  const fresh = () => {
    for (;;) {
      const name = `w${renamed.size.toString(36)}${"_".repeat(taken)}`;
      if (!new RegExp(`\\b${name.replace(/\$/g, "\\$")}\\b`).test(js)) return name;
      taken++;
    }
  };
  let taken = 0;
  const rename = (name) => {
    if (!renamed.has(name)) renamed.set(name, fresh());
    return renamed.get(name);
  };
  const HASHED_EXPORT = /_h[0-9a-f]{16}(_\d+)?$/;
  const parts = [wasm.subarray(0, 8)];
  for (const [id, start, body, end] of sections(wasm)) {
    if (id !== 2 && id !== 7) {
      parts.push(wasm.subarray(start, end));
      continue;
    }
    let [count, p] = leb(wasm, body);
    const entries = [unsignedLeb(count)];
    for (let i = 0; i < count; i++) {
      if (id === 2) {
        // Module name, kept; then the field's name.
        const [moduleLength, moduleAt] = leb(wasm, p);
        entries.push(wasm.subarray(p, moduleAt + moduleLength));
        p = moduleAt + moduleLength;
      }
      const [length, at] = leb(wasm, p);
      const name = wasm.subarray(at, at + length).toString("utf8");
      p = at + length;
      const short = id === 2 || HASHED_EXPORT.test(name) ? rename(name) : name;
      entries.push(unsignedLeb(Buffer.byteLength(short)), Buffer.from(short, "utf8"));
      // The description: what it is, and its type or index.
      const descStart = p;
      // An export's description is its kind and an index.
      p = id === 7 ? leb(wasm, p + 1)[1] : skipImportDescription(wasm, p);
      entries.push(wasm.subarray(descStart, p));
    }
    const section = Buffer.concat(entries);
    parts.push(Buffer.from([id]), unsignedLeb(section.length), section);
  }
  // Every name renamed in the module is in the glue: an import as its key, an export where the
  // glue calls it (`wasm.<name>`) and as the glue's function of the same name.
  let glue = js;
  const pattern = new RegExp(`\\b(${[...renamed.keys()].join("|")})\\b`, "g");
  const seen = new Set();
  glue = glue.replace(pattern, (name) => {
    seen.add(name);
    return renamed.get(name);
  });
  const missing = [...renamed.keys()].filter((name) => !seen.has(name));
  if (missing.length > 0) throw new Error(`names not in the glue: ${missing.join(", ")}`);
  return [Buffer.concat(parts), glue, renamed.size];
}

/// Writes the precompressed copies of `file`, as served.
function precompress(file) {
  const bytes = readFileSync(file);
  writeFileSync(
    `${file}.br`,
    zlib.brotliCompressSync(bytes, {
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: 11,
        [zlib.constants.BROTLI_PARAM_LGWIN]: 24,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
      },
    }),
  );
  writeFileSync(`${file}.gz`, zlib.gzipSync(bytes, { level: 9 }));
}

for (const file of process.argv.slice(2)) {
  const [stripped, removed] = withoutUnusedExports(readFileSync(file));
  writeFileSync(file, stripped);
  const [emptied, erased] = withoutAsyncHydration(stripped, asyncHydrationOnly(file));
  if (erased === 0) throw new Error(`${file}: no asynchronous hydration of erased views found (no names?)`);
  writeFileSync(file, emptied);
  execFileSync("wasm-opt", [...OPTIMIZE, file, "-o", file], { stdio: "inherit" });
  const glueFile = file.replace(/\.wasm$/, ".js");
  const [wasm, glue, shortened] = withShortNames(readFileSync(file), readFileSync(glueFile, "utf8"));
  writeFileSync(file, wasm);
  writeFileSync(glueFile, glue);
  if (WebAssembly.Module.exports(new WebAssembly.Module(wasm)).some((e) => UNUSED.test(e.name))) {
    throw new Error(`${file}: unused exports left`);
  }
  precompress(file);
  precompress(glueFile);
  console.log(
    `${file}: ${removed} unused exports removed, ${erased} functions emptied, optimized, ${shortened} names shortened`,
  );
}
