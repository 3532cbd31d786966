// The schedules page: each saved schedule's next and last fire and its
// last run, with pause, resume, trigger and backfill, and the note that a
// process saving the schedule at start-up overwrites a change made here.
import { h, replace, badge, runHref, time, ago, dur } from "./dom.js";
import { get, config, refreshMs } from "./api.js";
import { showFailure, rereadWhileIdle } from "./fleetpage.js";
import { clearError, button, can } from "./actions.js";

export async function render(main) {
  document.title = "plait · schedules";
  const cfg = await config();
  const body = h("div", null, h("p", { class: "muted" }, "Loading…"));
  replace(main, h("div", { class: "run-head" }, h("h1", null, "Schedules")), body);

  const load = async () => {
    try {
      const s = await get("schedules");
      clearError();
      replace(body, ...view(cfg, s, load));
    } catch (err) {
      showFailure(body, err);
    }
  };
  await load();
  const every = Math.max(await refreshMs(), 5000);
  rereadWhileIdle(load, every);
}

function until(v) {
  const t = Date.parse(v);
  if (Number.isNaN(t)) return "";
  return t >= Date.now() ? "in " + dur(t - Date.now()) : ago(v);
}

function view(cfg, s, reload) {
  const items = s.items || [];
  const acts = ["schedule.pause", "schedule.resume", "schedule.trigger", "schedule.backfill"].some((a) => can(cfg, a));
  const out = [];
  if (acts && s.note) out.push(h("p", { class: "inline-notice schedule-note" }, s.note));
  if (!items.length) return out.concat(h("p", { class: "muted" }, "No schedule is saved."));
  out.push(h("table", { class: "schedules" },
    h("thead", null, h("tr", null, h("th", null, "Schedule"), h("th", null, "When"), h("th", null, "State"),
      h("th", null, "Next fire"), h("th", null, "Last fire"), h("th", null, "Last run"), h("th", null, ""))),
    h("tbody", null, items.map((it) => {
      const one = { ids: [it.name] };
      const what = "schedule " + it.name;
      return h("tr", { "data-schedule": it.name },
        h("td", null, h("span", { class: "mono" }, it.name),
          it.tenant || it.service ? h("div", { class: "small muted" }, [it.tenant, it.service].filter(Boolean).join(" · ")) : null),
        h("td", null, h("span", { class: "mono" }, it.spec), it.timeZone ? h("div", { class: "small muted" }, it.timeZone) : null,
          h("div", { class: "small muted" }, [it.overlap ? "overlap " + it.overlap : "", it.catchUp ? "catch-up " + it.catchUp : "",
            it.jitterMs ? "jitter " + dur(it.jitterMs) : ""].filter(Boolean).join(" · "))),
        h("td", null, it.paused ? badge("paused") : badge("active")),
        h("td", { class: "nowrap", title: time(it.nextFire) }, it.nextFire ? until(it.nextFire) : h("span", { class: "muted" }, "nothing due")),
        h("td", { class: "nowrap", title: time(it.lastFire) }, it.lastFire ? ago(it.lastFire) : h("span", { class: "muted" }, "never")),
        h("td", null, it.lastRunId ? [h("a", { class: "mono small", href: runHref(it.lastRunId) }, it.lastRunId), " ", it.lastRunStatus ? badge(it.lastRunStatus) : null] : ""),
        h("td", { class: "nowrap" },
          it.paused ? button(cfg, "schedule.resume", { what, note: s.note, target: one, done: reload })
            : button(cfg, "schedule.pause", { what, note: s.note, target: one, done: reload }),
          button(cfg, "schedule.trigger", { what, note: "Starts one run now, as the schedule would.", target: one, done: reload }),
          button(cfg, "schedule.backfill", {
            what, target: one, done: reload,
            note: "Starts one run per instant the schedule would have fired at, from the first time to the second, both included (an instant fires once however often it is backfilled). " + (s.note || ""),
            fields: [{ name: "from", label: "From (your local time)", type: "datetime-local" }, { name: "to", label: "To (your local time)", type: "datetime-local" }],
          })));
    }))));
  return out;
}
