import type { JWK } from 'jose';
import type { TrustedIssuer } from '../config/schema.js';

export interface IssuerKeysOptions {
  /** this service's own credential issuer and its public credential keys */
  ownIssuer: { issuer: string; jwks: { keys: JWK[] } };
  /** the operator's trusted issuers (config `trustedIssuers`) */
  trustedIssuers: TrustedIssuer[];
  fetch?: typeof fetch;
  /** how long a fetched key set is used, seconds (default 300) */
  cacheSeconds?: number;
  /** how long one fetch may take, milliseconds (default 5000) */
  timeoutMs?: number;
}

/** The issuer is trusted but its keys could not be fetched (network, HTTP status, not a key set). */
export class IssuerKeysUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IssuerKeysUnavailable';
  }
}

type Source = { kind: 'static'; keys: JWK[] } | { kind: 'jwks_uri'; uri: string } | { kind: 'metadata' };

interface CacheEntry {
  keys: JWK[];
  fetchedAt: number;
}

/** A key set or metadata document larger than this is not a key set. */
const MAX_DOCUMENT_BYTES = 256 * 1024;
/** A `kid` that is not in a cached set triggers one refetch (key rotation), at most this often per issuer. */
const MIN_REFETCH_MS = 30_000;

/**
 * SD-JWT VC issuer metadata location (draft-ietf-oauth-sd-jwt-vc §5): `/.well-known/jwt-vc-issuer` goes
 * between the host and the path of the issuer identifier, e.g. `https://h/p` -> `https://h/.well-known/jwt-vc-issuer/p`.
 */
export function jwtVcIssuerMetadataUrl(issuer: string): string {
  const url = new URL(issuer);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  return `${url.origin}/.well-known/jwt-vc-issuer${path}`;
}

/**
 * The issuers whose credentials this service accepts and their keys (D10): this service's own credential
 * issuer with its credential keys, and the operator's `trustedIssuers` with inline `jwks`, a `jwksUri`, or
 * else the keys their SD-JWT VC issuer metadata publishes. Fetched key sets are cached per issuer.
 * Trust is by exact issuer identifier: `iss` must equal a configured `issuer` character for character.
 */
export class IssuerKeys {
  readonly #sources = new Map<string, Source>();
  readonly #cache = new Map<string, CacheEntry>();
  readonly #inflight = new Map<string, Promise<CacheEntry>>();
  readonly #fetch: typeof fetch;
  readonly #cacheMs: number;
  readonly #timeoutMs: number;

  constructor(opts: IssuerKeysOptions) {
    this.#fetch = opts.fetch ?? fetch;
    this.#cacheMs = (opts.cacheSeconds ?? 300) * 1000;
    this.#timeoutMs = opts.timeoutMs ?? 5000;
    for (const trusted of opts.trustedIssuers) {
      if (trusted.jwks) this.#sources.set(trusted.issuer, { kind: 'static', keys: trusted.jwks.keys as JWK[] });
      else if (trusted.jwksUri) this.#sources.set(trusted.issuer, { kind: 'jwks_uri', uri: trusted.jwksUri });
      else this.#sources.set(trusted.issuer, { kind: 'metadata' });
    }
    // our own issuer's keys are known: never fetched, and not overridable by a trustedIssuers entry
    this.#sources.set(opts.ownIssuer.issuer, { kind: 'static', keys: opts.ownIssuer.jwks.keys });
  }

  isTrusted(issuer: string): boolean {
    return this.#sources.has(issuer);
  }

  /**
   * The keys that may have signed a credential of `issuer` with header `kid`: those with that `kid` (or,
   * when none has it, those without any `kid`); all keys when the header has no `kid`.
   * `undefined` when the issuer is not trusted; throws IssuerKeysUnavailable when they cannot be fetched.
   */
  async keysFor(issuer: string, kid: string | undefined): Promise<JWK[] | undefined> {
    const source = this.#sources.get(issuer);
    if (!source) return undefined;
    if (source.kind === 'static') return selectKeys(source.keys, kid);
    let entry = this.#cache.get(issuer);
    if (!entry || Date.now() - entry.fetchedAt > this.#cacheMs) entry = await this.#load(issuer, source);
    let keys = selectKeys(entry.keys, kid);
    if (keys.length === 0 && kid !== undefined && Date.now() - entry.fetchedAt > MIN_REFETCH_MS) {
      entry = await this.#load(issuer, source); // the issuer may have rotated its keys since we fetched them
      keys = selectKeys(entry.keys, kid);
    }
    return keys;
  }

  /** One fetch per issuer at a time; failures are not cached. */
  #load(issuer: string, source: Source): Promise<CacheEntry> {
    const running = this.#inflight.get(issuer);
    if (running) return running;
    const loading = this.#fetchKeys(issuer, source)
      .then((keys) => {
        const entry = { keys, fetchedAt: Date.now() };
        this.#cache.set(issuer, entry);
        return entry;
      })
      .finally(() => this.#inflight.delete(issuer));
    this.#inflight.set(issuer, loading);
    return loading;
  }

  async #fetchKeys(issuer: string, source: Source): Promise<JWK[]> {
    if (source.kind === 'static') return source.keys;
    if (source.kind === 'jwks_uri') return keySet(await this.#getJson(source.uri, 'the issuer JWKS'), 'the issuer JWKS');
    // SD-JWT VC §5: the metadata names the issuer, and carries `jwks` or `jwks_uri` (not both)
    const metadataUrl = jwtVcIssuerMetadataUrl(issuer);
    const metadata = await this.#getJson(metadataUrl, 'the SD-JWT VC issuer metadata');
    if (metadata.issuer !== issuer) throw new IssuerKeysUnavailable(`the SD-JWT VC issuer metadata at ${metadataUrl} names another issuer`);
    if (metadata.jwks !== undefined && metadata.jwks_uri !== undefined) {
      throw new IssuerKeysUnavailable('the SD-JWT VC issuer metadata carries both jwks and jwks_uri');
    }
    if (metadata.jwks !== undefined) return keySet(metadata.jwks, 'the SD-JWT VC issuer metadata jwks');
    if (typeof metadata.jwks_uri === 'string') return keySet(await this.#getJson(metadata.jwks_uri, 'the issuer jwks_uri'), 'the issuer jwks_uri');
    throw new IssuerKeysUnavailable('the SD-JWT VC issuer metadata has neither jwks nor jwks_uri');
  }

  async #getJson(url: string, what: string): Promise<Record<string, unknown>> {
    let response: Response;
    try {
      response = await this.#fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(this.#timeoutMs) });
    } catch (err) {
      throw new IssuerKeysUnavailable(`fetching ${what} failed: ${(err as Error).message}`);
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      throw new IssuerKeysUnavailable(`fetching ${what} failed with HTTP ${response.status}`);
    }
    let text: string;
    try {
      text = await readLimited(response, MAX_DOCUMENT_BYTES, what);
    } catch (err) {
      if (err instanceof IssuerKeysUnavailable) throw err;
      throw new IssuerKeysUnavailable(`reading ${what} failed: ${(err as Error).message}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new IssuerKeysUnavailable(`${what} is not JSON`);
    }
    if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new IssuerKeysUnavailable(`${what} is not a JSON object`);
    return json as Record<string, unknown>;
  }
}

function keySet(value: unknown, what: string): JWK[] {
  const keys = (value as { keys?: unknown } | undefined)?.keys;
  if (!Array.isArray(keys) || !keys.every((k) => typeof k === 'object' && k !== null && typeof (k as JWK).kty === 'string')) {
    throw new IssuerKeysUnavailable(`${what} is not a JWK set`);
  }
  return keys as JWK[];
}

function selectKeys(keys: JWK[], kid: string | undefined): JWK[] {
  const signing = keys.filter((k) => k.use === undefined || k.use === 'sig');
  if (kid === undefined) return signing;
  const byKid = signing.filter((k) => k.kid === kid);
  return byKid.length > 0 ? byKid : signing.filter((k) => k.kid === undefined);
}

async function readLimited(response: Response, limit: number, what: string): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) {
    await response.body?.cancel().catch(() => undefined);
    throw new IssuerKeysUnavailable(`${what} exceeds ${limit} bytes`);
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw new IssuerKeysUnavailable(`${what} exceeds ${limit} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
