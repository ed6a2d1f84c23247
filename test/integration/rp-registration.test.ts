/**
 * Issue 50, "each relying party's registration certificate (verifier_info)", through the whole service:
 * every presentation request made for a client with a registration certificate carries it in
 * `verifier_info` (OpenID4VP 1.0 §5.1), QR and Digital Credentials API alike, while the request stays signed
 * by our access certificate; an independent holder (@openid4vc/openid4vp resolves the request, jose and
 * node:crypto check the certificate against the registrar) reads it per client. A request beyond the
 * registration is refused at PAR and at authorise (ARF RPRC_21), as is one under a registration that
 * expired while the service ran. And HAIP 1.0 §5: SD-JWT VC queries name their anchors by `aki`.
 */
// @peculiar/x509 resolves its parsers through tsyringe, which needs the Reflect metadata API
import 'reflect-metadata';
import { readFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';
import { decodeJwt, jwtVerify } from 'jose';
import { parseOpenid4vpAuthorizationRequest, resolveOpenid4vpAuthorizationRequest } from '@openid4vc/openid4vp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  issuerCaFile,
  REDIRECT,
  SECRETS,
  startTestService,
  testConfig,
  VERIFIER_CA_PEM,
  type TestService,
} from '../helpers/service.js';
import { openPrompt, pushAuthorization, requestFromPage } from '../helpers/flows.js';
import { postForm, pkcePair } from '../helpers/rp.js';
import { HOLDER_WALLET_METADATA, walletCallbacks, type ResolvedRequest } from '../helpers/openid4vpHolder.js';
import { makeRegistrar, registrationClaims, sdJwtRegistered, type TestRegistrar } from '../helpers/registrar.js';
import { makeCert, type TestCert } from '../helpers/pki.js';

const BADGE_VCT = 'https://badges.example/vct/badge';
const CARD_VCT = 'https://badges.example/vct/card';
const credentialTypes = [
  {
    name: 'Badge',
    vct: BADGE_VCT,
    attributes: {
      FirstName: { type: 'string' },
      LastName: { type: 'string' },
      Email: { type: 'email', required: false },
    },
  },
  { name: 'Card', vct: CARD_VCT, attributes: { MemberName: { type: 'string' } } },
];
const BADGE_REGISTERED = sdJwtRegistered(BADGE_VCT, ['FirstName', 'LastName', 'Email']);
const CARD_REGISTERED = sdJwtRegistered(CARD_VCT, ['MemberName']);

const trust = new X509Certificate(VERIFIER_CA_PEM);
let registrar: TestRegistrar;
let anchor: TestCert;
let t: TestService;
let expiring: TestService;
/** the registration certificates, by file */
const certificates: Record<string, string> = {};
let expiringExp: number;

/** The clients: issuer-pkce with one certificate per intended use, issuer-plain with its own, other with none. */
function clients(registered: Record<string, string[]>) {
  const base = testConfig(0).clients as Array<Record<string, unknown> & { clientId: string }>;
  return base.map((c) => ({
    ...c,
    scopes: c.clientId === 'issuer-pkce' ? ['Badge', 'Card'] : ['Badge'],
    ...(registered[c.clientId]
      ? { registration: { subject: `LEIXG-${c.clientId.toUpperCase()}`, certificates: registered[c.clientId] } }
      : {}),
  }));
}

beforeAll(async () => {
  registrar = await makeRegistrar();
  anchor = await makeCert({ subject: 'CN=Badge Root, C=NL', ca: true });
  const dir = mkdtempSync(join(tmpdir(), 'vc-rp-registration-'));
  const write = (file: string, text: string) => {
    writeFileSync(join(dir, file), text);
    return join(dir, file);
  };
  write('registrar.pem', registrar.root.pem);
  write('badge-root.pem', anchor.pem);
  for (const [file, sub, registered] of [
    ['pkce-badge.jwt', 'LEIXG-ISSUER-PKCE', [BADGE_REGISTERED]],
    ['pkce-card.jwt', 'LEIXG-ISSUER-PKCE', [CARD_REGISTERED]],
    ['plain.jwt', 'LEIXG-ISSUER-PLAIN', [BADGE_REGISTERED]],
  ] as const) {
    certificates[file] = registrar.certificate(registrationClaims(sub, [...registered]));
    write(file, certificates[file]);
  }
  // valid seconds only: long enough to start and take one request
  expiringExp = Math.floor(Date.now() / 1000) + 15;
  write(
    'expiring.jwt',
    registrar.certificate(registrationClaims('LEIXG-ISSUER-PLAIN', [BADGE_REGISTERED], { exp: expiringExp })),
  );
  const badgeAnchor = [{ certificates: join(dir, 'badge-root.pem'), formats: ['dc+sd-jwt'], types: ['Badge'] }];
  [t, expiring] = await Promise.all([
    startTestService({
      credentialTypes,
      clients: clients({
        'issuer-pkce': [join(dir, 'pkce-badge.jwt'), join(dir, 'pkce-card.jwt')],
        'issuer-plain': [join(dir, 'plain.jwt')],
      }),
      verifier: {
        ...(testConfig(0).verifier as object),
        registrars: [join(dir, 'registrar.pem')],
        trustAnchors: badgeAnchor,
      },
    }),
    startTestService({
      credentialTypes,
      clients: clients({ 'issuer-plain': [join(dir, 'expiring.jwt')] }),
      verifier: {
        ...(testConfig(0).verifier as object),
        registrars: [join(dir, 'registrar.pem')],
        trustAnchors: badgeAnchor,
      },
      // trusted by iss: a wallet could not match them by a key identifier
      trustedIssuers: [{ issuer: 'https://issuer.example' }],
    }),
  ]);
  // while it holds, the client's requests are taken
  await pushAuthorization(expiring.url, { client_id: 'issuer-plain', scope: 'openid Badge', nonce: 'n' });
});
afterAll(async () => Promise.all([t?.stop(), expiring?.stop()]));

type Client = 'issuer-pkce' | 'issuer-plain' | 'other';

/** The holder's checks of a registration certificate: the registrar's chain and signature, typ, the subject. */
async function holderReadsRegistration(data: string, subject: string): Promise<Record<string, unknown>> {
  const header = JSON.parse(Buffer.from(data.split('.')[0], 'base64url').toString()) as { x5c: string[] };
  const leaf = new X509Certificate(Buffer.from(header.x5c[0], 'base64'));
  const root = new X509Certificate(registrar.root.der);
  expect(leaf.checkIssued(root) && leaf.verify(root.publicKey)).toBe(true);
  const { payload } = await jwtVerify(data, leaf.publicKey, { typ: 'rc-wrp+jwt', subject });
  return payload;
}

/** The holder's RPRC_21 check: every credential and claim the request asks for is registered. */
function withinRegistration(request: ResolvedRequest, registration: Record<string, unknown>): boolean {
  const registered = registration.credentials as Array<{
    meta: { vct_values: string[] };
    claim: Array<{ path: string[] }>;
  }>;
  return (
    request.dcql_query.credentials as Array<{ meta: { vct_values: string[] }; claims: Array<{ path: string[] }> }>
  ).every((query) => {
    const entry = registered.find((r) => query.meta.vct_values.every((v) => r.meta.vct_values.includes(v)));
    return !!entry && query.claims.every((c) => entry.claim.some((r) => r.path.join() === c.path.join()));
  });
}

/** The client pushes a verification of `scope`; the holder's browser lands on the prompt. */
const start = (client: Client, scope: string, service = t) =>
  openPrompt(service.url, `openid ${scope}`, { client_id: client });

/** The independent holder resolves the QR code's request: fetched, its x509_hash signature checked. */
async function resolveQr(html: string): Promise<ResolvedRequest> {
  const parsed = parseOpenid4vpAuthorizationRequest({ authorizationRequest: requestFromPage(html) });
  const resolved = await resolveOpenid4vpAuthorizationRequest({
    authorizationRequestPayload: parsed.params as never,
    wallet: { metadata: HOLDER_WALLET_METADATA as never },
    callbacks: walletCallbacks(trust),
  });
  expect(resolved.client.prefix).toBe('x509_hash');
  return resolved.authorizationRequestPayload as ResolvedRequest;
}

describe('verifier_info in every presentation request made for a client (OpenID4VP 1.0 §5.1, ETSI TS 119 475)', () => {
  it.each([
    ['issuer-pkce', 'Badge', 'pkce-badge.jwt', 'LEIXG-ISSUER-PKCE'],
    ['issuer-pkce', 'Card', 'pkce-card.jwt', 'LEIXG-ISSUER-PKCE'],
    ['issuer-plain', 'Badge', 'plain.jwt', 'LEIXG-ISSUER-PLAIN'],
  ] as const)('QR: %s asking for %s sends %s, which the holder verifies', async (client, scope, file, subject) => {
    const { html } = await start(client, scope);
    const request = await resolveQr(html);
    expect(request.verifier_info).toEqual([{ format: 'registration_cert', data: certificates[file] }]);
    const registration = await holderReadsRegistration(request.verifier_info[0].data, subject);
    expect(withinRegistration(request, registration)).toBe(true);
  });

  it('QR: a client without a registration certificate sends no verifier_info', async () => {
    const { html } = await start('other', 'Badge');
    expect(await resolveQr(html)).not.toHaveProperty('verifier_info');
  });

  it('Digital Credentials API: the signed and the unsigned request carry the same registration certificate', async () => {
    const { browser, promptUrl } = await start('issuer-pkce', 'Card');
    const res = await browser.get(`${promptUrl}/dc-api`, 'application/json');
    expect(res.status).toBe(200);
    const { requests } = (await res.json()) as { requests: Array<{ protocol: string; data: Record<string, any> }> };
    const signed = requests.find((r) => r.protocol === 'openid4vp-v1-signed')!;
    const unsigned = requests.find((r) => r.protocol === 'openid4vp-v1-unsigned')!;
    const origin = new URL(t.url).origin;
    const resolved = await resolveOpenid4vpAuthorizationRequest({
      authorizationRequestPayload: signed.data as never,
      origin,
      wallet: { metadata: HOLDER_WALLET_METADATA as never },
      callbacks: walletCallbacks(trust),
    });
    const request = resolved.authorizationRequestPayload as ResolvedRequest;
    for (const info of [request.verifier_info, unsigned.data.verifier_info])
      expect(info).toEqual([{ format: 'registration_cert', data: certificates['pkce-card.jwt'] }]);
    const registration = await holderReadsRegistration(certificates['pkce-card.jwt'], 'LEIXG-ISSUER-PKCE');
    expect(withinRegistration(request, registration)).toBe(true);
  });

  it('Digital Credentials API: a client without one sends none', async () => {
    const { browser, promptUrl } = await start('other', 'Badge');
    const { requests } = (await (await browser.get(`${promptUrl}/dc-api`, 'application/json')).json()) as {
      requests: Array<{ data: Record<string, unknown> }>;
    };
    for (const r of requests) {
      const payload = typeof r.data.request === 'string' ? decodeJwt(r.data.request) : r.data;
      expect(payload).not.toHaveProperty('verifier_info');
    }
  });
});

describe('ARF RPRC_21: a request beyond the registration is refused before any wallet sees it', () => {
  it('at PAR: 400 invalid_request naming the attributes not registered', async () => {
    const { challenge } = pkcePair();
    const res = await postForm(`${t.url}/v2.0/oidc/par`, {
      client_id: 'issuer-pkce',
      client_secret: SECRETS.pkceIssuer,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid Badge Card',
      nonce: 'n',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
    expect(res.body.error_description).toMatch(/registration certificates \(any one of them\) registers/);
    expect(res.body.error_description).toMatch(/MemberName/);
  });

  it('at authorise without PAR: a redirected invalid_request naming the attributes', async () => {
    const { challenge } = pkcePair();
    const res = await fetch(
      `${t.url}/v2.0/oidc/authorize?${new URLSearchParams({
        client_id: 'issuer-pkce',
        response_type: 'code',
        redirect_uri: REDIRECT,
        scope: 'openid Badge Card',
        nonce: 'n',
        state: 'st-over',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      })}`,
      { redirect: 'manual' },
    );
    const location = new URL(res.headers.get('location')!);
    expect(location.origin + location.pathname).toBe(REDIRECT);
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('error_description')).toMatch(/MemberName/);
    expect(location.searchParams.get('state')).toBe('st-over');
    expect(location.searchParams.get('code')).toBeNull();
  });

  it('a registration that expires while the service runs: requests under it are refused, naming the expiry', async () => {
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiringExp * 1000 - Date.now() + 200)));
    const { challenge } = pkcePair();
    const res = await postForm(`${expiring.url}/v2.0/oidc/par`, {
      client_id: 'issuer-plain',
      client_secret: SECRETS.plainIssuer,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid Badge',
      nonce: 'n',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
    expect(res.body.error_description).toMatch(/registration certificate for this request expired on .*renew/);
  });
});

describe('HAIP 1.0 §5, OpenID4VP 1.0 §6.1.1.1: SD-JWT VC queries name their trust anchors (aki)', () => {
  const keyId = (pem: string) =>
    Buffer.from(new x509.X509Certificate(pem).getExtension(x509.SubjectKeyIdentifierExtension)!.keyId, 'hex').toString(
      'base64url',
    );

  it('a type vouched for only by anchors: its anchors and our own issuer CA; a type without anchors: none', async () => {
    const { html } = await start('other', 'Badge');
    const [badge] = (await resolveQr(html)).dcql_query.credentials;
    expect(badge.trusted_authorities).toEqual([
      { type: 'aki', values: [keyId(anchor.pem), keyId(readFileSync(issuerCaFile, 'utf8'))] },
    ]);
    const card = await resolveQr((await start('issuer-pkce', 'Card')).html);
    expect(card.dcql_query.credentials[0]).not.toHaveProperty('trusted_authorities');
  });

  it('with trustedIssuers (trusted by iss, no certificate to name), no SD-JWT VC query names anchors', async () => {
    const { html } = await start('other', 'Badge', expiring);
    expect((await resolveQr(html)).dcql_query.credentials[0]).not.toHaveProperty('trusted_authorities');
  });
});
