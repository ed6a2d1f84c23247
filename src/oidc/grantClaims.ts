import Provider from 'oidc-provider';
import type { FlowClaims } from '../interaction/flowClaims.js';
import type { ModelHooks, Payload } from '../store/oidcAdapter.js';
import { assignId } from './modelId.js';

/**
 * The ID token's sub and claims (D2) travel on the Grant the wallet step creates: one record, written
 * with the grant and read with it at the token endpoint, where the provider reads the grant anyway,
 * instead of a record of their own (two store operations and a round trip fewer per flow). They live
 * exactly as long as the grant they belong to.
 *
 * oidc-provider keeps only its own members of a Grant, so the claims pass beside it:
 * - `saveGrantWithClaims` hands them to the adapter's write of that grant (the same call, in this
 *   process), which stores them as the record's `flow` member;
 * - the adapter's read of a grant leaves them on the request being served (oidc-provider's request
 *   context, `Provider.ctx`), where `findAccount` takes them; without them there, it reads the record.
 * oidc-provider never writes a Grant back itself (we create them; no dev interactions), so the member
 * is not dropped by a later save.
 */
const pending = new Map<string, FlowClaims>();
const seen = new WeakMap<object, Map<string, FlowClaims>>();

export async function saveGrantWithClaims(grant: { jti: string; save(): Promise<unknown> }, flow: FlowClaims): Promise<string> {
  const grantId = assignId(grant);
  pending.set(grantId, flow);
  try {
    await grant.save();
  } finally {
    pending.delete(grantId);
  }
  return grantId;
}

const currentRequest = () => (Provider as unknown as { ctx?: object }).ctx;

/** The Grant model's adapter hooks (src/store/oidcAdapter.ts). */
export const grantClaimsHooks: ModelHooks = {
  written(id, payload) {
    const flow = pending.get(id);
    return flow ? { ...payload, flow } : payload;
  },
  read(id, payload) {
    const flow = payload.flow as FlowClaims | undefined;
    const ctx = flow && currentRequest();
    if (!ctx) return;
    let found = seen.get(ctx);
    if (!found) seen.set(ctx, (found = new Map()));
    found.set(id, flow);
  },
};

/** The claims of a grant: as the provider's read of it left them on this request, or read from its record. */
export async function grantClaims(ctx: object, grantId: string, readGrant: () => Promise<Payload | undefined>): Promise<FlowClaims | undefined> {
  return seen.get(ctx)?.get(grantId) ?? ((await readGrant())?.flow as FlowClaims | undefined);
}
