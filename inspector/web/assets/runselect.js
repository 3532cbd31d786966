// The runs page's actions: a checkbox per run to act on a selection, and
// the same actions on every run the filter matches (a query: the dialog
// shows the dry-run count and asks a reason). Offered only where the
// handler lets this user act.
import { h, replace, num } from "./dom.js";
import { button, can } from "./actions.js";

const RUN_ACTIONS = ["run.cancel", "run.replay", "run.delete", "run.note"];

// selection answers the toolbar to put above the list and enhance, to call
// each time the list is drawn: it adds the checkboxes, keeping the runs
// checked before. Both are null when no run action is offered.
export function selection(cfg, f, reload) {
  const offered = RUN_ACTIONS.filter((a) => can(cfg, a));
  if (!offered.length) return { bar: null, enhance: () => {} };
  const chosen = new Set();
  const countEl = h("span", { class: "muted", id: "selected-count" });
  const selectedActs = h("span", { class: "sel-actions" });
  const bar = h("div", { class: "act-bar", id: "run-actions" },
    h("span", { class: "act-group" }, countEl, selectedActs),
    h("span", { class: "act-group" }, h("span", { class: "muted" }, "Every run the filter matches:"),
      offered.map((a) => button(cfg, a, {
        label: labelOf(a) + " all matching",
        what: described(f),
        query: true, target: { runs: f }, done: reload,
      }))));
  const ids = () => ({ ids: Array.from(chosen) });
  const what = (t) => num(t.ids.length) + " selected run" + (t.ids.length === 1 ? "" : "s");
  const sync = () => {
    countEl.textContent = chosen.size ? num(chosen.size) + " selected:" : "Select runs to act on them.";
    replace(selectedActs, chosen.size ? offered.map((a) => button(cfg, a, { label: labelOf(a), what, query: a === "run.note", target: ids, done: async () => { chosen.clear(); sync(); await reload(); } })) : []);
  };
  sync();
  const enhance = (root) => {
    const table = root.querySelector("table.runs");
    if (!table) return;
    const rows = Array.from(table.querySelectorAll("tbody tr"));
    const all = h("input", { type: "checkbox", "aria-label": "select every run on this page" });
    all.addEventListener("change", () => {
      for (const r of rows) {
        const box = r.querySelector("input.pick");
        box.checked = all.checked;
        if (all.checked) chosen.add(r.dataset.run); else chosen.delete(r.dataset.run);
      }
      sync();
    });
    table.querySelector("thead tr").prepend(h("th", { class: "pick" }, all));
    for (const r of rows) {
      const link = r.querySelector("a.mono");
      if (!link) continue;
      r.dataset.run = link.textContent;
      const box = h("input", { type: "checkbox", class: "pick", "aria-label": "select run " + link.textContent, checked: chosen.has(r.dataset.run) });
      box.addEventListener("change", () => {
        if (box.checked) chosen.add(r.dataset.run); else chosen.delete(r.dataset.run);
        sync();
      });
      r.prepend(h("td", { class: "pick" }, box));
    }
    all.checked = rows.length > 0 && rows.every((r) => chosen.has(r.dataset.run));
  };
  return { bar, enhance };
}

// described says which runs a filter matches: "every run with status
// failed, tenant acme".
function described(f) {
  const parts = Object.entries(f).map(([k, v]) => k + " " + (Array.isArray(v) ? v.join(" or ") : v));
  return parts.length ? "every run with " + parts.join(", ") : "every run";
}

function labelOf(a) {
  return { "run.cancel": "Cancel", "run.replay": "Replay", "run.delete": "Delete", "run.note": "Note" }[a];
}
