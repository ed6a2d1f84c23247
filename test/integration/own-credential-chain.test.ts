/**
 * Our verifier checks our own SD-JWT VCs by their x5c chain to the issuer CA the service made (HAIP 1.0
 * §6.1.1, SD-JWT VC §3.5), and by kid when they carry no x5c. Every case is a wallet answering a real
 * request (direct_post) with a presentation built here; the relying party's browser then gets a code, or
 * access_denied.
 */
// @peculiar/x509 resolves its parsers through tsyringe, which needs the Reflect metadata API
import 'reflect-metadata';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { decodeJwt, exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, testConfig, issuerCaFile, SECRETS, REDIRECT, type TestService } from '../helpers/service.js';
import { Browser, pkcePair, postForm } from '../helpers/rp.js';
import { requestFromPage } from '../helpers/flows.js';
import { makeCert, type TestCert } from '../helpers/pki.js';
import { issueWithX5c, presentSdJwt } from '../helpers/sdjwt.js';
import { certifyCredentialKey, type IssuerCa } from '../../src/keys/issuerCertificate.js';

const PLAIN = { ...(testConfig(0).verifier as object), responseMode: 'direct_post' };

let t: TestService;
let ownIss: string;
let ownVct: string;
/** the local issuer CA the service made (its key is beside its certificate, as for a developer) */
let ca: IssuerCa;
/** a foreign root the verifier trusts for SD-JWT VCs of foreign types */
let foreignRoot: TestCert;
let holder: { privateJwk: JWK; publicJwk: JWK };

beforeAll(async () => {
  foreignRoot = await makeCert({ subject: 'CN=Foreign SD-JWT VC Root, C=NL', ca: true });
  const dir = mkdtempSync(join(tmpdir(), 'vc-own-chain-'));
  writeFileSync(join(dir, 'foreign.pem'), foreignRoot.pem);
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  holder = { privateJwk: await exportJWK(privateKey), publicJwk: await exportJWK(publicKey) };
  t = await startTestService({
    clients: [
      {
        clientId: 'rp',
        clientSecret: SECRETS.pkceIssuer,
        redirectUris: [REDIRECT],
        pkce: 'required',
        scopes: ['EmployeeBadge'],
      },
    ],
    verifier: { ...PLAIN, trustAnchors: [{ certificates: join(dir, 'foreign.pem'), formats: ['dc+sd-jwt'] }] },
  });
  ownIss = `${t.url}/wallet`;
  ownVct = `${t.url}/types/EmployeeBadge`;
  const keyFile = readFileSync(join(dirname(issuerCaFile), 'issuer-ca-key.pem'), 'utf8');
  ca = {
    key: /-----BEGIN PRIVATE KEY-----[^-]+-----END PRIVATE KEY-----\n?/.exec(keyFile)![0],
    certificate: readFileSync(issuerCaFile, 'utf8'),
  };
});
afterAll(async () => t?.stop());

interface Started {
  state: string;
  verifier: string;
  browser: Browser;
  promptUrl: string;
  request: { client_id: string; nonce: string; state: string; response_uri: string };
}

async function start(): Promise<Started> {
  const state = `st-${randomBytes(6).toString('hex')}`;
  const pkce = pkcePair();
  const pushed = await postForm(`${t.url}/v2.0/oidc/par`, {
    client_id: 'rp',
    client_secret: SECRETS.pkceIssuer,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'openid EmployeeBadge',
    state,
    nonce: 'n',
    code_challenge: pkce.challenge,
    code_challenge_method: 'S256',
  });
  expect(pushed.status, JSON.stringify(pushed.body)).toBe(201);
  const browser = new Browser(REDIRECT);
  const prompt = await browser.follow(
    `${t.url}/v2.0/oidc/authorize?client_id=rp&request_uri=${encodeURIComponent(pushed.body.request_uri)}`,
  );
  const res = await fetch(new URL(requestFromPage(prompt.html!)).searchParams.get('request_uri')!);
  return {
    state,
    verifier: pkce.verifier,
    browser,
    promptUrl: prompt.final,
    request: decodeJwt((await res.text()).trim()) as unknown as Started['request'],
  };
}

async function answer(s: Started, credential: string) {
  const vp = await presentSdJwt(credential, holder.privateJwk, { aud: s.request.client_id, nonce: s.request.nonce });
  return postForm(s.request.response_uri, {
    state: s.request.state,
    vp_token: JSON.stringify({ EmployeeBadge: [vp] }),
  });
}

async function expectAccepted(s: Started, a: { status: number; body: any }): Promise<void> {
  expect(a.status, JSON.stringify(a.body)).toBe(200);
  const done = await s.browser.follow(`${s.promptUrl}/continue`);
  const q = new URL(done.final).searchParams;
  expect(q.get('error'), q.get('error_description') ?? '').toBeNull();
  expect(q.get('code')).toBeTruthy();
}

async function expectDenied(s: Started, a: { status: number; body: any }, description: RegExp): Promise<void> {
  expect(a.status, JSON.stringify(a.body)).toBe(400);
  expect(a.body.error_description).toMatch(description);
  const done = await s.browser.follow(`${s.promptUrl}/continue`);
  const q = new URL(done.final).searchParams;
  expect(q.get('error')).toBe('access_denied');
  expect(q.get('code')).toBeNull();
}

/** A credential key of ours that is not (or no longer) published, with a leaf from our issuer CA. */
async function certifiedKey(issuers = [ownIss]): Promise<{ privateJwk: JWK; x5c: string[] }> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return {
    privateJwk: await exportJWK(privateKey),
    x5c: await certifyCredentialKey(ca, await exportJWK(publicKey), issuers),
  };
}

/** An SD-JWT VC signed by `key` with a `kid` and no x5c, as credentials issued before certificates were. */
async function issueWithKid(key: JWK): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const disclosures = Object.entries({ FirstName: 'Ada', LastName: 'Lovelace' }).map(([name, value]) =>
    Buffer.from(JSON.stringify([randomBytes(16).toString('base64url'), name, value])).toString('base64url'),
  );
  const digests = disclosures.map((d) => createHash('sha256').update(d).digest('base64url')).sort();
  const jwt = await new SignJWT({
    iss: ownIss,
    vct: ownVct,
    iat: now,
    exp: now + 3600,
    cnf: { jwk: holder.publicJwk },
    _sd: digests,
    _sd_alg: 'sha-256',
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'dc+sd-jwt', kid: key.kid })
    .sign(await importJWK(key, 'ES256'));
  return `${jwt}~${disclosures.map((d) => `${d}~`).join('')}`;
}

const attributes = { FirstName: 'Ada', LastName: 'Lovelace' };

describe('our own credentials, by the chain to our issuer CA', () => {
  it('a credential of ours whose leaf chains to our CA verifies by the chain, its key published or not (an old leaf after a rotation)', async () => {
    const key = await certifiedKey();
    const published = t.service.credentialKeys.published().keys.map((k) => k.x);
    expect(published).not.toContain(key.privateJwk.x);
    const s = await start();
    await expectAccepted(
      s,
      await answer(
        s,
        await issueWithX5c({
          x5c: key.x5c,
          key: key.privateJwk,
          iss: ownIss,
          vct: ownVct,
          attributes,
          holder: holder.publicJwk,
        }),
      ),
    );
  });

  it('the service signs under its own published key with its leaf, and that verifies', async () => {
    const signing = t.service.credentialKeys.signing() as JWK & { x5c?: string[] };
    expect(signing.x5c?.length).toBe(1);
    const s = await start();
    await expectAccepted(
      s,
      await answer(
        s,
        await issueWithX5c({
          x5c: signing.x5c!,
          key: signing,
          iss: ownIss,
          vct: ownVct,
          attributes,
          holder: holder.publicJwk,
        }),
      ),
    );
  });

  it('a credential of ours without x5c still verifies by kid', async () => {
    const s = await start();
    await expectAccepted(s, await answer(s, await issueWithKid(t.service.credentialKeys.signing())));
  });

  it('an x5c chaining to another CA (even one the verifier trusts for foreign types) is refused for our issuer', async () => {
    for (const root of [foreignRoot, await makeCert({ subject: 'CN=Unknown Root, C=NL', ca: true })]) {
      const leaf = await makeCert({
        subject: 'CN=credential issuer',
        issuer: root,
        san: [
          { type: 'url', value: ownIss },
          { type: 'dns', value: '127.0.0.1' },
        ],
      });
      const s = await start();
      await expectDenied(
        s,
        await answer(
          s,
          await issueWithX5c({
            x5c: [leaf.b64],
            key: leaf.privateJwk,
            iss: ownIss,
            vct: ownVct,
            attributes,
            holder: holder.publicJwk,
          }),
        ),
        /signature does not verify with the issuer's keys/,
      );
    }
  });

  it("a leaf of our CA whose key is not the signature's key is refused, even when the signing key is ours and published", async () => {
    const leafOf = await certifiedKey();
    const s = await start();
    await expectDenied(
      s,
      await answer(
        s,
        await issueWithX5c({
          x5c: leafOf.x5c,
          key: t.service.credentialKeys.signing(),
          iss: ownIss,
          vct: ownVct,
          attributes,
          holder: holder.publicJwk,
        }),
      ),
      /signature does not verify with the issuer's keys/,
    );
  });

  it('a leaf of our CA that names another issuer is refused', async () => {
    const key = await certifiedKey([`${t.url}/other`]);
    const s = await start();
    await expectDenied(
      s,
      await answer(
        s,
        await issueWithX5c({
          x5c: key.x5c,
          key: key.privateJwk,
          iss: ownIss,
          vct: ownVct,
          attributes,
          holder: holder.publicJwk,
        }),
      ),
      /signature does not verify with the issuer's keys/,
    );
  });

  it('a foreign anchor still cannot vouch for our vct under a foreign iss', async () => {
    const leaf = await makeCert({
      subject: 'CN=credential issuer',
      issuer: foreignRoot,
      san: [
        { type: 'url', value: 'https://issuer.badges.example' },
        { type: 'dns', value: 'issuer.badges.example' },
      ],
    });
    const s = await start();
    await expectDenied(
      s,
      await answer(
        s,
        await issueWithX5c({
          x5c: [leaf.b64],
          key: leaf.privateJwk,
          iss: 'https://issuer.badges.example',
          vct: ownVct,
          attributes,
          holder: holder.publicJwk,
        }),
      ),
      /no trust anchor may vouch for this credential type by x5c/,
    );
  });
});
