/**
 * Issue 31 §2 and §3 through the whole service: trust per anchor, per format and per credential type, our
 * own credential types never vouched for by a foreign chain, key usages of issuer certificates, RFC 5280
 * paths (name constraints, critical extensions), and the per-client `vc_issuer` claim.
 *
 * Every attack is a hostile wallet answering a real request (direct_post) with a presentation it built
 * itself; the relying party's browser then gets `access_denied`, never a code with the forged attributes.
 */
// @peculiar/x509 resolves its parsers through tsyringe, which needs the Reflect metadata API
import 'reflect-metadata';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { decodeJwt, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyUsageFlags } from '@peculiar/x509';
import { startTestService, testConfig, SECRETS, REDIRECT, type TestService } from '../helpers/service.js';
import { validateConfig } from '../../src/config/load.js';
import { Browser, pkcePair, postForm } from '../helpers/rp.js';
import { requestFromPage, pushAuthorization, redeemCode } from '../helpers/flows.js';
import { createTestMdocIssuer, presentWithAuth0, type DocumentSigner, type TestMdocIssuer } from '../helpers/mdoc.js';
import { makeCert, unknownCriticalExtension, type TestCert } from '../helpers/pki.js';
import { issueWithX5c, presentSdJwt } from '../helpers/sdjwt.js';
import { keyPair } from '../helpers/keys.js';

const EXTERNAL_VCT = 'https://badges.example/vct/external';
const PARTNER_VCT = 'https://partner.example/vct/pass';
const DOCTYPE = 'org.iso.18013.5.1.mDL';
const NAMESPACE = 'org.iso.18013.5.1';
const PLAIN = { ...(testConfig(0).verifier as object), responseMode: 'direct_post' };

let t: TestService;
/** the mdoc-only anchor */
let iaca: TestMdocIssuer;
/** an SD-JWT VC anchor for any type that is not ours */
let sdJwtRoot: TestCert;
/** an SD-JWT VC anchor for PartnerPass only */
let partnerRoot: TestCert;
let holder: { privateJwk: JWK; publicJwk: JWK };

const credentialTypes = [
  { name: 'EmployeeBadge', attributes: { FirstName: { type: 'string' }, LastName: { type: 'string' } } },
  {
    name: 'ExternalBadge',
    vct: EXTERNAL_VCT,
    attributes: { FirstName: { type: 'string' }, LastName: { type: 'string' } },
  },
  {
    name: 'PartnerPass',
    vct: PARTNER_VCT,
    attributes: { FirstName: { type: 'string' }, LastName: { type: 'string' } },
  },
  {
    name: 'DrivingLicence',
    mdoc: { doctype: DOCTYPE, namespace: NAMESPACE },
    attributes: { family_name: { type: 'string' }, given_name: { type: 'string' } },
  },
];

beforeAll(async () => {
  iaca = await createTestMdocIssuer({ name: 'Trust IACA', pathLength: 1 });
  sdJwtRoot = await makeCert({ subject: 'CN=SD-JWT VC Root, C=NL', ca: true });
  partnerRoot = await makeCert({ subject: 'CN=Partner Root, C=NL', ca: true });
  holder = await keyPair();
  const dir = mkdtempSync(join(tmpdir(), 'vc-anchors-'));
  writeFileSync(join(dir, 'iaca.pem'), iaca.iacaPem);
  writeFileSync(join(dir, 'sdjwt.pem'), sdJwtRoot.pem);
  writeFileSync(join(dir, 'partner.pem'), partnerRoot.pem);
  t = await startTestService({
    credentialTypes,
    clients: [
      {
        clientId: 'issuer-pkce',
        clientSecret: SECRETS.pkceIssuer,
        redirectUris: [REDIRECT],
        pkce: 'required',
        scopes: credentialTypes.map((c) => c.name),
      },
      {
        clientId: 'issuer-plain',
        clientSecret: SECRETS.plainIssuer,
        redirectUris: [REDIRECT],
        scopes: credentialTypes.map((c) => c.name),
        vcIssuerClaim: true,
      },
    ],
    verifier: {
      ...PLAIN,
      trustAnchors: [
        { certificates: join(dir, 'iaca.pem'), formats: ['mso_mdoc'] },
        { certificates: join(dir, 'sdjwt.pem'), formats: ['dc+sd-jwt'] },
        { certificates: join(dir, 'partner.pem'), formats: ['dc+sd-jwt'], types: ['PartnerPass'] },
      ],
    },
  });
});
afterAll(async () => t?.stop());

interface Started {
  clientId: 'issuer-pkce' | 'issuer-plain';
  state: string;
  verifier?: string;
  browser: Browser;
  promptUrl: string;
  request: {
    client_id: string;
    nonce: string;
    state: string;
    response_uri: string;
    dcql_query: { credentials: Array<Record<string, any>> };
  };
}

/** The relying party asks for one type (Version 2 PAR); the browser lands on the prompt; the wallet fetches the request. */
async function start(type: string, clientId: Started['clientId'] = 'issuer-pkce'): Promise<Started> {
  const state = `st-${randomBytes(6).toString('hex')}`;
  const pkce = clientId === 'issuer-pkce' ? pkcePair() : undefined;
  const { authorizeUrl } = await pushAuthorization(t.url, {
    client_id: clientId,
    scope: `openid ${type}`,
    state,
    nonce: 'n',
    code_challenge: pkce?.challenge,
    code_challenge_method: pkce ? 'S256' : undefined,
  });
  const browser = new Browser(REDIRECT);
  const prompt = await browser.follow(authorizeUrl);
  const res = await fetch(new URL(requestFromPage(prompt.html!)).searchParams.get('request_uri')!);
  const request = decodeJwt((await res.text()).trim()) as unknown as Started['request'];
  return { clientId, state, verifier: pkce?.verifier, browser, promptUrl: prompt.final, request };
}

/** A leaf certificate naming `iss` (SD-JWT VC §3.5) under `issuer`. */
const leafFor = (issuer: TestCert, iss: string, extra: Partial<Parameters<typeof makeCert>[0]> = {}) =>
  makeCert({
    subject: 'CN=credential issuer',
    issuer,
    san: [
      { type: 'url', value: iss },
      { type: 'dns', value: new URL(iss).hostname },
    ],
    ...extra,
  });

/** The wallet answers with an SD-JWT VC of `type` signed by `chain[0]`'s key, its chain in x5c. */
async function answerSdJwt(s: Started, type: string, vct: string, iss: string, chain: TestCert[]) {
  const credential = await issueWithX5c({
    x5c: chain.map((c) => c.b64),
    key: chain[0].privateJwk,
    iss,
    vct,
    attributes: { FirstName: 'Forged', LastName: 'Person' },
    holder: holder.publicJwk,
  });
  const vp = await presentSdJwt(credential, holder.privateJwk, { aud: s.request.client_id, nonce: s.request.nonce });
  return postForm(s.request.response_uri, { state: s.request.state, vp_token: JSON.stringify({ [type]: [vp] }) });
}

/** The wallet answers with an mdoc signed by `signer` under the IACA. */
async function answerMdoc(s: Started, signer?: DocumentSigner) {
  const { issuerSigned } = await iaca.issue({
    doctype: DOCTYPE,
    namespace: NAMESPACE,
    claims: { family_name: 'Forged', given_name: 'Person' },
    deviceKey: holder.publicJwk,
    ...(signer ? { signer } : {}),
  });
  const vp = await presentWithAuth0({
    issuerSigned,
    doctype: DOCTYPE,
    namespace: NAMESPACE,
    elements: ['family_name', 'given_name'],
    deviceKey: holder.privateJwk,
    clientId: s.request.client_id,
    nonce: s.request.nonce,
    responseUri: s.request.response_uri,
  });
  return postForm(s.request.response_uri, {
    state: s.request.state,
    vp_token: JSON.stringify({ 'DrivingLicence-mdoc': [vp] }),
  });
}

/** The wallet is refused, and the relying party's browser arrives with access_denied and no code. */
async function expectDenied(s: Started, answer: { status: number; body: any }, description: RegExp): Promise<void> {
  expect(answer.status, JSON.stringify(answer.body)).toBe(400);
  expect(answer.body.error_description).toMatch(description);
  const done = await s.browser.follow(`${s.promptUrl}/continue`);
  const q = new URL(done.final).searchParams;
  expect(q.get('error'), q.toString()).toBe('access_denied');
  expect(q.get('code')).toBeNull();
  expect(q.get('state')).toBe(s.state);
  expect(q.get('error_description')).toMatch(description);
  // the presenter's iss is never repeated to the relying party
  expect(`${answer.body.error_description} ${q.get('error_description')}`).not.toMatch(
    /evil\.test|victim\.test|badges\.example|partner\.example/,
  );
}

/** The presentation is accepted; the relying party redeems its code for the ID token. */
async function expectIdToken(s: Started, answer: { status: number; body: any }): Promise<Record<string, unknown>> {
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  const done = await s.browser.follow(`${s.promptUrl}/continue`);
  const q = new URL(done.final).searchParams;
  expect(q.get('error'), q.get('error_description') ?? '').toBeNull();
  return redeemCode(t.url, { code: q.get('code')!, verifier: s.verifier, clientId: s.clientId });
}

describe('trust per anchor, format and type (issue 31 §2)', () => {
  it('a valid x5c SD-JWT VC of a foreign type under its anchor is accepted', async () => {
    const s = await start('ExternalBadge');
    const leaf = await leafFor(sdJwtRoot, 'https://issuer.badges.example');
    const claims = await expectIdToken(
      s,
      await answerSdJwt(s, 'ExternalBadge', EXTERNAL_VCT, 'https://issuer.badges.example', [leaf]),
    );
    expect(claims).toMatchObject({ FirstName: 'Forged', LastName: 'Person' });
  });

  it('(a) a leaf under an mdoc-only anchor signing an SD-JWT VC with a foreign iss is refused', async () => {
    const s = await start('ExternalBadge');
    // an ordinary leaf under the IACA, and the IACA's own kind of document signer (mdlDS), each naming the iss
    const leaf = await leafFor(iaca.iaca, 'https://evil.test');
    await expectDenied(
      s,
      await answerSdJwt(s, 'ExternalBadge', EXTERNAL_VCT, 'https://evil.test', [leaf, iaca.iaca]),
      /x5c chain is not trusted: the chain does not end at a trusted root/,
    );
    const signer = await iaca.documentSigner({
      san: [
        { type: 'url', value: 'https://evil.test' },
        { type: 'dns', value: 'evil.test' },
      ],
    });
    const s2 = await start('ExternalBadge');
    await expectDenied(
      s2,
      await answerSdJwt(s2, 'ExternalBadge', EXTERNAL_VCT, 'https://evil.test', signer.certs),
      /x5c chain is not trusted/,
    );
  });

  it('(b) a foreign chain, even under an SD-JWT VC anchor, presenting OUR own vct is refused', async () => {
    const s = await start('EmployeeBadge');
    const ownVct = s.request.dcql_query.credentials[0].meta.vct_values[0] as string;
    expect(ownVct).toBe(`${t.url}/types/EmployeeBadge`);
    const leaf = await leafFor(sdJwtRoot, 'https://issuer.badges.example');
    await expectDenied(
      s,
      await answerSdJwt(s, 'EmployeeBadge', ownVct, 'https://issuer.badges.example', [leaf]),
      /no trust anchor may vouch for this credential type by x5c/,
    );
  });

  it('(b) an anchor cannot be configured to vouch for our own type as dc+sd-jwt', () => {
    const config = testConfig(3000, {
      credentialTypes,
      clients: [
        { clientId: 'c', clientSecret: SECRETS.pkceIssuer, redirectUris: [REDIRECT], scopes: ['EmployeeBadge'] },
      ],
      verifier: {
        ...PLAIN,
        trustAnchors: [{ certificates: 'x.pem', formats: ['dc+sd-jwt'], types: ['EmployeeBadge', 'Unknown'] }],
      },
    });
    expect(() => validateConfig(config)).toThrow(
      "config: invalid configuration\n  - verifier.trustAnchors[0].types[0]: this anchor cannot vouch for EmployeeBadge: its vct is this service's own, so its SD-JWT VCs come only from this service's issuer or trustedIssuers\n  - verifier.trustAnchors[0].types[1]: unknown credential type Unknown",
    );
  });

  it('(c) an anchor restricted to PartnerPass vouches for PartnerPass, never for ExternalBadge', async () => {
    const leaf = await leafFor(partnerRoot, 'https://issuer.partner.example');
    const pass = await start('PartnerPass');
    await expectIdToken(
      pass,
      await answerSdJwt(pass, 'PartnerPass', PARTNER_VCT, 'https://issuer.partner.example', [leaf]),
    );
    const badge = await start('ExternalBadge');
    await expectDenied(
      badge,
      await answerSdJwt(badge, 'ExternalBadge', EXTERNAL_VCT, 'https://issuer.partner.example', [leaf]),
      /x5c chain is not trusted: the chain does not end at a trusted root/,
    );
  });

  it('(d) an MSO signed by a document signer without the mdlDS extended key usage is refused', async () => {
    const s = await start('DrivingLicence');
    await expectDenied(
      s,
      await answerMdoc(s, await iaca.documentSigner({ eku: null })),
      /document signer certificate is not trusted .*lacks the mdlDS extended key usage/,
    );
    const valid = await start('DrivingLicence');
    await expectIdToken(valid, await answerMdoc(valid));
  });

  it('(e) an SD-JWT VC leaf whose keyUsage lacks digitalSignature is refused', async () => {
    const s = await start('ExternalBadge');
    const leaf = await leafFor(sdJwtRoot, 'https://issuer.badges.example', { keyUsage: KeyUsageFlags.keyEncipherment });
    await expectDenied(
      s,
      await answerSdJwt(s, 'ExternalBadge', EXTERNAL_VCT, 'https://issuer.badges.example', [leaf]),
      /keyUsage lacks digitalSignature/,
    );
  });

  it('(f) vc_issuer names who vouched, only for the client that turned it on', async () => {
    const leaf = await leafFor(sdJwtRoot, 'https://issuer.badges.example');
    const off = await start('ExternalBadge', 'issuer-pkce');
    expect(
      await expectIdToken(
        off,
        await answerSdJwt(off, 'ExternalBadge', EXTERNAL_VCT, 'https://issuer.badges.example', [leaf]),
      ),
    ).not.toHaveProperty('vc_issuer');
    const on = await start('ExternalBadge', 'issuer-plain');
    const claims = await expectIdToken(
      on,
      await answerSdJwt(on, 'ExternalBadge', EXTERNAL_VCT, 'https://issuer.badges.example', [leaf]),
    );
    expect(claims.vc_issuer).toEqual({ ExternalBadge: { format: 'dc+sd-jwt', iss: 'https://issuer.badges.example' } });
    const mdoc = await start('DrivingLicence', 'issuer-plain');
    expect((await expectIdToken(mdoc, await answerMdoc(mdoc))).vc_issuer).toEqual({
      DrivingLicence: {
        format: 'mso_mdoc',
        ds_subject: 'C=NL, CN=Trust IACA document signer',
        ds_issuer: 'C=NL, CN=Trust IACA',
      },
    });
  });
});

describe('certificate paths by RFC 5280 (issue 31 §3)', () => {
  it('x5c SD-JWT VC: a leaf for https://victim.test under an intermediate permitting only allowed.test is refused; one inside is accepted', async () => {
    const constrained = await makeCert({
      subject: 'CN=Allowed CA',
      issuer: sdJwtRoot,
      ca: true,
      permitted: { dns: ['allowed.test'], uri: ['.allowed.test'] },
    });
    const victim = await leafFor(constrained, 'https://victim.test');
    const s = await start('ExternalBadge');
    await expectDenied(
      s,
      await answerSdJwt(s, 'ExternalBadge', EXTERNAL_VCT, 'https://victim.test', [victim, constrained]),
      /outside the name constraints/,
    );
    const allowed = await makeCert({
      subject: 'CN=issuer',
      issuer: constrained,
      san: [
        { type: 'url', value: 'https://issuer.allowed.test' },
        { type: 'dns', value: 'allowed.test' },
      ],
    });
    const ok = await start('ExternalBadge');
    await expectIdToken(
      ok,
      await answerSdJwt(ok, 'ExternalBadge', EXTERNAL_VCT, 'https://issuer.allowed.test', [allowed, constrained]),
    );
  });

  it('x5c SD-JWT VC: an unknown critical extension on the leaf or on an intermediate is refused', async () => {
    const leaf = await leafFor(sdJwtRoot, 'https://issuer.badges.example', {
      extensions: [unknownCriticalExtension()],
    });
    const s = await start('ExternalBadge');
    await expectDenied(
      s,
      await answerSdJwt(s, 'ExternalBadge', EXTERNAL_VCT, 'https://issuer.badges.example', [leaf]),
      /the leaf certificate has a critical extension this service does not process/,
    );
    const odd = await makeCert({
      subject: 'CN=Odd CA',
      issuer: sdJwtRoot,
      ca: true,
      extensions: [unknownCriticalExtension()],
    });
    const below = await leafFor(odd, 'https://issuer.badges.example');
    const s2 = await start('ExternalBadge');
    await expectDenied(
      s2,
      await answerSdJwt(s2, 'ExternalBadge', EXTERNAL_VCT, 'https://issuer.badges.example', [below, odd]),
      /intermediate certificate 1 has a critical extension/,
    );
  });

  it("mdoc: a document signer outside its intermediate's name constraints is refused", async () => {
    const signer = await iaca.documentSigner({
      san: [{ type: 'dns', value: 'victim.test' }],
      intermediate: { permitted: { dns: ['allowed.test'] } },
    });
    const s = await start('DrivingLicence');
    await expectDenied(s, await answerMdoc(s, signer), /outside the name constraints/);
    const inside = await iaca.documentSigner({
      san: [{ type: 'dns', value: 'ds.allowed.test' }],
      intermediate: { permitted: { dns: ['allowed.test'] } },
    });
    const ok = await start('DrivingLicence');
    await expectIdToken(ok, await answerMdoc(ok, inside));
  });

  it('mdoc: an unknown critical extension on the document signer or its intermediate is refused', async () => {
    const s = await start('DrivingLicence');
    await expectDenied(
      s,
      await answerMdoc(s, await iaca.documentSigner({ extensions: [unknownCriticalExtension()] })),
      /the leaf certificate has a critical extension/,
    );
    const s2 = await start('DrivingLicence');
    await expectDenied(
      s2,
      await answerMdoc(s2, await iaca.documentSigner({ intermediate: { extensions: [unknownCriticalExtension()] } })),
      /intermediate certificate 1 has a critical extension/,
    );
  });
});
