// The secret page: /secret/<id>#token=<secret link's token>. A person
// types a secret (a password, a passphrase) that a terminal waits for,
// and it goes straight into the terminal, once: the agent that made the
// link never sees it. The token stays in the fragment, which the browser
// never sends to a server; the page posts it, with the secret, in the
// body of same-origin requests:
//
//   POST /api/secret/<id>/prompt {token}         → {session, name, line, reader, expiresAt}
//   POST /api/secret/<id>        {token, secret} → 204: written, with Enter
//
// A refusal is JSON {code, message} (docs/console.md, "Typing a secret").
// The secret is never logged, kept or shown; the field is emptied at once.
//
// window.ptySecret = {state, code} is kept current for tests: state is
// "loading", "ready", "sending", "sent" or "refused".

import { el, fragmentToken } from "./common.js";

const id = decodeURIComponent(location.pathname.split("/").filter(Boolean).pop() || "");
const token = fragmentToken();

const statusEl = document.getElementById("status");
const nameEl = document.getElementById("name");
const lineEl = document.getElementById("line");
const form = document.getElementById("form");
const input = document.getElementById("secret");
const submit = document.getElementById("submit");
const doneEl = document.getElementById("done");
const message = document.getElementById("message");

const state = { state: "loading", code: "" };
window.ptySecret = state;

// What each refusal tells the person.
const refusals = {
  not_logged_in: () => [
    "Not logged in: this link needs the console's login. Open the ",
    el("a", { href: "/" }, "console"),
    " with the URL ptymcp printed (it logs this browser in), then open this link again.",
  ],
  forbidden: () => ["This link is not valid: wrong, expired (links last 15 minutes), or for another terminal."],
  secret_link_used: () => ["This link was used: a secret was entered at its prompt. Each link works once."],
  secret_prompt_gone: () => ["That prompt no longer waits (the program went on, or asks again: a new prompt gets a new link). Nothing was written."],
  secret_busy: () => ["A secret is being entered through this link already."],
  bad_secret: (m) => [m],
};

function refuse(code, text) {
  state.state = "refused";
  state.code = code;
  const say = refusals[code];
  message.replaceChildren(...(say ? say(text) : [text || code]));
  message.hidden = false;
  statusEl.textContent = "";
  // A secret that was refused for itself may be typed again; any other
  // refusal ends this link.
  if (code === "bad_secret") {
    state.state = "ready";
    form.hidden = false;
    submit.disabled = false;
    input.focus();
    return;
  }
  form.hidden = true;
}

async function post(path, body) {
  const r = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
    credentials: "same-origin",
    cache: "no-store",
  });
  let data = null;
  if (r.status !== 204) {
    try {
      data = await r.json();
    } catch {
      data = null;
    }
  }
  return { status: r.status, ok: r.ok, data };
}

async function load() {
  if (!token) {
    refuse("forbidden", "");
    return;
  }
  try {
    const r = await post("/api/secret/" + encodeURIComponent(id) + "/prompt", { token });
    if (!r.ok) {
      refuse((r.data && r.data.code) || "error", (r.data && r.data.message) || `${r.status}`);
      return;
    }
    nameEl.textContent = r.data.name || r.data.session || id;
    lineEl.textContent = (r.data.line || "").trim() || "Secret:";
    statusEl.textContent = r.data.reader ? `asked by ${r.data.reader}` : "";
    form.hidden = false;
    state.state = "ready";
    input.focus();
  } catch (e) {
    refuse("error", `Cannot reach the server: ${e.message}`);
  }
}

// send posts the secret once: the field is emptied first, and the button
// stays disabled (a double submit would be refused as busy or used).
async function send(ev) {
  ev.preventDefault();
  if (state.state !== "ready") return;
  const secret = input.value;
  if (!secret) {
    input.focus();
    return;
  }
  input.value = "";
  message.hidden = true;
  submit.disabled = true;
  state.state = "sending";
  statusEl.textContent = "sending";
  try {
    const r = await post("/api/secret/" + encodeURIComponent(id), { token, secret });
    if (r.status === 204) {
      state.state = "sent";
      form.hidden = true;
      doneEl.hidden = false;
      statusEl.textContent = "";
      return;
    }
    refuse((r.data && r.data.code) || "error", (r.data && r.data.message) || `${r.status}`);
  } catch (e) {
    refuse("error", `Cannot reach the server: ${e.message}`);
  }
}

// A form's submit: the button, or Enter in the field.
form.addEventListener("submit", send);
load();
