/**
 * An mdoc through the W3C Digital Credentials API (OpenID4VP 1.0 Appendix A.5): the device signature covers
 * the OpenID4VPDCAPIHandover over the page's origin, the request's nonce and its encryption key's
 * thumbprint. The holder is independent: @openid4vc/openid4vp resolves the request and encrypts the answer,
 * @auth0/mdl signs the DeviceResponse over a SessionTranscript computed here from the spec text.
 */
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { base64url, calculateJwkThumbprint, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startTestService,
  testConfig,
  REDIRECT,
  VERIFIER_CA_PEM,
  SECRETS,
  type TestService,
} from '../helpers/service.js';
import {
  createTestMdocIssuer,
  oid4vpDcApiSessionTranscriptBytes,
  presentWithAuth0,
  type TestMdocIssuer,
} from '../helpers/mdoc.js';
import { holderAnswersDcApi, type DigitalRequest } from '../helpers/dcApiHolder.js';
import type { ResolvedRequest } from '../helpers/openid4vpHolder.js';
import { keyPair } from '../helpers/keys.js';
import { openPrompt, redeemCode } from '../helpers/flows.js';

const DOCTYPE = 'org.iso.18013.5.1.mDL';
const NAMESPACE = 'org.iso.18013.5.1';
const trust = new X509Certificate(VERIFIER_CA_PEM);

let t: TestService;
let iaca: TestMdocIssuer;
let holder: { privateJwk: JWK; publicJwk: JWK };
let issuerSigned: string;

beforeAll(async () => {
  iaca = await createTestMdocIssuer({ name: 'DC API IACA' });
  holder = await keyPair();
  const dir = mkdtempSync(join(tmpdir(), 'vc-dcapi-'));
  writeFileSync(join(dir, 'iaca.pem'), iaca.iacaPem);
  t = await startTestService({
    credentialTypes: [
      {
        name: 'DrivingLicence',
        mdoc: { doctype: DOCTYPE, namespace: NAMESPACE },
        attributes: { family_name: { type: 'string' }, given_name: { type: 'string' } },
      },
    ],
    clients: [
      {
        clientId: 'issuer-pkce',
        clientSecret: SECRETS.pkceIssuer,
        redirectUris: [REDIRECT],
        pkce: 'required',
        scopes: ['DrivingLicence'],
      },
    ],
    verifier: {
      ...(testConfig(0).verifier as object),
      trustAnchors: [{ certificates: join(dir, 'iaca.pem'), formats: ['mso_mdoc'] }],
    },
  });
  ({ issuerSigned } = await iaca.issue({
    doctype: DOCTYPE,
    namespace: NAMESPACE,
    claims: { family_name: 'Lovelace', given_name: 'Ada' },
    deviceKey: holder.publicJwk,
  }));
});
afterAll(async () => t?.stop());

async function start() {
  const { state, verifier, browser, promptUrl } = await openPrompt(t.url, 'openid DrivingLicence');
  const res = await browser.get(`${promptUrl}/dc-api`, 'application/json');
  const { requests } = (await res.json()) as { requests: DigitalRequest[] };
  return { state, verifier, browser, promptUrl, requests };
}

/** @auth0/mdl presents the licence over the DC API handover of `origin` (the page's unless said). */
const presentMdoc = (origin?: string) => async (request: ResolvedRequest) => {
  const [key] = request.client_metadata.jwks.keys;
  const vp = await presentWithAuth0({
    issuerSigned,
    doctype: DOCTYPE,
    namespace: NAMESPACE,
    elements: ['family_name', 'given_name'],
    deviceKey: holder.privateJwk,
    clientId: '',
    nonce: request.nonce,
    responseUri: '',
    sessionTranscriptBytes: oid4vpDcApiSessionTranscriptBytes({
      origin: origin ?? new URL(t.url).origin,
      nonce: request.nonce,
      jwkThumbprint: base64url.decode(await calculateJwkThumbprint(key)),
    }),
  });
  return { 'DrivingLicence-mdoc': [vp] };
};

async function answered(s: Awaited<ReturnType<typeof start>>, origin?: string) {
  const answer = await holderAnswersDcApi(s.requests, {
    protocol: 'openid4vp-v1-signed',
    origin: new URL(t.url).origin,
    trust,
    answer: presentMdoc(origin),
  });
  const res = await fetch(`${s.promptUrl}/dc-api`, {
    method: 'POST',
    headers: {
      cookie: [...s.browser.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
      'content-type': 'application/json',
    },
    body: JSON.stringify(answer),
  });
  const done = await s.browser.follow(`${s.promptUrl}/continue`);
  return { status: res.status, q: new URL(done.final).searchParams };
}

describe('an mdoc through the Digital Credentials API', () => {
  it('bound to the page origin by the OpenID4VPDCAPIHandover: the flow completes', async () => {
    const s = await start();
    const { status, q } = await answered(s);
    expect(status).toBe(200);
    expect(q.get('state')).toBe(s.state);
    const claims = await redeemCode(t.url, { code: q.get('code')!, verifier: s.verifier });
    expect(claims).toMatchObject({ family_name: 'Lovelace', given_name: 'Ada' });
  });

  it('signed over the handover of another origin: access_denied naming the rule', async () => {
    const s = await start();
    const { status, q } = await answered(s, 'https://evil.example');
    expect(status).toBe(400);
    expect(q.get('error')).toBe('access_denied');
    expect(q.get('code')).toBeNull();
    expect(q.get('error_description')).toMatch(/Appendix A\.5 OpenID4VPDCAPIHandover: origin, nonce, encryption key/);
  });
});
