// The runs page: filters kept in the URL's query, cursor paging, and a count
// that says "at least" when the store's read bound stopped it.
import { h, replace, notice, inlineNotice, badge, runHref, dur, num, time, ago, parseTime } from "./dom.js";
import { get, describe, refreshMs, config } from "./api.js";
import { selection } from "./runselect.js";

const STATUSES = ["pending", "running", "completed", "failed", "cancelled"];
const TEXT_FILTERS = [["workflow", "Workflow"], ["service", "Service"], ["tenant", "Tenant"], ["error", "Error starts with"]];
const TIME_FILTERS = [["createdFrom", "Created from"], ["createdTo", "Created to"], ["endedFrom", "Ended from"], ["endedTo", "Ended to"]];

// filters reads the filter parameters from the URL, as the API takes them.
function filters(q) {
  const f = {};
  const st = q.getAll("status").flatMap((v) => v.split(",")).filter((v) => STATUSES.includes(v));
  if (st.length) f.status = st;
  for (const [k] of TEXT_FILTERS.concat(TIME_FILTERS)) if (q.get(k)) f[k] = q.get(k);
  return f;
}

// localInput turns an RFC 3339 time into a datetime-local input's value.
function localInput(v) {
  const t = parseTime(v);
  if (t === null) return "";
  const d = new Date(t - new Date(t).getTimezoneOffset() * 60000);
  return d.toISOString().slice(0, 16);
}

function query(f, extra) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(Object.assign({}, f, extra))) {
    if (Array.isArray(v)) v.forEach((x) => q.append(k, x));
    else if (v !== undefined && v !== null && v !== "") q.set(k, v);
  }
  const s = q.toString();
  return s ? "?" + s : "";
}

export async function render(main) {
  document.title = "plait · runs";
  const q = new URLSearchParams(location.search);
  const f = filters(q);
  const cursor = q.get("cursor") || "";
  const limit = Math.min(Math.max(parseInt(q.get("limit") || "50", 10) || 50, 1), 1000);

  const form = h("form", { class: "filters", method: "get", action: "runs" },
    h("fieldset", null, h("legend", null, "Status"),
      STATUSES.map((st) => h("label", null, h("input", { type: "checkbox", name: "status", value: st, checked: (f.status || []).includes(st) }), st))),
    TEXT_FILTERS.map(([k, label]) => h("label", null, label, h("input", { type: "text", name: k, value: f[k] || "", size: k === "error" ? 22 : 14 }))),
    TIME_FILTERS.map(([k, label]) => h("label", null, label, h("input", { type: "datetime-local", name: k, value: localInput(f[k]) }))),
    h("label", null, "Per page", h("select", { name: "limit" }, [...new Set([25, 50, 100, 200, limit])].sort((a, b) => a - b).map((n) => h("option", { value: n, selected: n === limit }, n)))),
    h("button", { type: "submit" }, "Apply"),
    h("a", { href: "runs" }, "Clear"));
  // The form's own submission would send local times; turn them into RFC
  // 3339 first, and leave empty fields out of the URL.
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const data = new FormData(form);
    const next = {};
    const st = data.getAll("status");
    if (st.length) next.status = st;
    for (const [k] of TEXT_FILTERS) if (String(data.get(k) || "").trim()) next[k] = String(data.get(k)).trim();
    for (const [k] of TIME_FILTERS) {
      const v = String(data.get(k) || "");
      if (v) next[k] = new Date(v).toISOString();
    }
    if (String(data.get("limit")) !== "50") next.limit = data.get("limit");
    location.href = "runs" + query(next);
  });

  const countEl = h("span", { class: "muted", id: "run-count" }, "counting…");
  const listEl = h("div", null, h("p", { class: "muted" }, "Loading…"));
  const sel = selection(await config(), f, () => Promise.all([count(), list()]));
  replace(main, h("div", { class: "run-head" }, h("h1", null, "Runs"), countEl), form, sel.bar, listEl);

  const count = async () => {
    try {
      const c = await get("runs/count", f);
      const parts = Object.entries(c.counts || {}).filter(([, n]) => n > 0).map(([st, n]) => num(n) + " " + st);
      countEl.textContent = (c.capped ? "at least " : "") + num(c.total) + " run" + (c.total === 1 ? "" : "s") + (parts.length ? " (" + parts.join(", ") + ")" : "");
    } catch (err) {
      countEl.textContent = err.unsupported ? "count not available on this store" : "count failed: " + describe(err);
    }
  };
  const list = async () => {
    try {
      const page = await get("runs", Object.assign({}, f, { cursor, limit }));
      notice("");
      replace(listEl, ...table(page, f, cursor, limit));
      sel.enhance(listEl);
    } catch (err) {
      if (err.unsupported) replace(listEl, inlineNotice(describe(err)));
      else notice(describe(err), "error");
    }
  };
  await Promise.all([count(), list()]);
  // The first page follows new runs, no faster than the handler's floor.
  if (!cursor) {
    const every = Math.max(await refreshMs(), 5000);
    setInterval(() => { if (!document.hidden) { count(); list(); } }, every);
  }
}

function table(page, f, cursor, limit) {
  const runs = page.runs || [];
  const extra = limit !== 50 ? { limit } : {};
  const pager = h("div", { class: "pager" },
    cursor ? h("a", { href: "runs" + query(f, extra) }, "« First page") : null,
    page.nextCursor ? h("a", { href: "runs" + query(f, Object.assign({ cursor: page.nextCursor }, extra)), rel: "next" }, "Next page »") : null,
    h("span", { class: "muted small" }, runs.length ? "newest first" : ""));
  if (!runs.length && page.nextCursor) {
    // A filter the store answers by reading runs one by one stops at its
    // read budget: this page found none, the next may.
    return [h("p", { class: "muted" }, "No run matched among the runs read for this page; there are more to read."), pager];
  }
  if (!runs.length) return [h("p", { class: "muted" }, cursor ? "No more runs." : "No run matches."), pager];
  return [h("table", { class: "runs" },
    h("thead", null, h("tr", null, h("th", null, "Run"), h("th", null, "Workflow"), h("th", null, "Status"),
      h("th", null, "Tasks"), h("th", null, "Tenant"), h("th", null, "Service"), h("th", null, "Created"), h("th", { class: "num" }, "Duration"))),
    h("tbody", null, runs.map((r) => h("tr", null,
      h("td", null, h("a", { class: "mono", href: runHref(r.id) }, r.id), r.key ? h("div", { class: "small muted" }, r.key) : null),
      h("td", null, filterLink(f, "workflow", r.workflow), r.generation ? h("span", { class: "small muted" }, " · replay " + r.generation) : null),
      h("td", null, badge(r.status)),
      h("td", { class: "nowrap" }, tasksSummary(r)),
      h("td", null, filterLink(f, "tenant", r.tenant)), h("td", null, filterLink(f, "service", r.service)),
      h("td", { class: "nowrap", title: time(r.createdAt) }, ago(r.createdAt)),
      h("td", { class: "num" }, parseTime(r.endedAt) ? dur(r.durationMs || 0) : ""))))),
    pager];
}

// filterLink shows a value that, clicked, narrows the list to it.
function filterLink(f, key, value) {
  if (!value) return "";
  if (f[key] === value) return value;
  return h("a", { class: "filter-link", href: "runs" + query(f, { [key]: value }), title: "only " + key + " " + value }, value);
}

export function tasksSummary(r) {
  const done = (r.succeeded || 0) + (r.failed || 0) + (r.skipped || 0) + (r.cancelled || 0);
  const bits = [num(done) + " / " + num(r.total) + " done"];
  if (r.failed) bits.push(num(r.failed) + " failed");
  if (r.skipped) bits.push(num(r.skipped) + " skipped");
  if (r.cancelled) bits.push(num(r.cancelled) + " cancelled");
  return bits.join(" · ");
}
