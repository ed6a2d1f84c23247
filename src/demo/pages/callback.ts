/** GET /demo/callback: the browser back from the service; the code redeemed, the ID token shown (and an issuance's status forms). */
import type { Context } from 'koa';
import { resultPage } from '../page.js';
import { stateKey, type DemoState } from '../flow.js';
import { redeem, type RedeemDeps } from '../redeem.js';
import { statusForms, type StatusFormsDeps } from '../statusForms.js';
import type { DemoDeps } from '../deps.js';

/** What the page uses. */
export type CallbackDeps = Pick<DemoDeps, 'store' | 'client'> & Omit<RedeemDeps, 'client'> & StatusFormsDeps;

export async function callback(ctx: Context, d: CallbackDeps): Promise<void> {
  const result = (title: string, data: unknown, extra?: Parameters<typeof resultPage>[4]) =>
    resultPage(ctx, d.config.baseUrl, title, data, extra);
  const q = ctx.query as Record<string, string>;
  const saved = typeof q.state === 'string' ? await d.store.consume<DemoState>(stateKey(q.state)) : undefined;
  if (!saved || !d.client) return result('Unknown or used state', { state: q.state });
  if (q.error)
    return result('The service answered with an error', { error: q.error, error_description: q.error_description });
  const redeemed = await redeem({ ...d, client: d.client }, saved, String(q.code ?? ''));
  if ('title' in redeemed) return result(redeemed.title, redeemed.details);
  result(
    'The relying party received this ID token (signature verified)',
    redeemed.claims,
    statusForms(d, redeemed.claims.SerialNumber),
  );
}
