// The dead-letter page: the newest letters grouped by their error (numbers
// and ids taken out, as the store groups them), each group with its letters
// and the replay and purge of the whole group or of one letter.
import { h, replace, inlineNotice, badge, runHref, taskHref, num, time, ago } from "./dom.js";
import { get, describe, config, refreshMs } from "./api.js";
import { showFailure, rereadWhileIdle } from "./fleetpage.js";
import { clearError, button, can } from "./actions.js";

// LETTERS_MAX is the most letters an open group reads.
const LETTERS_MAX = 2000;
const FILTERS = [["workflow", "Workflow"], ["queue", "Queue"], ["task", "Task"], ["tenant", "Tenant"], ["error", "Error starts with"]];

// literal is the start of a key that every error of its group begins with.
function literal(key) {
  const i = key.indexOf("#");
  return i < 0 ? key : key.slice(0, i);
}

export async function render(main) {
  document.title = "plait · dead letters";
  const cfg = await config();
  const q = new URLSearchParams(location.search);
  const f = {};
  for (const [k] of FILTERS) if (q.get(k)) f[k] = q.get(k);

  const form = h("form", { class: "filters", method: "get", action: "dead-letters" },
    FILTERS.map(([k, label]) => h("label", null, label, h("input", { type: "text", name: k, value: f[k] || "", size: k === "error" ? 22 : 14 }))),
    h("button", { type: "submit" }, "Apply"), h("a", { href: "dead-letters" }, "Clear"));
  const head = h("span", { class: "muted", id: "letter-count" });
  const all = h("span", { class: "actions" });
  const body = h("div", null, h("p", { class: "muted" }, "Loading…"));
  replace(main, h("div", { class: "run-head" }, h("h1", null, "Dead letters"), head, all), form, body);

  const load = async () => {
    try {
      const g = await get("dead-letters/groups", f);
      clearError();
      head.textContent = (g.truncated ? "the newest " : "") + num(g.letters) + " letter" + (g.letters === 1 ? "" : "s") + " in " + num((g.groups || []).length) + " group" + ((g.groups || []).length === 1 ? "" : "s");
      replace(all, Object.keys(f).length ? [
        button(cfg, "dead_letter.requeue", { label: "Replay all matching", what: "every letter the filter matches", target: { deadLetters: f }, done: load }),
        button(cfg, "dead_letter.purge", { label: "Purge all matching", what: "every letter the filter matches", target: { deadLetters: f }, done: load }),
      ] : []);
      replace(body, ...groups(cfg, g, f, load));
    } catch (err) {
      showFailure(body, err);
    }
  };
  await load();
  const every = Math.max(await refreshMs(), 10000);
  rereadWhileIdle(load, every, "dialog[open], details.group[open]");
}

function groups(cfg, g, f, reload) {
  const list = g.groups || [];
  if (!list.length) return [h("p", { class: "muted" }, "No dead letter" + (Object.keys(f).length ? " matches." : ". Every failed or dead task's letter would show here."))];
  const acts = can(cfg, "dead_letter.requeue") || can(cfg, "dead_letter.purge");
  return [h("div", { class: "letter-groups" }, list.map((gr) => group(cfg, gr, f, reload, acts))),
    g.nextCursor ? h("p", { class: "muted small" }, "Older letters are not grouped here: narrow the filter to see them.") : null];
}

function group(cfg, gr, f, reload, acts) {
  const s = gr.sample || {};
  const lettersEl = h("div", null, h("p", { class: "muted small" }, "Loading the letters…"));
  let refs = null; // the group's letters, read when opened or acted on
  const read = async () => {
    if (refs) return refs;
    refs = await letters(f, gr.key, (gr.sample || {}).error || "");
    return refs;
  };
  const det = h("details", { class: "group", "data-key": gr.key },
    h("summary", null,
      h("span", { class: "group-count" }, num(gr.count)),
      h("span", { class: "group-key mono" }, gr.key || "(no error)"),
      h("span", { class: "small muted" }, "newest " + ago(gr.newest) + (gr.count > 1 ? ", oldest " + ago(gr.oldest) : "")),
      acts ? h("span", { class: "actions" },
        groupButton(cfg, "dead_letter.requeue", gr, f, reload),
        groupButton(cfg, "dead_letter.purge", gr, f, reload)) : null),
    h("p", { class: "small example" }, "For example ", h("a", { href: taskHref(s.runId, s.task) }, s.task), " of ",
      h("a", { class: "mono", href: runHref(s.runId) }, s.runId), s.workflow ? " (" + s.workflow + ")" : "", ": ",
      h("span", { class: "err" }, s.error || "")),
    lettersEl);
  det.addEventListener("toggle", async () => {
    if (!det.open) return;
    try {
      replace(lettersEl, letterTable(cfg, await read(), reload));
    } catch (err) {
      replace(lettersEl, inlineNotice(describe(err), "error"));
    }
  });
  return det;
}

// groupButton acts on the letters of a group: a dead-letter query by the
// group's key and the page's filter, so its count and reason are asked.
function groupButton(cfg, name, gr, f, reload) {
  if (!gr.key) return null; // an empty key would be no filter at all
  return button(cfg, name, {
    label: name === "dead_letter.requeue" ? "Replay group" : "Purge group", done: reload,
    what: "the letters of “" + (gr.key || "no error") + "”", target: { deadLetters: Object.assign({}, f, { errorKey: gr.key }) },
  });
}

// letters reads the letters of one group: those the filter matches whose
// error's key is the group's (errorKey), the store narrowed to the errors
// that start as the key does.
async function letters(f, key, sample) {
  // The key's start is the errors' own start, unless the error began with
  // spaces the key trimmed: then only the key itself narrows.
  const lit = sample.startsWith(literal(key)) ? literal(key) : "";
  const out = [];
  let cursor = "";
  do {
    const prefix = f.error && f.error.length > lit.length ? f.error : lit;
    const page = await get("dead-letters", Object.assign({}, f, { error: prefix, errorKey: key, cursor, limit: 1000 }));
    out.push(...(page.letters || []));
    cursor = page.nextCursor || "";
  } while (cursor && out.length < LETTERS_MAX);
  return out.slice(0, LETTERS_MAX);
}

function letterTable(cfg, list, reload) {
  if (!list.length) return h("p", { class: "muted small" }, "These letters are gone.");
  return h("table", { class: "letters" },
    h("thead", null, h("tr", null, h("th", null, "Task"), h("th", null, "Run"), h("th", null, "Status"), h("th", null, "Queue"),
      h("th", null, "Error"), h("th", null, "Since"), h("th", null, ""))),
    h("tbody", null, list.slice(0, 200).map((l) => h("tr", { "data-run": l.runId, "data-task": l.task },
      h("td", null, h("a", { href: taskHref(l.runId, l.task) }, l.task)),
      h("td", null, h("a", { class: "mono", href: runHref(l.runId) }, l.runId), l.workflow ? h("div", { class: "small muted" }, l.workflow) : null),
      h("td", null, badge(l.status)),
      h("td", { class: "small" }, l.queue || ""),
      h("td", { class: "err small" }, l.error || ""),
      h("td", { class: "nowrap small", title: time(l.at) }, ago(l.at)),
      h("td", { class: "nowrap" },
        button(cfg, "dead_letter.requeue", { what: l.task + " of " + l.runId, target: { refs: [{ runId: l.runId, task: l.task }] }, done: reload }),
        button(cfg, "dead_letter.purge", { what: l.task + " of " + l.runId, target: { refs: [{ runId: l.runId, task: l.task }] }, done: reload }))))),
    list.length > 200 ? h("caption", { class: "small muted" }, "The first 200 of " + num(list.length) + " letters") : null);
}
