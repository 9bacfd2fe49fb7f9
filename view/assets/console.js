// The console: every session the operator may watch, refreshed each
// second from GET /api/sessions, each row a link to its live view.
//
// Opened from the URL ptymcp prints, "/#token=...": the token is in the
// fragment, so the browser never sends it in a URL; the page posts it to
// /api/login (which answers with a session cookie), drops the fragment from
// the address bar and history, and loads.

import { ago, el, fragmentToken, setBadge } from "./common.js";

const rows = document.querySelector("#sessions tbody");
const status = document.getElementById("status");
const message = document.getElementById("message");

const loggedOut = "Not logged in: log in with the console URL ptymcp printed.";

function show(text) {
  message.textContent = text;
  message.hidden = !text;
}

async function login(token) {
  try {
    const r = await fetch("/api/login", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ token }),
      credentials: "same-origin",
    });
    // A refused token shows as the list's 401 below.
    if (!r.ok && r.status !== 401) show(`Login failed: ${r.status} ${r.statusText}`);
  } catch (e) {
    show(`Login failed: ${e.message}`);
  } finally {
    history.replaceState(null, "", location.pathname + location.search);
  }
}

// held is the note a session's row carries while a person holds its
// input (the agent waits meanwhile).
function held(s) {
  const c = s.control;
  if (!c || !c.person) return "";
  const since = c.since ? new Date(c.since) : null;
  const at = since && !isNaN(since) ? ` since ${since.toLocaleTimeString()}` : "";
  return el("span", { class: "held" }, ` controlled by ${c.holder}${at}`);
}

// breakable is a path as text with a line break allowed after each
// slash: a long cwd wraps between its parts, not inside one.
function breakable(path) {
  return path.split(/(?<=\/)/).flatMap((part, i) => (i ? [el("wbr"), part] : [part]));
}

function row(s) {
  const badge = el("span");
  setBadge(badge, s);
  const tr = el(
    "tr",
    { "data-id": s.id },
    el("td", { class: "name" }, el("a", { href: "/s/" + encodeURIComponent(s.id) }, s.name || s.id)),
    el("td", { class: "owner", "data-label": "owner" }, s.owner || ""),
    el("td", { class: "host", "data-label": "host" }, s.host || ""),
    el("td", { class: "cwd", "data-label": "cwd" }, ...breakable(s.cwd || "")),
    el("td", { class: "program", "data-label": "program" }, s.program || ""),
    el("td", { class: "state" }, badge, held(s)),
    el("td", { class: "idle", "data-label": "last output" }, ago(s.idleMs)),
  );
  return tr;
}

function render(sessions) {
  if (sessions.length === 0) {
    rows.replaceChildren(el("tr", {}, el("td", { colspan: "7", class: "empty" }, "No sessions.")));
    return;
  }
  rows.replaceChildren(...sessions.map(row));
}

// polling is true while a refresh is due: one loop at a time.
let polling = false;

// refresh loads the list once, then again a second after it answered
// (never two requests at once). It stops on 401: nothing changes until
// the operator logs in.
async function refresh() {
  polling = true;
  try {
    const r = await fetch("/api/sessions", { credentials: "same-origin" });
    if (r.status === 401) {
      show(loggedOut);
      status.textContent = "";
      polling = false;
      return;
    }
    if (!r.ok) throw new Error(`${r.status} ${r.statusText}`);
    render(await r.json());
    show("");
    status.textContent = "live";
  } catch (e) {
    status.textContent = `cannot load sessions (${e.message}); retrying`;
  }
  setTimeout(refresh, 1000);
}

// Log out ends the login on the server (the cookie is dead there, and
// the live views opened with it are closed), not only in this browser.
document.getElementById("logout").addEventListener("click", async () => {
  try {
    await fetch("/api/logout", { method: "POST", credentials: "same-origin" });
  } finally {
    rows.replaceChildren();
    show(loggedOut);
    status.textContent = "";
  }
});

async function start() {
  const token = fragmentToken();
  if (token) await login(token);
  if (!polling) refresh();
}

// The console URL pasted into a tab already on the console changes only
// the fragment: no new page loads, so log in from here.
window.addEventListener("hashchange", start);
start();
