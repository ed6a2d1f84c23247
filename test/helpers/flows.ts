import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DevWallet } from '../../src/wallet/holder.js';
import { Browser, offerFromPage } from './rp.js';

export async function newWallet(): Promise<DevWallet> {
  return DevWallet.open(join(mkdtempSync(join(tmpdir(), 'vc-wallet-')), 'wallet.json'));
}

/**
 * The holder's part of a flow: the browser opens the authorise URL and lands on the prompt, the
 * wallet takes the offer from the page, and the browser continues to the relying party's redirect URI.
 */
export async function holderCompletesIssuance(
  authorizeUrl: string,
  opts: { redirectUri: string; wallet: DevWallet; pin?: string },
): Promise<{ callbackUrl: string; offer: string; browser: Browser }> {
  const browser = new Browser(opts.redirectUri);
  const prompt = await browser.follow(authorizeUrl);
  if (!prompt.html) throw new Error(`expected the prompt page, arrived at ${prompt.final}`);
  const offer = offerFromPage(prompt.html);
  await opts.wallet.receive(offer, { pin: opts.pin });
  const done = await browser.follow(`${prompt.final}/continue`);
  if (done.html !== undefined) throw new Error(`expected a redirect to the client, got ${done.res?.status} at ${done.final}`);
  return { callbackUrl: done.final, offer, browser };
}
