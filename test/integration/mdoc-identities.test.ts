import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calculateJwkThumbprint, CompactEncrypt, importJWK, type JWK } from 'jose';
import { REDIRECT, SECRETS, startTestService, testConfig, type TestService } from '../helpers/service.js';
import { openPrompt, presentMdocWithAuth0, redeemCode, requestFromPage } from '../helpers/flows.js';
import { createTestMdocIssuer, type TestMdocIssuer } from '../helpers/mdoc.js';
import { testPidIssuer, type PidIssuer } from '../helpers/pid.js';
import { postForm } from '../helpers/rp.js';
import { keyPair } from '../helpers/keys.js';

/**
 * Issue 48, "The EU PID as an mdoc, and age from an mDL". An independent issuer and holder (@auth0/mdl signs
 * the IssuerSigned and the DeviceResponse, @peculiar/x509 makes the IACAs) over the QR path with an encrypted
 * `direct_post.jwt` answer (OpenID4VP 1.0 §B.2.6.1):
 * - VerifiedIdentity takes the PID as an mdoc (PID Rulebook, doctype eu.europa.ec.eudi.pid.1) beside the SD-JWT
 *   VC PID, one credential_sets entry for either (OpenID4VP 1.0 §6.2), the same claims in the ID token, trusted
 *   through the mso_mdoc anchors that name VerifiedIdentity (D12);
 * - a credential type verified only (`verifyOnly`) asks any mDL for `age_over_18` (ISO/IEC 18013-5 §7.2.5),
 *   trusted through the operator's IACAs listed for it, and answers `age_over_18` without a birth date.
 */
const PID_DOCTYPE = 'eu.europa.ec.eudi.pid.1';
const MDL_DOCTYPE = 'org.iso.18013.5.1.mDL';
const MDL_NAMESPACE = 'org.iso.18013.5.1';

let t: TestService;
let pidIaca: TestMdocIssuer;
let mdlIaca: TestMdocIssuer;
let pidSdJwt: PidIssuer;
let device: { privateJwk: JWK; publicJwk: JWK };

/** A PID as the rulebook's mdoc encoding names its elements (chapter 3). */
const pidElements = {
  family_name: 'Lovelace',
  given_name: 'Ada',
  birth_date: '1815-12-10',
  nationality: ['GB'],
  personal_administrative_number: 'PAN-1815',
  age_over_18: true,
  issuing_country: 'NL',
  issuing_authority: 'Test PID provider',
};

/** An mDL (ISO/IEC 18013-5 §7.2.1), with age_over_NN elements as the holder's age makes them. */
const mdlElements = (age: Record<string, boolean>) => ({
  family_name: 'Lovelace',
  given_name: 'Ada',
  birth_date: '1815-12-10',
  issue_date: '2024-01-01',
  expiry_date: '2034-01-01',
  issuing_country: 'NL',
  issuing_authority: 'Test RDW',
  document_number: 'NL-1815',
  ...age,
});

beforeAll(async () => {
  pidIaca = await createTestMdocIssuer({ name: 'Test PID IACA' });
  mdlIaca = await createTestMdocIssuer({ name: 'Test mDL IACA' });
  pidSdJwt = await testPidIssuer('https://pid.test');
  device = await keyPair();
  const dir = mkdtempSync(join(tmpdir(), 'vc-iacas-'));
  writeFileSync(join(dir, 'pid-iaca.pem'), pidIaca.iacaPem);
  writeFileSync(join(dir, 'mdl-iaca.pem'), mdlIaca.iacaPem);
  const base = testConfig(0) as {
    credentialTypes: Array<Record<string, unknown>>;
    clients: Array<{ clientId: string; scopes: string[] }>;
    verifier: Record<string, unknown>;
  };
  t = await startTestService({
    credentialTypes: [
      ...base.credentialTypes,
      {
        name: 'AgeOver18',
        displayName: 'Over 18',
        verifyOnly: true,
        mdoc: { doctype: MDL_DOCTYPE, namespace: MDL_NAMESPACE },
        attributes: { age_over_18: { type: 'boolean' } },
      },
    ],
    clients: base.clients.map((c) =>
      c.clientId === 'issuer-pkce' ? { ...c, scopes: [...c.scopes, 'AgeOver18', 'VerifiedIdentity'] } : c,
    ),
    identity: {
      VerifiedIdentity: {
        claims: ['given_name', 'family_name', 'birthdate'],
        optionalClaims: ['nationalities'],
        subjectClaim: 'personal_administrative_number',
        mdoc: {},
        trustedIssuers: [{ issuer: pidSdJwt.issuer, jwks: pidSdJwt.jwks }],
      },
    },
    verifier: {
      ...base.verifier,
      trustAnchors: [
        { certificates: join(dir, 'mdl-iaca.pem'), formats: ['mso_mdoc'], types: ['AgeOver18'] },
        { certificates: join(dir, 'pid-iaca.pem'), formats: ['mso_mdoc'], types: ['VerifiedIdentity'] },
      ],
    },
  });
});
afterAll(async () => t?.stop());

/** The Request Object behind the prompt of `scope` (decoded, unverified: the shape is what is checked). */
async function requestFor(scope: string): Promise<Record<string, any>> {
  const { html } = await openPrompt(t.url, scope);
  const res = await fetch(new URL(requestFromPage(html)).searchParams.get('request_uri')!);
  return JSON.parse(Buffer.from((await res.text()).split('.')[1], 'base64url').toString());
}

/** The holder presents the mdoc of `iaca` through @auth0/mdl; the relying party redeems the code or reads the error. */
async function present(o: {
  scope: string;
  queryId: string;
  iaca: TestMdocIssuer;
  doctype: string;
  namespace: string;
  claims: Record<string, unknown>;
  elements: string[];
}) {
  const { issuerSigned } = await o.iaca.issue({
    doctype: o.doctype,
    namespace: o.namespace,
    claims: o.claims,
    deviceKey: device.publicJwk,
  });
  const { answer, callback, verifier } = await presentMdocWithAuth0(t.url, {
    scope: o.scope,
    queryId: o.queryId,
    issuerSigned,
    deviceKey: device.privateJwk,
    doctype: o.doctype,
    namespace: o.namespace,
    elements: o.elements,
  });
  const code = callback.searchParams.get('code');
  const token = code ? await redeemCode(t.url, { code, verifier }) : undefined;
  return { answer, callback, token };
}

const presentPid = (claims: Record<string, unknown>, elements: string[], iaca = pidIaca, doctype = PID_DOCTYPE) =>
  present({
    scope: 'openid VerifiedIdentity',
    queryId: 'pid-mdoc',
    iaca,
    doctype,
    namespace: doctype,
    claims,
    elements,
  });

const presentMdl = (
  claims: Record<string, unknown>,
  elements: string[],
  iaca = mdlIaca,
  doctype = MDL_DOCTYPE,
  namespace = MDL_NAMESPACE,
) => present({ scope: 'openid AgeOver18', queryId: 'AgeOver18-mdoc', iaca, doctype, namespace, claims, elements });

/** The relying party was told access_denied, with a description naming the rule. */
function expectDenied(callback: URL, description: RegExp) {
  expect(callback.searchParams.get('code')).toBeNull();
  expect(callback.searchParams.get('error')).toBe('access_denied');
  expect(callback.searchParams.get('error_description')).toMatch(description);
}

describe('VerifiedIdentity with the PID as an mdoc (issue 48; D12)', () => {
  it('asks for the SD-JWT VC PID or the mdoc PID in one credential_sets entry, the mdoc by the rulebook element names and the IACA named for it (§6.1.1.1, §6.2, §B.2.3)', async () => {
    const request = await requestFor('openid VerifiedIdentity');
    const [sdJwt, mdoc] = request.dcql_query.credentials;
    expect(sdJwt).toMatchObject({ id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: ['urn:eudi:pid:1'] } });
    expect(mdoc).toMatchObject({
      id: 'pid-mdoc',
      format: 'mso_mdoc',
      meta: { doctype_value: PID_DOCTYPE },
      trusted_authorities: [{ type: 'aki', values: [expect.stringMatching(/^[A-Za-z0-9_-]+$/)] }],
    });
    expect(mdoc.trusted_authorities[0].values).toHaveLength(1); // the PID's IACA, not the mDL's
    expect(mdoc.claims.map((c: { path: string[] }) => c.path)).toEqual([
      [PID_DOCTYPE, 'given_name'],
      [PID_DOCTYPE, 'family_name'],
      [PID_DOCTYPE, 'birth_date'],
      [PID_DOCTYPE, 'personal_administrative_number'],
      [PID_DOCTYPE, 'nationality'],
    ]);
    expect(request.dcql_query.credential_sets).toEqual([{ options: [['pid'], ['pid-mdoc']], required: true }]);
  });

  it('an mdoc PID gives the ID token the SD-JWT PID claims: birthdate from birth_date, nationalities from nationality, a pairwise sub', async () => {
    const { answer, token } = await presentPid(pidElements, [
      'given_name',
      'family_name',
      'birth_date',
      'nationality',
      'personal_administrative_number',
    ]);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(token).toMatchObject({
      given_name: 'Ada',
      family_name: 'Lovelace',
      birthdate: '1815-12-10',
      nationalities: ['GB'],
    });
    expect(token!.birth_date).toBeUndefined();
    expect(token!.nationality).toBeUndefined();
    // the subject claim makes sub; it is not listed as a claim, so it stays out
    expect(token!.personal_administrative_number).toBeUndefined();
    expect(token!.sub).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(token!.sub).not.toBe(await calculateJwkThumbprint(device.publicJwk));
    // the same person with another mdoc PID of the same provider: the same sub (D12)
    const again = await presentPid({ ...pidElements, given_name: 'Augusta Ada' }, [
      'given_name',
      'family_name',
      'birth_date',
      'personal_administrative_number',
    ]);
    expect(again.token!.sub).toBe(token!.sub);
    expect(again.token!.nationalities).toBeUndefined(); // an optional claim withheld
  });

  it('the SD-JWT VC PID still answers the same request', async () => {
    const { browser, promptUrl, html, verifier } = await openPrompt(t.url, 'openid VerifiedIdentity');
    const posted = await pidSdJwt.presentDirectly(requestFromPage(html), {
      given_name: 'Ada',
      family_name: 'Lovelace',
      birthdate: '1815-12-10',
    });
    expect(posted.status, JSON.stringify(posted.body)).toBe(200);
    const done = await browser.follow(`${promptUrl}/continue`);
    const code = new URL(done.final).searchParams.get('code')!;
    expect(await redeemCode(t.url, { code, verifier })).toMatchObject({
      given_name: 'Ada',
      family_name: 'Lovelace',
      birthdate: '1815-12-10',
    });
  });

  it("an mdoc PID from an IACA listed for other types only (the mDL's) is refused: a PID's IACAs are its own (D12)", async () => {
    const { answer, callback } = await presentPid(pidElements, ['given_name', 'family_name', 'birth_date'], mdlIaca);
    expect(answer.status).toBe(400);
    expect(answer.body.error_description).toMatch(
      /^vp_token\.pid-mdoc: the mdoc document signer certificate is not trusted/,
    );
    expectDenied(callback, /document signer certificate is not trusted/);
  });

  it('an mdoc PID without a required element is refused (missing_claims), naming the element', async () => {
    const { family_name: _, ...withoutFamilyName } = pidElements;
    const { answer, callback } = await presentPid(withoutFamilyName, ['given_name', 'birth_date']);
    expect(answer.status).toBe(400);
    expect(answer.body.error_description).toMatch(
      /^vp_token\.pid-mdoc: the presentation does not disclose family_name/,
    );
    expectDenied(callback, /does not disclose family_name/);
  });

  it('an mDL in place of the PID is refused (mdoc_wrong_doctype)', async () => {
    const { answer, callback } = await present({
      scope: 'openid VerifiedIdentity',
      queryId: 'pid-mdoc',
      iaca: pidIaca,
      doctype: MDL_DOCTYPE,
      namespace: MDL_NAMESPACE,
      claims: mdlElements({ age_over_18: true }),
      elements: ['given_name', 'family_name', 'birth_date'],
    });
    expect(answer.status).toBe(400);
    expect(answer.body.error_description).toMatch(
      /^vp_token\.pid-mdoc: the mdoc is not of the requested doctype eu\.europa\.ec\.eudi\.pid\.1/,
    );
    expectDenied(callback, /not of the requested doctype/);
  });
});

describe('age from any mDL: a type verified only (issue 48; ISO/IEC 18013-5 §7.2.5)', () => {
  it('asks an mDL for age_over_18 alone, as an mdoc only, naming the IACAs listed for the type', async () => {
    const request = await requestFor('openid AgeOver18');
    expect(request.dcql_query.credentials).toHaveLength(1);
    expect(request.dcql_query.credentials[0]).toMatchObject({
      id: 'AgeOver18-mdoc',
      format: 'mso_mdoc',
      meta: { doctype_value: MDL_DOCTYPE },
      claims: [{ id: 'age_over_18', path: [MDL_NAMESPACE, 'age_over_18'], intent_to_retain: false }],
      trusted_authorities: [{ type: 'aki', values: [expect.any(String)] }],
    });
    expect(request.dcql_query.credential_sets).toEqual([{ options: [['AgeOver18-mdoc']], required: true }]);
  });

  it('over 18: the ID token says age_over_18 true, and never the birth date even when the wallet discloses it', async () => {
    const { answer, token } = await presentMdl(mdlElements({ age_over_18: true, age_over_21: true }), [
      'age_over_18',
      'birth_date',
      'family_name',
    ]);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(token!.age_over_18).toBe(true);
    for (const name of ['birth_date', 'birthdate', 'family_name', 'age_over_21', 'document_number'])
      expect(token![name], name).toBeUndefined();
    expect(token!.sub).toBe(await calculateJwkThumbprint(device.publicJwk)); // D2: the device key
  });

  it('under 18: the ID token says age_over_18 false (the relying party reads the answer, not only its presence)', async () => {
    const { answer, token } = await presentMdl(mdlElements({ age_over_16: true, age_over_18: false }), ['age_over_18']);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(token!.age_over_18).toBe(false);
    expect(token!.age_over_16).toBeUndefined();
  });

  it('an mDL without age_over_18 answers through the nearest age_over_NN it holds (§7.2.5), as age_over_18 alone', async () => {
    const over = await presentMdl(mdlElements({ age_over_16: true, age_over_21: true }), ['age_over_18']);
    expect(over.answer.status, JSON.stringify(over.answer.body)).toBe(200);
    expect(over.token!.age_over_18).toBe(true);
    expect(over.token!.age_over_21).toBeUndefined();
    const under = await presentMdl(mdlElements({ age_over_16: false, age_over_21: false }), ['age_over_18']);
    expect(under.answer.status, JSON.stringify(under.answer.body)).toBe(200);
    expect(under.token!.age_over_18).toBe(false);
  });

  it('an mDL from an IACA the operator did not list for the type is refused', async () => {
    const stranger = await createTestMdocIssuer({ name: 'Stranger IACA' });
    for (const iaca of [stranger, pidIaca]) {
      const { answer, callback } = await presentMdl(mdlElements({ age_over_18: true }), ['age_over_18'], iaca);
      expect(answer.status).toBe(400);
      expect(answer.body.error_description).toMatch(
        /^vp_token\.AgeOver18-mdoc: the mdoc document signer certificate is not trusted/,
      );
      expectDenied(callback, /not trusted/);
    }
  });

  it('an mDL without any age_over_NN element is refused (missing_claims)', async () => {
    const { answer, callback } = await presentMdl(mdlElements({}), ['age_over_18', 'family_name']);
    expect(answer.status).toBe(400);
    expect(answer.body.error_description).toMatch(
      /^vp_token\.AgeOver18-mdoc: the presentation does not disclose age_over_18/,
    );
    expectDenied(callback, /does not disclose age_over_18/);
  });

  it('another doctype (a PID with age_over_18) is refused (mdoc_wrong_doctype)', async () => {
    const { answer, callback } = await presentMdl(pidElements, ['age_over_18'], mdlIaca, PID_DOCTYPE, MDL_NAMESPACE);
    expect(answer.status).toBe(400);
    expect(answer.body.error_description).toMatch(/not of the requested doctype org\.iso\.18013\.5\.1\.mDL/);
    expectDenied(callback, /not of the requested doctype/);
  });

  it('bad input is the spec error, never a 500: a presentation that is not a DeviceResponse, an unrequested query id', async () => {
    for (const vpToken of [{ 'AgeOver18-mdoc': ['not-cbor'] }, { AgeOver18: ['x~'] }, { 'AgeOver18-mdoc': [42] }]) {
      const { html, browser, promptUrl } = await openPrompt(t.url, 'openid AgeOver18');
      const res = await fetch(new URL(requestFromPage(html)).searchParams.get('request_uri')!);
      const request = JSON.parse(Buffer.from((await res.text()).split('.')[1], 'base64url').toString());
      const jwk = request.client_metadata.jwks.keys[0] as JWK;
      const jwe = await new CompactEncrypt(
        new TextEncoder().encode(JSON.stringify({ vp_token: vpToken, state: request.state })),
      )
        .setProtectedHeader({ alg: 'ECDH-ES', enc: 'A256GCM', kid: jwk.kid! })
        .encrypt(await importJWK(jwk, 'ECDH-ES'));
      const answer = await postForm(request.response_uri, { response: jwe });
      expect(answer.status, JSON.stringify(vpToken)).toBe(400);
      expect(answer.body.error).toBe('invalid_request');
      expect(answer.body.error_description).toMatch(/^vp_token/);
      const done = await browser.follow(`${promptUrl}/continue`);
      expectDenied(new URL(done.final), /vp_token/);
    }
  });

  it('is never issued: issue.AgeOver18 is refused at PAR (invalid_scope), and the wallet issuer offers no such configuration', async () => {
    const pushed = await postForm(`${t.url}/v2.0/oidc/par`, {
      client_id: 'issuer-pkce',
      client_secret: SECRETS.pkceIssuer,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid issue.AgeOver18',
    });
    expect(pushed.status).toBe(400);
    expect(pushed.body.error).toBe('invalid_scope');
    const metadata = await (await fetch(`${t.url}/.well-known/openid-credential-issuer/wallet`)).json();
    expect(Object.keys(metadata.credential_configurations_supported)).not.toContain('AgeOver18');
    expect(Object.keys(metadata.credential_configurations_supported)).not.toContain('AgeOver18.mso_mdoc');
  });
});
