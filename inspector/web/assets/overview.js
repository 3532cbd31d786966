// The overview: throughput and failures per minute, queue depth and the
// oldest ready age, live nodes, dead-letter growth and store health.
import { h, s, replace, notice, inlineNotice, dur, num, time, ago } from "./dom.js";
import { get, describe, refreshMs } from "./api.js";

export async function render(main) {
  const params = new URLSearchParams(location.search);
  const hours = Math.min(Math.max(parseInt(params.get("hours") || "3", 10) || 3, 1), 24);
  document.title = "plait · overview";
  const body = h("div");
  const hoursSel = h("select", { "aria-label": "hours shown", onchange: (e) => {
    const q = new URLSearchParams(location.search);
    q.set("hours", e.target.value);
    location.search = q.toString();
  } }, [1, 3, 6, 12, 24].map((n) => h("option", { value: n, selected: n === hours }, "last " + n + " h")));
  replace(main, h("div", { class: "run-head" }, h("h1", null, "Overview"), h("span", { class: "actions" }, hoursSel)), body);

  const load = async () => {
    try {
      const o = await get("overview", { hours });
      notice("");
      replace(body, ...view(o));
    } catch (err) {
      notice(describe(err), "error");
    }
  };
  await load();
  // The overview refreshes itself, never faster than the handler's floor
  // and at most every ten seconds.
  const every = Math.max(await refreshMs(), 10000);
  setInterval(() => { if (!document.hidden) load(); }, every);
}

function view(o) {
  const out = [];
  for (const n of o.notices || []) {
    const text = n.section === "series" && n.code === "unsupported"
      ? "The charts of throughput and failures need the store's stats (WithStats of memstore or redisstore): " + n.message
      : (n.section ? n.section + ": " : "") + n.message;
    out.push(inlineNotice(text, n.code === "unsupported" ? "" : "error"));
  }

  const q = o.queues || {};
  const nodes = o.nodes || {};
  const dl = o.deadLetters || {};
  const series = o.series || null;
  // The cards sum the last hour; the charts show the whole window.
  const lastHour = (series || []).slice(-60);
  let ok = 0, failed = 0, runsOk = 0, runsFailed = 0;
  for (const p of lastHour) {
    ok += p.tasksSucceeded || 0; failed += p.tasksFailed || 0;
    runsOk += p.runsCompleted || 0; runsFailed += p.runsFailed || 0;
  }
  const rate = ok + failed > 0 ? (100 * failed / (ok + failed)) : 0;
  out.push(h("div", { class: "cards" },
    card("Tasks, last hour", series ? num(ok + failed) : "–", series ? (ok + failed) > 0 ? ((ok + failed) / 60).toFixed(1) + " a minute" : "none finished" : "stats are off"),
    card("Task failure rate", series ? rate.toFixed(1) + " %" : "–", series ? num(failed) + " failed, last hour" : ""),
    card("Runs, last hour", series ? num(runsOk + runsFailed) : "–", series ? num(runsFailed) + " failed" : ""),
    card("Ready tasks", q.ready === undefined ? "–" : num(q.ready) + (q.truncated ? "+" : ""), num(q.running) + " running"),
    card("Oldest ready", q.oldestReadyAgeMs ? dur(q.oldestReadyAgeMs) : "–", "waiting for a worker"),
    card("Live nodes", nodes.live === undefined ? "–" : num(nodes.live), ""),
    card("Dead letters", dl.total === undefined ? "–" : (dl.truncated ? "at least " : "") + num(dl.total), dl.lastHour !== undefined ? "+" + num(dl.lastHour) + " in the last hour" : ""),
  ));

  const warnings = (o.health && o.health.warnings) || [];
  if (warnings.length) {
    out.push(h("h2", null, "Store health"), h("ul", { class: "warn-list" }, warnings.map((w) => h("li", null, w))));
  }

  if (series) {
    out.push(h("div", { class: "grid2" },
      h("div", null, h("h2", null, "Tasks finished per minute"),
        chart(series, "tasksSucceeded", "tasksFailed", "succeeded", "failed")),
      h("div", null, h("h2", null, "Runs ended per minute"),
        chart(series, "runsCompleted", "runsFailed", "completed", "failed"))));
  }

  out.push(h("h2", null, h("a", { href: "queues" }, "Queues")));
  const qi = q.items || [];
  out.push(qi.length === 0 ? h("p", { class: "muted" }, "No queue has work.") : h("table", null,
    h("thead", null, h("tr", null, h("th", null, "Queue"), h("th", null, "Requires"), h("th", { class: "num" }, "Ready"),
      h("th", { class: "num" }, "Delayed"), h("th", { class: "num" }, "Running"), h("th", { class: "num" }, "Set aside"),
      h("th", { class: "num" }, "Limited"), h("th", null, "Oldest ready"), h("th", null, ""))),
    h("tbody", null, qi.map((x) => h("tr", null,
      h("td", null, x.queue || x.name), h("td", null, (x.requires || []).join(", ")),
      h("td", { class: "num" }, num(x.ready)), h("td", { class: "num" }, num(x.delayed)),
      h("td", { class: "num" }, num(x.running)), h("td", { class: "num" }, num(x.setAside)),
      h("td", { class: "num" }, num(x.limited)), h("td", null, x.oldestReadyAgeMs ? dur(x.oldestReadyAgeMs) : ""),
      h("td", null, x.paused ? h("span", { class: "badge state-retrying" }, "paused") : null,
        x.unserved ? h("span", { class: "badge state-failed", title: "no live node serves this queue" }, "not served") : null))))));

  out.push(h("h2", null, h("a", { href: "nodes" }, "Nodes")));
  const ni = nodes.items || [];
  out.push(ni.length === 0 ? h("p", { class: "muted" }, "No live node.") : h("table", null,
    h("thead", null, h("tr", null, h("th", null, "Node"), h("th", null, "Host"), h("th", { class: "num" }, "Load"),
      h("th", null, "Started"), h("th", null, "Heartbeat"), h("th", null, ""))),
    h("tbody", null, ni.map((n) => h("tr", null,
      h("td", null, h("span", { class: "mono" }, n.name || n.id)), h("td", null, n.host || ""),
      h("td", { class: "num" }, num(n.load) + " / " + num(n.capacity)),
      h("td", null, time(n.startedAt)), h("td", null, ago(n.heartbeatAt)),
      h("td", null, n.draining ? h("span", { class: "badge state-retrying" }, "draining") : ""))))));

  out.push(h("h2", null, h("a", { href: "dead-letters" }, "Dead letters by error")));
  const groups = dl.groups || [];
  out.push(groups.length === 0 ? h("p", { class: "muted" }, "No dead letter.") : h("table", null,
    h("thead", null, h("tr", null, h("th", null, "Error"), h("th", { class: "num" }, "Letters"), h("th", null, "Oldest"), h("th", null, "Newest"))),
    h("tbody", null, groups.map((g) => h("tr", null,
      h("td", { class: "err mono" }, g.key), h("td", { class: "num" }, num(g.count)),
      h("td", null, ago(g.oldest)), h("td", null, ago(g.newest)))))));
  return out;
}

function card(label, value, sub) {
  return h("div", { class: "card" }, h("div", { class: "label" }, label), h("div", { class: "value" }, value), sub ? h("div", { class: "sub" }, sub) : null);
}

// chart draws one stacked bar per minute: good at the bottom, bad on top.
function chart(series, goodKey, badKey, goodName, badName) {
  const W = 600, H = 120, top = 4, bottom = 1;
  const n = Math.max(series.length, 1);
  const max = Math.max(1, ...series.map((p) => (p[goodKey] || 0) + (p[badKey] || 0)));
  const bw = W / n;
  const y = (v) => (H - bottom) - (v / max) * (H - bottom - top);
  const bars = [];
  series.forEach((p, i) => {
    const g = p[goodKey] || 0, b = p[badKey] || 0;
    const x = i * bw + bw * 0.1, w = Math.max(bw * 0.8, 0.5);
    const label = time(p.at) + ": " + g + " " + goodName + ", " + b + " " + badName;
    if (g) bars.push(s("rect", { class: "bar-ok", x, y: y(g), width: w, height: (H - bottom) - y(g) }, s("title", null, label)));
    if (b) bars.push(s("rect", { class: "bar-fail", x, y: y(g + b), width: w, height: y(g) - y(g + b) }, s("title", null, label)));
  });
  const first = series.length ? new Date(series[0].at) : null;
  const last = series.length ? new Date(series[series.length - 1].at) : null;
  const hm = (d) => d ? d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) : "";
  // The bars stretch with the box; the labels are HTML so they do not.
  return h("div", { class: "chart" },
    h("div", { class: "chart-head small muted" }, h("span", null, "max " + max + " a minute"),
      h("span", null, h("span", { class: "key-ok" }, "\u25A0"), " " + goodName + " ", h("span", { class: "key-fail" }, "\u25A0"), " " + badName)),
    s("svg", { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: "none", role: "img", "aria-label": goodName + " and " + badName + " per minute" },
      s("line", { class: "axis", x1: 0, x2: W, y1: H - bottom, y2: H - bottom }),
      bars),
    h("div", { class: "chart-foot small muted" }, h("span", null, hm(first)), h("span", null, hm(last))));
}
