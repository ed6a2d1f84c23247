import { randomUUID } from 'node:crypto';
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { JWK } from 'jose';
import { WalletError } from './errors.js';

interface StoredBase {
  id: string;
  issuer: string;
  receivedAt: string;
  /** private, per credential */
  holderKey: JWK;
  claims: Record<string, unknown>;
}

/** An SD-JWT VC (RFC 9901) as issued: the issuer-signed JWT and all its disclosures, ending with `~`. */
export interface StoredSdJwt extends StoredBase {
  format: 'dc+sd-jwt';
  credential: string;
  vct: string;
  doctype?: undefined;
}

/**
 * An ISO mdoc (ISO/IEC 18013-5, OpenID4VP 1.0 §B.2): `credential` is its IssuerSigned (base64url CBOR),
 * `holderKey` the device key the MSO is bound to, `claims` the elements by namespace.
 */
export interface StoredMdoc extends StoredBase {
  format: 'mso_mdoc';
  credential: string;
  doctype: string;
  vct?: undefined;
  claims: Record<string, Record<string, unknown>>;
  /** the MSO's validityInfo.validUntil, when it could be read */
  validUntil?: string;
}

/** Files written before mdocs were held contain only SD-JWT VCs; they read as they are. */
export type StoredCredential = StoredSdJwt | StoredMdoc;

export interface WalletContents {
  version: 1;
  credentials: StoredCredential[];
}

export const DEFAULT_WALLET_FILE = '.wallet/wallet.json';

/** A missing file is an empty wallet; anything else that is not a wallet file is an error. */
export async function readWalletFile(file: string): Promise<WalletContents> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, credentials: [] };
    throw err;
  }
  let contents: unknown;
  try {
    contents = JSON.parse(text);
  } catch {
    throw new WalletError(`${file} is not a wallet file (not JSON)`);
  }
  const wallet = contents as Partial<WalletContents>;
  if (wallet?.version !== 1 || !Array.isArray(wallet.credentials))
    throw new WalletError(`${file} is not a wallet file`);
  return wallet as WalletContents;
}

/**
 * The file holds private keys: it is written with mode 0600 (its folder 0700), through a temporary file
 * and a rename, so that a crash never leaves half a wallet.
 */
export async function writeWalletFile(file: string, contents: WalletContents): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${randomUUID()}.tmp`;
  await writeFile(temporary, `${JSON.stringify(contents, null, 2)}\n`, { mode: 0o600 });
  await chmod(temporary, 0o600); // the umask may have narrowed it, never widened; be exact
  await rename(temporary, file);
}
