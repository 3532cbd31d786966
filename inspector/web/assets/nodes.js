// The nodes page: each live node's capabilities, queues and handlers, its
// load, the age of its heartbeat, the tasks it holds, its drain, and a
// warning for a queue (with the capabilities it requires) no live node
// serves.
import { h, replace, inlineNotice, badge, taskHref, num, dur, time, ago } from "./dom.js";
import { get, config, refreshMs } from "./api.js";
import { showFailure, rereadWhileIdle } from "./fleetpage.js";
import { clearError, button } from "./actions.js";

// HELD_SHOWN is how many held tasks a node's row lists.
const HELD_SHOWN = 8;

export async function render(main) {
  document.title = "plait · nodes";
  const cfg = await config();
  const head = h("span", { class: "muted", id: "node-count" });
  const body = h("div", null, h("p", { class: "muted" }, "Loading…"));
  replace(main, h("div", { class: "run-head" }, h("h1", null, "Nodes"), head), body);

  const load = async () => {
    try {
      const n = await get("nodes");
      clearError();
      head.textContent = num(n.live) + " live node" + (n.live === 1 ? "" : "s");
      replace(body, ...view(cfg, n, load));
    } catch (err) {
      showFailure(body, err);
    }
  };
  await load();
  const every = await refreshMs();
  rereadWhileIdle(load, every);
}

function view(cfg, n, reload) {
  const out = (n.warnings || []).map((w) => inlineNotice(w, "error"));
  const items = n.items || [];
  if (!items.length) return out.concat(h("p", { class: "muted" }, "No live node: nothing claims tasks now."));
  out.push(h("table", { class: "nodes" },
    h("thead", null, h("tr", null, h("th", null, "Node"), h("th", null, "State"), h("th", { class: "num" }, "Load"),
      h("th", null, "Heartbeat"), h("th", null, "Capabilities"), h("th", null, "Queues"), h("th", { class: "num" }, "Done"),
      h("th", null, "Holds"), h("th", null, ""))),
    h("tbody", null, items.map((it) => h("tr", { "data-node": it.id },
      h("td", null, h("div", null, it.name || it.id), h("div", { class: "small muted mono" }, it.id),
        h("div", { class: "small muted" }, [it.host, it.pid ? "pid " + it.pid : "", it.version].filter(Boolean).join(" · ")),
        h("div", { class: "small muted", title: time(it.startedAt) }, "up " + dur(Date.now() - Date.parse(it.startedAt)))),
      h("td", null, it.draining ? badge("draining") : it.drainRequested ? badge("drain asked") : badge("live")),
      h("td", { class: "num nowrap" }, loadMeter(it.load, it.capacity)),
      h("td", { class: "nowrap" + (it.heartbeatAgeMs > 30000 ? " err" : ""), title: time(it.heartbeatAt) + (it.expiresAt ? "; gone if silent past " + time(it.expiresAt) : "") },
        dur(it.heartbeatAgeMs) + " ago"),
      h("td", { class: "small" }, list(it.capabilities, "none")),
      h("td", { class: "small" }, list(it.queues, "every queue"), (it.handlers || []).length ? h("div", { class: "muted" }, "handlers: " + it.handlers.join(", ")) : null),
      h("td", { class: "num small nowrap" }, num(it.completed) + " ok", it.failed ? h("div", { class: "err" }, num(it.failed) + " failed") : null),
      h("td", { class: "small" }, held(it.held || [])),
      h("td", { class: "nowrap" }, it.draining || it.drainRequested ? null : button(cfg, "node.drain", {
        what: "node " + (it.name || it.id), note: "It stops claiming, finishes the tasks it holds, then stops.", target: { ids: [it.id] }, done: reload,
      })))))));
  return out;
}

function list(xs, none) {
  return (xs || []).length ? xs.join(", ") : h("span", { class: "muted" }, none);
}

function loadMeter(load, capacity) {
  const frac = capacity ? Math.min(load / capacity, 1) : 0;
  const bar = h("span");
  bar.style.width = (frac * 100).toFixed(1) + "%";
  return h("span", { class: "progress", title: num(load) + " of " + num(capacity) + " slots busy" },
    h("span", { class: "meter" }, bar), h("span", { class: "small" }, num(load) + " / " + num(capacity)));
}

function held(tasks) {
  if (!tasks.length) return h("span", { class: "muted" }, "nothing");
  return [tasks.slice(0, HELD_SHOWN).map((t) => h("div", { class: "nowrap" },
    h("a", { href: taskHref(t.runId, t.task) }, t.task), h("span", { class: "muted" }, " #" + t.attempt + (t.startedAt ? ", " + ago(t.startedAt) : "")))),
  tasks.length > HELD_SHOWN ? h("div", { class: "muted" }, "and " + num(tasks.length - HELD_SHOWN) + " more") : null];
}
