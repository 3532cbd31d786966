// The task page: its state, its attempts with durations and outcomes, the
// log lines of its latest attempt, and its payload and result as the
// handler's redactor lets them be shown. It rereads itself at the refresh
// floor while the task is not finished.
import { h, replace, notice, inlineNotice, badge, runHref, dur, num, time, parseTime, facts as factList } from "./dom.js";
import { get, describe, refreshMs } from "./api.js";
import { progress } from "./tasks.js";

const TERMINAL = ["succeeded", "failed", "skipped", "cancelled", "dead"];

export async function render(main, runID, task) {
  document.title = "plait · " + task + " · run " + runID;
  const floor = await refreshMs();
  const path = "runs/" + encodeURIComponent(runID) + "/tasks/" + encodeURIComponent(task);
  let first = true;
  const load = async () => {
    let d;
    try {
      d = await get(path);
    } catch (err) {
      if (first) throw err;
      notice(describe(err), "error");
      return true;
    }
    first = false;
    notice("");
    replace(main, ...view(d, runID));
    return TERMINAL.includes(d.task && d.task.status);
  };
  const live = document.getElementById("live");
  const status = (done) => {
    live.hidden = false;
    live.className = done ? "live" : "live poll";
    live.textContent = done ? "task ended" : "refreshing every " + dur(floor);
  };
  let done = await load();
  status(done);
  const tick = async () => {
    if (!document.hidden) done = await load();
    status(done);
    if (!done) setTimeout(tick, floor);
  };
  if (!done) setTimeout(tick, floor);
}

function view(d, runID) {
  const t = d.task || {};
  const out = [
    h("div", { class: "crumbs small" }, h("a", { href: "runs" }, "Runs"), " / ", h("a", { href: runHref(runID) }, "run ", h("span", { class: "mono" }, runID))),
    h("div", { class: "run-head" }, h("h1", null, "Task ", h("span", { class: "mono" }, t.name)), badge(t.status)),
  ];
  for (const n of d.notices || []) out.push(inlineNotice((n.section ? n.section + ": " : "") + n.message));
  const running = t.status === "running" && parseTime(t.startedAt);
  const facts = [
    ["Handler", t.handler], ["Queue", t.queue],
    ["Attempt", t.attempt ? String(t.attempt) : ""], ["Lost leases", t.crashes ? String(t.crashes) : ""],
    ["Worker", [t.worker, t.node].filter(Boolean).join(" on node ")],
    ["Depends on", (t.deps || []).map((x) => x.task + (x.on && x.on !== "success" ? " (" + x.on + ")" : "")).join(", ") + (t.join && t.join !== "all" && (t.deps || []).length ? " — any of them" : "")],
    ["Waiting for", t.waitingFor],
    ["Started", time(t.startedAt)], ["Ended", time(t.endedAt)],
    ["Duration", running ? dur(Date.now() - parseTime(t.startedAt)) + " so far" : (parseTime(t.endedAt) && parseTime(t.startedAt) ? dur(t.durationMs || 0) : "")],
  ];
  if (t.progress) facts.push(["Progress", progress(t.progress)]);
  out.push(factList(facts));
  if (t.error) out.push(h("h3", null, "Error"), h("pre", { class: "block err" }, t.error));

  out.push(h("h2", null, "Attempts"));
  const attempts = d.attempts || [];
  out.push(attempts.length === 0 ? h("p", { class: "muted" }, t.status === "running" ? "The first attempt is running." : "No attempt has ended yet.") : h("table", null,
    h("thead", null, h("tr", null, h("th", { class: "num" }, "#"), h("th", null, "Outcome"), h("th", null, "Started"),
      h("th", { class: "num" }, "Waited"), h("th", { class: "num" }, "Ran"), h("th", null, "Worker"), h("th", null, "Progress"), h("th", null, "Error"))),
    h("tbody", null, attempts.map((a) => h("tr", null,
      h("td", { class: "num" }, String(a.attempt)),
      h("td", null, outcome(a)),
      h("td", { class: "nowrap" }, time(a.startedAt)),
      h("td", { class: "num" }, parseTime(a.queuedAt) && parseTime(a.startedAt) ? dur(parseTime(a.startedAt) - parseTime(a.queuedAt)) : ""),
      h("td", { class: "num" }, dur(a.durationMs || 0)),
      h("td", { class: "small" }, [a.worker, a.node].filter(Boolean).join(" on ")),
      h("td", null, progress(a.progress)),
      h("td", { class: "err small" }, a.error || "", a.retryDelayMs ? h("div", { class: "muted" }, "retried after " + dur(a.retryDelayMs)) : null))))));

  const logs = d.logs;
  out.push(h("h2", null, "Logs", logs && logs.attempt ? h("span", { class: "muted small" }, " · attempt " + logs.attempt) : null));
  if (!logs) {
    out.push(h("p", { class: "muted" }, "No logs."));
  } else if (!(logs.lines || []).length) {
    out.push(h("p", { class: "muted" }, "The attempt logged nothing."));
  } else {
    out.push(h("pre", { class: "block logs" }, logs.lines.map((l) =>
      h("span", { class: "log-line level-" + String(l.level || "").toLowerCase().replace(/[^a-z]/g, "") },
        h("span", { class: "t" }, l.time ? new Date(l.time).toLocaleTimeString() : ""),
        h("span", { class: "lvl" }, (l.level || "").padEnd(5) + " "), l.text, "\n"))));
    if (logs.dropped) out.push(h("p", { class: "muted small" }, num(logs.dropped) + " earlier lines were dropped by the store's limit."));
  }

  out.push(h("div", { class: "grid2" },
    h("div", null, h("h2", null, "Payload"), data(d.payload, "No payload.")),
    h("div", null, h("h2", null, "Result"), data(d.result, t.status === "succeeded" ? "No result." : "No result until the task succeeds."))));
  return out;
}

function outcome(a) {
  const map = { succeeded: "succeeded", retry: "retrying", failed: "failed", "timed out": "failed", crashed: "dead", cancelled: "cancelled", released: "pending" };
  return h("span", { class: "badge state-" + (map[a.outcome] || "pending") }, a.outcome || "");
}

// data shows a payload or a result: JSON indented when it parses, text as
// it is, base64 said so; what the redactor hid is said so too.
function data(v, none) {
  if (!v) return h("p", { class: "muted" }, none);
  if (v.redacted) return h("p", { class: "muted" }, "Hidden by the redactor.");
  let body = v.data || "";
  if (v.encoding !== "base64") {
    try { body = JSON.stringify(JSON.parse(body), null, 2); } catch (_) { /* plain text */ }
  }
  return h("div", null,
    h("div", { class: "small muted" }, num(v.size) + " bytes" + (v.encoding === "base64" ? ", binary, shown in base64" : "") + (v.truncated ? ", cut short" : "")),
    h("pre", { class: "block mono" }, body));
}
