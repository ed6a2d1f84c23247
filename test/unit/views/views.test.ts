import { afterEach, describe, expect, it, vi } from 'vitest';
import { escapeHtml, safeHref } from '../../../src/interaction/views/escape.js';
import { normalizeLang } from '../../../src/interaction/views/layout.js';
import { renderMessage } from '../../../src/interaction/views/message.js';
import {
  formatRemaining,
  humanizeAttribute,
  renderPrompt,
  renderPromptBytes,
  type PromptView,
} from '../../../src/interaction/views/prompt.js';

const XSS = '<script>alert(1)</script>';
const ATTR_BREAK = '"><img src=x onerror=alert(1)>';
const QR =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 29 29" shape-rendering="crispEdges"><path fill="#ffffff" d="M0 0h29v29H0z"/><path stroke="#000000" d="M1 1.5h7"/></svg>';

function view(over: Partial<PromptView> = {}): PromptView {
  return {
    nonce: 'n0nce-abc',
    kind: 'issuance',
    clientName: 'Acme Bank',
    credentialTypes: [
      { name: 'EmployeeBadge', displayName: 'Employee badge', attributes: ['given_name', 'familyName', 'email'] },
    ],
    walletUri: 'openid-credential-offer://?credential_offer_uri=https%3A%2F%2Fissuer.example%2Foffers%2Fabc',
    qrSvg: QR,
    statusUrl: '/interaction/abc/status',
    continueUrl: '/interaction/abc/continue',
    expiresAt: Date.now() + 5 * 60_000,
    ...over,
  };
}

/** Hostile input in every field that is rendered. */
function hostile(kind: PromptView['kind']): PromptView {
  return view({
    nonce: 'n"o<n>ce',
    lang: 'en" onload="x',
    kind,
    clientName: XSS,
    credentialTypes: [
      { name: `Type"With'Quotes<b>`, displayName: `Badge "Gold" & 'Co' ${XSS}`, attributes: [ATTR_BREAK, `a"b'c`] },
      { name: ATTR_BREAK, attributes: [XSS] },
    ],
    walletUri: `openid4vp://?request_uri=https%3A%2F%2Fv.example%2Fr&client_id="><script>alert(2)</script>`,
    statusUrl: `/status?x="><script>alert(3)</script>`,
    continueUrl: `/continue?x="><script>alert(4)</script>&y='z'`,
    pin: { length: 4 },
  });
}

/** Removes the bodies of <script> elements (the static inline script), keeping the tags. */
function withoutScriptBodies(html: string): string {
  return html.replace(/(<script\b[^>]*>)[\s\S]*?(<\/script>)/gi, '$1$2');
}

function scriptBodies(html: string): string[] {
  return [...html.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/gi)].map((m) => m[1]);
}

const ATTR = /\s+([^\s"'<>/=]+)(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?/y;

interface Tag {
  name: string;
  attrs: { name: string; value: string | undefined }[];
  raw: string;
}

/**
 * A small, strict tokenizer for the tags of the rendered markup (script bodies removed). It fails the
 * test if a tag does not consist of well-formed attributes: escaped values can never break out of an
 * attribute, so any leftover would be a bug.
 */
function tags(html: string): Tag[] {
  const out: Tag[] = [];
  const source = withoutScriptBodies(html).replace(/<!--[\s\S]*?-->/g, '');
  const open = /<([a-zA-Z][a-zA-Z0-9-]*)/g;
  let m: RegExpExecArray | null;
  while ((m = open.exec(source))) {
    const name = m[1].toLowerCase();
    let i = open.lastIndex;
    const attrs: Tag['attrs'] = [];
    for (;;) {
      ATTR.lastIndex = i;
      const a = ATTR.exec(source);
      if (!a) break;
      const full = a[0];
      const eq = full.indexOf('=');
      let value: string | undefined;
      if (eq >= 0)
        value = full
          .slice(eq + 1)
          .trim()
          .replace(/^["']|["']$/g, '');
      attrs.push({ name: a[1].toLowerCase(), value });
      i = ATTR.lastIndex;
    }
    const rest = /^\s*\/?>/.exec(source.slice(i));
    if (!rest) throw new Error(`malformed tag <${name} near: ${source.slice(m.index, i + 40)}`);
    out.push({ name, attrs, raw: source.slice(m.index, i + rest[0].length) });
    open.lastIndex = i + rest[0].length;
  }
  return out;
}

function hrefs(html: string): string[] {
  return tags(html).flatMap((t) => t.attrs.filter((a) => a.name === 'href').map((a) => a.value ?? ''));
}

describe('escapeHtml', () => {
  it('escapes the HTML special characters', () => {
    expect(escapeHtml(`<a href="x" title='y'>&\`</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&#96;&lt;/a&gt;',
    );
  });
  it('does not double-escape by accident and keeps plain text', () => {
    expect(escapeHtml('Hello, world')).toBe('Hello, world');
    expect(escapeHtml('&amp;')).toBe('&amp;amp;');
  });
  it('writes characters outside ASCII as numeric references, a surrogate pair as one code point', () => {
    expect(escapeHtml('Hello, world – ünïcödé 👋')).toBe('Hello, world &#x2013; &#xfc;n&#xef;c&#xf6;d&#xe9; &#x1f44b;');
    // a lone surrogate is not a character: it is written as the code unit it is, never dropped
    expect(escapeHtml('a\uD800b')).toBe('a&#xd800;b');
  });
  it('turns null and undefined into empty strings and stringifies other values', () => {
    expect(escapeHtml(null)).toBe('');
    expect(escapeHtml(undefined)).toBe('');
    expect(escapeHtml(42)).toBe('42');
    expect(escapeHtml(false)).toBe('false');
    expect(escapeHtml({ toString: () => '<x>' })).toBe('&lt;x&gt;');
  });
});

describe('safeHref', () => {
  it('keeps wallet schemes and http(s) URLs', () => {
    expect(safeHref('openid-credential-offer://?credential_offer_uri=x')).toBe(
      'openid-credential-offer://?credential_offer_uri=x',
    );
    expect(safeHref('openid4vp://?request_uri=x')).toBe('openid4vp://?request_uri=x');
    expect(safeHref('https://rp.example/cb?a=1&b=2')).toBe('https://rp.example/cb?a=1&b=2');
    expect(safeHref('/interaction/1/continue')).toBe('/interaction/1/continue');
  });
  it('refuses script and document schemes, also when obfuscated', () => {
    for (const u of [
      'javascript:alert(1)',
      ' JavaScript:alert(1)',
      'java\tscript:alert(1)',
      'java\nscript:x',
      'vbscript:x',
      'data:text/html,<b>',
      '',
    ]) {
      expect(safeHref(u)).toBe('#');
    }
  });
});

describe('normalizeLang', () => {
  it('accepts language tags and falls back to en', () => {
    expect(normalizeLang('de')).toBe('de');
    expect(normalizeLang('pt-BR')).toBe('pt-BR');
    expect(normalizeLang(undefined)).toBe('en');
    expect(normalizeLang('en" onload="x')).toBe('en');
    expect(normalizeLang('')).toBe('en');
  });
});

describe('humanizeAttribute / formatRemaining', () => {
  it('makes readable labels', () => {
    expect(humanizeAttribute('given_name')).toBe('Given name');
    expect(humanizeAttribute('familyName')).toBe('Family name');
    expect(humanizeAttribute('dateOfBirth')).toBe('Date of birth');
    expect(humanizeAttribute('email')).toBe('Email');
    expect(humanizeAttribute('PID')).toBe('PID');
    expect(humanizeAttribute('age_over_18')).toBe('Age over 18');
    expect(humanizeAttribute('address.postal_code')).toBe('Address › Postal code');
    expect(humanizeAttribute('EmployeeBadge')).toBe('Employee badge');
    expect(humanizeAttribute('___')).toBe('___');
  });
  it('formats remaining time', () => {
    expect(formatRemaining(300_000)).toBe('5:00');
    expect(formatRemaining(299_001)).toBe('5:00');
    expect(formatRemaining(59_000)).toBe('0:59');
    expect(formatRemaining(3_723_000)).toBe('1:02:03');
    expect(formatRemaining(-5)).toBe('0:00');
  });
});

describe('renderPrompt', () => {
  for (const kind of ['issuance', 'verification'] as const) {
    describe(`${kind}: hostile values`, () => {
      const v = hostile(kind);
      const html = renderPrompt(v);
      const markup = withoutScriptBodies(html);

      it('never contains a raw value; every value appears escaped', () => {
        expect(html).not.toContain(XSS);
        expect(html).not.toContain(ATTR_BREAK);
        expect(html).not.toContain('alert(2)</script>');
        expect(html).not.toContain('alert(3)</script>');
        expect(html).not.toContain('alert(4)</script>');
        expect(html).not.toContain(`Type"With'Quotes`);
        expect(html).not.toContain(`Badge "Gold"`);
        expect(html).not.toContain('n"o<n>ce');
        expect(markup).toContain(escapeHtml(XSS)); // clientName
        expect(markup).toContain(escapeHtml(`Badge "Gold" & 'Co' ${XSS}`)); // displayName
        expect(markup).toContain(`data-credential-type="${escapeHtml(`Type"With'Quotes<b>`)}"`);
        expect(markup).toContain(`data-attribute="${escapeHtml(ATTR_BREAK)}"`);
        expect(markup).toContain(`data-attribute="${escapeHtml(`a"b'c`)}"`);
        expect(markup).toContain(`data-status-url="${escapeHtml(v.statusUrl)}"`);
        expect(markup).toContain(`data-continue-url="${escapeHtml(v.continueUrl)}"`);
        // two credential types: the heading counts them
        expect(markup).toContain(
          `<title>${escapeHtml(`${kind === 'issuance' ? 'Add your credentials to your wallet' : 'Share your credentials'} – ${XSS}`)}</title>`,
        );
      });

      it('has only well-formed tags: no value breaks out of its attribute', () => {
        const t = tags(html);
        expect(t.length).toBeGreaterThan(20);
        const names = new Set(t.map((x) => x.name));
        expect(names.has('img')).toBe(false);
        expect(t.filter((x) => x.name === 'script')).toHaveLength(1);
        expect(t.filter((x) => x.name === 'b')).toHaveLength(0);
      });

      it("puts the walletUri only inside an escaped href (and the QR code's data-wallet-link)", () => {
        const escaped = escapeHtml(v.walletUri);
        expect(html).not.toContain(v.walletUri);
        expect(html.split(escaped).length - 1).toBe(3);
        expect(markup).toContain(`data-wallet-link="${escaped}"`);
        expect(markup).toContain(`data-link="${escaped}"`); // the copy-link button (issue 22)
        expect(markup).toContain(`href="${escaped}"`);
        const link = tags(html).find((x) => x.attrs.some((a) => a.name === 'id' && a.value === 'wallet-link'));
        expect(link?.name).toBe('a');
        expect(link?.raw).toContain(`href="${escaped}"`);
        expect(markup).toMatch(/Open in wallet on this device/);
      });

      it('falls back to the default language for a malformed lang', () => {
        expect(html).toMatch(/^<!doctype html>\n<html lang="en" dir="ltr">/);
      });

      it('puts the (escaped) nonce on every script and style tag', () => {
        const t = tags(html).filter((x) => x.name === 'script' || x.name === 'style');
        expect(t.length).toBe(3); // the stylesheet, the <noscript> style and the script
        for (const x of t) expect(x.attrs).toContainEqual({ name: 'nonce', value: escapeHtml(v.nonce) });
      });

      it('has no inline event handlers, style attributes or external resources', () => {
        for (const t of tags(html)) {
          for (const a of t.attrs) {
            expect(a.name, t.raw).not.toMatch(/^on\w+/);
            expect(a.name, t.raw).not.toBe('style');
            if (a.name === 'src') throw new Error(`unexpected src in ${t.raw}`);
          }
          if (t.name === 'link') expect(t.raw).toMatch(/rel="icon" href="data:/);
        }
        expect(markup).not.toMatch(/\son\w+\s*=\s*["'][^"']*["']/i);
        expect(html).not.toMatch(/https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
      });
    });
  }

  it('renders the issuance prompt: heading, client, credential, QR, status, countdown, noscript', () => {
    const v = view();
    const html = renderPrompt(v);
    expect(html).toContain('<html lang="en" dir="ltr">');
    expect(html).toContain('<h1>Add your credential to your wallet</h1>');
    expect(html).toContain('<strong>Acme Bank</strong>');
    expect(html).toContain('Employee badge');
    expect(html).toContain('>Given name</li>');
    expect(html).toContain('data-attribute="given_name"');
    expect(html).toContain(QR); // inserted as is
    expect(html).toMatch(
      /<p class="status-text" id="status-text" role="status" aria-live="polite"[^>]*>Waiting for your wallet&#x2026;<\/p>/,
    );
    expect(html).toMatch(/<time id="countdown" datetime="[^"]+">(5:00|4:59)<\/time>/);
    expect(html).toMatch(/<noscript><style nonce="n0nce-abc">[^<]*<\/style><div class="noscript">/);
    expect(html).toContain('This request expires in about 5 minutes.');
    expect(html).toContain(`<a class="button button--secondary" href="/interaction/abc/continue">Continue</a>`);
    expect(html).toContain('data-status-url="/interaction/abc/status"');
    // the script's words, the client's name among them, in the page's language (issue 22)
    expect(html).toMatch(/data-text="[^"]*Returning you to Acme Bank/);
  });

  it('renders the verification prompt with the requested attributes', () => {
    const html = renderPrompt(
      view({
        kind: 'verification',
        walletUri: 'openid4vp://?client_id=x&request_uri=https%3A%2F%2Fv.example%2Fr',
        credentialTypes: [
          { name: 'PID', displayName: 'Personal ID', attributes: ['given_name', 'birth_date'] },
          { name: 'Membership', attributes: [] },
        ],
      }),
    );
    expect(html).toContain('<h1>Share your credentials</h1>'); // two types asked for
    expect(html).toContain('Requested information');
    expect(html).toContain('Personal ID');
    expect(html).toContain('<span>Given name</span>');
    expect(html).toContain('<span>Birth date</span>');
    expect(html).toContain('data-attribute="birth_date"');
    expect(html).toContain('You will share all information in this credential.');
    expect(html).toContain('href="openid4vp://?client_id=x&amp;request_uri=https%3A%2F%2Fv.example%2Fr"');
  });

  it('shows the PIN notice only when a PIN is required, with its length', () => {
    const withPin = renderPrompt(view({ pin: { length: 4 } }));
    expect(withPin).toContain('id="pin-notice"');
    expect(withPin).toContain('Your wallet will ask for a 4-digit PIN.');
    expect(withPin).toContain('Acme Bank sent it to you separately');

    const six = renderPrompt(view({ pin: { length: 6 } }));
    expect(six).toContain('a 6-digit PIN');

    const withoutPin = renderPrompt(view());
    expect(withoutPin).not.toContain('pin-notice');
    expect(withoutScriptBodies(withoutPin)).not.toMatch(/\bPIN\b/);

    // A verification never shows it (there is no transaction code in OpenID4VP).
    const verification = renderPrompt(view({ kind: 'verification', pin: { length: 4 } }));
    expect(verification).not.toContain('pin-notice');
  });

  it('neutralises a script-scheme walletUri', () => {
    const html = renderPrompt(view({ walletUri: 'javascript:alert(1)', continueUrl: 'javascript:alert(2)' }));
    expect(html).not.toContain('javascript:');
    expect(hrefs(html)).toContain('#');
  });

  it('uses the caller language', () => {
    expect(renderPrompt(view({ lang: 'de-CH' }))).toContain('<html lang="de-CH" dir="ltr">');
  });

  it('ships a static script: nothing is interpolated into it', () => {
    const a = scriptBodies(renderPrompt(view()));
    const b = scriptBodies(renderPrompt(hostile('verification')));
    expect(a).toHaveLength(1);
    expect(a).toEqual(b);
    expect(a[0]).not.toContain('Acme Bank');
    expect(a[0]).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/);
    expect(a[0]).not.toMatch(/<\/script/i);
    // The behaviour the brief asks for is all there.
    // its words come from the page (data-text, in the page's language), none are in the script
    expect(a[0]).not.toMatch(/'[A-Z][a-z]+ [a-z]+/);
    expect(a[0]).toContain("say('connected')");
    expect(a[0]).toContain("say('doneReturning')");
    expect(a[0]).toContain('location.assign');
    expect(a[0]).toContain("credentials: 'same-origin'");
    expect(a[0]).toContain('MAX_DELAY = 5000');
  });

  it('accepts an XML declaration in front of the QR SVG', () => {
    const html = renderPrompt(view({ qrSvg: `<?xml version="1.0" encoding="utf-8"?>\n${QR}` }));
    expect(html).not.toContain('<?xml');
    expect(html).toContain(QR);
  });
});

describe('renderPromptBytes (what the prompt route sends)', () => {
  afterEach(() => vi.useRealTimers());
  it('is the UTF-8 encoding of renderPrompt, for either kind, any language and text outside ASCII', () => {
    vi.useFakeTimers({ now: 1_800_000_000_000 });
    for (const v of [
      view(),
      view({ kind: 'verification', lang: 'de-CH', clientName: 'Bänk \u{1F600} <Ä>' }),
      hostile('issuance'),
      hostile('verification'),
    ]) {
      const bytes = renderPromptBytes(v);
      expect(bytes.equals(Buffer.from(renderPrompt(v), 'utf8'))).toBe(true);
      expect(bytes.toString('utf8')).toContain(`<style nonce="${escapeHtml(v.nonce)}">`);
    }
  });
  it('keeps each page its own: a second page does not change the bytes of the first', () => {
    vi.useFakeTimers({ now: 1_800_000_000_000 });
    const first = renderPromptBytes(view({ nonce: 'first' }));
    const copy = Buffer.from(first);
    renderPromptBytes(view({ nonce: 'second', clientName: 'Other' }));
    expect(first.equals(copy)).toBe(true);
  });
});

describe('renderMessage', () => {
  it('escapes title and message and shows no script', () => {
    const html = renderMessage({
      nonce: 'abc',
      title: XSS,
      message: `Link "${ATTR_BREAK}" expired & gone`,
      status: 410,
    });
    expect(html).not.toContain(XSS);
    expect(html).not.toContain(ATTR_BREAK);
    expect(html).toContain(`<h1>${escapeHtml(XSS)}</h1>`);
    expect(html).toContain(escapeHtml(`Link "${ATTR_BREAK}" expired & gone`));
    expect(html).toContain(`<title>${escapeHtml(XSS)}</title>`);
    expect(tags(html).filter((t) => t.name === 'script')).toHaveLength(0);
    expect(tags(html).some((t) => t.name === 'img')).toBe(false);
  });

  it('puts the nonce on the style tag and has no event handlers or style attributes', () => {
    const html = renderMessage({ nonce: 'n"1', title: 'Service unavailable', message: 'Try later.', status: 503 });
    const styles = tags(html).filter((t) => t.name === 'style');
    expect(styles).toHaveLength(1);
    expect(styles[0].attrs).toContainEqual({ name: 'nonce', value: 'n&quot;1' });
    for (const t of tags(html)) {
      for (const a of t.attrs) {
        expect(a.name).not.toMatch(/^on\w+/);
        expect(a.name).not.toBe('style');
      }
    }
  });

  it('shows a status-appropriate hint and code, and the language', () => {
    const expired = renderMessage({
      nonce: 'n',
      title: 'This link has expired',
      message: 'Links are valid for 5 minutes.',
      status: 410,
      lang: 'fr',
    });
    expect(expired).toContain('<html lang="fr" dir="ltr">');
    expect(expired).toContain('Error code 410');
    expect(expired).toContain('start again');
    const down = renderMessage({
      nonce: 'n',
      title: 'Service unavailable',
      message: 'We are working on it.',
      status: 503,
    });
    expect(down).toContain('try again in a few minutes');
    expect(down).toContain('message--error');
    const info = renderMessage({ nonce: 'n', title: 'All set', message: 'You can close this page.' });
    expect(info).not.toContain('Error code');
  });

  it('says what to do once: a message that already advises is not followed by the generic advice (issue 22)', () => {
    const page = renderMessage({
      nonce: 'n',
      title: 'Gone',
      message: 'It has expired. Go back to the app and start again.',
      status: 400,
    });
    expect(page.match(/start again/g)).toHaveLength(1);
    expect(page).not.toContain('<p class="message-hint">');
    const plain = renderMessage({ nonce: 'n', title: 'Gone', message: 'It has expired.', status: 400 });
    expect(plain).toContain('<p class="message-hint">');
  });
});
