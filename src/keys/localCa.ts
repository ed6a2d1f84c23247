import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
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

/** A local issuer CA as found (or made) where it is kept. */
interface HeldCa {
  ca: IssuerCa;
  generated: boolean;
  where: string;
  /** the one kept was held to another host: this one, made for `host`, replaced it */
  replaced?: boolean;
}

/**
 * The local issuer CA, kept where the credential keys are (D20): in the store when the set is there (every
 * instance certifies with one CA), else beside the configured chain as issuer-ca-key.pem (secret) and
 * issuer-ca.pem (the certificate wallets must trust). The first writer wins. Its name constraints hold it to
 * `host` (src/keys/nameConstraints.ts): one kept for another host (the base URL moved) is replaced by one
 * made for this host, whose leaves that one would not vouch for; one kept from before it had constraints is
 * used, with a warning.
 */
export async function localCa(
  credential: KeyOrigin,
  chainFile: string,
  host: string,
  store?: Store,
): Promise<{ ca: IssuerCa; generated: boolean; caFile: string; where: string; warning?: string }> {
  const caFile = join(dirname(chainFile), 'issuer-ca.pem');
  let held: HeldCa;
  if (credential.origin === 'store' || credential.origin === 'generated-store') {
    if (!store) throw new Error('issuer: the credential keys are in the store, which is not open');
    held = await storeCa(store, host);
  } else {
    held = await fileCa(join(dirname(chainFile), 'issuer-ca-key.pem'), host);
  }
  const { ca, generated, where } = held;
  const remake = `delete ${where}${where.startsWith('store key') ? '' : ` and ${caFile}`} to have one made that is`;
  const warning = held.replaced
    ? `${where}: the local issuer CA kept there was held to another host; a new one for ${host} replaced it: have wallets trust the new ${caFile}`
    : permitsHost(ca.certificate, host) === undefined
      ? `${where}: the local issuer CA has no name constraints (an earlier release made it), so a wallet that trusts it would trust it for any name: ${remake} held to ${host}, and have wallets trust the new ${caFile}`
      : undefined;
  // the certificate is public: written (again) where a developer looks for it
  if ((await readText(caFile)) !== ca.certificate) {
    await mkdir(dirname(caFile), { recursive: true, mode: 0o700 });
    await writeFile(caFile, ca.certificate, { mode: 0o644 });
  }
  return { ca, generated, caFile, where, ...(warning ? { warning } : {}) };
}

/** The CA in the store: made once (the first instance's stays); replaced, compare-and-set, when held to another host. */
async function storeCa(store: Store, host: string): Promise<HeldCa> {
  const where = `store key ${ISSUER_CA_STORE_KEY}`;
  let held = await store.get<unknown>(ISSUER_CA_STORE_KEY);
  let generated = false;
  if (held === undefined) {
    const candidate = await generateIssuerCa(host);
    generated = await store.setPermanentIfAbsent(ISSUER_CA_STORE_KEY, candidate);
    held = generated ? candidate : await store.get<unknown>(ISSUER_CA_STORE_KEY);
  }
  if (!isIssuerCa(held)) throw new Error(`${where}: not a local issuer CA`);
  if (permitsHost(held.certificate, host) !== false) return { ca: held, generated, where };
  const candidate = await generateIssuerCa(host);
  if (await store.replacePermanent(ISSUER_CA_STORE_KEY, held, candidate))
    return { ca: candidate, generated: true, where, replaced: true };
  // another instance replaced it first: theirs, if it is for this host
  const now = await store.get<unknown>(ISSUER_CA_STORE_KEY);
  if (!isIssuerCa(now) || permitsHost(now.certificate, host) === false)
    throw new Error(
      `${where}: the local issuer CA keeps changing to another host's; do instances on this store have different base URLs?`,
    );
  return { ca: now, generated: false, where };
}

/** The CA beside the chain: made once (an instance sharing the folder may write it first); replaced when held to another host. */
async function fileCa(keyFile: string, host: string): Promise<HeldCa> {
  let text = await readText(keyFile);
  let generated = false;
  if (text === undefined) {
    await writeNew(keyFile, caFileText(await generateIssuerCa(host)), 0o600);
    text = await readFile(keyFile, 'utf8');
    generated = true;
  }
  const ca = caOfFile(text, keyFile);
  if (permitsHost(ca.certificate, host) !== false) return { ca, generated, where: keyFile };
  const fresh = await generateIssuerCa(host);
  // written whole or not at all: a new file renamed over the old one
  const temporary = `${keyFile}.${process.pid}.new`;
  await writeFile(temporary, caFileText(fresh), { mode: 0o600 });
  await rename(temporary, keyFile);
  return { ca: fresh, generated: true, where: keyFile, replaced: true };
}
