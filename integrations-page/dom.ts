/** Attributes of an element made by `h`: a property name (`className`, `type`, …), `on<event>`, or an `aria-`/`data-` attribute. */
type Attributes = Record<string, string | number | boolean | null | undefined | ((event: Event) => void)>;
export type Child = Node | string | number | null | undefined | false | Child[];

/** One element with its attributes and children, built with the DOM (no HTML is ever parsed from text). */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Attributes = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.slice(2).toLowerCase(), value);
    else if (name.startsWith('aria-') || name.startsWith('data-') || name === 'role' || name === 'for' || name === 'scope') element.setAttribute(name, String(value));
    else (element as unknown as Record<string, unknown>)[name] = value;
  }
  append(element, children);
  return element;
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
}

/** Replaces what `parent` holds. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

let counter = 0;
/** An id unique in the page, for labels and descriptions. */
export function uid(prefix: string): string {
  counter += 1;
  return `${prefix}-${counter}`;
}

/** A time as the reader's locale writes it, with the exact instant in the title; a dash when there is none. */
export function time(iso: string | null | undefined): Node {
  if (!iso) return document.createTextNode('—');
  const date = new Date(iso);
  return h('time', { dateTime: iso, title: iso }, date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }));
}

/** A secret shown once, read-only, with a button that copies it. */
export function shownOnce(label: string, value: string, note: string): HTMLElement {
  const id = uid('secret');
  const status = h('span', { role: 'status', className: 'copied' });
  return h(
    'div',
    { className: 'shown-once' },
    h('label', { for: id }, label),
    h('input', { id, value, readOnly: true, className: 'secret', spellcheck: false, onfocus: (event) => (event.target as HTMLInputElement).select() }),
    h('button', {
      type: 'button',
      onclick: () => {
        void navigator.clipboard.writeText(value).then(
          () => (status.textContent = 'Copied.'),
          () => (status.textContent = 'The browser refused to copy: select the text and copy it.'),
        );
      },
    }, 'Copy'),
    status,
    h('p', { className: 'note' }, note),
  );
}
