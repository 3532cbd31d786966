// The task table's rows and the progress of a task, shared by the run page
// and the task page.
import { h, replace, badge, taskHref, dur, time, parseTime } from "./dom.js";

const TERMINAL = ["succeeded", "failed", "skipped", "cancelled", "dead"];

// isTerminalTask reports whether a task status is final.
export function isTerminalTask(st) { return TERMINAL.includes(st); }

// fillRow writes a task's cells into its table row.
export function fillRow(row, t, runID) {
  let d = "";
  if (isTerminalTask(t.status) && parseTime(t.startedAt)) d = dur(t.durationMs || 0);
  else if (t.status === "running" && parseTime(t.startedAt)) d = dur(Date.now() - parseTime(t.startedAt)) + "…";
  else if (t.durationMs) d = dur(t.durationMs);
  replace(row,
    h("td", { class: "nowrap" }, h("a", { href: taskHref(runID, t.name) }, t.name), t.handler && t.handler !== t.name ? h("span", { class: "small muted" }, " · " + t.handler) : null),
    h("td", null, badge(t.status)),
    h("td", { class: "num" }, t.attempt ? String(t.attempt) : ""),
    h("td", { class: "num nowrap" }, d),
    h("td", { class: "nowrap" }, progress(t.progress)),
    h("td", { class: "small" }, deps(t.deps)),
    h("td", { class: "small" }, t.queue || ""),
    h("td", { class: t.error ? "err small" : "small muted" }, t.error || t.waitingFor || ""));
}

// deps lists a task's parents, the condition named when it is not success;
// a long list shows its first few.
function deps(list) {
  const all = list || [];
  const shown = all.slice(0, 4).map((x, i) => [i ? ", " : "", x.task, x.on && x.on !== "success" ? " (" + x.on + ")" : ""]);
  if (all.length > 4) {
    shown.push(h("span", { class: "muted", title: all.map((x) => x.task).join(", ") }, " and " + (all.length - 4) + " more"));
  }
  return shown;
}

// progress shows a report: a bar when the value reads as a fraction or a
// percentage, the number otherwise, and the note.
export function progress(p) {
  if (!p) return "";
  const v = Number(p.value);
  let frac = null;
  if (v >= 0 && v <= 1) frac = v;
  else if (v > 1 && v <= 100) frac = v / 100;
  return h("span", { class: "progress", title: "reported " + time(p.at) },
    frac !== null ? h("span", { class: "meter" }, sized(h("span"), frac)) : null,
    h("span", { class: "small" }, frac !== null ? Math.round(frac * 100) + " %" : String(p.value)),
    p.note ? h("span", { class: "small muted" }, p.note) : null);
}

// sized sets a width through the CSSOM, which a style-src policy allows,
// rather than a style attribute.
function sized(el, frac) {
  el.style.width = (frac * 100).toFixed(1) + "%";
  return el;
}
