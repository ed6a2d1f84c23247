import { createPrivateKey } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, type JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import {
  certifyCredentialKey,
  generateIssuerCa,
  generatedLeafFits,
  type IssuerCa,
} from '../../../src/keys/issuerCertificate.js';
import { loadIssuerIdentity } from '../../../src/keys/issuerIdentity.js';
import { toPem } from '../../../src/keys/x509.js';
import type { KeyOrigin } from '../../../src/keys/keys.js';
import { checkX5cIndependently } from '../../helpers/x5c.js';
import { keyPair } from '../../helpers/keys.js';

const ISS = 'https://issuer.example.com/wallet';
const YEAR = 365 * 86_400_000;

const keyPem = (jwk: JWK) =>
  createPrivateKey({ key: jwk as never, format: 'jwk' }).export({ type: 'pkcs8', format: 'pem' }) as string;
const chainPem = (x5c: string[]) => x5c.map((c) => toPem(new Uint8Array(Buffer.from(c, 'base64')))).join('');

/** Operator files in a fresh folder, and loadIssuerIdentity over them as start-up calls it. */
async function startUp(files: { chain?: string; key?: string }, issuers = [ISS]) {
  const dir = mkdtempSync(join(tmpdir(), 'vc-issuer-'));
  if (files.chain !== undefined) writeFileSync(join(dir, 'issuer-chain.pem'), files.chain);
  if (files.key !== undefined) writeFileSync(join(dir, 'issuer-key.pem'), files.key);
  const credential: KeyOrigin = { set: 'credential', origin: 'file', file: join(dir, 'credential.json') };
  return loadIssuerIdentity(
    { certificateChain: './issuer-chain.pem', key: './issuer-key.pem', previousCertificates: [] },
    { baseDir: dir, generate: false, issuers, credential, until: new Date(Date.now() + 30 * 86_400_000) },
  );
}

async function operatorFiles(o: { ca?: IssuerCa; issuers?: string[]; now?: Date } = {}) {
  const ca = o.ca ?? (await generateIssuerCa('issuer.example.com'));
  const jwk = (await keyPair('k1')).privateJwk;
  const x5c = await certifyCredentialKey(ca, jwk, o.issuers ?? [ISS], o.now);
  return { ca, jwk, x5c, chain: chainPem(x5c), key: keyPem(jwk) };
}

describe('the generated issuer leaf (issue 32 §1, SD-JWT VC §3.5)', () => {
  it('names the issuer as a subjectAltName URI and its host as dNSName, validates to the local CA, and certifies the signing key', async () => {
    const { ca, jwk, x5c } = await operatorFiles();
    const { d: _d, ...pub } = jwk;
    const jws = await new SignJWT({ iss: ISS })
      .setProtectedHeader({ alg: 'ES256', x5c })
      .sign(createPrivateKey({ key: jwk as never, format: 'jwk' }));
    const checked = await checkX5cIndependently(jws, { caPem: ca.certificate, iss: ISS });
    expect(checked.leafJwk).toMatchObject({ x: pub.x, y: pub.y });
    expect(generatedLeafFits(x5c, jwk, ca, [ISS], new Date())).toBe(true);
  });

  it('is remade when it does not name the issuer, ends before a credential would, or another CA signed it', async () => {
    const { ca, jwk, x5c } = await operatorFiles();
    expect(generatedLeafFits(x5c, jwk, ca, ['https://other.example/wallet'], new Date())).toBe(false);
    expect(generatedLeafFits(x5c, jwk, ca, [ISS], new Date(Date.now() + 20 * YEAR))).toBe(false);
    expect(generatedLeafFits(x5c, jwk, await generateIssuerCa('issuer.example.com'), [ISS], new Date())).toBe(false);
    expect(generatedLeafFits(x5c, (await keyPair('k1')).privateJwk, ca, [ISS], new Date())).toBe(false);
  });

  it('a chain from another CA fails the independent check (the check can fail)', async () => {
    const { jwk, x5c } = await operatorFiles();
    const jws = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', x5c })
      .sign(createPrivateKey({ key: jwk as never, format: 'jwk' }));
    await expect(
      checkX5cIndependently(jws, { caPem: (await generateIssuerCa('x')).certificate, iss: ISS }),
    ).rejects.toThrow(/does not validate/);
  });
});

describe('start-up refuses an operator issuer certificate a wallet would refuse (issue 32 §1)', () => {
  it('accepts a good chain and key: the key signs with the chain as x5c', async () => {
    const { chain, key, x5c } = await operatorFiles();
    const identity = await startUp({ chain, key });
    expect(identity.origin).toBe('file');
    expect(identity.operator!.jwk.x5c).toEqual(x5c);
    expect(identity.operator!.jwk.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('refuses a leaf whose subjectAltName names another issuer, naming issuer.certificateChain', async () => {
    const { chain, key } = await operatorFiles({ issuers: ['https://other.example/wallet'] });
    await expect(startUp({ chain, key })).rejects.toThrow(
      /^issuer\.certificateChain \(.*issuer-chain\.pem\): the leaf certificate must name the credential issuer https:\/\/issuer\.example\.com\/wallet/,
    );
  });

  it("refuses a key that is not the leaf's, naming issuer.key", async () => {
    const { chain } = await operatorFiles();
    await expect(startUp({ chain, key: keyPem((await keyPair('k1')).privateJwk) })).rejects.toThrow(
      /^issuer\.key \(.*issuer-key\.pem\) is not the key of the first certificate/,
    );
  });

  it('refuses an expired leaf, naming issuer.certificateChain', async () => {
    const past = new Date(Date.now() - 5 * YEAR);
    const { chain, key } = await operatorFiles({ ca: await generateIssuerCa('issuer.example.com', past), now: past });
    await expect(startUp({ chain, key })).rejects.toThrow(
      /^issuer\.certificateChain \(.*\): the leaf certificate has expired/,
    );
  });

  it('refuses a chain that holds its root, naming issuer.certificateChain', async () => {
    const { ca, chain, key } = await operatorFiles();
    await expect(startUp({ chain: chain + ca.certificate, key })).rejects.toThrow(
      /^issuer\.certificateChain \(.*\): certificate 2 is self-signed \(a trust anchor\): leave the root out of the chain/,
    );
  });

  it('refuses a chain without its key (or a key without its chain)', async () => {
    const { chain, key } = await operatorFiles();
    await expect(startUp({ chain })).rejects.toThrow(/issuer\.key \(.*\) is missing while issuer\.certificateChain/);
    await expect(startUp({ key })).rejects.toThrow(/issuer\.certificateChain \(.*\) is missing while issuer\.key/);
  });

  it('without files and keys.generate off: no certificate, and a warning', async () => {
    const identity = await startUp({});
    expect(identity).toMatchObject({ origin: 'none' });
    expect(identity.warnings[0]).toMatch(/credentials carry no x5c/);
  });
});

describe('the local issuer CA in files', () => {
  it('is made once, beside the chain path, and read back on the next start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vc-issuer-ca-'));
    const credential: KeyOrigin = { set: 'credential', origin: 'file', file: join(dir, 'credential.json') };
    const cfg = { certificateChain: './keys/issuer-chain.pem', key: './keys/issuer-key.pem', previousCertificates: [] };
    const opts = { baseDir: dir, generate: true, issuers: [ISS], credential, until: new Date() };
    const [a, b] = await Promise.all([loadIssuerIdentity(cfg, opts), loadIssuerIdentity(cfg, opts)]);
    expect(a.ca).toEqual(b.ca);
    expect(a.caFile).toBe(join(dir, 'keys', 'issuer-ca.pem'));
    expect(readFileSync(a.caFile!, 'utf8')).toBe(a.ca!.certificate);
    const again = await loadIssuerIdentity(cfg, opts);
    expect(again).toMatchObject({ origin: 'local-file', ca: a.ca });
  });
});
