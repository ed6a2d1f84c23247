import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base64url, calculateJwkThumbprint, type JWK } from 'jose';
import { startTestService, testConfig, SECRETS, REDIRECT, type TestService } from '../helpers/service.js';
import { Browser, postForm, pkcePair } from '../helpers/rp.js';
import { newWallet, requestFromPage, pushAuthorization, redeemCode } from '../helpers/flows.js';
import { createTestMdocIssuer, presentWithAuth0, type TestMdocIssuer } from '../helpers/mdoc.js';
import { encryptAnswer } from '../helpers/encryptAnswer.js';
import { keyPair } from '../helpers/keys.js';

/**
 * mso_mdoc through the whole flow (OpenID4VP 1.0 §B.2, HAIP 1.0): a credential type configured with `mdoc`
 * is asked for as an SD-JWT VC or an mdoc; an mdoc issued and presented by @auth0/mdl (not the service's
 * code) over an encrypted response, verified against `verifier.trustAnchors`, becomes the ID token's claims.
 */
const DOCTYPE = 'org.iso.18013.5.1.mDL';
const NAMESPACE = 'org.iso.18013.5.1';

let t: TestService;
let iaca: TestMdocIssuer;
let device: { privateJwk: JWK; publicJwk: JWK };

beforeAll(async () => {
  iaca = await createTestMdocIssuer();
  const dir = mkdtempSync(join(tmpdir(), 'vc-iaca-'));
  writeFileSync(join(dir, 'iaca.pem'), iaca.iacaPem);
  device = await keyPair();
  const base = testConfig(0) as { credentialTypes: Array<Record<string, unknown>>; verifier: Record<string, unknown> };
  t = await startTestService({
    credentialTypes: [
      ...base.credentialTypes,
      {
        name: 'DrivingLicence',
        displayName: 'Driving licence',
        mdoc: { doctype: DOCTYPE, namespace: NAMESPACE },
        attributes: {
          family_name: { type: 'string' },
          given_name: { type: 'string' },
          birth_date: { type: 'date', required: false },
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
    verifier: { ...base.verifier, trustAnchors: join(dir, 'iaca.pem') },
  });
});
afterAll(async () => t?.stop());

async function start(scope = 'openid DrivingLicence') {
  const { verifier, challenge } = pkcePair();
  const { authorizeUrl } = await pushAuthorization(t.url, {
    scope,
    state: 'st',
    nonce: 'n',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  const browser = new Browser(REDIRECT);
  const prompt = await browser.follow(authorizeUrl);
  const res = await fetch(new URL(requestFromPage(prompt.html!)).searchParams.get('request_uri')!);
  const request = JSON.parse(Buffer.from((await res.text()).split('.')[1], 'base64url').toString()) as Record<
    string,
    any
  >;
  return { browser, promptUrl: prompt.final, request, verifier };
}

/** The answer, encrypted to the request's key (§8.3), with the mdoc bound to that key (§B.2.6.1). */
async function answerWithMdoc(
  request: Record<string, any>,
  deviceResponse: (thumbprint: Uint8Array) => Promise<string>,
) {
  const jwk = request.client_metadata.jwks.keys[0] as JWK;
  const thumbprint = base64url.decode(await calculateJwkThumbprint(jwk));
  const vpToken = { 'DrivingLicence-mdoc': [await deviceResponse(thumbprint)] };
  const jwe = await encryptAnswer(jwk, { vp_token: vpToken, state: request.state }, { enc: 'A256GCM' });
  return postForm(request.response_uri, { response: jwe });
}

describe('mdoc verification', () => {
  it('asks for the type as an SD-JWT VC or an mdoc (credential_sets), naming the IACA by aki (§6.1.1.1, §6.2, §B.2.3)', async () => {
    const { request } = await start();
    const [sdJwt, mdoc] = request.dcql_query.credentials;
    expect(sdJwt).toMatchObject({ id: 'DrivingLicence', format: 'dc+sd-jwt' });
    expect(mdoc).toMatchObject({
      id: 'DrivingLicence-mdoc',
      format: 'mso_mdoc',
      meta: { doctype_value: DOCTYPE },
      trusted_authorities: [{ type: 'aki', values: [expect.stringMatching(/^[A-Za-z0-9_-]+$/)] }],
    });
    expect(mdoc.claims).toContainEqual({
      id: 'family_name',
      path: [NAMESPACE, 'family_name'],
      intent_to_retain: false,
    });
    expect(request.dcql_query.credential_sets).toEqual([
      { options: [['DrivingLicence'], ['DrivingLicence-mdoc']], required: true },
    ]);
    expect(request.client_metadata.vp_formats_supported.mso_mdoc).toBeDefined();
  });

  it('an mdoc built by @auth0/mdl becomes the ID token: its elements as claims, sub the device key thumbprint', async () => {
    const { browser, promptUrl, request, verifier } = await start();
    const { issuerSigned } = await iaca.issue({
      doctype: DOCTYPE,
      namespace: NAMESPACE,
      claims: { family_name: 'Lovelace', given_name: 'Ada', birth_date: '1815-12-10' },
      deviceKey: device.publicJwk,
    });
    const answer = await answerWithMdoc(request, (jwkThumbprint) =>
      presentWithAuth0({
        issuerSigned,
        doctype: DOCTYPE,
        namespace: NAMESPACE,
        elements: ['family_name', 'given_name'],
        deviceKey: device.privateJwk,
        clientId: request.client_id,
        nonce: request.nonce,
        responseUri: request.response_uri,
        jwkThumbprint,
      }),
    );
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const done = await browser.follow(`${promptUrl}/continue`);
    const q = new URL(done.final).searchParams;
    expect(q.get('error'), q.get('error_description') ?? '').toBeNull();
    const payload = await redeemCode(t.url, { code: q.get('code')!, verifier });
    expect(payload).toMatchObject({
      family_name: 'Lovelace',
      given_name: 'Ada',
      sub: await calculateJwkThumbprint(device.publicJwk),
    });
    expect(payload.birth_date).toBeUndefined(); // not disclosed
  });

  it("an mdoc bound to another key than the request's (no thumbprint in the transcript) is refused; the relying party gets access_denied naming the device signature", async () => {
    const { browser, promptUrl, request } = await start();
    const { issuerSigned } = await iaca.issue({
      doctype: DOCTYPE,
      namespace: NAMESPACE,
      claims: { family_name: 'Lovelace', given_name: 'Ada' },
      deviceKey: device.publicJwk,
    });
    const answer = await answerWithMdoc(request, () =>
      presentWithAuth0({
        issuerSigned,
        doctype: DOCTYPE,
        namespace: NAMESPACE,
        elements: ['family_name', 'given_name'],
        deviceKey: device.privateJwk,
        clientId: request.client_id,
        nonce: request.nonce,
        responseUri: request.response_uri,
      }),
    );
    expect(answer.status).toBe(400);
    expect(answer.body.error_description).toMatch(/^vp_token\.DrivingLicence-mdoc: the mdoc device signature/);
    const done = await browser.follow(`${promptUrl}/continue`);
    const q = new URL(done.final).searchParams;
    expect(q.get('error')).toBe('access_denied');
    expect(q.get('error_description')).toMatch(/mdoc device signature/);
  });

  it('an mdoc of an IACA that is not a trust anchor is refused (mdoc_issuer_not_trusted)', async () => {
    const { request } = await start();
    const stranger = await createTestMdocIssuer({ name: 'Stranger IACA' });
    const { issuerSigned } = await stranger.issue({
      doctype: DOCTYPE,
      namespace: NAMESPACE,
      claims: { family_name: 'Lovelace', given_name: 'Ada' },
      deviceKey: device.publicJwk,
    });
    const answer = await answerWithMdoc(request, (jwkThumbprint) =>
      presentWithAuth0({
        issuerSigned,
        doctype: DOCTYPE,
        namespace: NAMESPACE,
        elements: ['family_name', 'given_name'],
        deviceKey: device.privateJwk,
        clientId: request.client_id,
        nonce: request.nonce,
        responseUri: request.response_uri,
        jwkThumbprint,
      }),
    );
    expect(answer.status).toBe(400);
    expect(answer.body.error_description).toMatch(
      /document signer certificate is not trusted.*does not end at a trusted root/,
    );
  });

  it('the dev wallet holds an mdoc (import-mdoc) and presents it, encrypted, through the same flow', async () => {
    const wallet = await newWallet();
    const { issuerSigned } = await iaca.issue({
      doctype: DOCTYPE,
      namespace: NAMESPACE,
      claims: { family_name: 'Lovelace', given_name: 'Ada' },
      deviceKey: device.publicJwk,
    });
    await wallet.importMdoc({ issuerSigned, doctype: DOCTYPE, deviceKey: device.privateJwk });
    const { challenge } = pkcePair();
    const pushed = await postForm(`${t.url}/v2.0/oidc/par`, {
      client_id: 'issuer-pkce',
      client_secret: SECRETS.pkceIssuer,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid DrivingLicence',
      state: 'st',
      nonce: 'n',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const browser = new Browser(REDIRECT);
    const prompt = await browser.follow(
      `${t.url}/v2.0/oidc/authorize?client_id=issuer-pkce&request_uri=${encodeURIComponent(pushed.body.request_uri)}`,
    );
    const presented = await wallet.present(requestFromPage(prompt.html!));
    expect(presented.status, JSON.stringify(presented.body)).toBe(200);
    const done = await browser.follow(`${prompt.final}/continue`);
    expect(new URL(done.final).searchParams.get('code')).toBeTruthy();
  });
});
