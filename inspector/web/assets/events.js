// The live event tail: the store's event stream from now, newest on top,
// narrowed by workflow, tenant, service and event types (kept in the URL),
// with a pause that keeps the rows still while one reads them.
import { h, replace, notice, badge, runHref, taskHref, time } from "./dom.js";
import { url, config } from "./api.js";

// ROWS is how many events the page keeps.
const ROWS = 500;
const STATES = ["pending", "ready", "running", "retrying", "succeeded", "failed", "skipped", "cancelled", "dead", "completed"];
// TYPES are the event types the page listens to (a named server-sent
// event reaches only a listener of its name).
const TYPES = STATES.map((s) => "task_" + s).concat(STATES.map((s) => "run_" + s), ["task_waiting", "task_progress", "run_note"]);
const FILTERS = [["workflow", "Workflow"], ["tenant", "Tenant"], ["service", "Service"], ["types", "Types (comma-separated)"]];

export async function render(main) {
  document.title = "plait · events";
  const cfg = await config();
  const q = new URLSearchParams(location.search);
  const f = {};
  for (const [k] of FILTERS) if (q.get(k)) f[k] = q.get(k);
  const form = h("form", { class: "filters", method: "get", action: "events" },
    FILTERS.map(([k, label]) => h("label", null, label, h("input", { type: "text", name: k, value: f[k] || "", size: k === "types" ? 30 : 14, placeholder: k === "types" ? "task_failed,run_note" : "" }))),
    h("button", { type: "submit" }, "Apply"), h("a", { href: "events" }, "Clear"));
  let paused = false;
  const held = [];
  const countEl = h("span", { class: "muted", id: "tail-count" }, "waiting for events…");
  const pause = h("button", { type: "button", id: "tail-pause", onclick: () => {
    paused = !paused;
    pause.textContent = paused ? "Resume" : "Pause";
    if (!paused) { for (const ev of held.splice(0)) add(ev); }
  } }, "Pause");
  const rows = h("tbody");
  replace(main, h("div", { class: "run-head" }, h("h1", null, "Live events"), countEl, h("span", { class: "actions" }, pause)), form,
    h("table", { class: "events" }, h("thead", null, h("tr", null, h("th", null, "At"), h("th", null, "Event"), h("th", null, "Run"),
      h("th", null, "Task"), h("th", null, "Detail"))), rows));
  if (!cfg.events || typeof EventSource === "undefined") {
    replace(rows, h("tr", null, h("td", { colspan: 5, class: "muted" }, "This store keeps no events: there is nothing to follow.")));
    return;
  }
  let seen = 0;
  const add = (ev) => {
    if (paused) { held.push(ev); if (held.length > ROWS) held.shift(); countEl.textContent = seen + " events, " + held.length + " held while paused"; return; }
    rows.prepend(row(ev));
    while (rows.children.length > ROWS) rows.lastChild.remove();
    countEl.textContent = seen + " event" + (seen === 1 ? "" : "s") + " since the page opened" + (seen > ROWS ? ", the newest " + ROWS + " shown" : "");
  };
  const es = new EventSource(url("events", f));
  const live = document.getElementById("live");
  const setLive = (c, text) => { live.hidden = false; live.className = "live " + c; live.textContent = text; };
  es.onopen = () => { setLive("on", "live"); notice(""); };
  es.onerror = (e) => {
    if (e && typeof e.data === "string" && e.data) notice("The stream stopped: " + e.data + ". Reconnecting…", "error");
    if (es.readyState === EventSource.CLOSED) {
      setLive("", "stopped");
      notice("The event stream was refused or ended: reload the page to try again.", "error");
    } else setLive("", "reconnecting…");
  };
  const onEvent = (e) => {
    let ev;
    try { ev = JSON.parse(e.data); } catch (_) { return; }
    seen++;
    add(ev);
  };
  for (const t of TYPES) es.addEventListener(t, onEvent);
  es.addEventListener("fell_behind", () => { rows.prepend(h("tr", { class: "muted" }, h("td", { colspan: 5 }, "The store dropped events before they were read: some are missing here."))); });
  window.addEventListener("pagehide", () => es.close());
}

// clock is the time of day of an event, to the millisecond: events come
// many in a second.
function clock(v) {
  const t = new Date(v);
  if (!v || Number.isNaN(t.getTime())) return "";
  return t.toLocaleTimeString(undefined, { hour12: false }) + "." + String(t.getMilliseconds()).padStart(3, "0");
}

function row(ev) {
  const st = ev.taskStatus || ev.runStatus || "";
  let detail = ev.error || ev.note || ev.waitingFor || "";
  if (ev.progress) detail = "progress " + ev.progress.value + (ev.progress.note ? " " + ev.progress.note : "");
  return h("tr", { "data-type": ev.type },
    h("td", { class: "nowrap small", title: time(ev.at) }, clock(ev.at)),
    h("td", { class: "nowrap" }, ev.task ? null : h("span", { class: "small muted" }, "run "),
      st ? badge(st) : h("span", { class: "small" }, ev.type.replace(/_/g, " ")),
      ev.attempt > 1 ? h("span", { class: "small muted" }, " #" + ev.attempt) : null),
    h("td", null, h("a", { class: "mono small", href: runHref(ev.runId) }, ev.runId), ev.generation ? h("span", { class: "small muted" }, " · gen " + ev.generation) : null),
    h("td", null, ev.task ? h("a", { href: taskHref(ev.runId, ev.task) }, ev.task) : ""),
    h("td", { class: (ev.error ? "err " : "") + "small" }, detail, ev.node ? h("span", { class: "muted" }, (detail ? " · " : "") + "on " + ev.node) : null));
}
