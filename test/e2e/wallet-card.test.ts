/**
 * Issue 49, "The card": what a wallet shows of a credential, read as independent wallets read it.
 * - OpenID4VCI 1.0 §12.2.4: `credential_metadata.display` per language (name, description, logo with its
 *   alternative text, colours, background image), the claims' labels (configured, or the catalogues' for a
 *   standard claim), and the issuer's own `display` (ui.name, ui.logo), resolved by @openid4vc/openid4vci.
 * - SD-JWT VC Type Metadata at the vct URL, and `vct#integrity` in each credential: @sd-jwt/sd-jwt-vc
 *   resolves and validates the document (its schema), the fetch checking the W3C SRI digest.
 * - OpenID4VCI 1.0 §12.2.2/§12.2.3: signed metadata for a wallet that asks for `application/jwt`, verified
 *   by @openid4vc/openid4vci's signed-metadata path with the x5c chain checked by pkijs and @peculiar/x509
 *   (test/helpers/x5c.ts) and the signature by jose; JSON for everyone else.
 * - Bad input: a card image that cannot be loaded stops the start-up, naming its config path.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clientAuthenticationAnonymous, type JwtSigner } from '@openid4vc/oauth2';
import { Openid4vciClient, setGlobalConfig } from '@openid4vc/openid4vci';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import {
  calculateJwkThumbprint,
  CompactSign,
  compactVerify,
  decodeJwt,
  exportJWK,
  generateKeyPair,
  importJWK,
  jwtVerify,
  type JWK,
} from 'jose';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/load.js';
import { pushIssuance } from '../helpers/flows.js';
import { Browser, offerFromPage } from '../helpers/rp.js';
import { issuerCaFile, REDIRECT, SECRETS, startTestService, type TestService } from '../helpers/service.js';
import { checkX5cIndependently } from '../helpers/x5c.js';

/** A square PNG in one colour: a real image. */
function png(rgb: [number, number, number], size = 48): Buffer {
  const image = new PNG({ width: size, height: size });
  for (let i = 0; i < size * size; i++) image.data.set([...rgb, 255], i * 4);
  return PNG.sync.write(image);
}

/** W3C SRI (§3.1) computed here, with node:crypto: `sha256-` and the base64 digest. */
const sri = (bytes: Uint8Array) => `sha256-${createHash('sha256').update(bytes).digest('base64')}`;

const LOGO = png([18, 54, 95]);
const BACKGROUND = png([230, 236, 245], 96);
const ISSUER_LOGO = png([11, 110, 79]);

let dir: string;
let t: TestService;
let credentialIssuer: string;

/** The EmployeeBadge card as an operator configures it: English and German; one attribute a standard PID claim. */
const badgeType = (files: { logo: string; background: string }) => ({
  name: 'EmployeeBadge',
  displayName: { en: 'Employee badge', de: 'Mitarbeiterausweis' },
  pinCodeLength: 4,
  validity: 'P30D',
  card: {
    description: { en: 'Shows that you work at Acme', de: 'Zeigt, dass Sie bei Acme arbeiten' },
    logo: { image: files.logo, altText: { en: 'Acme logo', de: 'Acme-Logo' } },
    backgroundColor: '#12365f',
    textColor: '#ffffff',
    backgroundImage: files.background,
  },
  attributes: {
    FirstName: { type: 'string', label: { en: 'First name', de: 'Vorname' } },
    LastName: { type: 'string' },
    birthdate: { type: 'date', required: false },
  },
});

/** its vct is another's: its type metadata is there, not here */
const membershipType = {
  name: 'MembershipCard',
  vct: 'https://types.example.com/membership',
  validity: 'P10D',
  attributes: { MemberName: { type: 'string' }, MemberNumber: { type: 'number' } },
};

beforeAll(async () => {
  setGlobalConfig({ allowInsecureUrls: true }); // the service runs on http://127.0.0.1
  dir = mkdtempSync(join(tmpdir(), 'vc-card-'));
  writeFileSync(join(dir, 'logo.png'), LOGO);
  writeFileSync(join(dir, 'background.png'), BACKGROUND);
  writeFileSync(join(dir, 'issuer.png'), ISSUER_LOGO);
  t = await startTestService({
    ui: { name: { en: 'Acme Badges', de: 'Acme Ausweise' }, logo: join(dir, 'issuer.png') },
    credentialTypes: [
      badgeType({ logo: join(dir, 'logo.png'), background: join(dir, 'background.png') }),
      membershipType,
    ],
  });
  credentialIssuer = `${t.url}/wallet`;
});
afterAll(async () => {
  setGlobalConfig({ allowInsecureUrls: false });
  await t?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface WalletKey {
  privateKey: CryptoKey;
  publicJwk: JWK;
}

/**
 * A wallet's fetch that asks for signed issuer metadata first (OpenID4VCI 1.0 §12.2.2): @openid4vc/openid4vci
 * 0.4.6 accepts a JWT answer when it has a `verifyJwt` callback, but sends no Accept header of its own.
 */
const preferSignedMetadata: typeof fetch = (input, init) => {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  if (!url.includes('/.well-known/openid-credential-issuer')) return fetch(input, init);
  const headers = new Headers(init?.headers);
  headers.set('accept', 'application/jwt, application/json;q=0.9');
  return fetch(input, { ...init, headers });
};

/**
 * The independent wallet (@openid4vc/openid4vci), signing with jose; with `verifyJwt` it asks for signed
 * metadata and verifies it with that callback.
 */
function wallet(key: WalletKey, verifyJwt?: (compact: string) => Promise<JWK>): Openid4vciClient {
  const signJwt = async (signer: JwtSigner, { header, payload }: { header: object; payload: object }) => {
    if (signer.method === 'jwk')
      expect(await calculateJwkThumbprint(signer.publicJwk as JWK)).toBe(await calculateJwkThumbprint(key.publicJwk));
    const jwt = await new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
      .setProtectedHeader(header as never)
      .sign(key.privateKey);
    return { jwt, signerJwk: key.publicJwk as never };
  };
  return new Openid4vciClient({
    callbacks: {
      fetch: verifyJwt ? preferSignedMetadata : fetch,
      hash: (data, alg) => new Uint8Array(createHash(alg.replace('-', '').toLowerCase()).update(data).digest()),
      generateRandom: (length) => new Uint8Array(randomBytes(length)),
      clientAuthentication: clientAuthenticationAnonymous(),
      signJwt: signJwt as never,
      ...(verifyJwt
        ? {
            verifyJwt: async (_signer: unknown, { compact }: { compact: string }) => ({
              verified: true,
              signerJwk: (await verifyJwt(compact)) as never,
            }),
          }
        : {}),
    },
  });
}

const newKey = async (): Promise<WalletKey> => {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { privateKey, publicJwk: await exportJWK(publicKey) };
};

/** A relying party's EmployeeBadge issuance whose wallet step the independent wallet does: the SD-JWT VC. */
async function issueBadge(): Promise<string> {
  const rp = await pushIssuance(t.url, {
    clientId: 'issuer-pkce',
    secret: SECRETS.pkceIssuer,
    attributes: { FirstName: 'Ada', LastName: 'Lovelace', birthdate: '1815-12-10' },
    pin: '1234',
    redirectUri: REDIRECT,
  });
  const browser = new Browser(REDIRECT);
  const prompt = await browser.follow(rp.authorizeUrl.href);
  const key = await newKey();
  const client = wallet(key);
  const credentialOffer = await client.resolveCredentialOffer(offerFromPage(prompt.html!));
  const issuerMetadata = await client.resolveIssuerMetadata(credentialOffer.credential_issuer);
  const { accessTokenResponse } = await client.retrievePreAuthorizedCodeAccessTokenFromOffer({
    credentialOffer,
    issuerMetadata,
    txCode: '1234',
  });
  const { c_nonce } = await client.requestNonce({ issuerMetadata });
  const { jwt } = await client.createCredentialRequestJwtProof({
    issuerMetadata,
    credentialConfigurationId: 'EmployeeBadge',
    nonce: c_nonce,
    signer: { method: 'jwk', alg: 'ES256', publicJwk: key.publicJwk as never },
  });
  const { credentialResponse } = await client.retrieveCredentials({
    issuerMetadata,
    accessToken: accessTokenResponse.access_token,
    credentialConfigurationId: 'EmployeeBadge',
    proofs: { jwt: [jwt] },
  });
  await browser.follow(`${prompt.final}/continue`);
  return (credentialResponse.credentials?.[0] as { credential: string }).credential;
}

describe('issue 49, the card: OpenID4VCI 1.0 §12.2.4 display as @openid4vc/openid4vci reads it', () => {
  it('shows each type per language: name, description, logo and its text, colours, background image', async () => {
    const metadata = await wallet(await newKey()).resolveIssuerMetadata(credentialIssuer);
    const badge = metadata.credentialIssuer.credential_configurations_supported.EmployeeBadge as Record<string, any>;
    const display = badge.credential_metadata.display as Record<string, any>[];
    expect(display.map((d) => d.locale)).toEqual(['en', 'de']);
    expect(display[0]).toMatchObject({
      name: 'Employee badge',
      description: 'Shows that you work at Acme',
      logo: { alt_text: 'Acme logo' },
      background_color: '#12365f',
      text_color: '#ffffff',
    });
    expect(display[1]).toMatchObject({
      name: 'Mitarbeiterausweis',
      description: 'Zeigt, dass Sie bei Acme arbeiten',
      logo: { alt_text: 'Acme-Logo' },
    });
    // the service serves the images itself: the bytes the operator configured
    const logo = await fetch(display[0].logo.uri);
    expect(logo.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await logo.arrayBuffer()).equals(LOGO)).toBe(true);
    const background = await fetch(display[1].background_image.uri);
    expect(Buffer.from(await background.arrayBuffer()).equals(BACKGROUND)).toBe(true);
    // claims: the configured labels; a standard claim's from the shipped catalogues (en, de, fr)
    const claims = badge.credential_metadata.claims as {
      path: string[];
      display: { name: string; locale: string }[];
    }[];
    expect(claims.find((c) => c.path[0] === 'FirstName')!.display).toEqual([
      { name: 'First name', locale: 'en' },
      { name: 'Vorname', locale: 'de' },
    ]);
    expect(claims.find((c) => c.path[0] === 'birthdate')!.display).toEqual(
      expect.arrayContaining([
        { name: 'Birthdate', locale: 'en' },
        { name: 'Geburtsdatum', locale: 'de' },
        { name: 'Date de naissance', locale: 'fr' },
      ]),
    );
    // a type without a card keeps its name only
    const member = metadata.credentialIssuer.credential_configurations_supported.MembershipCard as Record<string, any>;
    expect(member.credential_metadata.display).toEqual([{ name: 'MembershipCard', locale: 'en' }]);
  });

  it("shows the issuer's own name and logo (ui.name, ui.logo)", async () => {
    const metadata = await wallet(await newKey()).resolveIssuerMetadata(credentialIssuer);
    const display = metadata.credentialIssuer.display!;
    expect(display).toEqual([
      { name: 'Acme Badges', locale: 'en', logo: { uri: expect.any(String), alt_text: 'Acme Badges' } },
      { name: 'Acme Ausweise', locale: 'de', logo: { uri: expect.any(String), alt_text: 'Acme Ausweise' } },
    ]);
    const logo = await fetch(display[0].logo!.uri!);
    expect(Buffer.from(await logo.arrayBuffer()).equals(ISSUER_LOGO)).toBe(true);
  });
});

describe('issue 49, the card: SD-JWT VC Type Metadata at the vct, vct#integrity in each credential', () => {
  it('@sd-jwt/sd-jwt-vc resolves the type metadata of an issued credential, its digest checked', async () => {
    const credential = await issueBadge();
    const issuerJwt = credential.split('~')[0];
    const payload = decodeJwt(issuerJwt);
    expect(payload.vct).toBe(`${t.url}/types/EmployeeBadge`);
    expect(payload['vct#integrity']).toMatch(/^sha256-[A-Za-z0-9+/]{43}=$/);
    // the wallet's checks of the credential itself: x5c to the issuer CA, the signature under the leaf
    const { leafJwk } = await checkX5cIndependently(issuerJwt, {
      caPem: readFileSync(issuerCaFile, 'utf8'),
      iss: payload.iss as string,
    });
    const leaf = await importJWK(leafJwk, 'ES256');
    const fetched: string[] = [];
    const sdJwt = new SDJwtVcInstance({
      hasher: (data, alg) => {
        if (alg !== 'sha-256') throw new Error(`unexpected _sd_alg ${alg}`);
        return new Uint8Array(
          createHash('sha256')
            .update(Buffer.from(data as never))
            .digest(),
        );
      },
      verifier: async (data, signature) =>
        compactVerify(`${data}.${signature}`, leaf, { algorithms: ['ES256'] }).then(
          () => true,
          () => false,
        ),
      loadTypeMetadataFormat: true,
      // the library's own integrity check compares a hex digest (@sd-jwt/sd-jwt-vc 0.19), where W3C SRI is
      // base64: the fetch checks SRI here, and the library validates the document it returns
      vctFetcher: async (uri, integrity) => {
        fetched.push(uri);
        const res = await fetch(uri);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toMatch(/^application\/json/);
        const bytes = new Uint8Array(await res.arrayBuffer());
        if (sri(bytes) !== integrity) throw new Error(`integrity of ${uri} does not match`);
        return JSON.parse(Buffer.from(bytes).toString('utf8'));
      },
    });
    const { typeMetadata } = await sdJwt.verify(credential);
    expect(fetched).toEqual([`${t.url}/types/EmployeeBadge`]);
    const doc = typeMetadata!.mergedTypeMetadata;
    expect(doc.vct).toBe(payload.vct);
    expect(doc.name).toBe('EmployeeBadge');
    expect(doc.description).toBe('Shows that you work at Acme');
    expect(doc.display!.map((d) => [d.locale, d.name])).toEqual([
      ['en', 'Employee badge'],
      ['de', 'Mitarbeiterausweis'],
    ]);
    const simple = doc.display![1].rendering!.simple!;
    expect(simple).toMatchObject({
      background_color: '#12365f',
      text_color: '#ffffff',
      logo: { alt_text: 'Acme-Logo' },
    });
    // each image's integrity is of the bytes served at its uri
    expect(simple.logo!['uri#integrity']).toBe(sri(LOGO));
    expect(simple.background_image!['uri#integrity']).toBe(sri(BACKGROUND));
    expect(Buffer.from(await (await fetch(simple.logo!.uri)).arrayBuffer()).equals(LOGO)).toBe(true);
    expect(doc.claims).toEqual(
      expect.arrayContaining([
        {
          path: ['FirstName'],
          display: [
            { locale: 'en', label: 'First name' },
            { locale: 'de', label: 'Vorname' },
          ],
          sd: 'always',
        },
      ]),
    );
  });

  it('serves no type metadata for a type whose vct is elsewhere, nor for an unknown type', async () => {
    expect((await fetch(`${t.url}/types/NoSuchType`)).status).toBe(404);
    expect((await fetch(`${t.url}/types/MembershipCard`)).status).toBe(404);
    const head = await fetch(`${t.url}/types/EmployeeBadge`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('access-control-allow-origin')).toBe('*');
  });
});

describe('issue 49: signed issuer metadata (OpenID4VCI 1.0 §12.2.2, §12.2.3)', () => {
  const caPem = () => readFileSync(issuerCaFile, 'utf8');

  it('a wallet that asks for application/jwt gets the metadata signed under the issuer certificate (x5c)', async () => {
    const checked: string[] = [];
    const client = wallet(await newKey(), async (compact) => {
      checked.push(compact);
      // the chain to the issuer CA and the signature, by pkijs, @peculiar/x509 and jose (test/helpers/x5c.ts)
      return (await checkX5cIndependently(compact, { caPem: caPem(), iss: credentialIssuer })).leafJwk;
    });
    const metadata = await client.resolveIssuerMetadata(credentialIssuer);
    expect(checked).toHaveLength(1);
    const signed = metadata.signedCredentialIssuer!;
    expect(signed.jwt.header).toMatchObject({ alg: 'ES256', typ: 'openidvci-issuer-metadata+jwt' });
    expect(signed.jwt.header.x5c).toEqual(expect.any(Array));
    const now = Math.floor(Date.now() / 1000);
    expect(signed.jwt.payload).toMatchObject({ iss: credentialIssuer, sub: credentialIssuer });
    expect(signed.jwt.payload.iat).toBeLessThanOrEqual(now + 1);
    expect(signed.jwt.payload.exp).toBeGreaterThan(now);
    // every metadata parameter at the top level of the payload, the card among them
    expect(metadata.credentialIssuer.credential_issuer).toBe(credentialIssuer);
    expect(
      (metadata.credentialIssuer.credential_configurations_supported.EmployeeBadge as Record<string, any>)
        .credential_metadata.display[0].name,
    ).toBe('Employee badge');
    // jose alone, with the leaf's key: signature, typ, sub and the time claims
    const { leafJwk } = await checkX5cIndependently(signed.jwt.compact, { caPem: caPem(), iss: credentialIssuer });
    const verified = await jwtVerify(signed.jwt.compact, await importJWK(leafJwk, 'ES256'), {
      typ: 'openidvci-issuer-metadata+jwt',
      subject: credentialIssuer,
      issuer: credentialIssuer,
      requiredClaims: ['iat', 'exp'],
    });
    expect(verified.payload.notification_endpoint).toBe(`${credentialIssuer}/notification`);
  });

  it('answers JSON without the Accept header, and the JWT at the provider location too; Vary: Accept', async () => {
    const wellKnown = `${t.url}/.well-known/openid-credential-issuer/wallet`;
    const json = await fetch(wellKnown);
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    expect(json.headers.get('vary')).toMatch(/accept/i);
    expect((await json.json()).credential_issuer).toBe(credentialIssuer);
    const preferJson = await fetch(wellKnown, { headers: { accept: 'application/json, application/jwt;q=0.5' } });
    expect(preferJson.headers.get('content-type')).toMatch(/^application\/json/);
    for (const url of [wellKnown, `${credentialIssuer}/.well-known/openid-credential-issuer`]) {
      const res = await fetch(url, { headers: { accept: 'application/jwt' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/jwt/);
      expect(res.headers.get('vary')).toMatch(/accept/i);
      const jwt = await res.text();
      await checkX5cIndependently(jwt, { caPem: caPem(), iss: credentialIssuer });
      expect(decodeJwt(jwt).sub).toBe(credentialIssuer);
    }
  });
});

describe('issue 49, bad input: a card an operator misconfigured stops the start-up, naming its path', () => {
  const startError = async (overrides: Record<string, unknown>): Promise<string> => {
    try {
      const s = await startTestService(overrides);
      await s.stop();
    } catch (err) {
      if (err instanceof ConfigError) return err.problems.join('\n');
      throw err;
    }
    throw new Error('the service started');
  };

  it('an unreadable logo file, a file that is no image', async () => {
    const missing = await startError({
      credentialTypes: [
        badgeType({ logo: join(dir, 'missing.png'), background: join(dir, 'background.png') }),
        membershipType,
      ],
    });
    expect(missing).toMatch(
      /credentialTypes\[0\] \(name EmployeeBadge\)\.card\.logo\.image: cannot read .*missing\.png \(ENOENT\)/,
    );
    writeFileSync(join(dir, 'page.html'), '<html>not an image</html>');
    const notImage = await startError({
      credentialTypes: [badgeType({ logo: join(dir, 'logo.png'), background: join(dir, 'page.html') }), membershipType],
    });
    expect(notImage).toMatch(
      /credentialTypes\[0\] \(name EmployeeBadge\)\.card\.backgroundImage: .*not a PNG, JPEG, WebP or SVG image/,
    );
  });

  it('a logo URL that does not answer with an image (unlike ui.logo, which is left out)', async () => {
    const server: Server = createServer((_req, res) => res.writeHead(404).end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/logo.png`;
      const found = await startError({
        credentialTypes: [badgeType({ logo: url, background: join(dir, 'background.png') }), membershipType],
      });
      expect(found).toMatch(/credentialTypes\[0\] \(name EmployeeBadge\)\.card\.logo\.image: .*answered 404/);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
