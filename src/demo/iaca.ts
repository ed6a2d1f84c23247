// @peculiar/x509 resolves its parsers through tsyringe, which needs the Reflect metadata API
import 'reflect-metadata';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { webcrypto } from 'node:crypto';
import { readText, writeNew } from '../keys/files.js';
import { isIssuerCa, type IssuerCa } from '../keys/issuerCertificate.js';
import { caFileText, caOfFile } from '../keys/localCa.js';
import { toPem } from '../keys/x509.js';
import type { Store } from '../store/types.js';
import { selfSignedCa } from '../keys/selfSignedCa.js';

/** The store key of the demo's test IACA (one for every instance on a Redis, as the key sets, D20). */
export const DEMO_IACA_STORE_KEY = 'keys:demo-iaca';
/** The demo IACA's certificate, beside the other generated certificates: config/demo.yaml lists it as a trust anchor. */
export const DEMO_IACA_FILE = 'demo-iaca.pem';
const DEMO_IACA_KEY_FILE = 'demo-iaca-key.pem';

const pemBody = (der: Uint8Array) =>
  Buffer.from(der)
    .toString('base64')
    .match(/.{1,64}/g)
    ?.join('\n') ?? '';

/**
 * A test IACA (ISO/IEC 18013-5 Annex B.1.2: a self-signed CA, keyCertSign, a countryName; ZZ, an ISO 3166-1
 * user-assigned code, as no country issues it) for the demo's mDLs and mdoc PIDs. A stranger's IACA as far as
 * the service is concerned: it vouches for nothing until the config lists it in `verifier.trustAnchors`.
 */
export async function generateDemoIaca(now = new Date()): Promise<IssuerCa> {
  const { certificate: ca, keys } = await selfSignedCa('C=ZZ, O=VC OpenID Provider demo, CN=Demo IACA (test only)', {
    now,
    days: 5 * 365,
  });
  const pkcs8 = new Uint8Array(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  return {
    certificate: toPem(new Uint8Array(ca.rawData)),
    key: `-----BEGIN PRIVATE KEY-----\n${pemBody(pkcs8)}\n-----END PRIVATE KEY-----\n`,
  };
}

/**
 * The demo's test IACA (config `demo: true` only), made on first start as the local issuer CA is: in the store
 * on Redis (the first instance's stays), else in `dir` as demo-iaca-key.pem (mode 0600). Its certificate is
 * written to `dir`/demo-iaca.pem before the trust anchors are read, where config/demo.yaml names it.
 */
export async function loadDemoIaca(dir: string, store?: Store): Promise<IssuerCa> {
  let ca: IssuerCa;
  if (store) {
    const held = await store.get<unknown>(DEMO_IACA_STORE_KEY);
    if (held === undefined) await store.setPermanentIfAbsent(DEMO_IACA_STORE_KEY, await generateDemoIaca());
    const kept = held ?? (await store.get<unknown>(DEMO_IACA_STORE_KEY));
    if (!isIssuerCa(kept)) throw new Error(`store key ${DEMO_IACA_STORE_KEY}: not the demo IACA`);
    ca = kept;
  } else {
    const keyFile = join(dir, DEMO_IACA_KEY_FILE);
    if ((await readText(keyFile)) === undefined) await writeNew(keyFile, caFileText(await generateDemoIaca()), 0o600);
    ca = caOfFile(await readFile(keyFile, 'utf8'), keyFile);
  }
  const certFile = join(dir, DEMO_IACA_FILE);
  // the certificate is public: written (again) where the config and a developer look for it
  if ((await readText(certFile)) !== ca.certificate) {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await writeFile(certFile, ca.certificate, { mode: 0o644 });
  }
  return ca;
}
