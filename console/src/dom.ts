/**
 * Building the page. Every piece of stored content enters the document as a text node (or
 * an attribute value set through the DOM), never as markup: there is no innerHTML here, so a
 * message that holds `<script>` or `<img onerror>` is shown as those characters.
 */

type Child = Node | string | number | null | undefined | false | Child[];
type Attrs = Record<string, string | number | boolean | null | undefined | EventListener>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs | null = null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

export function svg(tag: string, attrs: Attrs | null = null, ...children: Child[]): SVGElement {
  const el = document.createElementNS(SVG_NS, tag) as SVGElement;
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

function setAttrs(el: Element, attrs: Attrs | null): void {
  if (!attrs) return;
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') {
      el.addEventListener(key.replace(/^on/, ''), value);
    } else if (key === 'href') {
      el.setAttribute('href', safeHref(String(value)));
    } else {
      el.setAttribute(key, value === true ? '' : String(value));
    }
  }
}

/** Links are ours: an in-page route (#/…) or a path on this origin; anything else is dropped. */
function safeHref(value: string): string {
  return value.startsWith('#') || value.startsWith('/') ? value : '#';
}

export function append(el: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else if (typeof child === 'string' || typeof child === 'number')
      el.appendChild(document.createTextNode(String(child)));
    else el.appendChild(child);
  }
}

export function replaceChildren(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

/** Says something to screen readers (a polite live region). */
export function announce(message: string): void {
  const region = document.getElementById('announcer');
  if (region) region.textContent = message;
}
