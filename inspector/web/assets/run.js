// The run page: the run's facts and actions, its DAG (the server's SVG,
// inlined so the stylesheet colours it), a waterfall of task times and the
// task table, all kept up to date from the run's event stream, or by polling
// at the handler's refresh floor when the store keeps no events.
import { h, replace, notice, inlineNotice, badge, cls, taskHref, dur, num, time, parseTime, throttle, facts as factList, s as svgEl } from "./dom.js";
import { get, text, post, config, describe, refreshMs, url, ApiError } from "./api.js";
import { tasksSummary } from "./runs.js";
import { waterfall } from "./waterfall.js";
import { fillRow, isTerminalTask } from "./tasks.js";
import { safeSVG } from "./svg.js";

const TASK_STATES = ["pending", "ready", "running", "retrying", "succeeded", "failed", "skipped", "cancelled", "dead"];
const RUN_STATES = ["pending", "running", "completed", "failed", "cancelled"];
// The table shows at most this many rows; a filter narrows a large run.
const TABLE_ROWS = 500;

export async function render(main, runID) {
  document.title = "plait · run " + runID;
  const cfg = await config();
  const floor = await refreshMs();
  const page = new RunPage(main, runID, cfg, floor);
  await page.load();
  page.follow();
}

class RunPage {
  constructor(main, runID, cfg, floor) {
    this.main = main;
    this.id = runID;
    this.cfg = cfg;
    this.floor = floor;
    this.data = null;      // the last run answer
    this.tasks = new Map(); // name -> task, kept current by events
    this.filter = { status: "", name: "" };

    this.headEl = h("div");
    this.dagEl = h("div", { class: "dag-box", id: "dag" }, h("p", { class: "muted" }, "Drawing…"));
    this.waterfallEl = h("div");
    this.tableEl = h("div");
    replace(main, this.headEl,
      h("h2", null, "Graph"), legend(), this.dagEl,
      h("h2", null, "Timeline"), this.waterfallEl,
      h("h2", null, "Tasks"), this.tableFilter(), this.tableEl);

    // Rereads never run more often than the refresh floor, however many
    // events ask for them, nor take more than a tenth of the time on a
    // large run whose answer is slow to fetch and draw.
    this.took = { run: 0, svg: 0 };
    this.refreshSoon = throttle(() => this.refresh(), () => Math.max(this.floor, 10 * this.took.run));
    this.reloadSVGSoon = throttle(() => this.loadSVG(), () => Math.max(this.floor, 10 * this.took.svg));
  }

  async load() {
    await Promise.all([this.refresh(true), this.loadSVG()]);
  }

  // refresh reads the run again and redraws everything but the SVG, whose
  // classes it brings in line with the answer.
  async refresh(first) {
    const began = performance.now();
    // The events that come while the answer is on its way (see apply).
    const during = [];
    this.during = during;
    let d;
    try {
      d = await get("runs/" + encodeURIComponent(this.id));
    } catch (err) {
      if (first) throw err;
      notice(describe(err), "error");
      return;
    } finally {
      if (this.during === during) this.during = null;
    }
    notice("");
    this.data = d;
    this.tasks = new Map((d.tasks || []).map((t) => [t.name, t]));
    for (const ev of during) this.apply(ev, true);
    this.renderHead();
    this.renderTimeline();
    this.renderTable();
    for (const t of this.tasks.values()) this.paintTask(t.name, t.status, true);
    this.took.run = performance.now() - began;
  }

  async loadSVG() {
    const began = performance.now();
    try {
      const svgText = await text("runs/" + encodeURIComponent(this.id) + "/dag.svg");
      const svg = safeSVG(svgText);
      if (!svg) {
        replace(this.dagEl, inlineNotice("The graph could not be read.", "error"));
        return;
      }
      svg.addEventListener("click", (e) => {
        const g = e.target.closest && e.target.closest("g.task[data-task], g.group");
        if (!g) return;
        if (g.matches("g.task")) {
          location.href = taskHref(this.id, g.getAttribute("data-task"));
          return;
        }
        // A group lists its members in the table: its label starts with
        // their common name prefix ("shard-* ×500").
        const label = (g.querySelector("text") || {}).textContent || "";
        this.filterBy(label.includes("*") ? label.slice(0, label.indexOf("*")) : "");
      });
      replace(this.dagEl, svg);
      // States that events brought since the SVG was drawn.
      for (const t of this.tasks.values()) this.paintTask(t.name, t.status, true);
      this.took.svg = performance.now() - began;
    } catch (err) {
      if (err instanceof ApiError && err.code === "dag_too_large") {
        replace(this.dagEl, inlineNotice("This run is too large to draw: " + err.message + ". The timeline and the table below list its tasks."));
      } else if (err instanceof ApiError && err.unsupported) {
        replace(this.dagEl, inlineNotice("The graph needs the run's definition, which this store does not keep."));
      } else {
        replace(this.dagEl, inlineNotice("The graph could not be loaded: " + describe(err), "error"));
      }
    }
  }

  // follow keeps the page current: the event stream when the store keeps
  // events, else polling at the refresh floor. A finished run is not
  // followed (each stream holds a store read on the server); a replay from
  // this page follows it again.
  follow() {
    if (this.following) return;
    if (this.data && isTerminalRun(this.data.run.status)) {
      this.setLive("", "run ended");
      return;
    }
    this.following = true;
    if (!this.cfg.events || typeof EventSource === "undefined") {
      this.poll();
      return;
    }
    // From the cursor the run answer was read at, so the stream brings the
    // changes since, not the run's whole history; on a reconnect the
    // browser sends Last-Event-ID, which the server prefers.
    const after = this.data && this.data.eventCursor ? { after: this.data.eventCursor } : {};
    const es = new EventSource(url("runs/" + encodeURIComponent(this.id) + "/events", after));
    this.events = es;
    // failures counts the errors since the stream last opened.
    let failures = 0;
    es.onopen = () => { failures = 0; this.setLive("on", "live"); notice(""); };
    es.onerror = (e) => {
      // The server's own "error" event (the store failed mid-stream) comes
      // here too, with data: say it; the stream then ends and reconnects.
      if (e && typeof e.data === "string" && e.data) {
        let msg = e.data;
        try { const body = JSON.parse(e.data); msg = (body.error || body).message || msg; } catch (_) { /* text */ }
        notice("The live updates stopped: " + msg + ". Reconnecting…", "error");
      }
      // A stream the server refused (501 on a store without events, 404,
      // 403) is closed for good; a broken one reconnects by itself,
      // resending Last-Event-ID. One that keeps failing before it opens (a
      // proxy that does not pass streams) is given up for polling.
      failures++;
      if (es.readyState === EventSource.CLOSED || failures >= 3) {
        es.close();
        this.events = null;
        this.poll();
        this.refreshSoon();
      } else {
        this.setLive("", "reconnecting…");
      }
    };
    const onEvent = (e) => {
      let ev;
      try { ev = JSON.parse(e.data); } catch (_) { return; }
      this.apply(ev);
    };
    for (const st of TASK_STATES) es.addEventListener("task_" + st, onEvent);
    for (const st of RUN_STATES) es.addEventListener("run_" + st, onEvent);
    es.addEventListener("task_waiting", onEvent);
    es.addEventListener("task_progress", onEvent);
    es.addEventListener("fell_behind", () => { this.refreshSoon(); this.reloadSVGSoon(); });
    if (!this.unloadHooked) {
      this.unloadHooked = true;
      window.addEventListener("pagehide", () => this.unfollow("left"));
    }
  }

  // poll rereads the run at the refresh floor until it ends.
  poll() {
    this.setLive("poll", "polling every " + dur(this.floor));
    const tick = async () => {
      this.pollTimer = null;
      if (!this.following) return;
      if (!document.hidden) await this.refresh();
      if (this.data && isTerminalRun(this.data.run.status)) {
        this.unfollow("run ended");
        return;
      }
      this.pollTimer = setTimeout(tick, this.floor);
    };
    this.pollTimer = setTimeout(tick, this.floor);
  }

  // unfollow closes the stream or stops polling.
  unfollow(why) {
    this.following = false;
    if (this.events) { this.events.close(); this.events = null; }
    if (this.pollTimer) { clearTimeout(this.pollTimer); this.pollTimer = null; }
    this.setLive("", why);
  }

  setLive(cls, text) {
    const live = document.getElementById("live");
    live.hidden = false;
    live.className = "live " + cls;
    live.textContent = text;
  }

  // apply brings one event into the page at once (the task's class in the
  // SVG, its row), and asks for a throttled reread for the rest (attempts,
  // durations, the timeline).
  //
  // An event that comes while a reread is on its way may be newer than the
  // answer: it is kept and applied again on top of the answer (replaying,
  // quietly), so the page never steps back to an older state; the stream
  // brings anything newer after it.
  apply(ev, replaying) {
    // After a replay, an event of an earlier generation is history.
    const gen = this.data ? this.data.run.generation || 0 : 0;
    if (typeof ev.generation === "number" && ev.generation < gen) return;
    if (!replaying && this.during) this.during.push(ev);
    if (ev.task) {
      const t = this.tasks.get(ev.task);
      if (!t) {
        if (replaying) return;
        // A task the page does not know yet: reread the run and redraw.
        this.refreshSoon();
        this.reloadSVGSoon();
        return;
      }
      if (ev.type === "task_progress") {
        if (ev.progress) t.progress = ev.progress;
      } else if (ev.type === "task_waiting") {
        t.waitingFor = ev.waitingFor || "";
      } else if (ev.taskStatus) {
        t.status = ev.taskStatus;
        if (ev.attempt) t.attempt = ev.attempt;
        if (ev.error) t.error = ev.error;
        if (ev.taskStatus !== "ready") t.waitingFor = "";
        this.paintTask(t.name, t.status, false);
        // A box's second line (attempts, duration) is the server's: redraw
        // when a task ends, throttled like any reload.
        if (!replaying && isTerminalTask(t.status)) this.reloadSVGSoon();
      }
      this.updateRow(t);
    } else if (ev.runStatus && this.data) {
      this.data.run.status = ev.runStatus;
      this.renderHead();
      if (replaying) return;
      // The run's end is its last event: reread it once more and let go.
      if (isTerminalRun(ev.runStatus)) {
        this.unfollow("run ended");
        this.refresh();
        this.loadSVG();
        return;
      }
    }
    if (!replaying) this.refreshSoon();
  }

  // paintTask sets the state class of a task's box. A task drawn inside a
  // collapsed group has no box of its own: the group's colour and counts
  // come from the server, so the SVG is reloaded (throttled).
  paintTask(name, status, quiet) {
    const svg = this.dagEl.querySelector("svg.dag");
    if (!svg) return;
    const g = svg.querySelector('g.task[data-task="' + CSS.escape(name) + '"]');
    if (!g) {
      if (!quiet) this.reloadSVGSoon();
      return;
    }
    const want = "state-" + cls(status);
    if (g.classList.contains(want)) return;
    for (const c of Array.from(g.classList)) if (c.startsWith("state-")) g.classList.remove(c);
    g.classList.add(want);
  }

  renderHead() {
    const r = this.data.run;
    const actions = h("span", { class: "actions" });
    const a = this.cfg.actions || {};
    if (!this.cfg.readOnly && a.cancel && !isTerminalRun(r.status)) {
      actions.append(h("button", { class: "danger", onclick: () => this.act("cancel", "Cancel run " + r.id + "?") }, "Cancel run"));
    }
    const replayable = (this.data.tasks || []).some((t) => ["failed", "dead", "cancelled", "skipped"].includes(t.status));
    if (!this.cfg.readOnly && a.replay && isTerminalRun(r.status) && replayable) {
      actions.append(h("button", { onclick: () => this.act("replay", "Replay the failed, dead, cancelled and skipped tasks of run " + r.id + "?", { generation: r.generation || 0 }) }, "Replay"));
    }
    const facts = [
      ["Workflow", r.workflow], ["Tasks", tasksSummary(r)],
      ["Tenant", r.tenant], ["Service", r.service], ["Key", r.key], ["Strategy", r.strategy],
      ["Generation", r.generation ? String(r.generation) : ""],
      ["Created", time(r.createdAt)], ["Started", time(r.startedAt)], ["Ended", time(r.endedAt)],
      ["Duration", parseTime(r.endedAt) ? dur(r.durationMs || 0) : (parseTime(r.startedAt) ? dur(Date.now() - parseTime(r.startedAt)) + " so far" : "")],
    ];
    for (const [k, v] of Object.entries(r.metadata || {})) facts.push([k, v]);
    const notices = (this.data.notices || []).map((n) => inlineNotice(n.message));
    if ((this.data.payloadsDropped || []).length) {
      notices.push(inlineNotice("The store dropped the payloads of: " + this.data.payloadsDropped.join(", ")));
    }
    replace(this.headEl,
      h("div", { class: "crumbs small" }, h("a", { href: "runs" }, "← Runs")),
      h("div", { class: "run-head" }, h("h1", null, "Run ", h("span", { class: "mono" }, r.id)), h("span", { id: "run-status" }, badge(r.status)), actions),
      factList(facts),
      notices);
  }

  async act(action, question, body) {
    if (!window.confirm(question)) return;
    try {
      await post("runs/" + encodeURIComponent(this.id) + "/" + action, body);
      await this.refresh();
      await this.loadSVG();
      this.follow();
      notice(action === "cancel" ? "Run cancelled." : "Run replayed.");
    } catch (err) {
      notice(describe(err), "error");
    }
  }

  renderTimeline() {
    replace(this.waterfallEl, waterfall(this.data.run, Array.from(this.tasks.values()), this.id));
  }

  tableFilter() {
    const sel = h("select", { "aria-label": "status", onchange: (e) => { this.filter.status = e.target.value; this.renderTable(); } },
      h("option", { value: "" }, "every status"), TASK_STATES.map((s) => h("option", { value: s }, s)));
    this.nameInput = h("input", { type: "search", placeholder: "task name", "aria-label": "task name",
      oninput: (e) => { this.filter.name = e.target.value.trim().toLowerCase(); this.renderTable(); } });
    return h("div", { class: "pager", id: "task-filter" }, sel, this.nameInput);
  }

  // filterBy shows the tasks whose name contains text, and scrolls to them.
  filterBy(text) {
    this.nameInput.value = text;
    this.filter.name = text.trim().toLowerCase();
    this.renderTable();
    document.getElementById("task-filter").scrollIntoView({ behavior: "smooth", block: "start" });
  }

  renderTable() {
    this.rows = new Map();
    const all = Array.from(this.tasks.values());
    const shown = all.filter((t) => (!this.filter.status || t.status === this.filter.status) &&
      (!this.filter.name || t.name.toLowerCase().includes(this.filter.name)));
    const rows = shown.slice(0, TABLE_ROWS).map((t) => {
      const row = h("tr", { "data-task": t.name });
      this.rows.set(t.name, row);
      fillRow(row, t, this.id);
      return row;
    });
    replace(this.tableEl,
      h("table", { class: "tasks" },
        h("thead", null, h("tr", null, h("th", null, "Task"), h("th", null, "Status"), h("th", { class: "num" }, "Attempt"),
          h("th", { class: "num" }, "Duration"), h("th", null, "Progress"), h("th", null, "Depends on"), h("th", null, "Queue"), h("th", null, "Error or waiting for"))),
        h("tbody", null, rows)),
      shown.length > TABLE_ROWS ? h("p", { class: "muted" }, "Showing " + num(TABLE_ROWS) + " of " + num(shown.length) + " tasks: filter to see the others.") : null);
  }

  updateRow(t) {
    const row = this.rows && this.rows.get(t.name);
    if (row) fillRow(row, t, this.id);
  }
}

// legend names the state colours and draws the three kinds of edge with
// the graph's own classes.
function legend() {
  const edge = (cond, text) => h("span", { class: "legend-edge small muted" },
    svgEl("svg", { class: "dag", width: 26, height: 8, "aria-hidden": "true" }, svgEl("path", { class: "edge cond-" + cond, d: "M1 4 H25" })), text);
  return h("div", { class: "legend" }, TASK_STATES.map((st) => badge(st)),
    edge("success", "after success"), edge("completion", "after completion"), edge("failure", "after failure"));
}

function isTerminalRun(st) { return st === "completed" || st === "failed" || st === "cancelled"; }
