// The run page's task controls: run a waiting task now, skip one that has
// not started its attempt, cancel one not finished (a running attempt
// loses its lease). Each opens the action dialog; offered only where the
// handler lets this user act, and only in the states the action applies to.
import { h, replace } from "./dom.js";
import { button, can } from "./actions.js";

// APPLIES are the task states each control is offered in (the store has
// the last word: a pending task still waiting for its parents cannot run
// now, and the dialog's count says so).
const APPLIES = {
  "task.run_now": ["pending", "retrying"],
  "task.skip": ["pending", "ready", "retrying"],
  "task.cancel": ["pending", "ready", "running", "retrying"],
};

// offered reports whether the page shows a controls column at all.
export function offered(cfg) {
  return Object.keys(APPLIES).some((a) => can(cfg, a));
}

// fillControls writes a task's controls into its cell; done is called
// after an action.
export function fillControls(cell, cfg, runID, t, done) {
  const ref = { refs: [{ runId: runID, task: t.name }] };
  replace(cell, Object.keys(APPLIES).filter((a) => APPLIES[a].includes(t.status))
    .map((a) => button(cfg, a, { what: "task " + t.name, target: ref, done, title: title(a) })));
}

function title(a) {
  return {
    "task.run_now": "Start it now instead of after its delay, run-at time or retry backoff",
    "task.skip": "Skip it: its children go on as after any skipped parent",
    "task.cancel": "Cancel it, running or not: its children go on as after any cancelled parent",
  }[a];
}

// controlsCell answers a new cell of a task's controls.
export function controlsCell(cfg, runID, t, done) {
  const cell = h("td", { class: "nowrap task-controls" });
  fillControls(cell, cfg, runID, t, done);
  return cell;
}
