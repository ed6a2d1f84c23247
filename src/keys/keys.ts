import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair, calculateJwkThumbprint, type JWK } from 'jose';
import type { Store } from '../store/types.js';
import type { Rotation } from './rotation.js';

/** A key as it is kept: a private JWK, and its rotation dates when it was added by a rotation (src/keys/rotation.ts). */
export type KeptJwk = JWK & { rotation?: Rotation };
/** A cookie secret as it is kept: the secret, or the secret with its rotation dates. */
export type SecretEntry = string | { secret: string; rotation?: Rotation };

export interface KeySet {
  /** RS256 private keys for ID tokens (spec: Authentication 6); which one signs: src/keys/rotation.ts */
  idToken: { keys: KeptJwk[] };
  /** ES256 private keys for SD-JWT VC credentials (D10). */
  credential: { keys: KeptJwk[] };
  /** secrets for the signed cookies */
  cookies: SecretEntry[];
  /** D12: the secret behind pairwise subjects (the first one; never rotated) */
  pairwise: string[];
}

export interface KeyPaths {
  idToken: string;
  credential: string;
  cookies: string;
  pairwise: string;
  generate: boolean;
}

export type KeySetName = keyof KeySet;

/**
 * Where one key set came from at start-up:
 * - `file`: its key file existed and was used as it is;
 * - `generated-file`: no file and no shared store, so this instance generated the file;
 * - `generated-store`: no file; this instance generated the set into the shared store (it was first);
 * - `store`: no file; the set was already in the shared store (another instance, or an earlier start, generated it).
 */
export interface KeyOrigin {
  set: KeySetName;
  origin: 'file' | 'generated-file' | 'generated-store' | 'store';
  /** the configured key file (absolute), which for the store origins does not exist */
  file: string;
  /** the store key (before the store's key prefix), for the store origins */
  storeKey?: string;
}

/**
 * The store key of each generated key set (D20): one key per set, written once by the first instance
 * and never expiring (`Store.setPermanentIfAbsent`).
 */
export const KEY_STORE_KEYS: Record<KeySetName, string> = {
  idToken: 'keys:idToken',
  credential: 'keys:credential',
  cookies: 'keys:cookies',
  pairwise: 'keys:pairwise',
};

export async function newSigningKey(alg: 'RS256' | 'ES256'): Promise<JWK> {
  const { privateKey } = await generateKeyPair(alg, {
    extractable: true,
    ...(alg === 'RS256' ? { modulusLength: 2048 } : {}),
  });
  const jwk = await exportJWK(privateKey);
  return { ...jwk, alg, use: 'sig', kid: await calculateJwkThumbprint(jwk) };
}

async function readJson<T>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as T;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`${file}: cannot read key file: ${(err as Error).message}`, { cause: err });
  }
}

async function writeSecret(file: string, value: unknown): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(file, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600, flag: 'wx' }).catch(async (err) => {
    // another instance generated it first: use theirs
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  });
}

function checkJwks(where: string, set: { keys: JWK[] } | undefined, kty: string): { keys: JWK[] } {
  if (!set || !Array.isArray(set.keys) || set.keys.length === 0)
    throw new Error(`${where}: expected a JWKS with at least one private key`);
  set.keys.forEach((k, i) => {
    if (k.kty !== kty || !k.d) throw new Error(`${where}: keys[${i}] must be a private ${kty} key`);
  });
  return set;
}

/** The secret of an entry (a string, or a rotated secret with its dates). */
export function secretOf(entry: SecretEntry): string {
  return typeof entry === 'string' ? entry : entry.secret;
}

function checkSecrets(where: string, secrets: SecretEntry[] | undefined, what: string): SecretEntry[] {
  if (!Array.isArray(secrets) || secrets.length === 0) throw new Error(`${where}: expected a JSON array of secrets`);
  const bad = secrets.findIndex((s) => {
    const secret = typeof s === 'object' && s !== null ? (s as { secret?: unknown }).secret : s;
    return typeof secret !== 'string' || secret.length === 0;
  });
  if (bad >= 0)
    throw new Error(`${where}: [${bad}] must be a non-empty string, or {"secret": ..., "rotation": ...} (${what})`);
  return secrets;
}

/** How each set is generated and checked (whether read from a file or from the store). */
export const KINDS = {
  idToken: {
    make: async () => ({ keys: [await newSigningKey('RS256')] }),
    check: (where: string, v: unknown) => checkJwks(where, v as { keys: JWK[] }, 'RSA'),
  },
  credential: {
    make: async () => ({ keys: [await newSigningKey('ES256')] }),
    check: (where: string, v: unknown) => checkJwks(where, v as { keys: JWK[] }, 'EC'),
  },
  cookies: {
    make: async () => [randomBytes(32).toString('base64url')],
    check: (where: string, v: unknown) => checkSecrets(where, v as SecretEntry[], 'a secret that signs cookies'),
  },
  pairwise: {
    make: async () => [randomBytes(32).toString('base64url')],
    check: (where: string, v: unknown) =>
      checkSecrets(where, v as SecretEntry[], 'the secret behind pairwise subjects').map(secretOf),
  },
} as const;

/** What losing each set costs, for an operator who is about to make a new one. */
const LOSS: Record<KeySetName, string> = {
  idToken: 'a new set only changes the keys relying parties fetch from jwks_uri',
  credential: 'credentials issued under a lost key can no longer be verified',
  cookies: 'a new set only ends the browser sessions and prompts in progress',
  pairwise:
    'a new secret changes every pairwise subject relying parties already know, so restore the old file if it exists anywhere',
};

/** The start-up error for a missing key file with `keys.generate` off: the command that makes it, and what is at stake. */
export function missingKeyFile(name: KeySetName, file: string): string {
  return `${file}: key file not found (keys.generate is off). Make it with \`npm run keys -- generate ${name} --config <your config>\` (${LOSS[name]}), or restore it from your backup`;
}

/**
 * Writes a new key set into its configured file for an operator who manages key files (keys.generate
 * off): refused when the file exists, so a set in use is never overwritten.
 */
export async function generateKeyFile(name: KeySetName, file: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(file, `${JSON.stringify(await KINDS[name].make(), null, 2)}\n`, { mode: 0o600, flag: 'wx' });
}

/**
 * The set under its store key: the one already there, or else a new one offered atomically (the first
 * writer wins; a loser uses the winner's). A set that is there is read before anything is generated,
 * so only a first start pays for generating a key.
 */
async function fromStore(store: Store, name: KeySetName): Promise<{ value: unknown; generated: boolean }> {
  const key = KEY_STORE_KEYS[name];
  // Without the store this instance cannot know the deployment's key set, so it does not start (rather
  // than sign with keys of its own); with key files it does not need the store to start.
  const reach = <T>(p: Promise<T>): Promise<T> =>
    p.catch((err: Error) => {
      throw new Error(
        `store key ${key}: no key file, and the store that holds the generated keys cannot be reached (${(err.cause as Error | undefined)?.message ?? err.message})`,
        { cause: err },
      );
    });
  // a few rounds only for the case of an operator deleting the key between our write attempt and read
  for (let round = 0; round < 3; round++) {
    const held = await reach(store.get(key));
    if (held !== undefined) return { value: held, generated: false };
    const candidate = await KINDS[name].make();
    if (await reach(store.setPermanentIfAbsent(key, candidate))) return { value: candidate, generated: true };
  }
  throw new Error(
    `store key ${key}: cannot read the key set that another instance wrote (was it deleted during start-up?)`,
  );
}

/**
 * Loads the configured keys (D20). A key file that exists is used as it is. A missing one, when
 * `generate` is on (the embedded default): with a `shared` store (Redis, which every instance of a
 * deployment uses) the set is generated into that store once and every instance loads it from there,
 * so instances behind a load balancer sign and verify with one key set; without one (the memory store,
 * one process) the file is generated, 0600, into a git-ignored folder. Production mounts its own files.
 */
export async function loadKeys(
  paths: KeyPaths,
  baseDir: string,
  opts: { shared?: Store } = {},
): Promise<{ keys: KeySet; origins: KeyOrigin[] }> {
  const origins: KeyOrigin[] = [];
  const load = async (name: KeySetName): Promise<unknown> => {
    const file = resolve(baseDir, paths[name]);
    const { check, make } = KINDS[name];
    const value = await readJson<unknown>(file);
    if (value !== undefined) {
      origins.push({ set: name, origin: 'file', file });
      return check(file, value);
    }
    if (!paths.generate) throw new Error(missingKeyFile(name, file));
    if (opts.shared) {
      const storeKey = KEY_STORE_KEYS[name];
      const { value: held, generated } = await fromStore(opts.shared, name);
      origins.push({ set: name, origin: generated ? 'generated-store' : 'store', file, storeKey });
      return check(`store key ${storeKey}`, held);
    }
    await writeSecret(file, await make());
    origins.push({ set: name, origin: 'generated-file', file });
    // read back: when instances sharing the folder start together, the file written first wins
    return check(file, await readJson<unknown>(file));
  };
  const idToken = (await load('idToken')) as KeySet['idToken'];
  const credential = (await load('credential')) as KeySet['credential'];
  const cookies = (await load('cookies')) as KeySet['cookies'];
  const pairwise = (await load('pairwise')) as KeySet['pairwise'];
  return { keys: { idToken, credential, cookies, pairwise }, origins };
}

/**
 * The public half of a JWKS, for publication at jwks_uri (without the rotation dates we keep beside a key,
 * nor a credential key's issuer certificate: that travels in each credential's x5c header).
 */
export function publicJwks(set: { keys: KeptJwk[] }): { keys: JWK[] } {
  return {
    keys: set.keys.map(({ d, p, q, dp, dq, qi, oth, k, rotation, x5c, ...pub }) => pub as JWK),
  };
}

/** A private key as libraries take it (the rotation dates are ours). */
export function privateJwk({ rotation, ...jwk }: KeptJwk): JWK {
  return jwk;
}
