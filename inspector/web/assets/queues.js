// The queues page: each queue's depth per priority and per state, the
// limit in force, the nodes serving it, a warning for a queue no live node
// serves, and its pause and resume.
import { h, replace, inlineNotice, badge, num, dur } from "./dom.js";
import { get, config, refreshMs } from "./api.js";
import { showFailure, rereadWhileIdle } from "./fleetpage.js";
import { clearError, button } from "./actions.js";

export async function render(main) {
  document.title = "plait · queues";
  const cfg = await config();
  const head = h("span", { class: "muted", id: "queue-count" });
  const body = h("div", null, h("p", { class: "muted" }, "Loading…"));
  replace(main, h("div", { class: "run-head" }, h("h1", null, "Queues"), head), body);

  const load = async () => {
    try {
      const q = await get("queues");
      clearError();
      const items = q.items || [];
      head.textContent = num(items.length) + " queue" + (items.length === 1 ? "" : "s") + (q.nextCursor ? " (the first page)" : "");
      replace(body, ...view(cfg, q, load));
    } catch (err) {
      showFailure(body, err);
    }
  };
  await load();
  const every = await refreshMs();
  rereadWhileIdle(load, every);
}

function view(cfg, q, reload) {
  const items = q.items || [];
  const out = (q.warnings || []).map((w) => inlineNotice(w, "error"));
  if (!items.length) return out.concat(h("p", { class: "muted" }, "No queue has tasks yet."));
  out.push(h("table", { class: "queues" },
    h("thead", null, h("tr", null, h("th", null, "Queue"), h("th", null, "State"),
      ["Urgent", "High", "Normal", "Low"].map((p) => h("th", { class: "num", title: "ready tasks of priority " + p.toLowerCase() }, p)),
      h("th", { class: "num" }, "Ready"), h("th", { class: "num" }, "Delayed"), h("th", { class: "num" }, "Running"),
      h("th", { class: "num", title: "held back by a concurrency or rate limit" }, "Limited"), h("th", { class: "num", title: "set aside: no node with the capabilities they require" }, "Set aside"),
      h("th", { class: "num", title: "the most running at once" }, "Limit"), h("th", null, "Oldest ready"), h("th", null, "Nodes serving"), h("th", null, ""))),
    h("tbody", null, items.map((it) => h("tr", { "data-queue": it.name, class: it.unserved ? "warn-row" : null },
      h("td", null, h("span", { class: "mono" }, it.name),
        it.queue && it.queue !== it.name ? h("div", { class: "small muted" }, "claims from " + it.queue) : null,
        (it.requires || []).length ? h("div", { class: "small muted" }, "requires " + it.requires.join(", ")) : null),
      h("td", null, it.paused ? badge("paused") : badge("active")),
      [it.urgent, it.high, it.normal, it.low].map((n) => h("td", { class: "num" + (n ? "" : " muted") }, num(n || 0))),
      h("td", { class: "num ready" }, num(it.ready)), h("td", { class: "num" }, num(it.delayed)), h("td", { class: "num running" }, num(it.running)),
      h("td", { class: "num" }, num(it.limited)), h("td", { class: "num" }, num(it.setAside)),
      h("td", { class: "num" }, it.limit ? num(it.limit) : h("span", { class: "muted" }, "none")),
      h("td", { class: "nowrap" }, it.oldestReadyAgeMs ? dur(it.oldestReadyAgeMs) : ""),
      h("td", { class: "small" }, (it.nodes || []).length ? it.nodes.map((n, i) => [i ? ", " : "", h("a", { href: "nodes", class: "mono" }, n)]) : h("span", { class: it.unserved ? "err" : "muted" }, it.unserved ? "none live" : "none")),
      h("td", { class: "nowrap" }, it.paused
        ? button(cfg, "queue.resume", { what: "queue " + (it.queue || it.name), target: { ids: [it.queue || it.name] }, done: reload })
        : button(cfg, "queue.pause", { what: "queue " + (it.queue || it.name), note: "Its ready tasks wait until it is resumed; running ones finish.", target: { ids: [it.queue || it.name] }, done: reload })))))));
  if (q.runningCapped) out.push(h("p", { class: "muted small" }, "Running counts are capped: the store counts at most so many per queue."));
  return out;
}
