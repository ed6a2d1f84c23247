import {
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  type JSONWebKeySet,
  type JWK,
  type JWTVerifyGetKey,
} from 'jose';
import type { TrustedIssuer } from '../config/schema.js';
import { OutboundFetch, OutboundRefused, OutboundUnavailable } from '../http/outboundFetch.js';
import { byChainOrKid } from './ownChain.js';

export { OwnChainRefused } from './ownChain.js';

/** Our own credential issuer as the verifier trusts it: its identifier, its keys, and the issuer CA it made. */
export interface OwnIssuer {
  issuer: string;
  /** our credential keys now (D20: a rotation changes them), or a fixed set */
  jwks: { keys: JWK[] } | (() => { keys: JWK[] });
  /**
   * DER certificate of the local issuer CA (src/keys/issuerIdentity.ts), when we made one: a credential of
   * ours that carries `x5c` is then verified by its chain to this CA, whatever key set is published.
   */
  issuerCa?: Uint8Array;
}

export interface IssuerKeysOptions {
  /** this service's own credential issuer, its public credential keys and its issuer CA (not trusted when left out) */
  ownIssuer?: OwnIssuer;
  /** the operator's trusted issuers (config `trustedIssuers`) */
  trustedIssuers: TrustedIssuer[];
  /** the outbound rules every fetch of metadata and key sets is held to (src/http/outboundFetch.ts) */
  outbound?: OutboundFetch;
  /** how long a fetched key set or issuer metadata document is used, seconds (default 300) */
  cacheSeconds?: number;
  /** how soon after a fetch a `kid` missing from it may fetch it again, seconds (default 30) */
  cooldownSeconds?: number;
  /** how long one fetch may take, milliseconds (default 5000) */
  timeoutMs?: number;
}

/** The issuer is trusted but its keys could not be fetched (network, HTTP status, a refused target, not a key set). */
export class IssuerKeysUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IssuerKeysUnavailable';
  }
}

/** A key set or metadata document larger than this is not a key set. */
const MAX_DOCUMENT_BYTES = 256 * 1024;

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
 * else the keys their SD-JWT VC issuer metadata publishes. Trust is by exact issuer identifier: `iss` must
 * equal a configured `issuer` character for character.
 *
 * Each issuer's keys are a jose key resolver: jose picks the key by the JWS header's `kid` and `alg`
 * (RFC 7515 §4.1.1, §4.1.4), caches fetched sets and refetches one when a `kid` is not in it (key rotation).
 */
export class IssuerKeys {
  readonly #resolvers = new Map<string, JWTVerifyGetKey>();
  /** remote sets named by issuer metadata, per jwks_uri, so that a metadata refresh keeps the set's cache */
  readonly #remoteSets = new Map<string, JWTVerifyGetKey>();
  readonly #outbound: OutboundFetch;
  readonly #cacheMs: number;
  readonly #cooldownMs: number;
  readonly #timeoutMs: number;

  constructor(opts: IssuerKeysOptions) {
    this.#outbound = opts.outbound ?? new OutboundFetch();
    this.#cacheMs = (opts.cacheSeconds ?? 300) * 1000;
    this.#cooldownMs = (opts.cooldownSeconds ?? 30) * 1000;
    this.#timeoutMs = opts.timeoutMs ?? 5000;
    for (const trusted of opts.trustedIssuers) {
      const resolver = trusted.jwks
        ? localSet(trusted.jwks, `the configured jwks of ${trusted.issuer}`)
        : trusted.jwksUri
          ? this.#remoteSet(trusted.jwksUri, 'the issuer JWKS')
          : this.#metadataKeys(trusted.issuer);
      this.#resolvers.set(trusted.issuer, resolver);
    }
    // our own issuer's keys are known: never fetched, and not overridable by a trustedIssuers entry
    if (opts.ownIssuer) {
      const { jwks, issuer, issuerCa } = opts.ownIssuer;
      const byKid = typeof jwks === 'function' ? currentSet(jwks) : localSet(jwks, 'our credential keys');
      this.#resolvers.set(issuer, issuerCa ? byChainOrKid(issuer, issuerCa, byKid) : byKid);
    }
  }

  isTrusted(issuer: string): boolean {
    return this.#resolvers.has(issuer);
  }

  /**
   * The key resolver for JWSs of `issuer`, for jose's `compactVerify`/`jwtVerify`; `undefined` when the issuer
   * is not trusted. It throws IssuerKeysUnavailable when the keys cannot be fetched, and jose's
   * ERR_JWKS_NO_MATCHING_KEY (or ERR_JWKS_MULTIPLE_MATCHING_KEYS) when no key (or several) fits the header.
   */
  resolverFor(issuer: string): JWTVerifyGetKey | undefined {
    return this.#resolvers.get(issuer);
  }

  /** A jose remote set whose fetches go through #fetchDocument (the outbound rules, no redirects, size limit). */
  #remoteSet(uri: string, what: string): JWTVerifyGetKey {
    let url: URL;
    try {
      url = new URL(uri);
    } catch {
      return failing(new IssuerKeysUnavailable(`${what} location is not a URL`));
    }
    const set = createRemoteJWKSet(url, {
      timeoutDuration: this.#timeoutMs,
      cooldownDuration: this.#cooldownMs,
      cacheMaxAge: this.#cacheMs,
      [customFetch]: async (href, init) => {
        const text = await this.#fetchDocument(href, what, init.signal, 'application/jwk-set+json, application/json');
        return new Response(text, { status: 200, headers: { 'content-type': 'application/json' } });
      },
    });
    return async (header, token) => {
      try {
        return await set(header, token);
      } catch (err) {
        throw unavailable(err, what);
      }
    };
  }

  /**
   * SD-JWT VC §5: an issuer with neither `jwks` nor `jwksUri` publishes its keys in its issuer metadata, as
   * `jwks` or at a `jwks_uri`. The document is cached like a key set; failures are not cached. Keys given
   * inline in it are refetched with the document when a `kid` is missing (at most once per cooldown); a
   * `jwks_uri` set refetches itself.
   */
  #metadataKeys(issuer: string): JWTVerifyGetKey {
    let current: { keys: JWTVerifyGetKey; inline: boolean; fetchedAt: number } | undefined;
    let loading: Promise<void> | undefined;
    const load = () =>
      (loading ??= this.#loadMetadata(issuer)
        .then((loaded) => {
          current = { ...loaded, fetchedAt: Date.now() };
        })
        .finally(() => {
          loading = undefined;
        }));
    return async (header, token) => {
      if (!current || Date.now() - current.fetchedAt >= this.#cacheMs) await load();
      try {
        return await current!.keys(header, token);
      } catch (err) {
        const rotated =
          current!.inline &&
          (err as { code?: string }).code === 'ERR_JWKS_NO_MATCHING_KEY' &&
          Date.now() - current!.fetchedAt >= this.#cooldownMs;
        if (!rotated) throw err;
        await load();
        return current!.keys(header, token);
      }
    };
  }

  async #loadMetadata(issuer: string): Promise<{ keys: JWTVerifyGetKey; inline: boolean }> {
    const metadataUrl = jwtVcIssuerMetadataUrl(issuer);
    const what = 'the SD-JWT VC issuer metadata';
    const text = await this.#fetchDocument(
      metadataUrl,
      what,
      AbortSignal.timeout(this.#timeoutMs),
      'application/json',
    ).catch((err: unknown) => {
      throw unavailable(err, what);
    });
    let metadata: unknown;
    try {
      metadata = JSON.parse(text);
    } catch {
      throw new IssuerKeysUnavailable(`${what} is not JSON`);
    }
    if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata))
      throw new IssuerKeysUnavailable(`${what} is not a JSON object`);
    const { issuer: named, jwks, jwks_uri: jwksUri } = metadata as Record<string, unknown>;
    // SD-JWT VC §5: the metadata names the issuer, and carries `jwks` or `jwks_uri` (not both)
    if (named !== issuer) throw new IssuerKeysUnavailable(`${what} at ${metadataUrl} names another issuer`);
    if (jwks !== undefined && jwksUri !== undefined)
      throw new IssuerKeysUnavailable(`${what} carries both jwks and jwks_uri`);
    if (jwks !== undefined) {
      try {
        return { keys: createLocalJWKSet(jwks as JSONWebKeySet), inline: true };
      } catch {
        throw new IssuerKeysUnavailable(`${what} jwks is not a JWK set`);
      }
    }
    if (typeof jwksUri === 'string') {
      let keys = this.#remoteSets.get(jwksUri);
      if (!keys) {
        keys = this.#remoteSet(jwksUri, 'the issuer jwks_uri');
        this.#remoteSets.set(jwksUri, keys);
      }
      return { keys, inline: false };
    }
    throw new IssuerKeysUnavailable(`${what} has neither jwks nor jwks_uri`);
  }

  /**
   * One GET of a key set or metadata document under the outbound rules: redirects are not followed (the keys
   * come from the configured or published location only), anything but 200 is refused, and so is a body
   * over MAX_DOCUMENT_BYTES. A timeout is rethrown as is, for jose to report it as ERR_JWKS_TIMEOUT.
   */
  async #fetchDocument(url: string, what: string, signal: AbortSignal, accept: string): Promise<string> {
    try {
      return await this.#outbound.get(url, { what, accept, maxBytes: MAX_DOCUMENT_BYTES, signal });
    } catch (err) {
      if (err instanceof OutboundRefused || err instanceof OutboundUnavailable)
        throw new IssuerKeysUnavailable(err.message);
      throw err;
    }
  }
}

/** A local set; a malformed one fails each verification rather than the service's start. */
function localSet(jwks: { keys: unknown[] }, what: string): JWTVerifyGetKey {
  try {
    return createLocalJWKSet(jwks as JSONWebKeySet);
  } catch {
    return failing(new IssuerKeysUnavailable(`${what} is not a JWK set`));
  }
}

/** A local set that changes (our own rotating keys): a resolver is made once per published set. */
function currentSet(jwks: () => { keys: JWK[] }): JWTVerifyGetKey {
  let made: { set: { keys: JWK[] }; resolve: JWTVerifyGetKey } | undefined;
  return (header, token) => {
    const set = jwks();
    if (made?.set !== set) made = { set, resolve: localSet(set, 'our credential keys') };
    return made.resolve(header, token);
  };
}

function failing(err: Error): JWTVerifyGetKey {
  return async () => {
    throw err;
  };
}

/**
 * jose's errors about getting a key set, as IssuerKeysUnavailable; its errors about choosing a key from a set
 * (no key, several keys, a key that does not import) pass through.
 */
function unavailable(err: unknown, what: string): unknown {
  if (err instanceof IssuerKeysUnavailable) return err;
  const code = (err as { code?: string }).code;
  if (code === 'ERR_JWKS_TIMEOUT' || isTimeout(err)) return new IssuerKeysUnavailable(`fetching ${what} timed out`);
  if (code === 'ERR_JWKS_INVALID') return new IssuerKeysUnavailable(`${what} is not a JWK set`);
  // jose's own fetch step: a body that is not JSON
  if (code === 'ERR_JOSE_GENERIC') return new IssuerKeysUnavailable(`${what} is not JSON`);
  return err;
}

function isTimeout(err: unknown): boolean {
  return (err as { name?: string } | undefined)?.name === 'TimeoutError';
}
