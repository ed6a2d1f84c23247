import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import { createLogger, loggablePath } from '../../src/log.js';
import { startTestService, SECRETS, REDIRECT, type TestService } from '../helpers/service.js';
import { holderCompletesIssuance, holderCompletesVerification, newWallet, pushIssuance } from '../helpers/flows.js';
import { Browser } from '../helpers/rp.js';

/**
 * D17 through the whole service: the request log an operator keeps at `info` carries no secret, PIN,
 * hint, attribute value, code, token or bearer reference after an issuance and a verification.
 */
let t: TestService;
const lines: string[] = [];

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  t = await startTestService({}, { logger: createLogger('info', sink) });
});
afterAll(async () => t?.stop());

const attributes = { FirstName: 'Zephyrine', LastName: 'Quillfeather', Email: 'zephyrine.quillfeather@example.org' };
const PIN = '9731';

describe('D17: the request log after an issuance and a verification', () => {
  it("has a line per request, and none of the flow's secrets, values or bearer references", async () => {
    const wallet = await newWallet();
    const rp = await pushIssuance(t.url, {
      clientId: 'issuer-pkce',
      secret: SECRETS.pkceIssuer,
      attributes,
      pin: PIN,
      redirectUri: REDIRECT,
    });
    const hint = rp.authorizeUrl.searchParams.get('id_token_hint'); // PAR: not in the URL
    const issued = await holderCompletesIssuance(rp.authorizeUrl.href, {
      redirectUri: REDIRECT,
      wallet,
      pin: PIN,
      resolveOffer: true,
    });
    const tokens = await oidc.authorizationCodeGrant(rp.config, new URL(issued.callbackUrl), {
      pkceCodeVerifier: rp.verifier,
      expectedState: rp.state,
      expectedNonce: rp.nonce,
      idTokenExpected: true,
    });
    const offer = issued.resolvedOffer!;
    const offerRef = new URL(new URL(issued.offer).searchParams.get('credential_offer_uri')!).pathname
      .split('/')
      .pop()!;
    const preAuthorizedCode = offer.grants['urn:ietf:params:oauth:grant-type:pre-authorized_code'][
      'pre-authorized_code'
    ] as string;
    const code = new URL(issued.callbackUrl).searchParams.get('code')!;
    const [credential] = wallet.list();

    const verifierRp = await oidc.discovery(
      new URL(`${t.url}/v2.0/.well-known/openid-configuration`),
      'other',
      SECRETS.other,
      oidc.ClientSecretPost(SECRETS.other),
      {
        execute: [oidc.allowInsecureRequests],
      },
    );
    const verifierPkce = oidc.randomPKCECodeVerifier();
    const url = await oidc.buildAuthorizationUrlWithPAR(verifierRp, {
      redirect_uri: REDIRECT,
      scope: 'openid EmployeeBadge',
      state: oidc.randomState(),
      nonce: oidc.randomNonce(),
      code_challenge: await oidc.calculatePKCECodeChallenge(verifierPkce),
      code_challenge_method: 'S256',
    });
    const verified = await holderCompletesVerification(url.href, { redirectUri: REDIRECT, wallet });
    const requestRef = new URL(new URL(verified.request).searchParams.get('request_uri')!).pathname.split('/').pop()!;

    const log = lines.join('\n');
    const requests = lines.map((l) => JSON.parse(l) as { msg: string; path: string; status: number });
    expect(requests.filter((r) => r.msg === 'request').length).toBeGreaterThanOrEqual(15);
    expect(requests.some((r) => r.path === '/wallet/offers/[redacted]')).toBe(true);
    expect(requests.some((r) => r.path === '/vp/request/[redacted]')).toBe(true);

    const secrets: [string, string | null | undefined][] = [
      ['client secret', SECRETS.pkceIssuer],
      ['other client secret', SECRETS.other],
      ['hint', hint],
      ['first name', attributes.FirstName],
      ['last name', attributes.LastName],
      ['email', attributes.Email],
      ['offer reference', offerRef],
      ['pre-authorized code', preAuthorizedCode],
      ['authorization code', code],
      ['ID token', tokens.id_token],
      ['credential', credential.credential.split('~')[0]],
      ['request object reference', requestRef],
      ['PKCE verifier', rp.verifier],
    ];
    for (const [what, secret] of secrets) if (secret) expect(log.includes(secret), `${what} in the log`).toBe(false);
    // the PIN as a value of its own (random identifiers may contain the digits)
    expect(log).not.toMatch(new RegExp(`(^|[^0-9A-Za-z_-])${PIN}([^0-9A-Za-z_-]|$)`));
  });
});

describe('issue 33: logs an operator can live with', () => {
  it('answered progress polls of the prompt are logged at debug only; a refused poll stays at info', async () => {
    const rp = await pushIssuance(t.url, {
      clientId: 'issuer-pkce',
      secret: SECRETS.pkceIssuer,
      attributes,
      pin: PIN,
      redirectUri: REDIRECT,
    });
    const browser = new Browser(REDIRECT);
    const prompt = await browser.follow(rp.authorizeUrl.href);
    const before = lines.length;
    for (let i = 0; i < 3; i++)
      expect((await browser.get(`${prompt.final}/status`, 'application/json')).status).toBe(200);
    expect(
      (await browser.get(`${t.url}/interaction/v2/not-an-interaction/status`, 'application/json')).status,
    ).toBeGreaterThanOrEqual(400);
    const logged = lines
      .slice(before)
      .map((l) => JSON.parse(l) as { msg: string; path: string; status: number; level: number });
    expect(
      logged.filter((r) => r.msg === 'request' && r.path.endsWith('/status')).map((r) => [r.path, r.level]),
    ).toEqual([['/interaction/v2/not-an-interaction/status', 30]]);
  });
});

describe('loggablePath', () => {
  it('replaces bearer references in paths and leaves other paths as they are', () => {
    expect(loggablePath('/wallet/offers/abcDEF123_-')).toBe('/wallet/offers/[redacted]');
    expect(loggablePath('/base/vp/request/xyz')).toBe('/base/vp/request/[redacted]');
    expect(loggablePath('/v2.0/oidc/par')).toBe('/v2.0/oidc/par');
    expect(loggablePath('/interaction/v2/uid123/status')).toBe('/interaction/v2/uid123/status');
  });
});
