// The run's DAG as the server draws it, made safe to inline.

// safeSVG parses the server's SVG as XML and drops what could run code
// (scripts, foreign content, event attributes, javascript: links) before it
// enters the page: the server escapes names, this is a second guard.
export function safeSVG(src) {
  const doc = new DOMParser().parseFromString(src, "image/svg+xml");
  const root = doc.documentElement;
  if (!root || root.nodeName !== "svg" || doc.getElementsByTagName("parsererror").length) return null;
  for (const bad of Array.from(root.querySelectorAll("script, foreignObject, iframe, object, embed"))) bad.remove();
  for (const el of [root, ...root.querySelectorAll("*")]) {
    for (const attr of Array.from(el.attributes)) {
      const n = attr.name.toLowerCase();
      if (n.startsWith("on") || ((n === "href" || n === "xlink:href") && !attr.value.startsWith("#"))) el.removeAttribute(attr.name);
    }
  }
  return document.importNode(root, true);
}
