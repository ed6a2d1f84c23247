/**
 * A credential request whose store writes ran but whose answers were lost (docs/decisions.md, "Store":
 * timeouts and retries; the credential request's order, src/issuance/issueCredential.ts). Nothing is
 * half-issued: when the step's outcome could not be confirmed, the wallet gets 503
 * `temporarily_unavailable`, its offer is back and the outcome is withdrawn (the holder's browser does not
 * finish a flow whose wallet has no credential), and the wallet's retry with the same access token gets the
 * credential; once the outcome is written, the credential is sent even when showing the offer done fails.
 * On both stores: the lost answer is the real store's write followed by the error Redis' timeout gives.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, offerFromPage, resolveOfferLink } from '../helpers/rp.js';
import { pushIssuance } from '../helpers/flows.js';
import { startTestService, SECRETS, REDIRECT, type TestService } from '../helpers/service.js';
import { credentialRequest, nonce, proof, tokenRequest } from '../helpers/walletIssuer.js';
import { testStore } from '../helpers/stores.js';
import { StoreUnavailableError } from '../../src/store/redis.js';
import type { Store } from '../../src/store/types.js';

const PIN = '4321';
const attributes = { FirstName: 'Ada', LastName: 'Lovelace', Email: 'ada@example.com' };

/** The store, except that the next `set` or `setIfAbsent` of a key matching `losing` writes and then fails as a timeout does. */
function withLostAnswers(store: Store): { store: Store; lose: (key: RegExp) => void } {
  let losing: RegExp | undefined;
  const lost = (key: string) => {
    if (!losing?.test(key)) return false;
    losing = undefined;
    return true;
  };
  const proxy = new Proxy(store, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (prop !== 'set' && prop !== 'setIfAbsent') return typeof value === 'function' ? value.bind(target) : value;
      return async (key: string, ...rest: unknown[]) => {
        const answer = await (value as (...a: unknown[]) => Promise<unknown>).call(target, key, ...rest);
        if (lost(key)) throw new StoreUnavailableError(new Error('no answer from Redis within 2000 ms'));
        return answer;
      };
    },
  });
  return { store: proxy, lose: (key) => void (losing = key) };
}

let svc: TestService;
let lose: (key: RegExp) => void;

beforeAll(async () => {
  const wrapped = withLostAnswers(await testStore());
  lose = wrapped.lose;
  svc = await startTestService({}, { store: wrapped.store });
});
afterAll(async () => svc?.stop());

/** A flow up to the wallet's access token: the holder's browser on the prompt page. */
async function redeemedOffer() {
  const { authorizeUrl } = await pushIssuance(svc.url, {
    clientId: 'issuer-pkce',
    secret: SECRETS.pkceIssuer,
    attributes,
    pin: PIN,
    redirectUri: REDIRECT,
  });
  const browser = new Browser(REDIRECT);
  const prompt = await browser.follow(authorizeUrl.href);
  const offer = await resolveOfferLink(offerFromPage(prompt.html!));
  const token = await tokenRequest(svc.url, {
    'pre-authorized_code': offer.grants['urn:ietf:params:oauth:grant-type:pre-authorized_code']['pre-authorized_code'],
    tx_code: PIN,
  });
  expect(token.status, JSON.stringify(token.body)).toBe(200);
  const pageStatus = async () =>
    ((await (await browser.get(`${prompt.final}/status`, 'application/json')).json()) as { status: string }).status;
  const askCredential = async () =>
    credentialRequest(
      svc.url,
      token.body.access_token,
      await proof({ aud: `${svc.url}/wallet`, nonce: await nonce(svc.url) }),
    );
  return { pageStatus, askCredential };
}

describe('a credential request whose store answers are lost', () => {
  it('the step outcome unconfirmed: 503, the offer back, the outcome withdrawn; the retry issues', async () => {
    const { pageStatus, askCredential } = await redeemedOffer();
    lose(/^step:\{[^}]+\}:claims$/);
    const refused = await askCredential();
    expect(refused).toMatchObject({ status: 503, body: { error: 'temporarily_unavailable' } });
    expect(await pageStatus()).not.toBe('done'); // the browser does not finish without the credential

    const retried = await askCredential();
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    expect(await pageStatus()).toBe('done');
  });

  it('the outcome written, showing the offer done fails: the credential is sent all the same', async () => {
    const { pageStatus, askCredential } = await redeemedOffer();
    lose(/^wallet:\{[^}]+\}:outcome$/);
    const issued = await askCredential();
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
    expect(issued.body.credentials).toHaveLength(1);
    expect(await pageStatus()).toBe('done');
  });
});
