// The live view of one session: /s/<id> for an operator (logged in by the
// console's cookie), /v/<id>#token=<share token> for a share link. The
// session's events arrive over a WebSocket, /api/watch/<id>, and feed an
// xterm.js terminal of the session's exact size, drawn in the font that
// fits the window (docs/console.md, "On every screen").
//
// The protocol (docs/console.md, "The page"): the page sends
// {"t":"hello","since":<last seq>,"token":...}; the server answers hello,
// then a picture (what draws the screen on a fresh terminal), output as
// binary messages (8 bytes of the newest event's number, big-endian, then
// the bytes as the terminal printed them), numbered resize events, state
// changes, and end. When the socket closes
// without end or error, the page reconnects with since = the last seq it
// got, so the server sends only what it missed; an out or resize the page
// already has (seq not above its last) is dropped, so nothing is doubled.
//
// An operator's page may take the session's input over (docs/console.md,
// "Taking over"): it sends {"t":"take","interrupt":bool}, then, while the
// server's {"t":"control",...,"you":true} says it holds the input, the
// keys xterm gives ({"t":"input","data"}) and the size that fits the
// window ({"t":"resize"}), until {"t":"return"}. A refused action comes
// back as {"t":"refused","code","message"}, which is not final.
//
// window.ptyView = {term, cellAt, seq, badge, connected, ended, error, control,
// refused, send} is kept current for tests and for anyone at the console
// (send writes one message on the socket, as the page would).

import { Terminal } from "/assets/vendor/xterm/xterm.mjs";
import { fragmentToken, setBadge } from "./common.js";

const id = decodeURIComponent(location.pathname.split("/").filter(Boolean).pop() || "");
const shared = location.pathname.startsWith("/v/");
// A share link's token stays in the fragment (a reload needs it); the
// browser never sends a fragment to the server.
const token = shared ? fragmentToken() : "";

const stage = document.getElementById("stage");
const host = document.getElementById("term");
const title = document.getElementById("title");
const badgeEl = document.getElementById("badge");
const conn = document.getElementById("conn");
const notice = document.getElementById("notice");
const errorEl = document.getElementById("error");
const controlEl = document.getElementById("control");
const controls = document.getElementById("controls");
const takeBtn = document.getElementById("take");
const handbackBtn = document.getElementById("handback");
const interruptBox = document.getElementById("interrupt");
const refusedEl = document.getElementById("refused");
const banner = document.getElementById("banner");
const idleEl = document.getElementById("idle");
if (shared) document.getElementById("back").hidden = true;

const fontFamily = '"DejaVu Sans Mono", "Liberation Mono", ui-monospace, monospace';
// fontSize is the font a page that holds the input sizes the session for.
const fontSize = 14;
// minFont is the smallest text the view draws, in CSS pixels: a session
// wider than the screen at this size scrolls sideways inside the stage
// (never the page) rather than shrink to unreadable.
const minFont = 9;
// fontStep: the view's font sizes are in steps of 1/fontStep px.
const fontStep = 16;

// cellAt is the cell xterm draws at font size f, in CSS pixels, and the
// lineHeight that makes its rows hold every glyph whole. xterm measures
// a cell as a canvas does ("W"'s advance; the font's box, ascent +
// descent, which Chromium rounds to pixels each: DejaVu Sans Mono at 14px
// is 13 + 3 = 16px), makes each row as tall as the box times lineHeight,
// centres the text in it, and clips the row. But the underscore's ink
// goes below that rounded descent (the canvas measures it 4px under the
// baseline at 14px): at lineHeight 1 its stroke fell on the row's clipped
// edge, cut away at one size, kept at another (vim's "__name__" showed as
// "  name  " at 1x). So the row is taller than the box by twice the most
// any glyph hangs out of it (the text is centred), rounded up to device
// pixels. (The font is the system's, no @font-face: nothing loads after
// xterm measures.)
const glyphs = document.createElement("canvas").getContext("2d");
function cellAt(f) {
  glyphs.font = `${f}px ${fontFamily}`;
  const w = glyphs.measureText("W");
  const box = w.fontBoundingBoxAscent + w.fontBoundingBoxDescent;
  let over = 0;
  for (const ch of ["_", "g", "j", "y", "|", "│", "█"]) {
    const m = glyphs.measureText(ch);
    over = Math.max(over, m.actualBoundingBoxDescent - m.fontBoundingBoxDescent, m.actualBoundingBoxAscent - m.fontBoundingBoxAscent);
  }
  const dpr = window.devicePixelRatio || 1;
  const measured = Math.ceil(box * dpr); // xterm's char height, in device pixels
  if (!measured || !(over >= 0)) return { width: w.width, height: measured / dpr, lineHeight: 1 };
  const row = Math.ceil((box + 2 * over) * dpr);
  // xterm's row is floor(measured * lineHeight) device pixels: the half
  // pixel keeps the floor from landing one short.
  return { width: w.width, height: row / dpr, lineHeight: Math.max(1, (row + 0.5) / measured) };
}

const term = new Terminal({
  cols: 80,
  rows: 24,
  disableStdin: true, // typing only while this page holds the input
  cursorBlink: false,
  scrollback: 1000,
  fontFamily,
  fontSize,
  lineHeight: cellAt(fontSize).lineHeight,
  theme: { background: "#101214", foreground: "#d8dee4" },
});
term.open(host);

// The session's own emulator answers the terminal's queries (device
// attributes, cursor position, modes, colours); this terminal must not
// answer them too, or, while this page holds the input, its answers (and
// those to queries replayed from the stream) would be typed into the
// session.
const swallow = () => true;
for (const id of [
  { final: "c" }, { prefix: ">", final: "c" }, { prefix: "=", final: "c" }, // device attributes
  { final: "n" }, { prefix: "?", final: "n" }, // status reports
  { intermediates: "$", final: "p" }, { prefix: "?", intermediates: "$", final: "p" }, // mode reports
  { prefix: ">", final: "q" }, // version
]) {
  term.parser.registerCsiHandler(id, swallow);
}
term.parser.registerDcsHandler({ intermediates: "$", final: "q" }, swallow);
for (const osc of [4, 10, 11, 12]) term.parser.registerOscHandler(osc, (data) => data.includes("?"));

const view = { term, cellAt, seq: 0, badge: "", connected: false, ended: false, error: null, control: null, refused: null, send: null };
window.ptyView = view;

// socket is the live socket, once its hello is sent.
let socket = null;
function send(m) {
  if (!socket || socket.readyState !== WebSocket.OPEN) return false;
  socket.send(JSON.stringify(m));
  return true;
}
view.send = send;

// readOnly: the server said this page may not take the input (a share
// link's).
let readOnly = true;
// holding: this page holds the session's input (the server said so).
let holding = false;
// heldEpoch is the epoch of this page's hold, kept across a lost socket:
// the hold outlives it, but a new socket holds nothing, so a page back
// from a drop takes the input again if nobody took it meanwhile.
let heldEpoch = 0;
// idleDeadline is when the hold ends without input, on this page's clock.
let idleDeadline = 0;
let idleTimeoutMs = 0;

// A paste over this is refused here, as the server would.
const maxInput = 1 << 20;

term.onData((data) => {
  if (!holding) return;
  if (data.length > maxInput) {
    refused({ t: "refused", code: "too_large", message: "input over 1 MiB at once is refused" });
    return;
  }
  if (send({ t: "input", data }) && idleTimeoutMs) idleDeadline = Date.now() + idleTimeoutMs;
  showIdle();
});

takeBtn.addEventListener("click", () => {
  send({ t: "take", interrupt: interruptBox.checked });
});
handbackBtn.addEventListener("click", () => {
  send({ t: "return" });
});

function clock(since) {
  const d = new Date(since);
  return isNaN(d) ? since : d.toLocaleTimeString();
}

function showIdle() {
  if (!holding || !idleDeadline) {
    idleEl.textContent = "";
    return;
  }
  const left = Math.max(0, Math.ceil((idleDeadline - Date.now()) / 1000));
  const m = Math.floor(left / 60);
  const s = String(left % 60).padStart(2, "0");
  idleEl.textContent = `Hands back by itself after ${m}:${s} without your input.`;
}
setInterval(showIdle, 1000);

// fit asks, while this page holds the input, for the size that fills
// the stage at the holder's font (fontSize): the holder alone sizes the
// session.
let fitTimer = 0;
function fit() {
  clearTimeout(fitTimer);
  fitTimer = setTimeout(() => {
    const cell = cellAt(fontSize);
    if (!holding || !cell.width || !cell.height || !stage.clientWidth || !stage.clientHeight) return;
    const cols = Math.min(1000, Math.max(20, Math.floor(stage.clientWidth / cell.width)));
    const rows = Math.min(500, Math.max(5, Math.floor(stage.clientHeight / cell.height)));
    if (cols !== term.cols || rows !== term.rows) send({ t: "resize", rows, cols });
  }, 100);
}
new ResizeObserver(fit).observe(stage);

// showControl shows who holds the input, and what this page may do.
function showControl(m) {
  if (m && !m.you && m.person && m.holder === "operator" && m.epoch === heldEpoch && !readOnly) {
    heldEpoch = 0;
    send({ t: "take", interrupt: false });
  } else if (m) {
    heldEpoch = m.you ? m.epoch : 0;
  }
  view.control = m;
  const was = holding;
  holding = !!(m && m.you);
  term.options.disableStdin = !holding;
  controls.hidden = readOnly || !m;
  takeBtn.hidden = holding;
  handbackBtn.hidden = !holding;
  interruptBox.parentElement.hidden = holding;
  banner.hidden = !holding;
  if (holding) {
    idleTimeoutMs = m.idleTimeoutMs || 0;
    if (m.idleLeftMs !== undefined) idleDeadline = Date.now() + m.idleLeftMs;
    controlEl.hidden = true;
    if (!was) {
      term.focus();
      fit();
    }
  } else {
    idleDeadline = 0;
    controlEl.hidden = !m;
    if (m) controlEl.textContent = m.person ? `Controlled by ${m.holder} since ${clock(m.since)}` : "The agent has control";
    if (was) term.blur();
  }
  showIdle();
}

let refusedTimer = 0;
function refused(m) {
  view.refused = m;
  refusedEl.textContent = `${m.message || "refused"} (${m.code || "unknown"})`;
  refusedEl.hidden = false;
  clearTimeout(refusedTimer);
  refusedTimer = setTimeout(() => (refusedEl.hidden = true), 8000);
}

// letterbox draws the terminal, at the session's own size, in the
// largest font (in sixteenths of a pixel) at which it fits the stage, but
// never below minFont: a session too wide for a phone then scrolls inside
// the stage. The text is drawn at its size, not scaled: a thin stroke
// (the underscore) stays on the device's pixels. It never resizes the
// session.
function letterbox() {
  const w = stage.clientWidth;
  const h = stage.clientHeight;
  if (!w || !h) return;
  const fits = (f) => {
    const c = cellAt(f);
    return Math.round(term.cols * c.width) <= w && term.rows * c.height <= h;
  };
  let lo = minFont * fontStep;
  let hi = 256 * fontStep;
  if (fits(lo / fontStep)) {
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (fits(mid / fontStep)) lo = mid;
      else hi = mid - 1;
    }
  }
  const f = lo / fontStep;
  if (f !== term.options.fontSize) term.options.fontSize = f;
  const lineHeight = cellAt(f).lineHeight;
  if (lineHeight !== term.options.lineHeight) term.options.lineHeight = lineHeight;
}
new ResizeObserver(letterbox).observe(stage);
// A page moved to a screen of another pixel ratio measures again.
(function watchRatio() {
  matchMedia(`(resolution: ${window.devicePixelRatio}dppx)`).addEventListener("change", () => {
    letterbox();
    watchRatio();
  }, { once: true });
})();

// later runs fn after everything written so far is parsed: term.reset
// and term.resize act at once, and must not overtake queued output.
function later(fn) {
  term.write("", fn);
}

function setConn(text, connected) {
  conn.textContent = text;
  view.connected = connected;
}

function showError(text) {
  errorEl.textContent = text;
  errorEl.hidden = !text;
  view.error = text || null;
}

const handlers = {
  hello(m) {
    document.title = `${m.name || id}: ptyactor`;
    title.textContent = shared ? `watching: ${m.label || m.name || id}` : m.name || id;
    readOnly = shared || m.readOnly !== false;
  },
  picture(m) {
    later(() => {
      term.reset();
      term.resize(m.cols, m.rows);
      letterbox();
    });
    term.write(m.data);
    view.seq = m.seq;
    notice.hidden = !m.gap;
  },
  resize(m) {
    if (m.seq <= view.seq) return;
    later(() => {
      term.resize(m.cols, m.rows);
      letterbox();
    });
    view.seq = m.seq;
  },
  state(m) {
    setBadge(badgeEl, m);
    view.badge = m.badge;
  },
  control: showControl,
  refused,
  end(m) {
    if (m.seq > view.seq) view.seq = m.seq;
    view.ended = true;
    showControl(null);
  },
  error(m) {
    showError(`${m.message || "error"} (${m.code || "unknown"})`);
  },
};

const minDelay = 250;
const maxDelay = 5000;
let delay = minDelay;
// output writes one binary message: the bytes as the terminal printed
// them (xterm's decoder joins a character split between two messages).
function output(buf) {
  const seq = Number(new DataView(buf).getBigUint64(0));
  if (seq <= view.seq) return;
  term.write(new Uint8Array(buf, 8));
  view.seq = seq;
}

// final is set by end or error: the server said why it stopped, so the
// page does not reconnect. A close without either is a lost connection.
let final = false;

function connect() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(`${scheme}//${location.host}/api/watch/${encodeURIComponent(id)}`);
  ws.binaryType = "arraybuffer";
  setConn(view.seq ? "reconnecting" : "connecting", false);
  ws.onopen = () => {
    const hello = { t: "hello", since: view.seq };
    if (token) hello.token = token;
    ws.send(JSON.stringify(hello));
    socket = ws;
    setConn("live", true);
  };
  ws.onmessage = (ev) => {
    if (ev.data instanceof ArrayBuffer) {
      delay = minDelay;
      output(ev.data);
      return;
    }
    let m;
    try {
      m = JSON.parse(ev.data);
    } catch {
      showError("the server sent a message that is not JSON");
      return;
    }
    delay = minDelay; // a working connection resets the backoff
    const handle = handlers[m.t];
    if (handle) handle(m);
    if (m.t === "end" || m.t === "error") {
      final = true;
      if (m.t === "end") setConn("session closed", false);
      ws.close();
    }
  };
  ws.onclose = () => {
    view.connected = false;
    socket = null;
    // A hold outlives the socket (its idle timeout ends it); this page
    // learns again who holds the input when it is back.
    showControl(null);
    if (final) {
      if (!view.ended) setConn("stopped", false);
      return;
    }
    setConn(`disconnected; reconnecting in ${(delay / 1000).toFixed(2).replace(/\.?0+$/, "")}s`, false);
    setTimeout(connect, delay);
    delay = Math.min(delay * 2, maxDelay);
  };
}

connect();
