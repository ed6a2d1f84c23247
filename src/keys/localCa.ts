import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Store } from '../store/types.js';
import { readText, writeNew } from './files.js';
import { generateIssuerCa, isIssuerCa, type IssuerCa } from './issuerCertificate.js';
import type { KeyOrigin } from './keys.js';
import { permitsHost } from './nameConstraints.js';

/** The store key of a generated local issuer CA (one for every instance, as the key sets, D20). */
export const ISSUER_CA_STORE_KEY = 'keys:issuer-ca';

/** The CA's key and certificate in one file, so that two instances starting together cannot mix two CAs. */
export const caFileText = (ca: IssuerCa) => `${ca.key}${ca.certificate}`;
export function caOfFile(text: string, where: string): IssuerCa {
  const key = /-----BEGIN PRIVATE KEY-----[^-]+-----END PRIVATE KEY-----\n?/.exec(text)?.[0];
  const certificate = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----\n?/.exec(text)?.[0];
  if (!key || !certificate)
    throw new Error(`${where}: not a local issuer CA (a PKCS#8 private key and its certificate)`);
  return { key, certificate };
}

/**
 * The local issuer CA, kept where the credential keys are (D20): in the store when the set is there (every
 * instance certifies with one CA), else beside the configured chain as issuer-ca-key.pem (secret) and
 * issuer-ca.pem (the certificate wallets must trust). The first writer wins.
 */
export async function localCa(
  credential: KeyOrigin,
  chainFile: string,
  host: string,
  store?: Store,
): Promise<{ ca: IssuerCa; generated: boolean; caFile: string; where: string; warning?: string }> {
  const caFile = join(dirname(chainFile), 'issuer-ca.pem');
  let ca: IssuerCa;
  let generated = false;
  let where: string;
  if (credential.origin === 'store' || credential.origin === 'generated-store') {
    if (!store) throw new Error('issuer: the credential keys are in the store, which is not open');
    where = `store key ${ISSUER_CA_STORE_KEY}`;
    let held = await store.get<unknown>(ISSUER_CA_STORE_KEY);
    if (held === undefined) {
      const candidate = await generateIssuerCa(host);
      generated = await store.setPermanentIfAbsent(ISSUER_CA_STORE_KEY, candidate);
      held = generated ? candidate : await store.get<unknown>(ISSUER_CA_STORE_KEY);
    }
    if (!isIssuerCa(held)) throw new Error(`${where}: not a local issuer CA`);
    ca = held;
  } else {
    const keyFile = join(dirname(chainFile), 'issuer-ca-key.pem');
    where = keyFile;
    let text = await readText(keyFile);
    if (text === undefined) {
      await writeNew(keyFile, caFileText(await generateIssuerCa(host)), 0o600);
      text = await readFile(keyFile, 'utf8');
      generated = true;
    }
    ca = caOfFile(text, keyFile);
  }
  const warning = checkHost(ca, host, where, caFile);
  // the certificate is public: written (again) where a developer looks for it
  if ((await readText(caFile)) !== ca.certificate) {
    await mkdir(dirname(caFile), { recursive: true, mode: 0o700 });
    await writeFile(caFile, ca.certificate, { mode: 0o644 });
  }
  return { ca, generated, caFile, where, ...(warning ? { warning } : {}) };
}

/**
 * A CA's name constraints hold it to the host it was made for: on another host its leaves would be refused
 * (by our own verifier too), so the start stops and says what to delete. A CA made before it had any is
 * kept, with a warning.
 */
function checkHost(ca: IssuerCa, host: string, where: string, caFile: string): string | undefined {
  const remake = `delete ${where}${where.startsWith('store key') ? '' : ` and ${caFile}`} to have one made for ${host}, and have wallets trust the new ${caFile}`;
  const permits = permitsHost(ca.certificate, host);
  if (permits === false)
    throw new Error(
      `${where}: the local issuer CA is held to another host by its name constraints, not the base URL's (${host}): ${remake}`,
    );
  return permits === undefined
    ? `${where}: the local issuer CA has no name constraints (an earlier release made it), so a wallet that trusts it would trust it for any name: ${remake}`
    : undefined;
}
