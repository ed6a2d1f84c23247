/**
 * ISO mdoc issuance through the whole service: a relying party's issuance of a type with `mdoc`, whose
 * offer names the SD-JWT VC and the mso_mdoc configuration; wallets that pick the mdoc get an
 * IssuerSigned under a document signer the local issuer CA made (the IACA). @auth0/mdl's Verifier accepts
 * it against that CA; presented to our own verifier (by @auth0/mdl, and by the dev wallet), the relying
 * party gets its elements as claims.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setGlobalConfig } from '@openid4vc/openid4vci';
import { Verifier } from '@auth0/mdl';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  holderCompletesVerification,
  newWallet,
  presentMdocWithAuth0,
  pushIssuance,
  redeemCode,
} from '../helpers/flows.js';
import { oid4vpSessionTranscriptBytes, presentWithAuth0 } from '../helpers/mdoc.js';
import { independentWallet } from '../helpers/openid4vci.js';
import { Browser, offerFromPage } from '../helpers/rp.js';
import {
  issuerCaFile,
  REDIRECT,
  SECRETS,
  startTestService,
  testConfig,
  VERIFIER_TRUST,
  type TestService,
} from '../helpers/service.js';
import { readPemCertificates } from '../../src/keys/x509.js';
import * as oidc from 'openid-client';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { run as walletCli } from '../../src/wallet/cli.js';
import { DevWallet } from '../../src/wallet/holder.js';

const DOCTYPE = 'org.iso.18013.5.1.mDL';
const NAMESPACE = 'org.iso.18013.5.1';
const licence = { family_name: 'Lovelace', given_name: 'Ada', birth_date: '1815-12-10' };

let t: TestService;

beforeAll(async () => {
  setGlobalConfig({ allowInsecureUrls: true }); // the service runs on http://127.0.0.1
  const base = testConfig(0) as { credentialTypes: Array<Record<string, unknown>> };
  t = await startTestService({
    credentialTypes: [
      ...base.credentialTypes,
      {
        name: 'DrivingLicence',
        displayName: 'Driving licence',
        pinCodeLength: 4,
        validity: 'P30D',
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
        scopes: ['issue.DrivingLicence', 'DrivingLicence', 'issue.EmployeeBadge', 'EmployeeBadge'],
      },
    ],
  });
});
afterAll(async () => {
  setGlobalConfig({ allowInsecureUrls: false });
  await t?.stop();
});

const caPem = () => readFileSync(issuerCaFile, 'utf8');

/** The relying party's issuance of a DrivingLicence; the prompt page's offer and the browser at the prompt. */
async function startIssuance(pin?: string) {
  const rp = await pushIssuance(t.url, {
    clientId: 'issuer-pkce',
    secret: SECRETS.pkceIssuer,
    attributes: licence,
    pin,
    redirectUri: REDIRECT,
    params: { scope: 'openid issue.DrivingLicence' },
  });
  const browser = new Browser(REDIRECT);
  const prompt = await browser.follow(rp.authorizeUrl.href);
  return { rp, browser, prompt, offer: offerFromPage(prompt.html!) };
}

/** The browser goes on to the relying party, which redeems its code: the ID token's claims. */
async function finish(started: Awaited<ReturnType<typeof startIssuance>>) {
  const done = await started.browser.follow(`${started.prompt.final}/continue`);
  const tokens = await oidc.authorizationCodeGrant(started.rp.config, new URL(done.final), {
    pkceCodeVerifier: started.rp.verifier,
    expectedState: started.rp.state,
    expectedNonce: started.rp.nonce,
  });
  return tokens.claims()!;
}

/** Our verifier's request for a DrivingLicence (PAR, PKCE), answered with an mdoc presented by @auth0/mdl: the ID token's claims. */
async function presentToOurVerifier(issuerSigned: string, deviceKey: JWK, elements: string[]) {
  const { answer, callback, verifier } = await presentMdocWithAuth0(t.url, {
    scope: 'openid DrivingLicence',
    queryId: 'DrivingLicence-mdoc',
    issuerSigned,
    deviceKey,
    doctype: DOCTYPE,
    namespace: NAMESPACE,
    elements,
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  expect(callback.searchParams.get('error'), callback.searchParams.get('error_description') ?? '').toBeNull();
  return redeemCode(t.url, { code: callback.searchParams.get('code')!, verifier });
}

describe('mso_mdoc issuance through the service', () => {
  it('an independent wallet (@openid4vc/openid4vci) picks the mdoc of a PIN offer; @auth0/mdl verifies it against the local issuer CA; our verifier accepts it', async () => {
    const started = await startIssuance('4321');
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const publicJwk = await exportJWK(publicKey);
    const client = independentWallet([{ privateKey, publicJwk }]);
    const credentialOffer = await client.resolveCredentialOffer(started.offer);
    expect(credentialOffer.credential_configuration_ids).toEqual(['DrivingLicence', 'DrivingLicence.mso_mdoc']);
    const issuerMetadata = await client.resolveIssuerMetadata(credentialOffer.credential_issuer);
    const { accessTokenResponse } = await client.retrievePreAuthorizedCodeAccessTokenFromOffer({
      credentialOffer,
      issuerMetadata,
      txCode: '4321',
    });
    const { c_nonce } = await client.requestNonce({ issuerMetadata });
    const { jwt } = await client.createCredentialRequestJwtProof({
      issuerMetadata,
      credentialConfigurationId: 'DrivingLicence.mso_mdoc',
      nonce: c_nonce,
      signer: { method: 'jwk', alg: 'ES256', publicJwk: publicJwk as never },
    });
    const { credentialResponse } = await client.retrieveCredentials({
      issuerMetadata,
      accessToken: accessTokenResponse.access_token,
      credentialConfigurationId: 'DrivingLicence.mso_mdoc',
      proofs: { jwt: [jwt] },
    });
    const issuerSigned = (credentialResponse.credentials?.[0] as { credential: string }).credential;
    // the relying party's issuance finishes as for an SD-JWT VC
    const idToken = await finish(started);
    expect(idToken).toMatchObject({ aud: 'issuer-pkce' });

    // @auth0/mdl: issuer signature, document signer chain to the local CA (its IACA), digests, device signature
    const deviceKey = await exportJWK(privateKey);
    const handover = { clientId: 'x509_hash:rp', nonce: 'n-2', responseUri: 'https://rp.example/response' };
    const deviceResponse = await presentWithAuth0({
      issuerSigned,
      doctype: DOCTYPE,
      namespace: NAMESPACE,
      elements: ['family_name', 'given_name', 'birth_date'],
      deviceKey,
      ...handover,
    });
    const mdoc = await new Verifier([caPem()]).verify(Buffer.from(deviceResponse, 'base64url'), {
      encodedSessionTranscript: oid4vpSessionTranscriptBytes(handover),
    });
    const elements = mdoc.documents[0].getIssuerNameSpace(NAMESPACE);
    expect({ ...elements, birth_date: String(elements.birth_date) }).toEqual(licence);
    const validUntil = mdoc.documents[0].issuerSigned.issuerAuth.decodedPayload.validityInfo.validUntil;
    // a day, not the type's validity (P30D): the mdoc carries no status (ARF Annex 2 VCR_01, docs/decisions.md)
    expect(validUntil.getTime() - Date.now()).toBeLessThanOrEqual(86_400_000);
    expect(validUntil.getTime() - Date.now()).toBeGreaterThan(86_400_000 - 120_000);
    // and the relying party is told when the credential the holder took expires
    expect(idToken.ExpiresAt).toBe(validUntil.toISOString().replace(/\.\d{3}Z$/, 'Z'));

    // the local CA made the document signer beside its certificate (memory store: files)
    expect(readdirSync(join(dirname(issuerCaFile), 'document-signers')).length).toBeGreaterThan(0);

    const claims = await presentToOurVerifier(issuerSigned, deviceKey, ['family_name', 'given_name']);
    expect(claims).toMatchObject({
      family_name: 'Lovelace',
      given_name: 'Ada',
      sub: await calculateJwkThumbprint(publicJwk),
    });
  });

  it('the dev wallet receives the mdoc of a no-PIN offer, keeps it, and presents it to our verifier', async () => {
    const started = await startIssuance();
    const wallet = await newWallet();
    // the wallet checks the issuer's signature up to the IACA it was given (our local issuer CA)
    const stored = await wallet.receiveMdoc(started.offer, {
      issuerTrust: readPemCertificates(caPem(), 'the local issuer CA'),
    });
    expect(stored).toMatchObject({
      format: 'mso_mdoc',
      doctype: DOCTYPE,
      issuer: `${t.url}/wallet`,
      claims: { [NAMESPACE]: licence },
    });
    await finish(started);
    expect(wallet.list().map((c) => c.format)).toEqual(['mso_mdoc']);

    const config = await oidc.discovery(
      new URL(`${t.url}/v2.0/.well-known/openid-configuration`),
      'issuer-pkce',
      SECRETS.pkceIssuer,
      oidc.ClientSecretPost(SECRETS.pkceIssuer),
      { execute: [oidc.allowInsecureRequests] },
    );
    const verifier = oidc.randomPKCECodeVerifier();
    const url = await oidc.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: REDIRECT,
      scope: 'openid DrivingLicence',
      nonce: 'n-3',
      state: 's-3',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const { callbackUrl, presented } = await holderCompletesVerification(url.href, { redirectUri: REDIRECT, wallet });
    expect(presented.status, JSON.stringify(presented.body)).toBe(200);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(callbackUrl), {
      pkceCodeVerifier: verifier,
      expectedState: 's-3',
      expectedNonce: 'n-3',
    });
    expect(tokens.claims()).toMatchObject({ family_name: 'Lovelace', given_name: 'Ada' });
  });

  it('npm run wallet -- receive --format mso_mdoc keeps the mdoc (a PIN offer)', async () => {
    const started = await startIssuance('1357');
    const file = join(mkdtempSync(join(tmpdir(), 'vc-wallet-cli-')), 'wallet.json');
    const lines: string[] = [];
    await walletCli(
      [
        'receive',
        started.offer,
        '--pin',
        '1357',
        '--format',
        'mso_mdoc',
        '--issuer-trust',
        issuerCaFile,
        '--wallet',
        file,
      ],
      (line) => lines.push(line),
    );
    expect(lines.join('\n')).toMatch(/received into/);
    expect((await DevWallet.open(file)).list()).toMatchObject([
      { format: 'mso_mdoc', doctype: DOCTYPE, claims: { [NAMESPACE]: licence } },
    ]);
    await finish(started);
    await expect(walletCli(['receive', started.offer, '--format', 'jwt_vc'], () => undefined)).rejects.toThrow(
      /--format takes mso_mdoc/,
    );
  });

  it('the dev wallet refuses an mdoc whose document signer does not chain to the IACAs it trusts', async () => {
    const started = await startIssuance();
    const wallet = await newWallet();
    await expect(wallet.receiveMdoc(started.offer, { issuerTrust: VERIFIER_TRUST })).rejects.toThrow(
      /^the issuer's mdoc does not verify: .*trusted root/,
    );
    expect(wallet.list()).toEqual([]);
  });

  it('the same offer still gives the SD-JWT VC to a wallet that takes that (the dev wallet, first configuration)', async () => {
    const started = await startIssuance();
    const wallet = await newWallet();
    const stored = await wallet.receive(started.offer);
    expect(stored).toMatchObject({ format: 'dc+sd-jwt', claims: licence });
    await finish(started);
  });
});
