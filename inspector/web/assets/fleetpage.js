// What the fleet's pages (dead letters, queues, nodes, schedules) share:
// how a failed read shows, and how a page rereads itself.
import { replace, notice, inlineNotice } from "./dom.js";
import { describe } from "./api.js";

// showFailure shows a store without the capability as a notice in body,
// where the page's content would be, and any other failure in the page's
// error notice, leaving the last good content in place.
export function showFailure(body, err) {
  if (err.unsupported) replace(body, inlineNotice(describe(err)));
  else notice(describe(err), "error");
}

// rereadWhileIdle calls load every `every` ms while the tab is visible and
// nothing matching busy (an open dialog, by default) is on the page, so a
// reread never replaces what a person is reading or answering.
export function rereadWhileIdle(load, every, busy = "dialog[open]") {
  setInterval(() => { if (!document.hidden && !document.querySelector(busy)) load(); }, every);
}
