/**
 * The views' markup: an auto-escaping tagged template, so that escaping cannot be forgotten.
 *
 *   html`<p class="x" title="${title}">${text}</p>`
 *
 * Every interpolated value is escaped (`escapeHtml`: the HTML specials, quotes included, and everything
 * outside ASCII), except markup made by `html` itself or marked with `trusted`. An array is its items,
 * each by the same rule, joined. `null`, `undefined` and `false` render nothing, so that
 * `${cond && html`...`}` works.
 *
 * Where a value stands is checked once per template, from its literal text: in a double- or single-quoted
 * attribute value it is always escaped, markup included; between attributes (a boolean attribute such as
 * `${required ? html` required` : ''}`) it must be markup or empty; an unquoted attribute value and the body
 * of a <script> or <style> take no values at all. A template breaking these rules throws when it renders,
 * so a test of the view finds it.
 */
import { escapeHtml } from './escape.js';

class Markup {
  readonly #text: string;
  constructor(text: string) {
    this.#text = text;
  }
  toString(): string {
    return this.#text;
  }
}

/**
 * Markup that is safe to insert as is. Only `html` and `trusted` make one: the class is not exported; its
 * private field keeps the compiler from taking a look-alike object for it, and `html` checks `instanceof`.
 */
export type SafeHtml = Markup;

/**
 * Marks text the server made as markup to insert unescaped: the one way past the escaping (the QR code's
 * SVG, made from the wallet link by views/qrSvg.ts). Never for text that carries a request's values.
 */
export function trusted(text: string): SafeHtml {
  return new Markup(String(text));
}

/** Where an interpolation stands: decides how its value is written ("none": no value may stand there). */
type Slot = 'text' | 'attribute' | 'between-attributes' | 'none';

/** The slots of each template (its strings array is the same object on every call from one place). */
const slotsOf = new WeakMap<TemplateStringsArray, Slot[]>();

/**
 * Reads the template's literal text as HTML, just far enough to tell the slots apart: text, an open tag,
 * a quoted attribute value, or the raw text of <script> and <style>.
 */
function slots(strings: TemplateStringsArray): Slot[] {
  const out: Slot[] = [];
  let state: 'text' | 'tag' | '"' | "'" | 'raw' = 'text';
  let tagName = '';
  for (let s = 0; s < strings.length; s++) {
    const part = strings[s];
    for (let i = 0; i < part.length; i++) {
      const c = part[i];
      if (state === 'text') {
        if (c === '<' && /[A-Za-z]/.test(part[i + 1] ?? '')) {
          tagName = /^[A-Za-z][A-Za-z0-9-]*/.exec(part.slice(i + 1))![0].toLowerCase();
          i += tagName.length;
          state = 'tag';
        }
      } else if (state === 'tag') {
        if (c === '"' || c === "'") state = c;
        else if (c === '>') state = tagName === 'script' || tagName === 'style' ? 'raw' : 'text';
      } else if (state === 'raw') {
        if (part.slice(i, i + 2 + tagName.length).toLowerCase() === `</${tagName}`) state = 'text';
      } else if (c === state) {
        state = 'tag';
      }
    }
    if (s === strings.length - 1) break;
    if (state === 'text')
      out.push(/<\/?$/.test(part) ? 'none' : 'text'); // not a tag's name
    else if (state === '"' || state === "'") out.push('attribute');
    else if (state === 'tag')
      out.push(/=\s*$/.test(part) ? 'none' : 'between-attributes'); // not an unquoted value
    else out.push('none');
  }
  return out;
}

function empty(v: unknown): boolean {
  return v === null || v === undefined || v === false || v === '';
}

function text(v: unknown): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof Markup) return v.toString();
  if (Array.isArray(v)) {
    let out = '';
    for (const item of v) out += text(item);
    return out;
  }
  return escapeHtml(v);
}

function refuse(strings: TemplateStringsArray, i: number, why: string): never {
  throw new TypeError(`html template: ${why}, after ${JSON.stringify(strings[i].slice(-40))}`);
}

/** The auto-escaping template tag: see the top of this file. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let slotList = slotsOf.get(strings);
  if (!slotList) {
    slotList = slots(strings);
    slotsOf.set(strings, slotList);
  }
  let out = strings[0];
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    switch (slotList[i]) {
      case 'text':
        out += text(v);
        break;
      case 'attribute':
        // markup too is escaped here: an attribute value is text
        if (v !== false) out += escapeHtml(v);
        break;
      case 'between-attributes':
        if (v instanceof Markup) out += v.toString();
        else if (!empty(v)) refuse(strings, i, 'a value between attributes must be html`...` or empty');
        break;
      default:
        refuse(
          strings,
          i,
          'no value may stand in a tag name, an unquoted attribute value or a <script> or <style> body',
        );
    }
    out += strings[i + 1];
  }
  return new Markup(out);
}
