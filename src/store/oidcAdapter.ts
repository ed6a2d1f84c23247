import { AsyncLocalStorage } from 'node:async_hooks';
import { errors } from 'oidc-provider';
import { JsonText, type Store } from './types.js';

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
 * What one provider request knows of the records it read or wrote: until when (epoch seconds) each is
 * valid, so that a code found in the request is consumed without asking the store for its lifetime; and
 * the JSON text of each record it wrote, so that reading it back in the same request (the wallet's token
 * request mints a code and its grant, then the provider redeems them) asks the store for nothing. The text
 * is the one written: a record is serialised once.
 */
interface RequestScope {
  exp: Map<string, number>;
  written: Map<string, string>;
}
const requestScope = new AsyncLocalStorage<RequestScope>();

/**
 * Middleware (first on each provider, `provider.use`): the adapter's scope for one request. Without
 * it the adapter reads everything from the store.
 */
export function adapterScope(_ctx: unknown, next: () => Promise<unknown>): Promise<unknown> {
  return requestScope.run({ exp: new Map(), written: new Map() }, next);
}

/** Keeps, for the rest of the request, what it wrote of a record: its text and until when it is valid. */
function rememberWritten(key: string, payload: Payload, text: string): void {
  const scope = requestScope.getStore();
  if (!scope) return;
  if (typeof payload.exp === 'number') scope.exp.set(key, payload.exp);
  scope.written.set(key, text);
}

/** The records are no longer as the request wrote them (consumed, destroyed, revoked): read from the store again. */
function forgetWritten(...keys: string[]): void {
  const written = requestScope.getStore()?.written;
  for (const key of keys) written?.delete(key);
}

/**
 * A record as the request wrote it, else from the store with its `consumed` marker (for a model oidc-provider
 * consumes); its validity is remembered for a consume in the same request.
 */
async function findRecord(store: Store, key: string, consumable: boolean): Promise<Payload | undefined> {
  const scope = requestScope.getStore();
  const written = scope?.written.get(key);
  if (written !== undefined) return JSON.parse(written) as Payload;
  if (!consumable) return store.get<Payload>(key);
  const [payload, consumed] = (await store.getMany([key, consumedKey(key)])) as [
    Payload | undefined,
    number | undefined,
  ];
  if (payload && consumed !== undefined) payload.consumed = consumed;
  if (scope && typeof payload?.exp === 'number') scope.exp.set(key, payload.exp);
  return payload;
}

/**
 * Where oidc-provider's record of `model` with `id` is kept, for the adapter of `namespace`. The id is a
 * hash tag, so a record and its `consumed` marker share one Redis Cluster slot.
 */
export const oidcRecordKey = (namespace: string, model: string, id: string) => `oidc:${namespace}:${model}:{${id}}`;
const consumedKey = (recordKey: string) => `${recordKey}:consumed`;

/**
 * D16: marks a record consumed; of concurrent redemptions only the first marks it (invalid_grant for the
 * others). `cap`: a capped model's record is kept, once consumed, no longer than its cap: what is left of
 * it is a replay to refuse, and a pushed request expires within its cap (its `exp`).
 */
async function consumeRecord(store: Store, key: string, cap: number | undefined): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  const exp = requestScope.getStore()?.exp.get(key);
  let marked: boolean;
  if (exp !== undefined) {
    // found (or written) in this request, which checked that it is not consumed: the marker lives as long
    // as the record is valid, without asking the store for its lifetime
    const left = exp - now;
    const ttl = cap === undefined ? left : Math.max(1, Math.min(cap, left));
    [marked] = await Promise.all([
      ttl > 0 ? store.setIfAbsent(consumedKey(key), now, ttl) : false,
      cap !== undefined ? store.shorten([key], ttl) : undefined,
    ]);
  } else {
    // a record gone meanwhile cannot be redeemed either
    const opts = cap === undefined ? undefined : { ttlSeconds: cap, shortenRecord: true };
    marked = await store.markOnce(consumedKey(key), now, key, opts);
  }
  if (!marked) throw new errors.InvalidGrant('grant request is invalid');
}

/** Every model's records of a grant, as oidc-provider's own adapters revoke them (the lists share the grant's slot). */
async function revokeGrant(store: Store, namespace: string, grantId: string): Promise<void> {
  const models = [...GRANTABLE];
  const lists = models.map((model) => grantListKeyOf(namespace, model, grantId));
  const ids = await Promise.all(lists.map((list) => store.listed(list)));
  const keys = models.flatMap((model, i) => ids[i].map((id) => oidcRecordKey(namespace, model, id)));
  forgetWritten(...keys);
  await store.delete(...keys, ...keys.map(consumedKey), ...lists);
}

/** The ids of one model's records of a grant: a short list per grant and model, in the grant's slot. */
const grantListKeyOf = (namespace: string, model: string, grantId: string) =>
  `oidc:${namespace}:grant:{${grantId}}:${model}`;

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

    /**
     * The ids of this model's records that belong to a grant (oidc-provider revokes a grant model by
     * model): a short list per grant and model, usually of one id.
     */
    grantKey(grantId: string): string {
      return grantListKeyOf(namespace, this.model, grantId);
    }

    async upsert(id: string, payload: Payload, expiresIn: number): Promise<void> {
      if (notKept.has(this.model)) return;
      const ttl = Math.min(expiresIn > 0 ? expiresIn : FALLBACK_TTL, ttlCaps[this.model] ?? Infinity);
      const key = this.key(id);
      const text = JSON.stringify(payload);
      rememberWritten(key, payload, text);
      const writes: Promise<unknown>[] = [store.set(key, new JsonText(text), ttl)];
      if (this.model === 'Session' && payload.uid) writes.push(store.set(`${prefix}uid:${payload.uid}`, id, ttl));
      if (payload.userCode) writes.push(store.set(`${prefix}userCode:${payload.userCode}`, id, ttl));
      if (GRANTABLE.has(this.model) && payload.grantId)
        writes.push(store.addToList(this.grantKey(payload.grantId), id, ttl));
      await Promise.all(writes);
    }

    find(id: string): Promise<Payload | undefined> {
      return findRecord(store, this.key(id), CONSUMABLE.has(this.model));
    }

    async findByUid(uid: string): Promise<Payload | undefined> {
      const id = await store.get<string>(`${prefix}uid:${uid}`);
      return id ? this.find(id) : undefined;
    }

    async findByUserCode(userCode: string): Promise<Payload | undefined> {
      const id = await store.get<string>(`${prefix}userCode:${userCode}`);
      return id ? this.find(id) : undefined;
    }

    consume(id: string): Promise<void> {
      const key = this.key(id);
      forgetWritten(key);
      return consumeRecord(store, key, ttlCaps[this.model]);
    }

    async destroy(id: string): Promise<void> {
      const key = this.key(id);
      forgetWritten(key);
      await (CONSUMABLE.has(this.model) ? store.delete(key, consumedKey(key)) : store.delete(key));
    }

    revokeByGrantId(grantId: string): Promise<void> {
      return revokeGrant(store, namespace, grantId);
    }
  };
}
