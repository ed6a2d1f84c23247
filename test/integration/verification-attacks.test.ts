/**
 * Attacks on the wallet-facing side of verification (D10: OpenID4VP 1.0, direct_post, request by
 * reference), through the whole service. Credentials are issued into a dev wallet through the issuance
 * flow; a relying party starts a verification with PAR; a browser lands on the prompt page; the test plays
 * a hostile wallet: it takes the openid4vp:// link from the page, fetches the Request Object itself (once)
 * to learn response_uri, state, nonce and client_id, and posts crafted Authorization Responses built with
 * jose and the stored credential and holder key.
 *
 * For every attack: the wallet gets a 400 JSON answer with `error` and `error_description`, and the browser,
 * continuing from the prompt, arrives at the client's redirect URI with `error=access_denied`, an
 * `error_description` and the request's `state`, never a code.
 */
import { createHash, randomBytes } from 'node:crypto';
import { ES256, digest, generateSalt } from '@sd-jwt/crypto-nodejs';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { calculateJwkThumbprint, decodeJwt, importJWK, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, testConfig, SECRETS, REDIRECT, type TestService } from '../helpers/service.js';
import { Browser, makeHint, pkcePair, postForm } from '../helpers/rp.js';
import {
  holderCompletesIssuance,
  holderCompletesVerification,
  newWallet,
  requestFromPage,
  pushAuthorization,
  redeemCode,
} from '../helpers/flows.js';
import type { DevWallet, StoredCredential } from '../../src/wallet/holder.js';
import { keyPair } from '../helpers/keys.js';

const EXTERNAL_ISSUER = 'https://issuer.test';

let t: TestService;
let url: string;
/** holds one EmployeeBadge (Ada) and one MembershipCard, issued by this service */
let wallet: DevWallet;
/** holds another EmployeeBadge (Mallory), issued by this service */
let otherWallet: DevWallet;
/** the trusted external issuer's signing key (configured in trustedIssuers) */
let externalKey: { privateJwk: JWK; publicJwk: JWK };

const badge = { FirstName: 'Ada', LastName: 'Lovelace', Email: 'ada@example.com' };
const malloryBadge = { FirstName: 'Mallory', LastName: 'Moriarty', Email: 'mallory@example.com' };
const card = { MemberName: 'Ada Lovelace', MemberNumber: 1815 };

const PLAIN = { ...(testConfig(0).verifier as object), responseMode: 'direct_post' };

/** Issues a credential into `into` through the issuance flow (Version 2 PAR, issuer-pkce). */
async function issue(
  into: DevWallet,
  type: 'EmployeeBadge' | 'MembershipCard',
  claims: Record<string, unknown>,
): Promise<void> {
  const { challenge } = pkcePair();
  const hint = await makeHint({ clientId: 'issuer-pkce', secret: SECRETS.pkceIssuer, audience: url, claims });
  const { authorizeUrl } = await pushAuthorization(url, {
    scope: `openid issue.${type}`,
    nonce: 'n',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    id_token_hint: hint,
  });
  await holderCompletesIssuance(authorizeUrl, { redirectUri: REDIRECT, wallet: into });
}

beforeAll(async () => {
  externalKey = await keyPair('ext-1');
  // plain direct_post: these attacks are on the presentation, checked alike after a JWE is decrypted; the
  // attacks on the encryption itself are in test/e2e/verification-haip.test.ts
  t = await startTestService({
    trustedIssuers: [{ issuer: EXTERNAL_ISSUER, jwks: { keys: [externalKey.publicJwk] } }],
    verifier: PLAIN,
  });
  url = t.url;
  wallet = await newWallet();
  otherWallet = await newWallet();
  await issue(wallet, 'EmployeeBadge', badge);
  await issue(wallet, 'MembershipCard', card);
  await issue(otherWallet, 'EmployeeBadge', malloryBadge);
});
afterAll(async () => {
  await t?.stop();
});

const held = (w: DevWallet, type: string): StoredCredential => {
  const found = w.list().find((s) => s.vct?.endsWith(`/${type}`));
  if (!found) throw new Error(`no ${type} in the wallet`);
  return found;
};

// ------------------------------------------------------------------------------------------------
// The relying party, the browser, and the hostile wallet's tools
// ------------------------------------------------------------------------------------------------

/** What the Request Object (fetched once, by the attacker) says. */
interface RequestObject {
  clientId: string;
  responseUri: string;
  nonce: string;
  state: string;
  dcql: { credentials: Array<{ id: string; meta: { vct_values?: string[] } }> };
}

interface Started {
  /** the relying party's state */
  state: string;
  nonce: string;
  verifier?: string;
  clientId: string;
  browser: Browser;
  promptUrl: string;
  link: string;
  request: RequestObject;
}

/** The RP pushes a verification request (Version 2 PAR), the browser lands on the prompt, the attacker fetches the Request Object. */
async function start(
  scope = 'openid EmployeeBadge',
  base = () => url,
  clientId: 'issuer-pkce' | 'issuer-plain' = 'issuer-pkce',
): Promise<Started> {
  const state = `st-${randomBytes(8).toString('hex')}`;
  const nonce = `n-${randomBytes(8).toString('hex')}`;
  const pkce = clientId === 'issuer-pkce' ? pkcePair() : undefined;
  const { authorizeUrl } = await pushAuthorization(base(), {
    client_id: clientId,
    scope,
    state,
    nonce,
    code_challenge: pkce?.challenge,
    code_challenge_method: pkce ? 'S256' : undefined,
  });
  const browser = new Browser(REDIRECT);
  const prompt = await browser.follow(authorizeUrl);
  expect(prompt.res?.status, `expected the prompt page at ${prompt.final}`).toBe(200);
  const link = requestFromPage(prompt.html!);
  const request = await fetchRequestObject(link);
  return { state, nonce, verifier: pkce?.verifier, clientId, browser, promptUrl: prompt.final, link, request };
}

async function fetchRequestObject(link: string): Promise<RequestObject> {
  const ref = new URL(link);
  const requestUri = ref.searchParams.get('request_uri')!;
  const res = await fetch(requestUri);
  expect(res.status, `GET request_uri ${requestUri}`).toBe(200);
  const payload = decodeJwt((await res.text()).trim()) as Record<string, unknown>;
  expect(payload.client_id).toBe(ref.searchParams.get('client_id'));
  expect(payload.response_mode).toBe('direct_post');
  return {
    clientId: payload.client_id as string,
    responseUri: payload.response_uri as string,
    nonce: payload.nonce as string,
    state: payload.state as string,
    dcql: payload.dcql_query as RequestObject['dcql'],
  };
}

/** The parts of an issued SD-JWT (`<issuer-jwt>~<disclosure>~...~`). */
function partsOf(credential: string): { jwt: string; disclosures: string[] } {
  const [jwt, ...rest] = credential.split('~');
  return { jwt, disclosures: rest.filter((p) => p !== '') };
}

const decodeDisclosure = (d: string): unknown[] =>
  JSON.parse(Buffer.from(d, 'base64url').toString('utf8')) as unknown[];
const encodeDisclosure = (value: unknown[]): string => Buffer.from(JSON.stringify(value)).toString('base64url');
const claimOf = (d: string): string => decodeDisclosure(d)[1] as string;

/** A key binding JWT (RFC 9901 §4.3) signed with the holder's private key. */
async function kbJwt(
  holderKey: JWK,
  sdJwt: string,
  claims: { aud: string; nonce: string; iat?: number; typ?: string },
): Promise<string> {
  const key = await importJWK({ ...holderKey, alg: 'ES256' }, 'ES256');
  return new SignJWT({
    aud: claims.aud,
    nonce: claims.nonce,
    iat: claims.iat ?? Math.floor(Date.now() / 1000),
    sd_hash: createHash('sha256').update(sdJwt).digest('base64url'),
  })
    .setProtectedHeader({ alg: 'ES256', typ: claims.typ ?? 'kb+jwt' })
    .sign(key);
}

/** An SD-JWT VC presentation: issuer JWT, the given disclosures, a KB-JWT over them. */
async function presentation(
  issuerJwt: string,
  disclosures: string[],
  holderKey: JWK,
  kb: { aud: string; nonce: string; iat?: number; typ?: string } | 'none',
): Promise<string> {
  const sdJwt = `${issuerJwt}~${disclosures.map((d) => `${d}~`).join('')}`;
  if (kb === 'none') return sdJwt;
  return `${sdJwt}${await kbJwt(holderKey, sdJwt, kb)}`;
}

/** An honest presentation of a stored credential (every disclosure) for the started request. */
async function honest(
  s: Started,
  credential: StoredCredential,
  overrides: Partial<{ aud: string; nonce: string }> = {},
): Promise<string> {
  const { jwt, disclosures } = partsOf(credential.credential);
  return presentation(jwt, disclosures, credential.holderKey, {
    aud: s.request.clientId,
    nonce: s.request.nonce,
    ...overrides,
  });
}

/** POST the Authorization Response (direct_post) to the response_uri. */
function answer(s: Started, fields: Record<string, string | undefined>) {
  return postForm(s.request.responseUri, { state: s.request.state, ...fields });
}

const vpToken = (entries: Record<string, string[]>) => JSON.stringify(entries);

/** The wallet-facing refusal: 400 JSON with error and an error_description (optionally matching). */
function expectRefused(res: { status: number; body: any; headers: Headers }, description?: RegExp): void {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(typeof res.body.error).toBe('string');
  expect(res.body.error).toBe('invalid_request');
  expect(typeof res.body.error_description).toBe('string');
  expect(res.body.error_description.length).toBeGreaterThan(0);
  if (description) expect(res.body.error_description).toMatch(description);
  expect(JSON.stringify(res.body)).not.toMatch(/at .+\.(ts|js):\d+/); // never a stack trace
}

function expectAccepted(res: { status: number; body: any }): void {
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/** The browser continues from the prompt and arrives at the redirect URI with access_denied, a description and the state; never a code. */
async function expectBrowserDenied(s: Started, description?: RegExp): Promise<URLSearchParams> {
  const done = await s.browser.follow(`${s.promptUrl}/continue`);
  expect(
    done.final.startsWith(REDIRECT),
    `expected a redirect to the client, stopped at ${done.final} (${done.res?.status}): ${done.html?.slice(0, 300)}`,
  ).toBe(true);
  const q = new URL(done.final).searchParams;
  expect(q.get('error'), q.toString()).toBe('access_denied');
  expect(q.get('error_description')).toBeTruthy();
  if (description) expect(q.get('error_description')).toMatch(description);
  expect(q.get('state')).toBe(s.state);
  expect(q.get('code')).toBeNull();
  return q;
}

/** The browser continues and arrives at the redirect URI with a code and the state. */
async function expectBrowserCode(s: Started): Promise<string> {
  const done = await s.browser.follow(`${s.promptUrl}/continue`);
  expect(
    done.final.startsWith(REDIRECT),
    `expected a redirect to the client, stopped at ${done.final} (${done.res?.status})`,
  ).toBe(true);
  const q = new URL(done.final).searchParams;
  expect(q.get('error'), q.toString()).toBeNull();
  expect(q.get('state')).toBe(s.state);
  expect(q.get('code')).toBeTruthy();
  return q.get('code')!;
}

const redeem = (s: { clientId: string; verifier?: string }, code: string, base = url) =>
  redeemCode(base, { code, verifier: s.verifier, clientId: s.clientId });

/** Signs an SD-JWT VC as an issuer other than this service would (every attribute disclosable, cnf.jwk). */
async function issueElsewhere(input: {
  issuer: string;
  key: JWK;
  vct: string;
  attributes: Record<string, unknown>;
  iat?: number;
  exp?: number;
}): Promise<{ credential: string; holderKey: JWK }> {
  const holder = await keyPair();
  const sdJwt = new SDJwtVcInstance({
    signer: await ES256.getSigner(input.key),
    signAlg: 'ES256',
    hasher: digest,
    hashAlg: 'sha-256',
    saltGenerator: generateSalt,
  });
  const now = Math.floor(Date.now() / 1000);
  const credential = await sdJwt.issue(
    {
      ...input.attributes,
      iss: input.issuer,
      vct: input.vct,
      iat: input.iat ?? now,
      exp: input.exp ?? now + 3600,
      cnf: { jwk: holder.publicJwk },
    },
    { _sd: Object.keys(input.attributes) } as never,
    { header: { kid: input.key.kid } },
  );
  return { credential, holderKey: holder.privateJwk };
}

const vctOf = (type: string) => `${url}/types/${type}`;

// ------------------------------------------------------------------------------------------------
// The control: a crafted, honest answer is accepted
// ------------------------------------------------------------------------------------------------

describe('control: an honest presentation crafted by hand', () => {
  it('is accepted (200) and the browser returns to the client with a code; the ID token carries the attributes', async () => {
    const s = await start();
    expect(s.request.dcql.credentials.map((c) => c.id)).toEqual(['EmployeeBadge']);
    const res = await answer(s, {
      vp_token: vpToken({ EmployeeBadge: [await honest(s, held(wallet, 'EmployeeBadge'))] }),
    });
    expectAccepted(res);
    const claims = await redeem(s, await expectBrowserCode(s));
    expect(claims).toMatchObject({ ...badge, nonce: s.nonce });
  });

  it('the Request Object can be fetched once: a second GET of the request_uri -> 404 invalid_request_uri', async () => {
    const s = await start();
    const res = await fetch(new URL(s.link).searchParams.get('request_uri')!);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: string }).error).toBe('invalid_request_uri');
  });
});

// ------------------------------------------------------------------------------------------------
// Attacks on one presentation
// ------------------------------------------------------------------------------------------------

describe('attacks on the presentation', () => {
  it('tampered disclosure (FirstName changed, KB-JWT re-made over it) -> 400; browser access_denied', async () => {
    const s = await start();
    const cred = held(wallet, 'EmployeeBadge');
    const { jwt, disclosures } = partsOf(cred.credential);
    const tampered = disclosures.map((d) => {
      const [salt, name, value] = decodeDisclosure(d);
      return name === 'FirstName' ? encodeDisclosure([salt, name, 'Mallory']) : encodeDisclosure([salt, name, value]);
    });
    const vp = await presentation(jwt, tampered, cred.holderKey, { aud: s.request.clientId, nonce: s.request.nonce });
    expectRefused(await answer(s, { vp_token: vpToken({ EmployeeBadge: [vp] }) }), /disclosure/);
    // the prompt page tells the person, without protocol jargon (D10)
    const status = (await (await s.browser.get(`${s.promptUrl}/status`)).json()) as { status: string; message: string };
    expect(status.status).toBe('failed');
    expect(status.message).toMatch(/altered/);
    const q = await expectBrowserDenied(s, /a disclosure does not belong to this credential/);
    expect(q.get('error_description')).not.toContain('Mallory');
  });

  it("a disclosure from another credential (another holder's FirstName spliced in) -> 400; browser access_denied", async () => {
    const s = await start();
    const cred = held(wallet, 'EmployeeBadge');
    const mallory = held(otherWallet, 'EmployeeBadge');
    const { jwt, disclosures } = partsOf(cred.credential);
    const foreignFirstName = partsOf(mallory.credential).disclosures.find((d) => claimOf(d) === 'FirstName')!;
    const spliced = [...disclosures.filter((d) => claimOf(d) !== 'FirstName'), foreignFirstName];
    const vp = await presentation(jwt, spliced, cred.holderKey, { aud: s.request.clientId, nonce: s.request.nonce });
    expectRefused(await answer(s, { vp_token: vpToken({ EmployeeBadge: [vp] }) }), /disclosure/);
    await expectBrowserDenied(s);
  });

  it('a disclosure from another credential added on top of the genuine ones -> 400; browser access_denied', async () => {
    const s = await start();
    const cred = held(wallet, 'EmployeeBadge');
    const { jwt, disclosures } = partsOf(cred.credential);
    const foreign = partsOf(held(wallet, 'MembershipCard').credential).disclosures[0];
    const vp = await presentation(jwt, [...disclosures, foreign], cred.holderKey, {
      aud: s.request.clientId,
      nonce: s.request.nonce,
    });
    expectRefused(await answer(s, { vp_token: vpToken({ EmployeeBadge: [vp] }) }), /disclosure/);
    await expectBrowserDenied(s);
  });

  it('wrong nonce in the key binding JWT -> 400; browser access_denied', async () => {
    const s = await start();
    const vp = await honest(s, held(wallet, 'EmployeeBadge'), { nonce: randomBytes(32).toString('base64url') });
    expectRefused(await answer(s, { vp_token: vpToken({ EmployeeBadge: [vp] }) }), /nonce/);
    await expectBrowserDenied(s, /nonce is not the nonce of this request/);
  });

  it('wrong aud in the key binding JWT (the response_uri without the client_id prefix) -> 400; browser access_denied', async () => {
    const s = await start();
    const vp = await honest(s, held(wallet, 'EmployeeBadge'), { aud: s.request.responseUri });
    expectRefused(await answer(s, { vp_token: vpToken({ EmployeeBadge: [vp] }) }), /aud/);
    await expectBrowserDenied(s, /aud is not this verifier's client_id/);
  });

  it('wrong aud in the key binding JWT (another verifier) -> 400; browser access_denied', async () => {
    const s = await start();
    const vp = await honest(s, held(wallet, 'EmployeeBadge'), { aud: 'redirect_uri:https://evil.example/response' });
    expectRefused(await answer(s, { vp_token: vpToken({ EmployeeBadge: [vp] }) }), /aud/);
    await expectBrowserDenied(s);
  });

  it('missing key binding JWT (the SD-JWT ends with ~) -> 400; browser access_denied', async () => {
    const s = await start();
    const cred = held(wallet, 'EmployeeBadge');
    const { jwt, disclosures } = partsOf(cred.credential);
    const vp = await presentation(jwt, disclosures, cred.holderKey, 'none');
    expect(vp.endsWith('~')).toBe(true);
    expectRefused(await answer(s, { vp_token: vpToken({ EmployeeBadge: [vp] }) }), /key binding/);
    await expectBrowserDenied(s);
  });

  it("key binding JWT signed by a key other than the credential's cnf.jwk -> 400; browser access_denied", async () => {
    const s = await start();
    const cred = held(wallet, 'EmployeeBadge');
    const { jwt, disclosures } = partsOf(cred.credential);
    const thief = await keyPair();
    const vp = await presentation(jwt, disclosures, thief.privateJwk, {
      aud: s.request.clientId,
      nonce: s.request.nonce,
    });
    expectRefused(await answer(s, { vp_token: vpToken({ EmployeeBadge: [vp] }) }), /key binding/);
    await expectBrowserDenied(s);
  });

  it('the same disclosure presented twice -> 400; browser access_denied', async () => {
    const s = await start();
    const cred = held(wallet, 'EmployeeBadge');
    const { jwt, disclosures } = partsOf(cred.credential);
    const vp = await presentation(jwt, [...disclosures, disclosures[0]], cred.holderKey, {
      aud: s.request.clientId,
      nonce: s.request.nonce,
    });
    expectRefused(await answer(s, { vp_token: vpToken({ EmployeeBadge: [vp] }) }), /twice/);
    await expectBrowserDenied(s);
  });

  it('a disclosure stripped after the key binding JWT was made (sd_hash no longer matches) -> 400; browser access_denied', async () => {
    const s = await start();
    const cred = held(wallet, 'EmployeeBadge');
    const { jwt, disclosures } = partsOf(cred.credential);
    const full = await presentation(jwt, disclosures, cred.holderKey, {
      aud: s.request.clientId,
      nonce: s.request.nonce,
    });
    const kb = full.slice(full.lastIndexOf('~') + 1);
    const kept = disclosures.filter((d) => claimOf(d) !== 'Email');
    const vp = `${jwt}~${kept.map((d) => `${d}~`).join('')}${kb}`;
    expectRefused(await answer(s, { vp_token: vpToken({ EmployeeBadge: [vp] }) }), /sd_hash/);
    await expectBrowserDenied(s);
  });

  it('a stale key binding JWT (iat an hour ago) -> 400; browser access_denied', async () => {
    const s = await start();
    const cred = held(wallet, 'EmployeeBadge');
    const { jwt, disclosures } = partsOf(cred.credential);
    const vp = await presentation(jwt, disclosures, cred.holderKey, {
      aud: s.request.clientId,
      nonce: s.request.nonce,
      iat: Math.floor(Date.now() / 1000) - 3600,
    });
    expectRefused(await answer(s, { vp_token: vpToken({ EmployeeBadge: [vp] }) }), /iat|older/);
    await expectBrowserDenied(s);
  });

  it('a key binding JWT from the future (iat in an hour) -> 400; browser access_denied', async () => {
    const s = await start();
    const cred = held(wallet, 'EmployeeBadge');
    const { jwt, disclosures } = partsOf(cred.credential);
    const vp = await presentation(jwt, disclosures, cred.holderKey, {
      aud: s.request.clientId,
      nonce: s.request.nonce,
      iat: Math.floor(Date.now() / 1000) + 3600,
    });
    expectRefused(await answer(s, { vp_token: vpToken({ EmployeeBadge: [vp] }) }), /future/);
    await expectBrowserDenied(s);
  });

  it('a key binding JWT with typ JWT instead of kb+jwt -> 400; browser access_denied', async () => {
    const s = await start();
    const cred = held(wallet, 'EmployeeBadge');
    const { jwt, disclosures } = partsOf(cred.credential);
    const vp = await presentation(jwt, disclosures, cred.holderKey, {
      aud: s.request.clientId,
      nonce: s.request.nonce,
      typ: 'JWT',
    });
    expectRefused(await answer(s, { vp_token: vpToken({ EmployeeBadge: [vp] }) }), /kb\+jwt/);
    await expectBrowserDenied(s);
  });

  it('the issuer-signed payload altered (a plain FirstName claim added, signature kept) -> 400; browser access_denied', async () => {
    const s = await start();
    const cred = held(wallet, 'EmployeeBadge');
    const { jwt, disclosures } = partsOf(cred.credential);
    const [h, p, sig] = jwt.split('.');
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as Record<string, unknown>;
    const altered = `${h}.${Buffer.from(JSON.stringify({ ...payload, FirstName: 'Mallory' })).toString('base64url')}.${sig}`;
    const vp = await presentation(
      altered,
      disclosures.filter((d) => claimOf(d) !== 'FirstName'),
      cred.holderKey,
      { aud: s.request.clientId, nonce: s.request.nonce },
    );
    expectRefused(await answer(s, { vp_token: vpToken({ EmployeeBadge: [vp] }) }), /signature/);
    await expectBrowserDenied(s, /signature/);
  });

  it('an expired credential (trusted external issuer, exp in the past) -> 400; browser access_denied', async () => {
    const s = await start();
    const now = Math.floor(Date.now() / 1000);
    const { credential, holderKey } = await issueElsewhere({
      issuer: EXTERNAL_ISSUER,
      key: externalKey.privateJwk,
      vct: vctOf('EmployeeBadge'),
      attributes: { FirstName: 'Old', LastName: 'Badge' },
      iat: now - 7200,
      exp: now - 3600,
    });
    const { jwt, disclosures } = partsOf(credential);
    const vp = await presentation(jwt, disclosures, holderKey, { aud: s.request.clientId, nonce: s.request.nonce });
    expectRefused(await answer(s, { vp_token: vpToken({ EmployeeBadge: [vp] }) }), /expired/);
    await expectBrowserDenied(s, /expired/);
  });

  it('a credential of a type that was not asked for (MembershipCard answered under the EmployeeBadge query) -> 400; browser access_denied', async () => {
    const s = await start();
    const vp = await honest(s, held(wallet, 'MembershipCard'));
    expectRefused(await answer(s, { vp_token: vpToken({ EmployeeBadge: [vp] }) }), /vct/);
    await expectBrowserDenied(s, /the credential's vct is not the type the query asked for \(.*EmployeeBadge\)/);
  });

  it('a credential of a type that was not asked for (under its own query id, MembershipCard) -> 400; browser access_denied', async () => {
    const s = await start();
    const vp = await honest(s, held(wallet, 'MembershipCard'));
    expectRefused(
      await answer(s, { vp_token: vpToken({ MembershipCard: [vp] }) }),
      /not the id of any credential query/,
    );
    await expectBrowserDenied(s, /vp_token: a key is not the id of any credential query of this request/);
  });

  it('two types asked for, one presented -> 400; browser access_denied', async () => {
    const s = await start('openid EmployeeBadge MembershipCard');
    const vp = await honest(s, held(wallet, 'EmployeeBadge'));
    expectRefused(await answer(s, { vp_token: vpToken({ EmployeeBadge: [vp] }) }), /MembershipCard/);
    await expectBrowserDenied(s);
  });

  it('required attributes withheld (only Email disclosed) -> 400; browser access_denied', async () => {
    const s = await start();
    const cred = held(wallet, 'EmployeeBadge');
    const { jwt, disclosures } = partsOf(cred.credential);
    const vp = await presentation(
      jwt,
      disclosures.filter((d) => claimOf(d) === 'Email'),
      cred.holderKey,
      { aud: s.request.clientId, nonce: s.request.nonce },
    );
    expectRefused(await answer(s, { vp_token: vpToken({ EmployeeBadge: [vp] }) }), /FirstName|LastName/);
    await expectBrowserDenied(s);
  });

  it('the issuer JWT re-signed with alg none (payload unchanged) -> 400; browser access_denied', async () => {
    const s = await start();
    const cred = held(wallet, 'EmployeeBadge');
    const { jwt, disclosures } = partsOf(cred.credential);
    const [h, p] = jwt.split('.');
    const header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8')) as Record<string, unknown>;
    const none = `${Buffer.from(JSON.stringify({ ...header, alg: 'none' })).toString('base64url')}.${p}.`;
    const vp = await presentation(none, disclosures, cred.holderKey, {
      aud: s.request.clientId,
      nonce: s.request.nonce,
    });
    expectRefused(await answer(s, { vp_token: vpToken({ EmployeeBadge: [vp] }) }));
    await expectBrowserDenied(s);
  });
});

// ------------------------------------------------------------------------------------------------
// Attacks on the request: replay, cross-request
// ------------------------------------------------------------------------------------------------

describe('attacks on the request', () => {
  it('a replayed presentation (the same body posted twice): the second is refused; the first flow still completes with a code', async () => {
    const s = await start();
    const body = { vp_token: vpToken({ EmployeeBadge: [await honest(s, held(wallet, 'EmployeeBadge'))] }) };
    expectAccepted(await answer(s, body));
    expectRefused(await answer(s, body), /state/);
    const claims = await redeem(s, await expectBrowserCode(s));
    expect(claims).toMatchObject(badge);
  });

  it('a replayed presentation posted concurrently: exactly one of two parallel posts wins (D14)', async () => {
    const s = await start();
    const body = { vp_token: vpToken({ EmployeeBadge: [await honest(s, held(wallet, 'EmployeeBadge'))] }) };
    const results = await Promise.all([answer(s, body), answer(s, body)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
    await expectBrowserCode(s);
  });

  it("a presentation for another request (made for request A, posted to request B) -> 400; B's browser access_denied; A still completes", async () => {
    const a = await start();
    const b = await start();
    const forA = await honest(a, held(wallet, 'EmployeeBadge'));
    expectRefused(await answer(b, { vp_token: vpToken({ EmployeeBadge: [forA] }) }), /nonce/);
    await expectBrowserDenied(b);
    // request A is untouched: its own answer is accepted and its browser gets a code
    expectAccepted(await answer(a, { vp_token: vpToken({ EmployeeBadge: [forA] }) }));
    await expectBrowserCode(a);
  });

  it("a presentation replayed into a later request (A answered, its presentation posted to B) -> 400; B's browser access_denied", async () => {
    const a = await start();
    const forA = await honest(a, held(wallet, 'EmployeeBadge'));
    expectAccepted(await answer(a, { vp_token: vpToken({ EmployeeBadge: [forA] }) }));
    await expectBrowserCode(a);
    const b = await start();
    expectRefused(await answer(b, { vp_token: vpToken({ EmployeeBadge: [forA] }) }), /nonce/);
    await expectBrowserDenied(b);
  });

  it('the wallet declines (Authorization Error Response, error=access_denied) -> 200 to the wallet; browser access_denied with the reason', async () => {
    const s = await start();
    expectAccepted(await answer(s, { error: 'access_denied', error_description: 'the holder declined' }));
    await expectBrowserDenied(s, /^the wallet answered access_denied$/);
  });

  it('an answer with an unknown state -> 400 and the real request is unaffected', async () => {
    const s = await start();
    const vp = await honest(s, held(wallet, 'EmployeeBadge'));
    expectRefused(
      await postForm(s.request.responseUri, {
        state: randomBytes(32).toString('base64url'),
        vp_token: vpToken({ EmployeeBadge: [vp] }),
      }),
      /state/,
    );
    expectAccepted(await answer(s, { vp_token: vpToken({ EmployeeBadge: [vp] }) }));
    await expectBrowserCode(s);
  });

  it('an answer without state -> 400 and the real request is unaffected', async () => {
    const s = await start();
    const vp = await honest(s, held(wallet, 'EmployeeBadge'));
    expectRefused(await postForm(s.request.responseUri, { vp_token: vpToken({ EmployeeBadge: [vp] }) }), /state/);
    expectAccepted(await answer(s, { vp_token: vpToken({ EmployeeBadge: [vp] }) }));
    await expectBrowserCode(s);
  });
});

// ------------------------------------------------------------------------------------------------
// Malformed and oversized answers
// ------------------------------------------------------------------------------------------------

describe('malformed and oversized vp_token', () => {
  it('an oversized vp_token (> 1 MiB) -> 400; browser access_denied', async () => {
    const s = await start();
    const big = vpToken({ EmployeeBadge: ['a'.repeat(1024 * 1024 + 16)] });
    expect(Buffer.byteLength(big)).toBeGreaterThan(1024 * 1024);
    expectRefused(await answer(s, { vp_token: big }), /vp_token/);
    await expectBrowserDenied(s, /vp_token: exceeds/);
  });

  it('a request body far over the limit (8 MiB) -> 400 (or 413) JSON error, and the request can still be answered', async () => {
    const s = await start();
    const res = await answer(s, { vp_token: 'a'.repeat(8 * 1024 * 1024) });
    expect([400, 413]).toContain(res.status);
    expect(typeof res.body.error).toBe('string');
    // the body was never read, so its state was not consumed: the genuine wallet still answers
    expectAccepted(
      await answer(s, { vp_token: vpToken({ EmployeeBadge: [await honest(s, held(wallet, 'EmployeeBadge'))] }) }),
    );
    await expectBrowserCode(s);
  });

  const malformed: Array<{ name: string; vpToken: string | undefined; description: RegExp }> = [
    { name: 'not JSON', vpToken: 'eyJhbGciOi.not-json~', description: /JSON/ },
    { name: 'JSON of the wrong shape: an array', vpToken: '["a~b~"]', description: /object/ },
    { name: 'JSON of the wrong shape: a string', vpToken: '"a~b~"', description: /object/ },
    { name: 'JSON of the wrong shape: null', vpToken: 'null', description: /object/ },
    {
      name: 'JSON of the wrong shape: the presentation not in an array',
      vpToken: '{"EmployeeBadge":"a~b~"}',
      description: /array/,
    },
    { name: 'JSON of the wrong shape: an empty array', vpToken: '{"EmployeeBadge":[]}', description: /array/ },
    {
      name: 'JSON of the wrong shape: a number as presentation',
      vpToken: '{"EmployeeBadge":[42]}',
      description: /string/,
    },
    {
      name: 'JSON of the wrong shape: an object as presentation',
      vpToken: '{"EmployeeBadge":[{"vp":"a~b~"}]}',
      description: /string/,
    },
    {
      name: 'JSON of the wrong shape: two presentations for one query',
      vpToken: '{"EmployeeBadge":["a~b~","c~d~"]}',
      description: /one presentation/,
    },
    { name: 'an empty object (no query answered)', vpToken: '{}', description: /EmployeeBadge/ },
    { name: 'a __proto__ key', vpToken: '{"__proto__":["a~b~"],"EmployeeBadge":["a~b~"]}', description: /vp_token/ },
    {
      name: 'a presentation that is not an SD-JWT',
      vpToken: '{"EmployeeBadge":["not-an-sd-jwt"]}',
      description: /SD-JWT/,
    },
    {
      name: 'a presentation whose issuer JWT is garbage',
      vpToken: '{"EmployeeBadge":["garbage~garbage~garbage"]}',
      description: /not a JWT/,
    },
    { name: 'vp_token missing', vpToken: undefined, description: /vp_token/ },
  ];

  it.each(malformed)(
    'malformed vp_token: $name -> 400; browser access_denied',
    async ({ vpToken: raw, description }) => {
      const s = await start();
      expectRefused(await answer(s, { vp_token: raw }), description);
      await expectBrowserDenied(s);
    },
  );

  it('a response that is not form-encoded (JSON body) -> 400 invalid_request', async () => {
    const s = await start();
    const res = await fetch(s.request.responseUri, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ state: s.request.state, vp_token: { EmployeeBadge: ['x'] } }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: string; error_description: string };
    expect(body.error).toBe('invalid_request');
    expect(body.error_description).toMatch(/x-www-form-urlencoded/);
  });
});

// ------------------------------------------------------------------------------------------------
// External issuers (D10: trusted issuers configured by the operator)
// ------------------------------------------------------------------------------------------------

describe('credentials of other issuers', () => {
  it("an external trusted issuer's credential (wallet.import) verifies end to end and its attributes reach the ID token", async () => {
    const external = await newWallet();
    const { credential, holderKey } = await issueElsewhere({
      issuer: EXTERNAL_ISSUER,
      key: externalKey.privateJwk,
      vct: vctOf('MembershipCard'),
      attributes: { MemberName: 'Grace Hopper', MemberNumber: 1906 },
    });
    await external.import(credential, holderKey);
    const s = { clientId: 'issuer-plain', state: 'external-state', nonce: `n-${randomBytes(8).toString('hex')}` };
    const { authorizeUrl } = await pushAuthorization(url, {
      client_id: 'issuer-plain',
      scope: 'openid MembershipCard',
      state: s.state,
      nonce: s.nonce,
    });
    const { callbackUrl, presented } = await holderCompletesVerification(authorizeUrl, {
      redirectUri: REDIRECT,
      wallet: external,
    });
    expect(presented.status, JSON.stringify(presented.body)).toBe(200);
    const q = new URL(callbackUrl).searchParams;
    expect(q.get('error'), q.toString()).toBeNull();
    expect(q.get('state')).toBe(s.state);
    const claims = await redeem(s, q.get('code')!);
    expect(claims).toMatchObject({ MemberName: 'Grace Hopper', MemberNumber: 1906, nonce: s.nonce });
    const { d: _d, ...holderPublic } = holderKey;
    expect(claims.sub).toBe(await calculateJwkThumbprint(holderPublic)); // D2
  });

  it("the same credential signed by an unknown key (the trusted issuer's kid, another key) -> 400; browser access_denied", async () => {
    const external = await newWallet();
    const forged = await keyPair('ext-1');
    const { credential, holderKey } = await issueElsewhere({
      issuer: EXTERNAL_ISSUER,
      key: forged.privateJwk,
      vct: vctOf('MembershipCard'),
      attributes: { MemberName: 'Grace Hopper', MemberNumber: 1906 },
    });
    await external.import(credential, holderKey);
    const pushed = await postForm(`${url}/v2.0/oidc/par`, {
      client_id: 'issuer-plain',
      client_secret: SECRETS.plainIssuer,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid MembershipCard',
      state: 'forged-state',
      nonce: 'n',
    });
    const { callbackUrl, presented } = await holderCompletesVerification(
      `${url}/v2.0/oidc/authorize?client_id=issuer-plain&request_uri=${encodeURIComponent(pushed.body.request_uri)}`,
      { redirectUri: REDIRECT, wallet: external },
    );
    expect(presented.status).toBe(400);
    expect((presented.body as { error: string }).error).toBe('invalid_request');
    expect((presented.body as { error_description: string }).error_description).toMatch(/signature/);
    const q = new URL(callbackUrl).searchParams;
    expect(q.get('error')).toBe('access_denied');
    expect(q.get('error_description')).toMatch(/signature/);
    expect(q.get('state')).toBe('forged-state');
    expect(q.get('code')).toBeNull();
  });

  it('the same credential signed by an unknown key with an unknown kid -> 400; browser access_denied', async () => {
    const s = await start('openid MembershipCard', () => url, 'issuer-plain');
    const forged = await keyPair('ext-2');
    const { credential, holderKey } = await issueElsewhere({
      issuer: EXTERNAL_ISSUER,
      key: forged.privateJwk,
      vct: vctOf('MembershipCard'),
      attributes: { MemberName: 'Grace Hopper', MemberNumber: 1906 },
    });
    const { jwt, disclosures } = partsOf(credential);
    const vp = await presentation(jwt, disclosures, holderKey, { aud: s.request.clientId, nonce: s.request.nonce });
    expectRefused(await answer(s, { vp_token: vpToken({ MembershipCard: [vp] }) }), /key/);
    await expectBrowserDenied(s);
  });

  it('a credential of an untrusted issuer (iss not configured) -> 400; browser access_denied', async () => {
    const s = await start('openid MembershipCard', () => url, 'issuer-plain');
    const rogue = await keyPair('rogue-1');
    const { credential, holderKey } = await issueElsewhere({
      issuer: 'https://rogue.test',
      key: rogue.privateJwk,
      vct: vctOf('MembershipCard'),
      attributes: { MemberName: 'Grace Hopper', MemberNumber: 1906 },
    });
    const { jwt, disclosures } = partsOf(credential);
    const vp = await presentation(jwt, disclosures, holderKey, { aud: s.request.clientId, nonce: s.request.nonce });
    expectRefused(await answer(s, { vp_token: vpToken({ MembershipCard: [vp] }) }), /not trusted/);
    await expectBrowserDenied(s, /is not trusted/);
  });
});

// ------------------------------------------------------------------------------------------------
// An abandoned request
// ------------------------------------------------------------------------------------------------

describe('an abandoned request (lifetimes.offer = 2 s)', () => {
  let short: TestService;
  beforeAll(async () => {
    short = await startTestService({ lifetimes: { offer: 2 }, verifier: PLAIN });
  });
  afterAll(async () => {
    await short?.stop();
  });

  it('the holder never answers: after the request expires the browser is redirected with access_denied mentioning expiry; a late answer is refused', async () => {
    const s = await start('openid EmployeeBadge', () => short.url);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    // a late wallet answer is refused
    const cred = held(wallet, 'EmployeeBadge');
    const { jwt, disclosures } = partsOf(cred.credential);
    const vp = await presentation(jwt, disclosures, cred.holderKey, {
      aud: s.request.clientId,
      nonce: s.request.nonce,
    });
    expectRefused(await answer(s, { vp_token: vpToken({ EmployeeBadge: [vp] }) }), /state/);
    const status = await s.browser.get(`${s.promptUrl}/status`);
    expect(((await status.json()) as { status: string }).status).toBe('expired');
    await expectBrowserDenied(s, /expire/);
  });

  it('a request object not yet fetched expires too: GET request_uri after the lifetime -> 404', async () => {
    const state = 'abandoned';
    const pushed = await postForm(`${short.url}/v2.0/oidc/par`, {
      client_id: 'issuer-plain',
      client_secret: SECRETS.plainIssuer,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid MembershipCard',
      state,
      nonce: 'n',
    });
    const browser = new Browser(REDIRECT);
    const prompt = await browser.follow(
      `${short.url}/v2.0/oidc/authorize?client_id=issuer-plain&request_uri=${encodeURIComponent(pushed.body.request_uri)}`,
    );
    const link = requestFromPage(prompt.html!);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const res = await fetch(new URL(link).searchParams.get('request_uri')!);
    expect(res.status).toBe(404);
    const done = await browser.follow(`${prompt.final}/continue`);
    const q = new URL(done.final).searchParams;
    expect(q.get('error')).toBe('access_denied');
    expect(q.get('error_description')).toMatch(/expire/);
    expect(q.get('state')).toBe(state);
  });
});
