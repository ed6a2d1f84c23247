/**
 * The document signers of our mdocs (ISO/IEC 18013-5 Annex B.1.4): with the local issuer CA one per
 * credential key, kept in the store (Redis) or beside the CA's file, shared by instances and remade when it
 * would end too early; an operator's `issuer.documentSigner`, checked at start-up as a verifier checks it.
 */
// @peculiar/x509 resolves its parsers through tsyringe, which needs the Reflect metadata API
import 'reflect-metadata';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS } from '../helpers/stores.js';
import { makeCert } from '../helpers/pki.js';
import { createTestMdocIssuer } from '../helpers/mdoc.js';
import { documentSignerStoreKey, loadIssuerIdentity, localDocumentSigners } from '../../src/keys/issuerIdentity.js';
import { generateIssuerCa, type IssuerCa } from '../../src/keys/issuerCertificate.js';
import type { KeyOrigin } from '../../src/keys/keys.js';
import { verifyCertificateChain, readPemCertificates } from '../../src/keys/x509.js';
import type { Store } from '../../src/store/types.js';

const DAY = 86_400_000;
let ca: IssuerCa;
let caDer: Uint8Array;

beforeAll(async () => {
  ca = await generateIssuerCa('issuer.example');
  caDer = readPemCertificates(ca.certificate, 'ca')[0];
});

describe('local document signers in Redis', () => {
  let store: Store;
  beforeAll(async () => {
    store = await STORE_KINDS.redis();
  });
  afterAll(async () => store?.close());
  const origin: KeyOrigin = {
    set: 'credential',
    origin: 'store',
    file: '/nonexistent/credential.json',
    storeKey: 'keys:credential',
  };

  it("one signer per credential key, shared by instances, under the CA with the mdlDS usage and the CA's country", async () => {
    let kid = 'key-1';
    const options = {
      ca,
      credential: origin,
      chainFile: '/nonexistent/issuer-chain.pem',
      host: 'issuer.example',
      store,
      activeKid: () => kid,
      validForMs: 30 * DAY,
    };
    const a = localDocumentSigners(options);
    const b = localDocumentSigners(options);
    const [first, second] = await Promise.all([a.current(), b.current()]);
    // two instances starting together agree on one signer
    expect(second.chain[0]).toEqual(first.chain[0]);
    expect(await a.current()).toBe(first);
    await verifyCertificateChain(first.chain, [caDer], new Date(), 'mdoc-document-signer');
    const cert = new x509.X509Certificate(Uint8Array.from(first.chain[0]));
    expect(cert.subjectName.getField('C')).toEqual(['ZZ']);
    expect(new x509.X509Certificate(ca.certificate).subjectName.getField('C')).toEqual(['ZZ']);
    expect(first.jwk).toMatchObject({ kty: 'EC', crv: 'P-256', d: expect.any(String) });
    expect(await store.get(documentSignerStoreKey('key-1'))).toMatchObject({
      certificate: expect.stringContaining('BEGIN CERTIFICATE'),
    });

    // a rotated credential key brings its own signer
    kid = 'key-2';
    const rotated = await a.current();
    expect(rotated.chain[0]).not.toEqual(first.chain[0]);
    expect(rotated.jwk.x).not.toBe(first.jwk.x);
    expect((await b.current()).chain[0]).toEqual(rotated.chain[0]);
  });

  it('a signer that would end before an mdoc signed now is remade', async () => {
    const signers = localDocumentSigners({
      ca,
      credential: origin,
      chainFile: '/nonexistent/issuer-chain.pem',
      host: 'issuer.example',
      store,
      activeKid: () => 'key-3',
      validForMs: DAY,
    });
    const first = await signers.current();
    // asked to last longer than the signer does (3 years): remade to last that long, replaced in the store
    const longer = localDocumentSigners({
      ca,
      credential: origin,
      chainFile: '/nonexistent/issuer-chain.pem',
      host: 'issuer.example',
      store,
      activeKid: () => 'key-3',
      validForMs: 4 * 365 * DAY,
    });
    const remade = await longer.current();
    expect(remade.chain[0]).not.toEqual(first.chain[0]);
    expect(remade.expires.getTime()).toBeGreaterThan(Date.now() + 4 * 365 * DAY);
    // kept from then on: every instance finds the remade one
    expect((await longer.current()).chain[0]).toEqual(remade.chain[0]);
    expect((await signers.current()).chain[0]).toEqual(first.chain[0]); // an instance holds its own until it would end
  });
});

describe('local document signers in files', () => {
  it('are kept beside the CA, one file per credential key, mode 0600', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vc-ds-'));
    const origin: KeyOrigin = { set: 'credential', origin: 'file', file: join(dir, 'credential.json') };
    const options = {
      ca,
      credential: origin,
      chainFile: join(dir, 'issuer-chain.pem'),
      host: 'issuer.example',
      activeKid: () => 'kid/with odd chars',
      validForMs: 30 * DAY,
    };
    const first = await localDocumentSigners(options).current();
    const again = await localDocumentSigners(options).current();
    expect(again.chain[0]).toEqual(first.chain[0]);
    expect(readdirSync(join(dir, 'document-signers'))).toEqual(['kid_with_odd_chars.pem']);
    await verifyCertificateChain(first.chain, [caDer], new Date(), 'mdoc-document-signer');
  });
});

describe("an operator's issuer.documentSigner", () => {
  const opts = (dir: string) => ({
    baseDir: dir,
    generate: false,
    issuers: ['https://issuer.example/wallet'],
    credential: { set: 'credential', origin: 'file', file: join(dir, 'cred.json') } as KeyOrigin,
    until: new Date(Date.now() + DAY),
    mdoc: true,
  });
  const base = { certificateChain: './issuer-chain.pem', key: './issuer-key.pem', previousCertificates: [] };

  it('is taken when it is an mdlDS signer with its key', async () => {
    const iaca = await createTestMdocIssuer({ name: 'Operator IACA' });
    const signer = await iaca.documentSigner({});
    const dir = mkdtempSync(join(tmpdir(), 'vc-ds-op-'));
    writeFileSync(join(dir, 'ds-chain.pem'), signer.chain.join(''));
    writeFileSync(join(dir, 'ds-key.pem'), await pkcs8Pem(signer.certs[0].keys.privateKey));
    const identity = await loadIssuerIdentity(
      { ...base, documentSigner: { certificateChain: './ds-chain.pem', key: './ds-key.pem' } },
      opts(dir),
    );
    expect(identity.documentSigner?.chain).toHaveLength(1);
    await verifyCertificateChain(identity.documentSigner!.chain, [iaca.iacaDer], new Date(), 'mdoc-document-signer');
  });

  it('is refused at start-up without the mdlDS extended key usage, naming the config path', async () => {
    const iaca = await createTestMdocIssuer({ name: 'Operator IACA' });
    const leaf = await makeCert({
      subject: 'C=NL, CN=not a document signer',
      issuer: iaca.iaca,
      eku: ['1.3.6.1.5.5.7.3.2'],
    });
    const dir = mkdtempSync(join(tmpdir(), 'vc-ds-bad-'));
    writeFileSync(join(dir, 'ds-chain.pem'), leaf.pem);
    writeFileSync(join(dir, 'ds-key.pem'), await pkcs8Pem(leaf.keys.privateKey));
    await expect(
      loadIssuerIdentity(
        { ...base, documentSigner: { certificateChain: './ds-chain.pem', key: './ds-key.pem' } },
        opts(dir),
      ),
    ).rejects.toThrow(/issuer\.documentSigner\.certificateChain .*mdlDS/);
  });

  it('left out with no issuer certificate: start-up warns that mdoc types are issued as SD-JWT VCs only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vc-ds-none-'));
    const identity = await loadIssuerIdentity(base, opts(dir));
    expect(identity.documentSigner).toBeUndefined();
    expect(identity.warnings.join('\n')).toMatch(/offered as SD-JWT VCs only/);
  });
});

async function pkcs8Pem(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await crypto.subtle.exportKey('pkcs8', key)).toString('base64');
  return `-----BEGIN PRIVATE KEY-----\n${der.match(/.{1,64}/g)!.join('\n')}\n-----END PRIVATE KEY-----\n`;
}
