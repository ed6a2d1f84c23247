// @peculiar/x509 resolves its parsers through tsyringe, which needs the Reflect metadata API
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import * as x509 from '@peculiar/x509';
import { SignJWT } from 'jose';
import type { Config } from '../config/schema.js';
import { readText } from '../keys/files.js';
// x509.ts sets @peculiar/x509's crypto provider on import
import { readPemCertificates, subjectName, toPem } from '../keys/x509.js';
import { REGISTRATION_CERTIFICATE_TYPE, type AskedFor, type QueryOf } from '../verification/registration.js';
import { DAY, EC, randomSerial, selfSignedCa } from '../keys/selfSignedCa.js';

/** ETSI TS 119 475 GEN-5.2.4-08: a registration certificate is valid 12 months at most */
const VALIDITY_DAYS = 180;

/** The demo registrar CA's subject: a registrar file with another is the operator's, never remade. */
export const DEMO_REGISTRAR_CA = 'CN=Demo registrar CA (test only), O=VC OpenID Provider demo';

/**
 * The demo's test registrar (never in production): with `demo: true` and `keys.generate`, when the clients'
 * registration certificates do not load (first start; a new BASE_URL changes what the demo's types are
 * called; expired) and the first `verifier.registrars` file is missing or is this registrar's own, a local
 * registrar CA is made there and signs, for each client with a `registration`, a registration certificate
 * (ETSI TS 119 475, rc-wrp+jwt) at its first file, registering what its verification scopes ask for, as
 * the demo's other certificates are made on a first start. `load` then verifies them as any other.
 */
export async function demoRegistrations<T>(
  config: Config,
  baseDir: string,
  o: { queryOf: QueryOf; asked: (scope: string) => AskedFor | undefined; load: () => Promise<T> },
): Promise<T> {
  const registrarFile = config.verifier.registrars?.[0];
  try {
    return await o.load();
  } catch (err) {
    if (!registrarFile) throw err;
    const caFile = resolve(baseDir, registrarFile);
    const pem = await readText(caFile);
    if (pem !== undefined && subjectName(readPemCertificates(pem, caFile)[0]) !== DEMO_REGISTRAR_CA) throw err;
    await makeDemoRegistrations(config, baseDir, caFile, o);
    return o.load();
  }
}

async function makeDemoRegistrations(
  config: Config,
  baseDir: string,
  caFile: string,
  o: { queryOf: QueryOf; asked: (scope: string) => AskedFor | undefined },
): Promise<void> {
  const now = new Date();
  const notBefore = new Date(now.getTime() - 60_000);
  const { certificate: ca, keys: caKeys } = await selfSignedCa(DEMO_REGISTRAR_CA, { now, days: 10 * 365 });
  const signerKeys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
  const signer = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: 'CN=Demo registrar (test only), O=VC OpenID Provider demo',
    issuer: ca.subject,
    notBefore,
    notAfter: new Date(now.getTime() + 2 * 365 * DAY),
    publicKey: signerKeys.publicKey,
    signingKey: caKeys.privateKey,
    signingAlgorithm: EC,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(signerKeys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const x5c = [Buffer.from(signer.rawData).toString('base64')];
  const iat = Math.floor(now.getTime() / 1000);
  for (const client of config.clients) {
    if (!client.registration) continue;
    const jwt = await new SignJWT({
      sub: client.registration.subject,
      name: client.clientName ?? client.clientId,
      country: 'EU',
      entitlements: ['https://uri.etsi.org/19475/Entitlement/Service_Provider'],
      purpose: [{ lang: 'en', value: 'Demo: trying the verification flows of this service (test registrar)' }],
      privacy_policy: `${config.baseUrl}/demo`,
      credentials: registeredFor(client.scopes, o),
      iat,
      exp: iat + VALIDITY_DAYS * 86_400,
    })
      .setProtectedHeader({ alg: 'ES256', typ: REGISTRATION_CERTIFICATE_TYPE, x5c })
      .sign(signerKeys.privateKey);
    await overwrite(resolve(baseDir, client.registration.certificates[0]), `${jwt}\n`);
  }
  await overwrite(caFile, toPem(new Uint8Array(ca.rawData)));
}

async function overwrite(file: string, text: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(file, text, { mode: 0o644 });
}

interface Registered {
  format: string;
  meta: Record<string, unknown>;
  claim: Array<{ path: unknown[] }>;
}

/** ETSI TS 119 475 `credentials`: what the client's verification scopes ask for, one entry per format and type. */
function registeredFor(
  scopes: readonly string[],
  o: { queryOf: QueryOf; asked: (scope: string) => AskedFor | undefined },
): Registered[] {
  const byKey = new Map<string, Registered>();
  for (const scope of scopes) {
    const asked = o.asked(scope);
    if (!asked) continue;
    for (const query of o.queryOf(asked).credentials) {
      const meta = query.meta.doctype_value
        ? { doctype_value: query.meta.doctype_value }
        : { vct_values: query.meta.vct_values ?? [] };
      const key = `${query.format} ${JSON.stringify(meta)}`;
      const entry: Registered = byKey.get(key) ?? { format: query.format, meta, claim: [] };
      for (const claim of query.claims ?? [])
        if (!entry.claim.some((c) => JSON.stringify(c.path) === JSON.stringify(claim.path)))
          entry.claim.push({ path: claim.path });
      byKey.set(key, entry);
    }
  }
  return [...byKey.values()];
}
