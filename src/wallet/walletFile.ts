import { randomUUID } from 'node:crypto';
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { JWK } from 'jose';
import { WalletError } from './errors.js';

export interface StoredCredential {
  id: string;
  format: 'dc+sd-jwt';
  credential: string;
  issuer: string;
  vct: string;
  receivedAt: string;
  /** private, per credential */
  holderKey: JWK;
  claims: Record<string, unknown>;
}

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
  if (wallet?.version !== 1 || !Array.isArray(wallet.credentials)) throw new WalletError(`${file} is not a wallet file`);
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
