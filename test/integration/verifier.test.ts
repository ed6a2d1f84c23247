import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ES256, digest, generateSalt } from '@sd-jwt/crypto-nodejs';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import Koa from 'koa';
import { calculateJwkThumbprint, decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CredentialType, TrustedIssuer } from '../../src/config/schema.js';
import { createWalletIssuer, type WalletIssuer } from '../../src/issuance/walletIssuer.js';
import type { Store } from '../../src/store/types.js';
import { createVerifier, type Verifier } from '../../src/verification/verifier.js';
import { outboundFromConfig } from '../../src/http/outboundFetch.js';
import { DevWallet, WalletError } from '../../src/wallet/holder.js';
import { testStore } from '../helpers/stores.js';
import { keyPair, type TestKeyPair as KeyPair } from '../helpers/keys.js';

const employeeBadge = {
  name: 'EmployeeBadge',
  displayName: 'Employee badge',
  validity: 'P365D',
  attributes: {
    FirstName: { type: 'string', required: true },
    LastName: { type: 'string', required: true },
    Email: { type: 'email', required: false },
  },
} satisfies CredentialType;

const membership = {
  name: 'Membership',
  validity: 'P365D',
  attributes: { MemberId: { type: 'string', required: true }, Level: { type: 'string', required: false } },
} satisfies CredentialType;

/** A type whose credentials come from issuers other than this service. */
const externalPass = {
  name: 'ExternalPass',
  vct: 'https://credentials.example/ExternalPass',
  validity: 'P365D',
  attributes: { PassNumber: { type: 'string', required: true } },
} satisfies CredentialType;

const badgeAttributes = { FirstName: 'Ada', LastName: 'Lovelace', Email: 'ada@example.com' };

interface Server {
  baseUrl: string;
  server: http.Server;
  close(): Promise<void>;
}

async function listen(): Promise<Server> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    server,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Another SD-JWT VC issuer: its own ES256 key, its metadata at /.well-known/jwt-vc-issuer/issuer, counting fetches. */
interface ExternalIssuer extends Server {
  issuer: string;
  key: KeyPair;
  metadataFetches: number;
}

async function startExternalIssuer(): Promise<ExternalIssuer> {
  const listening = await listen();
  const key = await keyPair('external-key-1');
  const external: ExternalIssuer = { ...listening, issuer: `${listening.baseUrl}/issuer`, key, metadataFetches: 0 };
  listening.server.on('request', (req, res) => {
    if (req.url === '/.well-known/jwt-vc-issuer/issuer') {
      external.metadataFetches++;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ issuer: external.issuer, jwks: { keys: [key.publicJwk] } }));
      return;
    }
    res.statusCode = 404;
    res.end();
  });
  return external;
}

/** Issues an SD-JWT VC as an issuer other than this service would, with @sd-jwt/sd-jwt-vc. */
async function issueElsewhere(input: {
  issuer: string;
  key: KeyPair;
  vct: string;
  attributes: Record<string, unknown>;
}) {
  const holder = await keyPair('holder');
  const { kid: _kid, alg: _alg, ...holderPublic } = holder.publicJwk;
  const sdJwt = new SDJwtVcInstance({
    signer: await ES256.getSigner(input.key.privateJwk),
    signAlg: 'ES256',
    hasher: digest,
    hashAlg: 'sha-256',
    saltGenerator: generateSalt,
  });
  const now = Math.floor(Date.now() / 1000);
  const credential = await sdJwt.issue(
    { ...input.attributes, iss: input.issuer, vct: input.vct, iat: now, exp: now + 3600, cnf: { jwk: holderPublic } },
    { _sd: Object.keys(input.attributes) } as never,
    { header: { kid: input.key.privateJwk.kid } },
  );
  const { kid: _k, alg: _a, ...holderPrivate } = holder.privateJwk;
  return { credential, holderKey: holderPrivate };
}

interface Running extends Server {
  issuer: WalletIssuer;
  verifier: Verifier;
  store: Store;
}

/** A real Koa app on 127.0.0.1: the wallet issuer and the verifier, one store (the test run's), the same credential keys. */
async function startService(
  opts: { trustedIssuers?: TrustedIssuer[]; requestLifetime?: number } = {},
): Promise<Running> {
  const listening = await listen();
  const { baseUrl } = listening;
  const credentialKey = await keyPair('credential-key-1');
  const store = await testStore();
  const credentialTypes: CredentialType[] = [employeeBadge, membership, externalPass];
  const issuer = createWalletIssuer({
    baseUrl,
    path: 'wallet',
    store,
    credentialKeys: { keys: [credentialKey.privateJwk] },
    credentialTypes,
    offerLifetime: 120,
    pinAttempts: 3,
    cookieKeys: ['test-cookie-key-0123456789abcdef'],
  });
  // the rules of a service on this (loopback) base URL with outboundFetch left out: loopback allowed
  const outbound = outboundFromConfig({ baseUrl, outboundFetch: {} });
  const verifier = createVerifier({
    baseUrl,
    store,
    outbound,
    credentialTypes,
    trustedIssuers: opts.trustedIssuers ?? [],
    ownIssuer: { issuer: issuer.credentialIssuer, jwks: { keys: [credentialKey.publicJwk] } },
    // the development configuration: unsigned requests, plain direct_post (the HAIP one: verification-haip.test.ts)
    clientIdentity: {
      prefix: 'redirect_uri',
      clientId: `redirect_uri:${baseUrl}/vp/response`,
      responseMode: 'direct_post',
      trustAnchors: [],
    },
    requestLifetime: opts.requestLifetime ?? 120,
  });
  const app = new Koa();
  app.use(issuer.middleware);
  app.use(verifier.middleware);
  app.use((ctx) => {
    ctx.status = 404;
    ctx.body = { error: 'not_found' };
  });
  listening.server.on('request', app.callback());
  return {
    ...listening,
    issuer,
    verifier,
    store,
    close: async () => {
      await listening.close();
      await store.close();
      await outbound.close();
    },
  };
}

let walletDir: string;
let counter = 0;
beforeAll(async () => {
  walletDir = await mkdtemp(join(tmpdir(), 'dev-wallet-vp-'));
});
afterAll(async () => {
  await rm(walletDir, { recursive: true, force: true });
});
const openWallet = () => DevWallet.open(join(walletDir, `wallet-${++counter}.json`));
const requestId = () => `v2.req-${++counter}_${Date.now()}`;

async function issueInto(
  running: Running,
  wallet: DevWallet,
  credentialType: string,
  attributes: Record<string, unknown>,
) {
  const { offerUri } = await running.issuer.createOffer({
    stepId: `step-${++counter}`,
    credentialType,
    attributes,
    serialNumber: `SN-${counter}`,
    credentialExpiresAt: new Date(Date.now() + 86_400_000),
  });
  return wallet.receive(offerUri);
}

/** A fetch that records the form bodies posted to the response_uri, and can rewrite them. */
function recording(rewrite?: (form: URLSearchParams) => URLSearchParams) {
  const posted: string[] = [];
  const fetchImpl: typeof fetch = async (input, init) => {
    if (init?.method === 'POST' && String(input).endsWith('/vp/response')) {
      const form = rewrite ? rewrite(new URLSearchParams(String(init.body))) : new URLSearchParams(String(init.body));
      posted.push(form.toString());
      return fetch(input, { ...init, body: form });
    }
    return fetch(input, init);
  };
  return { fetchImpl, posted };
}

async function postResponse(running: Running, body: string, contentType = 'application/x-www-form-urlencoded') {
  const response = await fetch(`${running.baseUrl}/vp/response`, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body,
  });
  return { status: response.status, body: (await response.json()) as Record<string, string> };
}

describe('verifier with the dev wallet', () => {
  let running: Running;
  let external: ExternalIssuer;
  let inlineKey: KeyPair;
  const inlineIssuer = 'https://inline-issuer.example';

  beforeAll(async () => {
    external = await startExternalIssuer();
    inlineKey = await keyPair('inline-key-1');
    running = await startService({
      trustedIssuers: [
        { issuer: external.issuer },
        { issuer: inlineIssuer, jwks: { keys: [inlineKey.publicJwk as Record<string, unknown>] } },
      ],
    });
  });
  afterAll(async () => {
    await running.close();
    await external.close();
  });

  it('verifies one type: request by reference, scanned, presented, done, with the claims and a thumbprint sub', async () => {
    const wallet = await openWallet();
    const stored = await issueInto(running, wallet, 'EmployeeBadge', badgeAttributes);
    const id = requestId();
    const { walletUri, expiresAt } = await running.verifier.createRequest({
      requestId: id,
      credentialTypes: ['EmployeeBadge'],
    });
    expect(expiresAt).toBeGreaterThan(Date.now() / 1000 + 100);
    expect(await running.verifier.requestStatus(id)).toEqual({ status: 'pending' });
    expect(await running.verifier.result(id)).toBeUndefined();

    const link = new URL(walletUri);
    expect(link.protocol).toBe('openid4vp:');
    expect(link.searchParams.get('client_id')).toBe(`redirect_uri:${running.baseUrl}/vp/response`);
    expect(running.verifier.clientId).toBe(`redirect_uri:${running.baseUrl}/vp/response`);
    expect(link.searchParams.get('request_uri')).toMatch(
      new RegExp(`^${running.baseUrl}/vp/request/[A-Za-z0-9_-]{43}$`),
    );

    const seen: string[] = [];
    let requestObject = '';
    const watching: typeof fetch = async (input, init) => {
      if (init?.method === 'POST') seen.push((await running.verifier.requestStatus(id)).status);
      const response = await fetch(input, init);
      if (String(input).includes('/vp/request/')) requestObject = await response.clone().text();
      return response;
    };
    const answer = await wallet.present(walletUri, { fetch: watching });
    expect(answer).toEqual({ status: 200, body: {} });
    // the wallet POSTs to the request URI (request_uri_method=post) while pending, then answers once scanned
    expect(seen).toEqual(['pending', 'scanned']);

    expect(decodeProtectedHeader(requestObject)).toEqual({ alg: 'none', typ: 'oauth-authz-req+jwt' });
    const payload = decodeJwt(requestObject);
    expect(payload).toMatchObject({
      response_type: 'vp_token',
      response_mode: 'direct_post',
      response_uri: `${running.baseUrl}/vp/response`,
      client_id: running.verifier.clientId,
    });
    expect(payload.state).not.toContain(id);
    expect(payload.dcql_query).toEqual({
      credentials: [
        {
          id: 'EmployeeBadge',
          format: 'dc+sd-jwt',
          meta: { vct_values: [`${running.baseUrl}/types/EmployeeBadge`] },
          claims: [
            { id: 'FirstName', path: ['FirstName'] },
            { id: 'LastName', path: ['LastName'] },
            { id: 'Email', path: ['Email'] },
          ],
          claim_sets: [
            ['FirstName', 'LastName', 'Email'],
            ['FirstName', 'LastName'],
          ],
        },
      ],
    });

    expect(await running.verifier.requestStatus(id)).toMatchObject({ status: 'done' });
    const { d: _d, ...holderPublic } = stored.holderKey;
    expect(await running.verifier.result(id)).toEqual({
      holderKeyThumbprint: await calculateJwkThumbprint(holderPublic),
      issuer: running.issuer.credentialIssuer,
      claims: badgeAttributes,
      types: ['EmployeeBadge'],
      issuers: { EmployeeBadge: { format: 'dc+sd-jwt', iss: running.issuer.credentialIssuer } },
    });
  });

  it('verifies two types at once, each presented from its own credential', async () => {
    const wallet = await openWallet();
    const badge = await issueInto(running, wallet, 'EmployeeBadge', { FirstName: 'Grace', LastName: 'Hopper' });
    await issueInto(running, wallet, 'Membership', { MemberId: 'M-42', Level: 'gold' });
    const id = requestId();
    const { walletUri } = await running.verifier.createRequest({
      requestId: id,
      credentialTypes: ['EmployeeBadge', 'Membership'],
    });
    const { fetchImpl, posted } = recording();
    expect(await wallet.present(walletUri, { fetch: fetchImpl })).toEqual({ status: 200, body: {} });
    const vpToken = JSON.parse(new URLSearchParams(posted[0]).get('vp_token')!) as Record<string, string[]>;
    expect(Object.keys(vpToken)).toEqual(['EmployeeBadge', 'Membership']);
    expect(vpToken.EmployeeBadge).toHaveLength(1);

    const result = await running.verifier.result(id);
    const { d: _d, ...holderPublic } = badge.holderKey;
    expect(result).toEqual({
      holderKeyThumbprint: await calculateJwkThumbprint(holderPublic),
      issuer: running.issuer.credentialIssuer,
      claims: { FirstName: 'Grace', LastName: 'Hopper', MemberId: 'M-42', Level: 'gold' },
      types: ['EmployeeBadge', 'Membership'],
      issuers: {
        EmployeeBadge: { format: 'dc+sd-jwt', iss: running.issuer.credentialIssuer },
        Membership: { format: 'dc+sd-jwt', iss: running.issuer.credentialIssuer },
      },
    });
  });

  it('refuses a replayed presentation: a request is answered once', async () => {
    const wallet = await openWallet();
    await issueInto(running, wallet, 'EmployeeBadge', badgeAttributes);
    const id = requestId();
    const { walletUri } = await running.verifier.createRequest({ requestId: id, credentialTypes: ['EmployeeBadge'] });
    const { fetchImpl, posted } = recording();
    expect((await wallet.present(walletUri, { fetch: fetchImpl })).status).toBe(200);

    const replay = await postResponse(running, posted[0]);
    expect(replay).toEqual({
      status: 400,
      body: {
        error: 'invalid_request',
        error_description: 'state: unknown, expired or already answered: start again from the app',
      },
    });
    expect(await running.verifier.requestStatus(id)).toMatchObject({ status: 'done' });

    // the request object was single use as well
    const again = await fetch(new URL(walletUri).searchParams.get('request_uri')!);
    expect(again.status).toBe(404);
  });

  it('refuses a presentation made for another request, and that request ends as failed', async () => {
    const wallet = await openWallet();
    await issueInto(running, wallet, 'EmployeeBadge', badgeAttributes);
    const a = requestId();
    const b = requestId();
    const { walletUri: uriA } = await running.verifier.createRequest({
      requestId: a,
      credentialTypes: ['EmployeeBadge'],
    });
    const { walletUri: uriB } = await running.verifier.createRequest({
      requestId: b,
      credentialTypes: ['EmployeeBadge'],
    });
    const stateB = decodeJwt(await (await fetch(new URL(uriB).searchParams.get('request_uri')!)).text())
      .state as string;

    // the wallet answers A, the answer is delivered as B's
    const { fetchImpl } = recording((form) => {
      form.set('state', stateB);
      return form;
    });
    const answer = await wallet.present(uriA, { fetch: fetchImpl });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      error: 'invalid_request',
      error_description: expect.stringContaining('nonce'),
    });
    expect(await running.verifier.requestStatus(b)).toEqual({
      status: 'failed',
      message: "The wallet's proof was made for another request.",
      say: { id: 'refusal.wrong_nonce' },
      description: expect.stringContaining('nonce is not the nonce of this request'),
    });
    expect(await running.verifier.result(b)).toBeUndefined();
    expect(await running.verifier.requestStatus(a)).toEqual({ status: 'scanned' });
  });

  it('tells the verifier when the wallet has nothing to present, and the request fails', async () => {
    const wallet = await openWallet();
    const id = requestId();
    const { walletUri } = await running.verifier.createRequest({ requestId: id, credentialTypes: ['Membership'] });
    await expect(wallet.present(walletUri)).rejects.toThrow(WalletError);
    expect(await running.verifier.requestStatus(id)).toEqual({
      status: 'failed',
      message: 'The request was declined in the wallet, or the wallet has no matching credential.',
      say: { id: 'status.walletDeclined' },
      description: 'the wallet answered access_denied',
    });
  });

  it('verifies a credential of an external trusted issuer found through its jwt-vc-issuer metadata, and caches its keys', async () => {
    const wallet = await openWallet();
    const { credential, holderKey } = await issueElsewhere({
      issuer: external.issuer,
      key: external.key,
      vct: externalPass.vct,
      attributes: { PassNumber: 'P-7' },
    });
    const imported = await wallet.import(credential, holderKey);
    expect(imported).toMatchObject({ issuer: external.issuer, vct: externalPass.vct, claims: { PassNumber: 'P-7' } });

    const before = external.metadataFetches;
    for (let i = 0; i < 2; i++) {
      const id = requestId();
      const { walletUri } = await running.verifier.createRequest({ requestId: id, credentialTypes: ['ExternalPass'] });
      expect(await wallet.present(walletUri)).toEqual({ status: 200, body: {} });
      expect(await running.verifier.result(id)).toMatchObject({
        claims: { PassNumber: 'P-7' },
        types: ['ExternalPass'],
      });
    }
    expect(external.metadataFetches - before).toBeLessThanOrEqual(1);
  });

  it('refuses the same credential signed by a key the external issuer does not publish', async () => {
    for (const [kid, reason] of [
      ['external-key-1', 'signature'],
      ['rogue-key', 'kid'],
    ] as const) {
      const wallet = await openWallet();
      const { credential, holderKey } = await issueElsewhere({
        issuer: external.issuer,
        key: await keyPair(kid),
        vct: externalPass.vct,
        attributes: { PassNumber: 'P-7' },
      });
      await wallet.import(credential, holderKey);
      const id = requestId();
      const { walletUri } = await running.verifier.createRequest({ requestId: id, credentialTypes: ['ExternalPass'] });
      const answer = await wallet.present(walletUri);
      expect(answer.status, reason).toBe(400);
      expect(answer.body, reason).toMatchObject({
        error: 'invalid_request',
        error_description: expect.stringMatching(/^vp_token\.ExternalPass: /),
      });
      expect(await running.verifier.requestStatus(id), reason).toMatchObject({ status: 'failed' });
    }
  });

  it('verifies a credential of a trusted issuer given with inline jwks', async () => {
    const wallet = await openWallet();
    const { credential, holderKey } = await issueElsewhere({
      issuer: inlineIssuer,
      key: inlineKey,
      vct: externalPass.vct,
      attributes: { PassNumber: 'P-9' },
    });
    await wallet.import(credential, holderKey);
    const id = requestId();
    const { walletUri } = await running.verifier.createRequest({ requestId: id, credentialTypes: ['ExternalPass'] });
    expect(await wallet.present(walletUri)).toEqual({ status: 200, body: {} });
    expect(await running.verifier.result(id)).toMatchObject({ claims: { PassNumber: 'P-9' } });
  });

  it('refuses a credential of an issuer that is not trusted', async () => {
    const wallet = await openWallet();
    const { credential, holderKey } = await issueElsewhere({
      issuer: 'https://untrusted.example',
      key: await keyPair('u'),
      vct: externalPass.vct,
      attributes: { PassNumber: 'P-1' },
    });
    await wallet.import(credential, holderKey);
    const id = requestId();
    const { walletUri } = await running.verifier.createRequest({ requestId: id, credentialTypes: ['ExternalPass'] });
    const answer = await wallet.present(walletUri);
    expect(answer).toEqual({
      status: 400,
      body: {
        error: 'invalid_request',
        error_description: "vp_token.ExternalPass: the credential's issuer (iss) is not trusted",
      },
    });
    expect(await running.verifier.requestStatus(id)).toEqual({
      status: 'failed',
      message: 'The credential was issued by an issuer this service does not trust.',
      say: { id: 'refusal.issuer_not_trusted' },
      description: expect.stringContaining('is not trusted'),
    });
  });

  it('answers malformed and oversized responses with 400 invalid_request naming the field', async () => {
    const wallet = await openWallet();
    await issueInto(running, wallet, 'EmployeeBadge', badgeAttributes);

    expect(await postResponse(running, '{"vp_token":{}}', 'application/json')).toMatchObject({
      status: 400,
      body: { error: 'invalid_request' },
    });
    expect(await postResponse(running, 'vp_token=%7B%7D')).toEqual({
      status: 400,
      body: { error: 'invalid_request', error_description: 'state: required' },
    });
    expect(await postResponse(running, 'vp_token=%7B%7D&state=guess')).toMatchObject({
      status: 400,
      body: { error_description: 'state: unknown, expired or already answered: start again from the app' },
    });
    const oversizedBody = await postResponse(running, `state=x&vp_token=${'a'.repeat(4 * 1024 * 1024)}`);
    expect(oversizedBody).toMatchObject({
      status: 400,
      body: { error: 'invalid_request', error_description: expect.stringContaining('exceeds') },
    });

    for (const [vpToken, field] of [
      ['{not json', 'vp_token: not valid JSON'],
      [JSON.stringify({ EmployeeBadge: ['x'.repeat(1024 * 1024 + 1)] }), 'vp_token: exceeds'],
      [JSON.stringify({ EmployeeBadge: 'a~b~' }), 'vp_token.EmployeeBadge: must be a non-empty array'],
    ]) {
      const id = requestId();
      const { walletUri } = await running.verifier.createRequest({ requestId: id, credentialTypes: ['EmployeeBadge'] });
      const state = decodeJwt(await (await fetch(new URL(walletUri).searchParams.get('request_uri')!)).text())
        .state as string;
      const answer = await postResponse(running, new URLSearchParams({ state, vp_token: vpToken }).toString());
      expect(answer.status, field).toBe(400);
      expect(answer.body.error, field).toBe('invalid_request');
      expect(answer.body.error_description, field).toContain(field);
      expect(await running.verifier.requestStatus(id), field).toMatchObject({ status: 'failed' });
    }
  });

  it('serves only GET and POST (OpenID4VP 1.0 §5.10) at the request_uri and POST at the response_uri', async () => {
    expect((await fetch(`${running.baseUrl}/vp/response`)).status).toBe(405);
    expect((await fetch(`${running.baseUrl}/vp/request/abc`, { method: 'PUT' })).status).toBe(405);
    expect((await fetch(`${running.baseUrl}/vp/request/not-a-reference`)).status).toBe(404);
  });
});

describe('verifier with short-lived requests', () => {
  let running: Running;
  beforeAll(async () => {
    running = await startService({ requestLifetime: 1 });
  });
  afterAll(async () => {
    await running.close();
  });

  it('reports a request nobody answered in time as expired, and refuses its request_uri', async () => {
    const wallet = await openWallet();
    await issueInto(running, wallet, 'EmployeeBadge', badgeAttributes);
    const id = requestId();
    const { walletUri } = await running.verifier.createRequest({ requestId: id, credentialTypes: ['EmployeeBadge'] });
    expect(await running.verifier.requestStatus(id)).toEqual({ status: 'pending' });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await running.verifier.requestStatus(id)).toEqual({
      status: 'expired',
      message: 'This request has expired. Go back to the app and start again.',
      say: { id: 'status.expired' },
    });
    await expect(wallet.present(walletUri)).rejects.toThrow(/HTTP 404/);
  });

  it('refuses an answer that arrives after the request expired', async () => {
    const wallet = await openWallet();
    await issueInto(running, wallet, 'EmployeeBadge', badgeAttributes);
    const id = requestId();
    const { walletUri } = await running.verifier.createRequest({ requestId: id, credentialTypes: ['EmployeeBadge'] });
    const late: typeof fetch = async (input, init) => {
      if (init?.method === 'POST' && String(input).endsWith('/vp/response'))
        await new Promise((resolve) => setTimeout(resolve, 1_500));
      return fetch(input, init);
    };
    const answer = await wallet.present(walletUri, { fetch: late });
    expect(answer).toEqual({
      status: 400,
      body: {
        error: 'invalid_request',
        error_description: 'state: unknown, expired or already answered: start again from the app',
      },
    });
    expect(await running.verifier.requestStatus(id)).toMatchObject({ status: 'expired' });
    expect(await running.verifier.result(id)).toBeUndefined();
  });
});
