import { errors } from 'oidc-provider';
import type { Store } from './types.js';

/** Models whose records belong to a grant and are revoked with it. */
const GRANTABLE = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'ClientCredentials',
  'BackchannelAuthenticationRequest',
  'PreAuthorizedCode',
]);

/** Models oidc-provider consumes (single use): only their records have a `consumed` marker. */
const CONSUMABLE = new Set([
  'AuthorizationCode',
  'BackchannelAuthenticationRequest',
  'DeviceCode',
  'PreAuthorizedCode',
  'PushedAuthorizationRequest',
  'RefreshToken',
]);

export type Payload = Record<string, unknown> & {
  grantId?: string;
  uid?: string;
  userCode?: string;
  exp?: number;
  consumed?: number;
};

const FALLBACK_TTL = 3600;

/**
 * Where oidc-provider's record of `model` with `id` is kept, for the adapter of `namespace`. The id is a
 * hash tag, so a record and its `consumed` marker share one Redis Cluster slot.
 */
export const oidcRecordKey = (namespace: string, model: string, id: string) => `oidc:${namespace}:${model}:{${id}}`;
const consumedKey = (recordKey: string) => `${recordKey}:consumed`;

/**
 * oidc-provider's adapter contract over our Store, so that its models and our records share one store
 * (D14). `consume` is atomic: of concurrent redemptions of one code only the first marks it, the others
 * fail with invalid_grant before any token is issued (D16). The mark is a key of its own beside the
 * record, so the record is never rewritten. `ttlCaps` shortens a model's lifetime below what
 * oidc-provider asks for; `notKept` names models never written (their values never leave the service).
 */
export function createOidcAdapterFactory(
  store: Store,
  namespace: string,
  ttlCaps: Record<string, number> = {},
  notKept: ReadonlySet<string> = new Set(),
) {
  const prefix = `oidc:${namespace}:`;
  return class StoreAdapter {
    readonly model: string;

    constructor(model: string) {
      this.model = model;
    }

    key(id: string): string {
      return oidcRecordKey(namespace, this.model, id);
    }

    async upsert(id: string, payload: Payload, expiresIn: number): Promise<void> {
      if (notKept.has(this.model)) return;
      const ttl = Math.min(expiresIn > 0 ? expiresIn : FALLBACK_TTL, ttlCaps[this.model] ?? Infinity);
      const writes: Promise<unknown>[] = [store.set(this.key(id), payload, ttl)];
      if (this.model === 'Session' && payload.uid) writes.push(store.set(`${prefix}uid:${payload.uid}`, id, ttl));
      if (payload.userCode) writes.push(store.set(`${prefix}userCode:${payload.userCode}`, id, ttl));
      if (GRANTABLE.has(this.model) && payload.grantId)
        writes.push(store.addToSet(`${prefix}grant:${payload.grantId}`, this.key(id), ttl));
      await Promise.all(writes);
    }

    async find(id: string): Promise<Payload | undefined> {
      const key = this.key(id);
      if (!CONSUMABLE.has(this.model)) return store.get<Payload>(key);
      const [payload, consumed] = (await store.getMany([key, consumedKey(key)])) as [
        Payload | undefined,
        number | undefined,
      ];
      if (payload && consumed !== undefined) payload.consumed = consumed;
      return payload;
    }

    async findByUid(uid: string): Promise<Payload | undefined> {
      const id = await store.get<string>(`${prefix}uid:${uid}`);
      return id ? this.find(id) : undefined;
    }

    async findByUserCode(userCode: string): Promise<Payload | undefined> {
      const id = await store.get<string>(`${prefix}userCode:${userCode}`);
      return id ? this.find(id) : undefined;
    }

    async consume(id: string): Promise<void> {
      const key = this.key(id);
      // D16: of concurrent redemptions only the first marks it; a record gone meanwhile cannot be redeemed either
      if (!(await store.markOnce(consumedKey(key), Math.floor(Date.now() / 1000), key)))
        throw new errors.InvalidGrant('grant request is invalid');
    }

    async destroy(id: string): Promise<void> {
      const key = this.key(id);
      await (CONSUMABLE.has(this.model) ? store.delete(key, consumedKey(key)) : store.delete(key));
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      const setKey = `${prefix}grant:${grantId}`;
      const keys = await store.members(setKey);
      await store.delete(...keys, ...keys.map(consumedKey), setKey);
    }
  };
}
