/**
 * An mdoc the operator revokes (docs/decisions.md, "mdocs without status"; D18): one offer names both formats
 * and the holder takes the ISO mdoc, which carries no status (no library writes one into the MSO). The attack
 * was a year-long mdoc nobody could revoke, our own verifier accepting it, and the admin API answering 404.
 * Now: the mdoc is valid a day at most (ARF Annex 2 VCR_01, checked by @auth0/mdl, not our code) and the ID
 * token's ExpiresAt says so; the admin API answers 409 saying it is an mdoc without status and until when;
 * our verifier refuses it as revoked, whether the dev wallet or @auth0/mdl presents it, while another verifier
 * (@auth0/mdl's) still accepts it, as the 409 says. A type whose operator chose longer mdocs gets them, and
 * start-up warns. Runs on both stores; `npm run admin` on Redis only (the command refuses the memory store).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Verifier } from '@auth0/mdl';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  holderCompletesIssuance,
  holderCompletesVerification,
  newWallet,
  presentMdocWithAuth0,
  pushIssuance,
} from '../helpers/flows.js';
import { oid4vpSessionTranscriptBytes, presentWithAuth0 } from '../helpers/mdoc.js';
import { startChildInstance } from '../helpers/childInstance.js';
import { issuerCaFile, REDIRECT, SECRETS, startTestService, testConfig, type TestService } from '../helpers/service.js';
import { REDIS_URL } from '../helpers/stores.js';
import { adminCommand } from '../../src/admin/cli.js';
import { createLogger } from '../../src/log.js';
import { readPemCertificates } from '../../src/keys/x509.js';
import { createRedisStore } from '../../src/store/redis.js';
import type { DevWallet } from '../../src/wallet/holder.js';
import type { StoredMdoc } from '../../src/wallet/walletFile.js';

const DOCTYPE = 'org.iso.18013.5.1.mDL';
const NAMESPACE = 'org.iso.18013.5.1';
const licence = { family_name: 'Lovelace', given_name: 'Ada' };
const ADMIN_TOKEN = `admin-${randomBytes(24).toString('hex')}`;
const DAY = 86_400_000;
const onRedis = process.env.TEST_STORE === 'redis';
/** On Redis, the service's store under a prefix of this file, so that `npm run admin` can name it. */
const PREFIX = `mdoc-rv:${randomBytes(4).toString('hex')}:`;

const mdocType = (name: string, mdoc: Record<string, unknown> = {}) => ({
  name,
  validity: 'P365D',
  mdoc: { doctype: DOCTYPE, namespace: NAMESPACE, ...mdoc },
  attributes: { family_name: { type: 'string' }, given_name: { type: 'string' } },
});

let t: TestService;
/** the service's log lines (its audit lines among them) */
const lines: Record<string, unknown>[] = [];
const sink = new Writable({
  write(chunk, _enc, done) {
    for (const line of String(chunk).split('\n').filter(Boolean))
      lines.push(JSON.parse(line) as Record<string, unknown>);
    done();
  },
});

beforeAll(async () => {
  const base = testConfig(0) as { credentialTypes: Record<string, unknown>[] };
  t = await startTestService(
    {
      admin: { token: ADMIN_TOKEN },
      credentialTypes: [
        ...base.credentialTypes,
        // a year's validity, as the demo's types: its mdocs still last a day
        mdocType('DrivingLicence'),
        // the operator's explicit choice: mdocs of a month
        mdocType('LongLicence', { irrevocableValidity: 'P30D' }),
      ],
      clients: [
        {
          clientId: 'issuer-pkce',
          clientSecret: SECRETS.pkceIssuer,
          redirectUris: [REDIRECT],
          pkce: 'required',
          scopes: ['issue.DrivingLicence', 'DrivingLicence', 'issue.LongLicence', 'LongLicence'],
        },
      ],
    },
    {
      logger: createLogger('info', sink),
      ...(onRedis ? { store: await createRedisStore({ url: REDIS_URL, keyPrefix: PREFIX }) } : {}),
    },
  );
});
afterAll(async () => t?.stop());

const issuerTrust = () => readPemCertificates(readFileSync(issuerCaFile, 'utf8'), 'the local issuer CA');

/** The relying party's issuance of `type`; the dev wallet takes the offer's mso_mdoc; the ID token's claims. */
async function issueMdoc(type: string) {
  const wallet = await newWallet();
  const rp = await pushIssuance(t.url, {
    clientId: 'issuer-pkce',
    secret: SECRETS.pkceIssuer,
    attributes: licence,
    redirectUri: REDIRECT,
    params: { scope: `openid issue.${type}` },
  });
  const { callbackUrl, offer, resolvedOffer } = await holderCompletesIssuance(rp.authorizeUrl.href, {
    redirectUri: REDIRECT,
    wallet,
    resolveOffer: true,
    mdoc: { issuerTrust: issuerTrust() },
  });
  const tokens = await oidc.authorizationCodeGrant(rp.config, new URL(callbackUrl), {
    pkceCodeVerifier: rp.verifier,
    expectedState: rp.state,
    expectedNonce: rp.nonce,
  });
  const claims = tokens.claims()!;
  const stored = wallet.list()[0] as StoredMdoc;
  return { wallet, offer, resolvedOffer: resolvedOffer!, claims, stored, serialNumber: claims.SerialNumber as string };
}

/** @auth0/mdl presents the mdoc to another verifier, @auth0/mdl's own, which trusts our CA: the MSO's validity. */
async function anotherVerifierAccepts(stored: StoredMdoc) {
  const handover = { clientId: 'x509_hash:another-rp', nonce: 'n-other', responseUri: 'https://rp.example/response' };
  const deviceResponse = await presentWithAuth0({
    issuerSigned: stored.credential,
    doctype: DOCTYPE,
    namespace: NAMESPACE,
    elements: ['family_name'],
    deviceKey: stored.holderKey,
    ...handover,
  });
  const mdoc = await new Verifier([readFileSync(issuerCaFile, 'utf8')]).verify(
    Buffer.from(deviceResponse, 'base64url'),
    { encodedSessionTranscript: oid4vpSessionTranscriptBytes(handover) },
  );
  return mdoc.documents[0].issuerSigned.issuerAuth.decodedPayload.validityInfo;
}

/** Our verifier asks for a DrivingLicence; the dev wallet presents what it holds: the callback and the wallet's answer. */
async function presentWithDevWallet(wallet: DevWallet) {
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
    nonce: oidc.randomNonce(),
    state: oidc.randomState(),
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  const { callbackUrl, presented } = await holderCompletesVerification(url.href, { redirectUri: REDIRECT, wallet });
  return { callback: new URL(callbackUrl), presented };
}

/** @auth0/mdl, an independent holder, presents the mdoc to our verifier. */
const presentWithAuth0ToUs = (stored: StoredMdoc) =>
  presentMdocWithAuth0(t.url, {
    scope: 'openid DrivingLicence',
    queryId: 'DrivingLicence-mdoc',
    issuerSigned: stored.credential,
    deviceKey: stored.holderKey,
    doctype: DOCTYPE,
    namespace: NAMESPACE,
    elements: ['family_name', 'given_name'],
  });

const admin = (path: string, method = 'POST') =>
  fetch(`${t.url}/admin/credentials/${path}`, { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }).then(
    async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }),
  );

const isoSeconds = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

describe('an mdoc is revocable as far as anyone can revoke it (docs/decisions.md, "mdocs without status")', () => {
  it('one offer names both formats; the holder takes the mdoc: valid a day at most (ARF Annex 2 VCR_01), as the ID token and the admin API say', async () => {
    const { wallet, offer, resolvedOffer, claims, stored, serialNumber } = await issueMdoc('DrivingLicence');
    expect(resolvedOffer.credential_configuration_ids).toEqual(['DrivingLicence', 'DrivingLicence.mso_mdoc']);
    expect(stored).toMatchObject({ format: 'mso_mdoc', doctype: DOCTYPE, claims: { [NAMESPACE]: licence } });
    // one offer, one credential: the SD-JWT VC of the same offer is not to be had after the mdoc
    await expect(wallet.receive(offer)).rejects.toThrow();

    // independently of our code: @auth0/mdl reads the MSO's validity
    const { validFrom, validUntil } = await anotherVerifierAccepts(stored);
    expect(validUntil.getTime() - validFrom.getTime()).toBe(DAY);
    expect(validUntil.getTime() - Date.now()).toBeLessThanOrEqual(DAY);
    // the relying party is told when the credential the holder took expires, and so is the operator
    expect(claims.ExpiresAt).toBe(isoSeconds(validUntil));
    expect(await admin(serialNumber, 'GET')).toEqual({
      status: 200,
      body: { serialNumber, status: 'valid', expiresAt: validUntil.toISOString(), format: 'mso_mdoc' },
    });
  });

  it('revoke: 409 says it is an mdoc without status and until when; our verifier refuses it as revoked (dev wallet, @auth0/mdl); another verifier still accepts it', async () => {
    const { wallet, stored, serialNumber } = await issueMdoc('DrivingLicence');
    // before: our verifier accepts it
    const accepted = await presentWithDevWallet(wallet);
    expect(accepted.presented.status, JSON.stringify(accepted.presented.body)).toBe(200);
    expect(accepted.callback.searchParams.get('code')).toBeTruthy();

    const { validUntil } = await anotherVerifierAccepts(stored);
    const revoked = await admin(`${encodeURIComponent(serialNumber)}/revoke`);
    expect(revoked).toEqual({
      status: 409,
      body: {
        error: 'mdoc_without_status',
        error_description: `SerialNumber: credential ${serialNumber} was issued as an mdoc without status, valid until ${isoSeconds(validUntil)}: it is revoked for this service's verifier only, and other verifiers accept it until then`,
        serialNumber,
        status: 'revoked',
        changed: true,
        format: 'mso_mdoc',
        expiresAt: validUntil.toISOString(),
      },
    });
    expect((await admin(serialNumber, 'GET')).body).toMatchObject({ status: 'revoked', format: 'mso_mdoc' });

    // our verifier knows what it issued: refused as a revoked credential is (D18), at once
    const refused = await presentWithDevWallet(wallet);
    expect(refused.presented).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    expect(refused.callback.searchParams.get('error')).toBe('access_denied');
    expect(refused.callback.searchParams.get('error_description')).toMatch(/credential revoked/);
    const byAuth0 = await presentWithAuth0ToUs(stored);
    expect(byAuth0.answer).toMatchObject({
      status: 400,
      body: { error: 'invalid_request', error_description: 'vp_token.DrivingLicence-mdoc: credential revoked' },
    });
    expect(byAuth0.callback.searchParams.get('error')).toBe('access_denied');

    // what the 409 said: a verifier that is not ours cannot know
    expect((await anotherVerifierAccepts(stored)).validUntil).toEqual(validUntil);

    // the audit lines say what was issued, what was recorded and what the operator was told (docs/operations.md)
    const about = lines.filter((l) => l.serialNumber === serialNumber);
    expect(about).toContainEqual(
      expect.objectContaining({
        audit: 'credential_issuance',
        format: 'mso_mdoc',
        expiresAt: validUntil.toISOString(),
        outcome: 'issued',
      }),
    );
    expect(about).toContainEqual(
      expect.objectContaining({ audit: 'credential_status', status: 'revoked', format: 'mso_mdoc', via: 'api' }),
    );
    expect(about).toContainEqual(
      expect.objectContaining({ audit: 'admin_action', action: 'revoke', outcome: 'without_status', status: 409 }),
    );
  });

  it("suspend: 409 for this service's verifier only, which refuses it as suspended; reinstate: 200, accepted again at once", async () => {
    const { wallet, stored, serialNumber } = await issueMdoc('DrivingLicence');
    const suspended = await admin(`${serialNumber}/suspend`);
    expect(suspended).toMatchObject({ status: 409, body: { error: 'mdoc_without_status', status: 'suspended' } });
    expect(suspended.body.error_description).toMatch(/it is suspended for this service's verifier only/);
    expect((await presentWithAuth0ToUs(stored)).answer.body).toMatchObject({
      error_description: 'vp_token.DrivingLicence-mdoc: credential suspended',
    });

    expect(await admin(`${serialNumber}/reinstate`)).toEqual({
      status: 200,
      body: { serialNumber, status: 'valid', changed: true, format: 'mso_mdoc' },
    });
    const accepted = await presentWithDevWallet(wallet);
    expect(accepted.presented.status, JSON.stringify(accepted.presented.body)).toBe(200);
  });

  it('a type whose operator chose longer mdocs (mdoc.irrevocableValidity) gets them, and the service warns naming the type', async () => {
    const { claims, stored } = await issueMdoc('LongLicence');
    const { validFrom, validUntil } = await anotherVerifierAccepts(stored);
    expect(validUntil.getTime() - validFrom.getTime()).toBe(30 * DAY);
    expect(claims.ExpiresAt).toBe(isoSeconds(validUntil));
    expect(t.service.walletIssuer.warnings).toEqual([
      expect.stringMatching(
        /^credentialTypes\[3\]\.mdoc\.irrevocableValidity: mdocs of LongLicence are valid for up to P30D and cannot be revoked for that long/,
      ),
    ]);
  });

  it('start-up logs that warning (the service as an operator runs it)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vc-mdoc-warn-'));
    const child = await startChildInstance({
      dir,
      store: 'memory', // the warning is the configuration's, whatever the store
      client: { id: 'rp', secret: 'rp-secret-0123456789abcdef' },
      redirectUri: REDIRECT,
      configure: (c) => ({
        ...c,
        credentialTypes: [...c.credentialTypes, mdocType('LongLicence', { irrevocableValidity: 'P90D' })],
      }),
    });
    try {
      const warnings = child.logLines().filter((l) => l.level === 40);
      expect(warnings.map((l) => l.msg)).toContainEqual(
        expect.stringMatching(
          /^credentialTypes\[1\]\.mdoc\.irrevocableValidity: mdocs of LongLicence are valid for up to P90D and cannot be revoked for that long/,
        ),
      );
    } finally {
      await child.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// `npm run admin` refuses the memory store, which belongs to one process: run in the flows-redis project
(onRedis ? describe : describe.skip)('npm run admin on an mdoc (Redis)', () => {
  it("says it is an mdoc without status and until when, and exits 3: done for this service's verifier only", async () => {
    const { serialNumber, stored } = await issueMdoc('DrivingLicence');
    const { validUntil } = await anotherVerifierAccepts(stored);
    const dir = mkdtempSync(join(tmpdir(), 'vc-mdoc-admin-'));
    const file = join(dir, 'config.json');
    writeFileSync(
      file,
      JSON.stringify({
        baseUrl: t.url,
        store: { url: REDIS_URL, keyPrefix: PREFIX },
        logLevel: 'silent',
        keys: {
          generate: false,
          idToken: join(dir, 'none.json'),
          credential: join(dir, 'none.json'),
          cookies: join(dir, 'none.json'),
        },
        credentialTypes: [{ name: 'EmployeeBadge', attributes: { FirstName: { type: 'string' } } }],
        clients: [
          {
            clientId: 'c',
            clientSecret: 'client-secret-0123456789',
            redirectUris: ['http://127.0.0.1:1/cb'],
            scopes: ['EmployeeBadge'],
          },
        ],
      }),
    );
    // vitest sets BASE_URL (Vite's), which the command would take for the service's
    vi.stubEnv('BASE_URL', '');
    const out: string[] = [];
    const err: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((line: string) => void out.push(line));
    const error = vi.spyOn(console, 'error').mockImplementation((line: string) => void err.push(line));
    try {
      expect(await adminCommand(['status', serialNumber, '--config', file], file)).toBe(0);
      expect(out.join('\n')).toMatch(/an mdoc without status: only this service's verifier applies it/);
      expect(await adminCommand(['revoke', serialNumber, '--config', file], file)).toBe(3);
      expect(err).toEqual([
        `SerialNumber: credential ${serialNumber} was issued as an mdoc without status, valid until ${isoSeconds(validUntil)}: it is revoked for this service's verifier only, and other verifiers accept it until then`,
      ]);
    } finally {
      log.mockRestore();
      error.mockRestore();
      vi.unstubAllEnvs();
      rmSync(dir, { recursive: true, force: true });
    }
    // the revocation was recorded where the servers read it
    expect((await admin(serialNumber, 'GET')).body).toMatchObject({ status: 'revoked' });
  });
});
