import type { Context } from 'koa';
import { pageTexts } from '../../ui/ui.js';
import type { OtherProvider } from '../../identity/otherProvider.js';
import type { Config } from '../../config/schema.js';
import { promptUrl } from '../deps.js';
import { messagePage, page } from '../pages.js';
import { renderMessage } from '../views/message.js';

/** D12: `{base_url}/identity/callback`, where the other provider sends the browser back. */
export async function otherProviderCallback(d: { config: Config; other: OtherProvider }, ctx: Context): Promise<void> {
  ctx.set('Cache-Control', 'no-store');
  const result = await d.other.callback(ctx);
  if (result.kind === 'page') return messagePage(ctx, result.status, result);
  // on by a page of ours, not a redirect: see CallbackResult
  const next = result.kind === 'prompt' ? promptUrl(d.config, result.version, result.uid, '/continue') : result.url;
  ctx.set('Refresh', `0; url=${next}`);
  const { texts, brand } = pageTexts(ctx);
  page(ctx, 200, (nonce) =>
    renderMessage({
      nonce,
      texts,
      brand,
      title: texts.t('journey.finished'),
      message: texts.t('journey.takingBack'),
      next: { href: next, label: texts.t('progress.continue') },
    }),
  );
}
