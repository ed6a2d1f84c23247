/**
 * ISO/IEC 18013-7:2025 Annex C over the Digital Credentials API (`org-iso-mdoc`, issue 48): the prompt's
 * requests gain the entry when every credential asked for has an mdoc form; the answer, HPKE-sealed to the
 * request's own key over the `dcapi` SessionTranscript, is verified as every mdoc is, and every way it can be
 * wrong ends the flow with access_denied naming the rule. The holder is independent
 * (test/helpers/annexCHolder.ts: @auth0/mdl's CBOR and DeviceResponse, @hpke/core).
 */
import { createPrivateKey, X509Certificate, type JsonWebKey } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Aes256Gcm, CipherSuite, DhkemP256HkdfSha256, HkdfSha256 } from '@hpke/core';
import { cborEncode } from '@auth0/mdl/lib/cbor/index.js';
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
import { createTestMdocIssuer, presentWithAuth0, type TestMdocIssuer } from '../helpers/mdoc.js';
import type { DigitalRequest } from '../helpers/dcApiHolder.js';
import {
  ANNEX_C,
  annexCTranscript,
  holderAnswersAnnexC,
  readAnnexCRequest,
  sealAnnexC,
  sessionTranscriptBytes,
  type AnnexCRequestRead,
} from '../helpers/annexCHolder.js';
import { keyPair } from '../helpers/keys.js';
import { makeCert } from '../helpers/pki.js';
import { openPrompt, redeemCode, requestFromPage } from '../helpers/flows.js';
import { independentHolderAnswers } from '../helpers/openid4vpHolder.js';

const DOCTYPE = 'org.iso.18013.5.1.mDL';
const NAMESPACE = 'org.iso.18013.5.1';

let t: TestService;
let origin: string;
let iaca: TestMdocIssuer;
let holder: { privateJwk: JWK; publicJwk: JWK };
let issuerSigned: string;

beforeAll(async () => {
  iaca = await createTestMdocIssuer({ name: 'Annex C IACA' });
  holder = await keyPair();
  const dir = mkdtempSync(join(tmpdir(), 'vc-annexc-'));
  writeFileSync(join(dir, 'iaca.pem'), iaca.iacaPem);
  const defaults = testConfig(0) as { credentialTypes: Array<{ name: string }> };
  t = await startTestService({
    credentialTypes: [
      ...defaults.credentialTypes.filter((c) => c.name === 'EmployeeBadge'),
      {
        name: 'DrivingLicence',
        mdoc: { doctype: DOCTYPE, namespace: NAMESPACE },
        attributes: {
          family_name: { type: 'string' },
          given_name: { type: 'string' },
          age_over_18: { type: 'boolean', required: false },
        },
      },
    ],
    clients: [
      {
        clientId: 'issuer-pkce',
        clientSecret: SECRETS.pkceIssuer,
        redirectUris: [REDIRECT],
        pkce: 'required',
        scopes: ['DrivingLicence', 'EmployeeBadge'],
      },
    ],
    verifier: {
      ...(testConfig(0).verifier as object),
      trustAnchors: [{ certificates: join(dir, 'iaca.pem'), formats: ['mso_mdoc'] }],
    },
  });
  origin = new URL(t.url).origin;
  ({ issuerSigned } = await iaca.issue({
    doctype: DOCTYPE,
    namespace: NAMESPACE,
    claims: { family_name: 'Lovelace', given_name: 'Ada', age_over_18: true },
    deviceKey: holder.publicJwk,
  }));
});
afterAll(async () => t?.stop());

type Started = Awaited<ReturnType<typeof start>>;

async function start(scope = 'openid DrivingLicence') {
  const { state, verifier, browser, promptUrl } = await openPrompt(t.url, scope);
  const requests = await requestsOf({ browser, promptUrl });
  return { state, verifier, browser, promptUrl, requests };
}

async function requestsOf(s: Pick<Started, 'browser' | 'promptUrl'>): Promise<DigitalRequest[]> {
  const res = await s.browser.get(`${s.promptUrl}/dc-api`, 'application/json');
  expect(res.status).toBe(200);
  return ((await res.json()) as { requests: DigitalRequest[] }).requests;
}

/** @auth0/mdl discloses the requested elements it holds, signed over the transcript it is given. */
const presentLicence = async (read: AnnexCRequestRead, transcript: Uint8Array) => {
  const elements = [...read.docs[0].namespaces.get(NAMESPACE)!.keys()];
  return presentWithAuth0({
    issuerSigned,
    doctype: DOCTYPE,
    namespace: NAMESPACE,
    elements,
    deviceKey: holder.privateJwk,
    clientId: '',
    nonce: '',
    responseUri: '',
    sessionTranscriptBytes: transcript,
  });
};

const cookie = (s: Pick<Started, 'browser'>) => [...s.browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');

/** The page posts the credential; then the browser continues to the relying party. */
async function post(s: Started, answer: { protocol: string; data: unknown }) {
  const res = await fetch(`${s.promptUrl}/dc-api`, {
    method: 'POST',
    headers: { cookie: cookie(s), 'content-type': 'application/json' },
    body: JSON.stringify({ protocol: answer.protocol, data: answer.data }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function ended(s: Started) {
  const done = await s.browser.follow(`${s.promptUrl}/continue`);
  return new URL(done.final).searchParams;
}

/** The answer was refused: 400 to the page, and the relying party hears access_denied naming `rule`. */
async function expectRefused(s: Started, answer: { protocol: string; data: unknown }, rule: RegExp) {
  const { status, body } = await post(s, answer);
  expect(status).toBe(400);
  expect(body).toEqual({ status: 'failed' });
  const q = await ended(s);
  expect(q.get('error')).toBe('access_denied');
  expect(q.get('code')).toBeNull();
  expect(q.get('state')).toBe(s.state);
  expect(q.get('error_description')).toMatch(rule);
}

describe('the org-iso-mdoc request (issue 48, Annex C over the Digital Credentials API)', () => {
  it('after the OpenID4VP entries, signed by the verifier certificate when no reader certificate is configured', async () => {
    const s = await start();
    expect(s.requests.map((r) => r.protocol)).toEqual(['openid4vp-v1-signed', 'openid4vp-v1-unsigned', ANNEX_C]);
    const read = readAnnexCRequest(s.requests[2], origin);
    expect(read.version).toBe('1.0');
    expect(read.nonce.length).toBeGreaterThanOrEqual(16);
    expect(read.docs).toHaveLength(1);
    expect(read.docs[0].doctype).toBe(DOCTYPE);
    // every element, the optional one too, none to be retained
    expect([...read.docs[0].namespaces.get(NAMESPACE)!]).toEqual([
      ['family_name', false],
      ['given_name', false],
      ['age_over_18', false],
    ]);
    expect(read.docs[0].reader!.checkIssued(new X509Certificate(VERIFIER_CA_PEM))).toBe(true);
    // the request's EncryptionInfo is its own and stays the same while it waits; another request's differs
    const again = readAnnexCRequest(
      (await requestsOf(s)).find((r) => r.protocol === ANNEX_C)!,
      origin,
    );
    expect(again.encryptionInfo).toBe(read.encryptionInfo);
    const other = await start();
    expect(readAnnexCRequest(other.requests[2], origin).encryptionInfo).not.toBe(read.encryptionInfo);
  });

  it('a mixed request (an SD-JWT VC only type beside the mdoc one): no org-iso-mdoc entry, and such an answer is refused', async () => {
    const s = await start('openid DrivingLicence EmployeeBadge');
    expect(s.requests.map((r) => r.protocol)).not.toContain(ANNEX_C);
    await expectRefused(
      s,
      { protocol: ANNEX_C, data: { response: 'AAAA' } },
      /not of a protocol this request offered \(openid4vp-v1-signed, openid4vp-v1-unsigned\)/,
    );
  });
});

describe('an Annex C answer (issue 48)', () => {
  it('verified: the flow completes, the claims reach the ID token, and the answer cannot be given twice', async () => {
    const s = await start();
    const answer = await holderAnswersAnnexC(s.requests, { origin, present: presentLicence });
    const { status, body } = await post(s, { protocol: answer.protocol, data: answer.data });
    expect(status).toBe(200);
    expect(body.status).toBe('done');
    const q = await ended(s);
    expect(q.get('state')).toBe(s.state);
    const claims = await redeemCode(t.url, { code: q.get('code')!, verifier: s.verifier });
    expect(claims).toMatchObject({ family_name: 'Lovelace', given_name: 'Ada', age_over_18: true });
    // replayed: the request was answered; nothing changes
    expect((await post(s, { protocol: answer.protocol, data: answer.data })).status).toBe(404);
  });

  it('it races the QR path: once the QR code answered, the Annex C answer finds no request (404) and changes nothing', async () => {
    const s = await start();
    const html = (await s.browser.follow(s.promptUrl)).html!;
    const answer = await holderAnswersAnnexC(s.requests, { origin, present: presentLicence });
    const qr = await independentHolderAnswers(
      requestFromPage(html),
      new X509Certificate(VERIFIER_CA_PEM),
      async (request) => {
        const [key] = request.client_metadata.jwks.keys;
        const vp = await presentWithAuth0({
          issuerSigned,
          doctype: DOCTYPE,
          namespace: NAMESPACE,
          elements: ['family_name', 'given_name'],
          deviceKey: holder.privateJwk,
          clientId: request.client_id,
          nonce: request.nonce,
          responseUri: request.response_uri,
          jwkThumbprint: base64url.decode(await calculateJwkThumbprint(key)),
        });
        return { 'DrivingLicence-mdoc': [vp] };
      },
    );
    expect(qr.status).toBe(200);
    expect((await post(s, answer)).status).toBe(404);
    expect((await ended(s)).get('code')).toBeTruthy();
  });

  it('data as JSON text (as some browsers hand it over) is read the same', async () => {
    const s = await start();
    const answer = await holderAnswersAnnexC(s.requests, { origin, present: presentLicence });
    expect((await post(s, { protocol: ANNEX_C, data: JSON.stringify(answer.data) })).status).toBe(200);
  });

  it('sealed for another origin: it does not open', async () => {
    const s = await start();
    const answer = await holderAnswersAnnexC(s.requests, {
      origin,
      present: presentLicence,
      transcriptOrigin: 'https://evil.example',
      sealOrigin: 'https://evil.example',
    });
    await expectRefused(s, answer, /does not open with this request's key and SessionTranscript/);
  });

  it("another request's answer (replayed here): encrypted to another key, it does not open", async () => {
    const a = await start();
    const s = await start();
    const answer = await holderAnswersAnnexC(a.requests, { origin, present: presentLicence });
    await expectRefused(s, answer, /does not open with this request's key and SessionTranscript/);
  });

  it("sealed to this request's key over another request's transcript: it does not open", async () => {
    const a = await start();
    const s = await start();
    const read = readAnnexCRequest(
      s.requests.find((r) => r.protocol === ANNEX_C)!,
      origin,
    );
    const otherInfo = readAnnexCRequest(
      a.requests.find((r) => r.protocol === ANNEX_C)!,
      origin,
    ).encryptionInfo;
    const transcript = annexCTranscript(otherInfo, origin);
    const deviceResponse = Buffer.from(await presentLicence(read, sessionTranscriptBytes(transcript)), 'base64url');
    const response = await sealAnnexC(read, deviceResponse, new Uint8Array(cborEncode(transcript)));
    await expectRefused(s, { protocol: ANNEX_C, data: { response } }, /does not open/);
  });

  it('a device signature over another transcript (re-encrypted to this request): access_denied naming Annex C', async () => {
    const s = await start();
    const answer = await holderAnswersAnnexC(s.requests, {
      origin,
      present: presentLicence,
      transcriptOrigin: 'https://evil.example',
    });
    await expectRefused(s, answer, /device signature does not verify for this request \(ISO\/IEC 18013-7 Annex C/);
  });

  it("another request's DeviceResponse, re-encrypted to this one: its device signature is refused", async () => {
    const a = await start();
    const s = await start();
    let taken = '';
    await holderAnswersAnnexC(a.requests, {
      origin,
      present: async (read, transcript) => (taken = await presentLicence(read, transcript)),
    });
    const answer = await holderAnswersAnnexC(s.requests, { origin, present: async () => taken });
    await expectRefused(s, answer, /device signature does not verify for this request \(ISO\/IEC 18013-7 Annex C/);
  });

  it('truncated CBOR', async () => {
    const s = await start();
    const answer = await holderAnswersAnnexC(s.requests, { origin, present: presentLicence });
    const response = String(answer.data.response);
    await expectRefused(
      s,
      { protocol: ANNEX_C, data: { response: response.slice(0, response.length - 8) } },
      /not one well-formed CBOR item/,
    );
  });

  it('oversized', async () => {
    const s = await start();
    await expectRefused(s, { protocol: ANNEX_C, data: { response: 'A'.repeat(1_500_000) } }, /exceeds \d+ bytes/);
  });

  it('another suite (AES-256-GCM): it does not open, and the description names the suite', async () => {
    const s = await start();
    const read = readAnnexCRequest(
      s.requests.find((r) => r.protocol === ANNEX_C)!,
      origin,
    );
    const transcript = annexCTranscript(read.encryptionInfo, origin);
    const deviceResponse = Buffer.from(await presentLicence(read, sessionTranscriptBytes(transcript)));
    const suite = new CipherSuite({ kem: new DhkemP256HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes256Gcm() });
    const sender = await suite.createSenderContext({
      recipientPublicKey: await suite.kem.deserializePublicKey(
        new Uint8Array([0x04, ...read.recipient.x, ...read.recipient.y]),
      ),
      info: new Uint8Array(cborEncode(transcript)),
    });
    const cipherText = new Uint8Array(await sender.seal(deviceResponse));
    const response = Buffer.from(
      cborEncode([
        'dcapi',
        new Map<string, unknown>([
          ['enc', new Uint8Array(sender.enc)],
          ['cipherText', cipherText],
        ]),
      ]),
    ).toString('base64url');
    await expectRefused(s, { protocol: ANNEX_C, data: { response } }, /AES-128-GCM/);
  });

  it('no response in the data', async () => {
    const s = await start();
    await expectRefused(s, { protocol: ANNEX_C, data: {} }, /no EncryptedResponse/);
  });
});

describe('a wallet error other than the refusal, through the Digital Credentials API (issue 48, the page)', () => {
  it('the step reads refused and a fresh request (with a new Annex C key) is offered, as on the QR path', async () => {
    const s = await start();
    const before = readAnnexCRequest(
      s.requests.find((r) => r.protocol === ANNEX_C)!,
      origin,
    ).encryptionInfo;
    const { status, body } = await post(s, {
      protocol: 'openid4vp-v1-unsigned',
      data: { error: 'vp_formats_not_supported' },
    });
    expect(status).toBe(200);
    expect(body).toEqual({ status: 'refused' });
    const state = (await (await s.browser.get(`${s.promptUrl}/status`, 'application/json')).json()) as {
      status: string;
    };
    expect(state.status).toBe('refused');
    const fresh = await fetch(`${s.promptUrl}/fresh`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: cookie(s) },
    });
    expect(fresh.status).toBe(303);
    const requests = await requestsOf(s);
    const read = readAnnexCRequest(
      requests.find((r) => r.protocol === ANNEX_C)!,
      origin,
    );
    expect(read.encryptionInfo).not.toBe(before);
    // the fresh request is answered as any
    const answer = await holderAnswersAnnexC(requests, { origin, present: presentLicence });
    expect((await post(s, answer)).status).toBe(200);
    expect((await ended(s)).get('code')).toBeTruthy();
  });

  it('access_denied still ends the flow', async () => {
    const s = await start();
    expect((await post(s, { protocol: 'openid4vp-v1-unsigned', data: { error: 'access_denied' } })).status).toBe(400);
    expect((await ended(s)).get('error')).toBe('access_denied');
  });
});

describe('verifier.readerCertificate (issue 48: the reader certificate an operator configures)', () => {
  it('signs the DeviceRequest in place of the verifier certificate; a missing key file stops the start', async () => {
    const ca = await makeCert({ subject: 'CN=Reader CA', ca: true, pathLength: 0 });
    const leaf = await makeCert({ subject: 'CN=Reader of the bench', issuer: ca });
    const dir = mkdtempSync(join(tmpdir(), 'vc-reader-'));
    const chainFile = join(dir, 'reader-chain.pem');
    const keyFile = join(dir, 'reader-key.pem');
    writeFileSync(chainFile, leaf.pem);
    writeFileSync(
      keyFile,
      createPrivateKey({ key: leaf.privateJwk as JsonWebKey, format: 'jwk' }).export({ format: 'pem', type: 'pkcs8' }),
    );
    const config = (readerCertificate: object) => ({
      credentialTypes: [
        {
          name: 'DrivingLicence',
          mdoc: { doctype: DOCTYPE, namespace: NAMESPACE },
          attributes: { family_name: { type: 'string' } },
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
      verifier: { ...(testConfig(0).verifier as object), readerCertificate },
    });
    const other = await startTestService(config({ certificateChain: chainFile, key: keyFile }));
    try {
      const { browser, promptUrl } = await openPrompt(other.url, 'openid DrivingLicence');
      const res = await browser.get(`${promptUrl}/dc-api`, 'application/json');
      const { requests } = (await res.json()) as { requests: DigitalRequest[] };
      const read = readAnnexCRequest(
        requests.find((r) => r.protocol === ANNEX_C)!,
        new URL(other.url).origin,
      );
      expect(read.docs[0].reader!.subject).toBe('CN=Reader of the bench');
      expect(read.docs[0].reader!.checkIssued(new X509Certificate(ca.pem))).toBe(true);
    } finally {
      await other.stop();
    }
    await expect(
      startTestService(config({ certificateChain: chainFile, key: join(dir, 'missing.pem') })),
    ).rejects.toThrow(/verifier\.readerCertificate\.key: .*missing\.pem not found/);
  });
});
