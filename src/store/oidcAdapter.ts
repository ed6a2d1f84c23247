import { errors } from 'oidc-provider';
import type { Store } from './types.js';
import { StoreScope } from './requestScope.js';

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

export type Payload = Record<string, unknown> & { grantId?: string; uid?: string; userCode?: string; exp?: number; consumed?: number };

/** What a provider adds to one model's records: `written` may extend a payload as it is stored; `read` sees each one found. */
export interface ModelHooks {
  written?(id: string, payload: Payload): Payload;
  read?(id: string, payload: Payload): void;
}

const FALLBACK_TTL = 3600;

/** Where oidc-provider's record of `model` with `id` is kept, for the adapter of `namespace`. */
export const oidcRecordKey = (namespace: string, model: string, id: string) => `oidc:${namespace}:${model}:${id}`;

/**
 * oidc-provider's adapter interface over our Store, so its models and our records share one store.
 * `consume` is made atomic: of concurrent redemptions of one code, only the first marks it consumed;
 * the others fail with invalid_grant before any token is issued (D14, D16). `ttlCaps` shortens a
 * model's lifetime below what oidc-provider asks for (PAR requests: the configured lifetime); `notKept`
 * names models never written (their values never leave the service, so nothing can present them).
 */
export function createOidcAdapterFactory(
  store: Store,
  namespace: string,
  ttlCaps: Record<string, number> = {},
  /** models whose records can never be presented back, so are not kept at all */
  notKept: ReadonlySet<string> = new Set(),
  hooks: Readonly<Record<string, ModelHooks>> = {},
  /** the scope of the request being served (src/store/requestScope.ts) */
  currentScope: () => StoreScope | undefined = StoreScope.current,
) {
  const prefix = `oidc:${namespace}:`;
  return class StoreAdapter {
    readonly model: string;
    readonly #hooks: ModelHooks | undefined;

    constructor(model: string) {
      this.model = model;
      this.#hooks = hooks[model];
    }

    key(id: string): string {
      return oidcRecordKey(namespace, this.model, id);
    }

    async upsert(id: string, payload: Payload, expiresIn: number): Promise<void> {
      if (notKept.has(this.model)) return;
      const cap = ttlCaps[this.model];
      const ttl = Math.min(expiresIn > 0 ? expiresIn : FALLBACK_TTL, cap ?? Infinity);
      // the record and its indexes are independent writes: issued together (one round trip on Redis)
      const writes: Promise<unknown>[] = [store.set(this.key(id), this.#hooks?.written ? this.#hooks.written(id, payload) : payload, ttl)];
      // a write the request wants to go out with this record (src/store/requestScope.ts)
      const alongside = currentScope()?.takeAlongside(this.model);
      if (alongside) writes.push(alongside());
      if (this.model === 'Session' && payload.uid) writes.push(store.set(`${prefix}uid:${payload.uid}`, id, ttl));
      if (payload.userCode) writes.push(store.set(`${prefix}userCode:${payload.userCode}`, id, ttl));
      if (GRANTABLE.has(this.model) && payload.grantId) writes.push(store.addToSet(`${prefix}grant:${payload.grantId}`, this.key(id), ttl));
      await (writes.length === 1 ? writes[0] : Promise.all(writes));
    }

    async find(id: string): Promise<Payload | undefined> {
      const key = this.key(id);
      // read ahead by an edge of this request, in a round trip it made anyway (src/store/requestScope.ts)
      const ahead = currentScope()?.take(key);
      const payload = ahead?.found ? await (ahead.value as Payload | undefined | Promise<Payload | undefined>) : await store.get<Payload>(key);
      if (payload && this.#hooks?.read) this.#hooks.read(id, payload);
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
      // one atomic step (D16): of concurrent redemptions only the first marks it; a record gone meanwhile cannot be redeemed either
      if (!(await store.markConsumed(this.key(id), Math.floor(Date.now() / 1000)))) throw new errors.InvalidGrant('grant request is invalid');
    }

    async destroy(id: string): Promise<void> {
      await store.delete(this.key(id));
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      const setKey = `${prefix}grant:${grantId}`;
      const keys = await store.members(setKey);
      await store.delete(...keys, setKey);
    }
  };
}
