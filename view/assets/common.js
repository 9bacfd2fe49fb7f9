// What the console and the live view share: the words for a session's
// state, and a DOM builder that only ever sets text (a session's name, cwd
// or program is never parsed as HTML).

const known = (v) => v !== undefined && v !== null;
const by = (s) => (s.reader ? `: ${s.reader}` : "");

// A badge's words for a person: the shell at its prompt (with the last
// command's exit code), a program waiting for a line, a full-screen one
// reading keys while it draws (with its output's age, where the state
// has it: the console's list), a secret prompt.
const badges = {
  running: () => "running",
  prompt: (s) => (known(s.exitCode) ? `at prompt (last exit ${s.exitCode})` : "at prompt"),
  waiting: (s) => "waiting for input" + by(s),
  interactive: (s) => "interactive" + by(s) + (known(s.idleMs) && s.idleMs >= 0 ? `, output ${ago(s.idleMs)}` : ""),
  secret: (s) => "secret prompt" + by(s),
  exited: (s) => (known(s.exitCode) ? `exited (${s.exitCode})` : "exited"),
  lost: () => "host lost",
};

// badgeText is what a badge says for a state: {badge, reader, exitCode,
// idleMs}.
export function badgeText(state) {
  const text = badges[state.badge];
  return text ? text(state) : state.badge || "unknown";
}

// setBadge makes el the badge of state: its text and its colour class.
export function setBadge(el, state) {
  el.textContent = badgeText(state);
  el.className = "badge badge-" + (badges[state.badge] ? state.badge : "unknown");
}

// ago says how long ago something was, from its age in milliseconds.
export function ago(ms) {
  if (ms === undefined || ms === null || ms < 0) return "never";
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86400)}d ago`;
}

// el makes an element with attributes and children (strings become text).
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  e.append(...children);
  return e;
}

// fragmentToken is the token of a "#token=..." fragment, or "".
export function fragmentToken() {
  const prefix = "#token=";
  return location.hash.startsWith(prefix) ? decodeURIComponent(location.hash.slice(prefix.length)) : "";
}
