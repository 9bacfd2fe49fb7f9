// The live view of one session: /s/<id> for an operator (logged in by the
// console's cookie), /v/<id>#token=<share token> for a share link. The
// session's events arrive over a WebSocket, /api/watch/<id>, and feed an
// xterm.js terminal of the session's exact size, scaled to fit the window.
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
// window.ptyView = {term, seq, badge, connected, ended, error} is kept
// current for tests and for anyone at the console.

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
if (shared) document.getElementById("back").hidden = true;

const term = new Terminal({
  cols: 80,
  rows: 24,
  disableStdin: true, // watching only; typing is a later step
  cursorBlink: false,
  scrollback: 1000,
  fontFamily: '"DejaVu Sans Mono", "Liberation Mono", ui-monospace, monospace',
  fontSize: 14,
  theme: { background: "#101214", foreground: "#d8dee4" },
});
term.open(host);

const view = { term, seq: 0, badge: "", connected: false, ended: false, error: null };
window.ptyView = view;

// letterbox scales the terminal, at the session's own size, to fit the
// stage and centres it. It never resizes the session.
function letterbox() {
  const w = host.offsetWidth;
  const h = host.offsetHeight;
  if (!w || !h) return;
  const s = Math.min(stage.clientWidth / w, stage.clientHeight / h);
  const x = (stage.clientWidth - w * s) / 2;
  const y = (stage.clientHeight - h * s) / 2;
  host.style.transform = `translate(${x}px, ${y}px) scale(${s})`;
}
new ResizeObserver(letterbox).observe(stage);
new ResizeObserver(letterbox).observe(host);

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
  },
  picture(m) {
    later(() => {
      term.reset();
      term.resize(m.cols, m.rows);
    });
    term.write(m.data);
    view.seq = m.seq;
    notice.hidden = !m.gap;
  },
  resize(m) {
    if (m.seq <= view.seq) return;
    later(() => term.resize(m.cols, m.rows));
    view.seq = m.seq;
  },
  state(m) {
    setBadge(badgeEl, m);
    view.badge = m.badge;
  },
  end(m) {
    if (m.seq > view.seq) view.seq = m.seq;
    view.ended = true;
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
