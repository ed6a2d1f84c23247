/**
 * RFC 7517 §4.7, HAIP 1.0 §6.1.1: with key files, keys.generate off and no issuer.* files, a credential
 * key JWK's own `x5c` goes into every SD-JWT VC and Status List Token as it is. Start-up checks it as it
 * checks the operator's issuer.certificateChain: a leaf for another key, or one that does not name the
 * issuer, refuses the start with an error naming the key file and the kid; a correct one signs; a reload
 * that brings a bad one keeps the keys loaded before.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createService, type Service } from '../../src/app.js';
import { validateConfig } from '../../src/config/load.js';
import { certifyCredentialKey, generateIssuerCa, type IssuerCa } from '../../src/keys/issuerCertificate.js';
import { loadKeys } from '../../src/keys/keys.js';
import { createLogger } from '../../src/log.js';
import { keyPair } from '../helpers/keys.js';
import { testConfig } from '../helpers/service.js';
import { testStore } from '../helpers/stores.js';

const PORT = 1;
/** the issuer identifier the service signs as, on testConfig's base URL */
const ISSUER = `http://127.0.0.1:${PORT}/wallet`;

let dir: string;
let files: Record<'idToken' | 'credential' | 'cookies' | 'pairwise', string>;
let credentialKey: JWK;
let ca: IssuerCa;
const running: Service[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vc-x5c-keys-'));
  files = {
    idToken: join(dir, 'id.json'),
    credential: join(dir, 'cred.json'),
    cookies: join(dir, 'cookies.json'),
    pairwise: join(dir, 'pairwise.json'),
  };
  await loadKeys({ ...files, generate: true }, dir);
  credentialKey = (JSON.parse(readFileSync(files.credential, 'utf8')) as { keys: JWK[] }).keys[0];
  ca = await generateIssuerCa('127.0.0.1');
});
afterAll(async () => {
  await Promise.all(running.map((s) => s.close()));
});

/** The credential key file with these keys; then the service as an operator with key files starts it. */
async function startWith(keys: JWK[]): Promise<Service> {
  writeFileSync(files.credential, JSON.stringify({ keys }));
  const config = validateConfig(
    testConfig(PORT, {
      keys: { ...files, generate: false },
      // no issuer certificate files, and none made
      issuer: { certificateChain: join(dir, 'no-issuer-chain.pem'), key: join(dir, 'no-issuer-key.pem') },
    }),
  );
  const store = await testStore();
  const service = await createService(
    { config, file: 'test', baseDir: dir },
    { store, logger: createLogger('silent'), background: false },
  ).catch(async (err: unknown) => {
    await store.close();
    throw err;
  });
  running.push(service);
  return service;
}

describe("a credential key's own x5c (RFC 7517 §4.7), without issuer.* files", () => {
  it('a leaf certifying another key refuses the start, naming the key file and the kid', async () => {
    const other = await keyPair('other');
    const x5c = await certifyCredentialKey(ca, other.privateJwk, [ISSUER]);
    await expect(startWith([{ ...credentialKey, x5c }])).rejects.toThrow(
      `keys.credential (${files.credential}): the credential key "${credentialKey.kid}": the first certificate of its x5c certifies another key (RFC 7517 §4.7: it must be the JWK's own key)`,
    );
  });

  it('a leaf that does not name the issuer, or an x5c that is not base64 certificates, refuses the start', async () => {
    const elsewhere = await certifyCredentialKey(ca, credentialKey, ['https://elsewhere.example/wallet']);
    await expect(startWith([{ ...credentialKey, x5c: elsewhere }])).rejects.toThrow(
      /the credential key ".*": the leaf of its x5c must name the credential issuer http:\/\/127\.0\.0\.1:1\/wallet/,
    );
    await expect(startWith([{ ...credentialKey, x5c: ['not base64!'] }])).rejects.toThrow(
      /has an x5c that is not an array of base64 DER certificates/,
    );
  });

  it("its own leaf, naming the issuer, is accepted and signs with the key's x5c; a key without x5c is left alone", async () => {
    const x5c = await certifyCredentialKey(ca, credentialKey, [ISSUER]);
    const service = await startWith([{ ...credentialKey, x5c }]);
    expect(service.issuerOrigin.origin).toBe('none');
    expect((service.credentialKeys.signing() as JWK).x5c).toEqual(x5c);
    await expect(startWith([credentialKey])).resolves.toBeDefined();
  });

  it('a reloaded key set whose x5c certifies another key is not taken: the keys loaded before stay', async () => {
    const x5c = await certifyCredentialKey(ca, credentialKey, [ISSUER]);
    const service = await startWith([{ ...credentialKey, x5c }]);
    const other = await keyPair('other');
    writeFileSync(
      files.credential,
      JSON.stringify({ keys: [{ ...credentialKey, x5c: await certifyCredentialKey(ca, other.privateJwk, [ISSUER]) }] }),
    );
    await service.keyRing.reload();
    expect((service.credentialKeys.signing() as JWK).x5c).toEqual(x5c);
  });
});
