import { createHash } from 'node:crypto';
import { base64url } from 'jose';
import { refuse } from './errors.js';

/** RFC 9901 (SD-JWT) §4.1.1: the hash algorithms of the IANA registry we support for `_sd_alg`. */
export const HASHES: Record<string, string> = { 'sha-256': 'sha256', 'sha-384': 'sha384', 'sha-512': 'sha512' };
/** Claims nested deeper than this are refused (RFC 9901 sets no limit; real credentials stay far below). */
const MAX_DEPTH = 32;

/**
 * RFC 9901 §7.1: walks the signed payload, and each disclosed value in turn, for digests (`_sd` arrays of
 * objects, `{"...": digest}` elements of arrays). Refuses a disclosure that no digest references (§7.1
 * step 5), a digest referenced twice (step 3.3), a disclosure of the wrong shape for where it is used, a
 * claim name `_sd` or `...`, or one that already exists in the object (step 3.2.2.4). Returns the names of
 * the disclosed top-level claims.
 */
export function checkDisclosures(payload: Record<string, unknown>, encoded: string[], sdAlg: string): string[] {
  const walker = new DisclosureWalk(decodeDisclosures(encoded, sdAlg));
  walker.walk(payload, []);
  for (const digest of walker.byDigest.keys()) {
    if (!walker.referenced.has(digest))
      throw refuse(
        'disclosure_not_in_credential',
        'a disclosure does not belong to this credential (its digest is not in the credential)',
      );
  }
  return walker.topLevel;
}

/** Each disclosure by its digest, decoded: an array of salt, (name,) value; one disclosure presented twice is refused. */
function decodeDisclosures(encoded: string[], sdAlg: string): Map<string, unknown[]> {
  const byDigest = new Map<string, unknown[]>();
  for (const disclosure of encoded) {
    let decoded: unknown;
    try {
      decoded = JSON.parse(Buffer.from(disclosure, 'base64url').toString('utf8'));
    } catch {
      throw refuse('malformed_presentation', 'a disclosure is not base64url-encoded JSON');
    }
    if (!Array.isArray(decoded) || (decoded.length !== 2 && decoded.length !== 3) || typeof decoded[0] !== 'string') {
      throw refuse('malformed_presentation', 'a disclosure is not an array of salt, (name,) value');
    }
    const digest = hashB64(disclosure, sdAlg);
    if (byDigest.has(digest)) throw refuse('disclosure_not_in_credential', 'the same disclosure is presented twice');
    byDigest.set(digest, decoded);
  }
  return byDigest;
}

/** One walk of a payload: the digests it references, and the top-level claims disclosed. */
class DisclosureWalk {
  readonly referenced = new Set<string>();
  readonly topLevel: string[] = [];

  constructor(readonly byDigest: ReadonlyMap<string, unknown[]>) {}

  walk(value: unknown, path: string[]): void {
    // bound the recursion: checkDisclosures is also usable on a payload whose signature is not checked
    if (path.length > MAX_DEPTH)
      throw refuse('malformed_presentation', `the credential nests claims deeper than ${MAX_DEPTH} levels`);
    if (Array.isArray(value)) return this.walkArray(value, path);
    if (!isObject(value)) return;
    for (const [name, child] of Object.entries(value))
      if (name !== '_sd' && name !== '_sd_alg') this.walk(child, [...path, name]);
    this.walkDigests(value, path);
  }

  /** A digest without a disclosure: not disclosed, or a decoy. */
  private take(digest: unknown): unknown[] | undefined {
    if (typeof digest !== 'string')
      throw refuse('malformed_presentation', 'the credential has a digest that is not a string');
    if (this.referenced.has(digest)) throw refuse('malformed_presentation', 'the credential references a digest twice');
    this.referenced.add(digest);
    return this.byDigest.get(digest);
  }

  private walkArray(value: unknown[], path: string[]): void {
    for (const element of value) {
      if (isObject(element) && Object.keys(element).length === 1 && '...' in element) {
        const disclosure = this.take(element['...']);
        if (!disclosure) continue;
        if (disclosure.length !== 2)
          throw refuse('malformed_presentation', 'an array element disclosure has a claim name');
        this.walk(disclosure[1], [...path, '[]']);
      } else {
        this.walk(element, [...path, '[]']);
      }
    }
  }

  private walkDigests(value: Record<string, unknown>, path: string[]): void {
    const digests = value._sd;
    if (digests === undefined) return;
    if (!Array.isArray(digests))
      throw refuse('malformed_presentation', 'the credential has an _sd that is not an array');
    const names = new Set(Object.keys(value));
    for (const digest of digests) {
      const disclosure = this.take(digest);
      if (!disclosure) continue;
      if (disclosure.length !== 3 || typeof disclosure[1] !== 'string')
        throw refuse('malformed_presentation', 'an object property disclosure has no claim name');
      const name = disclosure[1];
      if (name === '_sd' || name === '...' || names.has(name))
        throw refuse('malformed_presentation', 'a disclosure would overwrite a claim of the credential');
      names.add(name);
      if (path.length === 0) this.topLevel.push(name);
      this.walk(disclosure[2], [...path, name]);
    }
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function hashBytes(data: string | Buffer, algorithm: string): Uint8Array {
  const nodeAlg = HASHES[algorithm.toLowerCase()];
  if (!nodeAlg) throw new Error(`unsupported hash algorithm ${algorithm}`);
  return new Uint8Array(createHash(nodeAlg).update(data).digest());
}

export function hashB64(data: string, algorithm: string): string {
  return base64url.encode(hashBytes(data, algorithm));
}
