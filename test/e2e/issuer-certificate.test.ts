/**
 * Issue 32 §1: credentials that production wallets accept. Every SD-JWT VC and Status List Token carries the
 * issuer's certificate chain in `x5c` (OpenID4VC HAIP 1.0 §6.1.1, SD-JWT VC §3.5). An independent wallet
 * (@openid4vc/openid4vci as the protocol client) that insists on `x5c` and validates it with pkijs and
 * @peculiar/x509 against the generated local issuer CA receives a PIN credential and a no-PIN one, and
 * presents one to our verifier, which still resolves our key by `kid`.
 */
import { execFile } from 'node:child_process';
import { createPrivateKey, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setGlobalConfig } from '@openid4vc/openid4vci';
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair } from 'jose';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holderCompletesIssuance, holderCompletesVerification, newWallet, pushIssuance } from '../helpers/flows.js';
import { independentWallet } from '../helpers/openid4vci.js';
import { Browser, offerFromPage } from '../helpers/rp.js';
import { issuerCaFile, REDIRECT, SECRETS, startTestService, testConfig, type TestService } from '../helpers/service.js';
import { serviceEnv } from '../helpers/childService.js';
import { loadKeys } from '../../src/keys/keys.js';
import { demoClients, demoIdentity, demoVerifier } from '../helpers/demoService.js';

const exec = promisify(execFile);
/** `npm run keys -- ...` as an operator runs it, on a config file. */
async function keysCommand(configFile: string, ...args: string[]): Promise<string> {
  const { stdout } = await exec(
    process.execPath,
    ['--import', 'tsx', join('src', 'main.ts'), 'keys', ...args, '--config', configFile],
    { env: serviceEnv(), timeout: 60_000 },
  );
  return stdout;
}
import { checkX5cIndependently } from '../helpers/x5c.js';
import { certifyCredentialKey, generateIssuerCa } from '../../src/keys/issuerCertificate.js';
import { toPem } from '../../src/keys/x509.js';

let t: TestService;
let iss: string;

beforeAll(async () => {
  setGlobalConfig({ allowInsecureUrls: true }); // the service runs on http://127.0.0.1
  t = await startTestService();
  iss = `${t.url}/wallet`;
});
afterAll(async () => {
  setGlobalConfig({ allowInsecureUrls: false });
  await t?.stop();
});

const caPem = () => readFileSync(issuerCaFile, 'utf8');

/**
 * A relying party's issuance (openid-client, PAR, PKCE) whose wallet step the independent wallet does:
 * it refuses a credential without an `x5c` chain that validates to the issuer CA it was told to trust.
 */
async function issueWithIndependentWallet(type: {
  scope: string;
  configurationId: string;
  attributes: Record<string, unknown>;
  pin?: string;
}) {
  const rp = await pushIssuance(t.url, {
    clientId: 'issuer-pkce',
    secret: SECRETS.pkceIssuer,
    attributes: type.attributes,
    pin: type.pin,
    redirectUri: REDIRECT,
    params: { scope: `openid ${type.scope}` },
  });
  const browser = new Browser(REDIRECT);
  const prompt = await browser.follow(rp.authorizeUrl.href);
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const client = independentWallet([{ privateKey, publicJwk }]);
  const credentialOffer = await client.resolveCredentialOffer(offerFromPage(prompt.html!));
  const issuerMetadata = await client.resolveIssuerMetadata(credentialOffer.credential_issuer);
  const { accessTokenResponse } = await client.retrievePreAuthorizedCodeAccessTokenFromOffer({
    credentialOffer,
    issuerMetadata,
    txCode: type.pin,
  });
  const { c_nonce } = await client.requestNonce({ issuerMetadata });
  const { jwt } = await client.createCredentialRequestJwtProof({
    issuerMetadata,
    credentialConfigurationId: type.configurationId,
    nonce: c_nonce,
    signer: { method: 'jwk', alg: 'ES256', publicJwk: publicJwk as never },
  });
  const { credentialResponse } = await client.retrieveCredentials({
    issuerMetadata,
    accessToken: accessTokenResponse.access_token,
    credentialConfigurationId: type.configurationId,
    proofs: { jwt: [jwt] },
  });
  const credential = (credentialResponse.credentials?.[0] as { credential: string }).credential;
  // the wallet's acceptance check: x5c required, validated to the trusted issuer CA, naming iss
  const issuerJwt = credential.split('~')[0];
  const checked = await checkX5cIndependently(issuerJwt, { caPem: caPem(), iss: decodeJwt(issuerJwt).iss as string });
  await browser.follow(`${prompt.final}/continue`);
  return { credential, issuerJwt, checked, holderJwk: await exportJWK(privateKey) };
}

async function verifyAtOurVerifier(wallet: Awaited<ReturnType<typeof newWallet>>, scope: string) {
  const config = await oidc.discovery(
    new URL(`${t.url}/v2.0/.well-known/openid-configuration`),
    'issuer-pkce',
    SECRETS.pkceIssuer,
    oidc.ClientSecretPost(SECRETS.pkceIssuer),
    {
      execute: [oidc.allowInsecureRequests],
    },
  );
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = await oidc.buildAuthorizationUrlWithPAR(config, {
    redirect_uri: REDIRECT,
    scope: `openid ${scope}`,
    nonce,
    state,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  const { callbackUrl } = await holderCompletesVerification(url.href, { redirectUri: REDIRECT, wallet });
  return oidc.authorizationCodeGrant(config, new URL(callbackUrl), {
    pkceCodeVerifier: verifier,
    expectedState: state,
    expectedNonce: nonce,
  });
}

describe('issue 32 §1: the issuer certificate in x5c (HAIP 1.0 §6.1.1)', () => {
  it('a wallet that requires x5c accepts a PIN credential and a no-PIN one, and our verifier accepts the presentation', async () => {
    const badge = await issueWithIndependentWallet({
      scope: 'issue.EmployeeBadge',
      configurationId: 'EmployeeBadge',
      attributes: { FirstName: 'Ada', LastName: 'Lovelace' },
      pin: '2468',
    });
    const card = await issueWithIndependentWallet({
      scope: 'issue.MembershipCard',
      configurationId: 'MembershipCard',
      attributes: { MemberName: 'Mary Somerville', MemberNumber: 42 },
    });
    for (const vc of [badge, card]) {
      expect(decodeJwt(vc.issuerJwt).iss).toBe(iss);
      // leaf first, no root (checked above); kid stays for metadata-resolving wallets
      expect(vc.checked.header.x5c).toHaveLength(1);
      expect(vc.checked.header.kid).toBeTruthy();
    }
    // one chain for every credential of the active key
    expect(card.checked.leaf).toBe(badge.checked.leaf);

    // the key the leaf certifies is the one the JWT VC issuer metadata publishes under the header's kid
    const meta = (await (await fetch(`${t.url}/.well-known/jwt-vc-issuer/wallet`)).json()) as {
      jwks: { keys: Record<string, unknown>[] };
    };
    const published = meta.jwks.keys.find((k) => k.kid === badge.checked.header.kid);
    expect(published).toMatchObject(badge.checked.leafJwk);

    const wallet = await newWallet();
    await wallet.import(badge.credential, badge.holderJwk);
    const tokens = await verifyAtOurVerifier(wallet, 'EmployeeBadge');
    expect(tokens.claims()).toMatchObject({ FirstName: 'Ada', LastName: 'Lovelace' });
  });

  it('the Status List Token carries the same chain and verifies under its leaf (HAIP 1.0 §6.1)', async () => {
    const { issuerJwt, checked } = await issueWithIndependentWallet({
      scope: 'issue.MembershipCard',
      configurationId: 'MembershipCard',
      attributes: { MemberName: 'Emmy Noether', MemberNumber: 7 },
    });
    const { uri } = (decodeJwt(issuerJwt) as { status: { status_list: { uri: string } } }).status.status_list;
    const response = await fetch(uri);
    expect(response.headers.get('content-type')).toMatch(/application\/statuslist\+jwt/);
    const token = await response.text();
    // the signature is verified with the leaf's key inside the check; the iss of a status list token is ours
    const list = await checkX5cIndependently(token, { caPem: caPem(), iss });
    expect(list.header).toMatchObject({ typ: 'statuslist+jwt', kid: checked.header.kid });
    expect(list.leaf).toBe(checked.leaf);
    expect(decodeJwt(token)).toMatchObject({ iss, sub: uri });
  });
});

describe("issue 32 §1: an operator's issuer certificate (issuer.certificateChain, issuer.key)", () => {
  it('signs with issuer.key under its chain; the keys.credential keys stay published; our verifier accepts the credential', async () => {
    const ca = await generateIssuerCa('127.0.0.1');
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk = await exportJWK(privateKey);
    // the leaf names the host as iPAddress (the test's port is not known yet): SD-JWT VC §3.5 lets the host name iss
    const x5c = await certifyCredentialKey(ca, jwk, ['http://127.0.0.1/wallet']);
    const dir = mkdtempSync(join(tmpdir(), 'vc-operator-issuer-'));
    writeFileSync(join(dir, 'chain.pem'), x5c.map((c) => toPem(new Uint8Array(Buffer.from(c, 'base64')))).join(''));
    writeFileSync(
      join(dir, 'key.pem'),
      createPrivateKey({ key: jwk as never, format: 'jwk' }).export({ type: 'pkcs8', format: 'pem' }) as string,
      { mode: 0o600 },
    );
    const operator = await startTestService({
      issuer: { certificateChain: join(dir, 'chain.pem'), key: join(dir, 'key.pem') },
    });
    try {
      expect(operator.service.issuerOrigin.origin).toBe('file');
      const wallet = await newWallet();
      const rp = await pushIssuance(operator.url, {
        clientId: 'issuer-pkce',
        secret: SECRETS.pkceIssuer,
        attributes: { FirstName: 'Grace', LastName: 'Hopper' },
        pin: '1357',
        redirectUri: REDIRECT,
      });
      await holderCompletesIssuance(rp.authorizeUrl.href, { redirectUri: REDIRECT, wallet, pin: '1357' });
      const issuerJwt = wallet.list()[0].credential.split('~')[0];
      const checked = await checkX5cIndependently(issuerJwt, {
        caPem: ca.certificate,
        iss: `${operator.url}/wallet`,
        uri: false,
      });
      expect(checked.header.x5c).toEqual(x5c);
      expect(checked.leafJwk).toMatchObject({ x: jwk.x, y: jwk.y });

      const meta = (await (await fetch(`${operator.url}/.well-known/jwt-vc-issuer/wallet`)).json()) as {
        jwks: { keys: { kid: string }[] };
      };
      const kids = meta.jwks.keys.map((k) => k.kid);
      expect(kids).toContain(decodeProtectedHeader(issuerJwt).kid);
      // what the key set signed before the operator's certificate came keeps verifying by kid
      for (const k of operator.service.keyRing.credential.published().keys) expect(kids).toContain(k.kid);

      const saved = t;
      t = operator;
      try {
        expect((await verifyAtOurVerifier(wallet, 'EmployeeBadge')).claims()).toMatchObject({ FirstName: 'Grace' });
      } finally {
        t = saved;
      }
    } finally {
      await operator.stop();
    }
  });
});

describe('issue 32 §1: the issuer certificate rotates with the credential key (npm run keys -- rotate credential)', () => {
  it('after activation new credentials carry a new leaf for the new key; one issued under the old leaf still verifies at our verifier', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vc-issuer-rotation-'));
    const overrides = {
      keys: {
        idToken: join(dir, 'id.json'),
        credential: join(dir, 'credential.json'),
        cookies: join(dir, 'cookies.json'),
        pairwise: join(dir, 'pairwise.json'),
        rotation: { activateAfter: 'PT2S', reloadInterval: 0.2 },
      },
      issuer: { certificateChain: join(dir, 'issuer-chain.pem'), key: join(dir, 'issuer-key.pem') },
    };
    // key files, as an operator's deployment (or a first start on the memory store) has them: the command and the service share them
    await loadKeys({ ...overrides.keys, generate: true }, dir);
    const s = await startTestService(overrides);
    const saved = t;
    t = s;
    try {
      const ca = readFileSync(join(dir, 'issuer-ca.pem'), 'utf8');
      const issue = async (name: string) => {
        const wallet = await newWallet();
        const rp = await pushIssuance(s.url, {
          clientId: 'issuer-pkce',
          secret: SECRETS.pkceIssuer,
          attributes: { FirstName: name, LastName: 'Lovelace' },
          pin: '1234',
          redirectUri: REDIRECT,
        });
        await holderCompletesIssuance(rp.authorizeUrl.href, { redirectUri: REDIRECT, wallet, pin: '1234' });
        const issuerJwt = wallet.list()[0].credential.split('~')[0];
        return { wallet, checked: await checkX5cIndependently(issuerJwt, { caPem: ca, iss: `${s.url}/wallet` }) };
      };
      const before = await issue('Old');

      // the operator's command, on a config file of this service
      const configFile = join(dir, 'config.json');
      writeFileSync(configFile, JSON.stringify(testConfig(Number(new URL(s.url).port), overrides)));
      expect(await keysCommand(configFile, 'rotate', 'credential')).toMatch(/local issuer CA certified the new key/);
      const stored = JSON.parse(readFileSync(join(dir, 'credential.json'), 'utf8')) as {
        keys: { kid: string; x5c?: string[] }[];
      };
      expect(stored.keys).toHaveLength(2);
      expect(stored.keys.every((k) => k.x5c?.length === 1)).toBe(true);
      const newKid = stored.keys.find((k) => k.kid !== before.checked.header.kid)!.kid;

      await new Promise((r) => setTimeout(r, 2500)); // activateAfter, and a reload
      await s.service.keyRing.reload();
      const after = await issue('New');
      expect(after.checked.header.kid).toBe(newKid);
      expect(after.checked.leaf).not.toBe(before.checked.leaf);
      expect(after.checked.leafJwk).not.toEqual(before.checked.leafJwk);
      // the new leaf certifies the key the metadata publishes under the new kid; the old one stays published
      const meta = (await (await fetch(`${s.url}/.well-known/jwt-vc-issuer/wallet`)).json()) as {
        jwks: { keys: Record<string, unknown>[] };
      };
      expect(meta.jwks.keys.find((k) => k.kid === newKid)).toMatchObject(after.checked.leafJwk);
      expect(meta.jwks.keys.find((k) => k.kid === before.checked.header.kid)).toMatchObject(before.checked.leafJwk);

      expect((await verifyAtOurVerifier(before.wallet, 'EmployeeBadge')).claims()).toMatchObject({ FirstName: 'Old' });
      expect((await verifyAtOurVerifier(after.wallet, 'EmployeeBadge')).claims()).toMatchObject({ FirstName: 'New' });
    } finally {
      t = saved;
      await s.stop();
    }
  });

  it('refuses to rotate an operator certificate, and says how the operator replaces it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vc-issuer-operator-rotation-'));
    const ca = await generateIssuerCa('127.0.0.1');
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk = await exportJWK(privateKey);
    const x5c = await certifyCredentialKey(ca, jwk, ['http://127.0.0.1/wallet']);
    writeFileSync(join(dir, 'chain.pem'), toPem(new Uint8Array(Buffer.from(x5c[0], 'base64'))));
    writeFileSync(
      join(dir, 'key.pem'),
      createPrivateKey({ key: jwk as never, format: 'jwk' }).export({ type: 'pkcs8', format: 'pem' }) as string,
    );
    const configFile = join(dir, 'config.json');
    writeFileSync(
      configFile,
      JSON.stringify(
        testConfig(3999, {
          keys: {
            idToken: join(dir, 'id.json'),
            credential: join(dir, 'credential.json'),
            cookies: join(dir, 'cookies.json'),
            pairwise: join(dir, 'pairwise.json'),
          },
          issuer: { certificateChain: join(dir, 'chain.pem'), key: join(dir, 'key.pem') },
        }),
      ),
    );
    await expect(keysCommand(configFile, 'rotate', 'credential')).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringMatching(
        /issuer\.key .* issuer\.certificateChain .*issuer\.previousCertificates.*nothing was changed/,
      ),
    });
    expect((JSON.parse(readFileSync(join(dir, 'credential.json'), 'utf8')) as { keys: unknown[] }).keys).toHaveLength(
      1,
    );
  });
});

describe('issue 32 §1: the demo PID carries the issuer certificate too', () => {
  it('a demo PID from /demo/pid has an x5c leaf naming {base}/demo-pid, under the same local issuer CA', async () => {
    const identityFor = await demoIdentity();
    const demo = await startTestService((baseUrl) => ({
      demo: true,
      identity: identityFor(baseUrl),
      verifier: demoVerifier(),
      clients: demoClients(baseUrl, `whsec_${randomBytes(32).toString('base64')}`),
    }));
    try {
      const form = new URLSearchParams({
        given_name: 'Ada',
        family_name: 'Lovelace',
        birthdate: '1815-12-10',
        nationalities: 'GB',
        personal_administrative_number: '4718 2093 5561',
      });
      const page = await (await fetch(`${demo.url}/demo/pid`, { method: 'POST', body: form })).text();
      const link = /href="(openid-credential-offer:[^"]+)"/.exec(page)![1].replaceAll('&amp;', '&');
      const wallet = await newWallet();
      await wallet.receive(link);
      const issuerJwt = wallet.list()[0].credential.split('~')[0];
      expect(decodeJwt(issuerJwt).iss).toBe(`${demo.url}/demo-pid`);
      const pid = await checkX5cIndependently(issuerJwt, { caPem: caPem(), iss: `${demo.url}/demo-pid` });
      // one leaf names both issuer identifiers: the relying parties' credentials carry it too
      await checkX5cIndependently(issuerJwt, { caPem: caPem(), iss: `${demo.url}/wallet` });
      expect(pid.header.kid).toBeTruthy();
    } finally {
      await demo.stop();
    }
  });
});
