// The waterfall: one row per task that started, a hatched part while it
// waited in its queue and a bar from its first claim to its end (or now),
// on one time axis from the run's creation.
import { h, cls, dur, time, parseTime, taskHref } from "./dom.js";

// At most this many rows: the earliest to start.
const ROWS = 200;

export function waterfall(run, tasks, runID) {
  const started = tasks.filter((t) => parseTime(t.startedAt) !== null);
  if (!started.length) return h("p", { class: "muted" }, "No task has started yet.");
  started.sort((a, b) => parseTime(a.startedAt) - parseTime(b.startedAt));
  const now = Date.now();
  const t0 = Math.min(parseTime(run.createdAt) ?? Infinity, ...started.map((t) => queued(t) ?? parseTime(t.startedAt)));
  const end = (t) => parseTime(t.endedAt) ?? (isActive(t.status) ? now : parseTime(t.startedAt));
  const t1 = Math.max(parseTime(run.endedAt) ?? 0, ...started.map(end), t0 + 1);
  const span = t1 - t0;
  const pct = (t) => ((t - t0) / span) * 100;
  const rows = started.slice(0, ROWS).map((t) => {
    const s = parseTime(t.startedAt), e = end(t), q = queued(t);
    const track = h("div", { class: "track" });
    if (q !== null && q < s) track.append(place(h("div", { class: "wait", title: "waited " + dur(s - q) }), pct(q), pct(s)));
    const attempts = t.attempts || [];
    if (attempts.length > 1 || (attempts.length === 1 && !isFinal(t.status, attempts[0]))) {
      // One segment per finished attempt, coloured by its outcome, then
      // the attempt under way (after its backoff) to now.
      let last = s, prevEnd = null;
      for (const a of attempts) {
        const as = parseTime(a.startedAt), ae = parseTime(a.endedAt);
        if (as === null || ae === null) continue;
        // The backoff (or the wait in the queue) between two attempts.
        if (prevEnd !== null && as > prevEnd) track.append(place(h("div", { class: "wait", title: "waited " + dur(as - prevEnd) }), pct(prevEnd), pct(as)));
        prevEnd = ae;
        track.append(place(h("div", {
          class: "bar state-" + (OUTCOME_STATE[a.outcome] || "pending"),
          title: t.name + ", attempt " + a.attempt + ": " + a.outcome + " after " + dur(ae - as) + (a.error ? " — " + a.error : ""),
        }), pct(as), pct(ae)));
        last = ae + (a.retryDelayMs || 0);
      }
      if (isActive(t.status) && prevEnd !== null && last > prevEnd) track.append(place(h("div", { class: "wait", title: "backoff" }), pct(prevEnd), pct(Math.min(last, now))));
      if (isActive(t.status) && t.status !== "pending" && now > last) {
        track.append(place(h("div", { class: "bar state-" + cls(t.status), title: t.name + ": " + t.status + ", attempt " + (t.attempt || "") }), pct(last), pct(now)));
      }
    } else {
      track.append(place(h("div", {
        class: "bar state-" + cls(t.status),
        title: t.name + ": " + t.status + ", " + time(t.startedAt) + " → " + (parseTime(t.endedAt) ? time(t.endedAt) : "now"),
      }), pct(s), pct(e)));
    }
    return h("div", { class: "wf-row" },
      h("a", { class: "name", href: taskHref(runID, t.name), title: t.name }, t.name),
      track,
      h("span", { class: "dur" }, dur(e - s) + (isActive(t.status) && !parseTime(t.endedAt) ? "…" : "")));
  });
  return h("div", { class: "waterfall" },
    h("div", { class: "wf-axis" }, h("span", null, ""), h("span", { class: "ticks" },
      h("span", null, "0"), h("span", null, dur(span / 2)), h("span", null, dur(span))), h("span", null, "")),
    rows,
    started.length > ROWS ? h("p", { class: "muted small" }, "The first " + ROWS + " of " + started.length + " started tasks.") : null);
}

// queued is when the task's first attempt entered its queue, when known.
function queued(t) {
  const a = (t.attempts || [])[0];
  return parseTime(a && a.queuedAt) ?? null;
}

// The task state whose colour an attempt's outcome takes.
const OUTCOME_STATE = { succeeded: "succeeded", retry: "retrying", failed: "failed", "timed out": "failed", crashed: "dead", cancelled: "cancelled", released: "pending" };

// isFinal reports whether a task's one attempt is the whole of it.
function isFinal(status, a) {
  return !isActive(status) && a.outcome !== "retry" && a.outcome !== "released" && a.outcome !== "crashed";
}

function isActive(st) { return st === "running" || st === "retrying" || st === "ready" || st === "pending"; }

// place positions an element on the track through the CSSOM (a style-src
// policy allows it, unlike a style attribute).
function place(el, from, to) {
  el.style.left = Math.max(0, from).toFixed(2) + "%";
  el.style.width = Math.max(0.2, to - from).toFixed(2) + "%";
  return el;
}
