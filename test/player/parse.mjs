// parse.mjs FILE: reads an asciicast file with asciinema-player's own
// code (the npm package pinned in package.json) and prints what it found
// as one JSON object; cmd/ptyrec's TestAsciinemaPlayerParses checks it.
//
//   parser: what the player's asciicast parser returns (size, every event
//           with its absolute time, including v3's "x" exit event, which
//           the player itself never looks at);
//   player: what the player's Core (the part with no DOM, which the
//           package also runs inside a web worker) shows after loading
//           the file and seeking to its end: size, duration, markers, the
//           output fed to its terminal and the resizes.
//
// Exits 1, with "error" set, when either throws.
//
// Why the module text is loaded by hand: the parser (src/parser/asciicast.js
// `parse` upstream) is compiled into dist/core-<hash>.js, which exports
// only Core, and the package's "exports" name no module that exposes it.
// The UI bundles need a DOM. So the script reads that core module as it
// ships, points its relative imports at the package's files and adds one
// line, `export { parse$2 as parseAsciicast }`, then imports the result:
// the code that runs is the player's, unchanged. If an upgrade renames
// parse$2, the import fails loudly rather than testing something else.
import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";

const file = process.argv[2];
if (!file) {
  console.error("usage: node parse.mjs FILE");
  process.exit(2);
}

const dist = new URL("./node_modules/asciinema-player/dist/", import.meta.url);
const pkg = JSON.parse(readFileSync(new URL("../package.json", dist), "utf8"));
const core = readdirSync(fileURLToPath(dist)).filter((f) => /^core-.*\.js$/.test(f));
if (core.length !== 1) {
  throw new Error(`asciinema-player ${pkg.version}: want one dist/core-*.js, found ${core}`);
}
const source =
  readFileSync(new URL(core[0], dist), "utf8").replace(/from '\.\/([^']+)'/g, (_, f) => `from '${new URL(f, dist)}'`) +
  "\nexport { parse$2 as parseAsciicast };\n";
const { C: Core, parseAsciicast } = await import("data:text/javascript;base64," + Buffer.from(source).toString("base64"));

const text = readFileSync(file, "utf8");
const out = { playerVersion: pkg.version, version: null, error: null };
try {
  out.version = JSON.parse(text.split("\n", 1)[0]).version;
  out.parser = await parse(text);
  out.player = await play(text);
} catch (e) {
  out.error = String(e); // not the stack: its frames name the module by its whole data: URL
}
console.log(JSON.stringify(out));
process.exitCode = out.error === null ? 0 : 1;

// parse runs the player's parser on text, as its recording driver does (a
// Response, since that is what it fetches).
async function parse(text) {
  const rec = await parseAsciicast(new Response(text));
  const events = Array.from(rec.events);
  const of = (code) => events.filter((e) => e[1] === code);
  const x = of("x");
  return {
    cols: rec.cols,
    rows: rec.rows,
    output: of("o").length,
    input: of("i").length,
    resizes: of("r").map((e) => e[2]),
    markers: of("m").map(([t, , label]) => ({ time: t / 1000, label })),
    exit: x.length ? x[x.length - 1][2] : null,
    text: of("o").map((e) => e[2]).join(""),
  };
}

// play loads text into a player Core and seeks to the end, collecting what
// it dispatches to the terminal and the UI.
async function play(text) {
  const quiet = { debug() {}, info() {}, warn() {}, error() {} };
  const core = new Core({ data: text }, { logger: quiet, speed: 1 });
  const seen = { cols: null, rows: null, duration: null, markers: [], resizes: [], text: "" };
  core.addEventListener("metadata", (m) => {
    seen.duration = m.duration;
    seen.markers = m.markers.map(([time, label]) => ({ time, label }));
  });
  core.addEventListener("reset", (r) => {
    seen.cols = r.size.cols;
    seen.rows = r.size.rows;
  });
  // A seek feeds the output in batches: a string, or an array of them.
  core.addEventListener("output", (o) => (seen.text += [o].flat().join("")));
  core.addEventListener("resize", (s) => seen.resizes.push(`${s.cols}x${s.rows}`));
  core.terminalReady(); // no terminal here: nothing to wait for
  await core.init();
  await core.seek("100%");
  await core.stop();
  return seen;
}
