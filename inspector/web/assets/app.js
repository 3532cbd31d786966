// The pages' entry point: it finds which page the location names, relative
// to the mount point the <base> element points at, and renders it.
import { h, replace, notice } from "./dom.js";
import { describe } from "./api.js";

// route splits the location into the segments after the mount point,
// decoded: [] for the overview, ["runs"], ["runs", id], ["runs", id,
// "tasks", task].
function route() {
  const root = new URL(document.baseURI).pathname;
  let rest = location.pathname.startsWith(root) ? location.pathname.slice(root.length) : "";
  rest = rest.replace(/\/+$/, "");
  return rest === "" ? [] : rest.split("/").map((seg) => {
    try { return decodeURIComponent(seg); } catch (_) { return seg; }
  });
}

// PAGES are the one-segment pages of the fleet and their modules.
const PAGES = { "dead-letters": "deadletters.js", queues: "queues.js", nodes: "nodes.js", schedules: "schedules.js", events: "events.js" };

function markNav(name) {
  for (const a of document.querySelectorAll("header.top nav a")) {
    a.classList.toggle("current", a.dataset.nav === name);
  }
}

async function main() {
  const main = document.getElementById("main");
  const parts = route();
  try {
    if (parts.length === 0) {
      markNav("overview");
      await (await import("./overview.js")).render(main);
    } else if (parts[0] === "runs" && parts.length === 1) {
      markNav("runs");
      await (await import("./runs.js")).render(main);
    } else if (parts[0] === "runs" && parts.length === 2) {
      markNav("runs");
      await (await import("./run.js")).render(main, parts[1]);
    } else if (parts[0] === "runs" && parts.length === 4 && parts[2] === "tasks") {
      markNav("runs");
      await (await import("./task.js")).render(main, parts[1], parts[3]);
    } else if (parts.length === 1 && PAGES[parts[0]]) {
      markNav(parts[0]);
      await (await import("./" + PAGES[parts[0]])).render(main);
    } else {
      replace(main, h("h1", null, "Not found"), h("p", null, h("a", { href: "./" }, "Back to the overview")));
    }
  } catch (err) {
    notice(describe(err), "error");
    replace(main, h("p", { class: "muted" }, "This page could not be shown."));
  }
}

main();
