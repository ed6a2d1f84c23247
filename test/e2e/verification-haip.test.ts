import { X509Certificate } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  parseOpenid4vpAuthorizationRequest,
  resolveOpenid4vpAuthorizationRequest,
  createOpenid4vpAuthorizationResponse,
  submitOpenid4vpAuthorizationResponse,
} from '@openid4vc/openid4vp';
import { setGlobalConfig } from '@openid4vc/oauth2';
import { digest } from '@sd-jwt/crypto-nodejs';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { decodeProtectedHeader } from 'jose';
import { createPrivateKey, sign } from 'node:crypto';
import { startTestService, SECRETS, REDIRECT, VERIFIER_CA_PEM, type TestService } from '../helpers/service.js';
import { Browser, makeHint, postForm, pkcePair } from '../helpers/rp.js';
import {
  holderCompletesIssuance,
  newWallet,
  requestFromPage,
  sameDeviceRequestFromPage,
  pushAuthorization,
  redeemCode,
} from '../helpers/flows.js';
import { generateVerifierCertificates } from '../../src/keys/x509.js';
import type { DevWallet, StoredCredential } from '../../src/wallet/holder.js';
import { encryptedAnswerFor, walletCallbacks } from '../helpers/openid4vpHolder.js';
import { encryptAnswer } from '../helpers/encryptAnswer.js';

/**
 * The verifier as OpenID4VC HAIP 1.0 wallets expect it (OpenID4VP 1.0 §5.9.3, §5.10, §8.2, §8.3): signed
 * requests under x509_hash and x509_san_dns, request URIs by GET and POST, encrypted answers, and the
 * same-device response code. The holder here is an independent library, @openid4vc/openid4vp, whose own
 * checks of the client identifier against the certificate run; the chain and signature checks are its
 * wallet callbacks, written here with node:crypto and jose, not with the service's code.
 */
const caCert = new X509Certificate(VERIFIER_CA_PEM);
// the test services listen on loopback http
setGlobalConfig({ allowInsecureUrls: true });

/** An SD-JWT VC presentation by @sd-jwt/sd-jwt-vc (not the dev wallet), every disclosure, bound to the request. */
async function presentSdJwt(credential: StoredCredential, aud: string, nonce: string): Promise<string> {
  const key = createPrivateKey({ key: credential.holderKey as never, format: 'jwk' });
  const sdJwt = new SDJwtVcInstance({
    hasher: digest,
    kbSignAlg: 'ES256',
    kbSigner: (data: string) =>
      sign('sha256', Buffer.from(data), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url'),
  });
  const frame = Object.fromEntries(Object.keys(credential.claims).map((name) => [name, true]));
  return sdJwt.present(credential.credential, frame, {
    kb: { payload: { aud, nonce, iat: Math.floor(Date.now() / 1000) } },
  });
}

interface Started {
  browser: Browser;
  promptUrl: string;
  html: string;
  state: string;
  verifier: string;
}

async function startVerification(t: TestService, scope = 'openid EmployeeBadge'): Promise<Started> {
  const { verifier, challenge } = pkcePair();
  const state = `st-${Math.random().toString(36).slice(2)}`;
  const { authorizeUrl } = await pushAuthorization(t.url, {
    scope,
    state,
    nonce: 'n-1',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  const browser = new Browser(REDIRECT);
  const prompt = await browser.follow(authorizeUrl);
  expect(prompt.html, `expected the prompt at ${prompt.final}`).toBeTruthy();
  return { browser, promptUrl: prompt.final, html: prompt.html!, state, verifier };
}

async function idTokenOf(t: TestService, s: Started, callback: string): Promise<Record<string, unknown>> {
  const q = new URL(callback).searchParams;
  expect(q.get('error'), q.get('error_description') ?? '').toBeNull();
  expect(q.get('state')).toBe(s.state);
  return redeemCode(t.url, { code: q.get('code')!, verifier: s.verifier });
}

async function expectDenied(s: Started, description: RegExp): Promise<void> {
  const done = await s.browser.follow(`${s.promptUrl}/continue`);
  const q = new URL(done.final).searchParams;
  expect(q.get('error'), done.final).toBe('access_denied');
  expect(q.get('error_description')).toMatch(description);
  expect(q.get('code')).toBeNull();
}

async function issueBadge(t: TestService, wallet: DevWallet): Promise<StoredCredential> {
  const { challenge } = pkcePair();
  const hint = await makeHint({
    clientId: 'issuer-pkce',
    secret: SECRETS.pkceIssuer,
    audience: t.url,
    claims: { FirstName: 'Ada', LastName: 'Lovelace', PinCode: '1234' },
  });
  const { authorizeUrl } = await pushAuthorization(t.url, {
    scope: 'openid issue.EmployeeBadge',
    nonce: 'n',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    id_token_hint: hint,
  });
  await holderCompletesIssuance(authorizeUrl, { redirectUri: REDIRECT, wallet, pin: '1234' });
  return wallet.list().at(-1)!;
}

/** The independent holder answers the request behind `link`: GET or POST request URI (with wallet metadata and nonce), encrypted when asked. */
async function independentHolderAnswers(
  link: string,
  credential: StoredCredential,
  trust: X509Certificate,
  method: 'get' | 'post',
) {
  const url = new URL(link);
  if (method === 'get') url.searchParams.delete('request_uri_method');
  const callbacks = walletCallbacks(trust);
  const parsed = parseOpenid4vpAuthorizationRequest({ authorizationRequest: url.href });
  // @openid4vc/openid4vp 0.4.6 POSTs its metadata's members as form fields (not as wallet_metadata) and no
  // wallet_nonce, so the echo is checked with the dev wallet and by hand below
  const resolved = await resolveOpenid4vpAuthorizationRequest({
    authorizationRequestPayload: parsed.params as never,
    ...(method === 'post'
      ? {
          wallet: {
            metadata: {
              vp_formats_supported: { 'dc+sd-jwt': { 'sd-jwt_alg_values': ['ES256'], 'kb-jwt_alg_values': ['ES256'] } },
              authorization_encryption_alg_values_supported: ['ECDH-ES'],
              authorization_encryption_enc_values_supported: ['A256GCM'],
              client_id_prefixes_supported: ['x509_hash', 'x509_san_dns'],
            } as never,
          },
        }
      : {}),
    callbacks,
  });
  const request = resolved.authorizationRequestPayload as Record<string, any>;
  const presentation = await presentSdJwt(credential, request.client_id, request.nonce);
  const response = await createOpenid4vpAuthorizationResponse({
    authorizationRequestPayload: resolved.authorizationRequestPayload,
    authorizationResponsePayload: { vp_token: { [request.dcql_query.credentials[0].id]: [presentation] } },
    jarm: encryptedAnswerFor(request, 'direct_post.jwt'),
    callbacks,
  });
  const submitted = await submitOpenid4vpAuthorizationResponse({
    authorizationRequestPayload: request as never,
    authorizationResponsePayload: response.authorizationResponsePayload,
    ...(response.jarm ? { jarm: { responseJwt: response.jarm.responseJwt } } : {}),
    callbacks,
  });
  return { resolved, request, response, submitted };
}

describe('HAIP 1.0 verification, x509_hash (the default)', () => {
  let t: TestService;
  let wallet: DevWallet;
  let credential: StoredCredential;
  beforeAll(async () => {
    t = await startTestService();
    wallet = await newWallet();
    credential = await issueBadge(t, wallet);
  });
  afterAll(async () => t?.stop());

  for (const method of ['post', 'get'] as const) {
    it(`an independent holder (@openid4vc/openid4vp) answers a signed x509_hash request fetched by ${method.toUpperCase()}, encrypted (OpenID4VP 1.0 §5.9.3, §5.10, §8.3)`, async () => {
      const s = await startVerification(t);
      const link = requestFromPage(s.html);
      expect(new URL(link).searchParams.get('client_id')).toMatch(/^x509_hash:[A-Za-z0-9_-]{43}$/);
      expect(new URL(link).searchParams.get('request_uri_method')).toBe('post');
      const { resolved, request, submitted, response } = await independentHolderAnswers(
        link,
        credential,
        caCert,
        method,
      );
      expect(resolved.client.prefix).toBe('x509_hash');
      expect(request.response_mode).toBe('direct_post.jwt');
      expect(decodeProtectedHeader(response.jarm!.responseJwt)).toMatchObject({
        alg: 'ECDH-ES',
        kid: request.client_metadata.jwks.keys[0].kid,
      });
      expect(submitted.response.status).toBe(200);
      const done = await s.browser.follow(`${s.promptUrl}/continue`);
      const claims = await idTokenOf(t, s, done.final);
      expect(claims).toMatchObject({ FirstName: 'Ada', LastName: 'Lovelace' });
    });
  }

  it('the signed request carries x5c (leaf first, no trust anchor), typ oauth-authz-req+jwt, ES256, and a fresh ECDH-ES key per request (HAIP 1.0)', async () => {
    const keys: string[] = [];
    for (let i = 0; i < 2; i++) {
      const s = await startVerification(t);
      const res = await fetch(new URL(requestFromPage(s.html)).searchParams.get('request_uri')!);
      expect(res.headers.get('content-type')).toMatch(/^application\/oauth-authz-req\+jwt/);
      const jwt = await res.text();
      const header = decodeProtectedHeader(jwt);
      expect(header).toMatchObject({ alg: 'ES256', typ: 'oauth-authz-req+jwt' });
      expect(header.x5c).toHaveLength(1);
      expect(new X509Certificate(Buffer.from(header.x5c![0], 'base64')).checkIssued(caCert)).toBe(true);
      const payload = JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString()) as Record<string, any>;
      const [key] = payload.client_metadata.jwks.keys;
      expect(key).toMatchObject({ kty: 'EC', crv: 'P-256', use: 'enc', alg: 'ECDH-ES' });
      expect(key.d).toBeUndefined();
      expect(payload.client_metadata.encrypted_response_enc_values_supported).toEqual(['A128GCM', 'A256GCM']);
      keys.push(key.x);
    }
    expect(keys[0]).not.toBe(keys[1]);
  });

  it('an unencrypted answer to an encrypted request is refused, and the relying party gets access_denied saying so (§8.3)', async () => {
    const s2 = await startVerification(t);
    const res = await fetch(new URL(requestFromPage(s2.html)).searchParams.get('request_uri')!);
    const payload = JSON.parse(Buffer.from((await res.text()).split('.')[1], 'base64url').toString()) as Record<
      string,
      any
    >;
    const vp = await presentSdJwt(credential, payload.client_id, payload.nonce);
    const answer = await postForm(payload.response_uri, {
      vp_token: JSON.stringify({ EmployeeBadge: [vp] }),
      state: payload.state,
    });
    expect(answer.status).toBe(400);
    expect(answer.body.error_description).toMatch(/encrypted response \(direct_post\.jwt\).*unencrypted/);
    await expectDenied(s2, /unencrypted/);
  });

  it("a JWE to another request's key, a tampered JWE and a replayed JWE are refused; the first two end their flow with access_denied", async () => {
    const a = await startVerification(t);
    const b = await startVerification(t);
    const fetchPayload = async (s: Started) => {
      const res = await fetch(new URL(requestFromPage(s.html)).searchParams.get('request_uri')!);
      return JSON.parse(Buffer.from((await res.text()).split('.')[1], 'base64url').toString()) as Record<string, any>;
    };
    const pa = await fetchPayload(a);
    const pb = await fetchPayload(b);
    const encrypt = (to: Record<string, any>, kid: string, body: Record<string, unknown>) =>
      encryptAnswer(to.client_metadata.jwks.keys[0], body, { kid });
    // encrypted to B's key, naming A's kid: does not decrypt with A's key
    const vpA = await presentSdJwt(credential, pa.client_id, pa.nonce);
    const wrongKey = await encrypt(pb, pa.client_metadata.jwks.keys[0].kid, {
      vp_token: { EmployeeBadge: [vpA] },
      state: pa.state,
    });
    const refused = await postForm(pa.response_uri, { response: wrongKey });
    expect(refused.status).toBe(400);
    expect(refused.body.error_description).toMatch(/does not decrypt with this request's key/);
    await expectDenied(a, /does not decrypt/);

    // B: a tampered ciphertext
    const vpB = await presentSdJwt(credential, pb.client_id, pb.nonce);
    const good = await encrypt(pb, pb.client_metadata.jwks.keys[0].kid, {
      vp_token: { EmployeeBadge: [vpB] },
      state: pb.state,
    });
    const parts = good.split('.');
    parts[3] = `${parts[3].slice(0, -2)}${parts[3].endsWith('AA') ? 'BA' : 'AA'}`;
    const tampered = await postForm(pb.response_uri, { response: parts.join('.') });
    expect(tampered.status).toBe(400);
    await expectDenied(b, /does not decrypt/);
    // and the genuine one, now a replay of an ended request
    const replayed = await postForm(pb.response_uri, { response: good });
    expect(replayed.status).toBe(400);
    expect(replayed.body.error_description).toMatch(/no pending request|already answered/);
  });

  it("same-device: the response URI sends the wallet's browser back with a response_code, and only that browser finishes the flow (§8.2)", async () => {
    const s = await startVerification(t);
    const link = sameDeviceRequestFromPage(s.html);
    expect(link).not.toBe(requestFromPage(s.html));
    const presented = await wallet.present(link);
    expect(presented.status).toBe(200);
    expect(presented.redirectUri).toMatch(new RegExp(`^${s.promptUrl}/return\\?response_code=[A-Za-z0-9_-]{43}$`));
    // not finished until the browser is back: /continue goes back to the prompt, the status says so
    const status = await s.browser.get(`${s.promptUrl}/status`);
    expect(((await status.json()) as { status: string }).status).toBe('returning');
    // another browser with the code (no interaction cookie) gets nowhere, and uses nothing up
    const stranger = await new Browser(REDIRECT).follow(presented.redirectUri!);
    expect(stranger.final.startsWith(REDIRECT)).toBe(false);
    const done = await s.browser.follow(presented.redirectUri!);
    const claims = await idTokenOf(t, s, done.final);
    expect(claims.FirstName).toBe('Ada');
  });

  it('same-device: a wrong response_code ends the flow with access_denied', async () => {
    const s = await startVerification(t);
    const presented = await wallet.present(sameDeviceRequestFromPage(s.html));
    const wrong = new URL(presented.redirectUri!);
    wrong.searchParams.set('response_code', 'A'.repeat(43));
    const done = await s.browser.follow(wrong.href);
    const q = new URL(done.final).searchParams;
    expect(q.get('error')).toBe('access_denied');
    expect(q.get('error_description')).toMatch(/response_code/);
  });

  it('the request URI refuses a POST with malformed wallet_metadata without using up the request (§5.10)', async () => {
    const s = await startVerification(t);
    const requestUri = new URL(requestFromPage(s.html)).searchParams.get('request_uri')!;
    const bad = await postForm(requestUri, { wallet_metadata: '{not json', wallet_nonce: 'n' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: 'invalid_request' });
    expect(bad.body.error_description).toMatch(/^wallet_metadata/);
    const metadata = JSON.stringify({
      issuer: 'https://wallet.example',
      authorization_encryption_enc_values_supported: ['A256GCM'],
    });
    const ok = await fetch(requestUri, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ wallet_nonce: 'abc', wallet_metadata: metadata }),
    });
    expect(ok.status).toBe(200);
    const payload = JSON.parse(Buffer.from((await ok.text()).split('.')[1], 'base64url').toString());
    // echoed (§5.10.1); the wallet names itself, so it is the audience (§5.8); its enc values, of ours
    expect(payload).toMatchObject({ wallet_nonce: 'abc', aud: 'https://wallet.example' });
    expect(payload.client_metadata.encrypted_response_enc_values_supported).toEqual(['A256GCM']);
  });
});

describe('HAIP 1.0 verification, x509_san_dns', () => {
  let t: TestService;
  let wallet: DevWallet;
  let credential: StoredCredential;
  let ca: X509Certificate;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vc-san-'));
    const made = await generateVerifierCertificates('localhost');
    writeFileSync(join(dir, 'chain.pem'), made.chain);
    writeFileSync(join(dir, 'key.pem'), made.key);
    ca = new X509Certificate(made.caCertificate);
    t = await startTestService((base) => ({
      baseUrl: base.replace('127.0.0.1', 'localhost'),
      verifier: { clientIdPrefix: 'x509_san_dns', certificateChain: join(dir, 'chain.pem'), key: join(dir, 'key.pem') },
    }));
    wallet = await newWallet();
    credential = await issueBadge(t, wallet);
  });
  afterAll(async () => t?.stop());

  it('an independent holder answers an x509_san_dns request whose leaf names the response URI host (§5.9.3)', async () => {
    const s = await startVerification(t);
    const link = requestFromPage(s.html);
    expect(new URL(link).searchParams.get('client_id')).toBe('x509_san_dns:localhost');
    const { resolved, submitted } = await independentHolderAnswers(link, credential, ca, 'post');
    expect(resolved.client.prefix).toBe('x509_san_dns');
    expect(submitted.response.status).toBe(200);
    const done = await s.browser.follow(`${s.promptUrl}/continue`);
    expect((await idTokenOf(t, s, done.final)).LastName).toBe('Lovelace');
  });

  it('start-up refuses x509_san_dns with a leaf that does not name the base URL host', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vc-san-bad-'));
    const made = await generateVerifierCertificates('other.example');
    writeFileSync(join(dir, 'chain.pem'), made.chain);
    writeFileSync(join(dir, 'key.pem'), made.key);
    await expect(
      startTestService((base) => ({
        baseUrl: base.replace('127.0.0.1', 'localhost'),
        verifier: {
          clientIdPrefix: 'x509_san_dns',
          certificateChain: join(dir, 'chain.pem'),
          key: join(dir, 'key.pem'),
        },
      })),
    ).rejects.toThrow(
      /x509_san_dns needs a leaf certificate whose subjectAltName dNSName is localhost.*other\.example/,
    );
  });
});
