import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { html, trusted } from '../../../src/interaction/views/html.js';

const XSS = '<script>alert(1)</script>';

describe('html`...`', () => {
  it('escapes every value in text: the HTML specials, quotes and everything outside ASCII', () => {
    expect(String(html`<p>${XSS}</p>`)).toBe('<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>');
    expect(String(html`<p>${`"a" & 'b' \``}</p>`)).toBe('<p>&quot;a&quot; &amp; &#39;b&#39; &#96;</p>');
    expect(String(html`<p>${'Bänk 😀'}</p>`)).toBe('<p>B&#xe4;nk &#x1f600;</p>');
    expect(String(html`<p>${42} ${true} ${0}</p>`)).toBe('<p>42 true 0</p>');
  });

  it('escapes values in double- and single-quoted attributes, quotes included', () => {
    const breakOut = `"><img src=x onerror=alert(1)>`;
    expect(String(html`<a title="${breakOut}" data-x='${`'><b>`}'>x</a>`)).toBe(
      `<a title="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;" data-x='&#39;&gt;&lt;b&gt;'>x</a>`,
    );
    // markup is text in an attribute value too
    expect(String(html`<a title="${html`<b>x</b>`}">x</a>`)).toBe('<a title="&lt;b&gt;x&lt;/b&gt;">x</a>');
  });

  it('inserts its own markup as is, and joins arrays item by item', () => {
    const item = (s: string) => html`<li>${s}</li>`;
    expect(String(html`<ul>${['a', '<b>'].map(item)}</ul>`)).toBe('<ul><li>a</li><li>&lt;b&gt;</li></ul>');
    expect(String(html`<p>${[html`<i>i</i>`, '<s>']}</p>`)).toBe('<p><i>i</i>&lt;s&gt;</p>');
  });

  it('renders null, undefined and false as nothing', () => {
    // eslint-disable-next-line no-constant-binary-expression -- what a view's `cond && html` gives when cond is false
    expect(String(html`<p>${null}${undefined}${false}${false && html`<b>`}</p>`)).toBe('<p></p>');
    expect(String(html`<p title="${null}${false}">x</p>`)).toBe('<p title="">x</p>');
  });

  it('lets through unescaped only what trusted() marks', () => {
    const svg = '<svg viewBox="0 0 1 1"><path d="M0 0h1"/></svg>';
    expect(String(html`<div>${trusted(svg)}</div>`)).toBe(`<div>${svg}</div>`);
    // a look-alike object is not markup
    const fake = { toString: () => '<b>fake</b>' };
    expect(String(html`<div>${fake}</div>`)).toBe('<div>&lt;b&gt;fake&lt;/b&gt;</div>');
  });

  it('takes markup or nothing between attributes', () => {
    const attrs = html`width="2" aria-hidden="true"`;
    expect(String(html`<svg ${attrs}></svg>`)).toBe('<svg width="2" aria-hidden="true"></svg>');
    // eslint-disable-next-line no-constant-binary-expression -- both outcomes of a view's `cond && html`
    expect(String(html`<input${true && html` required`}><input${false && html` required`}${''}>`)).toBe(
      '<input required><input>',
    );
    expect(() => html`<input ${'onfocus=alert(1)'}>`).toThrow(/between attributes/);
  });

  it('refuses values where escaping cannot protect them', () => {
    expect(() => html`<a href=${'x onclick=alert(1)'}>x</a>`).toThrow(/unquoted attribute value/);
    expect(() => html`<${'img'} src=x>`).toThrow(/tag name/);
    expect(() => html`<script nonce="n">var x = ${'1'};</script>`).toThrow(/<script> or <style> body/);
    expect(() => html`<noscript><style nonce="n">.a { color: ${'red'} }</style></noscript>`).toThrow(
      /<script> or <style> body/,
    );
    // the nonce attribute is a quoted value, and after the body's end tag it is text again
    expect(String(html`<style nonce="${'n"'}">.a{}</style><p>${'<'}</p>`)).toBe(
      '<style nonce="n&quot;">.a{}</style><p>&lt;</p>',
    );
  });

  it('is what every view uses: no view escapes by hand', () => {
    const dir = new URL('../../../src/interaction/views/', import.meta.url);
    const views = readdirSync(dir).filter((f) => f.endsWith('.ts') && f !== 'escape.ts' && f !== 'html.ts');
    expect(views).toEqual(expect.arrayContaining(['layout.ts', 'message.ts', 'prompt.ts']));
    // the demo's pages too: every .ts file under src/demo, however it is split
    const demo = new URL('../../../src/demo/', import.meta.url);
    const demoFiles = (readdirSync(demo, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts'));
    expect(demoFiles).toEqual(expect.arrayContaining(['routes.ts', 'page.ts']));
    for (const file of [...views.map((f) => new URL(f, dir)), ...demoFiles.map((f) => new URL(f, demo))]) {
      expect(readFileSync(file, 'utf8'), String(file)).not.toMatch(/escapeHtml/);
    }
  });
});
