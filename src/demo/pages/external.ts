/**
 * GET /demo/external: the relying party's page while its server waits for the webhook of an External
 * Client flow; then what the webhook led to.
 */
import type { Context } from 'koa';
import { html } from '../../interaction/views/html.js';
import { page, resultPage } from '../page.js';
import { STATE, outcomeKey, stateKey, type DemoState, type Outcome } from '../flow.js';
import type { DemoDeps } from '../deps.js';

/** What the page uses. */
export type ExternalDeps = Pick<DemoDeps, 'config' | 'store' | 'webhookUrl'>;

/** seconds between the waiting page's reloads (it has no script: the page's CSP allows none) */
const REFRESH_SECONDS = 2;

export async function waiting(ctx: Context, d: ExternalDeps): Promise<void> {
  const { config, store } = d;
  const state = typeof ctx.query.state === 'string' && STATE.test(ctx.query.state) ? ctx.query.state : undefined;
  const [saved, outcome] = state
    ? await Promise.all([store.get<DemoState>(stateKey(state)), store.get<Outcome>(outcomeKey(state))])
    : [];
  const again = html`<p><a href="${`${config.baseUrl}/demo`}">Start again</a></p>`;
  if (outcome?.status === 'completed' || outcome?.status === 'failed') {
    const title = outcome.status === 'completed' ? 'The relying party received this ID token' : outcome.title;
    const shown = outcome.status === 'completed' ? outcome.claims : outcome.details;
    page(
      ctx,
      title,
      html`<section class="card demo"><h1>${title}</h1>
<p class="hint">External Client flow: the browser stayed at the prompt, and the relying party's server ${outcome.status === 'completed' ? 'did this' : 'was told'}:</p>
<ol class="log">${outcome.log.map((line) => html`<li>${line}</li>`)}</ol>
<pre>${JSON.stringify(shown, null, 2)}</pre>${again}</section>`,
    );
    return;
  }
  if (!saved?.external) return resultPage(ctx, config.baseUrl, 'Unknown or expired state', { state: ctx.query.state });
  ctx.set('Refresh', String(REFRESH_SECONDS));
  const status = outcome
    ? html`<p class="status">The webhook arrived: the relying party is continuing the flow…</p>`
    : html`<p class="status">Waiting for the webhook…</p>`;
  page(
    ctx,
    'External Client flow',
    html`<section class="card demo"><h1>External Client flow</h1>
<p>The relying party started the flow. The holder's browser will not come back here: when the wallet step ends, the service posts a signed webhook to <code>${d.webhookUrl}</code>, and the relying party's server continues with <code>context_id</code>.</p>
<a class="button button--primary" href="${saved.external.promptUrl}" target="_blank" rel="noopener">Open the holder's prompt</a>
<p class="hint">It opens in a new tab, as if on the holder's device: receive or present there with your wallet or the dev wallet.</p>
${status}
<p class="hint">This page reloads every ${REFRESH_SECONDS} seconds. state <code>${state}</code></p>${again}</section>`,
  );
}
