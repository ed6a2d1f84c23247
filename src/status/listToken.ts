import { StatusList } from '@sd-jwt/jwt-status-list';
import { importJWK, SignJWT, type JWK } from 'jose';
import type { Context } from 'koa';
import type { StatusRegistry } from './registry.js';
import type { SigningKeys } from '../keys/keyRing.js';

/** draft-ietf-oauth-status-list §5.1: the media type of a Status List Token in JWT form. */
export const STATUS_LIST_MEDIA_TYPE = 'application/statuslist+jwt';
const BITS = 2;

export interface StatusListServiceOptions {
  registry: StatusRegistry;
  /** e.g. https://vc.example.com/wallet: lists are at `${credentialIssuer}/status/<id>` */
  credentialIssuer: string;
  /** the credential issuer's keys (private ES256 JWKs with kid; the active one signs) */
  keys: SigningKeys;
  /** seconds a token may be cached */
  ttl: number;
}

interface Signed {
  version: number;
  jwt: string;
  /** epoch seconds */
  iat: number;
}

/**
 * Serves the Status List Tokens (draft-ietf-oauth-status-list §5.1): `typ: statuslist+jwt`, `sub` = the
 * list's URI, `iat`, `exp`, `ttl`, `status_list: {bits: 2, lst}`, signed with the credential key. Each
 * instance keeps the last token it signed per list and signs a new one when the list changed (its version
 * moved, which every instance sees in the store) or when the token is older than `ttl`.
 */
export class StatusListService {
  readonly #o: StatusListServiceOptions;
  readonly #signed = new Map<string, Signed>();
  #key?: { jwk: JWK; key: ReturnType<typeof importJWK> };

  constructor(o: StatusListServiceOptions) {
    this.#o = o;
  }

  uriOf(listId: string): string {
    return `${this.#o.credentialIssuer}/status/${listId}`;
  }

  /** GET `/status/<id>` under the credential issuer; false when there is no such list. */
  async serve(ctx: Context, listId: string): Promise<boolean> {
    if (!(await this.#o.registry.exists(listId))) return false;
    const now = Math.floor(Date.now() / 1000);
    const version = await this.#o.registry.version(listId);
    let signed = this.#signed.get(listId);
    if (!signed || signed.version !== version || now - signed.iat >= this.#o.ttl) {
      signed = { version, iat: now, jwt: await this.#sign(listId, now) };
      this.#signed.set(listId, signed);
    }
    ctx.status = 200;
    ctx.type = STATUS_LIST_MEDIA_TYPE;
    ctx.set('Cache-Control', `public, max-age=${Math.max(0, this.#o.ttl - (now - signed.iat))}`);
    ctx.body = signed.jwt;
    return true;
  }

  async #sign(listId: string, iat: number): Promise<string> {
    const jwk = this.#o.keys.signing();
    if (this.#key?.jwk !== jwk) this.#key = { jwk, key: importJWK(jwk, 'ES256') };
    const values = new Array<number>(this.#o.registry.size).fill(0);
    for (const [idx, value] of await this.#o.registry.changedEntries(listId)) values[idx] = value;
    const list = new StatusList(values, BITS);
    return (
      new SignJWT({ ttl: this.#o.ttl, status_list: { bits: BITS, lst: list.compressStatusList() } })
        // HAIP 1.0 §6.1: signed as the credentials it covers, under the issuer's certificate when there is one
        .setProtectedHeader({ alg: 'ES256', typ: 'statuslist+jwt', kid: jwk.kid, ...(jwk.x5c ? { x5c: jwk.x5c } : {}) })
        .setIssuer(this.#o.credentialIssuer)
        .setSubject(this.uriOf(listId))
        .setIssuedAt(iat)
        // valid for two periods: a verifier that fetched it at the end of one may use it for a whole `ttl`
        .setExpirationTime(iat + 2 * this.#o.ttl)
        .sign(await this.#key.key)
    );
  }
}
