import { createHash, randomBytes } from 'node:crypto';
import { base64url, importJWK, SignJWT, type JWK } from 'jose';
import { keyPair as testKeyPair } from '../../helpers/keys.js';

/**
 * Credentials and presentations built with jose alone, so that every part of a presentation (disclosures,
 * key binding JWT, sd_hash) can be bent for the attack tests. Shares no code with src/.
 */

export interface KeyPair {
  privateJwk: JWK;
  publicJwk: JWK;
}

/** The shared test key pair (test/helpers/keys.ts), algorithm first; a `kid` is written without `alg`. */
export function keyPair(alg: 'ES256' | 'EdDSA' = 'ES256', kid?: string): Promise<KeyPair> {
  return testKeyPair(kid, { alg, kidOnly: true });
}

export function disclosure(name: string, value: unknown): string {
  return base64url.encode(JSON.stringify([randomBytes(16).toString('base64url'), name, value]));
}

export const sha256 = (data: string) => createHash('sha256').update(data).digest('base64url');

export interface IssueInput {
  issuer: KeyPair;
  alg?: 'ES256' | 'EdDSA';
  iss: string;
  vct: string;
  attributes: Record<string, unknown>;
  holder?: JWK;
  kid?: string | null;
  typ?: string;
  claims?: Record<string, unknown>;
  /** attributes put into the payload as plain claims (not selectively disclosable) */
  plain?: Record<string, unknown>;
}

/** An SD-JWT VC: every attribute a top-level disclosure, plus decoy digests, ending with `~`. */
export async function issue(input: IssueInput): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const disclosures = Object.entries(input.attributes).map(([name, value]) => disclosure(name, value));
  const digests = [...disclosures.map(sha256), sha256(randomBytes(8).toString('hex'))].sort();
  const payload: Record<string, unknown> = {
    iss: input.iss,
    vct: input.vct,
    iat: now,
    exp: now + 3600,
    ...(input.holder ? { cnf: { jwk: input.holder } } : {}),
    _sd: digests,
    _sd_alg: 'sha-256',
    ...input.plain,
    ...input.claims,
  };
  const alg = input.alg ?? 'ES256';
  const kid = input.kid === null ? undefined : (input.kid ?? input.issuer.privateJwk.kid);
  const jwt = await new SignJWT(payload)
    .setProtectedHeader({ alg, typ: input.typ ?? 'dc+sd-jwt', ...(kid ? { kid } : {}) })
    .sign(await importJWK(input.issuer.privateJwk, alg));
  return `${jwt}~${disclosures.join('~')}~`;
}

/** The disclosures of an issued credential, by claim name. */
export function disclosuresOf(credential: string): Map<string, string> {
  const parts = credential.split('~').slice(1).filter(Boolean);
  return new Map(parts.map((d) => [JSON.parse(Buffer.from(d, 'base64url').toString())[1] as string, d]));
}

export interface PresentInput {
  holder: KeyPair;
  alg?: 'ES256' | 'EdDSA';
  aud: string;
  nonce: string;
  /** claim names to disclose; default all */
  disclose?: string[];
  /** replaces the disclosures entirely */
  disclosures?: string[];
  iat?: number;
  typ?: string;
  sdHash?: string;
  extra?: Record<string, unknown>;
  /** leave the key binding JWT out */
  noKeyBinding?: boolean;
}

export async function present(credential: string, input: PresentInput): Promise<string> {
  const issuerJwt = credential.split('~')[0];
  const all = disclosuresOf(credential);
  const chosen = input.disclosures ?? (input.disclose ? input.disclose.map((n) => all.get(n)!) : [...all.values()]);
  const sdJwt = `${issuerJwt}~${chosen.map((d) => `${d}~`).join('')}`;
  if (input.noKeyBinding) return sdJwt;
  const alg = input.alg ?? 'ES256';
  const kb = await new SignJWT({
    aud: input.aud,
    nonce: input.nonce,
    iat: input.iat ?? Math.floor(Date.now() / 1000),
    sd_hash: input.sdHash ?? sha256(sdJwt),
    ...input.extra,
  })
    .setProtectedHeader({ alg, typ: input.typ ?? 'kb+jwt' })
    .sign(await importJWK(input.holder.privateJwk, alg));
  return `${sdJwt}${kb}`;
}
