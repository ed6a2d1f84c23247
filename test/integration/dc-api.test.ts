/**
 * Verification through the W3C Digital Credentials API (OpenID4VP 1.0 Appendix A, HAIP 1.0), through the
 * whole service: a relying party starts a verification, the holder's browser lands on the prompt and takes
 * the `requests` the page would hand to `navigator.credentials.get`; an independent holder
 * (@openid4vc/openid4vp, @sd-jwt/sd-jwt-vc, jose) answers them as a wallet chosen by the platform does, for
 * the origin the platform asserts; the browser posts the credential's data to its prompt, and continues.
 * Every refusal ends the flow with access_denied and a description naming the rule, as the QR path does.
 */
import { X509Certificate } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, generateKeyPair, exportJWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startTestService,
  testConfig,
  REDIRECT,
  VERIFIER_CA_PEM,
  SECRETS,
  type TestService,
} from '../helpers/service.js';
import { Browser, makeHint, pkcePair } from '../helpers/rp.js';
import { firstClaimSet, presentSdJwtDisclosing, type ResolvedRequest } from '../helpers/openid4vpHolder.js';
import { holderAnswersDcApi, type DigitalAnswer, type DigitalRequest } from '../helpers/dcApiHolder.js';
import { encryptAnswer } from '../helpers/encryptAnswer.js';
import type { DevWallet, StoredCredential } from '../../src/wallet/holder.js';
import {
  holderCompletesIssuance,
  newWallet,
  openPrompt,
  pushAuthorization,
  redeemCode,
  requestFromPage,
} from '../helpers/flows.js';

const trust = new X509Certificate(VERIFIER_CA_PEM);
const PLAIN = { ...(testConfig(0).verifier as object), responseMode: 'direct_post' };

let t: TestService;
let plain: TestService;
let wallet: DevWallet;
/** the holder's EmployeeBadge, by the service that issued it (each trusts its own issuer) */
const badges = new Map<TestService, StoredCredential>();

/** Issues an EmployeeBadge of `service` into the wallet (Version 2 PAR, issuer-pkce). */
async function issueBadge(service: TestService): Promise<void> {
  const hint = await makeHint({
    clientId: 'issuer-pkce',
    secret: SECRETS.pkceIssuer,
    audience: service.url,
    claims: { FirstName: 'Ada', LastName: 'Lovelace' },
  });
  const { challenge } = pkcePair();
  const { authorizeUrl } = await pushAuthorization(service.url, {
    scope: 'openid issue.EmployeeBadge',
    nonce: 'n',
    id_token_hint: hint,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  const before = new Set(wallet.list().map((c) => c.credential));
  await holderCompletesIssuance(authorizeUrl, { redirectUri: REDIRECT, wallet });
  badges.set(
    service,
    wallet.list().find((c) => !before.has(c.credential))!,
  );
}

beforeAll(async () => {
  [t, plain] = await Promise.all([startTestService(), startTestService({ verifier: PLAIN })]);
  wallet = await newWallet();
  await issueBadge(t);
  await issueBadge(plain);
});
afterAll(async () => {
  await Promise.all([t?.stop(), plain?.stop()]);
});

interface Started {
  service: TestService;
  origin: string;
  state: string;
  verifier: string;
  browser: Browser;
  promptUrl: string;
  html: string;
}

/** The relying party pushes a verification (Version 2 PAR); the browser lands on the prompt. */
async function start(service = t): Promise<Started> {
  const opened = await openPrompt(service.url, 'openid EmployeeBadge');
  return { service, origin: new URL(service.url).origin, ...opened };
}

/** The page's GET of its requests (with the interaction's cookie). */
async function requestsOf(s: Started): Promise<DigitalRequest[]> {
  const res = await s.browser.get(`${s.promptUrl}/dc-api`, 'application/json');
  expect(res.status).toBe(200);
  expect(res.headers.get('cache-control')).toBe('no-store');
  return ((await res.json()) as { requests: DigitalRequest[] }).requests;
}

/** The page posts the credential's data to its prompt, as JSON from its own origin. */
async function post(s: Started, answer: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${s.promptUrl}/dc-api`, {
    method: 'POST',
    headers: {
      cookie: [...s.browser.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
      'content-type': 'application/json',
      origin: s.origin,
      ...headers,
    },
    body: typeof answer === 'string' ? answer : JSON.stringify(answer),
  });
  return { status: res.status, body: (await res.json()) as { status?: string; error_description?: string } };
}

/** The holder presents the badge of `service` with a KB-JWT for `aud` (the origin audience unless said) and `nonce` (the request's). */
const presentBadge =
  (kb: { aud?: string; nonce?: string } = {}, service = t) =>
  async (request: ResolvedRequest) => {
    const badge = badges.get(service)!;
    const query = request.dcql_query.credentials[0];
    const disclose = firstClaimSet(query, Object.keys(badge.claims))!;
    const vp = await presentSdJwtDisclosing(badge.credential, badge.holderKey, disclose, {
      aud: kb.aud ?? `origin:${new URL(service.url).origin}`,
      nonce: kb.nonce ?? request.nonce,
    });
    return { [query.id]: [vp] };
  };

async function answerOf(
  s: Started,
  o: { protocol?: string; answer?: ReturnType<typeof presentBadge>; origin?: string } = {},
): Promise<DigitalAnswer> {
  return holderAnswersDcApi(await requestsOf(s), {
    protocol: o.protocol ?? 'openid4vp-v1-signed',
    origin: o.origin ?? s.origin,
    trust,
    answer: o.answer ?? presentBadge({}, s.service),
  });
}

/** The browser continues from the prompt and arrives at the client: a code, or access_denied naming the rule. */
async function continued(s: Started): Promise<URLSearchParams> {
  const done = await s.browser.follow(`${s.promptUrl}/continue`);
  expect(done.final.startsWith(REDIRECT), `stopped at ${done.final}`).toBe(true);
  const q = new URL(done.final).searchParams;
  expect(q.get('state')).toBe(s.state);
  expect(q.get('iss')).toBe(new URL(s.promptUrl).origin); // RFC 9207: the provider's redirects, code or error, carry iss
  return q;
}

async function expectDenied(s: Started, description: RegExp): Promise<void> {
  const q = await continued(s);
  expect(q.get('error'), q.toString()).toBe('access_denied');
  expect(q.get('code')).toBeNull();
  expect(q.get('error_description')).toMatch(description);
}

async function expectVerified(s: Started): Promise<void> {
  const q = await continued(s);
  expect(q.get('error'), q.toString()).toBeNull();
  const claims = await redeemCode(s.service.url, { code: q.get('code')!, verifier: s.verifier });
  expect(claims).toMatchObject({ FirstName: 'Ada', LastName: 'Lovelace' });
}

describe('the requests (OpenID4VP 1.0 Appendix A.2, A.3)', () => {
  it('offers a signed request (client_id with its prefix, expected_origins) then an unsigned one, dc_api.jwt to a key of the request', async () => {
    const s = await start();
    const requests = await requestsOf(s);
    expect(requests.map((r) => r.protocol)).toEqual(['openid4vp-v1-signed', 'openid4vp-v1-unsigned']);
    const jws = requests[0].data.request as string;
    expect(decodeProtectedHeader(jws)).toMatchObject({ alg: 'ES256', typ: 'oauth-authz-req+jwt' });
    const signed = decodeJwt(jws);
    const unsigned = requests[1].data;
    // the QR path's request: same client, same query
    const qr = decodeJwt(
      await (await fetch(new URL(requestFromPage(s.html)).searchParams.get('request_uri')!)).text(),
    ) as Record<string, any>;
    expect(signed).toMatchObject({
      client_id: qr.client_id,
      expected_origins: [s.origin],
      response_type: 'vp_token',
      response_mode: 'dc_api.jwt',
      nonce: qr.nonce,
      dcql_query: qr.dcql_query,
    });
    expect(signed).not.toHaveProperty('response_uri');
    expect(signed).not.toHaveProperty('state');
    expect(unsigned).toMatchObject({ response_mode: 'dc_api.jwt', nonce: qr.nonce, dcql_query: qr.dcql_query });
    expect(unsigned).not.toHaveProperty('client_id');
    expect(unsigned).not.toHaveProperty('expected_origins');
    const [key] = (unsigned.client_metadata as any).jwks.keys;
    expect(key).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ECDH-ES', use: 'enc' });
    expect(key).not.toHaveProperty('d');
    expect((unsigned.client_metadata as any).encrypted_response_enc_values_supported).toEqual(['A128GCM', 'A256GCM']);
  });

  it('the independent holder refuses the signed request for another origin (expected_origins)', async () => {
    const s = await start();
    await expect(answerOf(s, { origin: 'https://evil.example' })).rejects.toThrow(/expected_origins/);
  });

  it('dc_api when the operator chose plain answers', async () => {
    const s = await start(plain);
    const requests = await requestsOf(s);
    expect(requests.map((r) => r.data.response_mode ?? decodeJwt(r.data.request as string).response_mode)).toEqual([
      'dc_api',
      'dc_api',
    ]);
    const answer = await answerOf(s);
    expect(answer.data).toHaveProperty('vp_token');
    expect(await post(s, answer)).toMatchObject({ status: 200, body: { status: 'done' } });
    await expectVerified(s);
  });

  it('the page of another browser (no interaction cookie) gets nothing', async () => {
    const s = await start();
    const res = await fetch(`${s.promptUrl}/dc-api`);
    expect(res.status).toBe(404);
  });
});

describe('the answer', () => {
  it('signed request, encrypted answer: the flow completes with the disclosed claims', async () => {
    const s = await start();
    const res = await post(s, await answerOf(s));
    // this browser finishes at once: where it resumes the authorisation (the provider's, same origin)
    expect(res).toMatchObject({ status: 200, body: { status: 'done' } });
    expect(new URL((res.body as { next: string }).next).origin).toBe(s.origin);
    await expectVerified(s);
  });

  it('unsigned request: the origin is the audience too', async () => {
    const s = await start();
    expect(await post(s, await answerOf(s, { protocol: 'openid4vp-v1-unsigned' }))).toMatchObject({ status: 200 });
    await expectVerified(s);
  });

  it('one answer per request: a second post of the same answer finds nothing, and the flow stays completed', async () => {
    const s = await start();
    const answer = await answerOf(s);
    expect((await post(s, answer)).status).toBe(200);
    expect(await post(s, answer)).toEqual({ status: 404, body: { status: 'expired' } });
    await expectVerified(s);
  });

  it('the QR path answered first: the page answer finds nothing', async () => {
    const s = await start();
    const answer = await answerOf(s);
    await wallet.present(requestFromPage(s.html));
    expect((await post(s, answer)).status).toBe(404);
    await expectVerified(s);
  });

  it('a post from another origin, or not as JSON, is refused before anything is taken', async () => {
    const s = await start();
    const answer = await answerOf(s);
    expect((await post(s, answer, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await post(s, answer, { 'content-type': 'text/plain' })).status).toBe(403);
    expect((await post(s, answer)).status).toBe(200);
    await expectVerified(s);
  });
});

describe('refusals end the flow with access_denied naming the rule', () => {
  const refused = async (s: Started, answer: unknown, description: RegExp) => {
    const res = await post(s, answer);
    expect(res).toEqual({ status: 400, body: { status: 'failed' } });
    await expectDenied(s, description);
  };

  it("a KB-JWT for the verifier's client_id (the QR path's audience), signed request", async () => {
    const s = await start();
    const clientId = decodeJwt((await requestsOf(s))[0].data.request as string).client_id as string;
    await refused(
      s,
      await answerOf(s, { answer: presentBadge({ aud: clientId }) }),
      /aud is not origin:http:\/\/127\.0\.0\.1:\d+ \(OpenID4VP 1\.0 Appendix A\.4/,
    );
  });

  it('a KB-JWT for another origin', async () => {
    const s = await start();
    await refused(
      s,
      await answerOf(s, {
        protocol: 'openid4vp-v1-unsigned',
        answer: presentBadge({ aud: 'origin:https://evil.example' }),
      }),
      /aud is not origin:/,
    );
  });

  it("another request's nonce", async () => {
    const s = await start();
    await refused(s, await answerOf(s, { answer: presentBadge({ nonce: 'another-nonce' }) }), /nonce/);
  });

  it('an answer made for another request (its key, its nonce) replayed on this one', async () => {
    const first = await start();
    const old = await answerOf(first);
    const s = await start();
    await refused(s, old, /the JWE is not encrypted to this request's key/);
  });

  it("a JWE for another key naming this request's kid", async () => {
    const s = await start();
    const key = (await requestsOf(s))[1].data.client_metadata as any;
    const { publicKey } = await generateKeyPair('ECDH-ES', { crv: 'P-256', extractable: true });
    const jwe = await encryptAnswer(await exportJWK(publicKey), { vp_token: {} }, { kid: key.jwks.keys[0].kid });
    await refused(
      s,
      { protocol: 'openid4vp-v1-signed', data: { response: jwe } },
      /does not decrypt with this request's key/,
    );
  });

  it('an unencrypted answer to a dc_api.jwt request', async () => {
    const s = await start();
    const vpToken = await presentBadge({}, s.service)({ ...(await requestsOf(s))[1].data });
    await refused(
      s,
      { protocol: 'openid4vp-v1-unsigned', data: { vp_token: vpToken } },
      /asks for an encrypted response \(dc_api\.jwt\)/,
    );
  });

  it.each([
    ['another protocol', { protocol: 'org-iso-mdoc', data: {} }, /not of a protocol this request offered/],
    ['no data', { protocol: 'openid4vp-v1-signed' }, /no data object/],
    ['not JSON', '{"protocol":', /not of a protocol this request offered/],
    ['not a JWE', { protocol: 'openid4vp-v1-signed', data: { response: 'x' } }, /not a JWE/],
  ])('a malformed answer: %s', async (_name, answer, description) => {
    const s = await start();
    await refused(s, answer, description);
  });

  it('the wallet says the holder declined', async () => {
    const s = await start();
    await refused(
      s,
      { protocol: 'openid4vp-v1-signed', data: { error: 'access_denied' } },
      /the wallet answered access_denied/,
    );
  });
});
