// The run page's task controls: run a waiting task now, skip one that has
// not started its attempt, cancel one not finished (a running attempt
// loses its lease). Each opens the action dialog; offered only where the
// handler lets this user act, and only in the states the action applies to.
import { h, replace } from "./dom.js";
import { button, can } from "./actions.js";
import { isTerminalTask } from "./tasks.js";

// APPLIES are the task states each control is offered in; run now is
// offered for a pending task only once its parents are done (it then waits
// for its run-at time: one still waiting for its parents cannot run now).
const APPLIES = {
  "task.run_now": ["pending", "retrying"],
  "task.skip": ["pending", "ready", "retrying"],
  "task.cancel": ["pending", "ready", "running", "retrying"],
};

// offered reports whether the page shows a controls column at all.
export function offered(cfg) {
  return Object.keys(APPLIES).some((a) => can(cfg, a));
}

// fillControls writes a task's controls into its cell; tasks are the
// run's by name (for the parents' states); done is called after an action.
export function fillControls(cell, cfg, runID, t, tasks, done) {
  const ref = { refs: [{ runId: runID, task: t.name }] };
  const parentsDone = (t.deps || []).every((d) => { const p = tasks.get(d.task); return !p || isTerminalTask(p.status); });
  replace(cell, Object.keys(APPLIES).filter((a) => APPLIES[a].includes(t.status))
    .filter((a) => a !== "task.run_now" || t.status !== "pending" || parentsDone)
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
export function controlsCell(cfg, runID, t, tasks, done) {
  const cell = h("td", { class: "nowrap task-controls" });
  fillControls(cell, cfg, runID, t, tasks, done);
  return cell;
}
