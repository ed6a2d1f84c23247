/**
 * The pages of the built-in test identity provider (src/demo/idvProvider.ts): its login page and its
 * error page. Markup in `html` templates (every value escaped), the service's layout and demo stylesheet,
 * no script.
 */
import { readAsset } from '../interaction/views/assets.js';
import { html } from '../interaction/views/html.js';
import { renderLayout } from '../interaction/views/layout.js';

export const DEMO_IDV_TITLE = 'Example ID check (demo)';

export interface PersonFields {
  given_name: string;
  family_name: string;
  birthdate: string;
}

/** Passed as one constant text, so the layout keeps its stylesheet once (it caches by the text). */
const CSS = `${readAsset('demo.css')}
.demo input { font-weight: 400; }
.demo .actions { display: flex; flex-wrap: wrap; gap: 10px; }
.demo button.secondary { background: var(--surface); color: var(--accent); border: 1px solid var(--border); }
.demo .who { color: var(--muted); }`;

/**
 * The Content-Security-Policy of these pages: no script at all, the one stylesheet by nonce, and form
 * posts to the provider itself and, as the post's redirects end there, to its clients' redirect URIs.
 */
export function idvCsp(nonce: string, formTargets: readonly string[]): string {
  return `default-src 'none'; style-src 'nonce-${nonce}'; img-src data:; form-action 'self'${formTargets.map((t) => ` ${t}`).join('')}; frame-ancestors 'none'; base-uri 'none'`;
}

export interface LoginView {
  nonce: string;
  /** where the form posts */
  action: string;
  values: PersonFields;
  /** who asks (the client's id at this provider) */
  client: string;
  /** what is wrong with the last submission, said to the person */
  error?: string;
}

export function renderLoginPage(v: LoginView): string {
  const field = (name: keyof PersonFields, label: string, extra = html``) =>
    html`<label for="${name}">${label}<input id="${name}" name="${name}" value="${v.values[name]}" required${extra}></label>`;
  const body = html`<main class="card demo" aria-labelledby="title">
<h1 id="title">${DEMO_IDV_TITLE}</h1>
<p class="who"><strong>${v.client}</strong> asks this identity provider to confirm who you are.</p>
<p class="hint">A test identity provider built into the demo: it confirms whatever you enter. Never use it for real identities.</p>
${v.error && html`<p class="status" role="alert">${v.error}</p>`}
<form method="post" action="${v.action}">
${field('given_name', 'Given name', html` maxlength="100" autocomplete="given-name"`)}
${field('family_name', 'Family name', html` maxlength="100" autocomplete="family-name"`)}
${field('birthdate', 'Birth date', html` type="date" autocomplete="bday"`)}
<div class="actions">
<button type="submit" name="decision" value="confirm">Confirm identity</button>
<button type="submit" name="decision" value="decline" class="secondary" formnovalidate>Decline</button>
</div>
</form>
</main>`;
  return renderLayout({ nonce: v.nonce, title: DEMO_IDV_TITLE, body, css: CSS, footer: false });
}

export function renderIdvMessage(v: { nonce: string; title: string; message: string }): string {
  const body = html`<main class="card demo" aria-labelledby="title">
<p class="hint">${DEMO_IDV_TITLE}</p>
<h1 id="title">${v.title}</h1>
<p role="alert">${v.message}</p>
</main>`;
  return renderLayout({ nonce: v.nonce, title: `${v.title} - ${DEMO_IDV_TITLE}`, body, css: CSS, footer: false });
}
