import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import { startTestService, SECRETS, REDIRECT, type TestService } from '../helpers/service.js';
import { newWallet, pushIssuance } from '../helpers/flows.js';
import { Browser, offerFromPage } from '../helpers/rp.js';
import { secretOf } from '../../src/keys/keys.js';

/**
 * The provider's signed cookies (interaction, resume, session) through src/http/cookieKeys.ts: signed as
 * Keygrip signs them (so cookies from before, or from another instance, stay valid), and a cookie whose
 * signature does not verify is never taken for the holder's.
 */
const Keygrip = createRequire(import.meta.url)('keygrip') as new (keys: string[]) => { sign(data: string): string };

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => t?.stop());

const attributes = { FirstName: 'Ada', LastName: 'Lovelace' };

async function toPrompt() {
  const rp = await pushIssuance(t.url, {
    clientId: 'issuer-pkce',
    secret: SECRETS.pkceIssuer,
    attributes,
    pin: '4821',
    redirectUri: REDIRECT,
  });
  const browser = new Browser(REDIRECT);
  const prompt = await browser.follow(rp.authorizeUrl.href);
  return { rp, browser, prompt };
}

/** A copy of the browser's cookies, with `change` applied, as a second browser. */
function copyOf(browser: Browser, change: (cookies: Map<string, string>) => void): Browser {
  const other = new Browser(REDIRECT);
  for (const [k, v] of browser.cookies) other.cookies.set(k, v);
  change(other.cookies);
  return other;
}

describe('Signed cookies: Keygrip-compatible, tampering refused', () => {
  it('the interaction cookie carries the signature Keygrip makes with the configured secret', async () => {
    const { browser, prompt } = await toPrompt();
    expect(prompt.res?.status).toBe(200);
    const value = browser.cookies.get('_interaction_v2');
    const sig = browser.cookies.get('_interaction_v2.sig');
    expect(value).toBeTruthy();
    expect(sig).toBe(new Keygrip(t.service.keys.cookies.map(secretOf)).sign(`_interaction_v2=${value}`));
  });

  it('a tampered, missing or foreign signature on the interaction cookie -> the "expired" page (400), never the prompt', async () => {
    const { browser, prompt } = await toPrompt();
    const sig = browser.cookies.get('_interaction_v2.sig')!;
    const value = browser.cookies.get('_interaction_v2')!;
    const variants: Record<string, (c: Map<string, string>) => void> = {
      tampered: (c) => c.set('_interaction_v2.sig', `${sig[0] === 'A' ? 'B' : 'A'}${sig.slice(1)}`),
      missing: (c) => c.delete('_interaction_v2.sig'),
      foreign: (c) =>
        c.set('_interaction_v2.sig', new Keygrip(['not-the-configured-secret']).sign(`_interaction_v2=${value}`)),
    };
    for (const [name, change] of Object.entries(variants)) {
      const res = await copyOf(browser, change).get(prompt.final);
      expect(res.status, name).toBe(400);
      expect(await res.text(), name).toContain('This link can no longer be used');
    }
    // the holder's own browser still has its prompt
    expect((await browser.get(prompt.final)).status).toBe(200);
  });

  it('the whole flow runs on those cookies: the resume and session cookies verify and the client gets its code', async () => {
    const { rp, browser, prompt } = await toPrompt();
    const wallet = await newWallet();
    await wallet.receive(offerFromPage(prompt.html!), { pin: '4821' });
    const done = await browser.follow(`${prompt.final}/continue`);
    expect(done.final.startsWith(REDIRECT)).toBe(true);
    const session = browser.cookies.get('_session_v2');
    expect(browser.cookies.get('_session_v2.sig')).toBe(
      new Keygrip(t.service.keys.cookies.map(secretOf)).sign(`_session_v2=${session}`),
    );
    const tokens = await oidc.authorizationCodeGrant(rp.config, new URL(done.final), {
      pkceCodeVerifier: rp.verifier,
      expectedState: rp.state,
      expectedNonce: rp.nonce,
      idTokenExpected: true,
    });
    expect(tokens.claims()?.FirstName).toBe('Ada');
  });
});
