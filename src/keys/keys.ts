import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair, calculateJwkThumbprint, type JWK } from 'jose';

export interface KeySet {
  /** RS256 private keys for ID tokens; the first signs (spec: Authentication 6). */
  idToken: { keys: JWK[] };
  /** ES256 private keys for SD-JWT VC credentials (D10). */
  credential: { keys: JWK[] };
  /** secrets for oidc-provider's signed cookies */
  cookies: string[];
}

export interface KeyPaths {
  idToken: string;
  credential: string;
  cookies: string;
  generate: boolean;
}

async function newSigningKey(alg: 'RS256' | 'ES256'): Promise<JWK> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true, ...(alg === 'RS256' ? { modulusLength: 2048 } : {}) });
  const jwk = await exportJWK(privateKey);
  return { ...jwk, alg, use: 'sig', kid: await calculateJwkThumbprint(jwk) };
}

async function readJson<T>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as T;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`${file}: cannot read key file: ${(err as Error).message}`);
  }
}

async function writeSecret(file: string, value: unknown): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(file, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600, flag: 'wx' }).catch(async (err) => {
    // another instance generated it first: use theirs
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  });
}

function checkKeys(file: string, set: { keys: JWK[] } | undefined, kty: string): { keys: JWK[] } {
  if (!set || !Array.isArray(set.keys) || set.keys.length === 0) throw new Error(`${file}: expected a JWKS with at least one private key`);
  set.keys.forEach((k, i) => {
    if (k.kty !== kty || !k.d) throw new Error(`${file}: keys[${i}] must be a private ${kty} key`);
  });
  return set;
}

/**
 * Loads the configured keys, generating any missing file on first start when `generate` is on (the
 * embedded default). Files are written 0600 into a git-ignored folder; production mounts its own.
 */
export async function loadKeys(paths: KeyPaths, baseDir: string): Promise<{ keys: KeySet; generated: string[] }> {
  const generated: string[] = [];
  const load = async <T>(rel: string, make: () => Promise<T>): Promise<T> => {
    const file = resolve(baseDir, rel);
    let value = await readJson<T>(file);
    if (value === undefined) {
      if (!paths.generate) throw new Error(`${file}: key file not found (keys.generate is off)`);
      await writeSecret(file, await make());
      value = await readJson<T>(file);
      generated.push(file);
    }
    return value as T;
  };
  const idTokenFile = resolve(baseDir, paths.idToken);
  const credentialFile = resolve(baseDir, paths.credential);
  const idToken = checkKeys(idTokenFile, await load(paths.idToken, async () => ({ keys: [await newSigningKey('RS256')] })), 'RSA');
  const credential = checkKeys(credentialFile, await load(paths.credential, async () => ({ keys: [await newSigningKey('ES256')] })), 'EC');
  const cookies = await load<string[]>(paths.cookies, async () => [randomBytes(32).toString('base64url')]);
  if (!Array.isArray(cookies) || cookies.length === 0) throw new Error(`${resolve(baseDir, paths.cookies)}: expected a JSON array of secrets`);
  const bad = cookies.findIndex((s) => typeof s !== 'string' || s.length === 0);
  if (bad >= 0) throw new Error(`${resolve(baseDir, paths.cookies)}: [${bad}] must be a non-empty string (a secret that signs cookies)`);
  return { keys: { idToken, credential, cookies }, generated };
}

/** The public half of a JWKS, for publication at jwks_uri. */
export function publicJwks(set: { keys: JWK[] }): { keys: JWK[] } {
  return {
    keys: set.keys.map(({ d, p, q, dp, dq, qi, oth, k, ...pub }) => pub as JWK),
  };
}
