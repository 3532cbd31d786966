// The JSON API client: every URL is relative to the page's <base>, the mount
// point, so the view works under any prefix.

// ApiError is an error answer: status is the HTTP status, code the API's
// error code ("not_found", "unsupported"...).
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message || code || "HTTP " + status);
    this.status = status;
    this.code = code || "http_" + status;
  }
  get unsupported() { return this.status === 501 || this.code === "unsupported"; }
}

// url builds "api/v1/<path>?<params>"; params values that are arrays are
// repeated, empty ones left out.
export function url(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (Array.isArray(v)) v.forEach((x) => x !== "" && q.append(k, x));
    else if (v !== undefined && v !== null && v !== "") q.set(k, v);
  }
  const qs = q.toString();
  return "api/v1/" + path + (qs ? "?" + qs : "");
}

async function decode(resp) {
  if (resp.ok) return resp;
  let code = "", message = "";
  try {
    const body = await resp.json();
    if (body && body.error) ({ code, message } = body.error);
  } catch (_) {
    message = resp.statusText;
  }
  throw new ApiError(resp.status, code, message);
}

// get answers the decoded JSON of a GET.
export async function get(path, params) {
  const resp = await fetch(url(path, params), { headers: { Accept: "application/json" }, credentials: "same-origin" });
  return (await decode(resp)).json();
}

// text answers the body of a GET as text (the DAG's SVG).
export async function text(path) {
  const resp = await fetch(url(path), { credentials: "same-origin" });
  return (await decode(resp)).text();
}

// post sends a mutating request; body is JSON or nothing.
export async function post(path, body) {
  const init = { method: "POST", credentials: "same-origin", headers: { Accept: "application/json" } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  return (await decode(await fetch(url(path), init))).json();
}

let configPromise = null;

// config is the handler's configuration, read once per page.
export function config() {
  if (!configPromise) {
    configPromise = get("config").catch(() => ({ version: 1, readOnly: true, minRefreshMs: 2000, actions: {}, events: false }));
  }
  return configPromise;
}

// refreshMs is the polling floor: never poll faster than the handler says.
export async function refreshMs() {
  const c = await config();
  return Math.max(Number(c.minRefreshMs) || 2000, 500);
}

// describe makes an error readable in a notice.
export function describe(err) {
  if (err instanceof ApiError) {
    if (err.unsupported) return "Not available on this store: " + err.message;
    if (err.code === "forbidden") return "Not allowed: " + err.message;
    if (err.code === "not_found") return "Not found: " + err.message;
    return err.message + " (" + err.code + ")";
  }
  return "Could not reach the server: " + (err && err.message ? err.message : String(err));
}
