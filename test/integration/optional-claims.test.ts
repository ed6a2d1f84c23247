import { X509Certificate } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base64url, calculateJwkThumbprint, type JWK } from 'jose';
import {
  startTestService,
  testConfig,
  SECRETS,
  REDIRECT,
  VERIFIER_CA_PEM,
  type TestService,
} from '../helpers/service.js';
import { makeHint, pkcePair } from '../helpers/rp.js';
import { createTestMdocIssuer, presentWithAuth0, type TestMdocIssuer } from '../helpers/mdoc.js';
import { testPidIssuer, type PidIssuer } from '../helpers/pid.js';
import {
  firstClaimSet,
  independentHolderAnswers,
  presentSdJwtDisclosing,
  type DcqlCredentialQueryLike,
  type ResolvedRequest,
} from '../helpers/openid4vpHolder.js';
import type { DevWallet } from '../../src/wallet/holder.js';
import type { StoredCredential } from '../../src/wallet/walletFile.js';
import { keyPair } from '../helpers/keys.js';
import {
  holderCompletesIssuance,
  newWallet,
  openPrompt,
  pushAuthorization,
  redeemCode,
  requestFromPage,
} from '../helpers/flows.js';

/**
 * Issue 36 §1, "Optional attributes reach the relying party": a credential that lacks some optional
 * attributes still gives the relying party every other one it has. A type with two required and two
 * optional attributes, its credentials lacking none, each one, and both optional attributes, as SD-JWT VC
 * and as mdoc, presented by the dev wallet and by an independent holder (@openid4vc/openid4vp with
 * @sd-jwt/sd-jwt-vc, or @auth0/mdl for the mdoc), each choosing what to disclose by OpenID4VP 1.0 §6.4.1
 * (the first claim set the credential satisfies). The same for a PID (VerifiedIdentity).
 */
const DOCTYPE = 'org.example.club.1';
const NAMESPACE = 'org.example.club.1';
const REQUIRED = { MemberName: 'Ada Lovelace', MemberNumber: 1815 };
const OPTIONAL = { Premium: true, Nickname: 'Enchantress of Numbers' };
const ATTRIBUTES = [...Object.keys(REQUIRED), ...Object.keys(OPTIONAL)];
const caCert = new X509Certificate(VERIFIER_CA_PEM);

const PERSON_REQUIRED = { given_name: 'Ada', family_name: 'Lovelace' };
const PERSON_OPTIONAL = { personal_administrative_number: 'PAN-1815', nationalities: ['GB'], birthdate: '1815-12-10' };
/** what the ID token of a VerifiedIdentity flow may carry: the subject claim is not listed, so never */
const PID_CLAIMS = [...Object.keys(PERSON_REQUIRED), ...Object.keys(PERSON_OPTIONAL)];

let t: TestService;
let iaca: TestMdocIssuer;
let pidIssuer: PidIssuer;
let device: { privateJwk: JWK; publicJwk: JWK };

beforeAll(async () => {
  iaca = await createTestMdocIssuer();
  pidIssuer = await testPidIssuer('https://pid.test');
  const dir = mkdtempSync(join(tmpdir(), 'vc-iaca-'));
  writeFileSync(join(dir, 'iaca.pem'), iaca.iacaPem);
  device = await keyPair();
  const base = testConfig(0) as { verifier: Record<string, unknown> };
  t = await startTestService({
    credentialTypes: [
      {
        name: 'Club',
        displayName: 'Club card',
        mdoc: { doctype: DOCTYPE, namespace: NAMESPACE },
        attributes: {
          MemberName: { type: 'string' },
          MemberNumber: { type: 'number' },
          Premium: { type: 'boolean', required: false },
          Nickname: { type: 'string', required: false },
        },
      },
    ],
    clients: [
      {
        clientId: 'issuer-pkce',
        clientSecret: SECRETS.pkceIssuer,
        redirectUris: [REDIRECT],
        pkce: 'required',
        scopes: ['issue.Club', 'Club', 'VerifiedIdentity'],
      },
    ],
    verifier: { ...base.verifier, trustAnchors: join(dir, 'iaca.pem') },
    identity: {
      VerifiedIdentity: {
        vct: ['urn:eudi:pid:1'],
        claims: Object.keys(PERSON_REQUIRED),
        optionalClaims: ['nationalities', 'birthdate'],
        subjectClaim: 'personal_administrative_number',
        trustedIssuers: [{ issuer: pidIssuer.issuer, jwks: pidIssuer.jwks }],
      },
    },
  });
});
afterAll(async () => t?.stop());

const pick = (o: Record<string, unknown>, names: string[]) =>
  Object.fromEntries(names.filter((n) => Object.hasOwn(o, n)).map((n) => [n, o[n]]));

async function issueClub(wallet: DevWallet, attributes: Record<string, unknown>): Promise<StoredCredential> {
  const { challenge } = pkcePair();
  const hint = await makeHint({
    clientId: 'issuer-pkce',
    secret: SECRETS.pkceIssuer,
    audience: t.url,
    claims: attributes,
  });
  const { authorizeUrl } = await pushAuthorization(t.url, {
    scope: 'openid issue.Club',
    nonce: 'n',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    id_token_hint: hint,
  });
  await holderCompletesIssuance(authorizeUrl, { redirectUri: REDIRECT, wallet });
  return wallet.list().at(-1)!;
}

/** The relying party starts a verification (PAR, PKCE) and the browser lands on the prompt. */
async function startVerification(scope: string) {
  const { browser, promptUrl, html, verifier } = await openPrompt(t.url, scope, { state: 'st' });
  return { browser, promptUrl, link: requestFromPage(html), verifier };
}

/** The browser continues; the relying party redeems the code: the ID token's claims, or the redirect's error. */
async function finish(
  s: Awaited<ReturnType<typeof startVerification>>,
): Promise<{ claims?: Record<string, unknown>; error?: string | null; description?: string | null }> {
  const done = await s.browser.follow(`${s.promptUrl}/continue`);
  const q = new URL(done.final).searchParams;
  if (q.get('error')) return { error: q.get('error'), description: q.get('error_description') };
  return { claims: await redeemCode(t.url, { code: q.get('code')!, verifier: s.verifier }) };
}

const queryOf = (request: ResolvedRequest, id: string) =>
  (request.dcql_query.credentials as DcqlCredentialQueryLike[]).find((q) => q.id === id)!;

/** The SD-JWT VC by @sd-jwt/sd-jwt-vc, disclosing the first claim set it satisfies, sent by @openid4vc/openid4vp. */
async function libraryPresentsSdJwt(link: string, credential: StoredCredential, queryId: string) {
  return independentHolderAnswers(link, caCert, async (request) => {
    const disclose = firstClaimSet(queryOf(request, queryId), Object.keys(credential.claims));
    expect(disclose, 'the credential satisfies a claim set').toBeDefined();
    return {
      [queryId]: [
        await presentSdJwtDisclosing(credential.credential, credential.holderKey, disclose!, {
          aud: request.client_id,
          nonce: request.nonce,
        }),
      ],
    };
  });
}

/** The mdoc by @auth0/mdl, disclosing the first claim set it satisfies, bound to the request's encryption key (§B.2.6.1), sent by @openid4vc/openid4vp. */
async function libraryPresentsMdoc(link: string, issuerSigned: string, elements: string[]) {
  return independentHolderAnswers(link, caCert, async (request) => {
    const disclose = firstClaimSet(queryOf(request, 'Club-mdoc'), elements);
    expect(disclose, 'the mdoc satisfies a claim set').toBeDefined();
    const jwkThumbprint = base64url.decode(await calculateJwkThumbprint(request.client_metadata.jwks.keys[0] as JWK));
    const deviceResponse = await presentWithAuth0({
      issuerSigned,
      doctype: DOCTYPE,
      namespace: NAMESPACE,
      elements: disclose!,
      deviceKey: device.privateJwk,
      clientId: request.client_id,
      nonce: request.nonce,
      responseUri: request.response_uri,
      jwkThumbprint,
    });
    return { 'Club-mdoc': [deviceResponse] };
  });
}

const optionalNames = Object.keys(OPTIONAL) as Array<keyof typeof OPTIONAL>;
const variants = [
  { name: 'no optional attribute missing', has: optionalNames },
  ...optionalNames.map((missing) => ({ name: `${missing} missing`, has: optionalNames.filter((n) => n !== missing) })),
  { name: 'every optional attribute missing', has: [] as typeof optionalNames },
];

describe.each(variants)(
  'issue 36 §1, a Club card with $name: the ID token carries the required attributes and exactly the optional ones it has',
  ({ has }) => {
    const attributes: Record<string, unknown> = {
      ...REQUIRED,
      ...Object.fromEntries(has.map((n) => [n, OPTIONAL[n]])),
    };

    it('SD-JWT VC, presented by the dev wallet', async () => {
      const wallet = await newWallet();
      await issueClub(wallet, attributes);
      const s = await startVerification('openid Club');
      const presented = await wallet.present(s.link);
      expect(presented.status, JSON.stringify(presented.body)).toBe(200);
      const { claims, description } = await finish(s);
      expect(description).toBeUndefined();
      expect(pick(claims!, ATTRIBUTES)).toEqual(attributes);
    });

    it('SD-JWT VC, presented by @openid4vc/openid4vp', async () => {
      const credential = await issueClub(await newWallet(), attributes);
      const s = await startVerification('openid Club');
      expect((await libraryPresentsSdJwt(s.link, credential, 'Club')).status).toBe(200);
      const { claims, description } = await finish(s);
      expect(description).toBeUndefined();
      expect(pick(claims!, ATTRIBUTES)).toEqual(attributes);
    });

    it('mdoc, presented by the dev wallet', async () => {
      const wallet = await newWallet();
      const { issuerSigned } = await iaca.issue({
        doctype: DOCTYPE,
        namespace: NAMESPACE,
        claims: attributes,
        deviceKey: device.publicJwk,
      });
      await wallet.importMdoc({ issuerSigned, doctype: DOCTYPE, deviceKey: device.privateJwk });
      const s = await startVerification('openid Club');
      const presented = await wallet.present(s.link);
      expect(presented.status, JSON.stringify(presented.body)).toBe(200);
      const { claims, description } = await finish(s);
      expect(description).toBeUndefined();
      expect(pick(claims!, ATTRIBUTES)).toEqual(attributes);
    });

    it('mdoc by @auth0/mdl, sent by @openid4vc/openid4vp', async () => {
      const { issuerSigned } = await iaca.issue({
        doctype: DOCTYPE,
        namespace: NAMESPACE,
        claims: attributes,
        deviceKey: device.publicJwk,
      });
      const s = await startVerification('openid Club');
      expect((await libraryPresentsMdoc(s.link, issuerSigned, Object.keys(attributes))).status).toBe(200);
      const { claims, description } = await finish(s);
      expect(description).toBeUndefined();
      expect(pick(claims!, ATTRIBUTES)).toEqual(attributes);
    });
  },
);

describe('issue 36 §1: required attributes stay required', () => {
  it('a presentation disclosing the optional attributes but not a required one is refused; the relying party gets access_denied naming it', async () => {
    const credential = await issueClub(await newWallet(), { ...REQUIRED, ...OPTIONAL });
    const s = await startVerification('openid Club');
    const answered = await independentHolderAnswers(s.link, caCert, async (request) => ({
      Club: [
        await presentSdJwtDisclosing(
          credential.credential,
          credential.holderKey,
          ['MemberName', 'Premium', 'Nickname'],
          { aud: request.client_id, nonce: request.nonce },
        ),
      ],
    }));
    expect(answered.status).toBe(400);
    const { error, description, claims } = await finish(s);
    expect(claims).toBeUndefined();
    expect(error).toBe('access_denied');
    expect(description).toMatch(/does not disclose MemberNumber/);
  });
});

const pidVariants = [
  { name: 'every optional claim', has: Object.keys(PERSON_OPTIONAL) },
  { name: 'no subject claim (the most preferred optional claim)', has: ['nationalities', 'birthdate'] },
  { name: 'no nationalities', has: ['personal_administrative_number', 'birthdate'] },
  { name: 'no optional claim', has: [] },
];

describe.each(pidVariants)(
  'issue 36 §1, a PID with $name: the ID token carries every listed claim the PID has',
  ({ has }) => {
    const person: Record<string, unknown> = { ...PERSON_REQUIRED, ...pick(PERSON_OPTIONAL, has) };
    // the subject claim is asked for to derive `sub`, and is not a claim the block lists
    const expected = pick(
      person,
      PID_CLAIMS.filter((n) => n !== 'personal_administrative_number'),
    );

    it('presented by the dev wallet', async () => {
      const wallet = await pidIssuer.walletWith(person);
      const s = await startVerification('openid VerifiedIdentity');
      const presented = await wallet.present(s.link);
      expect(presented.status, JSON.stringify(presented.body)).toBe(200);
      const { claims, description } = await finish(s);
      expect(description).toBeUndefined();
      expect(pick(claims!, PID_CLAIMS)).toEqual(expected);
    });

    it('presented by @openid4vc/openid4vp', async () => {
      const [credential] = (await pidIssuer.walletWith(person)).list();
      const s = await startVerification('openid VerifiedIdentity');
      expect((await libraryPresentsSdJwt(s.link, credential, 'pid')).status).toBe(200);
      const { claims, description } = await finish(s);
      expect(description).toBeUndefined();
      expect(pick(claims!, PID_CLAIMS)).toEqual(expected);
    });
  },
);
