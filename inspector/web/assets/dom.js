// DOM helpers. Every text the pages insert goes through textContent or
// setAttribute, never through HTML parsing, so names, errors, logs and
// payloads cannot inject markup.

// h builds an element: h("a", {href: "x", class: "y"}, "text", child...).
// Attributes whose value is null, undefined or false are left out; children
// that are strings or numbers become text nodes; null children are skipped.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

// s builds an SVG element, like h.
export function s(tag, attrs, ...children) {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

function setAttrs(el, attrs) {
  if (!attrs) return;
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") {
      el.addEventListener(k.slice(2), v);
    } else {
      el.setAttribute(k, v === true ? "" : String(v));
    }
  }
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// replace puts children in place of el's content.
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
}

// enc encodes one path segment of a relative URL.
export const enc = encodeURIComponent;

// runHref and taskHref are relative to the page's <base>, the mount point.
export const runHref = (id) => "runs/" + enc(id);
export const taskHref = (id, task) => "runs/" + enc(id) + "/tasks/" + enc(task);

// badge shows a run or task status in its state colour.
export function badge(status) {
  return h("span", { class: "badge state-" + cls(status) }, status || "unknown");
}

// cls keeps a status usable as a class name.
export function cls(status) {
  return String(status || "unknown").replace(/[^a-z_-]/gi, "");
}

// Times and durations. Times arrive as RFC 3339 strings; the zero time
// (year 1) and empty strings mean "not yet".
export function time(v) {
  const t = parseTime(v);
  return t === null ? "" : new Date(t).toLocaleString();
}

export function parseTime(v) {
  if (!v) return null;
  const t = Date.parse(v);
  if (Number.isNaN(t) || t <= 0) return null;
  return t;
}

export function ago(v) {
  const t = parseTime(v);
  if (t === null) return "";
  return dur(Date.now() - t) + " ago";
}

// dur formats milliseconds.
export function dur(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return "";
  if (ms < 0) ms = 0;
  if (ms < 1000) return Math.round(ms) + " ms";
  const sec = ms / 1000;
  if (sec < 60) return sec.toFixed(sec < 10 ? 2 : 1) + " s";
  const m = Math.floor(sec / 60), rs = Math.round(sec % 60);
  if (m < 60) return m + "m " + rs + "s";
  const hr = Math.floor(m / 60);
  if (hr < 48) return hr + "h " + (m % 60) + "m";
  return Math.floor(hr / 24) + "d " + (hr % 24) + "h";
}

export function num(n) {
  return n === null || n === undefined ? "" : Number(n).toLocaleString();
}

// notice shows a page-wide message (kind "error" or a plain notice), or
// hides it when text is empty.
export function notice(text, kind) {
  const el = document.getElementById("notice");
  if (!el) return;
  el.className = "notice" + (kind === "error" ? " error" : "");
  el.textContent = text || "";
  el.hidden = !text;
}

// inlineNotice is a message inside a page section.
export function inlineNotice(text, kind) {
  return h("div", { class: "inline-notice" + (kind === "error" ? " error" : "") }, text);
}

// throttle calls fn at most once per wait() milliseconds: a call in between
// is folded into one trailing call.
export function throttle(fn, wait) {
  let last = 0, timer = null;
  return function throttled() {
    const gap = wait() - (Date.now() - last);
    if (gap <= 0 && timer === null) {
      last = Date.now();
      fn();
    } else if (timer === null) {
      timer = setTimeout(() => { timer = null; last = Date.now(); fn(); }, Math.max(gap, 0));
    }
  };
}

// facts is a list of label and value pairs, laid out in a row that wraps;
// pairs whose value is empty are left out. A third element gives the
// value's attributes.
export function facts(pairs) {
  return h("dl", { class: "facts" }, pairs.filter((p) => p && p[1] !== "" && p[1] !== null && p[1] !== undefined)
    .map(([k, v, attrs]) => h("div", null, h("dt", null, k), h("dd", attrs || null, v))));
}
