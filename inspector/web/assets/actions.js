// Actions from the pages: every one goes through POST api/v1/actions/{name}
// (the engine the plait command uses too), after a dialog that shows the
// dry run's count, asks for a reason and sends the confirmed count as the
// most to act on, so that what grew since the count is not acted on.
import { h, replace, notice, num, dur } from "./dom.js";
import { post, describe, config } from "./api.js";

// can reports whether the page should offer an action: the handler is not
// read-only, serves the action, and the authorizer lets this user do it
// (the server still asks per item when acting).
export function can(cfg, name) {
  return !!cfg && !cfg.readOnly && !!(cfg.actions || {})[name];
}

// clearError hides the page-wide notice when it shows an error (a read
// that failed before), and keeps the summary of an action just done.
export function clearError() {
  const el = document.getElementById("notice");
  if (el && el.classList.contains("error")) notice("");
}

// LABELS are the actions' names as the pages' buttons and dialogs say them.
export const LABELS = {
  "run.cancel": "Cancel", "run.replay": "Replay", "run.delete": "Delete", "run.note": "Add a note",
  "dead_letter.requeue": "Replay", "dead_letter.purge": "Purge",
  "task.run_now": "Run now", "task.skip": "Skip", "task.cancel": "Cancel",
  "queue.pause": "Pause", "queue.resume": "Resume", "node.drain": "Drain",
  "schedule.pause": "Pause", "schedule.resume": "Resume", "schedule.trigger": "Trigger", "schedule.backfill": "Backfill",
};

// DANGER are the actions whose button is drawn as a warning.
const DANGER = new Set(["run.cancel", "run.delete", "dead_letter.purge", "task.skip", "task.cancel", "node.drain", "queue.pause"]);

// button answers a button that opens the action's dialog, or null when the
// page should not offer the action. opts are those of confirmAction, with
// label; target and what may be functions called at the click (target's
// may be async: the items are read then).
export function button(cfg, name, opts) {
  if (!can(cfg, name)) return null;
  return h("button", {
    type: "button", class: "act" + (DANGER.has(name) ? " danger" : ""), "data-action": name, title: opts.title || null,
    onclick: async (e) => {
      // Inside a <summary>, a click would also open or close it.
      e.preventDefault();
      e.stopPropagation();
      let target = opts.target, what = opts.what;
      try {
        if (typeof target === "function") target = await target();
        if (typeof what === "function") what = what(target);
      } catch (err) {
        notice(describe(err), "error");
        return;
      }
      const report = await confirmAction(Object.assign({}, opts, { name, target, what }));
      if (!report) return;
      if (opts.done) await opts.done(report);
      // Said again: the page's reread may have cleared the notice.
      notice(summary(name, report), report.failed ? "error" : "");
    },
  }, opts.label || LABELS[name] || name);
}

// confirmAction opens the dialog for one action on a target ({ids}, {refs},
// {runs}, {deadLetters}, with from/to for a backfill): what it acts on
// (what), the dry-run count, a reason (required for a query), extra
// fields (fields: [{name, label, type}] whose values join the body), then
// acts. It answers the action's report, or null when nothing was done.
export async function confirmAction({ name, target, what, note, fields, query }) {
  const cfg = await config();
  const isQuery = query || !!(target && (target.runs || target.deadLetters));
  const countEl = h("p", { class: "act-count" }, "Counting…");
  const reason = h("textarea", { name: "reason", rows: 2, maxlength: 900, placeholder: isQuery ? "required" : "optional: written to each run's history" });
  const inputs = (fields || []).map((f) => h("label", null, f.label, h("input", { type: f.type || "text", name: f.name, required: true })));
  const errEl = h("p", { class: "err small", hidden: true });
  const ok = h("button", { type: "button", class: "confirm" + (DANGER.has(name) ? " danger" : ""), disabled: true }, LABELS[name] || name);
  const cancel = h("button", { type: "button", class: "dismiss" }, "Back");
  const dlg = h("dialog", { class: "act-dialog", "data-action": name },
    h("h2", null, (LABELS[name] || name) + (what ? ": " + what : "")),
    note ? h("p", { class: "small muted act-note" }, note) : null,
    countEl, inputs,
    h("label", null, "Reason" + (isQuery ? "" : " (optional)"), reason),
    errEl,
    h("div", { class: "act-buttons" }, cancel, ok));
  document.body.append(dlg);
  dlg.showModal();

  let count = null;
  const extra = () => {
    const out = {};
    for (const f of fields || []) {
      const v = dlg.querySelector('input[name="' + f.name + '"]').value;
      out[f.name] = f.type === "datetime-local" && v ? new Date(v).toISOString() : v;
    }
    return out;
  };
  const fail = (err) => { errEl.hidden = false; errEl.textContent = describe(err); };
  const recount = async () => {
    ok.disabled = true;
    try {
      const body = Object.assign({}, target, extra(), { dryRun: true });
      if ((fields || []).some((f) => !body[f.name])) {
        countEl.textContent = "Fill in the fields to count what it acts on.";
        return;
      }
      const c = await post("actions/" + name, body);
      count = c.count;
      const items = count1(name, c.count);
      // The pace is worth saying when it takes a while.
      const took = cfg.actionRate ? 1000 * c.count / cfg.actionRate : 0;
      const pace = took >= 2000 ? ", at " + num(cfg.actionRate) + " a second (about " + dur(took) + ")" : "";
      countEl.textContent = c.count === 0 ? "Nothing to act on now." :
        "This acts on " + (c.capped ? "at least " : "") + items + pace + "." +
        (c.skipped ? " " + num(c.skipped) + " selected left out (gone, or in a state it does not apply to)." : "");
      errEl.hidden = true;
      ok.disabled = c.count === 0;
      ok.textContent = verb(name, c.count);
    } catch (err) {
      countEl.textContent = "";
      fail(err);
    }
  };
  for (const input of dlg.querySelectorAll("input")) input.addEventListener("change", recount);
  recount();

  return new Promise((resolve) => {
    const close = (v) => { dlg.close(); dlg.remove(); resolve(v); };
    cancel.addEventListener("click", () => close(null));
    dlg.addEventListener("cancel", () => close(null));
    ok.addEventListener("click", async () => {
      const why = reason.value.trim();
      if (isQuery && !why) {
        fail(new Error("a reason is needed for an action on everything that matches"));
        errEl.textContent = "Say why: an action on everything that matches needs a reason.";
        reason.focus();
        return;
      }
      ok.disabled = true;
      cancel.disabled = true;
      replace(countEl, "Acting on " + num(count) + "…");
      try {
        const body = Object.assign({}, target, extra(), { reason: why || undefined, max: count || undefined });
        const report = await post("actions/" + name, body);
        notice(summary(name, report), report.failed ? "error" : "");
        close(report);
      } catch (err) {
        cancel.disabled = false;
        fail(err);
        recount();
      }
    });
  });
}

// NOUNS are what each kind of action acts on.
const NOUNS = { run: "run", dead_letter: "letter", task: "task", queue: "queue", node: "node", schedule: "schedule" };

// count1 says how many of what an action acts on: "2 runs".
function count1(name, n) {
  const noun = NOUNS[name.split(".")[0]] || "item";
  return n === 1 ? "1 " + noun : num(n) + " " + noun + "s";
}

// verb is the confirm button's text: the action and what it acts on.
function verb(name, n) {
  return (name === "run.note" ? "Note" : LABELS[name] || name) + " " + count1(name, n);
}

// summary says in one sentence what an action did.
export function summary(name, r) {
  let s = (LABELS[name] || name) + ": " + num(r.done) + " of " + num(r.total) + " done";
  if (r.failed) {
    const first = (r.items || []).find((i) => i.error);
    s += ", " + num(r.failed) + " failed" + (first ? " (" + first.error.message + ")" : "");
  }
  if ((r.skipped || []).length) s += ", " + num(r.skipped.length) + " left out";
  const started = (r.items || []).flatMap((i) => i.runs || []);
  if (started.length) s += "; started run" + (started.length === 1 ? " " : "s ") + started.slice(0, 5).join(", ") + (started.length > 5 ? "…" : "");
  if (r.noted) s += "; the reason is in " + num(r.noted) + " run" + (r.noted === 1 ? "'s" : "s'") + " history";
  return s + ".";
}
